"""Snapshots: what a snapshot shows is the tree as it was when taken, whatever happens after
(the property test drives random requests and compares every snapshot with a dump taken at
its creation), taking one copies nothing, deleting one releases what only it kept, the rules
HDFS enforces, the diff report, and replay through edits and the image."""

from __future__ import annotations

import gc
import os
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nnlite.namenode import errors
from nnlite.namenode.image import columns, startup
from tests.namenode.helpers import ALICE, BOB, SUPER, dump, dump_node, new_ns, refused, write_file
from tests.namenode.test_tree_replay import REQUESTS, counting_clock, fresh, run, seed, write_edits


def view_dump(ns, path: str, name: str) -> dict:
    return comparable(dump_node(ns.status(f"{path}/.snapshot/{name}", SUPER)))


def comparable(node: dict) -> dict:
    """A dump without what a snapshot does not keep: quotas (HDFS counts them live) and
    the root's own name."""
    node = dict(node, quota=None) if "children" in node else dict(node)
    node.pop("name", None)
    if "children" in node:
        node["children"] = {k: comparable(v) for k, v in node["children"].items()}
    return node


def snapshot_names(ns) -> dict:
    return {d.path(): [(s.id, s.name, s.ctime) for s in root.snapshots]
            for d, root in ns.snapshots.roots.values()}


# ------------------------------------------------------------------ the property

SNAP_OPS = st.one_of(
    st.tuples(st.just("take"), st.sampled_from(["s1", "s2", "s3", "s4"])),
    st.tuples(st.just("drop"), st.sampled_from(["s1", "s2", "s3", "s4"])),
    st.tuples(st.just("rename"), st.sampled_from(["s1", "s2"]), st.sampled_from(["s3", "s5"])))
STEPS = st.lists(st.one_of(REQUESTS, REQUESTS, SNAP_OPS), min_size=10, max_size=50)


def play_with_snapshots(steps):
    ns = fresh()
    ops = seed(ns)
    ops += ns.allow_snapshot("/a", SUPER)[1]
    expected = {}
    for step in steps:
        kind = step[0]
        try:
            if kind == "take":
                _, more = ns.create_snapshot("/a", step[1], SUPER)
                expected[step[1]] = comparable(dump_node(ns.get("/a")))
            elif kind == "drop":
                more = ns.delete_snapshot("/a", step[1], SUPER)[1]
                expected.pop(step[1])
            elif kind == "rename":
                more = ns.rename_snapshot("/a", step[1], step[2], SUPER)[1]
                expected[step[2]] = expected.pop(step[1])
            else:
                more = run(ns, step)
        except errors.NamenodeError:
            more = []
        ops += more
    return ns, ops, expected


