"""Benchmark of the catalog's ``ls`` and ``validate``: synthetic and real Spark checkpoints.

Without a subcommand, ``ls`` of many synthetic streaming checkpoints and ``validate`` of each;
``state-files``, ``validate`` of one real Spark checkpoint's state files with and without
their ``.crc`` sidecars.

    python bench/bench_catalog.py [--checkpoints 1000] [--batches 200] [--partitions 2]
                                  [--snapshot-every 10] [--runs 3] [--workdir DIR]
    python bench/bench_catalog.py state-files [--batches 40] [--partitions 24]
                                  [--rows 2000] [--keys 20000] [--maintenance 5]
                                  [--runs 5] [--workdir DIR]

Without a subcommand:

1. A name dir is formatted and an image installed holding ``--checkpoints`` Structured
   Streaming checkpoints of ``--batches`` committed batches each, laid out as Spark 4 leaves
   them: ``metadata``, ``offsets/N``, ``commits/N``, ``sources/0/N``, and for one stateful
   operator ``state/0/<p>/<N+1>.delta`` per partition plus a ``.snapshot`` every
   ``--snapshot-every`` versions. Files are built with the namenode's own request code
   (``create_complete``). Their contents are real Spark log lines, stored once per kind in the
   block store and shared by every file of that kind (a million block files would measure
   the disk, not the catalog); every log file is still read block by block by ``validate``.
2. A namenode process starts on it (``nnlite namenode``, catalog installed).
3. ``ls`` of the root over HTTP, ``--runs`` times (the median and every run are printed),
   then ``validate`` of every checkpoint, one request each. The namenode's /metrics.json
   says how many requests it served and how many log files the catalog read for each.

The build is cached in the workdir by its parameters.

``state-files``: what ``validate`` costs per RocksDB checkpoint format version 2 state file.

1. A namenode process starts on a fresh name dir under ``--workdir`` (loopback).
2. Real Spark (PySpark, local[2], UI off) runs the conformance matrix's aggregation
   (tests/catalog/conformance.py) into it over webhdfs:// on the ``rocksdb-v2`` store:
   RocksDB, changelog checkpointing, ``checkpointFormatVersion=2`` (file checksums on, its
   default), ``--partitions`` shuffle partitions, ``--batches`` micro-batches of ``--rows``
   rows over ``--keys`` keys. Each batch leaves a ``<v>_<id>.changelog`` per partition and
   every tenth version a snapshot ``<v>_<id>.zip`` (uploaded by the maintenance Spark runs
   every ``--maintenance`` seconds), each with its ``.crc`` sidecar. Spark is stopped before
   anything is timed.
3. ``validate`` of the checkpoint over HTTP, ``--runs`` times (median and every run): each
   state file is checked against its sidecar by a CRC32C composed from the block store's
   chunk CRCs (catalog/checksums.py). The namenode's /metrics.json gives the files the
   catalog read; /proc/<pid>/io's ``rchar`` the bytes the namenode process read.
4. Every state file's ``.crc`` is deleted and ``validate`` timed again: each state file is
   now read whole and decoded (``changelog.verify``, ``snapshot_zip.verify``).
5. Printed: per state file, the ms of each way (the median validate over the number of
   state files), their count and bytes, what was read, and the load average around it.

One run each; the machine is shared.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nnlite.client.webhdfs import WebHdfsClient  # noqa: E402
from nnlite.namenode.blocks.store import BlockStore, default_data_dir  # noqa: E402
from nnlite.namenode.fsnamesystem import format_dirs  # noqa: E402
from nnlite.namenode.image import columns, install  # noqa: E402
from nnlite.namenode.namespace.namespace import Namespace  # noqa: E402
from nnlite.namenode.namespace.permission import Caller  # noqa: E402
from nnlite.namenode.storage.namedir import NameDir  # noqa: E402
from tests.catalog.builder import commit_bytes, offsets_bytes  # noqa: E402
from tests.catalog.conformance import (  # noqa: E402
    OPERATORS,
    STORES,
    UNIQUE_STATE_FILE,
    Query,
    spark_conf,
)
from tests.servers import TEST_USERS, NamenodeProcess  # noqa: E402

SUPER = Caller("bench", frozenset({"supergroup"}), superuser=True)
NOW = 1_700_000_000_000
USER = "bench"
CONTENTS = {
    "metadata": b'{"id":"3f1c58a4-1111-4c4d-9b5e-5d1f2a7b9e01"}',
    "offsets": offsets_bytes(7),
    "commit": commit_bytes(),
    "source": b'v1\n{"path":"file:///data/in/part-7.json","timestamp":1700000000000,"batchId":7}',
    "delta": bytes(range(256)) * 2,
    "snapshot": bytes(range(256)) * 8,
}


def write_blocks(data_dir: Path, namespace_id: int) -> dict[str, tuple]:
    """One published block per kind of content; its block tuple."""
    store = BlockStore.open(data_dir, namespace_id)
    try:
        out = {}
        for kind, data in CONTENTS.items():
            writer = store.writer(128 << 20)
            writer.write(data)
            out[kind] = writer.seal().blocks
            writer.close()
        return out
    finally:
        store.close()


def build(ns: Namespace, shared: dict, checkpoints: int, batches: int, partitions: int,
          snapshot_every: int) -> int:
    def put(path: str, kind: str) -> None:
        ns.create_complete(path, SUPER, blocks=shared[kind], length=len(CONTENTS[kind]),
                           checksum=b"", client_name="bench")

    files = 0
    for q in range(checkpoints):
        base = f"/ckpt/q{q:04d}"
        put(f"{base}/metadata", "metadata")
        for b in range(batches):
            put(f"{base}/offsets/{b}", "offsets")
            put(f"{base}/sources/0/{b}", "source")
            for p in range(partitions):
                put(f"{base}/state/0/{p}/{b + 1}.delta", "delta")
                if snapshot_every and (b + 1) % snapshot_every == 0:
                    put(f"{base}/state/0/{p}/{b + 1}.snapshot", "snapshot")
            put(f"{base}/commits/{b}", "commit")
        files = ns.tree.files
        if q % 50 == 49:
            print(f"  built {q + 1}/{checkpoints} checkpoints, {files:,} files", flush=True)
    return files


def prepare(work: Path, args) -> Path:
    key = f"c{args.checkpoints}-b{args.batches}-p{args.partitions}-s{args.snapshot_every}"
    name = work / key / "name"
    if (name / "current" / "fsimage").exists():
        print(f"reusing the name dir built before: {name}")
        return name
    name.parent.mkdir(parents=True, exist_ok=True)
    d = NameDir(name)
    namespace_id = format_dirs([d])
    shared = write_blocks(default_data_dir(name), namespace_id)
    ns = Namespace(clock=lambda: NOW)
    ns.tree.root.owner = USER
    start = time.perf_counter()
    files = build(ns, shared, args.checkpoints, args.batches, args.partitions,
                  args.snapshot_every)
    built = time.perf_counter()
    info = install.install([d], lambda p: columns.save(ns.tree, p, namespace_id, 1))
    print(f"built {files:,} files and {ns.tree.dirs:,} directories in {built - start:.1f} s; "
          f"image {info.size / 1e6:.1f} MB saved in {time.perf_counter() - built:.1f} s")
    return name


def call(conn: http.client.HTTPConnection, target: str) -> dict:
    conn.request("GET", target)
    resp = conn.getresponse()
    body = resp.read()
    if resp.status != 200:
        raise RuntimeError(f"{target}: HTTP {resp.status}: {body[:300]!r}")
    return json.loads(body)


def metrics(conn) -> dict:
    return call(conn, "/metrics.json")


def measure(server: NamenodeProcess, args) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
    ls_times = []
    for _ in range(args.runs):
        before = metrics(conn)
        start = time.perf_counter()
        rows = call(conn, f"/catalog/v1/ckpt?op=LS&user.name={USER}")["Checkpoints"]
        ls_times.append(time.perf_counter() - start)
        after = metrics(conn)
    assert len(rows) == args.checkpoints and all(r["health"] == "ok" for r in rows), rows[:2]
    print(f"ls of {len(rows)} checkpoints: median {statistics.median(ls_times):.3f} s "
          f"(runs: {', '.join(f'{t:.3f}' for t in ls_times)}); HTTP requests: 1; "
          f"log files read: {after['CatalogFilesRead'] - before['CatalogFilesRead']}")

    before = metrics(conn)
    start = time.perf_counter()
    restorable = 0
    for row in rows:
        report = call(conn, f"/catalog/v1{row['path']}?op=VALIDATE&user.name={USER}")
        restorable += report["Validation"]["restorable"]
    took = time.perf_counter() - start
    after = metrics(conn)
    read = after["CatalogFilesRead"] - before["CatalogFilesRead"]
    print(f"validate of {len(rows)} checkpoints, one request each: {took:.2f} s "
          f"({took / len(rows) * 1000:.1f} ms per checkpoint); restorable: {restorable}; "
          f"HTTP requests: {after['Requests'] - before['Requests'] - 1}; "
          f"log files read: {read} ({read // len(rows)} per checkpoint)")
    conn.close()


# ------------------------------------------------------------------ state-files

STATE_STORE = "rocksdb-v2"      # RocksDB, changelogs, checkpoint format version 2, sidecars
TESTER = "tester"               # in the supergroup (TEST_USERS)
# how often Spark's maintenance uploads the snapshots (60 s by default: few in a short run)
MAINTENANCE = "spark.sql.streaming.stateStore.maintenanceInterval"


def write_input(src: Path, batches: int, rows: int, keys: int) -> None:
    """One JSON file per micro-batch: ``rows`` rows over ``keys`` keys, each file's mtime one
    second after the last (the file source takes the oldest first)."""
    src.mkdir(parents=True)
    for b in range(batches):
        path = src / f"{b:04d}.json"
        path.write_text("".join(json.dumps({"key": f"k{(b * rows + j) % keys}", "value": j})
                                + "\n" for j in range(rows)))
        os.utime(path, (1_000_000 + b, 1_000_000 + b))


def run_spark(server: NamenodeProcess, src: Path, base: str, args) -> None:
    """The aggregation into ``webhdfs://<namenode><base>`` on STATE_STORE; Spark stopped
    after."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").appName("nnlite-bench-state-files")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", str(args.partitions))
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.host", "127.0.0.1").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        with spark_conf(spark, {**STORES[STATE_STORE], MAINTENANCE: f"{args.maintenance}s"}):
            query = Query(spark, OPERATORS["aggregation"], src,
                          f"webhdfs://127.0.0.1:{server.port}{base}")
            query.run()
        assert len(query.batches) == args.batches, sorted(query.batches)
    finally:
        spark.stop()


