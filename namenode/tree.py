"""The namespace tree and ``apply(op)``: the one code path that changes it.

The live service and every replay (startup, the secondary's checkpoint) call ``apply`` with the
same ops, so the two can never drift. ``apply`` checks everything the op needs (the structure,
the quotas) before it changes anything: an op either applies whole or raises a typed error and
leaves the tree as it was. It does no permission checks (the request layer in
``namespace.py`` does those before an op exists) and no I/O.
"""

from __future__ import annotations

from formats import edits as E
from namenode import errors, paths
from namenode.inode import (NO_QUOTA, ROOT_INODE_ID, INode, INodeDirectory, INodeFile, Quota,
                            space, usage, walk)

XATTR_CREATE, XATTR_REPLACE = 1, 2
IMPLICIT_UWX = 0o300


class Tree:
    """Inodes from the root down, counters, and the last ids handed out.

    Invariant: ``files`` and ``dirs`` count the inodes of each kind (root included);
    ``last_inode_id`` is at least every inode id in the tree.
    """

    def __init__(self, *, owner: str = "root", group: str = "supergroup", mtime: int = 0,
                 max_xattrs: int = 32, max_xattr_size: int = 16384):
        self.root = INodeDirectory(ROOT_INODE_ID, None, "", 0o755, owner, group, mtime)
        self.last_inode_id = ROOT_INODE_ID
        self.last_block_id = 0
        self.files = 0
        self.dirs = 1
        self.quota_dirs = 0       # directories with a quota; none -> quota walks are skipped
        self.max_xattrs = max_xattrs
        self.max_xattr_size = max_xattr_size
        self._appliers = {
            E.StartLogSegmentOp: _noop, E.EndLogSegmentOp: _noop,
            E.MkdirOp: self._mkdir, E.AddFileOp: self._add_file, E.CloseFileOp: self._close_file,
            E.AddBlockOp: self._add_block, E.UpdateBlocksOp: self._update_blocks,
            E.DeleteOp: self._delete, E.RenameOldOp: self._rename_old, E.RenameOp: self._rename,
            E.SetPermissionsOp: self._set_permissions, E.SetOwnerOp: self._set_owner,
            E.SetTimesOp: self._set_times, E.SetReplicationOp: self._set_replication,
            E.SetQuotaOp: self._set_quota, E.SetXAttrOp: self._set_xattr,
            E.RemoveXAttrOp: self._remove_xattr, E.ConcatOp: self._concat,
            E.TruncateOp: self._truncate, E.AppendOp: self._append,
            E.DeleteManyOp: self._delete_many,
        }

    # ----------------------------------------------------------------------- lookups

    def apply(self, op: E.Op) -> None:
        self._appliers[type(op)](op)

    def resolve(self, parts: tuple) -> list[INode]:
        """The inodes along ``parts`` from the root, as far as they exist.

        Stops early at a missing name; raises ParentNotDirectoryError when a file stands
        where a directory is needed.
        """
        nodes = [self.root]
        node = self.root
        for i, name in enumerate(parts):
            if not node.is_dir:
                raise errors.ParentNotDirectoryError(
                    f"{paths.join(parts[:i])} (is not a directory)", path=paths.join(parts))
            node = node.children.get(name)
            if node is None:
                break
            nodes.append(node)
        return nodes

    def lookup(self, parts: tuple) -> INode | None:
        node = self.root
        for name in parts:
            if not node.is_dir:
                return None
            node = node.children.get(name)
            if node is None:
                return None
        return node

    def get(self, path: str, parts: tuple | None = None) -> INode:
        node = self.lookup(paths.split(path) if parts is None else parts)
        if node is None:
            raise errors.PathNotFoundError(f"File does not exist: {path}", path=path)
        return node

    def get_file(self, path: str, inode_id: int | None = None) -> INodeFile:
        node = self.get(path)
        if node.is_dir:
            raise errors.PathNotFoundError(f"Path is not a file: {path}", path=path)
        if inode_id is not None and node.id != inode_id:
            raise errors.PathNotFoundError(
                f"File {path} has inode id {node.id}, the operation names {inode_id}",
                path=path)
        return node

    def get_dir_for_create(self, parts: tuple, path: str) -> INodeDirectory:
        nodes = self.resolve(parts[:-1])
        if len(nodes) != len(parts):
            raise errors.PathNotFoundError(
                f"Parent directory doesn't exist: {paths.join(parts[:-1])}", path=path)
        parent = nodes[-1]
        if not parent.is_dir:
            raise errors.ParentNotDirectoryError(
                f"Parent path is not a directory: {paths.join(parts[:-1])}", path=path)
        return parent

    # ----------------------------------------------------------------------- quotas

    def check_quota(self, directory: INode, ns_delta: int, ss_delta: int,
                    stop: set | None = None) -> None:
        """Raise if adding the deltas under ``directory`` breaks a quota on it or above it
        (directories whose ids are in ``stop`` are skipped: they see no net change)."""
        if not self.quota_dirs:
            return
        node = directory
        while node is not None:
            quota = node.quota
            if quota is not None and (stop is None or node.id not in stop):
                _check_one_quota(node, quota, ns_delta, ss_delta)
            node = node.parent

    def add_usage(self, directory: INode, ns_delta: int, ss_delta: int) -> None:
        if not self.quota_dirs:
            return
        node = directory
        while node is not None:
            if node.quota is not None:
                node.quota.ns_used += ns_delta
                node.quota.ss_used += ss_delta
            node = node.parent

    # ----------------------------------------------------------------------- appliers

    def _mkdir(self, op: E.MkdirOp, nodes: list | None = None) -> None:
        """``nodes``: the live path's resolution of ``op.path`` under the same lock."""
        parts = paths.split(op.path)
        if nodes is None:
            nodes = self.resolve(parts)
        if len(nodes) == len(parts) + 1:
            raise errors.FileAlreadyExistsError(f"Path exists: {op.path}", path=op.path)
        parent = nodes[-1]
        if not parent.is_dir:
            raise errors.ParentNotDirectoryError(f"{parent.path()} (is not a directory)",
                                                 path=op.path)
        missing = parts[len(nodes) - 1:]
        self.check_quota(parent, len(missing), 0)
        implicit = op.permission | IMPLICIT_UWX
        for i, name in enumerate(missing):
            perm = op.permission if i == len(missing) - 1 else implicit
            node = INodeDirectory(op.inode_id + i, parent, name, perm, op.owner, op.group,
                                  op.mtime)
            parent.children[name] = node
            parent = node
        self.dirs += len(missing)
        if op.inode_id + len(missing) - 1 > self.last_inode_id:
            self.last_inode_id = op.inode_id + len(missing) - 1
        nodes[-1].mtime = op.mtime
        self.add_usage(nodes[-1], len(missing), 0)

    def _add_file(self, op: E.AddFileOp, parent: INodeDirectory | None = None) -> None:
        """``parent``: the live path's resolution of the parent under the same lock."""
        parts = paths.split(op.path)
        if not parts:
            raise errors.FileAlreadyExistsError("/ is a directory", path=op.path)
        if parent is None:
            parent = self.get_dir_for_create(parts, op.path)
        name = parts[-1]
        old = parent.children.get(name)
        ns_delta, ss_delta = 1, op.length * op.replication
        if old is not None:
            if old.is_dir:
                raise errors.FileAlreadyExistsError(
                    f"{op.path} already exists as a directory", path=op.path)
            if not op.overwrite:
                raise errors.FileAlreadyExistsError(f"{op.path} already exists", path=op.path)
            ns_delta, ss_delta = 0, ss_delta - space(old)
        self.check_quota(parent, ns_delta, ss_delta)
        node = INodeFile(op.inode_id, parent, name, op.permission, op.owner, op.group,
                         op.mtime, op.atime, op.replication, op.block_size, op.length,
                         client_name=op.client_name or None,
                         client_machine=op.client_machine or None)
        parent.children[name] = node
        if old is None:
            self.files += 1
        parent.mtime = op.mtime
        if op.inode_id > self.last_inode_id:
            self.last_inode_id = op.inode_id
        self.add_usage(parent, ns_delta, ss_delta)

    def _close_file(self, op: E.CloseFileOp) -> None:
        node = self._under_construction(op.path, op.inode_id)
        self._resize(node, op.length)
        node.blocks = tuple(tuple(b) for b in op.blocks)
        node.checksum = op.checksum or None
        node.mtime, node.atime = op.mtime, op.atime
        node.client_name = node.client_machine = None
        self._note_blocks(node.blocks)

    def _add_block(self, op: E.AddBlockOp) -> None:
        node = self._under_construction(op.path, op.inode_id)
        blocks = node.blocks + (tuple(op.block),)
        self._resize(node, sum(b[1] for b in blocks))
        node.blocks = blocks
        self._note_blocks((op.block,))

    def _update_blocks(self, op: E.UpdateBlocksOp) -> None:
        node = self._under_construction(op.path, op.inode_id)
        blocks = tuple(tuple(b) for b in op.blocks)
        self._resize(node, sum(b[1] for b in blocks))
        node.blocks = blocks
        self._note_blocks(blocks)

    def _delete(self, op: E.DeleteOp) -> None:
        parts = paths.split(op.path)
        if not parts:
            raise errors.IllegalArgumentError("The root directory cannot be deleted", path="/")
        node = self.get(op.path, parts)
        self._detach(node)
        node.parent.mtime = op.mtime

    def _delete_many(self, op: E.DeleteManyOp) -> None:
        """All paths are checked (they exist, none is the root, none lies under another)
        before the first is detached, so the op applies whole or not at all."""
        parts = [paths.split(p) for p in op.paths]
        if not all(parts):
            raise errors.IllegalArgumentError("The root directory cannot be deleted", path="/")
        ordered = sorted(parts)
        for before, after in zip(ordered, ordered[1:]):
            if before == after or paths.is_ancestor(before, after):
                raise errors.IllegalArgumentError(
                    f"{paths.join(after)} is listed twice or lies under {paths.join(before)}",
                    path=paths.join(after))
        nodes = [self.get(p, split) for p, split in zip(op.paths, parts)]
        for node in nodes:
            parent = node.parent
            self._detach(node)
            parent.mtime = op.mtime

    def _rename_old(self, op: E.RenameOldOp) -> None:
        self._move(op.src, op.dst, op.mtime, overwrite=False)

    def _rename(self, op: E.RenameOp) -> None:
        self._move(op.src, op.dst, op.mtime, overwrite=op.overwrite)

    def _set_permissions(self, op: E.SetPermissionsOp) -> None:
        self.get(op.path).permission = op.permission

    def _set_owner(self, op: E.SetOwnerOp) -> None:
        node = self.get(op.path)
        if op.owner is not None:
            node.owner = op.owner
        if op.group is not None:
            node.group = op.group

    def _set_times(self, op: E.SetTimesOp) -> None:
        node = self.get(op.path)
        if op.mtime != -1:
            node.mtime = op.mtime
        if op.atime != -1:
            node.atime = op.atime

    def _set_replication(self, op: E.SetReplicationOp) -> None:
        node = self.get(op.path)
        if node.is_dir:
            raise errors.PathNotFoundError(f"{op.path} is a directory", path=op.path)
        ss_delta = node.length * (op.replication - node.replication)
        self.check_quota(node.parent, 0, ss_delta)
        node.replication = op.replication
        self.add_usage(node.parent, 0, ss_delta)

    def _set_quota(self, op: E.SetQuotaOp) -> None:
        node = self.get(op.path)
        if not node.is_dir:
            raise errors.PathIsNotDirectoryError(
                f"Cannot set quota on a file: {op.path}", path=op.path)
        if op.ns_quota == NO_QUOTA and op.ss_quota == NO_QUOTA:
            self.quota_dirs -= node.quota is not None
            node.quota = None
        elif node.quota is not None:
            node.quota.ns_quota, node.quota.ss_quota = op.ns_quota, op.ss_quota
        else:
            node.quota = Quota(op.ns_quota, op.ss_quota, *usage(node))
            self.quota_dirs += 1

    def _set_xattr(self, op: E.SetXAttrOp) -> None:
        node = self.get(op.path)
        attrs = node.xattrs or {}
        self._check_xattr(op, attrs)
        node.xattrs = {**attrs, op.name: bytes(op.value)}

    def _check_xattr(self, op: E.SetXAttrOp, attrs: dict) -> None:
        """As Hadoop's FSDirXAttrOp: the size counts the name without its namespace prefix."""
        size = len(op.name.partition(".")[2].encode()) + len(op.value)
        if size > self.max_xattr_size:
            raise errors.IllegalArgumentError(
                f"The XAttr is too big. The maximum combined size of the name and value is "
                f"{self.max_xattr_size}, but the total size is {size}", path=op.path)
        exists = op.name in attrs
        if exists and not op.flag & XATTR_REPLACE:
            raise errors.XAttrError(
                f"XAttr: {op.name} already exists. The REPLACE flag must be specified.",
                path=op.path)
        if not exists and not op.flag & XATTR_CREATE:
            raise errors.XAttrError(
                f"XAttr: {op.name} does not exist. The CREATE flag must be specified.",
                path=op.path)
        if not exists and len(attrs) >= self.max_xattrs:
            raise errors.XAttrError(
                f"Cannot add additional XAttr to inode, would exceed limit of "
                f"{self.max_xattrs}", path=op.path)

    def _remove_xattr(self, op: E.RemoveXAttrOp) -> None:
        node = self.get(op.path)
        if not node.xattrs or op.name not in node.xattrs:
            raise errors.XAttrError(
                "No matching attributes found for remove operation", path=op.path)
        attrs = {k: v for k, v in node.xattrs.items() if k != op.name}
        node.xattrs = attrs or None

    def _concat(self, op: E.ConcatOp) -> None:
        target = self._complete_file(op.target)
        srcs = [self._complete_file(s) for s in op.srcs]
        _check_concat_sources(target, srcs, op.target)
        length = target.length + sum(s.length for s in srcs)
        ss_delta = sum(s.length * (target.replication - s.replication) for s in srcs)
        self.check_quota(target.parent, 0, ss_delta)
        blocks = target.blocks + tuple(b for s in srcs for b in s.blocks)
        for src in srcs:
            self._detach(src)
        # No second quota check: the net change was checked above, and a check of the target's
        # growth alone could fail after the sources were detached.
        self.add_usage(target.parent, 0, (length - target.length) * target.replication)
        target.length = length
        target.parent.mtime = op.mtime
        target.blocks = blocks
        target.checksum = None
        target.mtime = op.mtime

    def _truncate(self, op: E.TruncateOp) -> None:
        node = self._complete_file(op.path)
        if op.new_length < 0:
            raise errors.IllegalArgumentError(
                f"Cannot truncate to a negative file size: {op.new_length}.", path=op.path)
        if op.new_length > node.length:
            raise errors.IllegalArgumentError(
                f"Cannot truncate to a larger file size. Current size: {node.length}, "
                f"truncate size: {op.new_length}.", path=op.path)
        kept, total = [], 0
        for block_id, num_bytes, genstamp in node.blocks:
            if total >= op.new_length:
                break
            take = min(num_bytes, op.new_length - total)
            kept.append((block_id, take, genstamp))
            total += take
        self._resize(node, op.new_length)
        node.blocks = tuple(kept)
        node.checksum = None
        node.mtime = op.mtime

    def _append(self, op: E.AppendOp) -> None:
        node = self._complete_file(op.path)
        if node.id != op.inode_id:
            raise errors.PathNotFoundError(
                f"File {op.path} has inode id {node.id}, the operation names {op.inode_id}",
                path=op.path)
        if not op.client_name:
            raise errors.IllegalArgumentError("append needs a client name", path=op.path)
        node.client_name = op.client_name
        node.client_machine = op.client_machine or None

    # ----------------------------------------------------------------------- helpers

    def _under_construction(self, path: str, inode_id: int) -> INodeFile:
        node = self.get_file(path, inode_id)
        if node.client_name is None:
            raise errors.LeaseError(f"File is not under construction: {path}", path=path)
        return node

    def _complete_file(self, path: str) -> INodeFile:
        node = self.get_file(path)
        if node.client_name is not None:
            raise errors.LeaseError(
                f"{path} is under construction by {node.client_name}", path=path)
        return node

    def _resize(self, node: INodeFile, length: int) -> None:
        ss_delta = (length - node.length) * node.replication
        self.check_quota(node.parent, 0, ss_delta)
        node.length = length
        self.add_usage(node.parent, 0, ss_delta)

    def _note_blocks(self, blocks) -> None:
        for block in blocks:
            if block[0] > self.last_block_id:
                self.last_block_id = block[0]

    def _detach(self, node: INode) -> None:
        """Remove a subtree from its parent and from every count (one walk)."""
        files = dirs = quotas = total = 0
        for n in walk(node):
            if n.is_dir:
                dirs += 1
                quotas += n.quota is not None
            else:
                files += 1
                total += n.length * n.replication
        del node.parent.children[node.name]
        self.dirs -= dirs
        self.files -= files
        self.add_usage(node.parent, -(files + dirs), -total)
        self.quota_dirs -= quotas

    def _move(self, src: str, dst: str, mtime: int, *, overwrite: bool) -> None:
        src_parts, dst_parts = paths.split(src), paths.split(dst)
        if not src_parts or not dst_parts:
            raise errors.NamenodeError("Rename source or destination can not be the root",
                                       path=src)
        if paths.is_ancestor(src_parts, dst_parts):
            raise errors.NamenodeError(
                f"Rename destination {dst} is a directory or file under source {src}", path=src)
        node = self.get(src, src_parts)
        new_parent = self.get_dir_for_create(dst_parts, dst)
        old = new_parent.children.get(dst_parts[-1])
        if old is not None and not overwrite:
            raise errors.FileAlreadyExistsError(f"rename destination {dst} already exists",
                                                path=dst)
        if old is not None and old.is_dir and old.children:
            raise errors.NamenodeError(f"rename destination directory is not empty: {dst}",
                                       path=dst)
        count, total = usage(node)
        old_count, old_total = usage(old) if old is not None else (0, 0)
        common = {n.id for n in node.ancestors()}
        self.check_quota(new_parent, count - old_count, total - old_total, stop=common)
        if old is not None:
            self._detach(old)
        old_parent = node.parent
        del old_parent.children[node.name]
        self.add_usage(old_parent, -count, -total)
        node.name = dst_parts[-1]
        node.parent = new_parent
        new_parent.children[node.name] = node
        self.add_usage(new_parent, count, total)
        old_parent.mtime = new_parent.mtime = mtime


