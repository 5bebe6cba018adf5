"""Benchmarks of the core store (issue 2). Prints a table; see BENCHMARKS.md for figures.

    python bench/bench_core.py writes [--ops 60000] [--callers 1,8,32]
    python bench/bench_core.py replay [--ops 1000000]
    python bench/bench_core.py image [--inodes 1000000]
    python bench/bench_core.py gc [--inodes 1000000]
    python bench/bench_core.py blocks [--inodes 1000000]
    python bench/bench_core.py all

Every figure comes from one run on this machine; compare ratios within one run.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nnlite.formats import edits  # noqa: E402
from nnlite.namenode.blocks.sweep import ReferencedBlocks, referenced  # noqa: E402
from nnlite.namenode.fsnamesystem import FSNamesystem, format_dirs  # noqa: E402
from nnlite.namenode.image import columns, startup  # noqa: E402
from nnlite.namenode.namespace import leases  # noqa: E402
from nnlite.namenode.namespace.inode import walk  # noqa: E402
from nnlite.namenode.namespace.tree import Tree  # noqa: E402
from nnlite.namenode.storage.namedir import NameDir  # noqa: E402


def workdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="nnlite-bench-", dir=os.environ.get("BENCH_DIR")))


# ----------------------------------------------------------------------------- writes

def lease_table(fs, held: int) -> None:
    """As the daemon does, let a lease table follow every applied op; ``held`` leases on
    files elsewhere stand for uploads under way (-1: no table, as before leases followed)."""
    if held < 0:
        return
    manager = leases.LeaseManager()
    for i in range(held):
        manager.acquire(f"/uploads/f{i}", leases.CREATE)
    fs.on_applied.append(manager.follow)


def run_writes(kind: str, callers: int, ops: int, held: int = 0) -> dict:
    """``ops`` durable mkdirs (or creates) from ``callers`` threads in one process."""
    tmp = workdir()
    try:
        format_dirs([NameDir(tmp / "name")])
        fs = FSNamesystem.open([str(tmp / "name")])
        lease_table(fs, held)
        user = fs.identity.superuser
        for c in range(callers):
            fs.durable(fs.mkdirs(f"/bench/c{c}", 0o755, user))
        per = ops // callers
        syncs0 = fs.metrics()["Syncs"]
        barrier = threading.Barrier(callers + 1)

        def work(c: int) -> None:
            # each op acknowledged before the next: applied and logged, then synced
            barrier.wait()
            if kind == "mkdir":
                for i in range(per):
                    fs.durable(fs.mkdirs(f"/bench/c{c}/d{i}", 0o755, user))
            else:
                for i in range(per):
                    fs.durable(fs.create(f"/bench/c{c}/f{i}", user))

        threads = [threading.Thread(target=work, args=(c,)) for c in range(callers)]
        for t in threads:
            t.start()
        barrier.wait()
        start = time.perf_counter()
        for t in threads:
            t.join()
        took = time.perf_counter() - start
        syncs = fs.metrics()["Syncs"] - syncs0
        fs.close()
        done = per * callers
        return {"op": kind, "callers": callers, "ops": done, "seconds": took,
                "ops/s": done / took, "fsyncs/s": syncs / took, "ops/fsync": done / syncs}
    finally:
        shutil.rmtree(tmp)


def run_async_writes(kind: str, callers: int, ops: int, held: int = 0) -> dict:
    """The same load from ``callers`` callers on one event loop, each driven as the server
    drives a connection (the server's model)."""
    import asyncio
    tmp = workdir()
    try:
        format_dirs([NameDir(tmp / "name")])
        fs = FSNamesystem.open([str(tmp / "name")])
        lease_table(fs, held)
        user = fs.identity.superuser
        for c in range(callers):
            fs.durable(fs.mkdirs(f"/bench/c{c}", 0o755, user))
        per = ops // callers

        def start(committer, c: int, finished: asyncio.Future, left: list) -> None:
            # as a WebHDFS connection drives a write: apply and log, then the next op when the
            # committer releases this one (Durable.then), with no coroutine or future per op
            durable = committer.durable
            if kind == "mkdir":
                def request(i): return fs.mkdirs(f"/bench/c{c}/d{i}", 0o755, user)
            else:
                def request(i): return fs.create(f"/bench/c{c}/f{i}", user)

            def step(_value, error, i: int) -> None:
                if error is not None:
                    if not finished.done():
                        finished.set_exception(error)
                elif i < per:
                    durable(request(i).txid).then(step, i + 1)
                else:
                    left[0] -= 1
                    if left[0] == 0:
                        finished.set_result(None)
            step(None, None, 0)

        async def run() -> float:
            committer = fs.async_committer()
            finished = asyncio.get_running_loop().create_future()
            start_time = time.perf_counter()
            left = [callers]
            for c in range(callers):
                start(committer, c, finished, left)
            await finished
            took = time.perf_counter() - start_time
            committer.close()
            return took

        syncs0 = fs.metrics()["Syncs"]
        took = asyncio.run(run())
        syncs = fs.metrics()["Syncs"] - syncs0
        fs.close()
        done = per * callers
        return {"op": kind, "callers": callers, "ops": done, "seconds": took,
                "ops/s": done / took, "fsyncs/s": syncs / took, "ops/fsync": done / syncs}
    finally:
        shutil.rmtree(tmp)


def bench_writes(args) -> None:
    print(f"{'op':6} {'callers':>14} {'ops':>7} {'ops/s':>9} {'fsyncs/s':>9} {'ops/fsync':>9}")
    for kind in ("mkdir", "create"):
        for mode, runner in (("threads", run_writes), ("loop callers", run_async_writes)):
            for callers in args.callers:
                r = runner(kind, callers, args.ops, args.leases)
                who = f"{callers} {mode}"
                print(f"{r['op']:6} {who:>14} {r['ops']:7} {r['ops/s']:9.0f} "
                      f"{r['fsyncs/s']:9.0f} {r['ops/fsync']:9.1f}", flush=True)


# ----------------------------------------------------------------------------- replay

def write_log(path: Path, ops: int) -> None:
    """A log of ``ops`` records shaped like a real workload: mkdirs, creates, renames,
    set-times, deletes in a few thousand directories."""
    writer = edits.EditsWriter.create(str(path), 1)
    buf = bytearray(edits.encode_record(1, edits.StartLogSegmentOp()))
    txid, inode = 1, 16386
    now = 1_700_000_000_000
    dirs = 0
    while txid < ops:
        d = f"/data/dir{dirs}"
        batch = [edits.MkdirOp(d, inode, 0o755, "spark", "hadoop", now)]
        inode += 2 if dirs == 0 else 1
        for j in range(48):
            batch.append(edits.AddFileOp(f"{d}/part-{j:05d}", inode, 3, 134217728, 0, 0o644,
                                     "spark", "hadoop", now, now, False, "", ""))
            inode += 1
        batch.append(edits.RenameOp(f"{d}/part-00000", f"{d}/_SUCCESS", now, False))
        batch.append(edits.SetTimesOp(f"{d}/part-00001", now + 1, now + 1))
        batch.append(edits.DeleteOp(f"{d}/part-00002", now))
        for op in batch:
            if txid >= ops:
                break
            txid += 1
            buf += edits.encode_record(txid, op)
        dirs += 1
        if len(buf) > 1 << 22:
            writer.write(buf)
            buf = bytearray()
    writer.write(buf)
    writer.fsync()
    writer.close()


def bench_replay(args) -> None:
    tmp = workdir()
    try:
        path = tmp / "edits"
        write_log(path, args.ops)
        size = path.stat().st_size
        tree = Tree()
        start, cpu = time.perf_counter(), time.process_time()
        gc.disable()  # as namenode.image.startup.load does around image load and replay
        reader, count = startup.replay(tree, str(path), 0, 1)
        gc.enable()
        took, cpu = time.perf_counter() - start, time.process_time() - cpu
        # CPU time too: on a shared machine the wall time includes waiting for a core.
        print(f"replay: {count} ops ({size / 1e6:.1f} MB) in {took:.2f} s = "
              f"{count / took:,.0f} ops/s (CPU {cpu:.2f} s = {count / cpu:,.0f} ops/CPU-s); "
              f"{tree.files + tree.dirs} inodes")
    finally:
        shutil.rmtree(tmp)


# ----------------------------------------------------------------------------- image

def build_namespace(inodes: int, unique_names: bool = False) -> Tree:
    """``inodes`` inodes: directories of 100 files each, as a Spark output tree looks
    (``part-00000`` ... in every directory), or with every file name distinct."""
    ns = Tree(mtime=1_700_000_000_000)
    inode = 16386
    d = 0
    total = 1
    while total < inodes:
        path = f"/warehouse/t{d // 100}/p{d}"
        ns.apply(edits.MkdirOp(path, inode, 0o755, "spark", "hadoop", 1_700_000_000_000 + d))
        created = 3 if d == 0 else (2 if d % 100 == 0 else 1)
        inode += created
        total += created
        for j in range(min(100, inodes - total)):
            name = f"part-{inode:09d}" if unique_names else f"part-{j:05d}"
            ns.apply(edits.AddFileOp(f"{path}/{name}", inode, 3, 134217728, 4096 * j,
                                 0o644, "spark", "hadoop", 1_700_000_000_000 + inode,
                                 1_700_000_000_000 + inode, False, "", ""))
            inode += 1
            total += 1
        d += 1
    return ns


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def bench_image(args) -> None:
    tmp = workdir()
    try:
        ns = build_namespace(args.inodes, args.unique_names)
        n = ns.files + ns.dirs
        path = tmp / "fsimage"
        start = time.perf_counter()
        info = columns.save(ns, str(path), 1, 1)
        save_s = time.perf_counter() - start
        del ns
        gc.collect()
        print(f"image: {n} inodes, {info.size / 1e6:.1f} MB; save {save_s:.2f} s", flush=True)
        # Load in a fresh process so its resident memory is not mixed with the build above.
        out = subprocess.run([sys.executable, __file__, "_load", str(path), info.md5_hex],
                             capture_output=True, text=True, check=True).stdout
        print(out, end="")
    finally:
        shutil.rmtree(tmp)


def load_child(path: str, md5: str) -> None:
    import pyarrow as pa
    gc.collect()
    before = rss_bytes()
    start = time.perf_counter()
    gc.disable()  # as namenode.image.startup.load does around image load and replay
    ns, meta = columns.load(path, md5)
    gc.enable()
    took = time.perf_counter() - start
    gc.collect()
    pool = pa.default_memory_pool()
    pool.release_unused()
    after = rss_bytes()
    n = ns.files + ns.dirs
    print(f"load {took:.2f} s ({n / took:,.0f} inodes/s); resident memory of the loaded "
          f"namespace: {(after - before) / n:.0f} bytes/inode (RSS after load and gc, minus "
          f"RSS before, with Arrow's pool released: {pool.bytes_allocated()} bytes still held)")


def bench_gc(args) -> None:
    """What a full cyclic collection costs with the namespace loaded, before and after the
    namenode's ``gc.freeze()``, and that a deleted subtree of the frozen tree is still freed."""
    gc.disable()
    ns = build_namespace(args.inodes)
    gc.enable()
    tracked = len(gc.get_objects())
    start = time.perf_counter()
    gc.collect()
    before = time.perf_counter() - start
    gc.freeze()
    start = time.perf_counter()
    gc.collect()
    after = time.perf_counter() - start
    print(f"{args.inodes:,} inodes, {tracked:,} objects tracked: a full collection takes "
          f"{before:.3f} s; after gc.freeze() {after * 1000:.2f} ms "
          f"({gc.get_freeze_count():,} objects frozen)")
    victim = max(ns.root.children.values(), key=lambda d: len(d.children) if d.is_dir else 0)
    count = sum(1 for _ in walk(victim))
    rss = rss_bytes()
    ns.apply(edits.DeleteOp(victim.path(), 1_700_000_000_000))
    del victim
    freed = rss - rss_bytes()
    print(f"deleting {count:,} frozen inodes gave back {freed / 2**20:.1f} MiB of RSS "
          "(freed by reference counting: the delete cuts the subtree's parent links)")


def bench_blocks(args) -> None:
    """The referenced block set the HA active's resync asks for every 5 s: a walk of the
    namespace against ``ReferencedBlocks`` (built once), with nothing changed and after a close."""
    ns = build_namespace(args.inodes)
    for i, node in enumerate(n for n in walk(ns.root) if not n.is_dir):
        node.blocks = ((i + 1, 4096, 1001),)
    runs = 5
    start = time.perf_counter()
    for _ in range(runs):
        walked = referenced(ns)
    walk_s = (time.perf_counter() - start) / runs
    kept = ReferencedBlocks()
    kept.of(ns)
    start = time.perf_counter()
    for _ in range(runs):
        same = kept.of(ns)
    kept_s = (time.perf_counter() - start) / runs
    assert same == walked
    path = next(n for n in walk(ns.root) if not n.is_dir).path()
    node = ns.get(path)
    ns.apply(edits.AppendOp(path, node.id, "c", "h"))
    ns.apply(edits.CloseFileOp(path, node.id, 4096, 1, 1, [(len(walked) + 1, 4096, 1001)],
                               b""))
    start = time.perf_counter()
    after = kept.of(ns)
    changed_s = time.perf_counter() - start
    assert after == referenced(ns)
    print(f"{args.inodes:,} inodes, {len(walked):,} blocks: a walk {walk_s * 1000:.0f} ms, "
          f"the kept set {kept_s * 1e6:.1f} µs with nothing changed, "
          f"{changed_s * 1000:.0f} ms after a close (the live set copied)")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_load":
        return load_child(sys.argv[2], sys.argv[3])
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=["writes", "replay", "image", "gc", "blocks", "all"])
    parser.add_argument("--ops", type=int, default=None)
    parser.add_argument("--leases", type=int, default=0,
                        help="writes: leases held while they run (-1: no lease table)")
    parser.add_argument("--callers", type=lambda s: [int(x) for x in s.split(",")],
                        default=[1, 8, 32])
    parser.add_argument("--inodes", type=int, default=1_000_000)
    parser.add_argument("--unique-names", action="store_true",
                        help="image: every file name distinct (no name sharing)")
    args = parser.parse_args()
    print(f"# python {sys.version.split()[0]}, {os.cpu_count()} cpus, "
          f"{time.strftime('%Y-%m-%d %H:%M:%S')}")
    if args.what in ("writes", "all"):
        args.ops = args.ops or 60_000
        bench_writes(args)
        args.ops = None
    if args.what in ("replay", "all"):
        args.ops = args.ops or 1_000_000
        bench_replay(args)
    if args.what in ("image", "all"):
        bench_image(args)
    if args.what in ("gc", "all"):
        bench_gc(args)
    if args.what in ("blocks", "all"):
        bench_blocks(args)


if __name__ == "__main__":
    main()
