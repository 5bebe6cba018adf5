"""Rename requests, as Hadoop's ``FSDirRenameOp``: ``rename`` (false where HDFS answers false)
and ``rename2`` (a typed error for every refusal, an optional overwrite).

Each function takes the ``Namespace`` it acts on and returns ``(result, ops)``
(``namespace.py``)."""

from __future__ import annotations

from nnlite.formats import edits
from nnlite.namenode import errors
from nnlite.namenode.namespace import paths, reserved, snapshot_ops
from nnlite.namenode.namespace import permission as access
from nnlite.namenode.namespace.inode import INode
from nnlite.namenode.namespace.namespace import Applied, Namespace
from nnlite.namenode.namespace.permission import Caller


def rename_legacy(ns: Namespace, src: str, dst: str, caller: Caller) -> Applied[bool]:
    """HDFS ``rename``: False (and no change) where HDFS answers false."""
    src, dst = ns.resolve(src, caller, True), ns.resolve(dst, caller, True)
    src_parts, dst_parts = paths.split(src), paths.split(dst)
    ns.check_writable(src_parts, src)
    ns.check_writable(dst_parts, dst)
    src_nodes = ns.existing(src_parts)
    if not src_parts or len(src_nodes) != len(src_parts) + 1:
        return False, []
    snapshot_ops.check_no_snapshots(ns, src_nodes[-1])
    try:
        dst_nodes = ns.tree.resolve(dst_parts)
    except errors.ParentNotDirectoryError:
        return False, []
    if len(dst_nodes) == len(dst_parts) + 1 and dst_nodes[-1].is_dir:
        dst_parts = dst_parts + (src_parts[-1],)
        dst_nodes = ns.tree.resolve(dst_parts)
    if dst_parts == src_parts:
        return True, []
    if (not dst_parts or paths.is_ancestor(src_parts, dst_parts)
            or len(dst_nodes) != len(dst_parts) or not dst_nodes[-1].is_dir):
        return False, []
    _check_move(caller, src_nodes, dst_nodes[:len(dst_parts)], src)
    if len(dst_parts) == 1:
        reserved.check_name(dst_parts, dst)
    op = edits.RenameOldOp(paths.join(src_parts), paths.join(dst_parts), ns.clock())
    return True, ns.apply(op)


def rename(ns: Namespace, src: str, dst: str, overwrite: bool, caller: Caller) -> Applied[bool]:
    """HDFS ``rename2``: every refusal is a typed error."""
    src, dst = ns.resolve(src, caller, True), ns.resolve(dst, caller, True)
    src_parts, dst_parts = paths.split(src), paths.split(dst)
    if not src_parts or not dst_parts:
        raise errors.NamenodeError("Rename source or destination cannot be the root",
                                   path=src)
    ns.check_writable(src_parts, src)
    ns.check_writable(dst_parts, dst)
    src_nodes = ns.existing(src_parts)
    if len(src_nodes) != len(src_parts) + 1:
        raise errors.PathNotFoundError(f"rename source {src} is not found.", path=src)
    snapshot_ops.check_no_snapshots(ns, src_nodes[-1])
    if src_parts == dst_parts:
        raise errors.FileAlreadyExistsError(
            f"The source {src} and destination {dst} are the same", path=src)
    if paths.is_ancestor(src_parts, dst_parts):
        raise errors.NamenodeError(
            f"Rename destination {dst} is a directory or file under source {src}", path=src)
    dst_nodes = _rename2_destination(ns, src_nodes[-1], dst_parts, dst, overwrite)
    # An overwritten destination asks only WRITE on its parent, not the sticky bit: the
    # checker is given the source's parent access alone (FSDirRenameOp.renameTo).
    _check_move(caller, src_nodes, dst_nodes[:len(dst_parts)], src)
    if len(dst_parts) == 1:
        reserved.check_name(dst_parts, dst)
    op = edits.RenameOp(paths.join(src_parts), paths.join(dst_parts), ns.clock(), overwrite)
    return True, ns.apply(op)


def _rename2_destination(ns: Namespace, node: INode, dst_parts: tuple, dst: str,
                         overwrite: bool) -> list[INode]:
    try:
        dst_nodes = ns.tree.resolve(dst_parts)
    except errors.ParentNotDirectoryError as exc:
        raise errors.ParentNotDirectoryError(
            f"rename destination parent {paths.join(dst_parts[:-1])} is a file.",
            path=dst) from exc
    if len(dst_nodes) < len(dst_parts):
        raise errors.PathNotFoundError(
            f"rename destination parent {paths.join(dst_parts[:-1])} not found.", path=dst)
    if not dst_nodes[len(dst_parts) - 1].is_dir:
        raise errors.ParentNotDirectoryError(
            f"rename destination parent {paths.join(dst_parts[:-1])} is a file.", path=dst)
    if len(dst_nodes) == len(dst_parts) + 1:
        existing = dst_nodes[-1]
        if not overwrite:
            raise errors.FileAlreadyExistsError(
                f"rename destination {dst} already exists", path=dst)
        if existing.is_dir != node.is_dir:
            kind = "directories" if node.is_dir else "files"
            raise errors.NamenodeError(
                f"Source {node.path()} and destination {dst} must both be {kind}", path=dst)
        if existing.is_dir and existing.children:
            raise errors.NamenodeError(
                f"rename destination directory is not empty: {dst}", path=dst)
        snapshot_ops.check_no_snapshots(ns, existing)       # FSDirRenameOp.validateOverwrite
    return dst_nodes


def _check_move(caller: Caller, src_nodes: list[INode], dst_dirs: list[INode],
                src: str) -> None:
    """``dst_dirs``: the root down to the destination's parent."""
    access.check_traverse(caller, src_nodes[:-1])
    access.check(caller, src_nodes[-2], access.WRITE | access.EXECUTE)
    access.check_sticky(caller, src_nodes[-2], src_nodes[-1], src)
    access.check_traverse(caller, dst_dirs[:-1])
    access.check(caller, dst_dirs[-1], access.WRITE | access.EXECUTE)

