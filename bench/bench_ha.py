"""An HA set of nnlite under load: how long a failover takes, and how far a standby lags.

    python bench/bench_ha.py [--rounds 20] [--writers 32] [--lag-seconds 30] [--nn-rev HEAD]

The set is bench/peers' ``nnlite-ha`` (``servers.NamenodeHASet``): three etcd members and two
namenodes on loopback, every setting at its default (``nnlite.ha.lease.ttl`` 4 s), in a new
directory under $TMPDIR (refused on tmpfs). Two phases, on one set:

* **Lag.** bench/peers' JVM generator (PeerLoad.java) runs ``--writers`` MKDIRS clients against
  the active for ``--lag-seconds``. Every 100 ms the active's ``/jmx`` NameNodeStatus bean is
  read (``HAStandbys``: each standby's ``lagTxns`` and ``lagMs`` as the active reports them)
  and, right after, the standby's own bean (``HALastAppliedTxid``). The reported lag is the
  active's figures; the measured lag puts the standby's txid against the active's txid
  timeline (interpolated between its samples): the txids it lacked then, and how long before
  the active had made its txid durable.
* **Failover**, ``--rounds`` times. ``--writers`` threads, each with a keep-alive HTTP/1.1
  connection per namenode, make directories one after another and follow the active as
  Hadoop's WebHDFS client does (``FailoverOnNetworkExceptionRetry`` with WebHdfsFileSystem's
  defaults, as ``Writer.mkdirs`` says). Once the standby is caught up and sees the active
  alive, the active is SIGKILLed; measured from just before the kill: when the other
  namenode says ``/isActive``, and when a writer first has a MKDIRS acknowledged by it. The
  killed namenode then starts again on its name dir, joins as a standby, and the next round
  waits until it has caught up. At the end every acknowledged directory is looked up on the
  active (none may be missing).

The summary table gives median, p90 (or p99) and max with the 1-minute load average at each
phase's start and end; bench/out/ha-<UTC time>/ keeps report.txt, results.json and the logs.
``--profile DIR`` runs the namenodes under cProfile in every thread (peers/profile_threads.py);
``--nn-sitecustomize peers/ha_experiments.py`` with ``NNLITE_HA_EXPERIMENT`` measures a change
before it is made (that file's docstring).
"""

from __future__ import annotations

import argparse
import bisect
import http.client
import json
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench" / "peers"))

import load  # noqa: E402
import run as peers  # noqa: E402
import servers  # noqa: E402

OUT = REPO / "bench" / "out"
USER = "bench"
SAMPLE_EVERY = 0.1
# WebHdfsFileSystem's retry numbers (HdfsClientConfigKeys.HttpClient defaults):
# dfs.http.client.retry.max.attempts, dfs.http.client.failover.sleep.base.millis / max.millis
RETRY_MAX_ATTEMPTS = 10
SLEEP_BASE, SLEEP_MAX = 0.5, 15.0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=20, help="failovers to time")
    p.add_argument("--writers", type=int, default=32, help="MKDIRS clients in both phases")
    p.add_argument("--lag-seconds", type=float, default=30.0, help="the lag phase's length")
    p.add_argument("--skip-lag", action="store_true", help="only the failover rounds")
    p.add_argument("--retry-pause", type=float, default=None, metavar="SECONDS",
                   help="the writers retry a RetriableException after this fixed pause instead "
                        "of WebHdfsFileSystem's back-off (the server's failover alone)")
    p.add_argument("--nn-tree", type=Path, default=REPO)
    p.add_argument("--nn-rev", default=None, help="run the namenodes of this git revision")
    p.add_argument("--nn-python", default=None)
    p.add_argument("-D", dest="nn_defines", action="append", default=[], metavar="KEY=VALUE",
                   help="a namenode setting (repeat)")
    p.add_argument("--nn-ports", default="29881,29882")
    p.add_argument("--etcd-port", type=int, default=23830,
                   help="the first of the etcd members' client,peer port pairs")
    p.add_argument("--profile", type=Path, default=None, metavar="DIR",
                   help="run the namenodes under cProfile, every thread")
    p.add_argument("--nn-sitecustomize", type=Path, default=None, metavar="FILE",
                   help="a Python file the namenodes import first (peers/ha_experiments.py)")
    p.add_argument("--workdir", type=Path, default=None)
    args = p.parse_args(argv)
    args.nn_tree = args.nn_tree.resolve()
    if args.profile:
        args.profile = args.profile.resolve()
    if args.nn_sitecustomize:
        args.nn_sitecustomize = args.nn_sitecustomize.resolve()
    return args


