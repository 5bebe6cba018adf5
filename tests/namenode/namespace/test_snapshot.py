"""Snapshots: what a snapshot shows is the tree as it was when taken, whatever happens after
(the property test drives random requests and compares every snapshot with a dump taken at
its creation), taking one copies nothing, deleting one releases what only it kept, reads
through ``.snapshot``, and replay through edits and the image. The rules of the snapshot
requests are test_snapshot_ops.py's."""

from __future__ import annotations

import gc
import itertools
import os
import tempfile

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nnlite.namenode import errors
from nnlite.namenode.blocks.sweep import ReferencedBlocks, referenced
from nnlite.namenode.image import columns, startup
from nnlite.namenode.namespace import acl, acl_ops, attributes, delete, rename, snapshot_ops, xattrs
from nnlite.namenode.namespace.inode import walk
from tests.namenode.helpers import SUPER, dump, dump_node, new_ns, refused, write_file
from tests.namenode.random_requests import (
    REQUESTS,
    acl_specs,
    fresh,
    load_image,
    perms,
    request,
    run,
    seed,
    times,
    write_edits,
    xattr_names,
)


def view_dump(ns, path: str, name: str) -> dict:
    return comparable(dump_node(ns.status(f"{path}/.snapshot/{name}", SUPER)))


def comparable(node: dict) -> dict:
    """A dump without what a snapshot does not keep: quotas (HDFS counts them live) and
    the root's own name (the snapshot's, through ``.snapshot``)."""
    node = dict(node)
    node.pop("name", None)
    return _no_quotas(node)


def _no_quotas(node: dict) -> dict:
    if "children" not in node:
        return node
    return dict(node, quota=None,
                children={k: _no_quotas(v) for k, v in node["children"].items()})


def snapshot_names(ns) -> dict:
    return {d.path(): [(s.id, s.name, s.ctime) for s in root.snapshots]
            for d, root in ns.tree.snapshots.roots.values()}


def flatten(node: dict, where: str = ""):
    """``(path under the dumped directory, dump)`` of each inode of a dump, "" for itself."""
    yield where, node
    for name, child in node.get("children", {}).items():
        yield from flatten(child, f"{where}/{name}")


# ------------------------------------------------------------------ the answers a dump gives

_DIR_ATTRS = ("permission", "owner", "group", "mtime", "acl", "xattrs")
_FILE_ATTRS = _DIR_ATTRS + ("replication", "length", "blocks")


def expected_report(older: dict, newer: dict) -> set:
    """SnapshotDiffReport's entries between two dumps of a snapshottable directory, as
    HdfsSnapshots.md tells them: an entry of the older tree is compared while it and every
    directory above it are still under the directory, wherever they went; it is named by its
    older path; one that left its parent's entry for another under the directory is a
    RENAME to its newer path; one gone from under the directory a DELETE; a name that came
    into a compared directory, not by such a rename, a CREATE."""
    old = {path[1:]: node for path, node in flatten(older)}
    new_ids = {node["id"]: (path[1:], node) for path, node in flatten(newer)}
    new_paths = {path: node for path, node in new_ids.values()}

    def compared(path: str) -> bool:
        return old[path]["id"] in new_ids and (not path or compared(_up(path)))

    def ids(node: dict) -> dict:
        return {name: child["id"] for name, child in node.get("children", {}).items()}

    entries, renamed, compared_dirs = set(), set(), []
    for path, node in old.items():
        if not compared(path):
            if path and compared(_up(path)):
                entries.add(("DELETE", path, None))
            continue
        later_path, later = new_ids[node["id"]]
        if path and (new_paths[_up(later_path)]["id"], later_path.rpartition("/")[2]) != (
                old[_up(path)]["id"], path.rpartition("/")[2]):
            entries.add(("RENAME", path, later_path))
            renamed.add(node["id"])
        attrs = _DIR_ATTRS if "children" in node else _FILE_ATTRS
        if any(node[a] != later[a] for a in attrs) or ids(node) != ids(later):
            entries.add(("MODIFY", path, None))
        if "children" in node:
            compared_dirs.append((path, ids(node), ids(later)))
    for path, before, after in compared_dirs:
        entries.update(("CREATE", f"{path}/{name}".lstrip("/"), None)
                       for name, inode_id in after.items()
                       if before.get(name) != inode_id and inode_id not in renamed)
    return entries


def _up(path: str) -> str:
    return path.rpartition("/")[0]


def counts(node: dict) -> tuple:
    """GETCONTENTSUMMARY's files, directories, length and space of a dumped subtree."""
    nodes = [n for _, n in flatten(node)]
    files = [n for n in nodes if "children" not in n]
    return (len(files), len(nodes) - len(files), sum(f["length"] for f in files),
            sum(f["length"] * f["replication"] for f in files))