def state_files(hdfs: WebHdfsClient, directory: str) -> dict[str, int]:
    """Every ``<v>_<id>.changelog|.zip`` under ``directory``: path -> length."""
    out = {}
    for entry in hdfs.list(directory):
        where = f"{directory}/{entry['pathSuffix']}"
        if entry["type"] == "DIRECTORY":
            out.update(state_files(hdfs, where))
        elif UNIQUE_STATE_FILE.fullmatch(entry["pathSuffix"]):
            out[where] = entry["length"]
    return out


def process_read(pid: int) -> int:
    """The bytes process ``pid`` has read (``rchar``: every read call, page cache or not)."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise RuntimeError(f"no rchar in /proc/{pid}/io")


def time_validate(server: NamenodeProcess, base: str, runs: int) -> dict:
    """``validate`` of ``base``, ``runs`` times: the seconds of each, the catalog's files
    read and the namenode's bytes read (the last run's), and its answer."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
    took = []
    for _ in range(runs):
        before, read_before = metrics(conn), process_read(server.proc.pid)
        start = time.perf_counter()
        answer = call(conn, f"/catalog/v1{base}?op=VALIDATE&user.name={TESTER}")["Validation"]
        took.append(time.perf_counter() - start)
        read = process_read(server.proc.pid) - read_before
        after = metrics(conn)
    conn.close()
    return {"runs": took, "median": statistics.median(took), "bytes": read, "answer": answer,
            "files": after["CatalogFilesRead"] - before["CatalogFilesRead"]}


