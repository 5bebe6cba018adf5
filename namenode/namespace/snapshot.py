"""Snapshots as HDFS keeps them: O(1) to take, copy-on-write after (HdfsSnapshots.md).

A snapshottable directory holds its snapshots (``Snapshot``: a global id, a name, the time it
was taken and the highest inode id that existed then). Taking one records just that: nothing of
the tree is copied. Afterwards, the first change to an inode that a snapshot can see records
the inode's state before it, in a ``Diff`` keyed by the newest snapshot that sees the inode
(HDFS's DirectoryDiff/FileDiff, in reverse chronological order):

* ``copy``: an unattached clone of the inode's attributes, its name included (and, for a
  file, its length, blocks and checksum) as they were, taken at the first attribute change
  or rename after the snapshot;
* for a directory, ``created`` (names added since) and ``deleted`` (name -> the inode removed,
  replaced or moved away since, kept alive with its subtree and its blocks).

The state at snapshot ``s`` is the current state with every diff of id >= s undone, newest
first; a view names each inode as its parent's diffs list it and shows the attributes its copy
kept, so a renamed inode shows its old name (HDFS's INodeReference.WithName).

Which snapshots see an inode is a list of stretches ``(directory id, after, up to)``: the
snapshots of that snapshottable directory with ids in ``(after, up to]``. An inode sees those of
the snapshottable directory above it taken since it, and every inode between, arrived there
(``arrived``: the last snapshot id when an inode was moved, HDFS's dstSnapshotId), plus those
it was seen by in the places it was moved from (``pinned``, recorded as it leaves: the
WithName's snapshots). An inode whose id is above a snapshot's ``max_inode_id`` did not exist
when it was taken and records nothing.

Deleting a snapshot folds each of its diffs into the diff of the newest older snapshot that
sees the inode (or drops it when none does), so what only the deleted snapshot kept is
released: its inodes become garbage and their blocks unreferenced (``referenced_blocks``).

Invariants: ``diffs[id]`` is sorted by snapshot id, at most one diff per id; ``Registry`` is
empty of everything when no directory is snapshottable, and then every hook returns at once.
Nothing here does I/O.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from nnlite.namenode import errors
from nnlite.namenode.namespace.inode import INode, INodeDirectory, INodeFile, parent_of, walk

DOT_SNAPSHOT = ".snapshot"
SNAPSHOT_LIMIT = 65536        # DirectorySnapshottableFeature.SNAPSHOT_QUOTA_DEFAULT
READ_ONLY = "Modification on a read-only snapshot is disallowed"

Stretch = tuple[int, int, int]     # (snapshottable directory id, after, up to): see above
Modified = tuple[bool, int, str]   # (a directory?, inode id, path): diff_listing
Entry = tuple[int, int, str]       # (parent id, inode id, path): diff_listing
Listing = tuple[list[Modified], list[Entry], list[Entry]]     # diff_listing
Report = list[tuple[str, str, str | None]]    # (type, source, target): diff_report


@dataclass(slots=True)
class Snapshot:
    id: int
    name: str
    ctime: int
    max_inode_id: int


@dataclass(slots=True)
class Root:
    """The DirectorySnapshottableFeature of one directory: its snapshots in id order."""
    snapshots: list[Snapshot] = field(default_factory=list)
    quota: int = SNAPSHOT_LIMIT

    def find(self, name: str) -> Snapshot | None:
        return next((s for s in self.snapshots if s.name == name), None)

    @property
    def latest(self) -> int:
        return self.snapshots[-1].id if self.snapshots else 0


class Diff:
    """What changed of ``node`` after snapshot ``snap`` (the inode is kept to find, when the
    snapshot goes, the older one that sees it)."""
    __slots__ = ("snap", "node", "copy", "created", "deleted")

    def __init__(self, snap: int, node: INode) -> None:
        self.snap = snap
        self.node = node
        self.copy: INode | None = None
        self.created: set[str] | None = None
        self.deleted: dict[str, INode] | None = None


def clone(node: INode) -> INode:
    """An unattached copy of ``node``'s attributes (a directory's without its children)."""
    copy: INode
    if node.is_dir:
        copy = INodeDirectory(node.id, None, node.name, node.permission, node.owner,
                              node.group, node.mtime, node.atime)
    else:
        copy = INodeFile(node.id, None, node.name, node.permission, node.owner, node.group,
                         node.mtime, node.atime, node.replication, node.block_size,
                         node.length, node.blocks, node.checksum, node.client_name,
                         node.client_machine)
    copy.xattrs, copy.acl = node.xattrs, node.acl
    return copy


class Registry:
    """Every snapshot of a tree and every diff that serves them."""

    def __init__(self) -> None:
        self.roots: dict[int, tuple[INodeDirectory, Root]] = {}   # dir id -> (dir, Root)
        self.diffs: dict[int, list[Diff]] = {}
        # inode id -> stretches that see it elsewhere
        self.pinned: dict[int, tuple[Stretch, ...]] = {}
        self.arrived: dict[int, int] = {}       # inode id -> last snapshot id when it moved
        # inode id -> stretches that saw it removed
        self.removed: dict[int, tuple[Stretch, ...]] = {}
        self.by_id: dict[int, Snapshot] = {}
        self.last_id = 0

    # ------------------------------------------------------------------ coverage

    def stretches(self, node: INode | None) -> list[Stretch]:
        """The stretches of snapshots that see ``node`` (ids not checked against its own;
        None, above the root: none)."""
        out: list[Stretch] = []
        floor = 0
        roots, pinned, arrived = self.roots, self.pinned, self.arrived
        while node is not None:
            pins = pinned.get(node.id)
            if pins:
                out.extend((root, max(after, floor), upto) for root, after, upto in pins)
            entry = roots.get(node.id)
            if entry is not None and entry[0] is node and entry[1].snapshots:
                out.append((node.id, floor, entry[1].latest))
            came = arrived.get(node.id)
            if came is not None and came > floor:
                floor = came
            node = node.parent
        return out

    def newest(self, stretches: Iterable[Stretch], below: int | None = None) -> int:
        """The newest snapshot in ``stretches`` (older than ``below``), 0 for none."""
        best = 0
        for root_id, after, upto in stretches:
            if below is not None and upto >= below:
                upto = below - 1
            entry = self.roots.get(root_id)
            if upto <= max(after, best) or entry is None:
                continue
            snaps = entry[1].snapshots
            at = bisect_right(snaps, upto, key=_snapshot_id)
            if at and snaps[at - 1].id > max(after, best):
                best = snaps[at - 1].id
        return best

    def latest(self, node: INode) -> int:
        """The newest snapshot that can see ``node`` (0: none)."""
        return self.newest(self.stretches(node))

    def _sees(self, stretch: Stretch, inode_id: int) -> bool:
        newest = self.newest((stretch,))
        return bool(newest) and inode_id <= self.by_id[newest].max_inode_id

    def _diff(self, node: INode, latest: int) -> Diff | None:
        """The diff recording ``node``'s changes after snapshot ``latest`` (made if needed);
        None when no snapshot sees the inode."""
        if not latest or node.id > self.by_id[latest].max_inode_id:
            return None
        diffs = self.diffs.setdefault(node.id, [])
        if diffs and diffs[-1].snap == latest:
            return diffs[-1]
        diff = Diff(latest, node)
        diffs.append(diff)
        return diff

    # ------------------------------------------------------------------ hooks

    def before_change(self, node: INode) -> None:
        """Called before any attribute or content of ``node`` changes."""
        diff = self._diff(node, self.latest(node))
        if diff is not None and diff.copy is None:
            diff.copy = clone(node)

    def child_added(self, parent: INodeDirectory, name: str) -> None:
        diff = self._diff(parent, self.latest(parent))
        if diff is not None:
            if diff.created is None:
                diff.created = set()
            diff.created.add(name)

    def child_removed(self, parent: INodeDirectory, name: str, child: INode,
                      moving: bool = False) -> None:
        """``child`` leaves ``parent`` (deleted, replaced, or ``moving`` away); the snapshots
        that see it there keep seeing it there: a moved inode's pin."""
        diff = self._diff(parent, self.latest(parent))
        if diff is not None:
            if diff.created and name in diff.created:
                diff.created.discard(name)      # made after the snapshot: nothing to keep
            else:
                if diff.deleted is None:
                    diff.deleted = {}
                diff.deleted.setdefault(name, child)
        if moving:
            _keep(self.pinned, child.id, self._seeing(child))
        else:
            self._removed(child)

    def _seeing(self, node: INode) -> tuple[Stretch, ...]:
        return tuple(dict.fromkeys(s for s in self.stretches(node) if self._sees(s, node.id)))

    def _removed(self, node: INode) -> None:
        """``node`` leaves the tree for good, with its subtree: for each inode of it with
        diffs, which no longer finds its place, what sees it is kept (``removed``) for when a
        snapshot goes, unless that is one directory's snapshots up to some (found then
        without it); pins, which serve inodes in the tree only, go, once every inode of the
        subtree has been seen through them (its own and those above it: the WithName's
        snapshots stay those of the place it was moved from)."""
        nodes = list(walk(node)) if node.is_dir and (self.diffs or self.pinned) else [node]
        seen = {n.id: self._seeing(n) for n in nodes if n.id in self.diffs}
        for n in nodes:
            self.pinned.pop(n.id, None)
        for inode_id, seeing in seen.items():
            _keep(self.removed, inode_id,
                  seeing if len(seeing) > 1 or (seeing and seeing[0][1]) else ())

    def move(self, node: INode, parent: INodeDirectory, name: str) -> None:
        """Before ``node`` moves into ``parent`` as ``name`` (FSDirRenameOp): its copy keeps
        the name the snapshots know (srcChild.recordModification), its old parent lists it as
        removed and the snapshots that saw it there keep seeing it there (WithName), the new
        parent lists the name as added, and only snapshots taken from now on see it in its
        new place (the DstReference's dstSnapshotId)."""
        old = parent_of(node)
        self.before_change(node)
        self.before_change(old)
        self.child_removed(old, node.name, node, moving=True)
        self.before_change(parent)
        self.child_added(parent, name)
        if self.by_id:
            self.arrived[node.id] = self.last_id

    def forget_roots_under(self, node: INode) -> None:
        """A deleted subtree's snapshottable directories (all without snapshots) go."""
        for dir_id, (directory, _) in list(self.roots.items()):
            probe: INodeDirectory | None = directory
            while probe is not None and probe is not node:
                probe = probe.parent
            if probe is node:
                del self.roots[dir_id]

    # ------------------------------------------------------------------ snapshot ops

    def root_of(self, node: INode, path: str) -> Root:
        entry = self.roots.get(node.id)
        if entry is None or entry[0] is not node:
            raise errors.SnapshotError(
                f"Directory is not a snapshottable directory: {path}", path=path)
        return entry[1]

    def allow(self, node: INodeDirectory) -> None:
        entry = self.roots.get(node.id)
        if entry is not None and entry[0] is node:
            entry[1].quota = SNAPSHOT_LIMIT
        else:
            self.roots[node.id] = (node, Root())

    def disallow(self, node: INodeDirectory) -> None:
        self.roots.pop(node.id, None)

    # Each op below checks first, then records the directory as it was (its mtime changes
    # with the op: the earlier snapshots keep the old one), then changes the registry.

    def create(self, node: INodeDirectory, name: str, ctime: int, max_inode_id: int,
               path: str) -> Snapshot:
        root = self.root_of(node, path)
        if len(root.snapshots) + 1 > root.quota:
            raise errors.SnapshotError(
                f"Failed to add snapshot: there are already {len(root.snapshots)} snapshot(s) "
                f"and the snapshot quota is {root.quota}", path=path)
        if root.find(name) is not None:
            raise errors.SnapshotError(
                f'Failed to add snapshot: there is already a snapshot with the same name '
                f'"{name}".', path=path)
        self.before_change(node)
        self.last_id += 1
        snap = Snapshot(self.last_id, name, ctime, max_inode_id)
        root.snapshots.append(snap)
        self.by_id[snap.id] = snap
        return snap

    def rename(self, node: INodeDirectory, old: str, new: str, path: str) -> None:
        root = self.root_of(node, path)
        snap = root.find(old)
        if snap is None:
            raise errors.SnapshotError(
                f"The snapshot {old} does not exist for directory {path}", path=path)
        if old != new and root.find(new) is not None:
            raise errors.SnapshotError(
                f"The snapshot {new} already exists for directory {path}", path=path)
        self.before_change(node)
        snap.name = new

    def delete(self, node: INodeDirectory, name: str, path: str) -> None:
        """Remove a snapshot; its diffs fold into the previous snapshot's, or go."""
        root = self.root_of(node, path)
        snap = root.find(name)
        if snap is None:
            raise errors.SnapshotError(
                f"Cannot delete snapshot {name} from path {path}: the snapshot does not "
                f"exist.", path=path)
        self.before_change(node)
        index = root.snapshots.index(snap)
        same_root = root.snapshots[index - 1].id if index else 0
        root.snapshots.pop(index)
        del self.by_id[snap.id]
        for inode_id in list(self.diffs):
            diffs = self.diffs[inode_id]
            at = next((i for i, d in enumerate(diffs) if d.snap == snap.id), None)
            if at is None:
                continue
            doomed = diffs.pop(at)
            prior = max(self._prior(doomed.node, snap.id, same_root),
                        diffs[at - 1].snap if at else 0)
            if prior:
                before = next((d for d in diffs if d.snap == prior), None)
                if before is None:
                    doomed.snap = prior
                    diffs.insert(next((i for i, d in enumerate(diffs) if d.snap > prior),
                                      len(diffs)), doomed)
                else:
                    _fold(before, doomed)
            if not diffs:
                del self.diffs[inode_id]
        self._forget_stretches()

    def _prior(self, node: INode, snap: int, same_root: int) -> int:
        """The newest snapshot older than ``snap`` that sees ``node``: by its place for an
        inode in the tree, by what saw it when it was removed for one that is not; without
        that record, one directory's snapshots saw it: the one before ``snap``."""
        if _attached(node):
            prior = self.newest(self.stretches(node), below=snap)
        elif node.id in self.removed:
            prior = self.newest(self.removed[node.id], below=snap)
        else:
            prior = same_root
        return prior if prior and node.id <= self.by_id[prior].max_inode_id else 0

    def _forget_stretches(self) -> None:
        """Stretches no snapshot is left in, and arrivals older than every snapshot, go."""
        for table in (self.pinned, self.removed):
            for inode_id, pins in list(table.items()):
                _keep(table, inode_id, tuple(s for s in pins if self._sees(s, inode_id)))
        oldest = min(self.by_id, default=None)
        for inode_id, came in list(self.arrived.items()):
            if oldest is None or came < oldest:
                del self.arrived[inode_id]

    # ------------------------------------------------------------------ reading a snapshot

    def child_at(self, node: INodeDirectory, name: str, snap: int) -> INode | None:
        child = node.children.get(name)
        for diff in reversed(self.diffs.get(node.id, ())):
            if diff.snap < snap:
                break
            if diff.created and name in diff.created:
                child = None
            if diff.deleted and name in diff.deleted:
                child = diff.deleted[name]
        return child

    def children_at(self, node: INodeDirectory, snap: int) -> dict[str, INode]:
        diffs = [d for d in self.diffs.get(node.id, ()) if d.snap >= snap]
        if not diffs:
            return node.children
        children = dict(node.children)
        for diff in reversed(diffs):
            for name in diff.created or ():
                children.pop(name, None)
            children.update(diff.deleted or {})
        return children

    def attrs_at(self, node: INode, snap: int) -> INode:
        """The inode itself, or the copy of what it was at ``snap``."""
        for diff in self.diffs.get(node.id, ()):
            if diff.snap >= snap and diff.copy is not None:
                return diff.copy
        return node

    def view(self, node: INode, snap: int, name: str | None = None) -> INode:
        """``node`` as snapshot ``snap`` holds it: a file's attributes, or a directory
        whose children are those of the snapshot (``SnapshotDirectory``)."""
        attrs = self.attrs_at(node, snap)
        if not node.is_dir:
            return attrs
        return SnapshotDirectory(self, node, attrs, snap, name)

    def referenced_blocks(self) -> set[int]:
        """Blocks that only snapshots still refer to: those of copies and of kept inodes."""
        ids: set[int] = set()
        seen: set[int] = set()
        stack: list[INode] = []
        for diffs in self.diffs.values():
            for diff in diffs:
                if diff.copy is not None and not diff.copy.is_dir:
                    ids.update(b[0] for b in diff.copy.blocks)
                stack.extend((diff.deleted or {}).values())
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if node.is_dir:
                stack.extend(node.children.values())
                for diff in self.diffs.get(node.id, ()):
                    stack.extend((diff.deleted or {}).values())
            else:
                ids.update(b[0] for b in node.blocks)
        return ids


