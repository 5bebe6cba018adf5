"""Benchmarks of the data path and of Spark checkpoints in nnlite (issue 5).

    python bench/bench_data.py [all|throughput|spark-file|streaming]
        [--clients 1,2,4] [--files 4096:2000,1048576:200,67108864:16]
        [--spark-files 100] [--batches 20] [--rounds 2]

Every server and JVM it starts is stopped when it ends (normally, on an error, on Ctrl-C).
Every loop is bounded (a count, and a deadline where it waits on Spark).

1. **throughput**: a namenode process (``nnlite namenode`` on 127.0.0.1, a free port, a fresh
   name dir and its data dir under ``$BENCH_DIR`` or /tmp). For each file size and each number
   of concurrent clients, the clients (separate processes, one kept-alive ``http.client``
   connection each) CREATE+write+close the files, then OPEN and read them all back, both
   through the WebHDFS 307 flow (step 1 at ``/webhdfs/v1``, step 2 at the Location). The same
   total number of files is split among the clients. MB/s and files/s are over the wall time
   from the moment every client is ready to the moment the last one finishes.
2. **spark-file**: one Spark atomic checkpoint file, written as Spark's streaming metadata logs
   write it: ``exists(final)``, then Spark's own ``CheckpointFileManager.createAtomic``
   (FileContext-based for both schemes: create ``.<name>.<uuid>.tmp``, write, and at close
   rename it with ``Rename.NONE``). Measured on webhdfs:// (HTTP requests the namenode
   served, from its ``/metrics.json`` Requests counter, uploads included, and ms per file) and
   on file:// (ms per file). After WARMUP_FILES files, one file is written with the counter
   read between its steps, so every step's round trips are known; the timed files are not
   interrupted. The throughput run checks the counter too: 2 requests per CREATE and OPEN.
3. **streaming**: the same stateful query (``rate-micro-batch`` source, a ``groupBy`` count,
   memory sink, update mode, local[2], shuffle partitions 4) runs ``--batches`` batches after
   WARMUP_BATCHES, with its checkpointLocation on file:// and on webhdfs://, alternating for
   ``--rounds`` rounds in one JVM. Reports the mean ``triggerExecution`` of a batch (Spark's
   own progress figures), the parts that write the checkpoint (``walCommit``,
   ``commitOffsets``), and the webhdfs:// / file:// ratio.

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
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

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

def start_namenode(root: Path) -> NamenodeProcess:
    """A formatted name dir under ``root``; the namenode on 127.0.0.1, a free port."""
    return NamenodeProcess.start([str(root / "name")], *USERS)


def served(nn: NamenodeProcess) -> int:
    """The namenode's Requests counter, this read included: the requests made between two
    reads ``a`` and ``b`` are ``b - a - 1``."""
    with urllib.request.urlopen(nn.url + "/metrics.json", timeout=30) as resp:
        return json.load(resp)["Requests"]


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

    def close(self) -> None:
        for conn in self.conns.values():
            conn.close()


# ============================================================================ 1. throughput

def _client(url: str, op: str, size: int, paths: list[str], barrier, results) -> None:
    """One client process: ``op`` ("write" or "read") every path, after the barrier."""
    client = WebHdfs(url)
    data = os.urandom(size) if op == "write" else b""
    buf = bytearray(READ_CHUNK)
    try:
        client.call("GET", "/", "GETFILESTATUS")        # connect before the clock starts
        barrier.wait(timeout=CLIENT_TIMEOUT)
        start, moved = time.perf_counter(), 0
        for path in paths:
            if op == "write":
                client.create(path, data)
                moved += size
            else:
                moved += client.read(path, buf)
        results.put((start, time.perf_counter(), moved, None))
    except Exception as exc:                            # reported by the parent
        results.put((0.0, 0.0, 0, f"{type(exc).__name__}: {exc}"))
    finally:
        client.close()


def run_clients(url: str, op: str, size: int, paths: list[str], clients: int) -> dict:
    """``paths`` split among ``clients`` processes; wall time over all of them."""
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(clients), ctx.Queue()
    procs = [ctx.Process(target=_client, args=(url, op, size, paths[c::clients], barrier,
                                               results)) for c in range(clients)]
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
    errors = [r[3] for r in rows if r[3]]
    if errors:
        raise RuntimeError(f"{op} of {size} B files: {errors[0]}")
    wall = max(r[1] for r in rows) - min(r[0] for r in rows)
    moved = sum(r[2] for r in rows)
    if moved != size * len(paths):
        raise RuntimeError(f"{op}: moved {moved} bytes, expected {size * len(paths)}")
    return {"seconds": wall, "MB/s": moved / wall / 1e6, "files/s": len(paths) / wall}


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
    return {step: b - a - 1 for step, a, b in zip(CHECKPOINT_STEPS, marks, marks[1:])}


def time_checkpoint_files(jvm, manager, directory, files: int, prefix: str = "") -> list[float]:
    """Seconds of each of ``files`` checkpoint files ``<prefix><n>`` written in turn."""
    out = []
    for i in range(files):
        final = jvm.org.apache.hadoop.fs.Path(directory, f"{prefix}{i}")
        start = time.perf_counter()
        write_checkpoint_file(jvm, manager, final)
        out.append(time.perf_counter() - start)
    return out


def bench_spark_file(spark, nn: NamenodeProcess, root: Path, files: int) -> dict:
    jvm = spark.sparkContext._jvm
    result = {}
    for scheme, base in (("webhdfs", f"webhdfs://127.0.0.1:{nn.port}/bench/ckpt-files"),
                         ("file", (root / "ckpt-files").as_uri())):
        directory, manager = checkpoint_file_manager(spark, base)
        manager.mkdirs(directory)
        row = {"manager": manager.getClass().getName()}
        time_checkpoint_files(jvm, manager, directory, WARMUP_FILES, "warm-")   # JIT, caches
        if scheme == "webhdfs":
            row["steps"] = checkpoint_steps(nn, manager, jvm.org.apache.hadoop.fs.Path(
                directory, "steps"))
            before = served(nn)
        seconds = time_checkpoint_files(jvm, manager, directory, files)
        if scheme == "webhdfs":
            row["requests/file"] = (served(nn) - before - 1) / files
        row.update(ms_mean=statistics.fmean(seconds) * 1000,
                   ms_p50=statistics.median(seconds) * 1000,
                   ms_p90=sorted(seconds)[int(len(seconds) * 0.9)] * 1000)
        result[scheme] = row
        print_spark_file_row(scheme, row)
    return result


def print_spark_file_row(scheme: str, row: dict) -> None:
    print(f"  {scheme:<8} {row['manager'].rsplit('.', 1)[-1]}: "
          f"{row['ms_mean']:.2f} ms/file mean, {row['ms_p50']:.2f} p50, {row['ms_p90']:.2f} p90"
          + (f", {row['requests/file']:.2f} requests/file" if "requests/file" in row else ""),
          flush=True)
    for step, n in row.get("steps", {}).items():
        print(f"      {step}: {n} request(s)", flush=True)


# ============================================================================ 3. streaming

def run_query(spark, checkpoint: str, name: str, batches: int) -> list[dict]:
    """``WARMUP_BATCHES + batches`` batches of the stateful query; the counted batches'
    ``durationMs``."""
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
    done = sorted((p for p in query.recentProgress if p["numInputRows"] > 0),
                  key=lambda p: p["batchId"])
    if len(done) < wanted:
        raise RuntimeError(f"{name}: only {len(done)} batches in {SPARK_WAIT} s")
    return [dict(p["durationMs"]) for p in done[WARMUP_BATCHES:wanted]]


def bench_streaming(spark, nn: NamenodeProcess, root: Path, batches: int, rounds: int) -> dict:
    """Rounds alternate which scheme goes first, after one discarded query that warms the JVM
    (the first query of a session pays for class loading and JIT compilation)."""
    run_query(spark, (root / "stream-warmup").as_uri(), "bench_warmup", WARMUP_BATCHES)
    runs: dict[str, list[dict]] = {"file": [], "webhdfs": []}
    requests = 0
    for r in range(rounds):
        for scheme in ("file", "webhdfs") if r % 2 == 0 else ("webhdfs", "file"):
            loc = ((root / f"stream-{r}").as_uri() if scheme == "file"
                   else f"webhdfs://127.0.0.1:{nn.port}/bench/stream-{r}")
            before = served(nn)
            durations = run_query(spark, loc, f"bench_{scheme}_{r}", batches)
            if scheme == "webhdfs":
                requests += served(nn) - before - 1
            runs[scheme] += durations
            print(f"  round {r} {scheme:<8} mean batch "
                  f"{statistics.fmean(d['triggerExecution'] for d in durations):7.1f} ms",
                  flush=True)
    summary = {scheme: summarise(ds) for scheme, ds in runs.items()}
    summary["ratio"] = summary["webhdfs"]["triggerExecution"] / summary["file"]["triggerExecution"]
    summary["requests/batch"] = requests / (rounds * (batches + WARMUP_BATCHES))
    return summary


def summarise(durations: list[dict]) -> dict:
    keys = ("triggerExecution", "walCommit", "commitOffsets", "addBatch")
    out = {k: statistics.fmean(d.get(k, 0) for d in durations) for k in keys}
    out["p50"] = statistics.median(d["triggerExecution"] for d in durations)
    out["batches"] = len(durations)
    return out


def print_streaming(summary: dict) -> None:
    print("  scheme    batches  mean ms  p50 ms  walCommit  commitOffsets  addBatch")
    for scheme in ("file", "webhdfs"):
        s = summary[scheme]
        print(f"  {scheme:<8} {s['batches']:>8} {s['triggerExecution']:8.1f} {s['p50']:7.1f} "
              f"{s['walCommit']:10.1f} {s['commitOffsets']:14.1f} {s['addBatch']:9.1f}")
    print(f"  webhdfs / file: {summary['ratio']:.2f}x; namenode requests per batch (warm-up "
          f"batches and query start/stop included): {summary['requests/batch']:.1f}",
          flush=True)


# ============================================================================ main

def parse_sizes(text: str) -> dict[int, int]:
    """``4096:1000,1048576:100`` -> {size: files}."""
    return {int(s): int(n) for s, n in (item.split(":") for item in text.split(","))}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", nargs="?", default="all",
                    choices=("all", "throughput", "spark-file", "streaming"))
    ap.add_argument("--clients", default="1,2,4", help="concurrent clients, comma-separated")
    ap.add_argument("--files", default="4096:2000,1048576:200,67108864:16",
                    help="size:count pairs for the throughput run")
    ap.add_argument("--spark-files", type=int, default=100)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="nnlite-bench-", dir=os.environ.get("BENCH_DIR")))
    print(f"# bench_data {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, load average "
          f"{os.getloadavg()[0]:.1f}, work dir {root}", flush=True)
    try:
        if args.what in ("all", "throughput"):
            print("## CREATE+write+close and OPEN over WebHDFS", flush=True)
            bench_throughput(root / "tp", parse_sizes(args.files),
                             [int(c) for c in args.clients.split(",")])
        if args.what in ("all", "spark-file", "streaming"):
            run_spark(args, root)
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
            print(f"## Stateful micro-batches, checkpoint on file:// vs webhdfs:// "
                  f"({args.batches} batches x {args.rounds} rounds each)", flush=True)
            print_streaming(bench_streaming(spark, nn, root, args.batches, args.rounds))
    finally:
        try:
            if spark is not None:
                stop_spark(spark)
        finally:
            nn.stop()


if __name__ == "__main__":
    main()