def report(label: str, got: dict, count: int) -> None:
    answer = got["answer"]
    print(f"validate {label}: median {got['median'] * 1000:.0f} ms = "
          f"{got['median'] * 1000 / count:.2f} ms per state file (runs: "
          f"{', '.join(f'{t * 1000:.0f}' for t in got['runs'])} ms); catalog files read "
          f"{got['files']:,}; namenode bytes read {got['bytes']:,}; restorable "
          f"{answer['restorable']}, last batch {answer['lastBatch']}, issues "
          f"{[i['code'] for i in answer['issues']]}", flush=True)


def load_average() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def measure_state_files(args) -> None:
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    load = load_average()
    with tempfile.TemporaryDirectory(dir=work, prefix="state-files-") as tmp:
        server = NamenodeProcess.start([f"{tmp}/name"], "-D", "nnlite.catalog.quiet=0", "-D",
                                       f"hadoop.user.group.static.mapping.overrides={TEST_USERS}")
        try:
            base = "/bench/state-files"
            write_input(Path(tmp) / "in", args.batches, args.rows, args.keys)
            start = time.perf_counter()
            run_spark(server, Path(tmp) / "in", base, args)
            with WebHdfsClient(server.url, TESTER) as hdfs:
                files = state_files(hdfs, f"{base}/state")
                sidecars = [f"{f}.crc" for f in files if hdfs.exists(f"{f}.crc")]
                zips = sum(f.endswith(".zip") for f in files)
                print(f"Spark: {args.batches} batches x {args.partitions} partitions in "
                      f"{time.perf_counter() - start:.0f} s; {len(files)} state files "
                      f"({len(files) - zips} changelogs, {zips} zips), "
                      f"{sum(files.values()):,} bytes, {len(sidecars)} with a .crc",
                      flush=True)
                print(f"load average before validate: {load_average()}", flush=True)
                composed = time_validate(server, base, args.runs)
                report("with the sidecars (CRC32C composed)", composed, len(files))
                for sidecar in sidecars:
                    hdfs.delete(sidecar)
                decoded = time_validate(server, base, args.runs)
                report("without them (read and decoded)", decoded, len(files))
        finally:
            server.stop()
    print(f"per state file: {composed['median'] * 1000 / len(files):.2f} ms with its .crc "
          f"(composed), {decoded['median'] * 1000 / len(files):.2f} ms without (read and "
          f"decoded); {len(files)} state files, {sum(files.values()):,} bytes")
    print(f"load average (1/5/15 min): {load} at the start, {load_average()} at the end; "
          f"{os.cpu_count()} CPUs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoints", type=int, default=1000)
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--snapshot-every", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workdir", default="/tmp/nnlite-bench-catalog")
    modes = parser.add_subparsers(dest="mode")
    spark = modes.add_parser("state-files", help="validate of one real Spark checkpoint's "
                             "state files, with and without their .crc sidecars "
                             "(its options after it)")
    spark.add_argument("--batches", type=int, default=40, help="micro-batches Spark runs")
    spark.add_argument("--partitions", type=int, default=24, help="shuffle partitions")
    spark.add_argument("--rows", type=int, default=2000, help="input rows per batch")
    spark.add_argument("--keys", type=int, default=20000, help="distinct keys")
    spark.add_argument("--maintenance", type=int, default=5,
                       help="seconds between Spark's state store maintenance runs")
    spark.add_argument("--runs", type=int, default=5)
    spark.add_argument("--workdir", default=os.environ.get("TMPDIR", "/tmp"))
    args = parser.parse_args()
    if args.mode == "state-files":
        measure_state_files(args)
        return
    name = prepare(Path(args.workdir), args)
    start = time.perf_counter()
    server = NamenodeProcess.start([str(name)], "-D", f"nnlite.superuser={USER}",
                                   "-D", "nnlite.catalog.quiet=0", timeout=600)
    print(f"namenode up in {time.perf_counter() - start:.1f} s (image load)")
    try:
        measure(server, args)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
