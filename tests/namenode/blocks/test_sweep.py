"""sweep.py: block files no file refers to, held by no upload and past their grace, are
removed; a block a snapshot still shows is kept until the snapshot goes."""

from __future__ import annotations

import os

from nnlite.formats import edits
from nnlite.namenode.blocks.sweep import Sweeper, referenced
from tests.namenode.blocks.helpers import written
from tests.namenode.helpers import SUPER, new_ns


def test_the_sweep_removes_only_old_unreferenced_unheld_blocks(store):
    ns = new_ns()
    kept = written(store, b"referenced", 1024).blocks
    orphan = written(store, b"orphan", 1024).blocks
    held = written(store, b"held", 1024).blocks
    young = written(store, b"young", 1024).blocks
    ns.tree.apply(edits.AddFileOp("/f", ns.tree.last_inode_id + 1, 1, 1024, 0, 0o644, "u", "g", 1, 1,
                         False, "c", ""))
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
    ns.tree.apply(edits.AddFileOp("/s/f", ns.tree.last_inode_id + 1, 1, 1024, 0, 0o644, "u", "g", 1, 1,
                             False, "c", ""))
    ns.tree.apply(edits.CloseFileOp("/s/f", ns.tree.last_inode_id, 19, 1, 1, blocks, b""))
    ns.allow_snapshot("/s", SUPER)
    ns.create_snapshot("/s", "one", SUPER)
    ns.create_snapshot("/s", "two", SUPER)
    ns.delete("/s/f", False, SUPER)
    for block in blocks:
        for path in (store.data_path(block[0]), store.meta_path(block[0])):
            os.utime(path, (1, 1))
    sweeper = Sweeper(lambda: referenced(ns.tree), store, grace=60)
    assert sweeper.sweep() == []
    ns.delete_snapshot("/s", "one", SUPER)
    assert sweeper.sweep() == []                     # "two" still shows the file
    ns.delete_snapshot("/s", "two", SUPER)
    assert sweeper.sweep() == [b[0] for b in blocks]