def _noop(op: E.Op) -> None:
    return None


def _check_concat_sources(target: INodeFile, srcs: list, path: str) -> None:
    """As Hadoop's FSDirConcatOp: distinct files other than the target, in its directory."""
    if not srcs or any(s is target for s in srcs) or len({id(s) for s in srcs}) != len(srcs):
        raise errors.IllegalArgumentError(
            "concat: the sources must be distinct files other than the target", path=path)
    for src in srcs:
        if src.parent is not target.parent:
            raise errors.IllegalArgumentError(
                f"concat: source file {src.path()} is not in the same directory as the "
                f"target {path}", path=path)


def _check_one_quota(node: INode, quota: Quota, ns_delta: int, ss_delta: int) -> None:
    if ns_delta > 0 and quota.ns_quota != NO_QUOTA and quota.ns_used + ns_delta > quota.ns_quota:
        raise errors.NSQuotaExceededError(
            f"The NameSpace quota (directories and files) of directory {node.path()} is "
            f"exceeded: quota={quota.ns_quota} file count={quota.ns_used + ns_delta}",
            path=node.path())
    if ss_delta > 0 and quota.ss_quota != NO_QUOTA and quota.ss_used + ss_delta > quota.ss_quota:
        raise errors.DSQuotaExceededError(
            f"The DiskSpace quota of {node.path()} is exceeded: quota = {quota.ss_quota} B "
            f"but diskspace consumed = {quota.ss_used + ss_delta} B", path=node.path())
