#!/usr/bin/env bash
# The overrun of a reserved task's budget with HRTICK_DL off and on, in the PREEMPT_RT
# guest (tests/vm/experiment_overrun.py): 3 runs of each, alternating, in one boot per
# kernel. Root; the VM image is built or reused as for `make test-vm`.
# IRQRES_VM_KERNELS=6.1 bash bench/enforcement/run.sh runs one kernel.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec python3 -m pytest -q -s -p no:cacheprovider tests/vm/experiment_overrun.py "$@"