def check_frozen(ns, expected: dict) -> None:
    """Every answer through ``.snapshot`` is what the dump taken with the snapshot gives:
    each path's status, its listing (LISTSTATUS and LISTSTATUS_BATCH, by name), a file's
    contents (length, blocks, checksum), each content summary; and every diff report between
    two snapshots of a directory, and from each to now, is the dumps' report. And no diff is
    kept but for a snapshot it serves."""
    for (root, name), then in expected.items():
        assert view_dump(ns, root, name) == then, (root, name)
        for path, node in flatten(then):
            check_answers(ns, f"{root}/.snapshot/{name}{path}", node)
    for root in {root for root, _ in expected}:
        snaps = [s.name for s in snapshot_ops.snapshot_list(ns, root, SUPER)[1]]
        now = comparable(dump_node(ns.tree.get(root)))
        for i, older in enumerate(snaps):
            for newer in snaps[i + 1:] + [""]:
                report = snapshot_ops.snapshot_diff(ns, root, older, newer, SUPER)
                assert set(report) == expected_report(
                    expected[root, older], expected[root, newer] if newer else now), \
                    (root, older, newer)
    check_diffs_serve_their_snapshots(ns)


def check_diffs_serve_their_snapshots(ns) -> None:
    """A diff is kept for a snapshot that sees its inode, as HDFS records one only for the
    latest snapshot the inode is in (INode.isInLatestSnapshot) and folds it into the prior
    one that holds the inode when that snapshot goes: none is recorded for an inode moved in
    after the snapshot, and none outlives what it serves."""
    seen = {}
    for directory, root in ns.tree.snapshots.roots.values():
        for snap in root.snapshots:
            seen[snap.id] = {n.id for n in walk(
                ns.status(f"{directory.path()}/.snapshot/{snap.name}", SUPER))}
    for inode_id, diffs in ns.tree.snapshots.diffs.items():
        for diff in diffs:
            assert inode_id in seen[diff.snap], (inode_id, diff.snap)


def check_answers(ns, path: str, node: dict) -> None:
    assert comparable(dump_node(ns.status(path, SUPER))) == comparable(node), path
    if "children" in node:
        names = sorted(node["children"])
        listed, left = ns.listing(path, SUPER)
        assert ([c.name for c in listed], left) == (names, 0), path
        assert [c.id for c in listed] == [node["children"][n]["id"] for n in names], path
        directory, batch = ns.listing_names(path, SUPER)
        assert [c.name for c in ns.listing_page(path, SUPER, directory, batch)] == names
    else:
        content = ns.readable_file(path, SUPER)
        assert (content.length, content.blocks, content.checksum) == (
            node["length"], node["blocks"], node["checksum"]), path
    summary = ns.content_summary(path, SUPER)
    assert (summary["fileCount"], summary["directoryCount"], summary["length"],
            summary["spaceConsumed"]) == counts(node), path
    assert (summary["snapshotFileCount"], summary["snapshotDirectoryCount"],
            summary["snapshotLength"], summary["snapshotSpaceConsumed"]) == (0, 0, 0, 0), path


# ------------------------------------------------------------------ the property

ROOTS = ("/a", "/c")
picks = st.integers(0, 1000)      # an index into what exists when the step runs
SNAP_OPS = st.one_of(
    st.tuples(st.just("take"), st.sampled_from(ROOTS)),
    st.tuples(st.just("drop"), st.sampled_from(ROOTS), picks),
    st.tuples(st.just("rename_snapshot"), st.sampled_from(ROOTS), picks))
# Files and directories moved inside the snapshottable trees /a and /c, between them, and out
# of and into them (/b is in none), then changed where they went.
MOVES = st.tuples(st.just("move"), picks, picks, st.sampled_from(["x", "y", "f", "b"]),
                  st.sampled_from(["rename", "rename over", "rename_legacy"]))
CHANGES = st.tuples(st.just("change"), picks, st.one_of(
    request("set_permission", perms, st.just(SUPER)),
    request("set_owner", st.sampled_from([None, "alice"]), st.sampled_from([None, "staff"]),
            st.just(SUPER)),
    request("set_times", times, times, st.just(SUPER)),
    request("set_xattr", xattr_names, st.binary(max_size=4), st.just(3), st.just(SUPER)),
    request("change_acl", st.just("modify"), acl_specs, st.just(SUPER)),
    request("truncate", st.integers(0, 100), st.just(SUPER)),
    request("delete", st.just(True), st.just(SUPER)),
    request("mkdirs", st.just(0o755), st.just(SUPER))))
