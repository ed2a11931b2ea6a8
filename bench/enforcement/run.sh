#!/usr/bin/env bash
# The overrun of a reserved task's budget with HRTICK_DL off and on, in the PREEMPT_RT
# guest (tests/vm/experiment_overrun.py): 3 runs of each, alternating, in one boot per
# kernel and testbed (plain TCG with Debian's QEMU, plain TCG and -icount with the seeds'
# QEMU); each boot recorded in bench/enforcement/data/, tabulated by report.py. Root; the
# VM image is built or reused as for `make test-vm`.
# IRQRES_VM_KERNELS=6.1 bash bench/enforcement/run.sh runs one kernel.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec python3 -m pytest -q -s -p no:cacheprovider tests/vm/experiment_overrun.py "$@"