# ------------------------------------------------------------------ content summary

def content(registry: Registry, node: INode) -> tuple[list[int], list[int]]:
    """GETCONTENTSUMMARY's counts of ``node`` as [files, directories, length, space], and
    the part of them only snapshots keep (the ``snapshot*`` fields).

    INodeDirectory.computeContentSummary: at the current state, each directory also counts
    every inode its diffs list as deleted (DirectoryWithSnapshotFeature.
    computeContentSummary4Snapshot), in full and at its own current state, and that part is
    added to the snapshot counts as well. An inode renamed away is listed there too, as a
    reference HDFS counts as the snapshot holds it, so it counts twice as in HDFS. A
    directory seen through a snapshot (``.snapshot`` paths) counts only what it holds."""
    kept = [0, 0, 0, 0]
    return _counted(registry, node, kept), kept


def _counted(registry: Registry, node: INode, kept: list[int] | None = None) -> list[int]:
    """The counts of ``node``'s subtree with what its diffs keep; that part also into
    ``kept`` (the top level only: nested parts are inside the parts that hold them)."""
    files = dirs = length = space = 0
    parts: list[list[int]] = []
    diffs = registry.diffs
    for n in walk(node):
        if n.is_dir:
            dirs += 1
            if diffs and n.id in diffs and not isinstance(n, SnapshotDirectory):
                parts.extend(_counted(registry, removed) for removed in _kept(registry, n))
        else:
            files += 1
            length += n.length
            space += n.length * n.replication
    counts = [files, dirs, length, space]
    for part in parts:
        for i in range(4):
            counts[i] += part[i]
            if kept is not None:
                kept[i] += part[i]
    return counts


