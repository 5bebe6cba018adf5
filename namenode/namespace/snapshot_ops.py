"""Snapshot requests, as Hadoop's ``FSDirSnapshotOp`` over its ``SnapshotManager``: allowing
and disallowing snapshots, taking, deleting and renaming them, their listings and diffs, and
the check that keeps a subtree holding snapshots from being deleted or renamed away. What a
snapshot is (the registry, copy-on-write diffs, views) is ``snapshot.py``'s.

Each function takes the ``Namespace`` it acts on; a change returns ``(result, ops)``
(``namespace.py``)."""

from __future__ import annotations

import time
from typing import Literal, overload

from nnlite.formats import edits
from nnlite.namenode import errors
from nnlite.namenode.namespace import paths, snapshot
from nnlite.namenode.namespace import permission as access
from nnlite.namenode.namespace.inode import INode, INodeDirectory
from nnlite.namenode.namespace.namespace import Applied, Namespace
from nnlite.namenode.namespace.permission import Caller


def check_no_snapshots(ns: Namespace, node: INode) -> None:
    """FSDirSnapshotOp.checkSnapshot: no deleting or renaming a subtree that holds a
    snapshottable directory with snapshots."""
    if not ns.tree.snapshots.roots or not node.is_dir:
        return
    for directory, root in ns.tree.snapshots.roots.values():
        if not root.snapshots:
            continue
        probe: INodeDirectory | None = directory
        while probe is not None and probe is not node:
            probe = probe.parent
        if probe is node:
            where = directory.path()
            raise errors.SnapshotError(
                f"The directory {where} cannot be deleted since {where} is snapshottable "
                f"and already has snapshots", path=where)


def kept_by_snapshot(ns: Namespace, path: str) -> bool:
    """Whether a snapshot holds the inode at ``path`` (it existed when the newest
    snapshot above it was taken), so deleting it frees none of its blocks."""
    node = ns.tree.lookup(paths.split(path))
    if node is None or not ns.tree.snapshots.roots:
        return False
    latest = ns.tree.snapshots.latest(node)
    return bool(latest) and node.id <= ns.tree.snapshots.by_id[latest].max_inode_id


def snapshottable_above(ns: Namespace, path: str) -> str | None:
    """The snapshottable directory at or above ``path``, if any (none nest)."""
    node: INode | None = ns.tree.lookup(paths.split(path))
    roots = ns.tree.snapshots.roots
    while node is not None and roots:
        entry = roots.get(node.id)
        if entry is not None and entry[0] is node:
            return node.path()
        node = node.parent
    return None


def _snapshot_root(ns: Namespace, path: str, caller: Caller, *,
                   owner: bool = True) -> INodeDirectory:
    """The directory a snapshot request names: it must exist and be a directory
    (INodeDirectory.valueOf); its owner or a superuser may act on it."""
    try:
        node = ns.target(path, caller)
    except errors.PathNotFoundError as exc:
        raise errors.PathNotFoundError(f"Directory does not exist: {path}",
                                       path=path) from exc
    if not node.is_dir:
        raise errors.PathIsNotDirectoryError(f"`{path}': Is not a directory", path=path)
    if owner:
        access.check_owner(caller, node, path)
    return node


def allow_snapshot(ns: Namespace, path: str, caller: Caller) -> Applied[bool]:
    """SnapshotManager.setSnapshottable: superuser only; no snapshottable directory above
    or below it (nested ones are not allowed)."""
    path = ns.resolve(path, caller, write=True)
    access.check_superuser(caller, f"allow snapshots on {path}")
    node = _snapshot_root(ns, path, caller, owner=False)
    for directory, _ in ns.tree.snapshots.roots.values():
        if directory is node:
            continue
        if any(a is node for a in directory.ancestors()):
            raise errors.SnapshotError(
                f"Nested snapshottable directories not allowed: path={path}, the "
                f"subdirectory {directory.path()} is already a snapshottable directory.",
                path=path)
        if any(a is directory for a in node.ancestors()):
            raise errors.SnapshotError(
                f"Nested snapshottable directories not allowed: path={path}, the "
                f"ancestor {directory.path()} is already a snapshottable directory.",
                path=path)
    return True, ns.apply(edits.AllowSnapshotOp(paths.normalize(path)))


def disallow_snapshot(ns: Namespace, path: str, caller: Caller) -> Applied[bool]:
    path = ns.resolve(path, caller, write=True)
    access.check_superuser(caller, f"disallow snapshots on {path}")
    _snapshot_root(ns, path, caller, owner=False)
    return True, ns.apply(edits.DisallowSnapshotOp(paths.normalize(path)))