def load_average() -> float:
    return peers.load_average()[0]


def spread(values: list[float], high: float = 0.9) -> dict[str, float]:
    """Median, the ``high`` quantile and max of ``values`` (NaN when there are none)."""
    if not values:
        return {"median": float("nan"), "high": float("nan"), "max": float("nan"), "n": 0}
    ordered = sorted(values)
    at = min(len(ordered) - 1, round(high * (len(ordered) - 1)))
    return {"median": statistics.median(ordered), "high": ordered[at], "max": ordered[-1],
            "n": len(ordered)}


# ---------------------------------------------------------------------- the lag phase

@dataclass
class LagSamples:
    """The active's txid timeline, the standby's positions, and the active's reports."""
    active: list[tuple[float, int]] = field(default_factory=list)
    standby: list[tuple[float, int]] = field(default_factory=list)
    reported: list[tuple[int, int]] = field(default_factory=list)    # lagTxns, lagMs
    errors: int = 0

    def take(self, active: servers.Namenode, standby: servers.Namenode) -> None:
        try:
            bean = active.status_bean()
            t_active = time.monotonic()
            mine = standby.status_bean()
            t_standby = time.monotonic()
        except (OSError, ValueError, KeyError, IndexError):
            self.errors += 1
            return
        self.active.append((t_active, int(bean["HALastAppliedTxid"])))
        self.standby.append((t_standby, int(mine["HALastAppliedTxid"])))
        for doc in json.loads(bean.get("HAStandbys") or "{}").values():
            self.reported.append((int(doc["lagTxns"]), int(doc["lagMs"])))

    def measured(self) -> tuple[list[float], list[float]]:
        """(txids, ms) the standby was behind at each of its samples, against the active's
        timeline interpolated between samples."""
        times = [t for t, _ in self.active]
        txids = [x for _, x in self.active]
        lag_txns, lag_ms = [], []
        for t, have in self.standby:
            i = bisect.bisect_right(times, t)
            if i == 0 or i == len(times):
                continue
            (t0, x0), (t1, x1) = self.active[i - 1], self.active[i]
            active_then = x0 + (x1 - x0) * (t - t0) / (t1 - t0)
            lag_txns.append(max(0.0, active_then - have))
            j = bisect.bisect_left(txids, have)          # first sample at or past ``have``
            if j == 0:
                continue                                   # reached before the first sample
            if j == len(txids):
                reached = t                                # past the active's samples: no lag
            else:
                (ta, xa), (tb, xb) = self.active[j - 1], self.active[j]
                reached = ta + (tb - ta) * (have - xa) / (xb - xa) if xb > xa else tb
            lag_ms.append(max(0.0, (t - reached) * 1000))
        return lag_txns, lag_ms


def lag_phase(args: argparse.Namespace, ha: servers.NamenodeHASet, out: Path) -> dict:
    active = ha.namenodes[ha.active]
    standby = ha.namenodes[1 - ha.active]
    generator = load.Generator(load.compiled(OUT / "classes"), "webhdfs", active.address(),
                               out / "peerload.err")
    samples = LagSamples()
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            began = time.monotonic()
            samples.take(active, standby)
            stop.wait(max(0.0, SAMPLE_EVERY - (time.monotonic() - began)))
    try:
        generator.prepare("write", args.writers, 10 ** 9, args.lag_seconds, 2000,
                          f"/ha-bench/lag-{time.strftime('%H%M%S')}", 100)
        load_start = load_average()
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        found = generator.go(args.lag_seconds)
        stop.set()
        sampler.join()
    finally:
        generator.close()
    lag_txns, lag_ms = samples.measured()
    return {"ops_s": found["ops"] / found["seconds"], "ops": found["ops"],
            "errors": found["errors"], "samples": len(samples.standby),
            "sample_errors": samples.errors,
            "reported_txns": spread([float(r[0]) for r in samples.reported], 0.99),
            "reported_ms": spread([float(r[1]) for r in samples.reported], 0.99),
            "measured_txns": spread(lag_txns, 0.99), "measured_ms": spread(lag_ms, 0.99),
            "load": (load_start, load_average())}


# ---------------------------------------------------------------------- the writers

class Refused(Exception):
    """The namenode answered with a RemoteException a failover client acts on."""

    def __init__(self, exception: str):
        super().__init__(exception)
        self.exception = exception


