"""Tree appliers that change an inode's attributes in place: permission, owner, times,
replication, quota, xattrs.

``AttributeAppliers`` is mixed into ``tree.Tree`` and uses its lookups (``get``) and quota
accounting (``check_quota``, ``add_usage``, ``quota_dirs``); it has no state of its own. Like
every applier, each method checks everything before it changes anything.
"""

from __future__ import annotations

from namenode import errors
from namenode.inode import NO_QUOTA, Quota, usage

XATTR_CREATE, XATTR_REPLACE = 1, 2


class AttributeAppliers:
    # Each takes its op's record payload: (op code, txid, fields in declaration order).

    def _set_permissions(self, record: tuple) -> None:
        _op, _txid, path, permission = record
        self.get(path).permission = permission

    def _set_owner(self, record: tuple) -> None:
        _op, _txid, path, owner, group = record
        node = self.get(path)
        if owner is not None:
            node.owner = owner
        if group is not None:
            node.group = group

    def _set_times(self, record: tuple) -> None:
        _op, _txid, path, mtime, atime = record
        node = self.get(path)
        if mtime != -1:
            node.mtime = mtime
        if atime != -1:
            node.atime = atime

    def _set_replication(self, record: tuple) -> None:
        _op, _txid, path, replication = record
        node = self.get(path)
        if node.is_dir:
            raise errors.PathNotFoundError(f"{path} is a directory", path=path)
        ss_delta = node.length * (replication - node.replication)
        self.check_quota(node.parent, 0, ss_delta)
        node.replication = replication
        self.add_usage(node.parent, 0, ss_delta)

    def _set_quota(self, record: tuple) -> None:
        _op, _txid, path, ns_quota, ss_quota = record
        node = self.get(path)
        if not node.is_dir:
            raise errors.PathIsNotDirectoryError(
                f"Cannot set quota on a file: {path}", path=path)
        if ns_quota == NO_QUOTA and ss_quota == NO_QUOTA:
            self.quota_dirs -= node.quota is not None
            node.quota = None
        elif node.quota is not None:
            node.quota.ns_quota, node.quota.ss_quota = ns_quota, ss_quota
        else:
            node.quota = Quota(ns_quota, ss_quota, *usage(node))
            self.quota_dirs += 1

    def _set_xattr(self, record: tuple) -> None:
        _op, _txid, path, name, value, flag = record
        node = self.get(path)
        attrs = node.xattrs or {}
        self._check_xattr(path, name, value, flag, attrs)
        node.xattrs = {**attrs, name: bytes(value)}

    def _check_xattr(self, path: str, name: str, value: bytes, flag: int,
                     attrs: dict) -> None:
        """As Hadoop's FSDirXAttrOp: the size counts the name without its namespace prefix."""
        size = len(name.partition(".")[2].encode()) + len(value)
        if size > self.max_xattr_size:
            raise errors.IllegalArgumentError(
                f"The XAttr is too big. The maximum combined size of the name and value is "
                f"{self.max_xattr_size}, but the total size is {size}", path=path)
        exists = name in attrs
        if exists and not flag & XATTR_REPLACE:
            raise errors.XAttrError(
                f"XAttr: {name} already exists. The REPLACE flag must be specified.",
                path=path)
        if not exists and not flag & XATTR_CREATE:
            raise errors.XAttrError(
                f"XAttr: {name} does not exist. The CREATE flag must be specified.",
                path=path)
        if not exists and len(attrs) >= self.max_xattrs:
            raise errors.XAttrError(
                f"Cannot add additional XAttr to inode, would exceed limit of "
                f"{self.max_xattrs}", path=path)

    def _remove_xattr(self, record: tuple) -> None:
        _op, _txid, path, name = record
        node = self.get(path)
        if not node.xattrs or name not in node.xattrs:
            raise errors.XAttrError(
                "No matching attributes found for remove operation", path=path)
        attrs = {k: v for k, v in node.xattrs.items() if k != name}
        node.xattrs = attrs or None
