"""The namespace tree and ``apply(op)``: the one code path that changes it.

The live service and every replay (startup, the secondary's checkpoint) call ``apply`` with the
same ops, so the two can never drift. ``apply`` checks everything the op needs (the structure,
the quotas) before it changes anything: an op either applies whole or raises a typed error and
leaves the tree as it was. It does no permission checks (the request layer in
``namespace.py`` does those before an op exists) and no I/O.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

from nnlite.formats import edits
from nnlite.formats.fsimage.layout import NO_QUOTA
from nnlite.namenode import errors
from nnlite.namenode.namespace import acl, paths
from nnlite.namenode.namespace.inode import (
    ROOT_INODE_ID,
    INode,
    INodeDirectory,
    INodeFile,
    Quota,
    new_file,
    parent_of,
    space,
    usage,
    walk,
)
from nnlite.namenode.namespace.snapshot import Registry
from nnlite.namenode.security import tokens

IMPLICIT_UWX = 0o300
XATTR_CREATE, XATTR_REPLACE = 1, 2   # setXAttr flags, as HDFS's XAttrSetFlag
DIR_INDEX_SIZE = 1024     # directories remembered by path; the index starts over when full
PLAIN_NAMES_SIZE = 4096   # names known to be valid, likewise


class Tree:
    """Inodes from the root down, counters, and the last ids handed out, and one applier per
    op: structural (mkdir, add file, delete, rename), which move inodes and keep the index;
    attributes (permission, owner, times, replication, quota, xattrs), changed in place; and
    file contents (close, blocks, concat, truncate, append).

    Invariant: ``files`` and ``dirs`` count the inodes of each kind (root included);
    ``last_inode_id`` is at least every inode id in the tree.

    ``appliers`` maps each op code to the method that applies it. A method takes the op as
    its record payload ``(op_code, txid, field...)`` (``Op.payload``), so a replay calls it
    with the decoded record and never builds an op object; unpacking a tuple is also the
    cheapest way into a Python function.

    ``_dir_index`` remembers recently used directories by path (``""`` for the root) so the
    appliers find the parent of a path without splitting and walking it. Only the appliers
    below attach, detach or move inodes (the image loader attaches to a fresh tree); detaching
    or moving a directory empties the index, so an entry always names the directory now at
    that path.
    """

    def __init__(self, *, owner: str = "root", group: str = "supergroup", mtime: int = 0,
                 max_xattrs: int = 32, max_xattr_size: int = 16384) -> None:
        self.root = INodeDirectory(ROOT_INODE_ID, None, "", 0o755, owner, group, mtime)
        self.last_inode_id = ROOT_INODE_ID
        self.last_block_id = 0
        self.files = 0
        self.dirs = 1
        self.block_count = 0      # block references of every file (the status page's figure)
        # Moves at every change that can add or drop a referenced block (a file's blocks
        # set, a file detached, a snapshot deleted): a set of referenced blocks computed at
        # one generation holds while it stands (``blocks.sweep.ReferencedBlocks``).
        self.blocks_generation = 0
        # The block ids of every file in the tree (not those only snapshots keep), built by
        # ``live_blocks`` when first asked, then kept op by op as HDFS keeps its BlocksMap.
        self._live_blocks: set[int] | None = None
        self.quota_dirs = 0       # directories with a quota; none -> quota walks are skipped
        self.max_xattrs = max_xattrs
        self.max_xattr_size = max_xattr_size
        self.snapshots = Registry()
        self.secrets = tokens.TokenStore()    # delegation keys and tokens (secure mode)
        self._dir_index: dict[str, INodeDirectory] = {"": self.root}
        self._plain_names: set[str] = set()
        self._ids: dict[int, INode] | None = None     # built by ``inode`` when first asked
        C = edits.OpCode
        self.appliers = {int(code): fn for code, fn in {
            C.START_LOG_SEGMENT: _noop, C.END_LOG_SEGMENT: _noop,
            C.MKDIR: self._mkdir, C.ADD_FILE: self._add_file, C.CLOSE_FILE: self._close_file,
            C.ADD_BLOCK: self._add_block, C.UPDATE_BLOCKS: self._update_blocks,
            C.DELETE: self._delete, C.RENAME_OLD: self._rename_old, C.RENAME: self._rename,
            C.SET_PERMISSIONS: self._set_permissions, C.SET_OWNER: self._set_owner,
            C.SET_TIMES: self._set_times, C.SET_REPLICATION: self._set_replication,
            C.SET_QUOTA: self._set_quota, C.SET_XATTR: self._set_xattr,
            C.REMOVE_XATTR: self._remove_xattr, C.CONCAT: self._concat,
            C.TRUNCATE: self._truncate, C.APPEND: self._append,
            C.DELETE_MANY: self._delete_many, C.SET_ACL: self._set_acl,
            C.ALLOW_SNAPSHOT: self._allow_snapshot, C.DISALLOW_SNAPSHOT: self._disallow_snapshot,
            C.CREATE_SNAPSHOT: self._create_snapshot, C.DELETE_SNAPSHOT: self._delete_snapshot,
            C.RENAME_SNAPSHOT: self._rename_snapshot,
            C.GET_DELEGATION_TOKEN: self._get_delegation_token,
            C.RENEW_DELEGATION_TOKEN: self._renew_delegation_token,
            C.CANCEL_DELEGATION_TOKEN: self._cancel_delegation_token,
            C.UPDATE_MASTER_KEY: self._update_master_key,
        }.items()}

    # ----------------------------------------------------------------------- lookups

    def apply(self, op: edits.Op) -> None:
        self.appliers[op.CODE](op.payload())

    def resolve(self, parts: tuple) -> list[INode]:
        """The inodes along ``parts`` from the root, as far as they exist.

        Stops early at a missing name; raises ParentNotDirectoryError when a file stands
        where a directory is needed.
        """
        nodes: list[INode] = [self.root]
        node: INode = self.root
        for i, name in enumerate(parts):
            if not node.is_dir:
                raise errors.ParentNotDirectoryError(
                    f"{paths.join(parts[:i])} (is not a directory)", path=paths.join(parts))
            found = node.children.get(name)
            if found is None:
                break
            nodes.append(found)
            node = found
        return nodes

    def lookup(self, parts: tuple) -> INode | None:
        node: INode = self.root
        for name in parts:
            if not node.is_dir:
                return None
            found = node.children.get(name)
            if found is None:
                return None
            node = found
        return node

    def inode(self, inode_id: int) -> INode | None:
        """The inode with id ``inode_id`` that is in the tree now, or None: HDFS's
        ``FSDirectory.getInode`` over its INodeMap, which ``/.reserved/.inodes/<id>`` paths
        resolve by (``reserved.py``).

        The map is built by one walk when first asked for (a replay and the image loader run
        before it exists, and a namenode that never meets an inode path never builds it);
        from then on the appliers add every inode they attach and drop every one they remove
        (``_detach`` walks a removed subtree anyway), as HDFS's addToInodeMap and
        removeFromInodeMap do. An inode found there is checked to hang from the root still:
        a removal an applier forgot would show as a missing inode, never a wrong one."""
        index = self._ids
        if index is None:
            index = self._ids = {node.id: node for node in walk(self.root)}
        node = index.get(inode_id)
        if node is not None and not self._attached(node):
            del index[inode_id]
            return None
        return node

    def _attached(self, node: INode) -> bool:
        """Whether ``node`` hangs from the root: every link up to it is its parent's child by
        its name (a removed file keeps its ``parent``, ``_detach``)."""
        while node.parent is not None:
            if node.parent.children.get(node.name) is not node:
                return False
            node = node.parent
        return node is self.root

    def get(self, path: str, parts: tuple | None = None) -> INode:
        node = self._find(path) if parts is None else self.lookup(parts)
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

    # ----------------------------------------------------------------------- directory index

    def indexed_parent(self, path: object) -> tuple[INodeDirectory, str] | None:
        """``(directory, name)`` for a path whose directory is in the index and whose last
        name passes every check of ``paths.split``; None sends the caller the long way."""
        if type(path) is str:
            key, sep, name = path.rpartition("/")
            parent = self._dir_index.get(key)
            if parent is not None and sep and len(path) <= paths.MAX_PATH_CHARS and (
                    name in self._plain_names or self._plain(name)):
                return parent, name
        return None

    def _plain(self, name: str) -> bool:
        """A name ``paths.split`` accepts that needs no encoding check (ASCII); remembered,
        as names repeat (``part-00000`` in every Spark output directory)."""
        if (name.isascii() and name and ":" not in name and "\0" not in name
                and name != "." and name != ".." and len(name) <= paths.MAX_COMPONENT_BYTES):
            if len(self._plain_names) >= PLAIN_NAMES_SIZE:
                self._plain_names.clear()
            self._plain_names.add(name)
            return True
        return False

    def _find(self, path: str) -> INode | None:
        """The inode at ``path`` or None (InvalidPathError for an invalid path)."""
        hit = self.indexed_parent(path)
        if hit is not None:
            return hit[0].children.get(hit[1])
        parts = paths.split(path)
        if not parts:
            return self.root
        parent = self.lookup(parts[:-1])
        if parent is None or not parent.is_dir:
            return None
        self._remember(_key(parts[:-1]), parent)
        return parent.children.get(parts[-1])

    def _remember(self, key: str, directory: INodeDirectory) -> None:
        index = self._dir_index
        if len(index) >= DIR_INDEX_SIZE:
            self._forget()
        index[key] = directory

    def _forget(self) -> None:
        self._dir_index.clear()
        self._dir_index[""] = self.root

    # ----------------------------------------------------------------------- quotas

    def check_quota(self, directory: INodeDirectory | None, ns_delta: int, ss_delta: int,
                    stop: set[int] | None = None) -> None:
        """Raise if adding the deltas under ``directory`` breaks a quota on it or above it
        (directories whose ids are in ``stop`` are skipped: they see no net change; None:
        above the root, nothing to check)."""
        if not self.quota_dirs:
            return
        node = directory
        while node is not None:
            quota = node.quota
            if quota is not None and (stop is None or node.id not in stop):
                _check_one_quota(node, quota, ns_delta, ss_delta)
            node = node.parent

    def add_usage(self, directory: INodeDirectory | None, ns_delta: int, ss_delta: int) -> None:
        if not self.quota_dirs:
            return
        node = directory
        while node is not None:
            if node.quota is not None:
                node.quota.ns_used += ns_delta
                node.quota.ss_used += ss_delta
            node = node.parent

    # ----------------------------------------------------------------------- appliers
    # Each takes its op's record payload: (op code, txid, fields in declaration order).

    def _mkdir(self, record: tuple) -> None:
        _op, _txid, path, inode_id, permission, owner, group, mtime = record
        hit = self.indexed_parent(path)
        if hit is not None and hit[1] not in hit[0].children:
            parent, name = hit     # the common case: one new directory in a known one
            if self.quota_dirs:
                self.check_quota(parent, 1, 0)
            node = INodeDirectory(inode_id, parent, name, permission, owner, group, mtime)
            if parent.acl is not None:
                _inherit(node, parent)
            if self.snapshots.roots:
                self._snap_added(parent, name)
            parent.children[name] = node
            if self._ids is not None:
                self._ids[inode_id] = node
            self.dirs += 1
            if inode_id > self.last_inode_id:
                self.last_inode_id = inode_id
            parent.mtime = mtime
            if self.quota_dirs:
                self.add_usage(parent, 1, 0)
            self._remember(path, node)
            return
        parts = paths.split(path)
        nodes = self.resolve(parts)
        if len(nodes) == len(parts) + 1:
            raise errors.FileAlreadyExistsError(f"Path exists: {path}", path=path)
        deepest = nodes[-1]
        if not deepest.is_dir:
            raise errors.ParentNotDirectoryError(f"{deepest.path()} (is not a directory)",
                                                 path=path)
        missing = parts[len(nodes) - 1:]
        self.check_quota(deepest, len(missing), 0)
        if self.snapshots.roots:
            self._snap_added(deepest, missing[0])
        implicit = permission | IMPLICIT_UWX
        parent = above = deepest
        for i, name in enumerate(missing):
            perm = permission if i == len(missing) - 1 else implicit
            node = INodeDirectory(inode_id + i, parent, name, perm, owner, group, mtime)
            if parent.acl is not None:
                _inherit(node, parent)
            parent.children[name] = node
            if self._ids is not None:
                self._ids[node.id] = node
            above, parent = parent, node
        self.dirs += len(missing)
        if inode_id + len(missing) - 1 > self.last_inode_id:
            self.last_inode_id = inode_id + len(missing) - 1
        deepest.mtime = mtime
        self.add_usage(deepest, len(missing), 0)
        self._remember(_key(parts[:-1]), above)   # where its siblings will go
        self._remember(_key(parts), parent)

    def _add_file(self, record: tuple) -> None:
        (_op, _txid, path, inode_id, replication, block_size, length, permission, owner, group,
         mtime, atime, overwrite, client_name, client_machine) = record
        # indexed_parent, inlined: this is the op a replay meets most
        key, sep, name = path.rpartition("/") if type(path) is str else ("", "", "")
        parent = self._dir_index.get(key)
        if parent is None or not sep or len(path) > paths.MAX_PATH_CHARS or (
                name not in self._plain_names and not self._plain(name)):
            parts = paths.split(path)
            if not parts:
                raise errors.FileAlreadyExistsError("/ is a directory", path=path)
            parent = self.get_dir_for_create(parts, path)
            name = parts[-1]
            self._remember(_key(parts[:-1]), parent)
        old = parent.children.get(name)
        if old is not None:
            if old.is_dir:
                raise errors.FileAlreadyExistsError(
                    f"{path} already exists as a directory", path=path)
            if not overwrite:
                raise errors.FileAlreadyExistsError(f"{path} already exists", path=path)
        quotas = self.quota_dirs
        if quotas:
            ns_delta = 1 if old is None else 0
            ss_delta = length * replication - (0 if old is None else space(old))
            self.check_quota(parent, ns_delta, ss_delta)
        if self.snapshots.roots:
            if old is not None:
                self.snapshots.child_removed(parent, name, old)
            self._snap_added(parent, name)
        node = new_file(inode_id, parent, name, permission, owner, group, mtime, atime,
                        replication, block_size, length, client_name or None,
                        client_machine or None)
        if parent.acl is not None:
            _inherit(node, parent)
        parent.children[name] = node
        if self._ids is not None:
            if old is not None:
                self._ids.pop(old.id, None)
            self._ids[inode_id] = node
        if old is None:
            self.files += 1
        else:
            self._blocks_gone(old.blocks)
        parent.mtime = mtime
        if inode_id > self.last_inode_id:
            self.last_inode_id = inode_id
        if quotas:
            self.add_usage(parent, ns_delta, ss_delta)

    def _delete(self, record: tuple) -> None:
        _op, _txid, path, mtime = record
        node = self.get(path)
        if node is self.root:    # only "/" resolves to the root
            raise errors.IllegalArgumentError("The root directory cannot be deleted", path="/")
        self._detach(node).mtime = mtime

    def _delete_many(self, record: tuple) -> None:
        """All paths are checked (they exist, none is the root, none lies under another)
        before the first is detached, so the op applies whole or not at all."""
        _op, _txid, paths_, mtime = record
        parts = [paths.split(p) for p in paths_]
        if not all(parts):
            raise errors.IllegalArgumentError("The root directory cannot be deleted", path="/")
        ordered = sorted(parts)
        for before, after in itertools.pairwise(ordered):
            if before == after or paths.is_ancestor(before, after):
                raise errors.IllegalArgumentError(
                    f"{paths.join(after)} is listed twice or lies under {paths.join(before)}",
                    path=paths.join(after))
        nodes = [self.get(p, split) for p, split in zip(paths_, parts, strict=True)]
        for node in nodes:
            self._detach(node).mtime = mtime

    def _rename_old(self, record: tuple) -> None:
        _op, _txid, src, dst, mtime = record
        self._move(src, dst, mtime, overwrite=False)

    def _rename(self, record: tuple) -> None:
        _op, _txid, src, dst, mtime, overwrite = record
        self._move(src, dst, mtime, overwrite=overwrite)

    # ----------------------------------------------------------------------- helpers

    def _detach(self, node: INode) -> INodeDirectory:
        """Remove a subtree from its parent and from every count (one walk); returns the
        parent it left.

        A directory and its children refer to each other (``children``, ``parent``); the
        walk cuts every ``parent`` link of the subtree, so reference counting frees it at
        once. The namenode freezes its loaded tree out of the cyclic collector's reach
        (``daemon.Namenode``), which would never free a frozen cycle."""
        parent = parent_of(node)
        if self.snapshots.roots:
            self.snapshots.before_change(parent)
            self.snapshots.child_removed(parent, node.name, node)
            if node.is_dir:
                self.snapshots.forget_roots_under(node)
        if not node.is_dir:
            del parent.children[node.name]
            if self._ids is not None:
                self._ids.pop(node.id, None)
            self.files -= 1
            self._blocks_gone(node.blocks)
            if self.quota_dirs:
                self.add_usage(parent, -1, -(node.length * node.replication))
            return parent
        self._forget()
        files = dirs = quotas = total = 0
        gone: list[tuple] = []
        ids = self._ids
        for n in walk(node):
            n.parent = None
            if ids is not None:
                ids.pop(n.id, None)
            if n.is_dir:
                dirs += 1
                quotas += n.quota is not None
            else:
                files += 1
                total += n.length * n.replication
                gone += n.blocks
        del parent.children[node.name]
        self.dirs -= dirs
        self.files -= files
        self._blocks_gone(gone)
        self.add_usage(parent, -(files + dirs), -total)
        self.quota_dirs -= quotas
        return parent

    def _move(self, src: str, dst: str, mtime: int, *, overwrite: bool) -> None:
        node, new_parent, name = self._move_ends(src, dst)
        old_parent = parent_of(node)      # the destination's removal below leaves it in place
        old = new_parent.children.get(name)
        if old is not None and not overwrite:
            raise errors.FileAlreadyExistsError(f"rename destination {dst} already exists",
                                                path=dst)
        if old is not None and old.is_dir and old.children:
            raise errors.NamenodeError(f"rename destination directory is not empty: {dst}",
                                       path=dst)
        quotas = self.quota_dirs
        if quotas:   # the usage walks are only needed to keep quotas right
            count, total = usage(node)
            old_count, old_total = usage(old) if old is not None else (0, 0)
            common = {n.id for n in node.ancestors()}
            self.check_quota(new_parent, count - old_count, total - old_total, stop=common)
        if old is not None:
            self._detach(old)
        if self.snapshots.roots:
            self.snapshots.move(node, new_parent, name)
        del old_parent.children[node.name]
        if node.is_dir:
            self._forget()
        if quotas:
            self.add_usage(old_parent, -count, -total)
        node.name = name
        node.parent = new_parent
        new_parent.children[name] = node
        if quotas:
            self.add_usage(new_parent, count, total)
        old_parent.mtime = new_parent.mtime = mtime

    def _move_ends(self, src: str, dst: str) -> tuple[INode, INodeDirectory, str]:
        """The inode to move, the directory it goes to and its new name, after the checks
        that need no change: neither end is the root, ``dst`` is not under ``src``, ``src``
        exists and ``dst``'s parent is a directory."""
        src_hit, dst_hit = self.indexed_parent(src), self.indexed_parent(dst)
        if (src_hit is not None and dst_hit is not None and dst != src
                and not dst.startswith(src + "/")):
            node = src_hit[0].children.get(src_hit[1])
            if node is None:
                raise errors.PathNotFoundError(f"File does not exist: {src}", path=src)
            return node, dst_hit[0], dst_hit[1]
        src_parts, dst_parts = paths.split(src), paths.split(dst)
        if not src_parts or not dst_parts:
            raise errors.NamenodeError("Rename source or destination can not be the root",
                                       path=src)
        if paths.is_ancestor(src_parts, dst_parts):
            raise errors.NamenodeError(
                f"Rename destination {dst} is a directory or file under source {src}", path=src)
        node = self.get(src, src_parts)
        return node, self.get_dir_for_create(dst_parts, dst), dst_parts[-1]

    # ------------------------------------------------------------------ attribute appliers
    # Each takes its op's record payload: (op code, txid, fields in declaration order).


    def _set_permissions(self, record: tuple) -> None:
        _op, _txid, path, permission = record
        node = self.get(path)
        self._touch(node)
        node.permission = permission

    def _set_acl(self, record: tuple) -> None:
        """The ACL after the op, whole (an empty one removes it), stored as AclStorage does."""
        _op, _txid, path, entries = record
        node = self.get(path)
        if entries:
            after = acl.stored([acl.from_text(e) for e in entries], node.permission,
                               node.is_dir, path)
        else:
            after = acl.without(node.permission, node.acl), None
        self._touch(node)
        node.permission, node.acl = after

    def _set_owner(self, record: tuple) -> None:
        _op, _txid, path, owner, group = record
        node = self.get(path)
        self._touch(node)
        if owner is not None:
            node.owner = owner
        if group is not None:
            node.group = group

    def _set_times(self, record: tuple) -> None:
        _op, _txid, path, mtime, atime = record
        node = self.get(path)
        self._touch(node)
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
        self._touch(node)
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
        self._touch(node)
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
        # only user and trusted xattrs count towards the limit (FSDirXAttrOp.setINodeXAttrs)
        if not exists and name.startswith(("user.", "trusted.")) and sum(
                1 for k in attrs if k.startswith(("user.", "trusted."))) >= self.max_xattrs:
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
        self._touch(node)
        node.xattrs = attrs or None

    # ------------------------------------------------------------------- content appliers


    def _close_file(self, record: tuple) -> None:
        _op, _txid, path, inode_id, length, mtime, atime, blocks, checksum = record
        node = self._under_construction(path, inode_id)
        self._touch(node)
        self._resize(node, length)
        self._set_blocks(node, tuple(tuple(b) for b in blocks))
        node.checksum = checksum or None
        node.mtime, node.atime = mtime, atime
        node.client_name = node.client_machine = None
        self._note_blocks(node.blocks)

    def _add_block(self, record: tuple) -> None:
        _op, _txid, path, inode_id, block = record
        node = self._under_construction(path, inode_id)
        blocks = node.blocks + (tuple(block),)
        self._touch(node)
        self._resize(node, sum(b[1] for b in blocks))
        self._set_blocks(node, blocks)
        self._note_blocks((block,))

    def _update_blocks(self, record: tuple) -> None:
        _op, _txid, path, inode_id, blocks = record
        node = self._under_construction(path, inode_id)
        blocks = tuple(tuple(b) for b in blocks)
        self._touch(node)
        self._resize(node, sum(b[1] for b in blocks))
        self._set_blocks(node, blocks)
        self._note_blocks(blocks)

    def _concat(self, record: tuple) -> None:
        _op, _txid, target, srcs, mtime = record
        path = target
        target = self.get_file(path)
        if target.client_name is not None:
            raise errors.HadoopIllegalArgumentError(
                f"concat: target file {path} is under construction", path=path)
        srcs = [self.get_file(s) for s in srcs]
        directory = parent_of(target)
        _check_concat_sources(target, srcs, record[3], path)
        length = target.length + sum(s.length for s in srcs)
        ss_delta = sum(s.length * (target.replication - s.replication) for s in srcs)
        self.check_quota(target.parent, 0, ss_delta)
        blocks = target.blocks + tuple(b for s in srcs for b in s.blocks)
        self._touch(target)
        for src in srcs:
            self._detach(src)
        # No second quota check: the net change was checked above, and a check of the target's
        # growth alone could fail after the sources were detached.
        self.add_usage(directory, 0, (length - target.length) * target.replication)
        target.length = length
        directory.mtime = mtime
        self._set_blocks(target, blocks)     # the sources' blocks, dropped above, moved over
        target.checksum = None
        target.mtime = mtime

    def _truncate(self, record: tuple) -> None:
        _op, _txid, path, new_length, mtime = record
        node = self._complete_file(path)
        if new_length < 0:
            raise errors.IllegalArgumentError(
                f"Cannot truncate to a negative file size: {new_length}.", path=path)
        if new_length > node.length:
            raise errors.IllegalArgumentError(
                f"Cannot truncate to a larger file size. Current size: {node.length}, "
                f"truncate size: {new_length}.", path=path)
        kept, total = [], 0
        for block_id, num_bytes, genstamp in node.blocks:
            if total >= new_length:
                break
            take = min(num_bytes, new_length - total)
            kept.append((block_id, take, genstamp))
            total += take
        self._touch(node)
        self._resize(node, new_length)
        self._set_blocks(node, tuple(kept))
        node.checksum = None
        node.mtime = mtime

    def _append(self, record: tuple) -> None:
        _op, _txid, path, inode_id, client_name, client_machine = record
        node = self._complete_file(path)
        if node.id != inode_id:
            raise errors.PathNotFoundError(
                f"File {path} has inode id {node.id}, the operation names {inode_id}",
                path=path)
        if not client_name:
            raise errors.IllegalArgumentError("append needs a client name", path=path)
        self._touch(node)
        node.client_name = client_name
        node.client_machine = client_machine or None

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

    # ------------------------------------------------------------------- snapshots

    def _touch(self, node: INode) -> None:
        """Before ``node`` changes: what a snapshot must keep of it (nothing to do, and no
        cost beyond one test, while no directory is snapshottable)."""
        if self.snapshots.roots:
            self.snapshots.before_change(node)

    def _snap_added(self, parent: INodeDirectory, name: str) -> None:
        self.snapshots.before_change(parent)
        self.snapshots.child_added(parent, name)

    def _snapshot_dir(self, path: str) -> INodeDirectory:
        node = self.get(path)
        if not node.is_dir:
            raise errors.PathIsNotDirectoryError(f"`{path}': Is not a directory", path=path)
        return node

    def _allow_snapshot(self, record: tuple) -> None:
        _op, _txid, path = record
        self.snapshots.allow(self._snapshot_dir(path))

    def _disallow_snapshot(self, record: tuple) -> None:
        _op, _txid, path = record
        node = self._snapshot_dir(path)
        entry = self.snapshots.roots.get(node.id)
        if entry is not None and entry[1].snapshots:
            raise errors.SnapshotError(
                f"The directory {path} has snapshot(s). Please redo the operation after "
                f"removing all the snapshots.", path=path)
        self.snapshots.disallow(node)

    def _create_snapshot(self, record: tuple) -> None:
        """The directory's mtime becomes the snapshot's time, as HDFS's addSnapshot sets it;
        older snapshots keep the one before (the registry records it)."""
        _op, _txid, path, name, mtime = record
        node = self._snapshot_dir(path)
        self.snapshots.create(node, name, mtime, self.last_inode_id, path)
        node.mtime = mtime

    def _delete_snapshot(self, record: tuple) -> None:
        _op, _txid, path, name, mtime = record
        node = self._snapshot_dir(path)
        self.snapshots.delete(node, name, path)
        self.blocks_generation += 1
        node.mtime = mtime

    # Delegation keys and tokens (secure mode): the secret manager's state, kept with the
    # namespace so that replay, a standby and the image carry it (``tokens.TokenStore``).

    def _get_delegation_token(self, record: tuple) -> None:
        _op, _txid, identifier, expiry = record
        self.secrets.apply(tokens.TokenIssue(_identifier(identifier), expiry))

    def _renew_delegation_token(self, record: tuple) -> None:
        _op, _txid, identifier, expiry = record
        self.secrets.apply(tokens.TokenRenewal(_identifier(identifier), expiry))

    def _cancel_delegation_token(self, record: tuple) -> None:
        _op, _txid, identifier = record
        self.secrets.apply(tokens.TokenCancel(_identifier(identifier)))

    def _update_master_key(self, record: tuple) -> None:
        _op, _txid, key_id, expiry_date, key = record
        self.secrets.apply(tokens.MasterKeyUpdate(tokens.DelegationKey(key_id, expiry_date,
                                                                       bytes(key))))

    def _rename_snapshot(self, record: tuple) -> None:
        _op, _txid, path, old_name, new_name, mtime = record
        node = self._snapshot_dir(path)
        self.snapshots.rename(node, old_name, new_name, path)
        node.mtime = mtime

    def live_blocks(self) -> set[int]:
        """The block ids every file of the tree refers to (snapshots' own aside: see
        ``Registry.referenced_blocks``); one walk when first asked, then kept by every change
        of blocks. The set itself: copy it before the lock is let go."""
        if self._live_blocks is None:
            ids: set[int] = set()
            for node in walk(self.root):
                if not node.is_dir:
                    ids.update(block[0] for block in node.blocks)
            self._live_blocks = ids
        return self._live_blocks

    def _set_blocks(self, node: INodeFile, blocks: tuple) -> None:
        """``node``'s blocks become ``blocks``: the counts, the generation and the live set
        follow."""
        self.block_count += len(blocks) - len(node.blocks)
        self.blocks_generation += 1
        live = self._live_blocks
        if live is not None:
            live.difference_update(block[0] for block in node.blocks)
            live.update(block[0] for block in blocks)
        node.blocks = blocks

    def _blocks_gone(self, blocks: Sequence[Sequence[int]]) -> None:
        """Blocks of files that left the tree (deleted, overwritten, concatenated)."""
        self.block_count -= len(blocks)
        self.blocks_generation += 1
        if self._live_blocks is not None:
            self._live_blocks.difference_update(block[0] for block in blocks)

    def _note_blocks(self, blocks: Iterable[Sequence[int]]) -> None:
        for block in blocks:
            if block[0] > self.last_block_id:
                self.last_block_id = block[0]


