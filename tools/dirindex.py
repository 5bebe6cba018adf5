"""Full paths rebuilt from ``parent_id`` in bounded memory: one ``(parent_id, name)`` pair per
directory, none per file.

``DirectoryIndex.scan`` reads only the id, parent_id, name and type columns and keeps the
directories; ``path_of`` climbs from a directory to the root and caches the most recent paths
(files of one directory sit together in an image, so the cache nearly always hits). A directory
whose chain of parents does not reach the root (a missing parent, a cycle, a second root with a
name) has no path. An inode only snapshots keep (the root of a kept subtree: parent_id 0 and
``"kept": true`` in its snapshot cell, and everything under it) has the path KEPT, "": it is
in no live directory, and the renderings leave it out without calling it an orphan.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from nnlite.formats.fsimage.layout import TYPE_DIRECTORY
from nnlite.formats.fsimage.read import iter_batches

BATCH_ROWS = 16_384
PATH_CACHE = 1 << 16
ROOT_PARENT = 0
KEPT_PARENT = -1        # the parent recorded for a kept subtree's root
KEPT = ""               # the path of an inode only snapshots keep
INDEX_COLUMNS = ("id", "parent_id", "name", "type", "snapshot")


def kept_roots(batch: pa.RecordBatch) -> pa.Array:
    """Rows that are the root of a subtree only snapshots keep."""
    return pc.and_(pc.equal(batch.column("parent_id"), ROOT_PARENT),
                   pc.fill_null(pc.match_substring(batch.column("snapshot"), '"kept":true'),
                                False))


def join(parent: str, name: str) -> str:
    return parent + name if parent == "/" else f"{parent}/{name}"


class DirectoryIndex:
    """``dir id -> (parent_id, name)`` for every directory; paths rebuilt on demand, with the
    most recent ones cached (files of one directory sit together, so the cache nearly always
    hits)."""

    def __init__(self, parents: dict[int, tuple[int, str]]):
        self.parents = parents
        self._paths: dict[int, str] = {}
        self._unresolved: set[int] = set()

    def __len__(self) -> int:
        return len(self.parents)

    @classmethod
    def scan(cls, image: str, *, batch_size: int = BATCH_ROWS,
             expected_md5: str | None = None) -> DirectoryIndex:
        parents: dict[int, tuple[int, str]] = {}
        for batch in iter_batches(image, batch_size=batch_size, columns=INDEX_COLUMNS,
                                    expected_md5=expected_md5):
            dirs = batch.filter(pc.equal(batch.column("type"), TYPE_DIRECTORY))
            kept = kept_roots(dirs).to_pylist()
            pairs = zip([KEPT_PARENT if k else p for p, k in
                         zip(dirs.column("parent_id").to_pylist(), kept, strict=True)],
                        dirs.column("name").to_pylist(), strict=True)
            parents.update(zip(dirs.column("id").to_pylist(), pairs, strict=True))
        return cls(parents)

    def path_of(self, dir_id: int) -> str | None:
        """The full path of a directory, or None when its chain of parents does not reach the
        root (a missing parent, a cycle, or a second root with a name)."""
        path = self._paths.get(dir_id)
        if path is not None:
            return path
        if dir_id in self._unresolved:
            return None
        path, chain = self._walk_up(dir_id)
        if path is None:
            self._unresolved.add(dir_id)
            return None
        for name in reversed(chain) if path != KEPT else ():
            path = join(path, name)
        if len(self._paths) >= PATH_CACHE:
            self._paths.clear()
        self._paths[dir_id] = path
        return path

    def _walk_up(self, dir_id: int) -> tuple[str | None, list[str]]:
        """Climb until a cached path or the root; the names climbed, nearest first."""
        chain: list[str] = []
        node = dir_id
        while True:
            cached = self._paths.get(node)
            if cached is not None:
                return cached, chain
            entry = self.parents.get(node)
            if entry is None or node in self._unresolved or len(chain) > len(self.parents):
                return None, chain
            parent, name = entry
            if parent == ROOT_PARENT:
                return (None if name else "/"), chain
            if parent == KEPT_PARENT:
                return KEPT, []
            chain.append(name)
            node = parent

    def paths(self, batch: pa.RecordBatch) -> list[str | None]:
        """The path of every row of a batch (None where the parent does not resolve)."""
        out: list[str | None] = []
        path_of = self.path_of
        columns = [batch.column(n).to_pylist() for n in INDEX_COLUMNS[:4]]
        kept = kept_roots(batch).to_pylist()
        for inode_id, parent_id, name, type_, is_kept in zip(*columns, kept, strict=True):
            if type_ == TYPE_DIRECTORY:
                out.append(path_of(inode_id))
            elif is_kept:
                out.append(KEPT)
            else:
                parent = path_of(parent_id)
                out.append(parent if parent is None or parent == KEPT else join(parent, name))
        return out
