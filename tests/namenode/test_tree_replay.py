"""Replaying what the live path logged rebuilds the same tree, three ways: ``apply`` of the ops,
an edits file read back through ``startup.replay``, and an fsimage saved and loaded.

The property tests drive a namespace with random requests (typed refusals are part of the
game: each must leave the tree unchanged), collect the ops, and compare full dumps."""

from __future__ import annotations

import ast
import gc
import inspect
import itertools
import os
import tempfile
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nnlite.formats import edits
from nnlite.formats.errors import TxidGapError
from nnlite.namenode import errors
from nnlite.namenode.image import columns, startup
from nnlite.namenode.namespace import acl
from nnlite.namenode.namespace.inode import INode
from nnlite.namenode.namespace.namespace import Namespace
from tests.namenode.helpers import (
    ALICE,
    BOB,
    CLIENT,
    SUPER,
    apply_ops,
    check_invariants,
    dump,
    write_file,
)

START_MS = 1000


def counting_clock():
    """A clock that ticks one millisecond per reading, the same for every fresh namespace."""
    return itertools.count(START_MS).__next__


def fresh() -> Namespace:
    return Namespace(clock=counting_clock())


# ----------------------------------------------------------------------------- requests

# The seed's paths, paths one step away from them, and a few deeper ones.
PATHS = ["/a", "/a/b", "/a/f", "/b", "/b/c", "/c", "/c/a", "/a/g", "/a/b/c", "/a/b/f", "/b/a",
         "/c/b", "/c/a/x", "/d"]
paths = st.sampled_from(PATHS)
any_paths = st.sampled_from(PATHS + ["/"])
files_in_a = st.sampled_from(["/a/f", "/a/g", "/a/h"])      # concat wants siblings
xattr_paths = st.sampled_from(["/", "/a", "/a/f", "/b/c"])
open_paths = st.one_of(st.just("/b/c"), paths)              # /b/c is under construction
callers = st.sampled_from([SUPER, SUPER, SUPER, ALICE, BOB])
perms = st.sampled_from([0o755, 0o700, 0o777, 0o1777, 0o500, 0o000])
xattr_names = st.sampled_from(["user.a", "trusted.c"])
quotas = st.sampled_from([None, -1, 2, 3, 6, 100, 1000])
times = st.integers(-1, 10_000)
acl_specs = st.sampled_from([acl.parse_spec(text, True) for text in (
    "", "user:alice:rwx", "group:staff:r-x,mask::rwx", "default:user:bob:rwx,default:group::r-x",
    "user::rwx,group::r--,other::---,default:user::rwx,default:group::---,default:other::---,"
    "default:user:alice:r-x")])
acl_removals = st.sampled_from([acl.parse_spec(text, False) for text in (
    "user:alice:", "mask::", "default:user:bob:,default:mask::")])


def request(kind: str, *args):
    return st.tuples(st.just(kind), *args)


REQUESTS = st.one_of(
    request("mkdirs", paths, perms, callers),
    request("create", paths, callers, perms, st.booleans(), st.booleans(),
            st.integers(1, 3), st.sampled_from(["", CLIENT])),
    request("delete", any_paths, st.booleans(), callers),
    request("delete_many", st.lists(any_paths, max_size=3), callers),
    request("rename_legacy", any_paths, any_paths, callers),
    request("rename", any_paths, any_paths, st.booleans(), callers),
    request("set_permission", paths, perms, callers),
    request("set_owner", paths, st.sampled_from([None, "alice", "bob"]),
            st.sampled_from([None, "staff", "other"]), callers),
    request("set_times", paths, times, times, callers),
    request("set_replication", paths, st.integers(1, 3), callers),
    request("set_quota", any_paths, quotas, quotas, callers),
    request("set_xattr", xattr_paths, xattr_names, st.binary(max_size=8), st.integers(1, 3),
            callers),
    request("remove_xattr", xattr_paths, xattr_names, callers),
    request("change_acl", xattr_paths, st.sampled_from(["set", "modify"]), acl_specs, callers),
    request("change_acl", xattr_paths, st.just("remove"), acl_removals, callers),
    request("change_acl", xattr_paths, st.sampled_from(["remove_default", "remove_all"]),
            st.just([]), callers),
    request("mkdirs_unmasked", paths, perms, callers, perms),
    request("truncate", st.one_of(files_in_a, paths), st.integers(0, 200), callers),
    request("concat", files_in_a, st.lists(st.one_of(files_in_a, paths), min_size=1,
                                           max_size=2), callers),
    request("add_block", open_paths, st.integers(0, 200)),
    request("update_blocks", open_paths, st.integers(0, 200)),
    request("close", open_paths, st.binary(max_size=4)),
)