def _kept(registry: Registry, directory: INode) -> list[INode]:
    """The inodes ``directory``'s diffs list as deleted: a removed inode as it is, one that
    was renamed and is still in the tree as the diff's snapshot holds it."""
    out = []
    for diff in registry.diffs.get(directory.id, ()):
        for name, child in (diff.deleted or {}).items():
            out.append(registry.view(child, diff.snap, name) if _attached(child) else child)
    return out


def _keep(table: dict[int, tuple[Stretch, ...]], inode_id: int,
          stretches: tuple[Stretch, ...]) -> None:
    if stretches:
        table[inode_id] = stretches
    else:
        table.pop(inode_id, None)


def _snapshot_id(snap: Snapshot) -> int:
    return snap.id


def _attached(node: INode) -> bool:
    """Still in the tree: every parent up to the root holds it under its name."""
    while node.parent is not None:
        if node.parent.children.get(node.name) is not node:
            return False
        node = node.parent
    return node.name == "" and node.is_dir


def _fold(before: Diff, later: Diff) -> None:
    """``before`` (changes after the prior snapshot) absorbs ``later`` (changes after the
    deleted one): the state at the prior snapshot is then the state after both undone."""
    if before.copy is None:
        before.copy = later.copy
    created, deleted = set(before.created or ()), dict(before.deleted or {})
    for name in later.created or ():
        created.add(name)
    for name, child in (later.deleted or {}).items():
        if name in (before.created or ()):
            created.discard(name)           # made and removed between the two: gone
            if name in (later.created or ()):
                created.add(name)
        else:
            deleted.setdefault(name, child)
    before.created, before.deleted = created or None, deleted or None


