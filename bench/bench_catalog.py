"""Benchmark of the catalog over many streaming checkpoints: ``ls`` of all, ``validate`` of each.

    python bench/bench_catalog.py [--checkpoints 1000] [--batches 200] [--partitions 2]
                                  [--snapshot-every 10] [--runs 3] [--workdir DIR]

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

The build is cached in the workdir by its parameters. One run; the machine is shared.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nnlite.namenode.blocks.store import BlockStore, default_data_dir  # noqa: E402
from nnlite.namenode.fsnamesystem import format_dirs  # noqa: E402
from nnlite.namenode.image import columns, install  # noqa: E402
from nnlite.namenode.namespace.namespace import Namespace  # noqa: E402
from nnlite.namenode.namespace.permission import Caller  # noqa: E402
from nnlite.namenode.storage.namedir import NameDir  # noqa: E402
from tests.catalog.builder import commit_bytes, offsets_bytes  # noqa: E402
from tests.servers import NamenodeProcess  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoints", type=int, default=1000)
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--snapshot-every", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workdir", default="/tmp/nnlite-bench-catalog")
    args = parser.parse_args()
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
