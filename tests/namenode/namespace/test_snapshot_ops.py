"""snapshot_ops.py (FSDirSnapshotOp): the rules HDFS enforces on snapshot requests -- who
allows, takes, renames and deletes them, their names, no nesting, no deleting or renaming a
subtree holding snapshots, nothing written into one -- the diff report and the listing of
snapshottable directories. What a snapshot shows, and what it costs, is test_snapshot.py's."""

from __future__ import annotations

import pytest

from nnlite.namenode import errors
from nnlite.namenode.namespace import attributes, delete, rename, snapshot_ops
from tests.namenode.helpers import ALICE, BOB, SUPER, new_ns, refused, write_file


def test_only_a_superuser_allows_and_nesting_is_refused():
    ns = new_ns()
    ns.mkdirs("/a/b/c", 0o777, SUPER)
    refused(ns, errors.AccessControlError, snapshot_ops.allow_snapshot, ns, "/a/b", ALICE)
    snapshot_ops.allow_snapshot(ns, "/a/b", SUPER)
    snapshot_ops.allow_snapshot(ns, "/a/b", SUPER)                          # twice: fine
    with pytest.raises(errors.SnapshotError, match="the ancestor /a/b is already"):
        snapshot_ops.allow_snapshot(ns, "/a/b/c", SUPER)
    with pytest.raises(errors.SnapshotError, match="the subdirectory /a/b is already"):
        snapshot_ops.allow_snapshot(ns, "/a", SUPER)
    refused(ns, errors.PathNotFoundError, snapshot_ops.allow_snapshot, ns, "/nope", SUPER)
    write_file(ns, "/a/f")
    refused(ns, errors.PathIsNotDirectoryError, snapshot_ops.allow_snapshot, ns, "/a/f", SUPER)


def test_snapshot_names_and_owners():
    ns = new_ns()
    ns.mkdirs("/home/alice", 0o755, SUPER)
    attributes.set_owner(ns, "/home/alice", "alice", None, SUPER)
    snapshot_ops.allow_snapshot(ns, "/home/alice", SUPER)
    path, _ = snapshot_ops.create_snapshot(ns, "/home/alice", "one", ALICE)
    assert path == "/home/alice/.snapshot/one"
    refused(ns, errors.AccessControlError, snapshot_ops.create_snapshot, ns, "/home/alice", "two",
            BOB)
    refused(ns, errors.SnapshotError, snapshot_ops.create_snapshot, ns, "/home/alice", "one", ALICE)
    refused(ns, errors.HadoopIllegalArgumentError, snapshot_ops.create_snapshot, ns,
            "/home/alice", "a/b", ALICE)
    refused(ns, errors.HadoopIllegalArgumentError, snapshot_ops.create_snapshot, ns, "/home/alice",
            ".snapshot", ALICE)
    default, _ = snapshot_ops.create_snapshot(ns, "/home/alice", None, ALICE)
    assert default.rsplit("/", 1)[1].startswith("s") and len(default.rsplit("/", 1)[1]) == 20
    with pytest.raises(errors.SnapshotError, match="The snapshot nope does not exist"):
        snapshot_ops.rename_snapshot(ns, "/home/alice", "nope", "x", ALICE)
    with pytest.raises(errors.SnapshotError, match="already exists"):
        snapshot_ops.rename_snapshot(ns, "/home/alice", "one", default.rsplit("/", 1)[1], ALICE)
    snapshot_ops.rename_snapshot(ns, "/home/alice", "one", "first", ALICE)
    with pytest.raises(errors.SnapshotError, match="Cannot delete snapshot one from path"):
        snapshot_ops.delete_snapshot(ns, "/home/alice", "one", ALICE)
    refused(ns, errors.SnapshotError, snapshot_ops.create_snapshot, ns, "/home", "x", SUPER)


def test_a_directory_with_snapshots_is_neither_deleted_nor_renamed():
    ns = new_ns()
    ns.mkdirs("/p/s/in", 0o755, SUPER)
    snapshot_ops.allow_snapshot(ns, "/p/s", SUPER)
    snapshot_ops.create_snapshot(ns, "/p/s", "x", SUPER)
    for call in (lambda: delete.delete(ns, "/p/s", True, SUPER),
                 lambda: delete.delete(ns, "/p", True, SUPER),
                 lambda: rename.rename(ns, "/p/s", "/q", False, SUPER),
                 lambda: rename.rename_legacy(ns, "/p", "/q", SUPER),
                 lambda: delete.delete_many(ns, ["/p"], SUPER),
                 lambda: snapshot_ops.disallow_snapshot(ns, "/p/s", SUPER)):
        with pytest.raises(errors.SnapshotError):
            call()
    delete.delete(ns, "/p/s/in", True, SUPER)                     # inside it: fine
    snapshot_ops.delete_snapshot(ns, "/p/s", "x", SUPER)
    snapshot_ops.disallow_snapshot(ns, "/p/s", SUPER)
    delete.delete(ns, "/p", True, SUPER)


