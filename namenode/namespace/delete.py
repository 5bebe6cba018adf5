"""Delete requests, as Hadoop's ``FSDirDeleteOp``: one path (DELETE), several subtrees in one
op (the catalog's retention), and the checks of a recursive delete on their own.

Each function takes the ``Namespace`` it acts on and returns ``(result, ops)``
(``namespace.py``)."""

from __future__ import annotations

from collections.abc import Iterable

from nnlite.formats import edits
from nnlite.namenode import errors
from nnlite.namenode.namespace import paths, reserved, snapshot_ops
from nnlite.namenode.namespace import permission as access
from nnlite.namenode.namespace.inode import INode
from nnlite.namenode.namespace.namespace import Applied, Namespace
from nnlite.namenode.namespace.permission import Caller


def delete(ns: Namespace, path: str, recursive: bool, caller: Caller) -> Applied[bool]:
    reserved.check_not_exact(path)
    path = ns.resolve(path, caller, write=True)
    parts = paths.split(path)
    ns.check_writable(parts, path)
    nodes = ns.existing(parts)
    found = len(nodes) == len(parts) + 1
    access.check_traverse(caller, nodes[:-1] if found else nodes)
    if not parts and ns.tree.root.children and not recursive:
        raise errors.PathIsNotEmptyDirectoryError(
            "`/ is non empty': Directory is not empty", path="/")
    if not parts or not found:
        return False, []
    node, parent = nodes[-1], nodes[-2]
    if node.is_dir and node.children and not recursive:
        raise errors.PathIsNotEmptyDirectoryError(
            f"`{path} is non empty': Directory is not empty", path=path)
    _check_removal(caller, parent, node, path)
    snapshot_ops.check_no_snapshots(ns, node)
    return True, ns.apply(edits.DeleteOp(paths.join(parts), ns.clock()))


def delete_many(ns: Namespace, targets: Iterable[str], caller: Caller) -> Applied[int]:
    """Delete several paths (recursively) in one op: each must exist and pass the checks
    of a recursive delete, or nothing is deleted. A path under another listed path is
    dropped (deleting the ancestor removes it). Returns how many subtrees were deleted."""
    targets = [ns.resolve(t, caller, write=True) for t in targets]
    chosen: list[tuple] = []
    for parts in sorted({paths.split(t) for t in targets}):
        if chosen and paths.is_ancestor(chosen[-1], parts):
            continue
        chosen.append(parts)
    for parts in chosen:
        check_delete(ns, parts, caller)
    if not chosen:
        return 0, []
    op = edits.DeleteManyOp(tuple(paths.join(p) for p in chosen), ns.clock())
    return len(chosen), ns.apply(op)


def check_delete(ns: Namespace, parts: tuple, caller: Caller) -> None:
    """The checks of a recursive DELETE of ``parts`` (raises what DELETE would)."""
    path = paths.join(parts)
    if not parts:
        raise errors.IllegalArgumentError("The root directory cannot be deleted", path="/")
    ns.check_writable(parts, path)
    nodes = ns.existing(parts)
    access.check_traverse(caller, nodes[:-1])
    if len(nodes) != len(parts) + 1:
        raise errors.PathNotFoundError(f"File does not exist: {path}", path=path)
    _check_removal(caller, nodes[-2], nodes[-1], path)
    snapshot_ops.check_no_snapshots(ns, nodes[-1])


def _check_removal(caller: Caller, parent: INode, node: INode, path: str) -> None:
    """What deleting ``node`` from ``parent`` asks of the caller, as HDFS's delete does."""
    access.check(caller, parent, access.WRITE | access.EXECUTE)
    access.check_sticky(caller, parent, node, path)
    access.check_subtree(caller, node, access.ALL, skip_empty=True)