def create_snapshot(ns: Namespace, path: str, name: str | None, caller: Caller) -> Applied[str]:
    """Returns the snapshot's path. Without a name it is ``s`` and the time, as
    Snapshot.generateDefaultSnapshotName writes it (``s20261125-061530.123``)."""
    path = ns.resolve(path, caller, write=True)
    _snapshot_root(ns, path, caller)
    now = ns.clock()
    if not name:
        name = time.strftime("s%Y%m%d-%H%M%S", time.localtime(now / 1000)) + \
            f".{now % 1000:03d}"
    _check_snapshot_name(name, path)
    norm = paths.normalize(path)
    ops = ns.apply(edits.CreateSnapshotOp(norm, name, now))
    return f"{norm.rstrip('/')}/{snapshot.DOT_SNAPSHOT}/{name}", ops


def delete_snapshot(ns: Namespace, path: str, name: str, caller: Caller) -> Applied[bool]:
    path = ns.resolve(path, caller, write=True)
    _snapshot_root(ns, path, caller)
    return True, ns.apply(edits.DeleteSnapshotOp(paths.normalize(path), name,
                                                      ns.clock()))


def rename_snapshot(ns: Namespace, path: str, old: str, new: str,
                    caller: Caller) -> Applied[bool]:
    path = ns.resolve(path, caller, write=True)
    _snapshot_root(ns, path, caller)
    _check_snapshot_name(new, path)
    return True, ns.apply(edits.RenameSnapshotOp(paths.normalize(path), old, new,
                                                      ns.clock()))


def snapshottable_dirs(ns: Namespace, caller: Caller) -> list[tuple[str, INode, snapshot.Root]]:
    """SnapshotManager.getSnapshottableDirListing: every one for a superuser, else
    those the caller owns; by path."""
    found = [(d.path(), d, root) for d, root in ns.tree.snapshots.roots.values()
             if caller.superuser or d.owner == caller.user]
    return sorted(found, key=lambda item: item[0])


def snapshot_list(ns: Namespace, path: str,
                  caller: Caller) -> tuple[INode, list[snapshot.Snapshot]]:
    """GETSNAPSHOTLIST: the directory's snapshots in id order (READ on it)."""
    node = ns.status(path, caller)
    access.check(caller, node, access.READ, path)
    root = ns.tree.snapshots.root_of(node, path)
    return node, list(root.snapshots)


@overload
def snapshot_diff(ns: Namespace, path: str, older: str, newer: str, caller: Caller, *,
                  listing: Literal[False] = False) -> snapshot.Report: ...


@overload
def snapshot_diff(ns: Namespace, path: str, older: str, newer: str, caller: Caller, *,
                  listing: Literal[True]) -> snapshot.Listing: ...


@overload
def snapshot_diff(ns: Namespace, path: str, older: str, newer: str, caller: Caller, *,
                  listing: bool) -> snapshot.Report | snapshot.Listing: ...


def snapshot_diff(ns: Namespace, path: str, older: str, newer: str, caller: Caller, *,
                  listing: bool = False) -> snapshot.Report | snapshot.Listing:
    """SnapshotManager.diff: between two snapshots of ``path`` or one and now (an
    empty name or "." is the current tree); READ on both states of the tree. The report's
    entries, or with ``listing`` what snapshot.diff_listing gives."""
    node = ns.status(path, caller)
    if not node.is_dir:         # what root_of says of every inode that is no root
        raise errors.SnapshotError(
            f"Directory is not a snapshottable directory: {path}", path=path)
    root = ns.tree.snapshots.root_of(node, path)
    ids: list[int] = []
    for name in (older, newer):
        if not name or name == ".":
            ids.append(0)
            continue
        snap = root.find(name)
        if snap is None:
            raise errors.SnapshotError(
                f"Cannot find the snapshot of directory {path} with name {name}",
                path=path)
        ids.append(snap.id)
    for snap_id in ids:
        access.check_subtree(caller, ns.tree.snapshots.view(node, snap_id) if snap_id
                             else node, access.READ)
    if ids[0] == ids[1]:
        return ([], [], []) if listing else []
    if listing:
        return snapshot.diff_listing(ns.tree.snapshots, node, *ids)
    return snapshot.diff_report(ns.tree.snapshots, node, *ids)


def _check_snapshot_name(name: str, path: str) -> None:
    """FSDirSnapshotOp.verifySnapshotName."""
    if "/" in name:
        raise errors.HadoopIllegalArgumentError('Snapshot name cannot contain "/"', path=path)
    if name in (".", "..", snapshot.DOT_SNAPSHOT) or not name:
        raise errors.HadoopIllegalArgumentError(f'"{name}" is a reserved name.', path=path)
    if len(name.encode("utf-8", "surrogatepass")) > paths.MAX_COMPONENT_BYTES:
        raise errors.IllegalArgumentError(
            f"The maximum path component name limit of {name} in directory {path} is "
            f"exceeded", path=path)

