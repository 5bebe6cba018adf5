"""sweep.py: block files no file refers to, held by no upload and past their grace, are
removed; a block a snapshot still shows is kept until the snapshot goes."""

from __future__ import annotations

import os

from nnlite.formats import edits
from nnlite.namenode.blocks.sweep import OpenWrites, ReferencedBlocks, Sweeper, referenced
from nnlite.namenode.namespace import delete, rename, snapshot_ops
from tests.namenode.blocks.helpers import written
from tests.namenode.helpers import SUPER, apply_ops, new_ns, write_file


def test_the_sweep_removes_only_old_unreferenced_unheld_blocks(store):
    ns = new_ns()
    kept = written(store, b"referenced", 1024).blocks
    orphan = written(store, b"orphan", 1024).blocks
    held = written(store, b"held", 1024).blocks
    young = written(store, b"young", 1024).blocks
    ns.tree.apply(edits.AddFileOp("/f", ns.tree.last_inode_id + 1, 1, 1024, 0, 0o644, "u", "g",
                                  1, 1, False, "c", ""))
    ns.tree.apply(edits.CloseFileOp("/f", ns.tree.last_inode_id, 10, 1, 1, kept, b""))
    store.hold(held[0][0])
    for block in kept + orphan + held:
        for path in (store.data_path(block[0]), store.meta_path(block[0])):
            os.utime(path, (1, 1))
    sweeper = Sweeper(lambda: referenced(ns.tree), store, grace=60)
    assert sweeper.sweep() == [orphan[0][0]]
    assert not store.data_path(orphan[0][0]).exists()
    for block in kept + held + young:
        assert store.data_path(block[0]).exists() and store.meta_path(block[0]).exists()
    assert sweeper.sweep() == []


def test_a_block_only_a_snapshot_keeps_stays_until_the_snapshot_goes(store):
    """Deleted, truncated or overwritten after a snapshot: the old blocks stay swept-proof
    while a snapshot refers to them, and go once the last such snapshot is deleted."""
    ns = new_ns()
    blocks = written(store, b"snapshotted content", 1024).blocks
    ns.mkdirs("/s", 0o755, SUPER)
    ns.tree.apply(edits.AddFileOp("/s/f", ns.tree.last_inode_id + 1, 1, 1024, 0, 0o644, "u", "g",
                                  1, 1, False, "c", ""))
    ns.tree.apply(edits.CloseFileOp("/s/f", ns.tree.last_inode_id, 19, 1, 1, blocks, b""))
    snapshot_ops.allow_snapshot(ns, "/s", SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "one", SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "two", SUPER)
    delete.delete(ns, "/s/f", False, SUPER)
    for block in blocks:
        for path in (store.data_path(block[0]), store.meta_path(block[0])):
            os.utime(path, (1, 1))
    sweeper = Sweeper(lambda: referenced(ns.tree), store, grace=60)
    assert sweeper.sweep() == []
    snapshot_ops.delete_snapshot(ns, "/s", "one", SUPER)
    assert sweeper.sweep() == []                     # "two" still shows the file
    snapshot_ops.delete_snapshot(ns, "/s", "two", SUPER)
    assert sweeper.sweep() == [b[0] for b in blocks]


def test_a_standby_keeps_what_arrived_since_the_oldest_open_write_began(store):
    """A block a standby received through the active's pipeline is no file's until its
    close op arrives: kept, whatever its age, while a write it could belong to is open."""
    ns = new_ns()
    before = written(store, b"before the write", 1024).blocks[0][0]
    piped = written(store, b"through the pipeline", 1024).blocks[0][0]
    aged(store, before, 100)
    aged(store, piped, 160)
    now = [200.0]
    open_files = [("/f", 7, "DFSClient_1")]
    following = [True]
    writes = OpenWrites(lambda: list(open_files), lambda: following[0], slack=50,
                        clock=lambda: now[0])
    sweeper = Sweeper(lambda: referenced(ns.tree), store, grace=10, clock=lambda: now[0],
                      open_writes=writes)
    assert sweeper.sweep() == [before]          # first seen at 200: kept from 150 on
    now[0] = 5000.0
    assert sweeper.sweep() == [] and store.has(piped)       # still open: still kept
    open_files.clear()                          # closed without it (abandoned): an orphan
    assert sweeper.sweep() == [piped]
    piped = written(store, b"another", 1024).blocks[0][0]
    aged(store, piped, 4900)
    open_files.append(("/g", 8, "DFSClient_2"))
    following[0] = False                        # the active: its writers hold their ids
    assert sweeper.sweep() == [piped]


def aged(store, block_id: int, mtime: float) -> None:
    for path in (store.data_path(block_id), store.meta_path(block_id)):
        os.utime(path, (mtime, mtime))


def test_the_referenced_set_is_walked_again_only_after_a_change_of_blocks():
    """``ReferencedBlocks`` answers what a walk would after each kind of change, and walks
    nothing (the same set) while only directories and attributes change."""
    ns = new_ns()
    in_use = ReferencedBlocks()
    ns.mkdirs("/s", 0o755, SUPER)
    assert in_use.of(ns.tree) == frozenset()
    snapshot_ops.allow_snapshot(ns, "/s", SUPER)
    changes = [
        lambda: write_file(ns, "/s/a", sizes=(10, 20)),
        lambda: write_file(ns, "/s/b", sizes=(5,)),
        lambda: write_file(ns, "/s/c", sizes=(7,)),
        lambda: apply_ops(ns, edits.TruncateOp("/s/a", 5, 2)),
        lambda: apply_ops(ns, edits.ConcatOp("/s/a", ["/s/c"], 3)),
        lambda: rename.rename(ns, "/s/b", "/s/a", True, SUPER),     # over /s/a
        lambda: write_file(ns, "/s/e", sizes=(4,)),
        lambda: delete.delete(ns, "/s/e", False, SUPER),
        lambda: write_file(ns, "/s/d", sizes=(3,)),
        lambda: ns.create("/s/d", SUPER, overwrite=True),
        lambda: snapshot_ops.create_snapshot(ns, "/s", "s0", SUPER),
        lambda: delete.delete(ns, "/s/a", False, SUPER),               # s0 keeps its blocks
        lambda: snapshot_ops.delete_snapshot(ns, "/s", "s0", SUPER),
    ]
    for change in changes:
        change()
        assert in_use.of(ns.tree) == referenced(ns.tree)
    kept = in_use.of(ns.tree)
    ns.mkdirs("/t/u", 0o755, SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "s1", SUPER)
    assert in_use.of(ns.tree) is kept