class Writer:
    """One MKDIRS client following the active of the set as WebHdfsFileSystem does with
    ConfiguredFailoverProxyProvider: a refused connection or a StandbyException goes to the
    next namenode at once; a RetriableException asks the same one again after
    ``min(0.5 s * 2**retries, 15 s)`` times a random factor in [0.5, 1.5) (the first retry at
    once); a connection that broke after the request went out (MKDIRS is idempotent) goes to
    the next one after the same back-off; after RETRY_MAX_ATTEMPTS retries the call fails
    (``runWithRetry`` counts failovers as retries and passes none as failovers, so a
    failover never sleeps) and the writer starts a new call."""

    def __init__(self, ports: list[int], start: int, pause: float | None = None):
        self.ports = ports
        self.index = start
        self.pause = pause          # a fixed pause instead of the back-off (--retry-pause)
        self.conns: list[http.client.HTTPConnection | None] = [None] * len(ports)
        self.random = random.Random(start)

    def mkdirs(self, path: str) -> int:
        """MKDIRS ``path``; the index of the namenode that acknowledged it. Raises
        RuntimeError when the call gives up (as Hadoop's would)."""
        for retries in range(RETRY_MAX_ATTEMPTS + 1):
            try:
                self.exchange(path)
                return self.index
            except ConnectionRefusedError:
                failover, delay = True, 0.0
            except Refused as refused:
                failover = refused.exception == "StandbyException"
                delay = 0.0 if failover else self.sleep_time(retries)
            except (OSError, http.client.HTTPException):
                failover, delay = True, self.sleep_time(retries)
            if failover:
                self.index = (self.index + 1) % len(self.ports)
            if delay:
                time.sleep(delay)
        raise RuntimeError(f"MKDIRS {path}: gave up after {RETRY_MAX_ATTEMPTS} retries")

    def sleep_time(self, times: int) -> float:
        if self.pause is not None:
            return self.pause
        if times == 0:
            return 0.0
        return min(SLEEP_BASE * (1 << times), SLEEP_MAX) * (self.random.random() + 0.5)

    def exchange(self, path: str) -> None:
        conn = self.conns[self.index]
        if conn is None:
            conn = http.client.HTTPConnection("127.0.0.1", self.ports[self.index], timeout=30)
            conn.connect()            # ConnectionRefusedError: the request never left
            self.conns[self.index] = conn
        try:
            conn.request("PUT", f"/webhdfs/v1{path}?op=MKDIRS&user.name={USER}")
            resp = conn.getresponse()
            body = resp.read()
        except BaseException:
            conn.close()
            self.conns[self.index] = None
            raise
        if resp.status == 200 and json.loads(body) == {"boolean": True}:
            return
        exception = json.loads(body).get("RemoteException", {}).get("exception", "")
        if exception in ("StandbyException", "RetriableException"):
            raise Refused(exception)
        raise RuntimeError(f"MKDIRS {path}: {resp.status} {body[:200]!r}")

    def close(self) -> None:
        for conn in self.conns:
            if conn is not None:
                conn.close()


class Writers:
    """``count`` Writer threads making ``<base>/w<k>/d<n>``, n = 0, 1, ...; each records the
    n it had acknowledged. ``arm(killed)`` watches for the first acknowledgement from a
    namenode other than ``killed``."""

    def __init__(self, ports: list[int], count: int, base: str, pause: float | None = None):
        self.ports, self.base, self.pause = ports, base, pause
        self.acked: list[list[int]] = [[] for _ in range(count)]
        self.gave_up = 0
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.killed: int | None = None
        self.first_ack: float | None = None
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self.write, args=(k,), daemon=True)
                        for k in range(count)]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=120)

    def total(self) -> int:
        return sum(len(a) for a in self.acked)

    def arm(self, killed: int | None) -> None:
        """Watch for the first acknowledgement by a namenode other than ``killed`` (None:
        stop watching)."""
        with self.lock:
            self.killed, self.first_ack = killed, None

    def write(self, k: int) -> None:
        writer = Writer(self.ports, k % len(self.ports), self.pause)
        n = 0
        while not self.stopping.is_set():
            try:
                by = writer.mkdirs(f"{self.base}/w{k}/d{n}")
            except RuntimeError as exc:
                with self.lock:
                    self.gave_up += 1
                    if "gave up" not in str(exc):
                        self.errors.append(str(exc))
                continue
            now = time.monotonic()
            self.acked[k].append(n)
            n += 1
            if self.killed is not None and by != self.killed and self.first_ack is None:
                with self.lock:
                    if self.first_ack is None and self.killed is not None:
                        self.first_ack = now
        writer.close()

    def missing(self, namenode: servers.Namenode) -> int:
        """Acknowledged directories the namenode does not have."""
        lost = 0
        for k, acked in enumerate(self.acked):
            if not acked:
                continue
            url = namenode.url(f"/webhdfs/v1{self.base}/w{k}?op=LISTSTATUS&user.name={USER}")
            status, body = servers.http_get(url, timeout=60)
            names = {s["pathSuffix"] for s in json.loads(body)["FileStatuses"]["FileStatus"]} \
                if status == 200 else set()
            lost += sum(1 for n in acked if f"d{n}" not in names)
        return lost


