"""Experiment 3 with threaded NAPI: the NIC's budget given to its IRQ thread and its NAPI
kthread together, throughput as the application receives it.

As bench/seeds/player_dl.py (the player, 16 ms of work every 40 ms, and the NIC both
reserved through one irqres profile while a sender on the other vCPU floods eth0; the
same five rows Test1..Test5), but the profile switches eth0 to threaded NAPI
(``threaded_napi: true``): the receive polls leave the NET_RX soft IRQ (and ksoftirqd,
outside every budget) for the kthread ``napi/eth0-<id>``. Each row's NIC budget Q (T =
100 ms) is shared by the pair: the NAPI kthread gets ``--napi-split`` of it (3/4 by
default: it does the polls, the IRQ thread only wakes it), the IRQ thread the rest, both
at period T in the NIC's partition, so the pair's total is the row's Q/T and the player's
budget and the partition's admission are experiment 3's. The receiver runs at SCHED_FIFO
95 on the sender's vCPU (experiment 3's, SCHED_OTHER below the sender at SCHED_FIFO 90,
read a few thousand of 40,000 datagrams whatever the NIC took). ``--napi default`` leaves the
NAPI kthread as the kernel makes it (the IRQ thread's part unchanged): the variant in
which the piece under test is taken away. ``--enforcement hrtick`` puts ``enforcement:
hrtick`` in the profile (irqresd switches the sched feature HRTICK_DL on: budgets end by a
timer rather than at the 4 ms tick); the raw data file gets the tag ``hrtick``. Raw data:
bench/seeds/data/player-dl-napi-*.json; ``report.py`` makes the table.

    python3 bench/seeds/player_dl_napi.py [--runs 3] [--napi reserved|default]
                                          [--enforcement keep|hrtick] [--kernel 6.1]
"""

from __future__ import annotations

import argparse
import sys

import player_dl
import testbed


def parse_split(text: str, option: str = "--napi-split") -> list[int]:
    """``N/D`` (the value of ``option``) -> [N, D], 0 < N < D."""
    num, _, den = text.partition("/")
    try:
        pair = [int(num), int(den)]
    except ValueError:
        raise SystemExit(f"{option} {text!r}: not N/D in whole numbers") from None
    if not 0 < pair[0] < pair[1]:
        raise SystemExit(f"{option} {text!r}: needs 0 < N < D")
    return pair


def data_tag(tag: str, napi: str, enforcement: str) -> str:
    """The raw data file's tag: ``tag`` if given, else ``default`` for the unreserved
    variant, then ``hrtick`` when HRTICK_DL enforced the budgets (the report keeps them
    apart by it)."""
    parts = (tag or ("default" if napi == "default" else ""),
             "hrtick" if enforcement == "hrtick" else "")
    return "-".join(p for p in parts if p)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    player_dl.add_options(ap)
    ap.add_argument("--napi", choices=("reserved", "default"), default="reserved",
                    help="reserve the NAPI kthread beside the IRQ thread, or leave it be")
    ap.add_argument("--receiver-prio", type=int, default=95,
                    help="the receiver's SCHED_FIFO priority on the sender's vCPU (above "
                         "the sender's 90: it reads what the NIC delivers; 0: SCHED_OTHER)")
    ap.add_argument("--napi-split", default="3/4",
                    help="the NAPI kthread's fraction N/D of the row's NIC budget")
    ap.add_argument("--enforcement", choices=("keep", "hrtick"), default="keep",
                    help="the profile's enforcement: keep (the tick) or hrtick (HRTICK_DL)")
    args = ap.parse_args()
    params = {**player_dl.params_of(args), "napi": args.napi,
              "napi_split": parse_split(args.napi_split), "receiver_prio": args.receiver_prio,
              "enforcement": args.enforcement}
    args.tag = data_tag(args.tag, args.napi, args.enforcement)
    rec = testbed.run_guest(args, "seeds_player_dl_napi", "player-dl-napi", params)
    for r in rec["result"]["rows"]:
        print(f"run {r['run']} Test{r['test']}: player {r['player']}, NIC "
              f"{r['mbit_s']:.1f} Mbit/s, receiver {r['receiver']}, cpu {r['cpu_ns']}")
    print(f"wall {rec['wall_s']} s, testbed {rec['testbed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
