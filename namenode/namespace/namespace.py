"""Requests against the namespace: permission checks, op building, and HDFS's answers.

``Namespace`` is what Hadoop's ``FSDirectory`` is to its ``FSDir*Op`` classes: it holds the
tree, resolves paths (``/.reserved``, ``.snapshot``), answers the reads and makes the requests
of no family of their own (mkdirs, create, concat, truncate, the data path's), and applies ops
for every request (``apply``). The op families are modules of functions that take it:
``attributes.py`` (FSDirAttrOp), ``delete.py`` (FSDirDeleteOp), ``rename.py``
(FSDirRenameOp), ``xattrs.py`` (FSDirXAttrOp), ``acl_ops.py`` (FSDirAclOp) and
``snapshot_ops.py`` (FSDirSnapshotOp).

Each mutating request checks the caller's permissions, builds the op(s) that express it with
every value resolved (inode ids, times, owners), applies them through ``Tree.apply`` and
returns ``(result, ops)``. The ops are what the caller must log; an empty list means nothing
changed and nothing is logged. A request that raises has changed nothing.

The clock is injected (milliseconds since the epoch), so tests and replays are deterministic.
No I/O happens here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from nnlite.formats import edits
from nnlite.formats.fsimage.layout import NO_QUOTA
from nnlite.namenode import errors
from nnlite.namenode.namespace import acl, paths, reserved, snapshot
from nnlite.namenode.namespace import permission as access
from nnlite.namenode.namespace.checks import (
    check_loggable,
    check_long,
    check_permission,
    check_replication,
)
from nnlite.namenode.namespace.inode import INode, INodeDirectory, INodeFile, space, usage
from nnlite.namenode.namespace.permission import Caller
from nnlite.namenode.namespace.tree import IMPLICIT_UWX, Tree

T = TypeVar("T")
# What a request that may change the tree returns: its answer, and the ops it applied (in
# order) for the caller to log; no ops: nothing changed.
Applied = tuple[T, list[edits.Op]]


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class Namespace:
    """The request methods the service calls (all take a ``Caller``) on the ``Tree`` it holds,
    and what the op families' requests share: ``resolve``, ``status``, ``target``,
    ``check_writable``, ``existing``, ``owned`` and ``apply``.

    It holds the tree rather than being one: the image code, the replay and the secondary's
    merge use the tree alone (``Tree.apply``), and so does every request that changes it
    (``apply``).

    The WebHDFS data path opens a file when its upload starts (``create``/``append`` with the
    upload's client name) and completes it by inode at the end (``upload_close``; or
    ``upload_abandon``); ``create_complete``/``append_complete`` record a whole upload as one
    batch (offline tools). ``namenode/namespace/leases.py`` explains the client names and the
    startup recovery of files whose upload a stop cut off."""

    max_record = edits.DEFAULT_MAX_RECORD     # the largest op it logs; the reader's limit
    acls_enabled = True                       # dfs.namenode.acls.enabled
    supergroup = "supergroup"                 # dfs.permissions.superusergroup
    _reserved: reserved.ReservedDirectory | None = None      # made when first asked for

    def __init__(self, tree: Tree | None = None, *, clock: Callable[[], int] = wall_clock_ms,
                 **tree_kw: Any) -> None:
        """Requests on ``tree`` (a loaded or replayed one), or on a new empty tree made with
        ``tree_kw`` whose root is dated by ``clock``."""
        if tree is None:
            tree_kw.setdefault("mtime", clock())
            tree = Tree(**tree_kw)
        self.tree = tree
        self.clock = clock

    # ----------------------------------------------------------------------- reads

    def status(self, path: str, caller: Caller, *, reserved_dir: bool = False) -> INode:
        """The inode at ``path`` after the traverse check. A file where a directory should
        be is an AccessControlException: FSDirectory.resolvePath turns the traverse's
        ParentNotDirectoryException into one for every op that does not create the path
        (mkdirs, create and a rename's destination resolve their own and keep it). A path
        through ``<dir>/.snapshot/<name>`` reads that snapshot (``_in_snapshot``); one under
        ``/.reserved`` is resolved first (``resolve``). ``/.reserved`` itself is no inode:
        ``reserved.ReservedDirectory`` for a stat or a listing (``reserved_dir``: the two
        answers FSDirStatAndListingOp makes up for it), and does not exist for any other
        request."""
        if reserved.is_reserved(path):
            path = self.resolve(path, caller)
            if reserved_dir and path.rstrip("/") == reserved.PREFIX:
                access.check_traverse(caller, (self.tree.root,))
                return self.reserved_directory
        parts = paths.split(path)
        if snapshot.DOT_SNAPSHOT in parts and self.tree.snapshots.roots:
            return self._in_snapshot(parts, path, caller)
        nodes = self.existing(parts)
        access.check_traverse(caller, nodes[:-1] if len(nodes) == len(parts) + 1 else nodes)
        if len(nodes) != len(parts) + 1:
            raise errors.PathNotFoundError(f"File does not exist: {path}", path=path)
        return nodes[-1]

    def resolve(self, path: str, caller: Caller, write: bool = False) -> str:
        """FSDirectory.resolvePath's rewrite of a ``/.reserved`` path (``reserved.resolve``:
        an inode path to the inode's path now, a raw path without its prefix, the superuser
        alone writing through it); any other path as it is. Every request resolves the paths
        it is given first, so its checks, its errors and the ops it logs name the inode's
        own path, as HDFS's name ``iip.getPath()``. ``write``: the request is no read."""
        if type(path) is not str or not path.startswith(reserved.PREFIX):
            return path
        return reserved.resolve(self.tree, path, caller, write)

    @property
    def reserved_directory(self) -> reserved.ReservedDirectory:
        """``/.reserved``, as stat and listing answer for it (one, so a listing read page by
        page sees the same directory)."""
        if self._reserved is None:
            self._reserved = reserved.ReservedDirectory(self.supergroup)
        return self._reserved

    def target(self, path: str, caller: Caller) -> INode:
        """``status`` for a request that changes the inode: a path inside a snapshot is
        refused (SnapshotAccessControlException); a raw path asks for the superuser."""
        path = self.resolve(path, caller, write=True)
        if snapshot.DOT_SNAPSHOT in path:        # rare: split only then
            self.check_writable(paths.split(path), path)
        return self.status(path, caller)

    def check_writable(self, parts: tuple, path: str) -> None:
        """No change goes into a snapshot: a path through ``<dir>/.snapshot`` of a
        snapshottable directory is read-only (SnapshotAccessControlException); elsewhere
        ".snapshot" is a name no inode may take (FSDirectory.verifyINodeName)."""
        if snapshot.DOT_SNAPSHOT not in parts:
            return
        at = parts.index(snapshot.DOT_SNAPSHOT)
        directory = self.tree.lookup(parts[:at])
        entry = self.tree.snapshots.roots.get(directory.id) if directory is not None else None
        if entry is not None and entry[0] is directory:
            raise errors.SnapshotAccessControlError(snapshot.READ_ONLY, path=path)
        raise errors.HadoopIllegalArgumentError(
            f'"{snapshot.DOT_SNAPSHOT}" is a reserved name.', path=path)

    def _in_snapshot(self, parts: tuple, path: str, caller: Caller) -> INode:
        """Resolve ``<dir>/.snapshot[/<name>[/...]]``: the snapshottable directory as it is
        now, then the snapshot's view of everything below it, with the traverse checked on
        the directories passed as the snapshot holds them."""
        at = parts.index(snapshot.DOT_SNAPSHOT)
        nodes = self.existing(parts[:at])
        if len(nodes) != at + 1:
            raise errors.PathNotFoundError(f"File does not exist: {path}", path=path)
        access.check_traverse(caller, nodes)
        directory = nodes[-1]
        entry = self.tree.snapshots.roots.get(directory.id)
        if entry is None or entry[0] is not directory:
            raise errors.PathNotFoundError(f"File does not exist: {path}", path=path)
        directory, root = entry
        if at + 1 == len(parts):
            return snapshot.SnapshotList(self.tree.snapshots, directory, root)
        snap = root.find(parts[at + 1])
        if snap is None:
            raise errors.PathNotFoundError(f"File does not exist: {path}", path=path)
        node = self.tree.snapshots.view(directory, snap.id, snap.name)
        node.mtime = snap.ctime
        source: INode = directory
        for name in parts[at + 2:]:
            if not source.is_dir:       # as node is: a view is a directory when its source is
                raise errors.AccessControlError(f"{node.name} (is not a directory)", path=path)
            access.check(caller, node, access.EXECUTE)
            found = self.tree.snapshots.child_at(source, name, snap.id)
            if found is None:
                raise errors.PathNotFoundError(f"File does not exist: {path}", path=path)
            source = found
            node = self.tree.snapshots.view(source, snap.id, name)
        return node

    def existing(self, parts: tuple) -> list[INode]:
        """``resolve`` for an op on a path that exists (not one it creates): a file where a
        directory should be is an AccessControlException (FSDirectory.resolvePath)."""
        try:
            return self.tree.resolve(parts)
        except errors.ParentNotDirectoryError as exc:
            raise errors.AccessControlError(str(exc), path=paths.join(parts)) from exc

    def listing(self, path: str, caller: Caller, start_after: str = "",
                limit: int | None = None) -> tuple[list[INode], int]:
        """Children sorted by name after ``start_after`` (a file lists as itself).
        Returns the page and how many entries remain after it."""
        node, names = self.listing_names(path, caller)
        if not node.is_dir:
            return [node], 0
        if start_after:
            import bisect
            names = names[bisect.bisect_right(names, start_after):]
        page = names if limit is None else names[:limit]
        children = reserved.entries(node)
        return [children[n] for n in page], len(names) - len(page)

    def listing_names(self, path: str, caller: Caller) -> tuple[INode, list[str]]:
        """The directory (or file) at ``path`` and its children's names in order, checked as
        ``listing`` is: the start of a listing streamed page by page (``listing_page``)."""
        node = self.status(path, caller, reserved_dir=True)
        if not node.is_dir:
            return node, []
        if not reserved.is_reserved_directory(node):     # no inode: nothing to check
            access.check(caller, node, access.READ | access.EXECUTE, path)
        return node, sorted(reserved.entries(node))

    def listing_page(self, path: str, caller: Caller, node: INode,
                     names: list[str]) -> list[INode]:
        """The children among ``names`` that ``node``, a directory, still holds, after
        checking that ``path`` still is ``node`` and may still be listed (else the error a new
        listing would raise). Names created since the listing began are not in it."""
        if not node.is_dir:     # a file lists as itself, whole (listing_names): no pages
            raise errors.PathIsNotDirectoryError(f"{path} is not a directory", path=path)
        current = self.status(path, caller, reserved_dir=True)
        if current is not node and not (isinstance(node, (snapshot.SnapshotDirectory,
                                                          snapshot.SnapshotList))
                                        and node.same(current)):
            raise errors.PathNotFoundError(f"{path} changed while it was listed", path=path)
        if not reserved.is_reserved_directory(node):
            access.check(caller, node, access.READ | access.EXECUTE, path)
        children = reserved.entries(node)
        return [children[n] for n in names if n in children]

    def content_summary(self, path: str, caller: Caller) -> dict:
        node = self.status(path, caller)
        access.check_subtree(caller, node, access.READ | access.EXECUTE)
        (files, dirs, length, consumed), kept = snapshot.content(self.tree.snapshots, node)
        quota = node.quota if node.is_dir else None
        return {"length": length, "fileCount": files, "directoryCount": dirs,
                "spaceConsumed": consumed,
                "quota": quota.ns_quota if quota else NO_QUOTA,
                "spaceQuota": quota.ss_quota if quota else NO_QUOTA,
                "snapshotFileCount": kept[0], "snapshotDirectoryCount": kept[1],
                "snapshotLength": kept[2], "snapshotSpaceConsumed": kept[3]}

    def quota_usage(self, path: str, caller: Caller) -> dict:
        node = self.status(path, caller)
        # as Hadoop's getQuotaUsage
        access.check_subtree(caller, node, access.READ | access.EXECUTE)
        quota = node.quota if node.is_dir else None
        count, consumed = (quota.ns_used, quota.ss_used) if quota else usage(node)
        return {"fileAndDirectoryCount": count, "spaceConsumed": consumed,
                "quota": quota.ns_quota if quota else NO_QUOTA,
                "spaceQuota": quota.ss_quota if quota else NO_QUOTA}

    # ----------------------------------------------------------------------- mutations

    def mkdirs(self, path: str, permission: int, caller: Caller,
               unmasked: int | None = None) -> Applied[bool]:
        """``unmasked``: the mode before the client's umask (WebHDFS's unmaskedpermission);
        the new directory takes it when its parent has a default ACL (HDFS-6962, POSIX ACL
        inheritance, FSDirectory.copyINodeDefaultAcl). Missing ancestors take the masked
        mode plus u+wx either way (FSDirMkdirOp.createParentDirectories)."""
        path = self.resolve(path, caller, write=True)
        check_permission(permission, path)
        parent: INode
        hit = self.tree.indexed_parent(path)
        if hit is not None:
            # The common case: a directory the tree's index knows, and a plain last name
            # (the checks paths.split makes, made by the index). The same checks in the same
            # order as the general case, with the ancestors taken from parent links.
            parent, name = hit
            if name == snapshot.DOT_SNAPSHOT:
                self.check_writable(paths.split(path), path)
            node = parent.children.get(name)
            if not caller.superuser:
                access.check_traverse(caller, _root_down(parent if node is not None
                                                    else parent.parent))
            logged, missing = path, 1
        else:
            parts = paths.split(path)
            self.check_writable(parts, path)
            nodes = self.tree.resolve(parts)
            access.check_traverse(caller, nodes[:-1])
            node = nodes[-1] if len(nodes) == len(parts) + 1 else None
            parent = nodes[-1]          # the deepest existing ancestor, when node is None
            logged, missing = paths.join(parts), len(parts) + 1 - len(nodes)
        if node is not None:
            if not node.is_dir:
                raise errors.FileAlreadyExistsError(f"Path is not a directory: {path}",
                                                    path=path)
            return True, []
        access.check(caller, parent, access.WRITE | access.EXECUTE)
        if parent is self.tree.root:
            reserved.check_name(paths.split(logged), path)
        now, first = self.clock(), self.tree.last_inode_id + 1
        if unmasked is None or unmasked == permission or not acl.has_default(parent.acl):
            return True, self.apply(edits.MkdirOp(logged, first, permission, caller.user,
                                                     parent.group, now))
        check_permission(unmasked, path)
        ops: list[edits.Op] = []
        if missing > 1:
            ops.append(edits.MkdirOp(logged.rpartition("/")[0], first,
                                     permission | IMPLICIT_UWX, caller.user, parent.group, now))
        ops.append(edits.MkdirOp(logged, first + missing - 1, unmasked, caller.user,
                                 parent.group, now))
        return True, self.apply(*ops)

    def create(self, path: str, caller: Caller, *, permission: int = 0o644,
               overwrite: bool = False, create_parent: bool = True, replication: int = 1,
               block_size: int = 128 << 20, client_name: str = "", client_machine: str = "",
               unmasked: int | None = None) -> Applied[bool]:
        """Create a file entry: complete and empty with no ``client_name``, else under
        construction and leased to that client. ``unmasked`` as for ``mkdirs``. The path is
        checked first (FSNamesystem.startFileInt: a reserved name), then resolved."""
        reserved.check_create(path)
        path = self.resolve(path, caller, write=True)
        check_replication(replication, path)
        check_permission(permission, path)
        if unmasked is not None:
            check_permission(unmasked, path)
        check_long(block_size, "block size", path, minimum=1)
        parts, nodes = self.check_create(path, caller, overwrite=overwrite,
                                         create_parent=create_parent)
        ops: list[edits.Op] = []
        now = self.clock()
        if len(nodes) < len(parts):
            ancestor = _directory(nodes[-1], path)
            self.tree.check_quota(ancestor, len(parts) - len(nodes) + 1, 0)
            ops.append(edits.MkdirOp(paths.join(parts[:-1]), self.tree.last_inode_id + 1,
                                 permission | IMPLICIT_UWX, caller.user, ancestor.group, now))
            group = ancestor.group
        else:
            group = nodes[len(parts) - 1].group
        first_id = self.tree.last_inode_id + 1 + (len(parts) - len(nodes) if ops else 0)
        parent = nodes[min(len(nodes), len(parts)) - 1]   # the parent, or the ancestor it copies
        if unmasked is not None and acl.has_default(parent.acl):
            permission = unmasked
        ops.append(edits.AddFileOp(paths.join(parts), first_id, replication, block_size, 0,
                               permission, caller.user, group, now, now, overwrite,
                               client_name, client_machine))
        return True, self.apply(*ops)

    def check_create(self, path: str, caller: Caller, *, overwrite: bool = False,
                     create_parent: bool = True) -> tuple[tuple, list[INode]]:
        """Raise what ``create`` would raise for the path, the permissions and ``overwrite``
        (its quota check aside); change nothing. Returns the path's components and the inodes
        along it that exist (``resolve``)."""
        reserved.check_create(path)
        path = self.resolve(path, caller, write=True)
        parts = paths.split(path)
        if not parts:
            raise errors.FileAlreadyExistsError("/ already exists as a directory", path=path)
        self.check_writable(parts, path)
        nodes = self.tree.resolve(parts)
        if len(nodes) < len(parts):
            if not create_parent:
                raise errors.PathNotFoundError(
                    f"Parent directory doesn't exist: {paths.join(parts[:-1])}", path=path)
            if not nodes[-1].is_dir:
                raise errors.ParentNotDirectoryError(
                    f"{nodes[-1].path()} (is not a directory)", path=path)
            access.check_traverse(caller, nodes[:-1])
            access.check(caller, nodes[-1], access.WRITE | access.EXECUTE)
            if len(nodes) == 1:
                reserved.check_name(parts, path)
            return parts, nodes
        parent = nodes[len(parts) - 1]
        if not parent.is_dir:
            raise errors.ParentNotDirectoryError(
                f"Parent path is not a directory: {parent.path()}", path=path)
        access.check_traverse(caller, nodes[:len(parts)])
        access.check(caller, parent, access.WRITE | access.EXECUTE)
        if len(nodes) == len(parts) + 1:
            self._check_overwrite(nodes[-1], parent, caller, overwrite, path)
        elif len(parts) == 1:
            reserved.check_name(parts, path)
        return parts, nodes

    # ----------------------------------------------------------------------- others

    def check_access(self, path: str, caller: Caller, wanted: int) -> None:
        """FSNamesystem.checkAccess: the traverse, then ``wanted`` on the inode itself."""
        try:
            node = self.status(path, caller)
        except errors.PathNotFoundError as exc:
            raise errors.PathNotFoundError("Path not found", path=path) from exc
        access.check(caller, node, wanted, path)

    def trash_roots(self, caller: Caller, user: str | None) -> list[tuple[str, INode]]:
        """DistributedFileSystem.getTrashRoots as the caller runs it: ``/user/<user>/.Trash``
        with its own status when it exists; for every user (``user`` None), each
        ``/user/<name>/.Trash`` that exists, with the status of ``/user/<name>`` (the
        client lists the homes and renames each status to its trash)."""
        def exists(path: str) -> INode | None:
            try:
                return self.status(path, caller)
            except errors.PathNotFoundError:
                return None
        if user is not None:
            node = exists(f"/user/{user}/.Trash")
            return [(f"/user/{user}/.Trash", node)] if node is not None else []
        if exists("/user") is None:
            return []
        homes, _ = self.listing("/user", caller)
        return [(f"/user/{home.name}/.Trash", home) for home in homes
                if home.is_dir and exists(f"/user/{home.name}/.Trash") is not None]

    def concat(self, target: str, srcs: list[str], caller: Caller) -> Applied[bool]:
        """FSDirConcatOp.validatePath, then the permissions; the files themselves are checked
        as the op applies (tree._check_concat_sources)."""
        target = self.resolve(target, caller, write=True)
        srcs = [self.resolve(s, caller, write=True) for s in srcs]
        if not srcs:
            raise errors.IllegalArgumentError("No sources given", path=target)
        parent = paths.split(target)[:-1]
        if any(paths.split(s)[:-1] != parent for s in srcs):
            raise errors.IllegalArgumentError(
                "Sources and target are not in the same directory", path=target)
        nodes = [self.target(p, caller) for p in [target, *srcs]]
        access.check(caller, nodes[0], access.WRITE, target)
        for p, node in zip(srcs, nodes[1:], strict=True):
            # FSDirConcatOp.verifySrcFiles: READ on the source, WRITE on its parent "for
            # delete" -- a parent access, so FSPermissionChecker applies the sticky bit. The
            # root has no parent to check (checkParentAccess skips it); the op refuses it, as
            # it is no file ("Path is not a file: /").
            access.check(caller, node, access.READ, p)
            if node.parent is not None:
                access.check(caller, node.parent, access.WRITE, p)
                access.check_sticky(caller, node.parent, node, p)
        op = edits.ConcatOp(paths.normalize(target), tuple(paths.normalize(s) for s in srcs),
                        self.clock())
        return True, self.apply(op)

    def truncate(self, path: str, new_length: int, caller: Caller) -> Applied[bool]:
        path = self.resolve(path, caller, write=True)
        node = self.target(path, caller)
        access.check(caller, node, access.WRITE, path)
        return True, self.apply(edits.TruncateOp(paths.normalize(path), new_length,
                                                self.clock()))

    def append(self, path: str, caller: Caller, client_name: str,
               client_machine: str = "") -> Applied[bool]:
        """Reopen a complete file for appending by ``client_name`` (HDFS OP_APPEND)."""
        path = self.resolve(path, caller, write=True)
        node = self.writable_file(path, caller, "append to")
        op = edits.AppendOp(paths.normalize(path), node.id, client_name, client_machine)
        return True, self.apply(op)

    # ----------------------------------------------------------------------- helpers

    def apply(self, *ops: edits.Op) -> edits.PackedOps:
        """Check every op, then apply them in order; returns them with the bytes the checks
        packed, which the journal logs (``E.PackedOps``)."""
        packed = [check_loggable(op, self.max_record) for op in ops]
        for op in ops:
            self.tree.apply(op)
        return edits.PackedOps.of(ops, packed)

    def owned(self, path: str, caller: Caller) -> INode:
        """``target`` for a request only the owner (or a superuser) makes (FSDirectory
        .checkOwner: setPermission, setOwner, the ACL changes)."""
        node = self.target(path, caller)
        access.check_owner(caller, node, path)
        return node

    def _check_overwrite(self, node: INode, parent: INode, caller: Caller, overwrite: bool,
                         path: str) -> None:
        if node.is_dir:
            raise errors.FileAlreadyExistsError(
                f"{path} already exists as a directory", path=path)
        if not overwrite:
            raise errors.FileAlreadyExistsError(f"{path} already exists", path=path)
        if node.client_name is not None:
            raise errors.LeaseError(
                f"Failed to create {path}: it is being written by {node.client_name}",
                path=path)
        # WRITE on the file and its parent; the overwritten file is then deleted without a
        # permission check of its own, so no sticky bit (FSDirWriteFileOp.startFile)
        access.check(caller, node, access.WRITE, path)

    # ------------------------------------------------------------ data path requests

    def readable_file(self, path: str, caller: Caller) -> INodeFile:
        """The file at ``path`` if ``caller`` may read it (OPEN, checksum, block locations)."""
        node = self.status(path, caller)
        if node.is_dir:
            raise errors.PathNotFoundError(f"Path is not a file: {path}", path=path)
        access.check(caller, node, access.READ, path)
        return node

    def writable_file(self, path: str, caller: Caller, action: str) -> INodeFile:
        """The complete file at ``path`` if ``caller`` may write it (APPEND, TRUNCATE)."""
        path = self.resolve(path, caller, write=True)
        node = self.target(path, caller)
        if node.is_dir:
            raise errors.PathNotFoundError(f"Failed to {action} {path}: it is a directory",
                                           path=path)
        access.check(caller, node, access.WRITE, path)
        if node.client_name is not None:
            raise errors.LeaseError(
                f"Failed to {action} {path}: it is being written by {node.client_name}",
                path=path)
        return node

    def live_path(self, node: INode) -> str | None:
        """The path of an inode still in the tree (wherever a rename took it), None once it
        was removed."""
        names = []
        while node.parent is not None:
            if node.parent.children.get(node.name) is not node:
                return None
            names.append(node.name)
            node = node.parent
        return "/" + "/".join(reversed(names)) if node is self.tree.root else None

    def _open_by(self, node: INodeFile, holder: str) -> str:
        """FSNamesystem.checkLease: the file is still in the tree, open, by ``holder``; its
        path now. The messages are HDFS's (leaseExceptionString)."""
        path = self.live_path(node)
        if path is None:
            raise errors.PathNotFoundError(
                f"File does not exist: {node.name} (inode {node.id}) Holder {holder} does not "
                f"have any open files.", path=node.name)
        if node.client_name is None:
            raise errors.LeaseExpiredError(
                f"{path} (inode {node.id}) Holder {holder} does not have any open files. "
                f"File is not open for writing.", path=path)
        if node.client_name != holder:
            raise errors.LeaseExpiredError(
                f"Client (={holder}) is not the lease owner (={node.client_name}: {path} "
                f"(inode {node.id}) Holder {holder} does not have any open files.", path=path)
        return path

    def upload_close(self, node: INodeFile, holder: str, *, blocks: tuple, length: int,
                     checksum: bytes, appended: bool) -> Applied[bool]:
        """Complete an upload's file (CloseFileOp), which it opened at its start: by the
        inode, so a writer follows its file through a rename, and a removed file fails the
        close as HDFS's completeFile fails it."""
        path = self._open_by(node, holder)
        self.tree.check_quota(node.parent, 0, (length - node.length) * node.replication)
        now = self.clock()
        close = edits.CloseFileOp(path, node.id, length, now, node.atime if appended else now,
                                  tuple(blocks), checksum)
        return True, self.apply(close)

    def upload_blocks(self, node: INodeFile, holder: str, blocks: tuple) -> Applied[bool]:
        """The blocks of a file being written over RPC so far, the last one at the length its
        writer last reported (UpdateBlocksOp: HDFS's ``FSDirWriteFileOp.persistBlocks`` at
        addBlock, abandonBlock and fsync), so a restart knows them and ``getFileInfo`` shows
        the length a writer's fsync recorded. Nothing when they are the ones recorded."""
        path = self._open_by(node, holder)
        blocks = tuple(tuple(b) for b in blocks)
        if blocks == node.blocks:
            return True, []
        return True, self.apply(edits.UpdateBlocksOp(path, node.id, blocks))

    def upload_abandon(self, node: INodeFile, holder: str) -> Applied[bool]:
        """Lease recovery of an upload that will not complete (its body was cut off with
        nothing to keep, its lease taken over, its close refused): the file closes with the
        blocks it has. Nothing when it is gone or someone else's now."""
        path = self.live_path(node)
        if path is None or node.client_name != holder:
            return True, []
        close = edits.CloseFileOp(path, node.id, node.length, node.mtime, node.atime,
                                  node.blocks, node.checksum)
        return True, self.apply(close)

    def create_complete(self, path: str, caller: Caller, *, blocks: tuple, length: int,
                        checksum: bytes, client_name: str, client_machine: str = "",
                        **create_kw: Any) -> Applied[bool]:
        """A whole CREATE upload: [MkdirOp], AddFileOp under construction by
        ``client_name``, CloseFileOp with the blocks, length and checksum."""
        path = self.resolve(path, caller, write=True)
        self.check_create(path, caller, overwrite=create_kw.get("overwrite", False),
                          create_parent=create_kw.get("create_parent", True))
        parts = paths.split(path)
        self._check_growth(parts, length * create_kw.get("replication", 1))
        norm, now = paths.join(parts), self.clock()
        inode_id = self.tree.last_inode_id + len(parts) + 1
        check_loggable(edits.CloseFileOp(norm, inode_id, length, now, now, tuple(blocks), checksum),
                       self.max_record)
        _, ops = self.create(path, caller, client_name=client_name,
                             client_machine=client_machine, **create_kw)
        node = self.tree.get_file(norm)
        close = edits.CloseFileOp(norm, node.id, length, now, now, tuple(blocks), checksum)
        return True, ops + self.apply(close)

    def append_complete(self, path: str, caller: Caller, *, inode_id: int,
                        expected_blocks: tuple, blocks: tuple, length: int, checksum: bytes,
                        client_name: str, client_machine: str = "") -> Applied[bool]:
        """A whole APPEND upload: AppendOp, CloseFileOp with the new blocks and length. The
        file must still be the one (``inode_id``, ``expected_blocks``) the upload started on."""
        path = self.resolve(path, caller, write=True)
        node = self._unchanged(path, caller, inode_id, expected_blocks, "append to")
        self.tree.check_quota(node.parent, 0, (length - node.length) * node.replication)
        close = edits.CloseFileOp(paths.normalize(path), node.id, length, self.clock(),
                              node.atime, tuple(blocks), checksum)
        check_loggable(close, self.max_record)
        _, ops = self.append(path, caller, client_name, client_machine)
        return True, ops + self.apply(close)

    def truncate_blocks(self, path: str, caller: Caller, new_length: int, *, inode_id: int,
                        expected_blocks: tuple, last_block: tuple | None, checksum: bytes,
                        client_name: str, client_machine: str = "") -> Applied[bool]:
        """TRUNCATE with copy-on-write: a TruncateOp; when the cut falls inside a block, also
        AppendOp and CloseFileOp putting ``last_block`` (a new block holding the kept prefix)
        in place of the cut block. Truncating to the current length changes nothing."""
        path = self.resolve(path, caller, write=True)
        node = self._unchanged(path, caller, inode_id, expected_blocks, "truncate")
        if new_length == node.length:
            return True, []
        if last_block is None:
            return self.truncate(path, new_length, caller)
        whole, take = _cut(node.blocks, new_length)
        if last_block[1] != take:
            raise errors.IllegalArgumentError(
                f"truncate of {path}: the copied block holds {last_block[1]} bytes, the cut "
                f"keeps {take}", path=path)
        close = edits.CloseFileOp(paths.normalize(path), node.id, new_length, self.clock(),
                              node.atime, whole + (tuple(last_block),), checksum)
        check_loggable(close, self.max_record)
        _, ops = self.truncate(path, new_length, caller)
        _, more = self.append(path, caller, client_name, client_machine)
        return True, ops + more + self.apply(close)

    def recover_upload(self, path: str, inode_id: int,
                       blocks: tuple | None = None) -> Applied[bool]:
        """Startup lease recovery of an upload cut off by a stop: close the file with the
        blocks it has, or with ``blocks`` (those the block store could keep of them, at the
        lengths it finalized them: ``commitBlockSynchronization``; the content checksum is
        then unknown)."""
        node = self.tree.get_file(path, inode_id)
        if node.client_name is None:
            return True, []
        length, checksum = node.length, node.checksum
        if blocks is None or tuple(map(tuple, blocks)) == node.blocks:
            blocks = node.blocks
        else:
            blocks = tuple(tuple(b) for b in blocks)
            length, checksum = sum(b[1] for b in blocks), None
        close = edits.CloseFileOp(paths.normalize(path), node.id, length, node.mtime,
                                  node.atime, blocks, checksum)
        return True, self.apply(close)

    def _unchanged(self, path: str, caller: Caller, inode_id: int, expected_blocks: tuple,
                   action: str) -> INodeFile:
        node = self.writable_file(path, caller, action)
        if node.id != inode_id or node.blocks != tuple(expected_blocks):
            raise errors.NamenodeError(
                f"Failed to {action} {path}: the file was replaced, truncated or "
                "concatenated while the data was being written; retry", path=path)
        return node

    def _check_growth(self, parts: tuple, ss_delta: int) -> None:
        """The space-quota check of an upload's CloseFileOp, made before anything applies
        (an overwritten file's space is given back first)."""
        nodes = self.tree.resolve(parts)
        if len(nodes) == len(parts) + 1:
            ss_delta -= space(nodes[-1])       # a file: check_create refused a directory
            nodes = nodes[:-1]
        self.tree.check_quota(_directory(nodes[-1], paths.join(parts)), 0, ss_delta)


def _directory(node: INode, path: str) -> INodeDirectory:
    """``node``, the deepest inode that exists on ``path``, as the directory that
    ``check_create`` found it is (ParentNotDirectoryError, as ``resolve`` says, otherwise)."""
    if not node.is_dir:
        raise errors.ParentNotDirectoryError(f"{node.path()} (is not a directory)", path=path)
    return node


def _root_down(node: INode | None) -> list[INode]:
    """``node`` and its ancestors, from the root down, as ``resolve`` lists them."""
    chain: list[INode] = []
    while node is not None:
        chain.append(node)
        node = node.parent
    chain.reverse()
    return chain


def _cut(blocks: tuple, new_length: int) -> tuple[tuple, int]:
    """The blocks a truncate to ``new_length`` keeps whole, and how many bytes of the next
    block it keeps (0 < new_length < the file's length)."""
    total = 0
    for i, block in enumerate(blocks):
        if total + block[1] >= new_length:
            return blocks[:i], new_length - total
        total += block[1]
    return blocks, 0
