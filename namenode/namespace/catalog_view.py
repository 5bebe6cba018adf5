"""What the checkpoint catalog (``catalog/``) sees of the namespace: a narrow view, not the
whole ``Namespace``.

The catalog reads checkpoint directories and changes them with a few namespace requests
planned together (retain, rollback, pin, gc, the job lifecycle), each run by
``FSNamesystem.read`` or ``FSNamesystem.write`` under the namesystem lock. Those hand it a
``CatalogView``: the lookups and requests it makes, each the namespace's own (the same
checks, ops and errors as WebHDFS's), and nothing else of the tree."""

from __future__ import annotations

from collections.abc import Iterable

from nnlite.namenode.namespace import delete, paths, rename, snapshot_ops, xattrs
from nnlite.namenode.namespace.inode import INode
from nnlite.namenode.namespace.namespace import Applied, Namespace
from nnlite.namenode.namespace.permission import Caller


class CatalogView:
    """The catalog's calls on ``ns``, the namespace of a read or a write of the namesystem."""

    __slots__ = ("_ns",)

    def __init__(self, ns: Namespace) -> None:
        self._ns = ns

    @property
    def max_record(self) -> int:
        """The largest op the journal logs (a retention's deletes are cut to fit)."""
        return self._ns.max_record

    @property
    def max_xattr_size(self) -> int:
        """dfs.namenode.fs-limits.max-xattr-size (a job's manifest must fit)."""
        return self._ns.tree.max_xattr_size

    def lookup(self, path: str) -> INode | None:
        """The inode at ``path``, None when there is none; no permission check."""
        return self._ns.tree.lookup(paths.split(path))

    def status(self, path: str, caller: Caller) -> INode:
        return self._ns.status(path, caller)

    def check_writable(self, parts: tuple, path: str) -> None:
        self._ns.check_writable(parts, path)

    def mkdirs(self, path: str, permission: int, caller: Caller) -> Applied[bool]:
        return self._ns.mkdirs(path, permission, caller)

    def set_xattr(self, path: str, name: str, value: bytes | None, flag: int,
                  caller: Caller) -> Applied[bool]:
        return xattrs.set_xattr(self._ns, path, name, value, flag, caller)

    def remove_xattr(self, path: str, name: str, caller: Caller) -> Applied[bool]:
        return xattrs.remove_xattr(self._ns, path, name, caller)

    def rename(self, src: str, dst: str, overwrite: bool, caller: Caller) -> Applied[bool]:
        return rename.rename(self._ns, src, dst, overwrite, caller)

    def delete(self, path: str, recursive: bool, caller: Caller) -> Applied[bool]:
        return delete.delete(self._ns, path, recursive, caller)

    def delete_many(self, targets: Iterable[str], caller: Caller) -> Applied[int]:
        return delete.delete_many(self._ns, targets, caller)

    def check_delete(self, parts: tuple, caller: Caller) -> None:
        delete.check_delete(self._ns, parts, caller)

    def kept_by_snapshot(self, path: str) -> bool:
        return snapshot_ops.kept_by_snapshot(self._ns, path)

    def snapshottable_above(self, path: str) -> str | None:
        return snapshot_ops.snapshottable_above(self._ns, path)

    def create_snapshot(self, path: str, name: str | None, caller: Caller) -> Applied[str]:
        return snapshot_ops.create_snapshot(self._ns, path, name, caller)