# (the four kinds alike: one_of would weigh each branch of REQUESTS as much as a kind)
STEPS = st.lists(st.sampled_from([REQUESTS, MOVES, CHANGES, SNAP_OPS]).flatmap(lambda k: k),
                 min_size=10, max_size=50)


def existing(ns, dirs_only: bool = False) -> list[str]:
    """The paths in the tree now, the root left out, in order."""
    found, stack = [], [("", ns.tree.root)]
    while stack:
        where, node = stack.pop()
        for name, child in node.children.items():
            if child.is_dir or not dirs_only:
                found.append(f"{where}/{name}")
            if child.is_dir:
                stack.append((f"{where}/{name}", child))
    return sorted(found)


def step_request(ns, step):
    """A request made of a step that names what exists by index (None: nothing does)."""
    kind, paths = step[0], existing(ns)
    if not paths:
        return None
    if kind == "move":
        _, src, into, name, how = step
        dirs = ["", *existing(ns, dirs_only=True)]
        src, dst = paths[src % len(paths)], f"{dirs[into % len(dirs)]}/{name}"
        if how == "rename_legacy":
            return "rename_legacy", src, dst, SUPER
        return "rename", src, dst, how == "rename over", SUPER
    _, pick, (change, *args) = step
    if change == "mkdirs":
        return change, f"{paths[pick % len(paths)]}/m", *args
    return change, paths[pick % len(paths)], *args


def play_with_snapshots(steps):
    ns = fresh()
    ops = seed(ns)
    expected = {}
    for root in ROOTS:
        ops += snapshot_ops.allow_snapshot(ns, root, SUPER)[1]
        ops += snapshot_ops.create_snapshot(ns, root, "s0", SUPER)[1]
        expected[root, "s0"] = comparable(dump_node(ns.tree.get(root)))
    taken = itertools.count(1)
    in_use = ReferencedBlocks()
    for step in steps:
        # the set kept between changes is the one a walk finds, whatever the last step did
        assert in_use.of(ns.tree) == referenced(ns.tree)
        kind = step[0]
        try:
            if kind == "take":
                name = f"s{next(taken)}"
                _, more = snapshot_ops.create_snapshot(ns, step[1], name, SUPER)
                expected[step[1], name] = comparable(dump_node(ns.tree.get(step[1])))
            elif kind in ("drop", "rename_snapshot"):
                more = snapshot_op(ns, expected, *step)
            else:
                req = step_request(ns, step) if kind in ("move", "change") else step
                more = run(ns, req) if req is not None else []
        except errors.NamenodeError:
            more = []
        ops += more
    assert in_use.of(ns.tree) == referenced(ns.tree)
    return ns, ops, expected


def snapshot_op(ns, expected: dict, kind: str, root: str, pick: int) -> list:
    names = sorted(name for r, name in expected if r == root)
    if not names:
        return []
    name = names[pick % len(names)]
    if kind == "drop":
        more = snapshot_ops.delete_snapshot(ns, root, name, SUPER)[1]
        del expected[root, name]
    else:
        more = snapshot_ops.rename_snapshot(ns, root, name, f"{name}r", SUPER)[1]
        expected[root, f"{name}r"] = expected.pop((root, name))
    return more


def check_released(ns) -> None:
    """Deleting every snapshot releases everything the registry held."""
    for directory, root in list(ns.tree.snapshots.roots.values()):
        for snap in list(root.snapshots):
            snapshot_ops.delete_snapshot(ns, directory.path(), snap.name, SUPER)
    registry = ns.tree.snapshots
    assert (registry.diffs, registry.pinned, registry.removed, registry.arrived) == (
        {}, {}, {}, {})
    assert registry.referenced_blocks() == set()


