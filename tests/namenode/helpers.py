"""Shared helpers for the namenode tests: callers, a structural dump of a namespace, invariant
checks, and short ways to build files that the request API cannot build (blocks, leases).

``dump(ns)`` is a nested structure of plain values holding every attribute of every inode plus
the tree's counters, so two namespaces are equal exactly when their dumps are. The helpers take
a ``Namespace`` or the ``Tree`` alone (what the image code and the replays build).

``formatted(tmp_path, n)`` formats name dirs on a fixed clock and ``open_fs(dirs)`` opens an
in-process FSNamesystem on them as the superuser "hdfs" (USER): the tests of the namesystem,
the journal and the door open, close and reopen it themselves, since that is what they test.

``acked(fs)`` is an FSNamesystem whose writes return once durable, as the tests call them
(the synchronous wrappers the namesystem itself no longer keeps); ``mutate(fs, request)`` runs
any request on its namespace that way.
"""

from __future__ import annotations

import pytest

from nnlite.formats import edits
from nnlite.namenode.fsnamesystem import FSNamesystem, Identity, format_dirs
from nnlite.namenode.journal.journal import Logged
from nnlite.namenode.namespace import attributes
from nnlite.namenode.namespace.inode import usage, walk
from nnlite.namenode.namespace.namespace import Namespace
from nnlite.namenode.namespace.permission import Caller
from nnlite.namenode.namespace.tree import Tree
from nnlite.namenode.storage.namedir import NameDir

CLOCK_MS = 1000
SUPER = Caller("hdfs", frozenset({"supergroup"}), superuser=True)
ALICE = Caller("alice", frozenset({"staff"}))
BOB = Caller("bob", frozenset({"staff"}))
EVE = Caller("eve", frozenset({"guests"}))
CLIENT = "DFSClient_1"
HOME = "/home/alice"                            # alice's home in the request tests
USER = "hdfs"                                   # the superuser of open_fs's namesystems
IDENTITY = Identity(superuser=USER)

_COMMON = ("id", "name", "permission", "owner", "group", "mtime", "atime")
_FILE = ("replication", "block_size", "length", "blocks", "checksum", "client_name",
         "client_machine")


def new_ns(**kw) -> Namespace:
    """A namespace on a fixed clock (every time it hands out is CLOCK_MS)."""
    return Namespace(clock=lambda: CLOCK_MS, **kw)


def later(ns, ms: int = 2000) -> None:
    """Move the injected clock forward, to tell new times from old ones."""
    ns.clock = lambda: ms


def tree_of(ns) -> Tree:
    """The tree of a Namespace, or the Tree itself."""
    return ns if isinstance(ns, Tree) else ns.tree


def formatted(tmp_path, n: int = 1, names=None) -> list[str]:
    dirs = [str(tmp_path / name) for name in (names or [f"name{i}" for i in range(n)])]
    format_dirs([NameDir(d) for d in dirs], namespace_id=1234, clock=lambda: CLOCK_MS)
    return dirs


def open_fs(dirs) -> FSNamesystem:
    return FSNamesystem.open(dirs, IDENTITY, clock=lambda: CLOCK_MS)


class Acked:
    """``fs`` with every write waited for: ``acked(fs).mkdirs(...)`` is
    ``fs.durable(fs.mkdirs(...))``; what is not a write passes through."""

    def __init__(self, fs):
        self.fs = fs

    def __getattr__(self, name: str):
        op = getattr(self.fs, name)
        if not callable(op):
            return op

        def call(*args, **kw):
            result = op(*args, **kw)
            return self.fs.durable(result) if isinstance(result, Logged) else result
        return call


def acked(fs) -> Acked:
    return Acked(fs)


def mutate(fs, request):
    """Run ``request(namespace) -> (value, ops)`` as the namesystem runs its own requests
    (``FSNamesystem.write`` hands the catalog's view, not the namespace) and wait until
    durable."""
    return fs.durable(fs._write(request, fs.ns))


# ------------------------------------------------------------------------------- dumping

