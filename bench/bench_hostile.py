"""The namenode under hostile clients: its memory and the other clients' latency.

    .venv/bin/python bench/bench_hostile.py [--loads listing,reader,names,bodies] [--seconds 8]

Loads (each against a fresh namenode process; a probe client meanwhile sends GETFILESTATUS
on its own connection, one at a time, and its latencies are the "others" columns):

* ``listing``: 20 connections each pipeline 5 LISTSTATUS of a 200,000-child directory and
  never read an answer.
* ``reader``: one well-behaved client lists that directory again and again.
* ``names``: 15,000 GETFILESTATUS with distinct 60 KiB ``user.name`` values.
* ``bodies``: 500 connections each send 1,000,000 bytes of a 1 MiB request body and stop.

RSS is the namenode's VmRSS before the load, at its peak (sampled every 0.1 s) and after the
load's connections are closed. To measure another tree (``before``), put a directory holding
an ``nnlite`` symlink to it first on PYTHONPATH: the namenode child inherits it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.namenode.http.test_listing import (  # noqa: E402
    WIDE,
    never_reading_listers,
    wide_directory,
)
from tests.servers import NamenodeProcess  # noqa: E402


class Probe(threading.Thread):
    """GETFILESTATUS one at a time; latencies in seconds."""

    def __init__(self, nn: NamenodeProcess):
        super().__init__(daemon=True)
        self.nn, self.latencies, self.stop = nn, [], threading.Event()

    def run(self) -> None:
        with requests.Session() as http:
            while not self.stop.is_set():
                started = time.perf_counter()
                with contextlib.suppress(requests.RequestException):
                    http.get(self.nn.webhdfs("/"), params={"op": "GETFILESTATUS"}, timeout=60)
                self.latencies.append(time.perf_counter() - started)
                time.sleep(0.01)


class Peak(threading.Thread):
    def __init__(self, nn: NamenodeProcess):
        super().__init__(daemon=True)
        self.nn, self.peak, self.stop = nn, 0, threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.peak = max(self.peak, self.nn.rss())
            except (OSError, RuntimeError):
                return
            time.sleep(0.1)


def listing(nn, seconds: float) -> list:
    held = never_reading_listers(nn.port)
    time.sleep(seconds)
    return held


READER = """
import sys, time, requests
deadline = time.monotonic() + float(sys.argv[2])
with requests.Session() as http:
    while time.monotonic() < deadline:
        http.get(sys.argv[1], params={"op": "LISTSTATUS"}, timeout=120).content
"""


def reader(nn, seconds: float) -> list:
    """In a process of its own: reading 48 MB in this one would starve the probe's thread."""
    subprocess.run([sys.executable, "-c", READER, nn.webhdfs(WIDE), str(seconds)], check=True)
    return []


def names(nn, seconds: float) -> list:
    with requests.Session() as http:
        for i in range(15_000):
            http.get(nn.webhdfs("/"), params={"op": "GETFILESTATUS",
                                              "user.name": f"u{i:05d}" + "x" * 60_000})
    return []


def bodies(nn, seconds: float) -> list:
    head = (b"PUT /webhdfs/v1/x?op=MKDIRS HTTP/1.1\r\nHost: h\r\n"
            b"Content-Length: 1048576\r\n\r\n")
    held = []
    for _ in range(500):
        try:
            s = socket.create_connection(("127.0.0.1", nn.port))
            s.sendall(head + b"\0" * 1_000_000)
            held.append(s)
        except OSError:
            pass
    time.sleep(seconds)
    return held


LOADS = {"listing": listing, "reader": reader, "names": names, "bodies": bodies}


def run(load: str, seconds: float, work: Path) -> dict:
    name = str(work / f"name-{load}")
    if load in ("listing", "reader"):
        wide_directory(name, 200_000)
    nn = NamenodeProcess.start([name], timeout=120)
    try:
        before = nn.rss()
        probe, peak = Probe(nn), Peak(nn)
        probe.start()
        peak.start()
        time.sleep(1)
        quiet = list(probe.latencies)
        held = LOADS[load](nn, seconds)
        during = probe.latencies[len(quiet):]
        for s in held:
            s.close()
        time.sleep(2)
        probe.stop.set()
        peak.stop.set()
        probe.join()
        after = nn.rss()
    finally:
        nn.stop()
    during.sort()
    return {"load": load, "before": before, "peak": max(peak.peak, before), "after": after,
            "n": len(during), "p50": during[len(during) // 2] if during else 0,
            "p99": during[int(len(during) * 0.99)] if during else 0,
            "max": during[-1] if during else 0}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--loads", default=",".join(LOADS))
    ap.add_argument("--seconds", type=float, default=8)
    args = ap.parse_args()
    tree = os.environ.get("PYTHONPATH", "") or "main"
    print(f"# tree {tree}; load average {os.getloadavg()[0]:.1f}")
    print("| load | RSS before | peak | after | others: GETFILESTATUS | p50 ms | p99 ms "
          "| max ms |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for load in args.loads.split(","):
            r = run(load, args.seconds, Path(tmp))
            mb = 1 << 20
            print(f"| {load} | {r['before'] / mb:.0f} MB | {r['peak'] / mb:.0f} MB | "
                  f"{r['after'] / mb:.0f} MB | {r['n']} | {r['p50'] * 1e3:.1f} | "
                  f"{r['p99'] * 1e3:.1f} | {r['max'] * 1e3:.0f} |", flush=True)
    print(f"# load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
