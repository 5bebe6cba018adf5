"""Benchmarks of the data path and of Spark checkpoints in nnlite (issues 5 and 25).

    python bench/bench_data.py [all|throughput|spark-file|streaming|schemes]
        [--clients 1,2,4] [--files 4096:2000,1048576:200,67108864:16]
        [--spark-files 100] [--batches 20] [--rounds 2]
        [--schemes file,webhdfs,hdfs] [--stores hdfs,rocksdb]
        [--scheme-files 67108864:8] [--scheme-clients 1,2] [--kinds hdfs,webhdfs,hdfs-native]
        [--nn-rev REV] [--probe] [--profile DIR]

Every server and JVM it starts is stopped when it ends (normally, on an error, on Ctrl-C).
Every loop is bounded (a count, and a deadline where it waits on Spark). Each namenode is
``nnlite namenode`` on 127.0.0.1 with free HTTP, RPC and datanode ports and a fresh name dir
(its data dir beside it) under ``$BENCH_DIR`` or /tmp; ``--nn-rev`` runs that revision's tree
(exported with git, as bench/peers does), ``--probe`` counts its calls by method and
``--profile`` runs it under cProfile (bench/data_probe.py, imported as its sitecustomize).

1. **throughput**: for each file size and each number of concurrent clients, the clients
   (separate processes, one kept-alive ``http.client`` connection each) CREATE+write+close
   the files, then OPEN and read them all back, both through the WebHDFS 307 flow (step 1 at
   ``/webhdfs/v1``, step 2 at the Location). The same total number of files is split among
   the clients. MB/s and files/s are over the wall time from the moment every client is
   ready to the moment the last one finishes.
2. **spark-file**: one Spark atomic checkpoint file, written as Spark's streaming metadata logs
   write it: ``exists(final)``, then Spark's own ``CheckpointFileManager.createAtomic``
   (FileContext-based for both schemes: create ``.<name>.<uuid>.tmp``, write, and at close
   rename it with ``Rename.NONE``). Measured on webhdfs:// (HTTP requests the namenode
   served, from its ``/metrics.json`` Requests counter, uploads included, and ms per file) and
   on file:// (ms per file). After WARMUP_FILES files, one file is written with the counter
   read between its steps, so every step's round trips are known; the timed files are not
   interrupted. The throughput run checks the counter too: 2 requests per CREATE and OPEN.
3. **streaming**: the same stateful query (``rate-micro-batch`` source, a ``groupBy`` count of
   KEYS keys, memory sink, update mode, local[2], shuffle partitions 4) with its
   checkpointLocation on each of ``--schemes`` (file://, webhdfs://, hdfs://: Hadoop IPC and
   the built-in datanode) and each state store of ``--stores`` (the HDFS-backed one, RocksDB),
   in one JVM on one namenode: per store one discarded query per scheme, then ``--rounds``
   rounds of ``--batches`` counted batches after WARMUP_BATCHES, the schemes' order rotating.
   From Spark's own StreamingQueryProgress, median and p90 of ``durationMs.walCommit`` (the
   offsets log), ``durationMs.commitOffsets`` (the commits log), the state operators'
   ``commitTimeMs`` (summed: each task's state-store commit), their sum ("checkpoint") and
   ``triggerExecution`` (the whole batch); the ratios of the medians; the namenode's calls
   per batch (by method with ``--probe``).
4. **schemes**: ``--scheme-files`` files (64 MiB by default) written, then read, over hdfs://
   by Hadoop's ``DistributedFileSystem`` and over webhdfs:// by ``WebHdfsFileSystem`` (both
   threads of Spark's JVM, a ``FileSystem.newInstance`` each, a file one py4j call: Hadoop's
   ``IOUtils.copyBytes`` from a local file of random bytes, or into a null stream, the bytes
   never crossing py4j) and over hdfs:// by hdfs-native's Python client (Rust; a process
   each), with ``--scheme-clients`` clients, all on one namenode, the client kinds
   (``--kinds``) in an order rotating from row to row, after one untimed file of each kind.
   Each row gives MB/s over the wall time, the namenode's CPU per MB (user + system from
   /proc, its built-in datanode included; 10 ms ticks), the clients' (the whole JVM's for
   the JVM clients), the calls it served per file and the 1-minute load average before and
   after.

``NNLITE_BENCH_EARLY=create,addBlock`` in the environment (with ``--probe``) runs an
experiment: the namenode answers those RPC calls without waiting for their edits' sync
(data_probe.py; BENCHMARKS.md says what it measures and why it is not a change as it stands).

One run; the machine is shared, so compare the figures within the run.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from itertools import pairwise
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]
PEERS = REPO / "bench" / "peers"
sys.path.insert(0, str(REPO))
sys.path.insert(1, str(PEERS))

import run as peers  # noqa: E402  (bench/peers/run.py: --nn-rev's exported tree)
from servers import cpu_split  # noqa: E402  (bench/peers/servers.py)

from tests.catalog.conformance import STORES, spark_conf  # noqa: E402
from tests.servers import NamenodeProcess  # noqa: E402

USER = "bench"
USERS = ("-D", f"hadoop.user.group.static.mapping.overrides={USER}=supergroup")
READ_CHUNK = 1 << 20
CLIENT_TIMEOUT = 300          # seconds a client waits on one request
SPARK_WAIT = 900              # seconds a streaming round may take at most
WARMUP_FILES = 10             # checkpoint files written before the timed ones
WARMUP_BATCHES = 3            # batches of each streaming round that are not counted
ROWS_PER_BATCH = 1000
KEYS = 100                    # groupBy keys: the state store holds this many rows
CHECKPOINT_PAYLOAD = b"v1\n" + json.dumps(             # an offsets-log entry's size and shape
    {"batchWatermarkMs": 0, "batchTimestampMs": 1_700_000_000_000,
     "conf": {"spark.sql.shuffle.partitions": "4"}}).encode() + b"\n" + b'{"0":1000}' * 20


# ============================================================================ the namenode

PROBE = REPO / "bench" / "data_probe.py"
OPTIONS = argparse.Namespace(nn_rev=None, probe=False, profile=None)   # main() sets them


def start_namenode(root: Path) -> NamenodeProcess:
    """A formatted name dir under ``root``; the namenode on 127.0.0.1, free HTTP, RPC and
    datanode ports. ``--nn-rev`` runs that revision's tree (exported with git, as
    bench/peers does), ``--probe`` / ``--profile`` import data_probe.py first."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / "pythonpath"
    path.mkdir()
    env = {"PYTHONPATH": str(path)}
    if OPTIONS.nn_rev:
        tree = peers.namenode_tree(argparse.Namespace(nn_rev=OPTIONS.nn_rev, nn_tree=REPO), root)
        (path / "nnlite").symlink_to(tree.resolve(), target_is_directory=True)
    if OPTIONS.probe or OPTIONS.profile:
        shutil.copyfile(PROBE, path / "sitecustomize.py")
    if OPTIONS.profile:
        OPTIONS.profile.mkdir(parents=True, exist_ok=True)
        env.update(NNLITE_BENCH_PROFILE=str(OPTIONS.profile / f"nn-{time.strftime('%H%M%S')}"),
                   NNLITE_BENCH_PEERS=str(PEERS / "profile_threads.py"))
    return NamenodeProcess.start([str(root / "name")], *USERS, env=env)


