#!/bin/sh
# Runs inside the guest from the irqres-vm-payload generator, before systemd loads units.
# $1: where the payload disk is mounted; $2: the generator's output directory.
# Installs the checkout's Debian package, the profile and the scenario unit.
set -u
p=$1
gen=$2
echo "payload install: $(date -u +%T)"
# The scenario unit first: whatever fails below, the scenario still runs, reports the
# failure (install.log is part of its result) and powers the guest off.
rm -rf /usr/local/lib/irqres-vm
cp -a "$p/guest" /usr/local/lib/irqres-vm

cat >"$gen/payload.mount" <<UNIT
[Unit]
Description=irqres VM payload disk
[Mount]
What=/dev/vdb
Where=/payload
Type=ext4
UNIT

cat >"$gen/irqres-vm-scenario.service" <<UNIT
[Unit]
Description=irqres VM scenario
After=multi-user.target
RequiresMountsFor=/payload

[Service]
Type=oneshot
Environment=PYTHONPATH=/usr/local/lib/irqres-vm PYTHONUNBUFFERED=1
ExecStart=/usr/bin/python3 /usr/local/lib/irqres-vm/run.py
ExecStopPost=/bin/systemctl poweroff --no-block
StandardOutput=journal+console
StandardError=journal+console
TimeoutStartSec=infinity
UNIT
mkdir -p "$gen/multi-user.target.wants"
ln -sf ../irqres-vm-scenario.service "$gen/multi-user.target.wants/irqres-vm-scenario.service"

# The checkout's Debian package, installed by dpkg as on any Debian 12 box: dpkg refuses
# it if the image lacks one of its Depends. This runs inside a systemd generator, before
# systemd has loaded a unit, so the maintainer scripts must not call systemctl (it would
# wait for systemd, which waits for this generator): with /run/systemd hidden they act as
# in a chroot, enabling irqresd.service by its symlink and starting nothing. The disk is
# a throwaway snapshot, so dpkg need not fsync every file (--force-unsafe-io).
now() { date -u +%T.%N | cut -c1-12; }
for deb in "$p"/stage/irqres_*.deb; do
	[ -f "$deb" ] || { echo "install.sh: no irqres package on the payload"; break; }
	echo "dpkg --unpack $(basename "$deb"): $(now)"
	if unshare -m sh -c 'mount -t tmpfs tmpfs /run/systemd &&
		dpkg --force-unsafe-io --unpack "$1" && echo "dpkg --configure: $(date -u +%T.%N | cut -c1-12)" &&
		dpkg --force-unsafe-io --configure irqres' sh "$deb"; then
		echo "installed $(dpkg-query -W -f='${Package} ${Version} ${Status}' irqres): $(now)"
	else
		echo "install.sh: dpkg -i $deb failed"
	fi
done
if [ -f "$p/profile.yaml" ]; then
	mkdir -p /etc/irqres
	cp "$p/profile.yaml" /etc/irqres/profile.yaml
fi

# irqresd at boot as the package enabled it, or not at all when the scenario starts it
# itself (or does without).
if [ -f "$p/enable-irqresd" ]; then
	echo "irqresd.service enabled by the package: $(ls /etc/systemd/system/multi-user.target.wants/irqresd.service 2>&1)"
else
	rm -f /etc/systemd/system/multi-user.target.wants/irqresd.service
fi
echo "payload install done: $(date -u +%T)"
