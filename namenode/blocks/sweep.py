"""The sweep: removal of block files that no file of the namespace refers to.

Blocks that no file refers to (deleted or overwritten files, a crash between publishing and
logging) are removed once older than a grace period; ids held by writers in progress
(``BlockStore.allocate``/``hold`` until ``release``) are never swept. This is the one part of
the block store that reads the namespace.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Callable

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


class Sweeper:
    """Removes block files that no file refers to and no writer holds, once they are older
    than ``grace`` seconds. Order matters: the disk is listed first, then the held ids, then
    the namespace (``referenced``: ``FSNamesystem.referenced_blocks``, which calls the function
    above under its lock), so a block published and recorded meanwhile is always seen as in
    use."""

    def __init__(self, referenced: Callable[[], set[int]], store: BlockStore, grace: float,
                 clock: Callable[[], float] = time.time) -> None:
        self.referenced = referenced
        self.store = store
        self.grace = grace
        self.clock = clock
        self.removed = 0

    def sweep(self) -> list[int]:
        cutoff = self.clock() - self.grace
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