def _inherit(node: INode, parent: INodeDirectory) -> None:
    """A new inode takes its parent's default ACL, its mode filtering it
    (FSDirectory.addLastINode -> AclStorage.copyINodeDefaultAcl). Replays redo it from the
    same parent state and the logged mode, so the edits carry no ACL for a new inode."""
    got = acl.inherited(parent.acl, node.permission, node.is_dir)
    if got is not None:
        node.permission, node.acl = got


def _identifier(raw: bytes) -> tokens.DelegationTokenIdentifier:
    return tokens.DelegationTokenIdentifier.decode(bytes(raw))


def _noop(record: tuple) -> None:
    return None


def _key(parts: tuple) -> str:
    """The directory index's key for a directory: its path, ``""`` for the root."""
    return "/" + "/".join(parts) if parts else ""


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

def _check_concat_sources(target: INodeFile, srcs: list[INodeFile], names: Sequence[str],
                          path: str) -> None:
    """FSDirConcatOp.verifySrcFiles, in its order and with its messages: each source in the
    target's directory, not the target, complete and not empty, with a preferred block size
    no larger than the target's; no source twice."""
    for src, name in zip(srcs, names, strict=True):
        if src.parent is not target.parent:
            raise errors.HadoopIllegalArgumentError(
                f"Source file {name} is not in the same directory with the target {path}",
                path=path)
        if src is target:
            raise errors.HadoopIllegalArgumentError(
                f"concat: the src file {name} is the same with the target file {path}",
                path=path)
        if src.client_name is not None or not src.blocks:
            raise errors.HadoopIllegalArgumentError(
                f"concat: source file {name} is invalid or empty or underConstruction",
                path=path)
        if src.block_size > target.block_size:
            raise errors.HadoopIllegalArgumentError(
                f"concat: source file {name} has preferred block size {src.block_size} which "
                f"is greater than the target file's preferred block size {target.block_size}",
                path=path)
    if len({id(s) for s in srcs}) < len(srcs):
        raise errors.HadoopIllegalArgumentError(
            "concat: at least two of the source files are the same", path=path)
