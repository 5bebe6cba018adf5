"""Tree.apply, the one apply path (namespace/tree.py): applying what the live path logged
rebuilds the same tree (the property test drives a namespace with random requests, collects
the ops, and compares full dumps; tests/namenode/image/test_startup.py replays them from an
edits file, tests/namenode/image/test_columns.py from an image), every op code has its
applier, the directory index, and the memory a removed subtree gives back."""

from __future__ import annotations

import ast
import gc
import inspect
import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nnlite.formats import edits
from nnlite.namenode import errors
from nnlite.namenode.namespace import delete, rename
from nnlite.namenode.namespace.inode import ROOT_INODE_ID, INode, walk
from tests.namenode.helpers import SUPER, apply_ops, check_invariants, dump, write_file
from tests.namenode.random_requests import PROPERTY, REQUESTS, fresh, play, run, seed


@PROPERTY
@given(st.lists(REQUESTS, min_size=15, max_size=60))
def test_applying_the_logged_ops_rebuilds_the_same_tree(requests):
    live, ops = play(requests)
    replica = fresh()
    apply_ops(replica, *ops)
    assert dump(replica) == dump(live)


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
            delete.delete(ns, "/gone", True, SUPER)
            removed = 7                      # gone, a, b, c and three files
        elif how == "rename over":
            rename.rename(ns, "/other/x", "/dst/x", True, SUPER)
            removed = 1                      # the empty /dst/x it replaced
        else:
            delete.delete_many(ns, ["/gone", "/other"], SUPER)
            removed = 10                     # the 7 above, other, x, f4
        assert _live_inodes() == before - removed
    finally:
        if enabled:
            gc.enable()


# ----------------------------------------------------------------------------- inodes by id

@PROPERTY
@given(st.lists(REQUESTS, max_size=30), st.lists(REQUESTS, min_size=5, max_size=30))
def test_inode_by_id_answers_the_inodes_in_the_tree_and_no_other(before, after):
    """Tree.inode (FSDirectory.getInode): the map built part way through follows every
    inode created, renamed, overwritten or removed after it."""
    ns = fresh()
    seed(ns)
    for req in before:
        run(ns, req)
    assert ns.tree.inode(ROOT_INODE_ID) is ns.tree.root          # builds the map
    for req in after:
        run(ns, req)
    live = {node.id: node for node in walk(ns.tree.root)}
    assert ns.tree._ids == live            # every removal dropped its inodes: no leak
    for inode_id in range(ROOT_INODE_ID, ns.tree.last_inode_id + 2):
        assert ns.tree.inode(inode_id) is live.get(inode_id)
