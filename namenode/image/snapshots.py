"""Snapshots in the fsimage: the ``snapshot`` column and the rows of inodes only snapshots keep.

An inode's ``snapshot`` cell is null or a JSON object with any of::

    root    {"quota": int, "snapshots": [[id, name, ctime, max_inode_id], ...]}
            -- a snapshottable directory and its snapshots in id order
    diffs   [[snapshot id, copy, created, deleted], ...]   -- in id order
            copy: null, or the inode's attributes then (COPY_FIELDS, FILE_FIELDS for a file;
                  xattr values hex, blocks as [id, bytes, genstamp], checksum hex)
            created: null or the names added since; deleted: null or {name: inode id}
    pins    [[directory id, after, up to], ...] -- the stretches of snapshots that see a
            moved inode where it was (the snapshots of that directory with ids in
            (after, up to]; snapshot.py)
    pinned  int -- what images before ``pins`` wrote: the one snapshot a moved inode kept
            serving, read as [[its directory, 0, it]]
    removed [[directory id, after, up to], ...] -- the stretches that saw an inode with diffs
            when it was removed, unless they were one directory's snapshots up to some
    arrived int -- the last snapshot id when the inode was moved
    kept    true -- the inode is in no live directory; a snapshot keeps it

Rows of kept inodes follow the live ones in each section (directories, then files): a kept
subtree's root has parent id 0 and ``kept``, its inodes name their kept parent. An inode id
that a ``deleted`` map names is a row of the image, live or kept.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from nnlite.namenode.errors import ReplayError
from nnlite.namenode.namespace import acl
from nnlite.namenode.namespace.inode import INode, INodeDirectory, INodeFile
from nnlite.namenode.namespace.snapshot import Diff, Registry, Root, Snapshot

COPY_FIELDS = ("name", "permission", "owner", "group", "mtime", "atime")
FILE_FIELDS = ("replication", "block_size", "length", "client_name", "client_machine")


def kept(registry: Registry, root: INode) -> list[tuple[INode, int]]:
    """Every inode only a snapshot keeps, with its parent's id (0 for a kept subtree's
    root), parents before children."""
    out, seen = [], set()
    pending = [node for diffs in registry.diffs.values() for d in diffs
               for node in (d.deleted or {}).values()]
    while pending:
        node = pending.pop()
        if id(node) in seen or _is_live(node, root):
            continue
        seen.add(id(node))
        stack = [(node, 0)]
        while stack:
            current, parent_id = stack.pop()
            out.append((current, parent_id))
            seen.add(id(current))
            if current.is_dir:
                stack.extend((c, current.id) for c in current.children.values())
            for diff in registry.diffs.get(current.id, ()):
                pending.extend((diff.deleted or {}).values())
    return out


def _is_live(node: INode, root: INode) -> bool:
    """Attached all the way up (a removed file keeps its parent link, not its entry)."""
    while node.parent is not None:
        if node.parent.children.get(node.name) is not node:
            return False
        node = node.parent
    return node is root


def records(registry: Registry, kept_ids: set[int]) -> dict[int, str]:
    """The ``snapshot`` cell of every inode that has one, by inode id."""
    cells: dict[int, dict] = {}
    for directory, root in registry.roots.values():
        cells.setdefault(directory.id, {})["root"] = {
            "quota": root.quota,
            "snapshots": [[s.id, s.name, s.ctime, s.max_inode_id] for s in root.snapshots]}
    for inode_id, diffs in registry.diffs.items():
        cells.setdefault(inode_id, {})["diffs"] = [
            [d.snap, _copy(d.copy), sorted(d.created) if d.created else None,
             {n: c.id for n, c in sorted(d.deleted.items())} if d.deleted else None]
            for d in diffs]
    for key, table in (("pins", registry.pinned), ("removed", registry.removed)):
        for inode_id, stretches in table.items():
            cells.setdefault(inode_id, {})[key] = [list(s) for s in stretches]
    for inode_id, came in registry.arrived.items():
        cells.setdefault(inode_id, {})["arrived"] = came
    for inode_id in kept_ids:
        cells.setdefault(inode_id, {})["kept"] = True
    return {k: json.dumps(v, separators=(",", ":"), sort_keys=True) for k, v in cells.items()}


def _copy(node: INode | None) -> list | None:
    if node is None:
        return None
    out = [getattr(node, f) for f in COPY_FIELDS]
    out.append({k: v.hex() for k, v in node.xattrs.items()} if node.xattrs else None)
    out.append([acl.to_text(e) for e in node.acl] if node.acl else None)
    if not node.is_dir:
        out += [getattr(node, f) for f in FILE_FIELDS]
        out.append([list(b) for b in node.blocks])
        out.append(node.checksum.hex() if node.checksum is not None else None)
    return out


def _uncopy(node: INode, values: list | None) -> INode | None:
    if values is None:
        return None
    name, permission, owner, group, mtime, atime, xattrs, entries = values[:8]
    copy: INode
    if node.is_dir:
        copy = INodeDirectory(node.id, None, name, permission, owner, group, mtime, atime)
    else:
        replication, block_size, length, client, machine, blocks, checksum = values[8:]
        copy = INodeFile(node.id, None, name, permission, owner, group, mtime, atime,
                         replication, block_size, length, tuple(tuple(b) for b in blocks),
                         bytes.fromhex(checksum) if checksum is not None else None,
                         client, machine)
    copy.xattrs = {k: bytes.fromhex(v) for k, v in xattrs.items()} if xattrs else None
    copy.acl = acl.share([acl.from_text(t) for t in entries]) if entries else None
    return copy


class Restorer:
    """Collects the ``snapshot`` cells while an image loads, then rebuilds the registry."""

    def __init__(self) -> None:
        self.cells: list[tuple[INode, dict]] = []

    def note(self, node: INode, cell: str) -> dict:
        parsed = json.loads(cell)
        self.cells.append((node, parsed))
        return parsed

    def finish(self, registry: Registry, every_inode: Callable[[], Iterable[INode]]) -> None:
        """``every_inode()`` yields every inode loaded, live and kept (called only when a
        ``deleted`` map needs inodes by id)."""
        wanted = {i for _, cell in self.cells for d in cell.get("diffs", ())
                  for i in (d[3] or {}).values()}
        by_id = {n.id: n for n in every_inode() if n.id in wanted} if wanted else {}
        for node, cell in self.cells:
            root = cell.get("root")
            if root is not None:
                if not node.is_dir:
                    raise ReplayError(f"the image's snapshot cell of file {node.id} makes it a "
                                      f"snapshottable directory")
                snaps = [Snapshot(*s) for s in root["snapshots"]]
                registry.roots[node.id] = (node, Root(snaps, root["quota"]))
                for snap in snaps:
                    registry.by_id[snap.id] = snap
        for node, cell in self.cells:
            diffs = []
            for snap, copy, created, deleted in cell.get("diffs", ()):
                diff = Diff(snap, node)
                diff.copy = _uncopy(node, copy)
                diff.created = set(created) if created else None
                diff.deleted = {n: by_id[i] for n, i in deleted.items()} if deleted else None
                diffs.append(diff)
            if diffs:
                registry.diffs[node.id] = diffs
            pins = (tuple(tuple(s) for s in cell["pins"]) if "pins" in cell
                    else _legacy_pin(registry, cell["pinned"]) if "pinned" in cell else ())
            if pins:
                registry.pinned[node.id] = pins
            if "removed" in cell:
                registry.removed[node.id] = tuple(tuple(s) for s in cell["removed"])
            if "arrived" in cell:
                registry.arrived[node.id] = cell["arrived"]


def _legacy_pin(registry: Registry, snap_id: int) -> tuple:
    """An older image's pin, the newest snapshot a moved inode kept serving, as a stretch
    of its directory's snapshots up to it."""
    root_id = next((r for r, (_, root) in registry.roots.items()
                    if any(s.id == snap_id for s in root.snapshots)), 0)
    return ((root_id, 0, snap_id),) if root_id else ()
