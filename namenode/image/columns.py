"""The namespace <-> fsimage columns: turning the tree into rows and rows back into a tree.

Row order: every directory first, in pre-order (the root is row 0, each directory after its
parent), then every file. So the loader attaches each row to a parent it has already built,
and each of its two loops handles one kind of inode. Columns are built as flat arrays
(``array.array`` for integers, offsets plus flat fields for blocks), not as per-row dicts.
Loading goes one record batch at a time, shares equal strings and common integers between
inodes, and keeps a directory index only while it loads: the loaded tree holds nothing per
inode beyond the inode objects and their names.
"""

from __future__ import annotations

import logging
import time
from array import array
from collections.abc import Iterator

import pyarrow as pa

from nnlite.formats.fsimage.layout import (
    BLOCK_TYPE,
    LAYOUT_VERSION,
    NO_QUOTA,
    SCHEMA,
    TYPE_DIRECTORY,
    TYPE_FILE,
    ImageMeta,
)
from nnlite.formats.fsimage.read import iter_batches, read_meta
from nnlite.formats.fsimage.write import ImageInfo, write_image
from nnlite.namenode.errors import ReplayError
from nnlite.namenode.image import secrets, snapshots
from nnlite.namenode.namespace import acl
from nnlite.namenode.namespace.inode import (
    INode,
    INodeDirectory,
    INodeFile,
    Quota,
    usage,
    walk,
)
from nnlite.namenode.namespace.tree import Tree

log = logging.getLogger(__name__)

PROGRESS_EVERY = 250_000
BATCH_ROWS = 16_384   # small batches leave fewer allocator holes behind (lower RSS)


def _directories(tree: Tree) -> list:
    dirs, stack = [], [tree.root]
    while stack:
        node = stack.pop()
        dirs.append(node)
        stack.extend(c for c in node.children.values() if c.is_dir)
    return dirs


def tree_columns(tree: Tree) -> dict:
    """Every inode as columns: directories (pre-order), then files; after the live ones in
    each part, the inodes only snapshots keep (image/snapshots.py)."""
    dirs = _directories(tree)
    files = [c for d in dirs for c in d.children.values() if not c.is_dir]
    parents = array("q", [0] + [x.parent.id for x in dirs[1:]])
    file_parents = array("q", [f.parent.id for f in files])
    cells = {}
    if tree.snapshots.roots or tree.snapshots.diffs:
        kept = snapshots.kept(tree.snapshots, tree.root)
        cells = snapshots.records(tree.snapshots, {n.id for n, p in kept if p == 0})
        dirs += [n for n, _ in kept if n.is_dir]
        parents += array("q", [p for n, p in kept if n.is_dir])
        files += [n for n, _ in kept if not n.is_dir]
        file_parents += array("q", [p for n, p in kept if not n.is_dir])
    nodes = dirs + files
    nd, n = len(dirs), len(dirs) + len(files)
    cols = {
        "id": array("q", [x.id for x in nodes]),
        "parent_id": parents + file_parents,
        "name": [x.name for x in nodes],
        "type": array("b", [TYPE_DIRECTORY]) * nd + array("b", [TYPE_FILE]) * len(files),
        "permission": array("h", [x.permission for x in nodes]),
        "owner": [x.owner for x in nodes],
        "group": [x.group for x in nodes],
        "mtime": array("q", [x.mtime for x in nodes]),
        "atime": array("q", [x.atime for x in nodes]),
        "replication": array("h", [0]) * nd + array("h", [f.replication for f in files]),
        "block_size": array("q", [0]) * nd + array("q", [f.block_size for f in files]),
        "length": array("q", [0]) * nd + array("q", [f.length for f in files]),
        "blocks": _blocks_array(nd, files),
        "checksum": [None] * nd + [f.checksum for f in files],
        "xattrs": [list(x.xattrs.items()) if x.xattrs else None for x in nodes],
        "ns_quota": array("q", [d.quota.ns_quota if d.quota else NO_QUOTA for d in dirs])
                    + array("q", [NO_QUOTA]) * len(files),
        "ss_quota": array("q", [d.quota.ss_quota if d.quota else NO_QUOTA for d in dirs])
                    + array("q", [NO_QUOTA]) * len(files),
        "client_name": [None] * nd + [f.client_name for f in files],
        "client_machine": [None] * nd + [f.client_machine for f in files],
        "acl": [[acl.to_text(e) for e in x.acl] if x.acl else None for x in nodes],
        "snapshot": [cells.get(x.id) for x in nodes] if cells else [None] * n,
    }
    assert len(cols["id"]) == n
    return cols