class SnapshotDirectory(INodeDirectory):
    """A directory as a snapshot holds it: its attributes then and its children then, each
    seen through the same snapshot. Built on access; never attached to the tree."""

    __slots__ = ("_registry", "_source", "_snap")

    def __init__(self, registry: Registry, source: INodeDirectory, attrs: INode, snap: int,
                 name: str | None):
        super().__init__(source.id, None, source.name if name is None else name,
                         attrs.permission, attrs.owner, attrs.group, attrs.mtime, attrs.atime)
        self.xattrs, self.acl, self.quota = attrs.xattrs, attrs.acl, None
        self._registry, self._source, self._snap = registry, source, snap

    @property
    def children(self) -> dict[str, INode]:
        registry, snap = self._registry, self._snap
        return {name: registry.view(child, snap, name)
                for name, child in registry.children_at(self._source, snap).items()}

    @children.setter
    def children(self, value: dict[str, INode]) -> None:   # INodeDirectory.__init__ assigns one
        pass

    def same(self, other: INode) -> bool:
        return (isinstance(other, SnapshotDirectory) and other._source is self._source
                and other._snap == self._snap)


class SnapshotList(INodeDirectory):
    """``<dir>/.snapshot``: a directory listing the snapshots by name, each the snapshot's
    root as it was (mtime: when it was taken), as FSDirStatAndListingOp answers for it."""

    __slots__ = ("_registry", "_directory", "_root")

    def __init__(self, registry: Registry, directory: INodeDirectory,
                 root: Root) -> None:
        super().__init__(0, None, DOT_SNAPSHOT, 0o777, "", "", 0)
        self._registry, self._directory, self._root = registry, directory, root

    @property
    def children(self) -> dict[str, INode]:
        out: dict[str, INode] = {}
        for snap in sorted(self._root.snapshots, key=lambda s: s.name):
            view = self._registry.view(self._directory, snap.id, snap.name)
            view.mtime = snap.ctime
            out[snap.name] = view
        return out

    @children.setter
    def children(self, value: dict[str, INode]) -> None:
        pass

    def same(self, other: INode) -> bool:
        return isinstance(other, SnapshotList) and other._directory is self._directory


