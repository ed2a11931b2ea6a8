"""Scenario 0: the guest boots Debian's PREEMPT_RT kernel and can run the project."""

import re

import pytest

pytestmark = [pytest.mark.vm, pytest.mark.slow]


@pytest.mark.arm64
@pytest.mark.kernels_too("7.3")  # PREEMPT_RT from mainline: no /sys/kernel/realtime
def test_rt_kernel_nic_thread_and_python_stack(boot, nic_thread):
    res = boot("boot_basics")
    d = res.data
    assert "-rt-" in d["uname"]["release"], d["uname"]
    assert "PREEMPT_RT" in d["uname"]["version"], d["uname"]
    # /sys/kernel/realtime came with the out-of-tree RT patches (6.1, Debian's 6.12.95);
    # 7.x builds PREEMPT_RT from mainline alone, without it: the version above says it
    if res.kernel.label.startswith("7."):
        assert d["realtime"] is None, d["realtime"]
    else:
        assert d["realtime"] == "1"
    nic = [t for t in d["threads"] if re.fullmatch(nic_thread, t["comm"])]
    assert len(nic) == 1, [t["comm"] for t in d["threads"]]
    assert nic[0]["sched"]["policy"] == "fifo"
    assert nic[0]["sched"]["priority"] == 50
    # the guest's libraries are the oldest the project supports
    numpy_v = d["versions"][0]
    assert numpy_v.startswith("1.24"), d["versions"]
    # the checkout's Debian package, installed by dpkg with only the image's packages to
    # meet its Depends, imports with them and runs on the system python3
    install_log = (res.out / "install.log").read_text()
    assert d["package"]["out"].startswith("install ok installed"), (d["package"], install_log)
    assert d["which"] == {"irqres": "/usr/bin/irqres", "irqresd": "/usr/sbin/irqresd"}, d
    assert d["shebang"] == "#!/usr/bin/python3"
    assert d["import_units"]["rc"] == 0, d["import_units"]
    assert "/usr/lib/python3/dist-packages/irqres/" in d["import_units"]["out"]
    assert d["cli_version"]["rc"] == 0 and "irqres, version" in d["cli_version"]["out"]
    assert "cpuset" in (d["cgroup_controllers"] or "")
    assert "10.0.2.15" in d["eth0"]["out"]
