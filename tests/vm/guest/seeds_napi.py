"""Guest side of experiment 3 with threaded NAPI (bench/seeds/player_dl_napi.py).

As experiment 3 (seeds.scenario_seeds_player_dl: the player and the NIC both reserved
through one irqres profile while the sender floods eth0), but the profile switches eth0 to
threaded NAPI (``threaded_napi: true``) so that the receive polls run in the kthread
``napi/eth0-<id>`` instead of the NET_RX soft IRQ (whose leftovers go to ksoftirqd). The
row's NIC budget Q (period T) is split between the IRQ thread and the NAPI kthread, both
reserved at period T in the NIC's partition: the pair's total stays the row's Q/T, so the
player's share and the partition's admission are those of experiment 3. ``napi`` says
whether the NAPI kthread gets its part (``reserved``) or is left as the kernel makes it
(``default``: SCHED_OTHER, every CPU), the IRQ thread's part being the same either way.
``enforcement`` is the profile's: ``keep`` (budgets enforced at the tick) or ``hrtick``
(irqresd switches the sched feature HRTICK_DL on); every row records the features it ran
under.
"""

from __future__ import annotations

import os
import re

from seeds import (
    NIC_THREAD,
    SCHED_FEATURES,
    _irqresd_state,
    _loaded_player,
    _sched_of_player,
    apply_retrying,
    hub_setup,
    nic_fifo50,
    nic_reserved,
    sender,
)
from vmguest import OUT, cgroup_of, cpus_allowed, mark, read, sched_attr, sh, thread, wait_for

NAPI_THREAD = r"napi/eth0-\d+"
THREADED = "/sys/class/net/eth0/threaded"


def napi_threads() -> list[dict]:
    """eth0's NAPI kthreads: pid, comm, scheduling attributes, CPUs, cgroup."""
    found = []
    for d in os.listdir("/proc"):
        comm = (read(f"/proc/{d}/comm") or "").strip() if d.isdigit() else ""
        if comm and re.fullmatch(NAPI_THREAD, comm):
            p = int(d)
            found.append({"pid": p, "comm": comm, "sched": sched_attr(p),
                          "cpus": cpus_allowed(p), "cgroup": cgroup_of(p)})
    return sorted(found, key=lambda t: t["pid"])


def split(nic_q: int, napi_num: int, napi_den: int) -> tuple[int, int]:
    """The row's NIC budget as (IRQ thread's Q, NAPI kthread's Q): napi_num/napi_den of
    it to the kthread, the rest to the IRQ thread."""
    napi_q = nic_q * napi_num // napi_den
    return nic_q - napi_q, napi_q


def _profile(path: str, irq_q: int, napi_q: int | None, nic_t: int, player_q: int,
             player_t: int, enforcement: str = "keep") -> None:
    napi = (f"  - name: poll\n    napi: eth0\n    threaded_napi: true\n"
            f"    runtime: {napi_q}ns\n    period: {nic_t}ns\n") if napi_q else ""
    with open(path, "w") as f:
        f.write(f"version: 1\nenforcement: {enforcement}\ntargets:\n"
                f"  - name: nic\n    interface: eth0\n    threaded_napi: true\n"
                f"    runtime: {irq_q}ns\n    period: {nic_t}ns\n{napi}"
                f"  - name: player\n    task:\n      comm: \"seedplayer\"\n"
                f"    runtime: {player_q}ns\n    period: {player_t}ns\n")


def _napi_polled(setup: dict, port: int, reserved: bool) -> int | None:
    """A trickle to ``port`` (no one listens: it is only polled) before the flood, in both
    variants: irqresd reserves a kthread it moved into the NIC's partition once it has
    run there, and until then it runs there at SCHED_OTHER, outside any budget. Reserved:
    the guest ns until every NAPI kthread is SCHED_DEADLINE (None after 10 s)."""
    sender(setup, port, 1_000_000, 50, 100).communicate(timeout=600)
    if not reserved:
        return None
    ok, waited = wait_for(lambda: (ts := napi_threads()) and all(
        (t["sched"] or {}).get("policy") == "deadline" for t in ts), 10, 0.05)
    return waited if ok else None