# ------------------------------------------------------------------ the diff report

_COMPARED = ("permission", "owner", "group", "mtime", "acl", "xattrs")
_COMPARED_FILE = _COMPARED + ("replication", "length", "blocks")


def diff_listing(registry: Registry, node: INodeDirectory, older: int,
                 newer: int) -> Listing:
    """What changed between two states of a snapshottable directory (snapshot ids; 0 is
    the current tree), as SnapshotDiffListingInfo lists it: ``modified`` ``(dir?, inode id,
    path)`` for a directory whose attributes or entries changed and a file whose attributes,
    length or blocks did; ``created`` and ``deleted`` ``(parent id, inode id, path)``; paths
    relative to the directory ("" for itself).

    The walk is DirectorySnapshottableFeature.computeDiffRecursively's: through the older
    state's entries, into each that kept its name and each renamed to a place under the
    directory in the newer state (found there as findRenameTargetPath finds it), so a path
    names an entry as the older state did (``old/f`` for ``f`` in ``old``, now ``new``). An
    inode in both lists moved (a rename): its created entry gives its path in the newer
    state, under its parent there (the deleted entry's targetPath in HDFS's listing)."""
    def attrs(inode: INode, snap: int) -> INode:
        return registry.attrs_at(inode, snap) if snap else inode

    def children(inode: INodeDirectory, snap: int) -> dict[str, INode]:
        return registry.children_at(inode, snap) if snap else inode.children

    place = _placer(registry, node, newer)
    modified: list[Modified] = []
    created: list[Entry] = []
    deleted: list[Entry] = []
    moved: dict[int, tuple[int, str]] = {}
    stack: list[tuple[INode, str]] = [(node, "")]
    while stack:
        inode, where = stack.pop()
        old, new = attrs(inode, older), attrs(inode, newer)
        if not inode.is_dir:
            if any(getattr(old, f) != getattr(new, f) for f in _COMPARED_FILE):
                modified.append((False, inode.id, where))
            continue
        before, after = children(inode, older), children(inode, newer)
        gone = {n for n in before if n not in after or after[n].id != before[n].id}
        added = [n for n in after if n not in before or after[n].id != before[n].id]
        if gone or added or any(getattr(old, a) != getattr(new, a) for a in _COMPARED):
            modified.append((True, inode.id, where))
        created.extend((inode.id, after[n].id, _join(where, n)) for n in sorted(added))
        deleted.extend((inode.id, before[n].id, _join(where, n)) for n in sorted(gone))
        for name in sorted(before, reverse=True):
            child = before[name]
            if name in gone:
                target = place(child)
                if target is None:
                    continue
                moved[child.id] = target
            stack.append((child, _join(where, name)))
    modified.sort(key=lambda m: m[2].split("/") if m[2] else [])
    created = [(moved[c][0], c, moved[c][1]) if c in moved else (p, c, w)
               for p, c, w in created]
    listed = {c for _, c, _ in created}
    created.extend((parent, c, path) for c, (parent, path) in moved.items() if c not in listed)
    return modified, created, deleted