def dump(ns) -> dict:
    """Every inode attribute and every tree counter, as comparable plain values."""
    ns = tree_of(ns)
    return {"files": ns.files, "dirs": ns.dirs, "blocks": ns.block_count,
            "last_inode_id": ns.last_inode_id,
            "last_block_id": ns.last_block_id, "root": dump_node(ns.root)}


def dump_node(node) -> dict:
    out = {attr: getattr(node, attr) for attr in _COMMON}
    out["xattrs"] = dict(node.xattrs) if node.xattrs else None
    out["acl"] = node.acl
    if node.is_dir:
        q = node.quota
        out["quota"] = None if q is None else (q.ns_quota, q.ss_quota, q.ns_used, q.ss_used)
        out["children"] = {name: dump_node(child) for name, child in node.children.items()}
    else:
        out.update({attr: getattr(node, attr) for attr in _FILE})
    return out


def check_invariants(ns) -> None:
    """The invariants of inode.py and tree.py (parent links, counters, quota usage, the count
    of quota directories that lets quota walks be skipped), recomputed from scratch."""
    ns = tree_of(ns)
    files, dirs = _check_subtree(ns.root)
    assert (ns.files, ns.dirs) == (files, dirs)
    assert ns.block_count == sum(len(n.blocks) for n in walk(ns.root) if not n.is_dir)
    quotas = sum(1 for n in walk(ns.root) if n.is_dir and n.quota is not None)
    assert ns.quota_dirs == quotas


def _check_subtree(node) -> tuple[int, int]:
    if not node.is_dir:
        assert node.blocks == tuple(tuple(b) for b in node.blocks)
        return 1, 0
    if node.quota is not None:
        assert (node.quota.ns_used, node.quota.ss_used) == usage(node), node.path()
    files, dirs = 0, 1
    for name, child in node.children.items():
        assert child.parent is node and child.name == name
        f, d = _check_subtree(child)
        files, dirs = files + f, dirs + d
    return files, dirs


# ------------------------------------------------------------------------------- asserting

def refused(ns, error: type, call, *args, **kw) -> Exception:
    """``call`` raises exactly ``error`` and leaves the namespace as it was."""
    before = dump(ns)
    with pytest.raises(error) as info:
        call(*args, **kw)
    assert type(info.value) is error, f"{type(info.value).__name__}: {info.value}"
    assert dump(ns) == before
    return info.value


def answers_false(ns, call, *args, **kw) -> None:
    """``call`` returns ``(False, [])`` and leaves the namespace as it was."""
    before = dump(ns)
    assert call(*args, **kw) == (False, [])
    assert dump(ns) == before


# ------------------------------------------------------------------------------- building

def mkdir(ns, path: str, perm: int = 0o755, owner: str | None = None,
          group: str | None = None) -> None:
    """A directory made by the superuser, then handed to ``owner``/``group``."""
    ns.mkdirs(path, perm, SUPER)
    if owner or group:
        attributes.set_owner(ns, path, owner, group, SUPER)


def touch(ns, path: str, caller: Caller = SUPER, perm: int = 0o644, **kw) -> list:
    return ns.create(path, caller, permission=perm, **kw)[1]


def write_file(ns, path: str, sizes=(100,), replication: int = 1, caller: Caller = SUPER,
               checksum: bytes = b"\x01\x02") -> list:
    """Create a file under construction, add one block per size, close it. Returns the ops."""
    ops = ns.create(path, caller, replication=replication, client_name=CLIENT,
                    client_machine="10.0.0.1")[1]
    tree = ns.tree
    inode_id = tree.get(path).id
    for size in sizes:
        block = (tree.last_block_id + 1, size, 1001)
        ops += apply_ops(tree, edits.AddBlockOp(path, inode_id, block))
    node = tree.get(path)
    ops += apply_ops(ns, edits.CloseFileOp(path, inode_id, node.length, CLOCK_MS, CLOCK_MS,
                                       node.blocks, checksum))
    return ops


def apply_ops(ns, *ops) -> list:
    tree = tree_of(ns)
    for op in ops:
        tree.apply(op)
    return list(ops)