# ---------------------------------------------------------------------- the failover phase

def txid_of(namenode: servers.Namenode) -> int:
    return int(namenode.status_bean()["HALastAppliedTxid"])


def until(what: str, ready: Callable[[], object], timeout: float,
          every: float = 0.01) -> float:
    """Poll ``ready()`` until true; the monotonic time it first was."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if ready():
                return time.monotonic()
        except (OSError, ValueError, KeyError, IndexError):
            pass
        time.sleep(every)
    raise RuntimeError(f"no {what} within {timeout:.0f} s")


def steady(ha: servers.NamenodeHASet, writers: Writers) -> None:
    """Wait until the writers make progress and the standby has caught up with the active
    and sees it alive (it would answer StandbyException)."""
    active, standby = ha.namenodes[ha.active], ha.namenodes[1 - ha.active]
    before = writers.total()
    until("progress of the writers", lambda: writers.total() > before + 100, 120)
    target = txid_of(active)
    until("standby caught up", lambda: txid_of(standby) >= target, 120, 0.05)
    until("standby seeing the active", lambda: standby.status_bean()["HAActiveAlive"], 30)


def failover_round(ha: servers.NamenodeHASet, writers: Writers, number: int) -> dict:
    steady(ha, writers)
    load_start = load_average()
    killed = ha.active
    other = ha.namenodes[1 - killed]
    writers.arm(killed)
    killed_at = time.monotonic()
    ha.kill(killed)
    active_at = until("new active", other.is_active, 60)
    ha.active = 1 - killed
    until("acknowledged write on the new active", lambda: writers.first_ack is not None, 60)
    acked_at = writers.first_ack or float("nan")
    writers.arm(None)
    restarted = time.monotonic()
    ha.restart(killed)
    loaded = time.monotonic()
    target = txid_of(other)
    caught = until("restarted standby caught up", lambda: txid_of(ha.namenodes[killed]) >= target,
                   120, 0.05)
    row = {"round": number, "killed": ha.ids[killed], "to_active_s": active_at - killed_at,
           "to_first_ack_s": acked_at - killed_at, "restart_s": loaded - restarted,
           "catch_up_s": caught - loaded, "txid": target, "gave_up": writers.gave_up,
           "load": (load_start, load_average())}
    print(f"round {number:2d}: killed {row['killed']}, new active in {row['to_active_s']:.2f} s, "
          f"first ack in {row['to_first_ack_s']:.2f} s; restarted in {row['restart_s']:.1f} s, "
          f"caught up in {row['catch_up_s']:.1f} s (txid {target}); calls given up so far "
          f"{writers.gave_up}; load {row['load'][0]:.2f}-{row['load'][1]:.2f}", flush=True)
    return row


def failover_phase(args: argparse.Namespace, ha: servers.NamenodeHASet) -> dict:
    base = f"/ha-bench/failover-{time.strftime('%H%M%S')}"
    writers = Writers(list(ha.ports), args.writers, base, args.retry_pause)
    writers.start()
    rows = []
    try:
        for number in range(1, args.rounds + 1):
            rows.append(failover_round(ha, writers, number))
    finally:
        writers.stop()
    lost = writers.missing(ha.namenodes[ha.active])
    return {"rounds": rows, "acked": writers.total(), "lost": lost, "gave_up": writers.gave_up,
            "errors": writers.errors[:5],
            "to_active": spread([r["to_active_s"] for r in rows]),
            "to_first_ack": spread([r["to_first_ack_s"] for r in rows]),
            "restart": spread([r["restart_s"] for r in rows]),
            "catch_up": spread([r["catch_up_s"] for r in rows])}


# ---------------------------------------------------------------------- the report

def idle_cpu(ha: servers.NamenodeHASet, seconds: float = 5.0) -> dict[str, float]:
    """Each process's share of a core while the set has nothing to do."""
    parts = ha.parts()
    before = {label: servers.cpu_seconds(pid) for label, pid in parts.items()}
    time.sleep(seconds)
    return {label: 100 * (servers.cpu_seconds(pid) - before[label]) / seconds
            for label, pid in parts.items()}