def _placer(registry: Registry, top: INodeDirectory,
            snap: int) -> Callable[[INode], tuple[int, str] | None]:
    """``place(inode)``: ``(parent id, path under top)`` of ``inode`` in state ``snap`` (0:
    now), None where that state has it nowhere under ``top``. Now, by its parent links; in
    a snapshot, from an index of that snapshot's tree, built on the first call."""
    if not snap:
        return lambda inode: _live_place(inode, top)
    index: dict[int, tuple[int, str]] | None = None

    def place(inode: INode) -> tuple[int, str] | None:
        nonlocal index
        if index is None:
            index = {}
            stack: list[tuple[INodeDirectory, str]] = [(top, "")]
            while stack:
                directory, where = stack.pop()
                for name, child in registry.children_at(directory, snap).items():
                    index[child.id] = (directory.id, _join(where, name))
                    if child.is_dir:
                        stack.append((child, _join(where, name)))
        return index.get(inode.id)
    return place


def _live_place(inode: INode, top: INodeDirectory) -> tuple[int, str] | None:
    if inode.parent is None:      # the root, or an inode out of the tree: under no directory
        return None
    names: list[str] = []
    node: INode = inode
    while node is not top:
        parent = node.parent
        if parent is None or parent.children.get(node.name) is not node:
            return None
        names.append(node.name)
        node = parent
    return inode.parent.id, "/".join(reversed(names))


def diff_report(registry: Registry, node: INodeDirectory, older: int, newer: int) -> Report:
    """SnapshotDiffReport's entries ``(type, source, target)``, in the order Hadoop's
    SnapshotDiffReportGenerator builds them from the listing: each modified inode by path,
    MODIFY, and after a directory its entries: CREATE, then DELETE or RENAME (the same
    inode left here and arrived elsewhere under the directory)."""
    modified, created, deleted = diff_listing(registry, node, older, newer)
    targets = {child: path for _, child, path in created}
    moved = {child for _, child, _ in deleted} & set(targets)
    entries: Report = []
    for is_dir, inode_id, path in modified:
        entries.append(("MODIFY", path, None))
        if not is_dir:
            continue
        entries.extend(("CREATE", p, None) for parent, child, p in created
                       if parent == inode_id and child not in moved)
        entries.extend(("RENAME", p, targets[child]) if child in moved else ("DELETE", p, None)
                       for parent, child, p in deleted if parent == inode_id)
    return entries


def _join(where: str, name: str) -> str:
    return f"{where}/{name}" if where else name
