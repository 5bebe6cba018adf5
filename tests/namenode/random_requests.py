"""The property tests' random namespace requests and the three ways to rebuild what they
logged: ``apply`` of the ops (namespace/tree.py), an edits file read back through
``startup.replay`` (image/startup.py), and an fsimage saved and loaded (image/columns.py).

``play(requests)`` drives a fresh namespace with random requests from ``REQUESTS`` (typed
refusals are part of the game: each must leave the tree unchanged) and returns it with the
ops it logged; ``write_edits``, ``round_trip`` and ``load_image`` build the replicas the tests
compare with it (tests/namenode/namespace/test_tree.py, tests/namenode/image/test_startup.py,
tests/namenode/image/test_columns.py, tests/namenode/namespace/test_snapshot.py)."""

from __future__ import annotations

import itertools
import os
import tempfile

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from nnlite.formats import edits
from nnlite.namenode import errors
from nnlite.namenode.image import columns
from nnlite.namenode.namespace import acl, acl_ops, attributes, delete, rename, xattrs
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


# The requests of the op families (functions taking the namespace); the others are its methods.
FAMILY_REQUESTS = {
    "delete": delete.delete, "delete_many": delete.delete_many,
    "rename_legacy": rename.rename_legacy, "rename": rename.rename,
    "set_permission": attributes.set_permission, "set_owner": attributes.set_owner,
    "set_times": attributes.set_times, "set_replication": attributes.set_replication,
    "set_quota": attributes.set_quota, "set_xattr": xattrs.set_xattr,
    "remove_xattr": xattrs.remove_xattr, "change_acl": acl_ops.change_acl,
}


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
        return FAMILY_REQUESTS[kind](ns, *args)[1] if kind in FAMILY_REQUESTS else \
            getattr(ns, kind)(*args)[1]
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
    ops = ns.mkdirs("/a/b", 0o777, SUPER)[1] + attributes.set_permission(ns, "/a", 0o777, SUPER)[1]
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


PROPERTY = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


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
