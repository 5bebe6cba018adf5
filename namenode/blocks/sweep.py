"""The sweep: removal of block files that no file of the namespace refers to.

Blocks that no file refers to (deleted or overwritten files, a crash between publishing and
logging) are removed once older than a grace period; ids held by writers in progress
(``BlockStore.allocate``/``hold`` until ``release``) are never swept. On a standby of an HA
set, whose writers are the active's, blocks that arrived since the oldest write still open
began are kept too (``OpenWrites``): they wait for the close op that records them. This is
the one part of the block store that reads the namespace.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from nnlite.namenode.namespace.inode import walk
from nnlite.namenode.namespace.tree import Tree

if TYPE_CHECKING:
    from nnlite.namenode.blocks.store import BlockStore

log = logging.getLogger(__name__)


def referenced(tree: Tree) -> set[int]:
    """Every block id a file of the namespace refers to, or a snapshot still keeps (call
    under the namesystem lock): a block goes only once the last snapshot that needs it is
    deleted, as HDFS collects blocks when a snapshot's diffs are destroyed."""
    ids: set[int] = set()
    for node in walk(tree.root):
        if not node.is_dir:
            ids.update(block[0] for block in node.blocks)
    if tree.snapshots.diffs:
        ids |= tree.snapshots.referenced_blocks()
    return ids


class ReferencedBlocks:
    """What ``referenced(tree)`` finds, without walking the namespace: the tree's live block
    set (``Tree.live_blocks``, kept op by op as HDFS keeps its ``BlocksMap``) and the blocks
    only snapshots keep, copied once per change of blocks (``Tree.blocks_generation``; a new
    tree, after a reload, starts again). A walk of 1,000,000 inodes holds the namesystem lock
    for about 0.45 s, which the HA active's resync paid twice every
    ``nnlite.ha.replication.interval`` (5 s). The sweep, which deletes what is missing from
    its list, keeps the walk. Call under the namesystem lock, as ``referenced``."""

    def __init__(self) -> None:
        self._tree: weakref.ref[Tree] | None = None
        self._generation = -1
        self._ids: frozenset[int] = frozenset()

    def of(self, tree: Tree) -> frozenset[int]:
        if (self._tree is None or self._tree() is not tree
                or self._generation != tree.blocks_generation):
            ids = tree.live_blocks()
            if tree.snapshots.diffs:
                ids = ids | tree.snapshots.referenced_blocks()
            self._ids = frozenset(ids)
            self._tree = weakref.ref(tree)
            self._generation = tree.blocks_generation
        return self._ids


class OpenWrites:
    """A standby's view of the writes under way, for its sweep. Blocks reach a standby's
    datanode through the active's write pipeline (or WebHDFS's copy before a close) before
    the close op that records them arrives through the journal, and the active holds their
    ids, not the standby; so while this namenode follows (``following()``), ``since()`` is
    the time from which every block is spared: when this namenode first saw the oldest file
    still under construction (``open_files``: ``FSNamesystem.files_under_construction``),
    less ``slack`` seconds (the time between two looks -- the sweep's interval -- plus the
    journal's lag). Once that file closes, its blocks are referenced or are orphans. As
    HDFS's standby invalidates no block it cannot account for yet (``BlockManager``
    postpones them until the edits have caught up). On the active, None: its writers hold
    their ids. A standby restarted long after it received a block of a write still open may
    sweep it past the grace; the active's resync copies it back after the close."""

    def __init__(self, open_files: Callable[[], list[tuple[str, int, str]]],
                 following: Callable[[], bool], slack: float,
                 clock: Callable[[], float] = time.time) -> None:
        self.open_files = open_files
        self.following = following
        self.slack = slack
        self.clock = clock
        self.first_seen: dict[int, float] = {}      # inode id of an open file -> first seen

    def since(self) -> float | None:
        if not self.following():
            self.first_seen = {}
            return None
        now = self.clock()
        self.first_seen = {inode_id: self.first_seen.get(inode_id, now)
                           for _, inode_id, _ in self.open_files()}
        if not self.first_seen:
            return None
        return min(self.first_seen.values()) - self.slack


class Sweeper:
    """Removes block files that no file refers to and no writer holds, once they are older
    than ``grace`` seconds. Order matters: the disk is listed first, then the held ids, then
    the namespace (``referenced``: ``FSNamesystem.referenced_blocks``, which calls the function
    above under its lock), so a block published and recorded meanwhile is always seen as in
    use. With ``open_writes`` (a standby), nothing written since ``OpenWrites.since()`` is
    removed, whatever its age (looked at before the disk, so a write opened later has no
    block in the listing yet)."""

    def __init__(self, referenced: Callable[[], set[int]], store: BlockStore, grace: float,
                 clock: Callable[[], float] = time.time,
                 open_writes: OpenWrites | None = None) -> None:
        self.referenced = referenced
        self.store = store
        self.grace = grace
        self.clock = clock
        self.open_writes = open_writes
        self.removed = 0

    def sweep(self) -> list[int]:
        cutoff = self.clock() - self.grace
        since = self.open_writes.since() if self.open_writes is not None else None
        if since is not None:
            cutoff = min(cutoff, since)
        newest: dict[int, float] = {}
        for block_id, mtime in self.store.scan():
            newest[block_id] = max(mtime, newest.get(block_id, mtime))
        candidates = {b for b, mtime in newest.items() if mtime < cutoff}
        if not candidates:
            return []
        candidates -= self.store.held()
        candidates -= self.referenced()
        orphans = sorted(candidates)
        self.store.remove(orphans)
        self.removed += len(orphans)
        if orphans:
            log.info("block sweep removed %d unreferenced block(s): %s", len(orphans),
                     ", ".join(f"blk_{b}" for b in orphans[:10]) +
                     (" ..." if len(orphans) > 10 else ""))
        return orphans