def metrics(nn: NamenodeProcess) -> dict:
    with urllib.request.urlopen(nn.url + "/metrics.json", timeout=30) as resp:
        return json.load(resp)


def calls(nn: NamenodeProcess) -> dict[str, float]:
    """Everything the namenode served so far by call: the probe's ``BenchCalls`` and, as
    ``seconds <name>``, its ``BenchSeconds`` (none without ``--probe``), with the totals
    ``RpcCalls`` and ``Requests`` (this read included)."""
    m = metrics(nn)
    return {**m.get("BenchCalls", {}),
            **{f"seconds {k}": v for k, v in m.get("BenchSeconds", {}).items()},
            "RpcCalls": m.get("RpcCalls", 0), "Requests": m["Requests"]}


def calls_between(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    """The calls made between two reads, less the reads of /metrics.json (the probe counts
    them; without it, ``b`` is the only one)."""
    out = {k: b.get(k, 0) - a.get(k, 0) for k in b}
    out["Requests"] -= out.pop("http GET metrics.json", 1)   # the reads themselves
    return {k: v for k, v in out.items() if v}


def calls_text(served_calls: dict[str, float], per: float, unit: str) -> str:
    """``name n`` per ``unit`` for each call, busiest first, with the server's ms per call
    where the probe timed it."""
    counted = sorted(((k, v) for k, v in served_calls.items() if not k.startswith("seconds ")),
                     key=lambda kv: -kv[1])
    parts = []
    for name, n in counted:
        timed = name.endswith(" (timed)") or not name.startswith("http ")
        spent = timed and served_calls.get(f"seconds {name.removesuffix(' (timed)')}")
        parts.append(f"{name} {n / per:.1f}" + (f" ({spent / n * 1000:.2f} ms)" if spent else ""))
    return f"per {unit}: " + ", ".join(parts)


def nn_cpu(nn: NamenodeProcess) -> tuple[float, float]:
    """The namenode's (user, system) CPU seconds so far (its built-in datanode is in it)."""
    return cpu_split(nn.proc.pid)


def served(nn: NamenodeProcess) -> int:
    """The namenode's HTTP requests and RPC calls (``Requests`` + ``RpcCalls``), this read
    included: those made between two reads ``a`` and ``b`` are ``b - a - 1``."""
    m = metrics(nn)
    return m["Requests"] + m.get("RpcCalls", 0)


# ============================================================================ WebHDFS client

class WebHdfs:
    """The 307 flow on kept-alive ``http.client`` connections (one per host:port)."""

    def __init__(self, url: str, user: str = USER):
        self.netloc = urlsplit(url).netloc
        self.user = user
        self.conns: dict[str, http.client.HTTPConnection] = {}

    def _conn(self, netloc: str) -> http.client.HTTPConnection:
        if netloc not in self.conns:
            self.conns[netloc] = http.client.HTTPConnection(netloc, timeout=CLIENT_TIMEOUT)
        return self.conns[netloc]

    def _send(self, method: str, netloc: str, target: str, body=None):
        conn = self._conn(netloc)
        conn.request(method, target, body=body)
        return conn.getresponse()

    def _step1(self, method: str, path: str, query: str) -> tuple[str, str]:
        """The namenode's answer to step 1: the Location's (netloc, path?query)."""
        target = f"/webhdfs/v1{path}?op={query}&user.name={self.user}"
        resp = self._send(method, self.netloc, target)
        body = resp.read()
        if resp.status != 307:
            raise RuntimeError(f"{method} {target}: {resp.status} {body[:300]!r}")
        loc = urlsplit(resp.getheader("Location"))
        return loc.netloc, f"{loc.path}?{loc.query}"

    def create(self, path: str, data: bytes) -> None:
        netloc, target = self._step1("PUT", path, "CREATE&overwrite=true")
        resp = self._send("PUT", netloc, target, body=data)
        body = resp.read()
        if resp.status != 201:
            raise RuntimeError(f"CREATE {path} data step: {resp.status} {body[:300]!r}")

    def read(self, path: str, buf: bytearray) -> int:
        """OPEN the whole file, streamed through ``buf``; returns the bytes read."""
        netloc, target = self._step1("GET", path, "OPEN")
        resp = self._send("GET", netloc, target)
        if resp.status != 200:
            raise RuntimeError(f"OPEN {path} data step: {resp.status} {resp.read()[:300]!r}")
        total, view = 0, memoryview(buf)
        while n := resp.readinto(view):
            total += n
        return total

    def call(self, method: str, path: str, query: str) -> dict:
        resp = self._send(method, self.netloc,
                          f"/webhdfs/v1{path}?op={query}&user.name={self.user}")
        body = resp.read()
        if resp.status != 200:
            raise RuntimeError(f"{method} {path} {query}: {resp.status} {body[:300]!r}")
        return json.loads(body)

    def connect(self) -> None:
        self.call("GET", "/", "GETFILESTATUS")

    def close(self) -> None:
        for conn in self.conns.values():
            conn.close()


class Native:
    """hdfs-native's client (Rust; PyPI ``hdfs-native``) at the namenode's RPC port: namenode
    calls over Hadoop IPC, blocks through the built-in datanode."""

    def __init__(self, url: str, user: str = USER):
        os.environ["HADOOP_USER_NAME"] = user            # this client process's user
        import hdfs_native
        self.hdfs_native = hdfs_native
        self.client = hdfs_native.Client(url)

    def connect(self) -> None:
        self.client.get_file_info("/")

    def create(self, path: str, data: bytes) -> None:
        with self.client.create(path, self.hdfs_native.WriteOptions(overwrite=True)) as out:
            out.write(data)

    def read(self, path: str, buf: bytearray) -> int:
        with self.client.read(path) as stream:
            return len(stream.read())

    def close(self) -> None:
        pass


CLIENTS = {"http.client": WebHdfs, "hdfs-native": Native}


# ============================================================================ 1. throughput

def _client(url: str, op: str, size: int, paths: list[str], barrier, results,
            kind: str = "http.client") -> None:
    """One client process: ``op`` ("write" or "read") every path, after the barrier."""
    client = CLIENTS[kind](url)
    data = os.urandom(size) if op == "write" else b""
    buf = bytearray(READ_CHUNK)
    try:
        client.connect()                                # before the clock starts
        barrier.wait(timeout=CLIENT_TIMEOUT)
        start, cpu, moved = time.perf_counter(), time.process_time(), 0
        for path in paths:
            if op == "write":
                client.create(path, data)
                moved += size
            else:
                moved += client.read(path, buf)
        results.put((start, time.perf_counter(), moved, None, time.process_time() - cpu))
    except Exception as exc:                            # reported by the parent
        results.put((0.0, 0.0, 0, f"{type(exc).__name__}: {exc}", 0.0))
    finally:
        client.close()


def run_clients(url: str, op: str, size: int, paths: list[str], clients: int,
                kind: str = "http.client") -> dict:
    """``paths`` split among ``clients`` processes; wall time over all of them."""
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(clients), ctx.Queue()
    procs = [ctx.Process(target=_client, args=(url, op, size, paths[c::clients], barrier,
                                               results, kind)) for c in range(clients)]
    for p in procs:
        p.start()
    try:
        rows = [results.get(timeout=CLIENT_TIMEOUT * 10) for _ in procs]
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
                p.join()
    return rate(op, size, paths, rows)


def rate(op: str, size: int, paths: list[str], rows: list[tuple]) -> dict:
    """The clients' (start, end, bytes, error, CPU seconds) as one row: wall time from the
    first start to the last end."""
    errors = [r[3] for r in rows if r[3]]
    if errors:
        raise RuntimeError(f"{op} of {size} B files: {errors[0]}")
    wall = max(r[1] for r in rows) - min(r[0] for r in rows)
    moved = sum(r[2] for r in rows)
    if moved != size * len(paths):
        raise RuntimeError(f"{op}: moved {moved} bytes, expected {size * len(paths)}")
    return {"seconds": wall, "MB/s": moved / wall / 1e6, "files/s": len(paths) / wall,
            "client_cpu": sum(r[4] for r in rows)}


def bench_throughput(root: Path, sizes: dict[int, int], clients: list[int]) -> list[dict]:
    nn = start_namenode(root)
    admin = WebHdfs(nn.url)
    rows = []
    try:
        for size, count in sizes.items():
            for n in clients:
                base = f"/bench/s{size}/c{n}"
                admin.call("PUT", base, "MKDIRS")
                paths = [f"{base}/f{i:05d}" for i in range(count)]
                for op in ("write", "read"):
                    before = served(nn)
                    row = {"size": size, "files": count, "clients": n, "op": op,
                           **run_clients(nn.url, op, size, paths, n)}
                    # each client's connecting GETFILESTATUS is not part of the work
                    row["requests/file"] = (served(nn) - before - 1 - n) / count
                    print_throughput_row(row)
                    rows.append(row)
                admin.call("DELETE", base, "DELETE&recursive=true")   # frees the disk
    finally:
        admin.close()
        nn.stop()
    return rows


def size_text(size: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size // scale} {unit}"
    return f"{size} B"


def print_throughput_row(row: dict) -> None:
    print(f"  {size_text(row['size']):>7} x {row['files']:<5} {row['clients']} client(s) "
          f"{row['op']:<5}  {row['MB/s']:9.1f} MB/s  {row['files/s']:9.1f} files/s  "
          f"({row['seconds']:.2f} s, {row['requests/file']:.2f} requests/file)", flush=True)


# ============================================================================ Spark

def start_spark():
    """A local[2] session (no UI, 4 shuffle partitions, driver on loopback)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").appName("nnlite-bench-data")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.host", "127.0.0.1")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")   # stopping a running query logs noise
    return spark


def stop_spark(spark) -> None:
    """Stop the session, then the JVM: it exits when its stdin (our pipe) closes."""
    from pyspark import SparkContext
    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    try:
        spark.stop()
    finally:
        if gateway is not None:
            gateway.shutdown()
        if proc is not None:
            proc.stdin.close()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# ==================================================================== 2. one checkpoint file

CHECKPOINT_FILE_MANAGERS = (
    "org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager",  # Spark 4
    "org.apache.spark.sql.execution.streaming.CheckpointFileManager",                # Spark 3
)


def checkpoint_file_manager(spark, directory: str):
    """Spark's own manager for ``directory`` (the class Spark picks for its scheme)."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(directory)
    conf = jvm.org.apache.hadoop.conf.Configuration(spark._jsc.hadoopConfiguration())
    from py4j.protocol import Py4JJavaError
    for name in CHECKPOINT_FILE_MANAGERS:
        try:                                 # the Scala object (companion) of the trait
            companion = jvm.java.lang.Class.forName(name + "$").getField("MODULE$").get(None)
        except Py4JJavaError:                # moved in this Spark version: try the next name
            continue
        return path, companion.create(path, conf)
    raise RuntimeError(f"none of {CHECKPOINT_FILE_MANAGERS} in this Spark")


def write_checkpoint_file(jvm, manager, final) -> None:
    """As HDFSMetadataLog.add: skip if present, else write temp, close (which renames)."""
    if manager.exists(final):
        raise RuntimeError(f"{final} exists already")
    stream = manager.createAtomic(final, False)
    stream.write(bytearray(CHECKPOINT_PAYLOAD))
    stream.close()


CHECKPOINT_STEPS = ("exists(final)", "createAtomic (temp file created, upload begins)",
                    "write", "close (upload ends, then the rename)")


def checkpoint_steps(nn: NamenodeProcess, manager, final) -> dict[str, int]:
    """Requests of each step of one checkpoint file (the counter read between steps)."""
    marks = [served(nn)]
    exists = manager.exists(final)
    marks.append(served(nn))
    stream = manager.createAtomic(final, False)
    marks.append(served(nn))
    stream.write(bytearray(CHECKPOINT_PAYLOAD))
    marks.append(served(nn))
    stream.close()
    marks.append(served(nn))
    if exists:
        raise RuntimeError(f"{final} exists already")
    return {step: b - a - 1
            for step, (a, b) in zip(CHECKPOINT_STEPS, pairwise(marks), strict=True)}


def time_checkpoint_files(jvm, manager, directory, files: int, prefix: str = "") -> list[float]:
    """Seconds of each of ``files`` checkpoint files ``<prefix><n>`` written in turn."""
    out = []
    for i in range(files):
        final = jvm.org.apache.hadoop.fs.Path(directory, f"{prefix}{i}")
        start = time.perf_counter()
        write_checkpoint_file(jvm, manager, final)
        out.append(time.perf_counter() - start)
    return out


BREAKDOWN_FILES = 20          # files of each scheme written one at a time for the breakdown
SERVED = ("rpc ", "dt ", "http ")   # the timeline's events that are a call the server served


def bench_spark_file(spark, nn: NamenodeProcess, root: Path, files: int) -> dict:
    """Per scheme, after WARMUP_FILES files: the requests of each step of one file, then
    (with ``--probe``) BREAKDOWN_FILES files with the namenode's timeline read between them
    (``breakdown``) and the calls they made, from which the floor's count of serial syncs and
    round trips is taken (``Floor``). Then ``files`` rounds, each writing one file of every
    scheme and timing one floor of each of them, in an order rotating from round to round."""
    jvm = spark.sparkContext._jvm
    result: dict = {}
    managers = {}
    for scheme in SCHEMES:
        base = checkpoint_uri(scheme, nn, root, f"ckpt-files-{scheme}")
        directory, manager = checkpoint_file_manager(spark, base)
        manager.mkdirs(directory)
        managers[scheme] = directory, manager
        time_checkpoint_files(jvm, manager, directory, WARMUP_FILES, "warm-")   # JIT, caches
        row = result[scheme] = {"manager": manager.getClass().getName(), "files": files}
        if scheme == "file":
            continue
        row["steps"] = checkpoint_steps(nn, manager, jvm.org.apache.hadoop.fs.Path(
            directory, "steps"))
        before = calls(nn)
        row["breakdown"] = [breakdown(nn, jvm, manager, directory, f"split-{i}")
                            for i in range(BREAKDOWN_FILES)] if OPTIONS.probe else []
        if OPTIONS.probe:
            row["calls"] = calls_between(before, calls(nn))
            row["floor"] = Floor.of(row["calls"], BREAKDOWN_FILES, root)
    order = [*SCHEMES, *(f"floor {s}" for s in SCHEMES if "floor" in result[s])]
    seconds: dict[str, list[float]] = {k: [] for k in order}
    load = os.getloadavg()[0]
    for i in range(files):
        for kind in order[i % len(order):] + order[:i % len(order)]:
            if kind.startswith("floor "):
                seconds[kind].append(result[kind.removeprefix("floor ")]["floor"].time())
                continue
            directory, manager = managers[kind]
            final = jvm.org.apache.hadoop.fs.Path(directory, str(i))
            start = time.perf_counter()
            write_checkpoint_file(jvm, manager, final)
            seconds[kind].append(time.perf_counter() - start)
    for kind, values in seconds.items():
        row = result.setdefault(kind, {"files": files})
        row.update(ms_mean=statistics.fmean(values) * 1000,
                   ms_p50=statistics.median(values) * 1000,
                   ms_p90=quantiles(values)[1] * 1000)
    for floor in [k for k in order if k.startswith("floor ")]:
        result[floor.removeprefix("floor ")]["floor"].close()
    result["load"] = (load, os.getloadavg()[0])
    print_spark_file(result, order)
    return result


def breakdown(nn: NamenodeProcess, jvm, manager, directory, name: str) -> dict[str, float]:
    """One checkpoint file written between two reads of the namenode's timeline (the
    probe's): where its wall time went, in seconds. ``client``: the time no call was in the
    server (Spark's and Hadoop's code in the JVM, py4j, loopback); per call kind, its time
    in the server less the journal's syncs under it; ``journal sync``: the group commits'
    writes and fdatasyncs of the edits while a call waited; the block steps (``step ...``),
    and ``fsync``: every fsync of the datanode's (outside the journal)."""
    first = metrics(nn)
    final = jvm.org.apache.hadoop.fs.Path(directory, name)
    start = time.perf_counter()
    write_checkpoint_file(jvm, manager, final)
    wall = time.perf_counter() - start
    events = [e for e in metrics(nn)["BenchTimeline"] if e[1] >= first["BenchNow"]]
    start_nn = min((e[1] for e in events), default=0.0)
    served = [(s, e) for n, s, e in events if n.startswith(SERVED)]
    journal = [(s, e) for n, s, e in events if n == "journal sync"]
    out = {"wall": wall, "client": wall - union(served), "journal sync": 0.0,
           "timeline": [(n, s - start_nn, e - start_nn) for n, s, e in events
                        if n.startswith((*SERVED, "step ", "journal sync", "fsync", "fdatasync"))]}
    for n, s, e in events:
        if n.startswith(SERVED):
            under = overlap((s, e), journal)
            out["journal sync"] += under
            key = n.removeprefix("rpc ClientProtocol.")
            out[key] = out.get(key, 0.0) + (e - s) - under
        elif n.startswith("step ") or (n in ("fsync", "fdatasync")
                                       and not overlap((s, e), journal)):
            key = "datanode fsync" if n in ("fsync", "fdatasync") else n
            out[key] = out.get(key, 0.0) + e - s
    return out


def union(intervals: list[tuple[float, float]]) -> float:
    """The length of the union of ``intervals``."""
    total, end = 0.0, float("-inf")
    for s, e in sorted(intervals):
        if e > end:
            total += e - max(s, end)
            end = e
    return total


def overlap(span: tuple[float, float], intervals: list[tuple[float, float]]) -> float:
    """How much of ``span`` the ``intervals`` (disjoint) cover."""
    return sum(max(0.0, min(span[1], e) - max(span[0], s)) for s, e in intervals)


class Floor:
    """What a checkpoint file needs with nothing else (the issue's floor): ``syncs`` serial
    fdatasyncs of a 1.5 KB append to a file on the namenode's disk, then ``trips`` round trips
    of 100 bytes over loopback TCP (TCP_NODELAY) to an echo thread, the counts those of a
    file over the scheme (the probe's ``fsync serial``; its RPC calls and HTTP requests, its
    data-transfer ops and their packets' acks)."""

    def __init__(self, syncs: int, trips: int, root: Path) -> None:
        import socket
        self.syncs, self.trips = syncs, trips
        self.fd = os.open(root / f"floor-{id(self)}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                          0o644)
        self.server = socket.create_server(("127.0.0.1", 0))
        self.client = socket.create_connection(self.server.getsockname())
        self.peer, _ = self.server.accept()
        for sock in (self.client, self.peer):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.echo = threading.Thread(target=self._echo, daemon=True)
        self.echo.start()

    @classmethod
    def of(cls, served_calls: dict[str, float], files: int, root: Path) -> Floor:
        syncs = served_calls.get("fsync serial", 0) / files
        trips = sum(v for k, v in served_calls.items() if k in ("RpcCalls", "Requests",
                                                                "dt ack")
                    or (k.startswith("dt ") and not k.startswith("seconds "))) / files
        return cls(round(syncs), round(trips), root)

    def _echo(self) -> None:
        while data := self.peer.recv(4096):
            self.peer.sendall(data)

    def time(self) -> float:
        payload, record = b"x" * 100, b"r" * 1500
        start = time.perf_counter()
        for _ in range(self.syncs):
            os.write(self.fd, record)
            os.fdatasync(self.fd)
        for _ in range(self.trips):
            self.client.sendall(payload)
            got = 0
            while got < len(payload):
                got += len(self.client.recv(4096))
        return time.perf_counter() - start

    def close(self) -> None:
        self.client.close()
        self.echo.join(timeout=10)
        for sock in (self.peer, self.server):
            sock.close()
        os.close(self.fd)


def print_spark_file(result: dict, order: list[str]) -> None:
    load = result["load"]
    print(f"  (load {load[0]:.1f} -> {load[1]:.1f}; the kinds alternated file by file)")
    for kind in order:
        row = result[kind]
        name = row["manager"].rsplit(".", 1)[-1] if "manager" in row else (
            f"{result[kind.removeprefix('floor ')]['floor'].syncs} fdatasyncs + "
            f"{result[kind.removeprefix('floor ')]['floor'].trips} round trips")
        print(f"  {kind:<13} {name}: {row['ms_mean']:.2f} ms/file mean, {row['ms_p50']:.2f} "
              f"p50, {row['ms_p90']:.2f} p90", flush=True)
        for step, n in row.get("steps", {}).items():
            print(f"      {step}: {n} request(s)", flush=True)
        if "calls" in row:
            print("      " + calls_text(row["calls"], BREAKDOWN_FILES, "file"), flush=True)
        if row.get("breakdown"):
            print("      " + breakdown_text(row["breakdown"]), flush=True)
            typical = sorted(row["breakdown"], key=lambda f: f["wall"])[len(row["breakdown"]) // 2]
            print("      the median file's calls, ms from the first (start-end): " + ", ".join(
                f"{n.removeprefix('rpc ClientProtocol.')} {s * 1000:.2f}-{e * 1000:.2f}"
                for n, s, e in typical["timeline"]), flush=True)
    p50 = {k: result[k]["ms_p50"] for k in order}
    print(f"  p50 ratios: hdfs / webhdfs {ratio(p50['hdfs'], p50['webhdfs'])}, hdfs / file "
          f"{ratio(p50['hdfs'], p50['file'])}, webhdfs / file "
          f"{ratio(p50['webhdfs'], p50['file'])}"
          + "".join(f", {s} / its floor {ratio(p50[s], p50['floor ' + s])}"
                    for s in SCHEMES if f"floor {s}" in p50), flush=True)


def breakdown_text(files: list[dict[str, float]]) -> str:
    """Each part's median ms per file, biggest first (the medians need not add up)."""
    keys = {k for f in files for k in f} - {"wall", "timeline"}
    medians = {k: statistics.median(f.get(k, 0.0) for f in files) * 1000 for k in keys}
    wall = statistics.median(f["wall"] for f in files) * 1000
    return (f"breakdown, median ms of {len(files)} files ({wall:.2f} wall): " + ", ".join(
        f"{k} {v:.2f}" for k, v in sorted(medians.items(), key=lambda kv: -kv[1])))


# ============================================== 2b. one checkpoint file through Hadoop's FileSystem

JVM_FILES = REPO / "bench" / "CheckpointFiles.java"


def bench_jvm_files(nn: NamenodeProcess, root: Path, files: int, floor: tuple[int, int]) -> dict:
    """bench/CheckpointFiles.java in a JVM of its own on Hadoop's client jars (PySpark's):
    per round one file over hdfs://, one over webhdfs:// (``FileSystem.create``, write 1 KiB,
    close, ``rename``) and one floor of ``floor`` = (fdatasyncs, round trips), in an order
    rotating from round to round; p50, p90 and mean ms of each. Then each scheme's ``files``
    alone, with the CPU per file of the client's JVM and of the namenode."""
    import load as peer_load  # bench/peers/load.py: Hadoop's jars, the JVM's options
    classes = root / "jvm-classes"
    classes.mkdir(parents=True, exist_ok=True)
    jars = peer_load.hadoop_jars()
    if not jars:
        raise RuntimeError("Hadoop's client jars are not in PySpark's jars/")
    subprocess.run(["javac", "-nowarn", "-implicit:none", "-cp", ":".join(jars), "-d",
                    str(classes), str(JVM_FILES)], check=True)
    uris = [nn.hdfs, f"webhdfs://127.0.0.1:{nn.port}"]
    load, before = os.getloadavg()[0], calls(nn)
    proc = subprocess.Popen(["java", *peer_load.JVM_OPTIONS, "-cp",
                             ":".join([str(classes), *jars]), "CheckpointFiles", str(files),
                             "1024", str(WARMUP_FILES * 2), str(root), str(floor[0]),
                             str(floor[1]), *uris],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rows: dict = {}
    cpu: dict = {}
    after_timed = None
    nn_at = nn_cpu(nn)
    for line in proc.stdout:
        kind, *fields = line.split()
        if kind == "cpu-start":             # the files of one scheme alone begin
            after_timed = after_timed or calls(nn)
            nn_at = nn_cpu(nn)
        elif kind == "cpu":                 # ... and end: the JVM's CPU and the namenode's
            scheme, client_ms, wall_ms = fields[0], float(fields[1]), float(fields[2])
            cpu[scheme] = {"client_cpu_ms": client_ms, "wall_ms": wall_ms,
                           "nn_cpu_ms": (sum(nn_cpu(nn)) - sum(nn_at)) * 1000 / files}
        else:
            p50, p90, mean = (float(f) for f in fields)
            rows[kind] = {"ms_p50": p50, "ms_p90": p90, "ms_mean": mean}
    stderr = proc.stderr.read()
    if proc.wait(timeout=SPARK_WAIT):
        raise RuntimeError(f"CheckpointFiles exited with {proc.returncode}: {stderr[-3000:]}")
    print(f"  (load {load:.1f} -> {os.getloadavg()[0]:.1f}; {files} rounds, the kinds "
          f"alternated; floor: {floor[0]} fdatasyncs + {floor[1]} round trips)")
    for kind, row in rows.items():
        print(f"  {kind:<8} {row['ms_mean']:.2f} ms/file mean, {row['ms_p50']:.2f} p50, "
              f"{row['ms_p90']:.2f} p90")
    if OPTIONS.probe:
        print("  " + calls_text(calls_between(before, after_timed or calls(nn)),
                                files + WARMUP_FILES * 2,
                                "round (both schemes, warm-up included)"))
    # Each scheme's files alone: the CPU each process spends per file. The JVM's figure
    # counts all its threads, GC and JIT among them, so part of it may run beside the file's
    # calls rather than in their path; the probe's time in no server call is the strict bound.
    for scheme, c in cpu.items():
        print(f"  {scheme:<8} alone: {c['wall_ms']:.2f} ms/file mean; CPU per file: the "
              f"client's JVM {c['client_cpu_ms']:.2f} ms, the namenode's "
              f"{c['nn_cpu_ms']:.2f} ms")
        rows[scheme].update(c)
    if {"hdfs", "webhdfs"} <= cpu.keys():
        print(f"  hdfs:// client CPU per file / webhdfs:// mean time alone: "
              f"{ratio(cpu['hdfs']['client_cpu_ms'], cpu['webhdfs']['wall_ms'])}", flush=True)
    p50 = {k: r["ms_p50"] for k, r in rows.items()}
    print(f"  p50 ratios: hdfs / webhdfs {ratio(p50['hdfs'], p50['webhdfs'])}, hdfs / floor "
          f"{ratio(p50['hdfs'], p50['floor'])}", flush=True)
    return rows


# ============================================================================ 3. streaming

SCHEMES = ("file", "webhdfs", "hdfs")
FIGURES = ("walCommit", "commitOffsets", "stateCommit", "checkpoint", "triggerExecution")


def checkpoint_uri(scheme: str, nn: NamenodeProcess, root: Path, name: str) -> str:
    if scheme == "file":
        return (root / name).as_uri()
    if scheme == "webhdfs":
        return f"webhdfs://127.0.0.1:{nn.port}/bench/{name}"
    return f"{nn.hdfs}/bench/{name}"


def run_query(spark, checkpoint: str, name: str, batches: int) -> tuple[list[dict], int]:
    """``WARMUP_BATCHES + batches`` batches of the stateful query: the counted batches'
    ``durationMs`` with ``stateCommit`` (the state operators' ``commitTimeMs``, summed) and
    ``checkpoint`` (walCommit + commitOffsets + stateCommit), and how many batches ran."""
    from pyspark.sql import functions as F
    stream = (spark.readStream.format("rate-micro-batch")
              .option("rowsPerBatch", ROWS_PER_BATCH).option("numPartitions", 2).load())
    counts = stream.groupBy((F.col("value") % KEYS).alias("k")).count()
    query = (counts.writeStream.format("memory").queryName(name).outputMode("update")
             .option("checkpointLocation", checkpoint).start())
    wanted = WARMUP_BATCHES + batches
    deadline = time.monotonic() + SPARK_WAIT
    try:
        while time.monotonic() < deadline and query.isActive:
            done = [p for p in query.recentProgress if p["numInputRows"] > 0]
            if len(done) >= wanted:
                break
            time.sleep(0.2)
    finally:
        query.stop()
    if query.exception() is not None:
        raise RuntimeError(f"{name}: {query.exception()}")
    progress = query.recentProgress
    done = sorted((p for p in progress if p["numInputRows"] > 0), key=lambda p: p["batchId"])
    if len(done) < wanted:
        raise RuntimeError(f"{name}: only {len(done)} batches in {SPARK_WAIT} s")
    figures = []
    for p in done[WARMUP_BATCHES:wanted]:
        d = dict(p["durationMs"])
        d["stateCommit"] = sum(op.get("commitTimeMs", 0) for op in p["stateOperators"])
        d["checkpoint"] = d.get("walCommit", 0) + d.get("commitOffsets", 0) + d["stateCommit"]
        figures.append(d)
    return figures, len({p["batchId"] for p in progress})


def bench_streaming(spark, nn: NamenodeProcess, root: Path, batches: int, rounds: int,
                    schemes: list[str], stores: list[str]) -> dict:
    """For each state store, one discarded query per scheme first (class loading, JIT, the
    scheme's client), then ``rounds`` rounds, each running every scheme in an order that
    rotates from round to round. The namenode's calls are counted per query (its start, the
    warm-up batches and its stop included)."""
    out: dict = {}
    for store in stores:
        with spark_conf(spark, STORES[store]):
            for scheme in schemes:
                run_query(spark, checkpoint_uri(scheme, nn, root, f"warm-{store}-{scheme}"),
                          f"bench_warm_{store}_{scheme}", 1)
            runs: dict[str, list[dict]] = {s: [] for s in schemes}
            served_calls: dict[str, dict[str, int]] = {s: {} for s in schemes}
            ran = dict.fromkeys(schemes, 0)
            for r in range(rounds):
                turn = r % len(schemes)
                for scheme in schemes[turn:] + schemes[:turn]:
                    before, load = calls(nn), os.getloadavg()[0]
                    figures, n = run_query(spark, checkpoint_uri(
                        scheme, nn, root, f"stream-{store}-{r}-{scheme}"),
                        f"bench_{store}_{scheme}_{r}", batches)
                    for k, v in calls_between(before, calls(nn)).items():
                        served_calls[scheme][k] = served_calls[scheme].get(k, 0) + v
                    runs[scheme] += figures
                    ran[scheme] += n
                    print(f"  {store:<7} round {r} {scheme:<8} median checkpoint "
                          f"{statistics.median(f['checkpoint'] for f in figures):6.0f} ms, "
                          f"batch {statistics.median(f['triggerExecution'] for f in figures):6.0f}"
                          f" ms (load {load:.1f} -> {os.getloadavg()[0]:.1f})", flush=True)
            out[store] = {scheme: {**summarise(runs[scheme]), "calls": served_calls[scheme],
                                   "ran": ran[scheme]} for scheme in schemes}
    return out


def quantiles(values) -> tuple[float, float]:
    """(median, p90: the value at rank round(0.9 (n - 1)) of the sorted values)."""
    ordered = sorted(values)
    return statistics.median(ordered), ordered[round(0.9 * (len(ordered) - 1))]


def summarise(figures: list[dict]) -> dict:
    out: dict = {"batches": len(figures),
                 "mean triggerExecution": statistics.fmean(f["triggerExecution"]
                                                           for f in figures)}
    for key in FIGURES:
        out[key] = quantiles(f.get(key, 0) for f in figures)
    return out


def print_streaming(summary: dict) -> None:
    for store, by_scheme in summary.items():
        print(f"  state store {store}: median / p90 ms over "
              f"{next(iter(by_scheme.values()))['batches']} batches per scheme")
        print("  scheme   " + "".join(f"{k:>18}" for k in FIGURES))
        for scheme, s in by_scheme.items():
            print(f"  {scheme:<8} " + "".join(f"{s[k][0]:>11.0f} / {s[k][1]:<4.0f}"
                                              for k in FIGURES))
        for scheme in by_scheme:
            if scheme != "hdfs" and "hdfs" in by_scheme:
                ratios = ", ".join(f"{k} {ratio(by_scheme['hdfs'][k][0], by_scheme[scheme][k][0])}"
                                   for k in FIGURES)
                print(f"  hdfs / {scheme} (medians): {ratios}")
        for scheme, s in by_scheme.items():
            if scheme != "file":
                print(f"  {scheme} calls " + calls_text(s["calls"], s["ran"], "batch"),
                      flush=True)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


# ======================================================= 4. hdfs:// against webhdfs://, 64 MiB

SCHEME_CLIENTS = ("hdfs", "webhdfs", "hdfs-native")


def _jvm_client(spark, uri: str, op: str, source: Path, paths: list[str], barrier,
                rows: list) -> None:
    """One client thread of the JVM: a FileSystem instance of its own (its own connections)
    as USER. A file is one py4j call, the bytes never leaving the JVM: Hadoop's
    ``IOUtils.copyBytes`` with a 1 MiB buffer from ``source`` (a local file of random bytes,
    in the page cache) into ``create``, or from ``open`` into a null stream."""
    jvm = spark.sparkContext._jvm
    size = source.stat().st_size
    fs = None
    try:
        conf = jvm.org.apache.hadoop.conf.Configuration(spark._jsc.hadoopConfiguration())
        fs = jvm.org.apache.hadoop.fs.FileSystem.newInstance(jvm.java.net.URI(uri), conf, USER)
        copy = jvm.org.apache.hadoop.io.IOUtils.copyBytes
        fs.getFileStatus(jvm.org.apache.hadoop.fs.Path("/"))     # connect before the clock
        barrier.wait(timeout=CLIENT_TIMEOUT)
        start, moved = time.perf_counter(), 0
        for path in paths:
            where = jvm.org.apache.hadoop.fs.Path(path)
            if op == "write":
                copy(jvm.java.io.FileInputStream(str(source)), fs.create(where, True),
                     READ_CHUNK, True)
            else:
                stream = fs.open(where)
                copy(stream, jvm.java.io.OutputStream.nullOutputStream(), READ_CHUNK, False)
                if stream.getPos() != size:
                    raise RuntimeError(f"{path}: read {stream.getPos()} B, not {size}")
                stream.close()
            moved += size
        rows.append((start, time.perf_counter(), moved, None, 0.0))
    except Exception as exc:                            # reported by the caller
        barrier.abort()
        rows.append((0.0, 0.0, 0, f"{type(exc).__name__}: {exc}", 0.0))
    finally:
        if fs is not None:
            fs.close()


def run_jvm_clients(spark, uri: str, op: str, source: Path, paths: list[str],
                    clients: int) -> dict:
    """``paths`` split among ``clients`` threads of Spark's JVM; its CPU is the clients'."""
    barrier, rows = threading.Barrier(clients), []
    threads = [threading.Thread(target=_jvm_client, args=(spark, uri, op, source,
                                                          paths[c::clients], barrier, rows))
               for c in range(clients)]
    jvm_pid = spark.sparkContext._gateway.proc.pid
    cpu = sum(cpu_split(jvm_pid))
    for t in threads:
        t.start()
    for t in threads:
        t.join(CLIENT_TIMEOUT * 10)
    return {**rate(op, source.stat().st_size, paths, rows),
            "client_cpu": sum(cpu_split(jvm_pid)) - cpu}


def bench_schemes(spark, nn: NamenodeProcess, root: Path, size: int, files: int,
                  clients: list[int], rounds: int,
                  kinds: tuple[str, ...] = SCHEME_CLIENTS) -> list[dict]:
    """``files`` files of ``size`` bytes written, then read, by each client kind in turn
    (the order rotating from row to row) on one namenode; the namenode's CPU (its
    built-in datanode included), its calls and the load average around each row."""
    admin = WebHdfs(nn.url)
    source = root / "source"
    source.write_bytes(os.urandom(size))
    uris = {"hdfs": nn.hdfs, "webhdfs": f"webhdfs://127.0.0.1:{nn.port}",
            "hdfs-native": nn.hdfs}
    rows, turn = [], 0
    try:
        for kind in kinds:               # untimed: class loading, JIT, each client's set-up
            warm = [f"/bench/warm-{kind}"]
            for op in ("write", "read"):
                (run_clients(uris[kind], op, size, warm, 1, kind) if kind == "hdfs-native"
                 else run_jvm_clients(spark, uris[kind], op, source, warm, 1))
        for r in range(rounds):
            for n in clients:
                at = turn % len(kinds)
                turn += 1
                for kind in kinds[at:] + kinds[:at]:
                    base = f"/bench/{kind}/r{r}c{n}"
                    admin.call("PUT", base, "MKDIRS")
                    paths = [f"{base}/f{i:03d}" for i in range(files)]
                    for op in ("write", "read"):
                        before, cpu, load = calls(nn), nn_cpu(nn), os.getloadavg()[0]
                        row = (run_clients(uris[kind], op, size, paths, n, kind)
                               if kind == "hdfs-native" else
                               run_jvm_clients(spark, uris[kind], op, source, paths, n))
                        mb = size * files / 1e6
                        user, system = (b - a for a, b in zip(cpu, nn_cpu(nn), strict=True))
                        row.update(round=r, client=kind, op=op, clients=n, size=size,
                                   files=files, load=(load, os.getloadavg()[0]),
                                   nn_ms_per_MB=(user + system) * 1000 / mb,
                                   nn_user_ms_per_MB=user * 1000 / mb,
                                   client_ms_per_MB=row["client_cpu"] * 1000 / mb,
                                   calls=calls_between(before, calls(nn)))
                        print_scheme_row(row)
                        rows.append(row)
                    admin.call("DELETE", base, "DELETE&recursive=true")   # frees the disk
    finally:
        admin.close()
    return rows


def print_scheme_row(row: dict) -> None:
    c = row["calls"]
    served_calls = (f"{c.get('RpcCalls', 0) / row['files']:.1f} RPC calls, "
                    f"{c.get('Requests', 0) / row['files']:.1f} HTTP requests per file")
    print(f"  r{row['round']} {row['client']:<11} {row['op']:<5} {row['clients']} client(s) "
          f"{row['MB/s']:7.1f} MB/s  namenode {row['nn_ms_per_MB']:5.2f} ms CPU/MB ("
          f"{row['nn_user_ms_per_MB']:.2f} user)  client "
          f"{row['client_ms_per_MB']:5.2f}  {served_calls}  load {row['load'][0]:.1f} -> "
          f"{row['load'][1]:.1f}", flush=True)
    if any(k.startswith(("rpc ", "http ")) for k in c):
        print("      " + calls_text(c, row["files"], "file"), flush=True)


def summarise_schemes(rows: list[dict]) -> None:
    """Median MB/s and namenode CPU per MB of each (op, clients, client) over the rounds."""
    print("  op     clients  client       MB/s (median, all)        namenode ms CPU/MB")
    keys = sorted({(r["op"], r["clients"], r["client"]) for r in rows},
                  key=lambda k: (k[0] != "write", k[1], SCHEME_CLIENTS.index(k[2])))
    for op, n, kind in keys:
        mine = [r for r in rows if (r["op"], r["clients"], r["client"]) == (op, n, kind)]
        rates = [r["MB/s"] for r in mine]
        cpus = [r["nn_ms_per_MB"] for r in mine]
        print(f"  {op:<6} {n:>7}  {kind:<11} {statistics.median(rates):7.1f} "
              f"({', '.join(f'{x:.0f}' for x in rates):<16}) {statistics.median(cpus):6.2f} "
              f"({', '.join(f'{x:.2f}' for x in cpus)})", flush=True)


# ============================================================================ main

def parse_sizes(text: str) -> dict[int, int]:
    """``4096:1000,1048576:100`` -> {size: files}."""
    return {int(s): int(n) for s, n in (item.split(":") for item in text.split(","))}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", nargs="?", default="all",
                    choices=("all", "throughput", "spark-file", "jvm-files", "streaming",
                             "schemes"))
    ap.add_argument("--clients", default="1,2,4", help="concurrent clients, comma-separated")
    ap.add_argument("--files", default="4096:2000,1048576:200,67108864:16",
                    help="size:count pairs for the throughput run")
    ap.add_argument("--spark-files", type=int, default=100)
    ap.add_argument("--jvm-files", type=int, default=150)
    ap.add_argument("--floor", default="6:7",
                    help="jvm-files: the floor's fdatasyncs:round trips (those of a file over "
                         "hdfs://, from spark-file --probe's counts, less its exists call)")
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--schemes", default=",".join(SCHEMES),
                    help="streaming: where the checkpoint goes")
    ap.add_argument("--stores", default="hdfs,rocksdb",
                    help=f"streaming: state stores, of {', '.join(STORES)}")
    ap.add_argument("--scheme-files", default="67108864:8",
                    help="schemes: size:count of the files each row writes and reads")
    ap.add_argument("--scheme-clients", default="1,2", help="schemes: concurrent clients")
    ap.add_argument("--kinds", default=",".join(SCHEME_CLIENTS),
                    help="schemes: the clients, of " + ", ".join(SCHEME_CLIENTS))
    ap.add_argument("--nn-rev", default=None,
                    help="run the namenode of this git revision (exported from this "
                         "repository), e.g. HEAD while others edit the tree")
    ap.add_argument("--probe", action="store_true",
                    help="count the namenode's calls by method (bench/data_probe.py)")
    ap.add_argument("--profile", type=Path, default=None, metavar="DIR",
                    help="the namenode under cProfile, every thread (with --probe's counts); "
                         "its stats go to DIR when it stops")
    args = ap.parse_args(argv)
    OPTIONS.nn_rev, OPTIONS.probe = args.nn_rev, args.probe
    OPTIONS.profile = args.profile.resolve() if args.profile else None
    root = Path(tempfile.mkdtemp(prefix="nnlite-bench-", dir=os.environ.get("BENCH_DIR")))
    rev = peers.servers.git_describe(REPO, args.nn_rev)
    print(f"# bench_data {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, load average "
          f"{os.getloadavg()[0]:.1f}, namenode at {rev}, work dir {root}", flush=True)
    try:
        if args.what in ("all", "throughput"):
            print("## CREATE+write+close and OPEN over WebHDFS", flush=True)
            bench_throughput(root / "tp", parse_sizes(args.files),
                             [int(c) for c in args.clients.split(",")])
        if args.what in ("all", "spark-file", "streaming", "schemes"):
            run_spark(args, root)
        if args.what == "jvm-files":
            print("## One checkpoint file through Hadoop's FileSystem in a JVM", flush=True)
            nn = start_namenode(root / "jvm")
            try:
                syncs, trips = (int(n) for n in args.floor.split(":"))
                bench_jvm_files(nn, root, args.jvm_files, (syncs, trips))
            finally:
                nn.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"# done, load average {os.getloadavg()[0]:.1f}", flush=True)


def run_spark(args, root: Path) -> None:
    nn = start_namenode(root / "spark")
    spark = None
    try:
        spark = start_spark()
        if args.what in ("all", "spark-file"):
            print("## One Spark atomic checkpoint file", flush=True)
            bench_spark_file(spark, nn, root, args.spark_files)
        if args.what in ("all", "streaming"):
            schemes = args.schemes.split(",")
            print(f"## Stateful micro-batches, checkpoint on {', '.join(schemes)} "
                  f"({args.batches} batches x {args.rounds} rounds each)", flush=True)
            print_streaming(bench_streaming(spark, nn, root, args.batches, args.rounds,
                                            schemes, args.stores.split(",")))
        if args.what in ("all", "schemes"):
            ((size, files),) = parse_sizes(args.scheme_files).items()
            clients = [int(c) for c in args.scheme_clients.split(",")]
            print(f"## {size_text(size)} files over hdfs:// (DistributedFileSystem, "
                  f"hdfs-native) and webhdfs:// (WebHdfsFileSystem), one namenode", flush=True)
            summarise_schemes(bench_schemes(spark, nn, root, size, files, clients,
                                            args.rounds, tuple(args.kinds.split(","))))
    finally:
        try:
            if spark is not None:
                stop_spark(spark)
        finally:
            nn.stop()


if __name__ == "__main__":
    main()
