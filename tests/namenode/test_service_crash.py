"""SIGKILL the namenode service while another process sends it concurrent MKDIRS over HTTP.

The load (service_load.py) runs CONNECTIONS kept-alive connections, each sending one MKDIRS
after another and printing a path only once its 200 ``{"boolean":true}`` arrived. At a random
moment the namenode (not the load) is killed with SIGKILL; it then restarts on the same name
dir, and every path acknowledged in this or any earlier round must be there. Since a
connection sends its next request only after the previous answer, each connection may have
left at most one more directory than it saw acknowledged: the one in flight at the kill.

Rounds run back to back on one name dir, so later rounds also replay logs whose tails earlier
kills tore; a final clean stop and start checks the same paths once more. The seed of the kill
times is in every failure message; NNLITE_CRASH_SEED=<seed> repeats a run.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.servers import NamenodeProcess, wait_for

pytestmark = pytest.mark.crash

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 4
CONNECTIONS = 16
KILL_AFTER = (0.5, 2.0)   # seconds of load before the SIGKILL, one sub-range per round


# --------------------------------------------------------------------------- the load

class Load:
    """The child process and the lines it printed (read by a thread, so it never blocks)."""

    def __init__(self, port: int, round_no: int, stderr_path: Path):
        self.stderr_path = stderr_path
        with open(stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tests.namenode.service_load", str(port), str(round_no),
                 str(CONNECTIONS)], cwd=ROOT, stdout=subprocess.PIPE, stderr=err)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for raw in self.proc.stdout:
            self.lines.append(raw.decode().rstrip("\n"))

    def wait_for(self, predicate, what: str, timeout: float = 20) -> None:
        def met() -> bool:
            if predicate():
                return True
            if self.proc.poll() is not None and not self.reader.is_alive():
                raise AssertionError(f"load exited without {what}: {self.lines[-5:]} "
                                     f"{self.stderr_path.read_text()}")
            return False
        try:
            wait_for(met, timeout, what, interval=0.005)
        except TimeoutError as exc:
            raise AssertionError(f"{exc}: {self.lines[-5:]} "
                                 f"{self.stderr_path.read_text()}") from None

    def finish(self, timeout: float = 30) -> list[str]:
        """Wait for the load to stop by itself (its connections break), else kill it."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout)
        self.close()
        return self.lines

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(10)


def load_and_kill(server: NamenodeProcess, round_no: int, delay: float, tmp: Path) -> list[str]:
    """Run the load against ``server``; SIGKILL the server ``delay`` s after the first ack."""
    load = Load(server.port, round_no, tmp / f"load-{round_no}.err")
    try:
        load.wait_for(lambda: "READY" in load.lines, "READY")
        load.wait_for(lambda: any(line.startswith("ACK ") for line in load.lines), "an ack")
        time.sleep(delay)           # the fault's moment: kill this far into the load
        server.kill()
        return load.finish()
    finally:
        load.close()


def acknowledged(lines: list[str], round_no: int) -> dict[int, int]:
    """thread -> number of acknowledged dirs (d0 .. d{n-1}, acked in order)."""
    counts = {t: 0 for t in range(CONNECTIONS)}
    for line in lines:
        if line.startswith("ACK "):
            _, r, t, d = line[4:].split("/")
            thread, index = int(t[1:]), int(d[1:])
            assert r == f"r{round_no}" and index == counts[thread], line
            counts[thread] += 1
    return counts


# --------------------------------------------------------------------------- the checks

def request(conn: http.client.HTTPConnection, path: str, op: str) -> tuple[int, dict]:
    conn.request("GET", f"/webhdfs/v1{path}?op={op}&user.name=tester")
    resp = conn.getresponse()
    return resp.status, json.loads(resp.read() or b"{}")


def check_all_present(server: NamenodeProcess, rounds: dict[int, dict[int, int]],
                      context: str) -> None:
    """Every acknowledged dir exists; beyond them a thread left at most its in-flight one."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
    try:
        for round_no, counts in rounds.items():
            for thread, count in counts.items():
                parent = f"/r{round_no}/t{thread}"
                status, body = request(conn, parent, "LISTSTATUS")
                assert status in (200, 404), (context, parent, status, body)
                present = {s["pathSuffix"] for s in body["FileStatuses"]["FileStatus"]} \
                    if status == 200 else set()
                acked = {f"d{i}" for i in range(count)}
                assert acked <= present, (context, parent, "lost acknowledged dirs",
                                          sorted(acked - present))
                assert present - acked <= {f"d{count}"}, (context, parent, "unexpected dirs",
                                                          sorted(present - acked))
                if count:
                    last = f"{parent}/d{count - 1}"
                    status, body = request(conn, last, "GETFILESTATUS")
                    assert status == 200 and body["FileStatus"]["type"] == "DIRECTORY", \
                        (context, last, status, body)
    finally:
        conn.close()


def kill_delays(rng: random.Random) -> list[float]:
    """One delay from each of ROUNDS equal slices of KILL_AFTER, in a random order."""
    lo, hi = KILL_AFTER
    width = (hi - lo) / ROUNDS
    delays = [lo + width * (i + rng.random()) for i in range(ROUNDS)]
    rng.shuffle(delays)
    return delays


# --------------------------------------------------------------------------- the test

def test_acknowledged_mkdirs_survive_sigkill_of_the_namenode(tmp_path, start_namenode):
    seed = int(os.environ.get("NNLITE_CRASH_SEED") or time.time_ns() % 1_000_000)
    delays = kill_delays(random.Random(seed))
    rounds: dict[int, dict[int, int]] = {}
    server = start_namenode()
    name_dir = server.name_dirs[0]
    for round_no, delay in enumerate(delays):
        context = f"seed {seed}, round {round_no}, killed after {delay:.2f} s"
        lines = load_and_kill(server, round_no, delay, tmp_path)
        errors = [line for line in lines if line.startswith("ERR ")]
        assert not errors, (context, errors[:5])
        rounds[round_no] = acknowledged(lines, round_no)
        assert all(rounds[round_no].values()), (context, "idle connections",
                                                rounds[round_no])
        server = start_namenode(name_dirs=[name_dir])
        check_all_present(server, rounds, context)
    assert server.stop() == 0
    server = start_namenode(name_dirs=[name_dir])
    check_all_present(server, rounds, f"seed {seed}, after a clean restart")