def _blocks_array(ndirs: int, files: list) -> pa.Array:
    """The blocks column built from offsets and flat fields (directories have none)."""
    offsets = array("i", [0]) * (ndirs + 1)
    flat = [b for f in files for b in f.blocks]
    total = 0
    for f in files:
        total += len(f.blocks)
        offsets.append(total)
    fields = [pa.array(array("q", [b[k] for b in flat]), type=pa.int64()) for k in range(3)]
    values = pa.StructArray.from_arrays(fields, fields=list(BLOCK_TYPE))
    return pa.ListArray.from_arrays(pa.array(offsets, type=pa.int32()), values,
                                    type=SCHEMA.field("blocks").type)


def image_meta(tree: Tree, namespace_id: int, last_txid: int, rows: int) -> ImageMeta:
    return ImageMeta(layout_version=LAYOUT_VERSION, namespace_id=namespace_id,
                       last_txid=last_txid, inode_count=rows,
                       creation_time=int(time.time() * 1000),
                       extra={"last_inode_id": tree.last_inode_id,
                              "last_block_id": tree.last_block_id,
                              "last_snapshot_id": tree.snapshots.last_id},
                       sections={secrets.SECTION: secrets.encode(tree.secrets.state())}
                       if tree.secrets else {})


def save(tree: Tree, path: str, namespace_id: int, last_txid: int) -> ImageInfo:
    """Write the tree to ``path`` (the caller publishes it). Returns digest and size."""
    start = time.perf_counter()
    cols = tree_columns(tree)
    info = write_image(path, cols, image_meta(tree, namespace_id, last_txid, len(cols["id"])))
    log.info("saved image of %d inodes at txid %d: %d bytes in %.2f s", len(cols["id"]),
             last_txid, info.size, time.perf_counter() - start)
    return info


def load(path: str, expected_md5: str | None) -> tuple[Tree, ImageMeta]:
    """Build a tree from an image (its MD5 is checked before anything is parsed)."""
    start = time.perf_counter()
    batches = iter_batches(path, batch_size=BATCH_ROWS, expected_md5=expected_md5)
    meta = read_meta(path)
    tree = Tree()
    builder = _Builder(tree, path)
    for batch in batches:
        builder.add(batch)
        if builder.rows // PROGRESS_EVERY != (builder.rows - batch.num_rows) // PROGRESS_EVERY:
            log.info("loading image %s: %d of %d inodes", path, builder.rows, meta.inode_count)
    builder.finish(meta)
    log.info("loaded image %s: %d inodes at txid %d in %.2f s", path, meta.inode_count,
             meta.last_txid, time.perf_counter() - start)
    return tree, meta