PROPERTY = settings(max_examples=int(os.environ.get("NNLITE_EXAMPLES", 200)), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@PROPERTY
@given(STEPS)
def test_a_snapshot_shows_the_tree_as_it_was_when_taken(steps):
    ns, ops, expected = play_with_snapshots(steps)
    for name, before in expected.items():
        assert view_dump(ns, "/a", name) == before, name
    replica = fresh()
    for op in ops:
        replica.apply(op)
    assert dump(replica) == dump(ns)
    for name, before in expected.items():
        assert view_dump(replica, "/a", name) == before, name


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(STEPS)
def test_snapshots_survive_an_edits_file_and_an_image(steps):
    ns, ops, expected = play_with_snapshots(steps)
    with tempfile.TemporaryDirectory() as tmp:
        replayed = fresh()
        startup.replay(replayed, write_edits(os.path.join(tmp, "edits"), ops), 0, 1)
        info = columns.save(ns, os.path.join(tmp, "fsimage"), 42, len(ops))
        loaded, _ = columns.load(os.path.join(tmp, "fsimage"), info.md5_hex,
                                 clock=counting_clock())
    for other in (replayed, loaded):
        assert dump(other) == dump(ns)
        assert snapshot_names(other) == snapshot_names(ns)
        for name, before in expected.items():
            assert view_dump(other, "/a", name) == before, name
    assert loaded.snapshots.last_id == ns.snapshots.last_id


def test_the_snapshot_counter_survives_an_image_without_snapshots(tmp_path):
    """SnapshotManager's snapshotCounter: after a restart from an image that holds no
    snapshot, a new one still takes the next id, never one handed out before."""
    ns = new_ns()
    ns.mkdirs("/s", 0o755, SUPER)
    ns.allow_snapshot("/s", SUPER)
    ns.create_snapshot("/s", "a", SUPER)
    ns.delete_snapshot("/s", "a", SUPER)
    ns.disallow_snapshot("/s", SUPER)
    info = columns.save(ns, str(tmp_path / "fsimage"), 42, 9)
    loaded, _ = columns.load(str(tmp_path / "fsimage"), info.md5_hex, clock=counting_clock())
    assert loaded.snapshots.last_id == 1


# ------------------------------------------------------------------ cost

def test_taking_a_snapshot_copies_nothing():
    ns = new_ns()
    ns.mkdirs("/big", 0o755, SUPER)
    for i in range(200):
        ns.mkdirs(f"/big/d{i}", 0o755, SUPER)
    ns.allow_snapshot("/big", SUPER)
    gc.collect()
    before = len(gc.get_objects())
    ns.create_snapshot("/big", "s0", SUPER)
    gc.collect()
    assert len(gc.get_objects()) - before < 20
    assert ns.snapshots.diffs == {}                  # nothing recorded until a change
    ns.set_permission("/big/d7", 0o700, SUPER)
    assert list(ns.snapshots.diffs) == [ns.get("/big/d7").id]


def test_inodes_made_after_a_snapshot_record_nothing():
    ns = new_ns()
    ns.mkdirs("/s", 0o755, SUPER)
    ns.allow_snapshot("/s", SUPER)
    ns.create_snapshot("/s", "s0", SUPER)
    ns.mkdirs("/s/new", 0o755, SUPER)                # records /s's created name
    ns.set_permission("/s/new", 0o700, SUPER)        # /s/new is younger than s0
    assert list(ns.snapshots.diffs) == [ns.get("/s").id]


# ------------------------------------------------------------------ release

def test_deleting_the_last_snapshot_releases_what_only_it_kept():
    ns = new_ns()
    ns.mkdirs("/s", 0o755, SUPER)
    ns.allow_snapshot("/s", SUPER)
    write_file(ns, "/s/f", sizes=(10, 20))
    blocks = {b[0] for b in ns.get("/s/f").blocks}
    ns.create_snapshot("/s", "s0", SUPER)
    ns.delete("/s/f", False, SUPER)
    assert ns.snapshots.referenced_blocks() == blocks
    assert ns.readable_file("/s/.snapshot/s0/f", SUPER).blocks == tuple(
        sorted(ns.readable_file("/s/.snapshot/s0/f", SUPER).blocks))
    ns.delete_snapshot("/s", "s0", SUPER)
    assert ns.snapshots.referenced_blocks() == set()
    assert ns.snapshots.diffs == {} and ns.snapshots.pinned == {}


def test_deleting_a_middle_snapshot_keeps_the_older_ones_right():
    ns = new_ns()
    ns.mkdirs("/s/d", 0o755, SUPER)
    ns.allow_snapshot("/s", SUPER)
    ns.create_snapshot("/s", "s0", SUPER)
    ns.mkdirs("/s/x", 0o755, SUPER)
    ns.create_snapshot("/s", "s1", SUPER)
    ns.delete("/s/d", True, SUPER)
    ns.delete("/s/x", True, SUPER)
    ns.delete_snapshot("/s", "s1", SUPER)
    assert sorted(ns.status("/s/.snapshot/s0", SUPER).children) == ["d"]


# ------------------------------------------------------------------ the rules

def test_only_a_superuser_allows_and_nesting_is_refused():
    ns = new_ns()
    ns.mkdirs("/a/b/c", 0o777, SUPER)
    refused(ns, errors.AccessControlError, ns.allow_snapshot, "/a/b", ALICE)
    ns.allow_snapshot("/a/b", SUPER)
    ns.allow_snapshot("/a/b", SUPER)                          # twice: fine
    with pytest.raises(errors.SnapshotError, match="the ancestor /a/b is already"):
        ns.allow_snapshot("/a/b/c", SUPER)
    with pytest.raises(errors.SnapshotError, match="the subdirectory /a/b is already"):
        ns.allow_snapshot("/a", SUPER)
    refused(ns, errors.PathNotFoundError, ns.allow_snapshot, "/nope", SUPER)
    write_file(ns, "/a/f")
    refused(ns, errors.PathIsNotDirectoryError, ns.allow_snapshot, "/a/f", SUPER)


def test_snapshot_names_and_owners():
    ns = new_ns()
    ns.mkdirs("/home/alice", 0o755, SUPER)
    ns.set_owner("/home/alice", "alice", None, SUPER)
    ns.allow_snapshot("/home/alice", SUPER)
    path, _ = ns.create_snapshot("/home/alice", "one", ALICE)
    assert path == "/home/alice/.snapshot/one"
    refused(ns, errors.AccessControlError, ns.create_snapshot, "/home/alice", "two", BOB)
    refused(ns, errors.SnapshotError, ns.create_snapshot, "/home/alice", "one", ALICE)
    refused(ns, errors.HadoopIllegalArgumentError, ns.create_snapshot, "/home/alice", "a/b",
            ALICE)
    refused(ns, errors.HadoopIllegalArgumentError, ns.create_snapshot, "/home/alice",
            ".snapshot", ALICE)
    default, _ = ns.create_snapshot("/home/alice", None, ALICE)
    assert default.rsplit("/", 1)[1].startswith("s") and len(default.rsplit("/", 1)[1]) == 20
    with pytest.raises(errors.SnapshotError, match="The snapshot nope does not exist"):
        ns.rename_snapshot("/home/alice", "nope", "x", ALICE)
    with pytest.raises(errors.SnapshotError, match="already exists"):
        ns.rename_snapshot("/home/alice", "one", default.rsplit("/", 1)[1], ALICE)
    ns.rename_snapshot("/home/alice", "one", "first", ALICE)
    with pytest.raises(errors.SnapshotError, match="Cannot delete snapshot one from path"):
        ns.delete_snapshot("/home/alice", "one", ALICE)
    refused(ns, errors.SnapshotError, ns.create_snapshot, "/home", "x", SUPER)


def test_a_directory_with_snapshots_is_neither_deleted_nor_renamed():
    ns = new_ns()
    ns.mkdirs("/p/s/in", 0o755, SUPER)
    ns.allow_snapshot("/p/s", SUPER)
    ns.create_snapshot("/p/s", "x", SUPER)
    for call in (lambda: ns.delete("/p/s", True, SUPER), lambda: ns.delete("/p", True, SUPER),
                 lambda: ns.rename("/p/s", "/q", False, SUPER),
                 lambda: ns.rename_legacy("/p", "/q", SUPER),
                 lambda: ns.delete_many(["/p"], SUPER),
                 lambda: ns.disallow_snapshot("/p/s", SUPER)):
        with pytest.raises(errors.SnapshotError):
            call()
    ns.delete("/p/s/in", True, SUPER)                     # inside it: fine
    ns.delete_snapshot("/p/s", "x", SUPER)
    ns.disallow_snapshot("/p/s", SUPER)
    ns.delete("/p", True, SUPER)


def test_snapshots_are_read_only():
    ns = new_ns()
    ns.mkdirs("/s/d", 0o777, SUPER)
    ns.allow_snapshot("/s", SUPER)
    ns.create_snapshot("/s", "x", SUPER)
    for call in (lambda: ns.mkdirs("/s/.snapshot/x/new", 0o755, SUPER),
                 lambda: ns.delete("/s/.snapshot/x/d", True, SUPER),
                 lambda: ns.set_permission("/s/.snapshot/x/d", 0o700, SUPER),
                 lambda: ns.rename("/s/d", "/s/.snapshot/x/e", False, SUPER),
                 lambda: ns.create("/s/.snapshot/x/f", SUPER)):
        with pytest.raises(errors.SnapshotAccessControlError, match="read-only snapshot"):
            call()
    with pytest.raises(errors.HadoopIllegalArgumentError, match="reserved name"):
        ns.mkdirs("/plain/.snapshot", 0o755, SUPER)


def test_reads_through_dot_snapshot():
    ns = new_ns()
    ns.mkdirs("/s/d", 0o755, SUPER)
    write_file(ns, "/s/d/f", sizes=(100,))
    ns.allow_snapshot("/s", SUPER)
    ns.create_snapshot("/s", "x", SUPER)
    ns.truncate("/s/d/f", 7, SUPER)                     # cut after
    ns.set_owner("/s/d", "alice", None, SUPER)
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
    ns.allow_snapshot("/s", SUPER)
    ns.create_snapshot("/s", "a", SUPER)
    plain = ns.content_summary("/s", SUPER)
    assert (plain["fileCount"], plain["directoryCount"], plain["length"],
            plain["spaceConsumed"], plain["snapshotFileCount"]) == (3, 3, 160, 260, 0)
    ns.delete("/s/g", False, SUPER)
    ns.delete("/s/d", True, SUPER)
    ns.rename("/s/old", "/s/new", False, SUPER)
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
    ns.delete_snapshot("/s", "a", SUPER)
    after = ns.content_summary("/s", SUPER)
    assert (after["fileCount"], after["length"], after["snapshotLength"]) == (2, 15, 0)


def test_content_summary_counts_a_kept_directory_with_what_its_own_diffs_keep():
    ns = new_ns()
    ns.mkdirs("/s/x", 0o755, SUPER)
    write_file(ns, "/s/x/f", sizes=(7,))
    ns.allow_snapshot("/s", SUPER)
    ns.create_snapshot("/s", "a", SUPER)
    ns.delete("/s/x/f", False, SUPER)                   # kept by a, in /s/x's diff
    ns.create_snapshot("/s", "b", SUPER)
    ns.delete("/s/x", True, SUPER)                      # kept by b, in /s's diff
    summary = ns.content_summary("/s", SUPER)
    assert (summary["snapshotDirectoryCount"], summary["snapshotFileCount"],
            summary["snapshotLength"]) == (1, 1, 7)
    assert (summary["directoryCount"], summary["fileCount"]) == (2, 1)


def test_the_diff_report():
    ns = new_ns()
    ns.mkdirs("/s/keep", 0o755, SUPER)
    ns.mkdirs("/s/gone", 0o755, SUPER)
    ns.mkdirs("/s/old", 0o755, SUPER)
    write_file(ns, "/s/keep/f", sizes=(5,))
    ns.allow_snapshot("/s", SUPER)
    ns.create_snapshot("/s", "a", SUPER)
    ns.delete("/s/gone", True, SUPER)
    ns.rename("/s/old", "/s/new", False, SUPER)
    ns.mkdirs("/s/made", 0o755, SUPER)
    ns.truncate("/s/keep/f", 2, SUPER)
    ns.create_snapshot("/s", "b", SUPER)
    report = ns.snapshot_diff("/s", "a", "b", SUPER)
    assert report[0] == ("MODIFY", "", None)
    assert set(report[1:]) == {("MODIFY", "keep/f", None), ("DELETE", "gone", None),
                               ("RENAME", "old", "new"), ("CREATE", "made", None)}
    assert ns.snapshot_diff("/s", "b", "", SUPER) == []
    assert ns.snapshot_diff("/s", "a", "a", SUPER) == []
    with pytest.raises(errors.SnapshotError, match="Cannot find the snapshot"):
        ns.snapshot_diff("/s", "a", "zz", SUPER)


def test_snapshottable_listing_is_per_owner():
    ns = new_ns()
    for who in ("alice", "bob"):
        ns.mkdirs(f"/{who}", 0o755, SUPER)
        ns.set_owner(f"/{who}", who, None, SUPER)
        ns.allow_snapshot(f"/{who}", SUPER)
    assert [p for p, _, _ in ns.snapshottable_dirs(ALICE)] == ["/alice"]
    assert [p for p, _, _ in ns.snapshottable_dirs(SUPER)] == ["/alice", "/bob"]


def test_many_snapshots_then_deleted_in_any_order():
    ns = new_ns()
    ns.mkdirs("/s", 0o755, SUPER)
    ns.allow_snapshot("/s", SUPER)
    seen = {}
    for i in range(8):
        write_file(ns, f"/s/f{i}", sizes=(i + 1,))
        if i % 2:
            ns.delete(f"/s/f{i - 1}", False, SUPER)
        ns.create_snapshot("/s", f"s{i}", SUPER)
        seen[f"s{i}"] = sorted(ns.get("/s").children)
    for name in ("s3", "s0", "s7", "s5"):
        ns.delete_snapshot("/s", name, SUPER)
        del seen[name]
        for other, names in seen.items():
            assert sorted(ns.status(f"/s/.snapshot/{other}", SUPER).children) == names




def test_oiv_shows_the_snapshots_and_what_they_keep(tmp_path):
    import json

    from click.testing import CliRunner

    from nnlite.cli import main
    ns = new_ns()
    ns.mkdirs("/s", 0o755, SUPER)
    write_file(ns, "/s/f", sizes=(3,))
    ns.allow_snapshot("/s", SUPER)
    ns.create_snapshot("/s", "one", SUPER)
    ns.delete("/s/f", False, SUPER)
    info = columns.save(ns, str(tmp_path / "fsimage"), 42, 9)
    (tmp_path / "fsimage.md5").write_text(f"{info.md5_hex} *fsimage\n")
    result = CliRunner().invoke(main, ["oiv", "-i", str(tmp_path / "fsimage"), "-o",
                                       str(tmp_path / "out.json"), "-p", "JSON"])
    assert result.exit_code == 0, result.output
    inodes = {r["path"]: r for r in json.loads((tmp_path / "out.json").read_text())["inodes"]}
    root = inodes["/s"]["snapshot"]
    assert [s[1] for s in root["root"]["snapshots"]] == ["one"]
    [(snap, _, created, deleted)] = root["diffs"]
    assert created is None and list(deleted) == ["f"]
    assert "1 kept only by snapshots left out" in result.output
    verified = CliRunner().invoke(main, ["fsimage", "verify", str(tmp_path / "fsimage")])
    assert verified.exit_code == 0, verified.output
