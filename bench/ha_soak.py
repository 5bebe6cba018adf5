"""Soak an HA set under faults (issue 34): many seeds of tests/namenode/ha/test_faults.py.

    python bench/ha_soak.py [--seeds 1-20] [--rounds 3] [--faults 4] [--duration 1800]
                            [--keep] [--stop-on-failure]

Each seed gets a new set on loopback (three etcd members, two namenodes, the test's settings:
a lease of 2 s, a checkpoint every 400 txids, 100 txids retained in etcd) and runs up to
``--rounds`` rounds of ``--faults`` faults under 32 WebHDFS writers, each round followed by the
test's checks (``check_round``: every acknowledged op and file on both namenodes, local edits a
prefix of the shared journal, a failover each way, the purge after a checkpoint), and the name
dirs loaded offline after the seed's last round. A seed stops at its first failed check.

Bounded: at most ``--rounds`` per seed, and no round begins after ``--duration`` seconds
(the round under way finishes; a round's conditions have deadlines of minutes). Per round it
prints the schedule and each event as it happens, then one line: acknowledged ops, lost ops,
the verdict; at the end one summary line. A failed seed's report (schedule, events, findings,
the namenodes' failure lines) is printed; its directory (logs, name dirs, etcd data) is kept
under bench/out/ha-soak-<UTC time>/, as every seed's is with ``--keep``. Loopback only.
Replay a seed with ``--seeds N`` (its schedule is a function of the seed and round alone), or
``pytest tests/namenode/ha/test_faults.py`` for the suite's seeds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.etcd_cluster import EtcdCluster, etcd_binary  # noqa: E402
from tests.namenode.ha.test_faults import (  # noqa: E402
    Round,
    RoundFailed,
    cut_off_upload,
    run_seed,
)

OUT = REPO / "bench" / "out"


def seeds_of(text: str) -> list[int]:
    """``1-20`` or ``3,7,9`` (or both: ``1-5,9``)."""
    seeds: list[int] = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        seeds += range(int(first), int(last or first) + 1)
    return seeds


class Tally:
    """What the rounds saw, for the summary line."""

    def __init__(self) -> None:
        self.rounds = self.failed_rounds = self.acknowledged = self.lost = 0
        self.refused = 0            # answers a WebHDFS client cannot take, as the test counts
        self.kinds: dict[str, int] = {}

    def round_done(self, rnd: Round) -> None:
        refused = [e for e in (rnd.writers.errors if rnd.writers else [])
                   if not cut_off_upload(e)]
        self.rounds += 1
        self.failed_rounds += bool(rnd.findings or refused)
        self.acknowledged += rnd.acknowledged
        self.lost += rnd.lost
        self.refused += len(refused)
        for fault in rnd.faults:
            self.kinds[fault.kind] = self.kinds.get(fault.kind, 0) + 1
        verdict = "ok" if not rnd.findings else f"FAILED ({len(rnd.findings)} findings)"
        if refused:
            verdict = (f"FAILED ({len(refused)} answers a WebHDFS client cannot take, the "
                       f"first: {refused[0]})")
        print(f"seed {rnd.seed} round {rnd.number}: {rnd.acknowledged} ops acknowledged, "
              f"{rnd.lost} lost, {verdict}, {time.monotonic() - rnd.started:.0f} s, load "
              f"{os.getloadavg()[0]:.1f}", flush=True)


def soak_seed(seed: int, args: argparse.Namespace, work: Path, deadline: float,
              tally: Tally) -> str | None:
    """One seed's rounds on a new set; its failure report, or None."""
    with EtcdCluster(work / "etcd", 3) as etcd:
        try:
            etcd.start()
            run_seed(work, etcd, seed, args.rounds, args.faults,
                     out=lambda line: print(line, flush=True), deadline=deadline,
                     on_round=tally.round_done)
        except RoundFailed as exc:
            return str(exc)
        except (TimeoutError, RuntimeError, AssertionError, OSError) as exc:
            return f"seed {seed}: {exc.__class__.__name__}: {exc}"
    return None


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="1-10", help="e.g. 1-20 or 3,7,9")
    p.add_argument("--rounds", type=int, default=3, help="rounds per seed (at most)")
    p.add_argument("--faults", type=int, default=4, help="faults per round")
    p.add_argument("--duration", type=float, default=1800.0,
                   help="seconds after which no round begins")
    p.add_argument("--keep", action="store_true", help="keep every seed's directory")
    p.add_argument("--stop-on-failure", action="store_true")
    args = p.parse_args()
    if etcd_binary() is None:
        sys.exit("etcd is not installed (make etcd)")
    out = OUT / f"ha-soak-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}"
    out.mkdir(parents=True)
    started = time.monotonic()
    deadline = started + args.duration
    tally = Tally()
    failed = []
    for seed in seeds_of(args.seeds):
        if time.monotonic() > deadline:
            break
        work = out / f"seed-{seed}"
        failure = soak_seed(seed, args, work, deadline, tally)
        if failure is None:
            if not args.keep:
                shutil.rmtree(work, ignore_errors=True)
            continue
        failed.append(seed)
        print(f"seed {seed} FAILED; its directory is kept: {work}\n{failure}", flush=True)
        if args.stop_on_failure:
            break
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(tally.kinds.items()))
    print(f"summary: {tally.rounds} rounds, {tally.failed_rounds} failed, seeds failed "
          f"{failed}; {tally.acknowledged} ops acknowledged, {tally.lost} lost, "
          f"{tally.refused} answers a client cannot take; faults: {kinds}; "
          f"{time.monotonic() - started:.0f} s, load "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    return 1 if failed or tally.failed_rounds else 0


if __name__ == "__main__":
    sys.exit(main())
