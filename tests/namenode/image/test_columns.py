"""The fsimage of a tree (image/columns.py): saved and loaded, it is the same tree (the
property test of tests/namenode/namespace/test_tree.py, through an image), it keeps every
attribute, the last ids and the snapshot counter, and a loaded tree goes on as the original
does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from nnlite.formats import edits
from nnlite.namenode.image import columns
from nnlite.namenode.namespace import acl, acl_ops, attributes, delete, rename, snapshot_ops, xattrs
from nnlite.namenode.namespace.namespace import Namespace
from tests.namenode.helpers import (
    ALICE,
    BOB,
    CLIENT,
    SUPER,
    apply_ops,
    check_invariants,
    dump,
    new_ns,
    write_file,
)
from tests.namenode.random_requests import (
    PROPERTY,
    REQUESTS,
    counting_clock,
    fresh,
    play,
    round_trip,
)


@settings(PROPERTY, max_examples=100)
@given(st.lists(REQUESTS, min_size=15, max_size=60))
def test_an_image_round_trip_keeps_the_same_tree(requests):
    live, ops = play(requests)
    loaded, meta = round_trip(live, last_txid=len(ops))
    assert meta.last_txid == len(ops)
    assert dump(loaded) == dump(live)
    check_invariants(loaded)


# ----------------------------------------------------------------------------- image, in full

def rich_namespace() -> Namespace:
    """Every attribute the image must carry: quotas (root included), xattrs (root included),
    blocks, checksums, files under construction, sticky and set-id bits, odd names."""
    ns = fresh()
    ns.mkdirs("/q/sub", 0o1770, SUPER)
    attributes.set_owner(ns, "/q", "alice", "staff", SUPER)
    attributes.set_quota(ns, "/", 1000, None, SUPER)
    attributes.set_quota(ns, "/q", 10, 10_000, SUPER)
    attributes.set_quota(ns, "/q/sub", None, 5000, SUPER)
    write_file(ns, "/q/sub/done", sizes=(100, 50), replication=3, checksum=b"\x00md5")
    write_file(ns, "/q/nochecksum", sizes=(1,), checksum=b"")
    ns.create("/q/open", ALICE, client_name=CLIENT, client_machine="host-1")
    apply_ops(ns, edits.AddBlockOp("/q/open", ns.tree.get("/q/open").id, (500, 64, 9)))
    ns.create("/q/open-empty", BOB, client_name="other-client")
    ns.create("/数据 with space", SUPER, permission=0o6755)
    attributes.set_times(ns, "/数据 with space", 5, 123456789, SUPER)
    xattrs.set_xattr(ns, "/", "user.root", b"r", 1, SUPER)
    xattrs.set_xattr(ns, "/q", "trusted.t", bytes(range(256)), 1, SUPER)
    xattrs.set_xattr(ns, "/q/sub/done", "user.empty", b"", 1, SUPER)
    acl_ops.change_acl(ns, "/q", "modify", acl.parse_spec(
        "user:bob:r-x,default:user:bob:rwx,default:group:staff:r-x", True), SUPER)
    ns.mkdirs("/q/inherits/deeper", 0o755, SUPER, 0o777)
    ns.create("/q/inherits/f", SUPER, unmasked=0o666)
    return ns


def test_an_image_keeps_every_attribute():
    ns = rich_namespace()
    loaded, meta = round_trip(ns, last_txid=77)
    assert dump(loaded) == dump(ns)
    assert (meta.namespace_id, meta.last_txid, meta.inode_count) == (42, 77, 11)
    assert loaded.tree.get("/q/inherits/f").acl == ns.tree.get("/q/inherits/f").acl is not None
    assert loaded.tree.root.xattrs == {"user.root": b"r"}
    assert loaded.tree.get("/q/open").client_machine == "host-1"
    check_invariants(loaded)


def test_an_image_keeps_the_last_ids_of_deleted_inodes_and_blocks():
    ns = fresh()
    write_file(ns, "/a/f", sizes=(10, 10))
    delete.delete(ns, "/a", True, SUPER)
    loaded, _ = round_trip(ns)
    assert (loaded.tree.last_inode_id, loaded.tree.last_block_id) == (ns.tree.last_inode_id, 2)
    loaded.mkdirs("/b", 0o755, SUPER)
    assert loaded.tree.get("/b").id == ns.tree.last_inode_id + 1


def test_an_empty_namespace_round_trips():
    ns = fresh()
    assert dump(round_trip(ns)[0]) == dump(ns)


def test_a_loaded_image_continues_like_the_original():
    ns = rich_namespace()
    loaded, _ = round_trip(ns)
    for target in (ns, loaded):
        target.clock = counting_clock()
        write_file(target, "/q/sub/more", sizes=(200,), replication=3)
        rename.rename(target, "/q/sub", "/moved", False, SUPER)
        target.concat("/moved/done", ["/moved/more"], SUPER)
    assert dump(loaded) == dump(ns)


def test_the_snapshot_counter_survives_an_image_without_snapshots(tmp_path):
    """SnapshotManager's snapshotCounter: after a restart from an image that holds no
    snapshot, a new one still takes the next id, never one handed out before."""
    ns = new_ns()
    ns.mkdirs("/s", 0o755, SUPER)
    snapshot_ops.allow_snapshot(ns, "/s", SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "a", SUPER)
    snapshot_ops.delete_snapshot(ns, "/s", "a", SUPER)
    snapshot_ops.disallow_snapshot(ns, "/s", SUPER)
    info = columns.save(ns.tree, str(tmp_path / "fsimage"), 42, 9)
    loaded, _ = columns.load(str(tmp_path / "fsimage"), info.md5_hex)
    assert loaded.snapshots.last_id == 1