class _Builder:
    """Attaches record batches of an image to a namespace, checking the row order."""

    def __init__(self, tree: Tree, path: str) -> None:
        self.tree = tree
        self.path = path
        self.dirs: dict[int, INodeDirectory] = {}
        self.rows = 0
        self.quotas: list[tuple[INodeDirectory, int, int]] = []
        self.strings: dict[str, str] = {}
        self.ints: dict[int, int] = {}
        self.kept: set[int] = set()       # ids of directories only snapshots keep
        self.kept_roots: list[INode] = []
        self.kept_counts = [0, 0, 0]      # directories, files, blocks not in the live tree
        self.restorer = snapshots.Restorer()

    def add(self, batch: pa.RecordBatch) -> None:
        c = {name: batch.column(i) for i, name in enumerate(batch.schema.names)}
        if self.rows == 0:
            self._root(c)
        types = c["type"].to_pylist()
        split = types.index(TYPE_FILE) if TYPE_FILE in types else len(types)
        first = 1 if self.rows == 0 else 0
        if split > first:
            self._add_dirs(c, first, split)
        if split < len(types):
            if TYPE_DIRECTORY in types[split:]:
                raise self._error("a directory row follows a file row")
            self._add_files(c, split, len(types))
        self.rows += batch.num_rows

    def _error(self, what: str) -> ReplayError:
        return ReplayError(f"image {self.path}: {what} (rows {self.rows}..)", path=self.path)

    def _strs(self, column, lo: int, hi: int) -> list:
        """Equal strings as one object: owners, groups and also names, which repeat across
        directories in Spark trees (part-00000, _SUCCESS, offsets, commits, ...)."""
        cache = self.strings
        return [cache.setdefault(v, v) for v in column.slice(lo, hi - lo).to_pylist()]

    @staticmethod
    def _list(column, lo: int, hi: int) -> list:
        return column.slice(lo, hi - lo).to_pylist()

    def _shared(self, column, lo: int, hi: int) -> list:
        """Equal ints as one object, for columns with few distinct values (permissions,
        block sizes): each int above 256 is otherwise its own 28-byte object per inode."""
        cache = self.ints
        return [cache.setdefault(v, v) for v in column.slice(lo, hi - lo).to_pylist()]

    def _acls(self, c, lo: int, hi: int) -> list:
        """The ACL features of rows lo..hi (None for none), each distinct one parsed once
        and shared (acl.share)."""
        column = c["acl"].slice(lo, hi - lo)
        if column.null_count == len(column):
            return [None] * (hi - lo)
        parsed: dict[tuple[str, ...], tuple | None] = {}
        out: list[tuple | None] = []
        for texts in column.to_pylist():
            if not texts:
                out.append(None)
                continue
            texts = tuple(texts)
            feature = parsed.get(texts)
            if feature is None:
                feature = parsed[texts] = acl.share([acl.from_text(t) for t in texts])
            out.append(feature)
        return out

    def _xattrs(self, c, lo: int, hi: int) -> list:
        """The xattrs of rows lo..hi as dicts (None for none); cheap when no row has any."""
        column = c["xattrs"].slice(lo, hi - lo)
        if column.null_count == len(column):
            return [None] * (hi - lo)
        return [dict(v) if v else None for v in column.to_pylist()]

    def _cells(self, c, lo: int, hi: int) -> list:
        column = c["snapshot"].slice(lo, hi - lo)
        if column.null_count == len(column):
            return [None] * (hi - lo)
        return column.to_pylist()

    def _parent(self, inode_id: int, parent_id: int, cell, what: str):
        """The loaded directory a row attaches to: None for a kept subtree's root."""
        parent = self.dirs.get(parent_id)
        if parent is None and not (parent_id == 0 and cell and '"kept":true' in cell):
            raise self._error(f"{what} {inode_id} names parent {parent_id}, which is not a "
                              "directory listed before it")
        return parent

    def _root(self, c) -> None:
        if c["parent_id"][0].as_py() != 0 or c["type"][0].as_py() != TYPE_DIRECTORY:
            raise self._error("the first row is not the root directory")
        root = self.tree.root
        root.id = c["id"][0].as_py()
        root.permission = c["permission"][0].as_py()
        root.owner, root.group = c["owner"][0].as_py(), c["group"][0].as_py()
        root.mtime, root.atime = c["mtime"][0].as_py(), c["atime"][0].as_py()
        self.dirs[root.id] = root
        root.xattrs = self._xattrs(c, 0, 1)[0]
        root.acl = self._acls(c, 0, 1)[0]
        cell = self._cells(c, 0, 1)[0]
        if cell is not None:
            self.restorer.note(root, cell)
        self._note_quota(root, c["ns_quota"][0].as_py(), c["ss_quota"][0].as_py())

    def _add_dirs(self, c, lo: int, hi: int) -> None:
        dirs = self.dirs
        rows = zip(self._list(c["id"], lo, hi), self._list(c["parent_id"], lo, hi),
                   self._strs(c["name"], lo, hi), self._shared(c["permission"], lo, hi),
                   self._strs(c["owner"], lo, hi), self._strs(c["group"], lo, hi),
                   self._list(c["mtime"], lo, hi), self._list(c["atime"], lo, hi),
                   self._list(c["ns_quota"], lo, hi), self._list(c["ss_quota"], lo, hi),
                   self._xattrs(c, lo, hi), self._acls(c, lo, hi), self._cells(c, lo, hi),
                   strict=True)
        for (inode_id, parent_id, name, perm, owner, group, mtime, atime, nsq, ssq, xa,
             acl_, cell) in rows:
            parent = dirs.get(parent_id)
            if parent is None or cell is not None:
                parent = self._parent(inode_id, parent_id, cell, "directory")
            node = INodeDirectory(inode_id, parent, name, perm, owner, group, mtime,
                                  mtime if atime == mtime else atime)
            if parent is not None:
                parent.children[name] = node
            dirs[inode_id] = node
            if cell is not None:
                self.restorer.note(node, cell)
            if parent is None or parent_id in self.kept:
                self.kept.add(inode_id)
                self.kept_counts[0] += 1
                if parent is None:
                    self.kept_roots.append(node)
            node.xattrs = xa
            node.acl = acl_
            if nsq != NO_QUOTA or ssq != NO_QUOTA:
                self._note_quota(node, nsq, ssq)

    def _add_files(self, c, lo: int, hi: int) -> None:
        dirs = self.dirs
        blocks = _blocks(c["blocks"].slice(lo, hi - lo))
        rows = zip(self._list(c["id"], lo, hi), self._list(c["parent_id"], lo, hi),
                   self._strs(c["name"], lo, hi), self._shared(c["permission"], lo, hi),
                   self._strs(c["owner"], lo, hi), self._strs(c["group"], lo, hi),
                   self._list(c["mtime"], lo, hi), self._list(c["atime"], lo, hi),
                   self._list(c["replication"], lo, hi),
                   self._shared(c["block_size"], lo, hi),
                   self._list(c["length"], lo, hi), blocks,
                   self._list(c["checksum"], lo, hi), self._list(c["client_name"], lo, hi),
                   self._strs(c["client_machine"], lo, hi), self._xattrs(c, lo, hi),
                   self._acls(c, lo, hi), self._cells(c, lo, hi), strict=True)
        for (inode_id, parent_id, name, perm, owner, group, mtime, atime, rep, bsize, length,
             blks, checksum, client, machine, xa, acl_, cell) in rows:
            parent = dirs.get(parent_id)
            if parent is None or cell is not None:
                parent = self._parent(inode_id, parent_id, cell, "file")
            node = INodeFile(inode_id, parent, name, perm, owner, group, mtime,
                             mtime if atime == mtime else atime, rep, bsize, length, blks,
                             checksum, client, machine)
            if parent is not None:
                parent.children[name] = node
            if cell is not None:
                self.restorer.note(node, cell)
            if parent is None or parent_id in self.kept:
                self.kept_counts[1] += 1
                self.kept_counts[2] += len(blks)
                if parent is None:
                    self.kept_roots.append(node)
            if xa is not None:
                node.xattrs = xa
            if acl_ is not None:
                node.acl = acl_
        self.tree.files += hi - lo
        self.tree.block_count += sum(map(len, blocks))

    def _note_quota(self, node: INodeDirectory, nsq: int, ssq: int) -> None:
        if nsq != NO_QUOTA or ssq != NO_QUOTA:
            self.quotas.append((node, nsq, ssq))

    def finish(self, meta: ImageMeta) -> None:
        tree = self.tree
        kept_dirs, kept_files, kept_blocks = self.kept_counts
        tree.files -= kept_files
        tree.block_count -= kept_blocks
        tree.dirs = len(self.dirs) - kept_dirs
        tree.last_inode_id = max(tree.last_inode_id, meta.extra.get("last_inode_id", 0),
                               max(self.dirs))
        tree.last_block_id = max(tree.last_block_id, meta.extra.get("last_block_id", 0))
        for node, nsq, ssq in self.quotas:
            node.quota = Quota(nsq, ssq, *usage(node))
            tree.quota_dirs += 1
        # The snapshot counter carries on even when no snapshot is left (SnapshotManager's
        # snapshotCounter in the image), so ids are never handed out twice.
        tree.snapshots.last_id = max(tree.snapshots.last_id, meta.extra.get("last_snapshot_id", 0))
        if self.restorer.cells:
            self.restorer.finish(tree.snapshots, lambda: walk_all(tree.root, self.kept_roots))
        if secrets.SECTION in meta.sections:
            tree.secrets.load(secrets.decode(meta.sections[secrets.SECTION], self.path))


def walk_all(root: INodeDirectory, kept_roots: list[INode]) -> Iterator[INode]:
    for top in (root, *kept_roots):
        yield from walk(top)


def _blocks(column) -> list:
    offsets = column.offsets.to_pylist()
    if offsets[-1] == offsets[0]:
        return [()] * len(column)
    flat = column.flatten()
    triples = list(zip(*(flat.field(n).to_pylist() for n in ("block_id", "num_bytes",
                                                              "genstamp")), strict=True))
    base = offsets[0]
    return [tuple(triples[offsets[i] - base:offsets[i + 1] - base])
            for i in range(len(column))]
