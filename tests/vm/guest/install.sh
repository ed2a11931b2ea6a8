#!/bin/sh
# Runs inside the guest from the irqres-vm-payload generator, before systemd loads units.
# $1: where the payload disk is mounted; $2: the generator's output directory.
# Installs the checkout's `make install` tree, the profile and the scenario unit.
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

if [ -d "$p/stage" ]; then
	# tar keeps the guest's merged-/usr symlinks (/lib -> usr/lib) where cp -a fails
	if tar -C "$p/stage" -cf - . | tar -C / -xf - --keep-directory-symlink --no-same-owner; then
		echo "installed the staged checkout:"
		(cd "$p/stage" && find . -type f | grep -v __pycache__ | head -n 60)
	else
		echo "install.sh failed: copying the staged checkout"
	fi
fi
# pip may have used the site-packages scheme; Debian's python3 reads dist-packages.
dist=/usr/local/lib/python3.11/dist-packages
mkdir -p "$dist"
for d in /usr/local/lib/python3*/site-packages; do
	[ -d "$d" ] && echo "$d" >"$dist/irqres-stage.pth"
done
for f in /usr/local/bin/irqres; do
	[ -f "$f" ] && sed -i '1s|^#!.*python.*$|#!/usr/bin/python3|' "$f"
done
ldconfig
if [ -f "$p/profile.yaml" ]; then
	mkdir -p /etc/irqres
	cp "$p/profile.yaml" /etc/irqres/profile.yaml
fi

# irqresd at boot, as an installed system has it, when the scenario asks for it.
if [ -f "$p/enable-irqresd" ]; then
	for unit in /lib/systemd/system/irqresd.service /usr/local/lib/systemd/system/irqresd.service; do
		if [ -f "$unit" ]; then
			ln -sf "$unit" "$gen/multi-user.target.wants/irqresd.service"
			echo "enabled $unit"
			break
		fi
	done
fi
echo "payload install done: $(date -u +%T)"