def test_a_rename_never_overwrites_an_empty_directory_that_has_snapshots():
    """FSDirRenameOp.validateOverwrite checks the destination as a delete would
    (FSDirSnapshotOp.checkSnapshot): an empty snapshottable directory with snapshots stays,
    and so do its snapshots."""
    ns = new_ns()
    ns.mkdirs("/a/f", 0o755, SUPER)
    ns.mkdirs("/b", 0o755, SUPER)
    snapshot_ops.allow_snapshot(ns, "/a", SUPER)
    snapshot_ops.create_snapshot(ns, "/a", "s0", SUPER)
    delete.delete(ns, "/a/f", True, SUPER)
    refused(ns, errors.SnapshotError, rename.rename, ns, "/b", "/a", True, SUPER)
    assert ns.status("/a/.snapshot/s0/f", SUPER).is_dir


def test_snapshots_are_read_only():
    ns = new_ns()
    ns.mkdirs("/s/d", 0o777, SUPER)
    snapshot_ops.allow_snapshot(ns, "/s", SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "x", SUPER)
    for call in (lambda: ns.mkdirs("/s/.snapshot/x/new", 0o755, SUPER),
                 lambda: delete.delete(ns, "/s/.snapshot/x/d", True, SUPER),
                 lambda: attributes.set_permission(ns, "/s/.snapshot/x/d", 0o700, SUPER),
                 lambda: rename.rename(ns, "/s/d", "/s/.snapshot/x/e", False, SUPER),
                 lambda: ns.create("/s/.snapshot/x/f", SUPER)):
        with pytest.raises(errors.SnapshotAccessControlError, match="read-only snapshot"):
            call()
    with pytest.raises(errors.HadoopIllegalArgumentError, match="reserved name"):
        ns.mkdirs("/plain/.snapshot", 0o755, SUPER)


def test_the_diff_report():
    ns = new_ns()
    ns.mkdirs("/s/keep", 0o755, SUPER)
    ns.mkdirs("/s/gone", 0o755, SUPER)
    ns.mkdirs("/s/old", 0o755, SUPER)
    write_file(ns, "/s/keep/f", sizes=(5,))
    snapshot_ops.allow_snapshot(ns, "/s", SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "a", SUPER)
    delete.delete(ns, "/s/gone", True, SUPER)
    rename.rename(ns, "/s/old", "/s/new", False, SUPER)
    ns.mkdirs("/s/made", 0o755, SUPER)
    ns.truncate("/s/keep/f", 2, SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "b", SUPER)
    report = snapshot_ops.snapshot_diff(ns, "/s", "a", "b", SUPER)
    assert report[0] == ("MODIFY", "", None)
    assert set(report[1:]) == {("MODIFY", "keep/f", None), ("DELETE", "gone", None),
                               ("RENAME", "old", "new"), ("CREATE", "made", None)}
    assert snapshot_ops.snapshot_diff(ns, "/s", "b", "", SUPER) == []
    assert snapshot_ops.snapshot_diff(ns, "/s", "a", "a", SUPER) == []
    with pytest.raises(errors.SnapshotError, match="Cannot find the snapshot"):
        snapshot_ops.snapshot_diff(ns, "/s", "a", "zz", SUPER)


def test_snapshottable_listing_is_per_owner():
    ns = new_ns()
    for who in ("alice", "bob"):
        ns.mkdirs(f"/{who}", 0o755, SUPER)
        attributes.set_owner(ns, f"/{who}", who, None, SUPER)
        snapshot_ops.allow_snapshot(ns, f"/{who}", SUPER)
    assert [p for p, _, _ in snapshot_ops.snapshottable_dirs(ns, ALICE)] == ["/alice"]
    assert [p for p, _, _ in snapshot_ops.snapshottable_dirs(ns, SUPER)] == ["/alice", "/bob"]
