#!/bin/sh
# Runs inside the guest from the irqres-vm-payload generator, before systemd loads units.
# $1: where the payload disk is mounted; $2: the generator's output directory.
#
# Two kinds of boot (vmrunner.installed_layer, VM):
# - The layer boot (a file "layer" on the payload): the checkout's Debian package is
#   installed by dpkg into a writable copy-on-write layer of the image, once per package,
#   then the guest powers off at once. Every scenario boots that layer in snapshot mode.
# - A scenario's boot: the profile, irqresd.service enabled or not, and the scenario unit
#   (and the package, when the guest was booted without the layer).
set -u
p=$1
gen=$2
echo "payload install: $(date -u +%T)"
now() { date -u +%T.%N | cut -c1-12; }

# The checkout's package, by dpkg as on any Debian 12 box: dpkg refuses it if the image
# lacks one of its Depends. This runs inside a systemd generator, before systemd has
# loaded a unit, so the maintainer scripts must not call systemctl (it would wait for
# systemd, which waits for this generator): with /run/systemd hidden they act as in a
# chroot, enabling irqresd.service by its symlink and starting nothing. The disk is a
# layer synced once at the end or a throwaway snapshot, so dpkg need not fsync every
# file (--force-unsafe-io). Prints "package installed" when it is.
install_package() {
	for deb in "$p"/stage/irqres_*.deb; do
		[ -f "$deb" ] || { echo "install.sh: no irqres package on the payload"; return 1; }
		echo "dpkg -i $(basename "$deb"): $(now)"
		if unshare -m sh -c 'mount -t tmpfs tmpfs /run/systemd &&
			dpkg --force-unsafe-io -i "$1"' sh "$deb"; then
			echo "installed $(dpkg-query -W -f='${Package} ${Version} ${Status}' irqres): $(now)"
			echo "package installed"
		else
			echo "install.sh: dpkg -i $deb failed"
			return 1
		fi
	done
}

if [ -f "$p/layer" ]; then
	install_package && echo "layer installed"
	# Everything on both disks, then a clean read-only root, then off: nothing else of
	# this boot (journal, seeds, machine id) is written into the layer.
	sync
	echo s >/proc/sysrq-trigger
	echo u >/proc/sysrq-trigger
	sleep 2
	echo o >/proc/sysrq-trigger
	sleep 60
	exit 0
fi

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

# Off at once when the scenario ends (--force: no unit is stopped one by one; systemd
# still ends every process, irqresd restoring on its SIGTERM, and unmounts the disks): the
# result is on the payload disk already, fsynced, and an orderly stop cost every guest
# about 5 s of emulated CPU.
cat >"$gen/irqres-vm-scenario.service" <<UNIT
[Unit]
Description=irqres VM scenario
After=multi-user.target
RequiresMountsFor=/payload

[Service]
Type=oneshot
Environment=PYTHONPATH=/usr/local/lib/irqres-vm PYTHONUNBUFFERED=1
ExecStart=/usr/bin/python3 /usr/local/lib/irqres-vm/run.py
ExecStopPost=/bin/systemctl poweroff --force
StandardOutput=journal+console
StandardError=journal+console
TimeoutStartSec=infinity
UNIT
mkdir -p "$gen/multi-user.target.wants"
ln -sf ../irqres-vm-scenario.service "$gen/multi-user.target.wants/irqres-vm-scenario.service"

# A guest booted without the layer (VM(layered=False)) installs the package itself.
[ -d "$p/stage" ] && install_package
echo "irqres in the guest: $(dpkg-query -W -f='${Package} ${Version} ${Status}' irqres 2>&1)"
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
