"""The block store: file contents as immutable block files on the namenode's own disk.

Layout of the data directory (``nnlite.data.dir``, default ``<first name dir>-data``)::

    <data-dir>/in_use.lock                     flock held by the namenode that owns it
    <data-dir>/VERSION                         namespaceID=<id>: serves one namespace only
    <data-dir>/tmp/blk_<id>, blk_<id>.meta     a block being written (emptied at startup)
    <data-dir>/rbw/blk_<id>, blk_<id>.meta     a replica an hdfs:// client is writing through
                                               the built-in datanode (kept across restarts,
                                               as HDFS's rbw/: ``rwr.py`` recovers it)
    <data-dir>/blocks/<NN>/blk_<id>            a published block's bytes; NN = (id >> 8) % 256
    <data-dir>/blocks/<NN>/blk_<id>.meta       its CRC32s: 4 big-endian bytes per 512-byte
                                               chunk, the last chunk possibly shorter

Rules:

* A published block never changes. Appending or truncating inside a block writes a new
  block (copy-on-write: an upload's ``streams.BlockWriter``, truncate's ``copy_prefix``).
  A reader that resolved the old block list keeps reading old files.
* Publishing: write under ``tmp/``, fsync, rename into ``blocks/``, fsync the directory; the
  meta file is renamed first, so a published block always has its meta.
* Ids come from one counter above every id in the namespace and on disk; an id is held from
  ``allocate`` (or ``hold``) until ``release``, and ``sweep.py`` never removes a held one.

This module keeps the directory, its names and ids, reading and publishing. The upload writer
and a read's ``segments`` live in ``streams.py`` (a read's checked bytes in
``namenode/datanode/sender.py``), the removal of unreferenced blocks in ``sweep.py``.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import threading
from pathlib import Path

from nnlite.durability import durable
from nnlite.formats.edits import Block
from nnlite.namenode import errors
from nnlite.namenode.blocks import checksum

# Sealed, segments and Sweeper are this module's API too (importers use them as
# blocks.<name>)
from nnlite.namenode.blocks.streams import (
    GENSTAMP,
    BlockMissingError,
    BlockWriter,
    copy_range,
)

log = logging.getLogger(__name__)

LAYOUT_VERSION = 1
PREFIX = "blk_"
META = ".meta"
SUBDIRS = 256


def default_data_dir(name_dir: str | Path) -> Path:
    """``<first name dir>-data``: beside the name dir, and never shared by two namespaces."""
    path = Path(name_dir).absolute()
    return path.with_name(path.name + "-data")


class BlockStore:
    """The data directory. ``open`` takes its lock; ``close`` releases it."""

    def __init__(self, root: str | Path, namespace_id: int, last_block_id: int = 0):
        self.root = Path(root).absolute()
        self.namespace_id = namespace_id
        self.tmp = self.root / "tmp"
        self.rbw = self.root / "rbw"
        self.blocks = self.root / "blocks"
        self._next_id = last_block_id + 1
        self._inflight: dict[int, int] = {}     # block id -> holders (writers, copies)
        self._ids_lock = threading.Lock()
        self._lock_fd: int | None = None
        # bytes of published block and meta files: a DataNode's "DFS used" (GETSTATUS)
        self.used = 0

    @classmethod
    def open(cls, root, namespace_id: int, last_block_id: int = 0) -> BlockStore:
        store = cls(root, namespace_id, last_block_id)
        store._lock()
        try:
            store._check_version()
            store._prepare()
        except BaseException:
            store.close()
            raise
        return store

    def close(self) -> None:
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    def _lock(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / "in_use.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EACCES):
                raise errors.StorageError(f"Data directory {self.root} is in use by another "
                                          "process", path=str(self.root)) from exc
            raise
        self._lock_fd = fd

    def _check_version(self) -> None:
        """A data dir serves one namespace; one that holds no block may be taken over (the
        name dir was formatted again)."""
        path = self.root / "VERSION"
        if path.exists():
            fields = dict(line.split("=", 1) for line in path.read_text().splitlines()
                          if "=" in line)
            owner = fields.get("namespaceID")
            if owner == str(self.namespace_id):
                return
            if any(True for _ in self.scan()):
                raise errors.StorageError(
                    f"Data directory {self.root} holds the blocks of namespace {owner}, not "
                    f"of this namespace ({self.namespace_id}); set nnlite.data.dir to this "
                    "namespace's data directory (or an empty one)", path=str(self.root))
            log.warning("data directory %s of namespace %s holds no blocks: taken over by "
                        "namespace %d", self.root, owner, self.namespace_id)
        durable.write_atomic(path, f"namespaceID={self.namespace_id}\n"
                                   f"layoutVersion={LAYOUT_VERSION}\n".encode())

    def _prepare(self) -> None:
        """Empty tmp/ (no upload survives a restart; rbw/ is kept but for the replicas of
        blocks published since), create the subdirs, find the top id."""
        self.tmp.mkdir(exist_ok=True)
        self.rbw.mkdir(exist_ok=True)
        for name in os.listdir(self.tmp):
            os.unlink(self.tmp / name)
        for i in range(SUBDIRS):
            (self.blocks / f"{i:02x}").mkdir(parents=True, exist_ok=True)
        for name in os.listdir(self.rbw):       # a replica published since (a copy's)
            block_id = _block_id(name)
            if block_id is not None and self.has(block_id):
                os.unlink(self.rbw / name)
        durable.sync_dir(self.root)
        top = max((block_id for block_id, _ in self.scan()), default=0)
        self._next_id = max(self._next_id, top + 1)
        self.used = sum(_size(entry) for directory in sorted(self.blocks.iterdir())
                        for entry in os.scandir(directory) if _block_id(entry.name))

    def capacity(self) -> tuple[int, int, int]:
        """``(capacity, used, remaining)`` in bytes, as a DataNode reports its volume: the
        file system's size and free space, and the bytes of blocks stored."""
        st = os.statvfs(self.root)
        return st.f_blocks * st.f_frsize, self.used, st.f_bavail * st.f_frsize

    # ------------------------------------------------------------------ names and ids

    def data_path(self, block_id: int) -> Path:
        return self.blocks / f"{(block_id >> 8) % SUBDIRS:02x}" / f"{PREFIX}{block_id}"

    def meta_path(self, block_id: int) -> Path:
        return self.data_path(block_id).with_name(f"{PREFIX}{block_id}{META}")

    def tmp_path(self, block_id: int, meta: bool = False) -> Path:
        return self.tmp / f"{PREFIX}{block_id}{META if meta else ''}"

    def rbw_path(self, block_id: int, meta: bool = False) -> Path:
        return self.rbw / f"{PREFIX}{block_id}{META if meta else ''}"

    def advance(self, last_block_id: int) -> None:
        """Never hand out an id up to ``last_block_id`` (a standby that became active: its
        namespace learned the old active's block ids from the journal)."""
        with self._ids_lock:
            self._next_id = max(self._next_id, last_block_id + 1)

    def allocate(self) -> int:
        """A fresh block id, held (never swept) until ``release``d."""
        with self._ids_lock:
            block_id = self._next_id
            self._next_id += 1
            self._inflight[block_id] = 1
            return block_id

    def hold(self, block_id: int) -> None:
        """Keep an existing block from the sweep while it is being copied."""
        with self._ids_lock:
            self._inflight[block_id] = self._inflight.get(block_id, 0) + 1

    def release(self, block_ids) -> None:
        with self._ids_lock:
            for block_id in block_ids:
                count = self._inflight.get(block_id, 0) - 1
                if count > 0:
                    self._inflight[block_id] = count
                else:
                    self._inflight.pop(block_id, None)

    def held(self) -> set[int]:
        with self._ids_lock:
            return set(self._inflight)

    # ------------------------------------------------------------------ reading

    def has(self, block_id: int) -> bool:
        """Whether the block is published here."""
        return self.data_path(block_id).exists()

    def open_block(self, block_id: int, num_bytes: int):
        """The block's file, open for reading; it must hold at least ``num_bytes``."""
        try:
            handle = open(self.data_path(block_id), "rb")  # noqa: SIM115 (the caller's to close)
        except FileNotFoundError as exc:
            raise BlockMissingError(f"Could not obtain block blk_{block_id}: no such block "
                                    f"in {self.blocks}") from exc
        size = os.fstat(handle.fileno()).st_size
        if size < num_bytes:
            handle.close()
            raise BlockMissingError(f"Block blk_{block_id} holds {size} bytes on disk, the "
                                    f"namespace records {num_bytes}")
        return handle

    def read_crcs(self, block_id: int, num_bytes: int) -> tuple[bytes, int]:
        """The chunk CRCs of the first ``num_bytes`` bytes of a block (a shorter prefix's
        partial last chunk is recomputed from the data), and their checksum type."""
        full = num_bytes // checksum.BYTES_PER_CRC
        try:
            with open(self.meta_path(block_id), "rb") as meta:
                size = os.fstat(meta.fileno()).st_size
                kind, start = checksum.meta_layout(meta.read(checksum.META_HEADER.size), size)
                meta.seek(start)
                crcs = meta.read(full * checksum.CRC_SIZE)
        except FileNotFoundError as exc:
            raise BlockMissingError(f"Block blk_{block_id} has no meta file") from exc
        if len(crcs) < full * checksum.CRC_SIZE:
            raise BlockMissingError(f"The meta file of blk_{block_id} is shorter than its "
                                    f"{num_bytes} recorded bytes need")
        rest = num_bytes - full * checksum.BYTES_PER_CRC
        if rest:
            with self.open_block(block_id, num_bytes) as data:
                crcs += checksum.chunk_crcs(os.pread(data.fileno(), rest,
                                                     num_bytes - rest), kind)
        return crcs, kind

    def digest(self, block_id: int, num_bytes: int) -> tuple[int, bytes, int]:
        return checksum.block_digest(*self.read_crcs(block_id, num_bytes))

    def composite_crc(self, blocks) -> tuple[int, int]:
        """``(type, CRC)`` of a file's bytes for COMPOSITE_CRC: composing every chunk CRC of
        every block (``CrcComposer``) gives the CRC of the concatenated data, which is
        computed directly. Blocks of different types cannot be composed (an IOException)."""
        kinds = {self.read_crcs(b[0], 0)[1] for b in blocks} or {checksum.DEFAULT}
        if len(kinds) > 1:
            raise errors.NamenodeError("Cannot compose the CRCs of blocks of different "
                                       "checksum types (CRC32 and CRC32C)")
        kind, crc = kinds.pop(), 0
        for block_id, num_bytes, _ in blocks:
            with self.open_block(block_id, num_bytes) as handle:
                left = num_bytes
                while left:
                    data = handle.read(min(left, 1 << 20))
                    if not data:
                        raise BlockMissingError(f"Block blk_{block_id} ended early")
                    crc = checksum.crc_update(kind, data, crc)
                    left -= len(data)
        return kind, crc

    def file_checksum(self, blocks) -> bytes:
        """Computed from the meta files of ``blocks`` (a file whose checksum is unknown)."""
        return checksum.file_checksum(self.digest(b[0], b[1]) for b in blocks)

    # ------------------------------------------------------------------ writing

    def writer(self, block_size: int, tail: tuple | None = None) -> BlockWriter:
        return BlockWriter(self, block_size, tail)

    def copy_prefix(self, block: tuple) -> tuple[Block, tuple[int, bytes, int]]:
        """A new published block holding the first ``block[1]`` bytes of block ``block[0]``
        (truncate's copy-on-write); returns it and its digest. Its id stays held."""
        old_id, num_bytes = block[0], block[1]
        crcs, kind = self.read_crcs(old_id, num_bytes)
        block_id = self.allocate()
        try:
            tmp = self.tmp_path(block_id)
            with self.open_block(old_id, num_bytes) as src, open(tmp, "wb") as dst:
                copy_range(src, dst, num_bytes)
            self.tmp_path(block_id, meta=True).write_bytes(checksum.meta_header(kind) + crcs)
            self.publish_block(block_id)
        except BaseException:
            self.remove([block_id])
            self.release([block_id])
            raise
        return (block_id, num_bytes, GENSTAMP), checksum.block_digest(crcs, kind)

    def publish_block(self, block_id: int) -> None:
        self.publish_from(block_id, self.tmp_path(block_id), self.tmp_path(block_id, meta=True))

    def publish_from(self, block_id: int, data: Path, meta: Path, *,
                     synced: bool = False) -> None:
        """Publish the block whose bytes and meta are the files ``data`` and ``meta`` (in
        ``tmp/``): fsync both (unless the caller did: ``synced``), rename the meta then the
        data into place, fsync the directory. A copy received from another namenode has temp
        names of its own, since two copies of one block may arrive at once (the same bytes:
        ids are never reused)."""
        if not synced:
            durable.sync_file(data)
            durable.sync_file(meta)
        # Same directory: the publish of the data file fsyncs it for both renames.
        os.replace(meta, self.meta_path(block_id))
        durable.publish(data, self.data_path(block_id), synced=True)
        for stale in (self.rbw_path(block_id), self.rbw_path(block_id, meta=True)):
            if stale not in (data, meta):       # a replica of it a pipeline left: superseded
                stale.unlink(missing_ok=True)
        grown = _size(self.data_path(block_id)) + _size(self.meta_path(block_id))
        with self._ids_lock:
            self.used += grown

    def remove(self, block_ids) -> None:
        """Delete blocks (published or not). No fsync: a deletion lost in a crash leaves an
        orphan, which the sweep removes."""
        freed = 0
        for block_id in block_ids:
            for path in (self.data_path(block_id), self.meta_path(block_id),
                         self.tmp_path(block_id), self.tmp_path(block_id, meta=True),
                         self.rbw_path(block_id), self.rbw_path(block_id, meta=True)):
                published = path.parent not in (self.tmp, self.rbw)
                size = _size(path) if published else 0
                try:
                    os.unlink(path)
                    freed += size
                except FileNotFoundError:
                    pass
        with self._ids_lock:
            self.used -= freed

    def scan(self):
        """``(block id, mtime)`` of every block file, published, in tmp/ or in rbw/ (meta
        files too, so an orphan meta is found)."""
        subdirs = sorted(self.blocks.iterdir()) if self.blocks.is_dir() else []
        for directory in (self.tmp, self.rbw, *subdirs):
            try:
                with os.scandir(directory) as entries:
                    for entry in entries:
                        block_id = _block_id(entry.name)
                        if block_id is not None:
                            yield block_id, entry.stat().st_mtime
            except FileNotFoundError:
                continue


def _size(entry) -> int:
    """The size of a file (path or DirEntry), 0 if it is gone."""
    try:
        return entry.stat().st_size if hasattr(entry, "stat") else os.stat(entry).st_size
    except FileNotFoundError:
        return 0


def _block_id(name: str) -> int | None:
    if not name.startswith(PREFIX):
        return None
    digits = name[len(PREFIX):].removesuffix(META)
    return int(digits) if digits.isdigit() else None