def summary(result: dict) -> str:
    head = "| what | median | p90 / p99 | max | n | load (start-end) |"
    lines = [head, "|---|---|---|---|---|---|"]

    def row(what: str, s: dict, unit: str, digits: int, load: tuple[float, float]) -> None:
        cells = [f"{s[k]:,.{digits}f}{unit}" for k in ("median", "high", "max")]
        lines.append(f"| {what} | {' | '.join(cells)} | {s['n']} | "
                     f"{load[0]:.2f}-{load[1]:.2f} |")
    lag = result.get("lag")
    if lag:
        row("standby lag reported by the active (HAStandbys lagTxns), p99", lag["reported_txns"],
            " txns", 0, lag["load"])
        row("standby lag reported by the active (HAStandbys lagMs), p99", lag["reported_ms"],
            " ms", 0, lag["load"])
        row("standby lag measured (its txid vs the active's timeline), p99",
            lag["measured_txns"], " txns", 0, lag["load"])
        row("standby lag measured, p99", lag["measured_ms"], " ms", 0, lag["load"])
    fo = result.get("failover")
    if fo:
        loads = [r["load"] for r in fo["rounds"]]
        span = (min(x for x, _ in loads), max(y for _, y in loads))
        row("failover: SIGKILL -> the other says /isActive, p90", fo["to_active"], " s", 2, span)
        row("failover: SIGKILL -> first acknowledged MKDIRS on it, p90", fo["to_first_ack"],
            " s", 2, span)
        row("killed namenode restarted: start -> loaded, p90", fo["restart"], " s", 1, span)
        row("restarted standby: loaded -> caught up, p90", fo["catch_up"], " s", 1, span)
    notes = []
    if lag:
        notes.append(f"lag phase: {lag['ops_s']:,.0f} MKDIRS/s from the JVM generator "
                     f"({lag['ops']:,} ops, {lag['errors']} errors, {lag['samples']} samples)")
    if fo:
        pause = result["settings"]["retry_pause"]
        policy = ("WebHdfsFileSystem's back-off" if pause == "None"
                  else f"a fixed {pause} s pause")
        notes.append(f"failover phase: {fo['acked']:,} MKDIRS acknowledged, {fo['lost']} of them "
                     f"missing on the final active, {fo['gave_up']} calls given up by the "
                     f"client's policy; a RetriableException retried after {policy}")
    if result.get("idle_cpu"):
        notes.append("idle set, % of a core: " + ", ".join(
            f"{k} {v:.1f}" for k, v in result["idle_cpu"].items()))
    return "\n".join(lines + [""] + notes)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run_id = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out = OUT / f"ha-{run_id}"
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="nnlite-ha-", dir=args.workdir))
    if peers.filesystem_of(work) in peers.MEMORY_FILESYSTEMS:
        print(f"bench_ha: {work} is on tmpfs: set TMPDIR to a directory on disk",
              file=sys.stderr)
        return 2
    result: dict[str, Any] = {"started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                              "load_before": peers.load_average(), "settings": {
                                  k: str(v) for k, v in vars(args).items()}}
    print(f"# load average before: {result['load_before']}", flush=True)
    (work / "set").mkdir()
    ha = servers.NamenodeHASet(work / "set", out, peers.namenode_tree(args, work / "set"),
                               args.nn_python or servers.python_of(args.nn_tree),
                               peers.numbers(args.nn_ports), args.etcd_port, args.nn_defines,
                               profile=args.profile, sitecustomize=args.nn_sitecustomize)
    try:
        ha.start()
        print(f"# {ha.facts}", flush=True)
        result["facts"] = ha.facts
        result["idle_cpu"] = idle_cpu(ha)
        if not args.skip_lag:
            result["lag"] = lag_phase(args, ha, out)
            print(f"# lag phase done: {result['lag']['ops_s']:,.0f} ops/s", flush=True)
        if args.rounds:
            result["failover"] = failover_phase(args, ha)
    finally:
        ha.stop()
        shutil.rmtree(work, ignore_errors=True)
    text = (f"# bench_ha {result['started']}, load average before {result['load_before']}, "
            f"{ha.facts}\n\n{summary(result)}\n")
    (out / "report.txt").write_text(text)
    (out / "results.json").write_text(json.dumps(result, indent=1, default=str))
    print("\n" + text + f"\nbench_ha: {out}/report.txt, results.json and the logs", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
