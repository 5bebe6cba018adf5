"""What a snapshot costs (issue 15): taking one of a directory of N inodes, then changing it.

    python bench/bench_snapshot.py [--inodes 1000000] [--changes 100000]

One directory holds ``--inodes`` files. Measured in one process, each figure beside the same
work without a snapshot:
* taking the snapshot: wall time and the bytes it allocates (tracemalloc);
* ``--changes`` changes of distinct files after it (set_times, then delete), per change,
  and the bytes the snapshot's copies and kept inodes add;
* reading a changed file through ``.snapshot``, a listing of the snapshot's directory, the
  diff report, deleting the snapshot (which releases what only it kept), an image save.
Prints a table; the load average is beside it (compare ratios within one run).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nnlite.formats import edits  # noqa: E402
from nnlite.namenode.image import columns  # noqa: E402
from nnlite.namenode.namespace import attributes, delete, snapshot_ops  # noqa: E402
from nnlite.namenode.namespace.namespace import Namespace  # noqa: E402
from nnlite.namenode.namespace.permission import Caller  # noqa: E402

SUPER = Caller("hdfs", frozenset({"supergroup"}), superuser=True)


def build(inodes: int) -> Namespace:
    ns = Namespace(clock=lambda: 1_700_000_000_000)
    ns.mkdirs("/big", 0o755, SUPER)
    first = ns.tree.last_inode_id + 1
    apply = ns.tree.appliers[int(edits.OpCode.ADD_FILE)]
    for i in range(inodes):
        apply((4, 0, f"/big/f{i:07d}", first + i, 1, 134217728, 10, 0o644, "spark", "spark",
               1, 1, False, "", ""))
    return ns


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def allocated(fn):
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    fn()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return after - before


def changes(ns: Namespace, count: int, stride: int) -> float:
    start = time.perf_counter()
    for i in range(0, count * stride, stride):
        attributes.set_times(ns, f"/big/f{i:07d}", 5, 5, SUPER)
    for i in range(0, count * stride, stride):
        delete.delete(ns, f"/big/f{i:07d}", False, SUPER)
    return (time.perf_counter() - start) / (2 * count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inodes", type=int, default=1_000_000)
    parser.add_argument("--changes", type=int, default=100_000)
    args = parser.parse_args()
    stride = max(1, args.inodes // args.changes)
    rows = []
    load = os.getloadavg()

    t, plain = timed(lambda: build(args.inodes))
    rows.append(("build the directory (no snapshot)", f"{t:.1f} s", ""))
    t, summary = timed(lambda p=plain: p.content_summary("/big", SUPER))
    rows.append(("content summary, no snapshot", f"{t:.2f} s",
                 f"{summary['fileCount']:,} files"))
    per_plain = changes(plain, args.changes, stride)
    del plain
    gc.collect()

    ns = build(args.inodes)
    snapshot_ops.allow_snapshot(ns, "/big", SUPER)
    t, _ = timed(lambda: snapshot_ops.create_snapshot(ns, "/big", "s0", SUPER))
    rows.append((f"take a snapshot of {args.inodes:,} inodes", f"{t * 1e6:.0f} us", ""))
    snapshot_ops.delete_snapshot(ns, "/big", "s0", SUPER)
    taken = allocated(lambda: snapshot_ops.create_snapshot(ns, "/big", "s1", SUPER))
    rows.append(("  bytes it allocates", f"{taken:,} B", "the tree is not copied"))

    per = changes(ns, args.changes, stride)
    rows.append((f"{2 * args.changes:,} changes after it (set_times, delete)",
                 f"{per * 1e6:.1f} us/change", f"{per_plain * 1e6:.1f} us without a snapshot"))
    kept_bytes = _diff_bytes(ns)
    rows.append(("  what the snapshot then holds", f"{kept_bytes / 1e6:.1f} MB",
                 f"{kept_bytes / (2 * args.changes):.0f} B per change (copies, kept inodes)"))

    t, summary = timed(lambda: ns.content_summary("/big", SUPER))
    rows.append(("content summary with what the snapshot keeps", f"{t:.2f} s",
                 f"{summary['fileCount']:,} files, {summary['snapshotFileCount']:,} kept"))
    name = f"/big/.snapshot/s1/f{0:07d}"
    t, node = timed(lambda: ns.readable_file(name, SUPER))
    rows.append(("read a deleted file through .snapshot", f"{t * 1e6:.0f} us",
                 f"length {node.length}"))
    t, listed = timed(lambda: len(ns.status("/big/.snapshot/s1", SUPER).children))
    rows.append(("list the snapshot's directory", f"{t:.2f} s", f"{listed:,} entries"))
    t, report = timed(lambda: snapshot_ops.snapshot_diff(ns, "/big", "s1", "", SUPER))
    rows.append(("diff report snapshot -> now", f"{t:.2f} s", f"{len(report):,} entries"))
    with tempfile.TemporaryDirectory() as tmp:
        t, info = timed(lambda: columns.save(ns.tree, os.path.join(tmp, "fsimage"), 1, 1))
        rows.append(("save the image with the snapshot", f"{t:.1f} s",
                     f"{info.size / 1e6:.1f} MB"))
    t, _ = timed(lambda: snapshot_ops.delete_snapshot(ns, "/big", "s1", SUPER))
    rows.append(("delete the snapshot", f"{t * 1e3:.0f} ms",
                 f"{len(ns.tree.snapshots.diffs)} diffs left"))

    width = max(len(r[0]) for r in rows)
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    for what, figure, note in rows:
        print(f"{what:<{width}}  {figure:>16}  {note}")


def _diff_bytes(ns: Namespace) -> int:
    """The bytes of what the registry holds: the diff objects, copies, name sets and the
    inodes only the snapshot keeps (counted once)."""
    seen, total = set(), 0
    snapshots = ns.tree.snapshots
    stack = [snapshots.diffs, snapshots.pinned, snapshots.arrived]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or obj is ns.tree.root:
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set)):
            stack.extend(obj)
        elif hasattr(obj, "__slots__"):
            for cls in type(obj).__mro__:
                for slot in getattr(cls, "__slots__", ()):
                    if slot in ("parent", "node"):     # the live tree's, not the diff's
                        continue
                    value = getattr(obj, slot, None)
                    if value is not None and not isinstance(value, (int, str, bool)):
                        stack.append(value)
    return total


if __name__ == "__main__":
    main()