def run(ns: Namespace, req) -> list:
    """Perform one request; returns its ops ([] when it changed nothing or was refused)."""
    kind, *args = req
    before = dump(ns)
    try:
        if kind in BLOCK_OPS:
            return apply_ops(ns, *BLOCK_OPS[kind](ns, *args))
        if kind == "mkdirs_unmasked":
            path, perm, caller, unmasked = args
            return ns.mkdirs(path, perm, caller, unmasked)[1]
        if kind == "create":
            path, caller, perm, overwrite, parent, rep, client = args
            return ns.create(path, caller, permission=perm, overwrite=overwrite,
                             create_parent=parent, replication=rep, client_name=client)[1]
        return getattr(ns, kind)(*args)[1]
    except errors.NamenodeError:
        assert dump(ns) == before, f"refused {req} changed the tree"
        return []


def _inode_id(ns: Namespace, path: str) -> int:
    node = ns.tree.lookup(tuple(path.split("/")[1:]))
    return node.id if node is not None else 0


def _add_block(ns, path, size):
    return [edits.AddBlockOp(path, _inode_id(ns, path), (ns.tree.last_block_id + 1, size, 7))]


def _update_blocks(ns, path, size):
    blocks = ((ns.tree.last_block_id + 1, size, 8), (ns.tree.last_block_id + 2, size // 2, 8))
    return [edits.UpdateBlocksOp(path, _inode_id(ns, path), blocks)]


def _close(ns, path, checksum):
    node = ns.tree.lookup(tuple(path.split("/")[1:]))
    blocks = getattr(node, "blocks", ())
    length = sum(b[1] for b in blocks)
    return [edits.CloseFileOp(path, _inode_id(ns, path), length, 4000, 4001, blocks, checksum)]


BLOCK_OPS = {"add_block": _add_block, "update_blocks": _update_blocks, "close": _close}


def seed(ns: Namespace) -> list:
    """A starting tree, so that random requests meet something: most of PATHS exist, /a is
    open to everyone and holds three files, /b/c is under construction."""
    ops = ns.mkdirs("/a/b", 0o777, SUPER)[1] + ns.set_permission("/a", 0o777, SUPER)[1]
    ops += ns.mkdirs("/c/b", 0o755, SUPER)[1]
    for path, sizes, replication in (("/a/f", (100, 50), 1), ("/a/g", (10,), 1),
                                     ("/a/h", (40, 40), 2),
                                     ("/a/b/f", (20,), 3), ("/b/a", (5,), 1),
                                     ("/c/a", (30,), 2)):
        ops += write_file(ns, path, sizes=sizes, replication=replication)
    return ops + ns.create("/b/c", SUPER, client_name=CLIENT)[1]


def play(requests) -> tuple[Namespace, list]:
    ns = fresh()
    ops = seed(ns)
    for req in requests:
        ops += run(ns, req)
    check_invariants(ns)
    return ns, ops


# ----------------------------------------------------------------------------- properties

PROPERTY = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@PROPERTY
@given(st.lists(REQUESTS, min_size=15, max_size=60))
def test_applying_the_logged_ops_rebuilds_the_same_tree(requests):
    live, ops = play(requests)
    replica = fresh()
    apply_ops(replica, *ops)
    assert dump(replica) == dump(live)


@settings(PROPERTY, max_examples=100)
@given(st.lists(REQUESTS, min_size=15, max_size=60))
def test_replaying_an_edits_file_rebuilds_the_same_tree(requests):
    live, ops = play(requests)
    replica = fresh()
    with tempfile.TemporaryDirectory() as tmp:
        path = write_edits(os.path.join(tmp, "edits"), ops)
        reader, count = startup.replay(replica.tree, path, 0, 1)
    assert (count, reader.last_txid, reader.torn_tail) == (len(ops), len(ops), None)
    assert dump(replica) == dump(live)


@settings(PROPERTY, max_examples=100)
@given(st.lists(REQUESTS, min_size=15, max_size=60))
def test_an_image_round_trip_keeps_the_same_tree(requests):
    live, ops = play(requests)
    loaded, meta = round_trip(live, last_txid=len(ops))
    assert meta.last_txid == len(ops)
    assert dump(loaded) == dump(live)
    check_invariants(loaded)


def write_edits(path: str, ops, first_txid: int = 1) -> str:
    writer = edits.EditsWriter.create(path, first_txid)
    for txid, op in enumerate(ops, first_txid):
        writer.write(edits.encode_record(txid, op))
    writer.close()
    return path


def round_trip(ns: Namespace, last_txid: int = 0):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fsimage")
        info = columns.save(ns.tree, path, 42, last_txid)
        return load_image(path, info.md5_hex)


def load_image(path: str, md5: str):
    """The tree of an image, with the requests on it (a Namespace on a counting clock)."""
    tree, meta = columns.load(path, md5)
    return Namespace(tree, clock=counting_clock()), meta


# ----------------------------------------------------------------------------- image, in full

def rich_namespace() -> Namespace:
    """Every attribute the image must carry: quotas (root included), xattrs (root included),
    blocks, checksums, files under construction, sticky and set-id bits, odd names."""
    ns = fresh()
    ns.mkdirs("/q/sub", 0o1770, SUPER)
    ns.set_owner("/q", "alice", "staff", SUPER)
    ns.set_quota("/", 1000, None, SUPER)
    ns.set_quota("/q", 10, 10_000, SUPER)
    ns.set_quota("/q/sub", None, 5000, SUPER)
    write_file(ns, "/q/sub/done", sizes=(100, 50), replication=3, checksum=b"\x00md5")
    write_file(ns, "/q/nochecksum", sizes=(1,), checksum=b"")
    ns.create("/q/open", ALICE, client_name=CLIENT, client_machine="host-1")
    apply_ops(ns, edits.AddBlockOp("/q/open", ns.tree.get("/q/open").id, (500, 64, 9)))
    ns.create("/q/open-empty", BOB, client_name="other-client")
    ns.create("/数据 with space", SUPER, permission=0o6755)
    ns.set_times("/数据 with space", 5, 123456789, SUPER)
    ns.set_xattr("/", "user.root", b"r", 1, SUPER)
    ns.set_xattr("/q", "trusted.t", bytes(range(256)), 1, SUPER)
    ns.set_xattr("/q/sub/done", "user.empty", b"", 1, SUPER)
    ns.change_acl("/q", "modify", acl.parse_spec(
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
    ns.delete("/a", True, SUPER)
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
        target.rename("/q/sub", "/moved", False, SUPER)
        target.concat("/moved/done", ["/moved/more"], SUPER)
    assert dump(loaded) == dump(ns)


# ----------------------------------------------------------------------------- replay errors

def test_replay_skips_records_the_image_already_holds():
    ops = [edits.MkdirOp("/a", 16386, 0o755, "u", "g", 5), edits.MkdirOp("/b", 16387, 0o755, "u", "g", 6)]
    replica = fresh()
    apply_ops(replica, ops[0])
    with tempfile.TemporaryDirectory() as tmp:
        _, count = startup.replay(replica.tree, write_edits(os.path.join(tmp, "e"), ops), 1, 2)
    assert count == 1 and replica.tree.get("/b").id == 16387


def test_replay_of_an_op_that_does_not_fit_is_a_replay_error():
    ops = [edits.MkdirOp("/a", 16386, 0o755, "u", "g", 5), edits.DeleteOp("/missing", 6)]
    with tempfile.TemporaryDirectory() as tmp:
        path = write_edits(os.path.join(tmp, "e"), ops)
        with pytest.raises(errors.ReplayError) as info:
            startup.replay(fresh().tree, path, 0, 1)
    assert "txid 2" in str(info.value) and isinstance(info.value.__cause__,
                                                      errors.PathNotFoundError)


def test_replay_of_edits_that_start_too_late_is_a_gap():
    with tempfile.TemporaryDirectory() as tmp:
        path = write_edits(os.path.join(tmp, "e"), [edits.StartLogSegmentOp()], first_txid=5)
        with pytest.raises(TxidGapError):
            startup.replay(fresh().tree, path, 0, 1)


# ----------------------------------------------------------------------------- appliers

def test_every_op_code_has_an_applier_unpacking_its_fields_in_order():
    ns = fresh()
    assert set(ns.tree.appliers) == set(edits.OPS)
    for code, cls in edits.OPS.items():
        if cls.FIELDS:
            assert unpacked_names(ns.tree.appliers[code]) == ("_op", "_txid", *cls.FIELDS), cls


def unpacked_names(applier) -> tuple:
    """The names of the applier's ``... = record`` unpacking (a trailing _ dropped)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(applier)))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and getattr(node.value, "id", None) == "record":
            return tuple(t.id.rstrip("_") for t in node.targets[0].elts)
    return ()


def test_apply_passes_the_record_payload():
    op = edits.MkdirOp("/a", 16386, 0o755, "u", "g", 5)
    assert op.payload(9) == (edits.OpCode.MKDIR, 9, *op.values())
    ns = fresh()
    ns.tree.appliers[edits.OpCode.MKDIR](op.payload(9))
    assert ns.tree.get("/a").id == 16386


def mkdir_op(path: str, inode_id: int) -> edits.MkdirOp:
    return edits.MkdirOp(path, inode_id, 0o755, "u", "g", 5)


def file_op(path: str, inode_id: int) -> edits.AddFileOp:
    return edits.AddFileOp(path, inode_id, 1, 1024, 0, 0o644, "u", "g", 5, 5, False, "", "")


@pytest.mark.parametrize("move", [
    edits.RenameOp("/a", "/c", 6, False),
    edits.RenameOldOp("/a", "/c", 6),
    edits.DeleteOp("/a", 6),
    edits.DeleteManyOp(("/a",), 6),
])
def test_the_directory_index_forgets_a_moved_or_deleted_directory(move):
    ns = fresh()
    apply_ops(ns, mkdir_op("/a/b", 16386), file_op("/a/b/f", 16388))  # /a/b is now known
    apply_ops(ns, move)
    with pytest.raises(errors.PathNotFoundError):
        ns.tree.apply(file_op("/a/b/g", 16389))
    with pytest.raises(errors.PathNotFoundError):
        ns.tree.apply(edits.SetTimesOp("/a/b/f", 7, 7))
    if isinstance(move, (edits.RenameOp, edits.RenameOldOp)):
        apply_ops(ns, file_op("/c/b/g", 16389))
        assert ns.tree.get("/c/b/g").parent is ns.tree.get("/c/b")
    check_invariants(ns)


def test_the_directory_index_is_used_only_for_plain_names():
    ns = fresh()
    apply_ops(ns, mkdir_op("/a", 16386), file_op("/a/f", 16387))
    for bad in ("/a/.", "/a/..", "/a/x:y", "/a/x\0", "/a/" + "x" * 256, "a/f", "/a//f"):
        with pytest.raises(errors.InvalidPathError):
            ns.tree.apply(file_op(bad, 16390))
    apply_ops(ns, file_op("/a/é", 16390), file_op("/a/b/", 16391))
    assert ns.tree.get("/a/é").id == 16390 and ns.tree.get("/a/b").id == 16391
    check_invariants(ns)


def test_a_full_directory_index_starts_over():
    ns = fresh()
    ops = [mkdir_op(f"/d{i}", 16386 + i) for i in range(3000)]
    apply_ops(ns, *ops, *(file_op(f"/d{i}/f", 20000 + i) for i in range(3000)))
    assert len(ns.tree._dir_index) <= 1024 and ns.tree.files == 3000
    check_invariants(ns)


def test_new_file_builds_what_the_inode_file_class_builds():
    from nnlite.namenode.namespace.inode import INodeFile, new_file
    parent = fresh().tree.root
    args = (16390, parent, "f", 0o644, "u", "g", 5, 6, 3, 1024, 77)
    fast, slow = new_file(*args, "client", "host"), INodeFile(*args, (), None, "client", "host")
    slots = [s for cls in INodeFile.__mro__ for s in getattr(cls, "__slots__", ())]
    assert [getattr(fast, s) for s in slots] == [getattr(slow, s) for s in slots]


def test_directories_made_after_the_index_starts_over_find_their_parent_in_it():
    ns = fresh()
    apply_ops(ns, *(mkdir_op(f"/p/d{i}", 16386 + 2 * i) for i in range(2000)))
    assert "/p" in ns.tree._dir_index and ns.tree.dirs == 2002


# ----------------------------------------------------------------------------- memory

def _live_inodes() -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, INode))


@pytest.mark.parametrize("how", ["delete", "rename over", "delete_many"])
def test_a_removed_subtree_is_freed_without_the_cyclic_collector(how):
    """The namenode freezes its loaded tree out of the cyclic collector's reach, which never
    frees a frozen cycle; so removing a subtree must leave no cycle: with the collector off,
    reference counting alone frees every inode of it."""
    ns = fresh()
    for d in ("/keep", "/gone/a/b", "/gone/c", "/other/x", "/dst/x"):
        ns.mkdirs(d, 0o755, SUPER)
    for f in ("/gone/a/f1", "/gone/a/b/f2", "/gone/c/f3", "/other/x/f4"):
        write_file(ns, f)
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        before = _live_inodes()
        if how == "delete":
            ns.delete("/gone", True, SUPER)
            removed = 7                      # gone, a, b, c and three files
        elif how == "rename over":
            ns.rename("/other/x", "/dst/x", True, SUPER)
            removed = 1                      # the empty /dst/x it replaced
        else:
            ns.delete_many(["/gone", "/other"], SUPER)
            removed = 10                     # the 7 above, other, x, f4
        assert _live_inodes() == before - removed
    finally:
        if enabled:
            gc.enable()