PROPERTY = settings(max_examples=int(os.environ.get("NNLITE_EXAMPLES", 200)), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@PROPERTY
@given(STEPS)
@example([    # /a/f moved into /a/b after s0 and s1, /a/b deleted after s2, then s1 dropped
    ("change", 2, ("delete", True, SUPER)), ("take", "/a"), ("move", 211, 374, "x", "rename"),
    ("take", "/a"), ("change", 1, ("delete", True, SUPER)), ("drop", "/a", 1)])
def test_a_snapshot_shows_the_tree_as_it_was_when_taken(steps):
    ns, ops, expected = play_with_snapshots(steps)
    check_frozen(ns, expected)
    replica = fresh()
    for op in ops:
        replica.tree.apply(op)
    assert dump(replica) == dump(ns)
    check_frozen(replica, expected)
    check_released(ns)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(STEPS)
def test_snapshots_survive_an_edits_file_and_an_image(steps):
    ns, ops, expected = play_with_snapshots(steps)
    with tempfile.TemporaryDirectory() as tmp:
        replayed = fresh()
        startup.replay(replayed.tree, write_edits(os.path.join(tmp, "edits"), ops), 0, 1)
        info = columns.save(ns.tree, os.path.join(tmp, "fsimage"), 42, len(ops))
        loaded, _ = load_image(os.path.join(tmp, "fsimage"), info.md5_hex)
    for other in (replayed, loaded):
        assert dump(other) == dump(ns)
        assert snapshot_names(other) == snapshot_names(ns)
        check_frozen(other, expected)
        check_released(other)
    assert loaded.tree.snapshots.last_id == ns.tree.snapshots.last_id


# ------------------------------------------------------------------ renames (issue 22, item 7)

def renamed_after_a_snapshot(kind: str = "file", src: str = "/s/w/g", dst: str = "/s/w/g2"):
    """/s snapshottable with /s/w, /s/v and /o beside it; ``src`` (a file of 5 bytes or a
    directory holding ``inner``) is in snapshot s2, then renamed to ``dst``."""
    ns = new_ns()
    for path in ("/s/w", "/s/v", "/o"):
        ns.mkdirs(path, 0o755, SUPER)
    if kind == "file":
        write_file(ns, src, sizes=(5,))
    else:
        ns.mkdirs(f"{src}/inner", 0o755, SUPER)
    snapshot_ops.allow_snapshot(ns, "/s", SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "s2", SUPER)
    before = dump_node(ns.tree.get(src))
    rename.rename(ns, src, dst, False, SUPER)
    return ns, before


def test_a_snapshot_lists_a_renamed_file_under_its_old_name():
    """The issue's reproduction: LISTSTATUS and LISTSTATUS_BATCH of /s/.snapshot/s2/w listed
    g2, whose OPEN was a 404, while g still read."""
    ns, before = renamed_after_a_snapshot()
    held = "/s/.snapshot/s2/w"
    assert [c.name for c in ns.listing(held, SUPER)[0]] == ["g"]
    directory, names = ns.listing_names(held, SUPER)
    assert names == ["g"]
    assert [c.name for c in ns.listing_page(held, SUPER, directory, names)] == ["g"]
    assert ns.readable_file(f"{held}/g", SUPER).blocks == before["blocks"]
    refused(ns, errors.PathNotFoundError, ns.readable_file, f"{held}/g2", SUPER)
    assert [c.name for c in ns.listing("/s/w", SUPER)[0]] == ["g2"]


@pytest.mark.parametrize("kind", ["file", "directory"])
@pytest.mark.parametrize("dst", ["/s/w/g2", "/s/v/g2", "/o/g2"],
                         ids=["in its directory", "to another in the tree", "out of the tree"])
def test_a_renamed_inode_keeps_its_name_and_attributes_in_a_snapshot(kind, dst):
    """HDFS keeps the old name in the WithName reference and the old attributes in the
    snapshot copy recorded before the rename (FSDirRenameOp: srcChild.recordModification):
    what changes after the rename, where the inode went, stays out of the snapshot."""
    ns, before = renamed_after_a_snapshot(kind, dst=dst)
    attributes.set_permission(ns, dst, 0o700, SUPER)
    attributes.set_owner(ns, dst, "alice", "staff", SUPER)
    attributes.set_times(ns, dst, 7, 8, SUPER)
    xattrs.set_xattr(ns, dst, "user.a", b"1", 1, SUPER)
    acl_ops.change_acl(ns, dst, "modify", acl.parse_spec("user:bob:rwx", True), SUPER)
    if kind == "file":
        ns.truncate(dst, 2, SUPER)
    else:
        ns.mkdirs(f"{dst}/later", 0o755, SUPER)
        attributes.set_permission(ns, f"{dst}/inner", 0o700, SUPER)
    assert dump_node(ns.status("/s/.snapshot/s2/w/g", SUPER)) == before
    assert [c.name for c in ns.listing("/s/.snapshot/s2/w", SUPER)[0]] == ["g"]
    refused(ns, errors.PathNotFoundError, ns.status, "/s/.snapshot/s2/w/g2", SUPER)
    refused(ns, errors.PathNotFoundError, ns.status, "/s/.snapshot/s2/v/g2", SUPER)
    assert ns.content_summary("/s/.snapshot/s2/w", SUPER)["directoryCount"] == (
        1 if kind == "file" else 3)


def test_an_inode_moved_into_the_tree_is_not_in_its_earlier_snapshot():
    """A directory moved in after the snapshot records nothing for it (HDFS's
    INode.isInLatestSnapshot): what is deleted in it then is not kept, nor counted."""
    ns = new_ns()
    ns.mkdirs("/s", 0o755, SUPER)
    ns.mkdirs("/o/d", 0o755, SUPER)
    write_file(ns, "/o/d/x", sizes=(5,))
    snapshot_ops.allow_snapshot(ns, "/s", SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "s0", SUPER)
    rename.rename(ns, "/o/d", "/s/d", False, SUPER)
    attributes.set_permission(ns, "/s/d", 0o700, SUPER)
    delete.delete(ns, "/s/d/x", False, SUPER)
    assert list(ns.status("/s/.snapshot/s0", SUPER).children) == []
    assert list(ns.tree.snapshots.diffs) == [ns.tree.get("/s").id]
    summary = ns.content_summary("/s", SUPER)
    assert (summary["directoryCount"], summary["fileCount"], summary["snapshotFileCount"],
            summary["snapshotDirectoryCount"]) == (2, 0, 0, 0)
    assert ns.tree.snapshots.referenced_blocks() == set()
    assert snapshot_ops.snapshot_diff(ns, "/s", "s0", "", SUPER) == [("MODIFY", "", None),
                                                        ("CREATE", "d", None)]


def test_content_summary_counts_an_inode_renamed_out_as_its_snapshot_holds_it():
    ns, _ = renamed_after_a_snapshot(dst="/o/g2")
    ns.truncate("/o/g2", 2, SUPER)
    summary = ns.content_summary("/s", SUPER)
    assert (summary["fileCount"], summary["length"], summary["snapshotFileCount"],
            summary["snapshotLength"]) == (1, 5, 1, 5)
    moved = ns.content_summary("/o", SUPER)
    assert (moved["fileCount"], moved["length"], moved["snapshotFileCount"]) == (1, 2, 0)


@pytest.mark.parametrize("dst, entries", [
    ("/s/w/g2", {("MODIFY", "w", None), ("RENAME", "w/g", "w/g2"), ("MODIFY", "w/g", None)}),
    ("/s/v/g2", {("MODIFY", "w", None), ("MODIFY", "v", None), ("RENAME", "w/g", "v/g2"),
                 ("MODIFY", "w/g", None)}),
    ("/o/g2", {("MODIFY", "w", None), ("DELETE", "w/g", None)}),
], ids=["in its directory", "to another in the tree", "out of the tree"])
def test_the_diff_report_of_a_rename_then_a_change(dst, entries):
    """SnapshotDiffReport: a rename under the directory is one R entry, and a change made
    after it is reported under the path the earlier snapshot has (HdfsSnapshots.md, as
    TestSnapshotDiffReport.testDiffReportWithRenameAndAppend); out of the directory, a
    DELETE."""
    ns, _ = renamed_after_a_snapshot(dst=dst)
    ns.truncate(dst, 2, SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "s3", SUPER)
    for newer in ("s3", ""):
        assert set(snapshot_ops.snapshot_diff(ns, "/s", "s2", newer, SUPER)) == entries


def test_the_diff_report_follows_a_renamed_directory():
    """HdfsSnapshots.md: rename /foo to /foo2, then change /foo2/bar: "R ./foo -> ./foo2"
    and "M ./foo/bar"; an entry renamed inside it names its newer path as its target, and
    one moved into a directory made after the snapshot is a rename, not a deletion
    (findRenameTargetPath)."""
    ns = new_ns()
    ns.mkdirs("/s/foo", 0o755, SUPER)
    write_file(ns, "/s/foo/bar", sizes=(10,))
    write_file(ns, "/s/foo/baz", sizes=(10,))
    write_file(ns, "/s/top", sizes=(10,))
    snapshot_ops.allow_snapshot(ns, "/s", SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "a", SUPER)
    rename.rename(ns, "/s/foo", "/s/foo2", False, SUPER)
    ns.truncate("/s/foo2/bar", 3, SUPER)
    rename.rename(ns, "/s/foo2/baz", "/s/foo2/qux", False, SUPER)
    ns.mkdirs("/s/made", 0o755, SUPER)
    rename.rename(ns, "/s/top", "/s/made/top", False, SUPER)
    report = snapshot_ops.snapshot_diff(ns, "/s", "a", "", SUPER)
    assert report[0] == ("MODIFY", "", None)
    assert set(report[1:]) == {
        ("CREATE", "made", None), ("RENAME", "foo", "foo2"), ("RENAME", "top", "made/top"),
        ("MODIFY", "foo", None), ("RENAME", "foo/baz", "foo2/qux"),
        ("MODIFY", "foo/bar", None)}
    _, created, deleted = snapshot_ops.snapshot_diff(ns, "/s", "a", "", SUPER, listing=True)
    moved = {c for _, c, _ in created} & {c for _, c, _ in deleted}
    assert {path for _, c, path in created if c in moved} == {"foo2", "foo2/qux", "made/top"}


def test_deleting_a_snapshot_keeps_an_older_one_of_another_directory_right():
    """An inode moved from one snapshottable directory to another is seen by the snapshots
    of both: when the newer one goes, its diff serves the older one (HDFS folds it into the
    prior snapshot that holds the inode, the WithName's), instead of being dropped."""
    ns = new_ns()
    ns.mkdirs("/a", 0o755, SUPER)
    ns.mkdirs("/b", 0o755, SUPER)
    write_file(ns, "/a/f", sizes=(5,))
    for root in ("/a", "/b"):
        snapshot_ops.allow_snapshot(ns, root, SUPER)
    snapshot_ops.create_snapshot(ns, "/a", "old", SUPER)
    rename.rename(ns, "/a/f", "/b/f", False, SUPER)
    snapshot_ops.create_snapshot(ns, "/b", "new", SUPER)
    attributes.set_permission(ns, "/b/f", 0o600, SUPER)
    snapshot_ops.delete_snapshot(ns, "/b", "new", SUPER)
    held = ns.status("/a/.snapshot/old/f", SUPER)
    assert (held.name, held.permission) == ("f", 0o644)
    snapshot_ops.delete_snapshot(ns, "/a", "old", SUPER)
    registry = ns.tree.snapshots
    assert (registry.diffs, registry.pinned, registry.arrived) == ({}, {}, {})


def test_a_deleted_directory_keeps_what_saw_an_inode_moved_into_it(tmp_path):
    """f, in s0 and s1, moved into d after them (its diff keyed by s1, s0 and s1 pinned to
    it) and seen there by s2; d deleted, then s1 gone: the diff folds into s0, which still
    shows f as it was, live and reloaded from an image (the property test's shrunk example:
    deleting d dropped f's pins before recording what saw it, so its diff was dropped and
    s0 showed f named x)."""
    ns = new_ns()
    ns.mkdirs("/s/d", 0o755, SUPER)
    write_file(ns, "/s/f", sizes=(5,))
    snapshot_ops.allow_snapshot(ns, "/s", SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "s0", SUPER)
    then = comparable(dump_node(ns.tree.get("/s")))
    snapshot_ops.create_snapshot(ns, "/s", "s1", SUPER)
    rename.rename(ns, "/s/f", "/s/d/x", False, SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "s2", SUPER)
    delete.delete(ns, "/s/d", True, SUPER)
    info = columns.save(ns.tree, str(tmp_path / "fsimage"), 42, 9)
    loaded, _ = load_image(str(tmp_path / "fsimage"), info.md5_hex)
    for each in (ns, loaded):
        snapshot_ops.delete_snapshot(each, "/s", "s1", SUPER)
        assert view_dump(each, "/s", "s0") == then
        check_released(each)


def test_a_snapshot_releases_what_it_alone_kept_of_an_inode_moved_in():
    """A file moved in after s0, then changed after s1 and deleted: when s1 goes, nothing
    keeps it (s0 never saw it), so its blocks are free."""
    ns = new_ns()
    ns.mkdirs("/s", 0o755, SUPER)
    ns.mkdirs("/o/d", 0o755, SUPER)
    write_file(ns, "/o/f", sizes=(5,))
    write_file(ns, "/o/d/x", sizes=(7,))
    snapshot_ops.allow_snapshot(ns, "/s", SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "s0", SUPER)
    rename.rename(ns, "/o/f", "/s/f", False, SUPER)
    rename.rename(ns, "/o/d", "/s/d", False, SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "s1", SUPER)
    attributes.set_permission(ns, "/s/f", 0o600, SUPER)
    attributes.set_permission(ns, "/s/d/x", 0o600, SUPER)
    blocks = {b[0] for p in ("/s/f", "/s/d/x") for b in ns.tree.get(p).blocks}
    delete.delete(ns, "/s/f", False, SUPER)
    delete.delete(ns, "/s/d", True, SUPER)
    assert ns.tree.snapshots.referenced_blocks() == blocks
    snapshot_ops.delete_snapshot(ns, "/s", "s1", SUPER)
    assert ns.tree.snapshots.referenced_blocks() == set()
    assert list(ns.tree.snapshots.diffs) == [ns.tree.get("/s").id]


def test_an_image_carries_what_sees_a_moved_inode(tmp_path):
    ns, before = renamed_after_a_snapshot(dst="/o/g2")
    attributes.set_permission(ns, "/o/g2", 0o600, SUPER)
    ns.mkdirs("/s/v/g", 0o755, SUPER)
    info = columns.save(ns.tree, str(tmp_path / "fsimage"), 42, 9)
    loaded, _ = load_image(str(tmp_path / "fsimage"), info.md5_hex)
    registry = loaded.tree.snapshots
    original = ns.tree.snapshots
    assert (registry.pinned, registry.arrived) == (original.pinned, original.arrived)
    assert dump_node(loaded.status("/s/.snapshot/s2/w/g", SUPER)) == before
    attributes.set_times(loaded, "/o/g2", 1, 2, SUPER)             # still recorded nowhere new
    assert dump_node(loaded.status("/s/.snapshot/s2/w/g", SUPER)) == before


# ------------------------------------------------------------------ cost

def test_taking_a_snapshot_copies_nothing():
    ns = new_ns()
    ns.mkdirs("/big", 0o755, SUPER)
    for i in range(200):
        ns.mkdirs(f"/big/d{i}", 0o755, SUPER)
    snapshot_ops.allow_snapshot(ns, "/big", SUPER)
    gc.collect()
    before = len(gc.get_objects())
    snapshot_ops.create_snapshot(ns, "/big", "s0", SUPER)
    gc.collect()
    assert len(gc.get_objects()) - before < 20
    assert ns.tree.snapshots.diffs == {}                  # nothing recorded until a change
    attributes.set_permission(ns, "/big/d7", 0o700, SUPER)
    assert list(ns.tree.snapshots.diffs) == [ns.tree.get("/big/d7").id]


def test_inodes_made_after_a_snapshot_record_nothing():
    ns = new_ns()
    ns.mkdirs("/s", 0o755, SUPER)
    snapshot_ops.allow_snapshot(ns, "/s", SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "s0", SUPER)
    ns.mkdirs("/s/new", 0o755, SUPER)                # records /s's created name
    attributes.set_permission(ns, "/s/new", 0o700, SUPER)        # /s/new is younger than s0
    assert list(ns.tree.snapshots.diffs) == [ns.tree.get("/s").id]


# ------------------------------------------------------------------ release

def test_deleting_the_last_snapshot_releases_what_only_it_kept():
    ns = new_ns()
    ns.mkdirs("/s", 0o755, SUPER)
    snapshot_ops.allow_snapshot(ns, "/s", SUPER)
    write_file(ns, "/s/f", sizes=(10, 20))
    blocks = {b[0] for b in ns.tree.get("/s/f").blocks}
    snapshot_ops.create_snapshot(ns, "/s", "s0", SUPER)
    delete.delete(ns, "/s/f", False, SUPER)
    assert ns.tree.snapshots.referenced_blocks() == blocks
    assert ns.readable_file("/s/.snapshot/s0/f", SUPER).blocks == tuple(
        sorted(ns.readable_file("/s/.snapshot/s0/f", SUPER).blocks))
    snapshot_ops.delete_snapshot(ns, "/s", "s0", SUPER)
    assert ns.tree.snapshots.referenced_blocks() == set()
    assert ns.tree.snapshots.diffs == {} and ns.tree.snapshots.pinned == {}


def test_deleting_a_middle_snapshot_keeps_the_older_ones_right():
    ns = new_ns()
    ns.mkdirs("/s/d", 0o755, SUPER)
    snapshot_ops.allow_snapshot(ns, "/s", SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "s0", SUPER)
    ns.mkdirs("/s/x", 0o755, SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "s1", SUPER)
    delete.delete(ns, "/s/d", True, SUPER)
    delete.delete(ns, "/s/x", True, SUPER)
    snapshot_ops.delete_snapshot(ns, "/s", "s1", SUPER)
    assert sorted(ns.status("/s/.snapshot/s0", SUPER).children) == ["d"]


# ------------------------------------------------------------------ reads

def test_reads_through_dot_snapshot():
    ns = new_ns()
    ns.mkdirs("/s/d", 0o755, SUPER)
    write_file(ns, "/s/d/f", sizes=(100,))
    snapshot_ops.allow_snapshot(ns, "/s", SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "x", SUPER)
    ns.truncate("/s/d/f", 7, SUPER)                     # cut after
    attributes.set_owner(ns, "/s/d", "alice", None, SUPER)
    listing, _ = ns.listing("/s/.snapshot", SUPER)
    assert [n.name for n in listing] == ["x"]
    assert ns.status("/s/.snapshot/x/d", SUPER).owner == "hdfs"
    assert ns.readable_file("/s/.snapshot/x/d/f", SUPER).length == 100
    assert ns.readable_file("/s/d/f", SUPER).length == 7
    assert ns.content_summary("/s/.snapshot/x", SUPER)["length"] == 100
    refused(ns, errors.PathNotFoundError, ns.status, "/s/.snapshot/y", SUPER)
    refused(ns, errors.PathNotFoundError, ns.status, "/s/.snapshot/x/nope", SUPER)


def test_content_summary_counts_what_snapshots_keep():
    """INodeDirectory.computeContentSummary: each directory's diffs add what they list as
    deleted, also as the snapshot* fields; a renamed inode is listed there as the snapshot
    holds it, so HDFS counts it twice; a .snapshot path counts only what it holds."""
    ns = new_ns()
    ns.mkdirs("/s/d", 0o755, SUPER)
    ns.mkdirs("/s/old", 0o755, SUPER)
    write_file(ns, "/s/d/f", sizes=(100,))
    write_file(ns, "/s/g", sizes=(50,), replication=3)
    write_file(ns, "/s/old/h", sizes=(10,))
    snapshot_ops.allow_snapshot(ns, "/s", SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "a", SUPER)
    plain = ns.content_summary("/s", SUPER)
    assert (plain["fileCount"], plain["directoryCount"], plain["length"],
            plain["spaceConsumed"], plain["snapshotFileCount"]) == (3, 3, 160, 260, 0)
    delete.delete(ns, "/s/g", False, SUPER)
    delete.delete(ns, "/s/d", True, SUPER)
    rename.rename(ns, "/s/old", "/s/new", False, SUPER)
    write_file(ns, "/s/new/h2", sizes=(5,))              # after the snapshot: not kept
    summary = ns.content_summary("/s", SUPER)
    kept = {k: summary[k] for k in ("snapshotFileCount", "snapshotDirectoryCount",
                                     "snapshotLength", "snapshotSpaceConsumed")}
    assert kept == {"snapshotFileCount": 3, "snapshotDirectoryCount": 2,
                    "snapshotLength": 160, "snapshotSpaceConsumed": 260}
    assert (summary["fileCount"], summary["directoryCount"], summary["length"],
            summary["spaceConsumed"]) == (3 + 2, 2 + 2, 160 + 15, 260 + 15)
    held = ns.content_summary("/s/.snapshot/a", SUPER)
    assert (held["fileCount"], held["directoryCount"], held["length"],
            held["snapshotLength"]) == (3, 3, 160, 0)
    new = ns.content_summary("/s/new", SUPER)                # its own diffs keep nothing
    assert (new["fileCount"], new["length"], new["snapshotFileCount"]) == (2, 15, 0)
    snapshot_ops.delete_snapshot(ns, "/s", "a", SUPER)
    after = ns.content_summary("/s", SUPER)
    assert (after["fileCount"], after["length"], after["snapshotLength"]) == (2, 15, 0)


def test_content_summary_counts_a_kept_directory_with_what_its_own_diffs_keep():
    ns = new_ns()
    ns.mkdirs("/s/x", 0o755, SUPER)
    write_file(ns, "/s/x/f", sizes=(7,))
    snapshot_ops.allow_snapshot(ns, "/s", SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "a", SUPER)
    delete.delete(ns, "/s/x/f", False, SUPER)                   # kept by a, in /s/x's diff
    snapshot_ops.create_snapshot(ns, "/s", "b", SUPER)
    delete.delete(ns, "/s/x", True, SUPER)                      # kept by b, in /s's diff
    summary = ns.content_summary("/s", SUPER)
    assert (summary["snapshotDirectoryCount"], summary["snapshotFileCount"],
            summary["snapshotLength"]) == (1, 1, 7)
    assert (summary["directoryCount"], summary["fileCount"]) == (2, 1)


def test_many_snapshots_then_deleted_in_any_order():
    ns = new_ns()
    ns.mkdirs("/s", 0o755, SUPER)
    snapshot_ops.allow_snapshot(ns, "/s", SUPER)
    seen = {}
    for i in range(8):
        write_file(ns, f"/s/f{i}", sizes=(i + 1,))
        if i % 2:
            delete.delete(ns, f"/s/f{i - 1}", False, SUPER)
        snapshot_ops.create_snapshot(ns, "/s", f"s{i}", SUPER)
        seen[f"s{i}"] = sorted(ns.tree.get("/s").children)
    for name in ("s3", "s0", "s7", "s5"):
        snapshot_ops.delete_snapshot(ns, "/s", name, SUPER)
        del seen[name]
        for other, names in seen.items():
            assert sorted(ns.status(f"/s/.snapshot/{other}", SUPER).children) == names
