"""Run a Python script under cProfile in every thread, as ``-m cProfile`` does for one:

    python profile_threads.py STATS_PREFIX SCRIPT [ARGS...]

cProfile sees only the thread that enabled it, and a namenode's time is spread over several:
the event loop (MainThread), the group commit's sync thread (``nnlite-sync``: the shared
journal's etcd transactions, the local write and fdatasync), the HA loop (``nnlite-ha``), the
executor's workers. Each thread gets a profiler of its own; when the script exits (a namenode
on SIGTERM) each one's stats go to ``STATS_PREFIX.<thread name>.prof`` (a thread still running
then, a daemon thread, is snapshotted where it stands). The times are wall times
(``time.perf_counter``), so a thread's time waiting for etcd or for a fsync shows as the
calls that waited. Read them with ``python -m pstats`` or ``pstats.Stats(path)``.

``bench/peers.sh --profile DIR`` and ``bench/bench_ha.py --profile DIR`` start their
namenodes this way.
"""

from __future__ import annotations

import atexit
import cProfile
import marshal
import os
import re
import runpy
import sys
import threading
from collections.abc import Callable

PROFILES: dict[str, cProfile.Profile] = {}
LOCK = threading.Lock()


def register(name: str, profile: cProfile.Profile) -> None:
    with LOCK:
        key, n = name, 1
        while key in PROFILES:
            n += 1
            key = f"{name}.{n}"
        PROFILES[key] = profile


def profiled(run: Callable[[threading.Thread], None]) -> Callable[[threading.Thread], None]:
    """``Thread.run`` with a profiler of the thread's own around it."""
    def run_profiled(self: threading.Thread) -> None:
        profile = cProfile.Profile()
        register(self.name, profile)
        profile.enable()
        try:
            run(self)
        finally:
            profile.disable()
    return run_profiled


def dump(prefix: str) -> None:
    """Each profiler's stats as ``-m cProfile -o`` writes them. ``create_stats`` would
    ``disable`` the calling thread's profiler, not the one of the thread it belongs to, so
    the stats are taken as they stand."""
    with LOCK:
        found = dict(PROFILES)
    for name, profile in found.items():
        profile.snapshot_stats()
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
        with open(f"{prefix}.{safe}.prof", "wb") as f:
            marshal.dump(profile.stats, f)


def main() -> None:
    prefix, script = sys.argv[1], sys.argv[2]
    sys.argv = sys.argv[2:]
    sys.path[0] = os.path.dirname(os.path.abspath(script))    # as ``python SCRIPT`` has it
    threading.Thread.run = profiled(threading.Thread.run)    # type: ignore[assignment]
    main_profile = cProfile.Profile()
    register("MainThread", main_profile)
    atexit.register(dump, prefix)
    main_profile.enable()
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        main_profile.disable()


if __name__ == "__main__":
    main()