def scenario_seeds_player_dl_napi(runs: int, seconds: int, period_ns: int, work_ns: int,
                                  flood_period_ns: int, size: int, tests: list[list[int]],
                                  nic_period_ns: int, napi: str, napi_split: list[int],
                                  receiver_prio: int, enforcement: str = "keep",
                                  port: int = 5001) -> dict:
    """Experiment 3 with threaded NAPI: ``tests`` rows are (player Q, NIC Q), the NIC's Q
    split by ``napi_split`` = [num, den] (the kthread's fraction) between the IRQ thread
    and the NAPI kthread; ``napi`` is ``reserved`` or ``default``. The receiver runs at
    SCHED_FIFO ``receiver_prio`` on the sender's vCPU, above the sender (SCHED_FIFO 90),
    so that what it reads is what the NIC delivered, not what its CPU left it.
    ``enforcement``: the profile's, ``keep`` or ``hrtick``."""
    if napi not in ("reserved", "default"):
        raise ValueError(f"napi {napi!r}: not 'reserved' or 'default'")
    if enforcement not in ("keep", "hrtick"):
        raise ValueError(f"enforcement {enforcement!r}: not 'keep' or 'hrtick'")
    wait_for(lambda: _irqresd_state() in ("active", "failed"), 60, 0.2)
    if not os.path.exists(SCHED_FEATURES):
        sh("mount -t debugfs none /sys/kernel/debug")
    setup = hub_setup()
    prof = "/run/seeds-player-dl-napi.yaml"
    rows: list[dict] = []
    for run in range(runs):
        for i, (pq, nq) in enumerate(tests):
            irq_q, napi_q = split(nq, *napi_split)
            # each row's profile replaces the previous one, no restore between rows: a
            # NAPI kthread given back while the NIC's partition exists is left pinned to
            # the root's CPUs by the cpuset, and irqresd then refuses to reserve it
            nic = nic_reserved(irq_q, nic_period_ns) if not rows else thread(NIC_THREAD)
            _profile(prof, irq_q, napi_q if napi == "reserved" else None, nic_period_ns,
                     pq, period_ns, enforcement)
            applied: dict = {}

            def give_reservation(pl, applied=applied):
                applied["apply"], applied["refusals"] = apply_retrying(prof)
                applied["player_sched"] = _sched_of_player(pl.pid)
                applied["nic"] = thread(NIC_THREAD)
                applied["threaded"] = read(THREADED)
                applied["napi_at_apply"] = napi_threads()
                applied["napi_wait_ns"] = _napi_polled(setup, port + 1, napi == "reserved")
                applied["features"] = read(SCHED_FEATURES) or ""

            r = _loaded_player(setup, nic, port, seconds, period_ns, work_ns,
                               flood_period_ns, size, "",
                               os.path.join(OUT, f"dl-napi-{napi}-{run}-test{i + 1}.txt"),
                               before_player=give_reservation, delay_ns=2_000_000_000,
                               rx_prio=receiver_prio)
            r.update({"run": run, "test": i + 1, "player_q": pq, "nic_q": nq,
                      "irq_q": irq_q, "napi_q": napi_q if napi == "reserved" else None,
                      "napi_after": napi_threads(), "enforcement": enforcement,
                      "features_after": read(SCHED_FEATURES) or "", **applied})
            rows.append(r)
            mark(f"napi {napi} Test{i + 1} run {run}: NIC {nq / 1e6:g} ms = IRQ "
                 f"{irq_q / 1e6:g} + NAPI {napi_q / 1e6:g}, threaded {applied['threaded']}, "
                 f"napi {[t['sched'] for t in r['napi_after']]}: {r['player']}, "
                 f"{r['cpu_ns']}")
    nic_fifo50()
    return {"setup": setup, "rows": rows, "napi": napi, "napi_split": napi_split,
            "enforcement": enforcement, "threaded_end": read(THREADED),
            "features_end": read(SCHED_FEATURES) or ""}
