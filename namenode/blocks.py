"""The block store: file contents as immutable block files on the namenode's own disk.

Layout of the data directory (``nnlite.data.dir``, default ``<first name dir>-data``)::

    <data-dir>/in_use.lock                     flock held by the namenode that owns it
    <data-dir>/VERSION                         namespaceID=<id>: serves one namespace only
    <data-dir>/tmp/blk_<id>, blk_<id>.meta     a block being written (emptied at startup)
    <data-dir>/blocks/<NN>/blk_<id>            a published block's bytes; NN = (id >> 8) % 256
    <data-dir>/blocks/<NN>/blk_<id>.meta       its CRC32s: 4 big-endian bytes per 512-byte
                                               chunk, the last chunk possibly shorter

Rules:

* A published block never changes. Appending to a file whose last block is partial writes a
  new block holding the old bytes and then the new ones (copy-on-write; the old bytes are
  copied in the kernel when the upload is sealed); truncating inside a block copies its
  prefix into a new block. A reader that resolved the old block list keeps reading old files.
* Publishing: write under ``tmp/``, fsync, rename into ``blocks/``, fsync the directory; the
  meta file is renamed first, so a published block always has its meta.
* A block enters the namespace (in a CloseFileOp) only once published; blocks of an upload
  that fails are deleted at once. Blocks that no file refers to (deleted or overwritten files,
  a crash between publishing and logging) are removed by the ``Sweeper`` once older than a
  grace period; ids held by writers in progress are never swept.
* Ids come from one counter above every id in the namespace and on disk; the generation stamp
  is always ``GENSTAMP`` (blocks are never rewritten in place).
"""

from __future__ import annotations

import errno
import fcntl
import io
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from namenode import checksum, durable, errors
from namenode.inode import walk

log = logging.getLogger(__name__)

GENSTAMP = 1001
LAYOUT_VERSION = 1
PREFIX = "blk_"
META = ".meta"
SUBDIRS = 256
COPY_CHUNK = 8 << 20


def default_data_dir(name_dir: str | Path) -> Path:
    """``<first name dir>-data``: beside the name dir, and never shared by two namespaces."""
    path = Path(name_dir).absolute()
    return path.with_name(path.name + "-data")


class BlockMissingError(errors.NamenodeError):
    """A block the namespace refers to is missing or shorter than recorded on disk."""
    JAVA_CLASS = "org.apache.hadoop.hdfs.BlockMissingException"


@dataclass(frozen=True)
class Sealed:
    """What a finished writer made: new blocks ``(id, num_bytes, genstamp)`` in file order,
    their ``checksum.block_digest``s, and whether the first one replaces the file's tail."""
    blocks: tuple
    digests: list
    replaces_tail: bool
    length: int


class BlockStore:
    """The data directory. ``open`` takes its lock; ``close`` releases it."""

    def __init__(self, root: str | Path, namespace_id: int, last_block_id: int = 0):
        self.root = Path(root).absolute()
        self.namespace_id = namespace_id
        self.tmp = self.root / "tmp"
        self.blocks = self.root / "blocks"
        self._next_id = last_block_id + 1
        self._inflight: dict[int, int] = {}     # block id -> holders (writers, copies)
        self._ids_lock = threading.Lock()
        self._lock_fd: int | None = None

    @classmethod
    def open(cls, root, namespace_id: int, last_block_id: int = 0) -> "BlockStore":
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
        """Empty tmp/ (no writer survives a restart), create the subdirs, find the top id."""
        self.tmp.mkdir(exist_ok=True)
        for name in os.listdir(self.tmp):
            os.unlink(self.tmp / name)
        for i in range(SUBDIRS):
            (self.blocks / f"{i:02x}").mkdir(parents=True, exist_ok=True)
        durable.sync_dir(self.root)
        top = max((block_id for block_id, _ in self.scan()), default=0)
        self._next_id = max(self._next_id, top + 1)

    # ------------------------------------------------------------------ names and ids

    def data_path(self, block_id: int) -> Path:
        return self.blocks / f"{(block_id >> 8) % SUBDIRS:02x}" / f"{PREFIX}{block_id}"

    def meta_path(self, block_id: int) -> Path:
        return self.data_path(block_id).with_name(f"{PREFIX}{block_id}{META}")

    def tmp_path(self, block_id: int, meta: bool = False) -> Path:
        return self.tmp / f"{PREFIX}{block_id}{META if meta else ''}"

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

    def open_block(self, block_id: int, num_bytes: int):
        """The block's file, open for reading; it must hold at least ``num_bytes``."""
        try:
            handle = open(self.data_path(block_id), "rb")
        except FileNotFoundError as exc:
            raise BlockMissingError(f"Could not obtain block blk_{block_id}: no such block "
                                    f"in {self.blocks}") from exc
        size = os.fstat(handle.fileno()).st_size
        if size < num_bytes:
            handle.close()
            raise BlockMissingError(f"Block blk_{block_id} holds {size} bytes on disk, the "
                                    f"namespace records {num_bytes}")
        return handle

    def read_crcs(self, block_id: int, num_bytes: int) -> bytes:
        """The chunk CRCs of the first ``num_bytes`` bytes of a block (a shorter prefix's
        partial last chunk is recomputed from the data)."""
        full = num_bytes // checksum.BYTES_PER_CRC
        try:
            with open(self.meta_path(block_id), "rb") as meta:
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
                                                     num_bytes - rest))
        return crcs

    def digest(self, block_id: int, num_bytes: int) -> tuple[int, bytes]:
        return checksum.block_digest(self.read_crcs(block_id, num_bytes))

    def file_checksum(self, blocks) -> bytes:
        """Computed from the meta files of ``blocks`` (a file whose checksum is unknown)."""
        return checksum.file_checksum(self.digest(b[0], b[1]) for b in blocks)

    # ------------------------------------------------------------------ writing

    def writer(self, block_size: int, tail: tuple | None = None) -> "BlockWriter":
        return BlockWriter(self, block_size, tail)

    def copy_prefix(self, block: tuple) -> tuple[tuple, tuple[int, bytes]]:
        """A new published block holding the first ``block[1]`` bytes of block ``block[0]``
        (truncate's copy-on-write); returns it and its digest. Its id stays held."""
        old_id, num_bytes = block[0], block[1]
        crcs = self.read_crcs(old_id, num_bytes)
        block_id = self.allocate()
        try:
            tmp = self.tmp_path(block_id)
            with self.open_block(old_id, num_bytes) as src, open(tmp, "wb") as dst:
                copy_range(src, dst, num_bytes)
            self.tmp_path(block_id, meta=True).write_bytes(crcs)
            self.publish_block(block_id)
        except BaseException:
            self.remove([block_id])
            self.release([block_id])
            raise
        return (block_id, num_bytes, GENSTAMP), checksum.block_digest(crcs)

    def publish_block(self, block_id: int) -> None:
        durable.sync_file(self.tmp_path(block_id))
        durable.sync_file(self.tmp_path(block_id, meta=True))
        # Same directory: the publish of the data file fsyncs it for both renames.
        os.replace(self.tmp_path(block_id, meta=True), self.meta_path(block_id))
        durable.publish(self.tmp_path(block_id), self.data_path(block_id), synced=True)

    def remove(self, block_ids) -> None:
        """Delete blocks (published or not). No fsync: a deletion lost in a crash leaves an
        orphan, which the sweep removes."""
        for block_id in block_ids:
            for path in (self.data_path(block_id), self.meta_path(block_id),
                         self.tmp_path(block_id), self.tmp_path(block_id, meta=True)):
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass

    def scan(self):
        """``(block id, mtime)`` of every block file, published or in tmp/ (meta files too,
        so an orphan meta is found)."""
        subdirs = sorted(self.blocks.iterdir()) if self.blocks.is_dir() else []
        for directory in (self.tmp, *subdirs):
            try:
                with os.scandir(directory) as entries:
                    for entry in entries:
                        block_id = _block_id(entry.name)
                        if block_id is not None:
                            yield block_id, entry.stat().st_mtime
            except FileNotFoundError:
                continue


def _block_id(name: str) -> int | None:
    if not name.startswith(PREFIX):
        return None
    digits = name[len(PREFIX):].removesuffix(META)
    return int(digits) if digits.isdigit() else None


def copy_range(src, dst, count: int) -> None:
    """Copy the first ``count`` bytes of ``src`` to offset 0 of ``dst`` (in the kernel when
    the file system allows it)."""
    done = 0
    try:
        while done < count:
            n = os.copy_file_range(src.fileno(), dst.fileno(), count - done, done, done)
            if n == 0:
                break
            done += n
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
            raise
    while done < count:
        data = os.pread(src.fileno(), min(COPY_CHUNK, count - done), done)
        if not data:
            raise BlockMissingError(f"block file {src.name} ended after {done} bytes")
        os.pwrite(dst.fileno(), data, done)
        done += len(data)


@dataclass
class _Piece:
    block_id: int
    capacity: int
    offset: int                 # where the new bytes start in the block (the tail's length)
    size: int = 0
    crcs: bytes = b""
    handle: object = None
    chunker: checksum.CrcChunker = field(default_factory=checksum.CrcChunker)


class BlockWriter:
    """Writes one upload's bytes as new blocks of ``block_size`` bytes, computing the chunk
    CRCs on the way. With a ``tail`` (the file's partial last block) the first new block
    continues it: the new bytes go at offset ``tail[1]`` and ``seal`` copies the old bytes in.

    ``write`` only buffers into tmp/ files (it runs on the event loop); ``seal`` fsyncs and
    publishes (run it in a thread); ``discard`` deletes everything; ``close`` releases the
    ids. The owner calls ``close`` after recording the blocks, or ``discard`` and ``close``."""

    def __init__(self, store: BlockStore, block_size: int, tail: tuple | None):
        self.store = store
        self.block_size = block_size
        self.tail = tail if tail and 0 < tail[1] < block_size else None
        self.pieces: list[_Piece] = []
        self.current: _Piece | None = None
        self.length = 0
        self.closed = False
        if self.tail is not None:
            store.hold(self.tail[0])

    @property
    def ids(self) -> list[int]:
        return [p.block_id for p in self.pieces]

    def write(self, data) -> None:
        view = memoryview(data)
        while view:
            if self.current is None:
                self._start_piece()
            piece = self.current
            take = view[:piece.capacity - piece.size]
            piece.handle.write(take)
            piece.chunker.feed(take)
            piece.size += len(take)
            self.length += len(take)
            view = view[len(take):]
            if piece.size == piece.capacity:
                self._end_piece()

    def _start_piece(self) -> None:
        block_id = self.store.allocate()
        continues = self.tail is not None and not self.pieces
        offset = self.tail[1] if continues else 0
        piece = _Piece(block_id, self.block_size - offset, offset)
        self.pieces.append(piece)
        piece.handle = open(self.store.tmp_path(block_id), "wb")
        if continues:
            piece.handle.seek(offset)
            piece.chunker = checksum.CrcChunker(self._tail_prefix())
        self.current = piece

    def _tail_prefix(self) -> bytes:
        """The bytes of the tail's partial last chunk (they begin the next chunk's CRC)."""
        block_id, num_bytes = self.tail[0], self.tail[1]
        rest = num_bytes % checksum.BYTES_PER_CRC
        if not rest:
            return b""
        with self.store.open_block(block_id, num_bytes) as handle:
            return os.pread(handle.fileno(), rest, num_bytes - rest)

    def _end_piece(self) -> None:
        piece, self.current = self.current, None
        piece.handle.close()
        piece.crcs = piece.chunker.finish()
        if not piece.offset:
            self.store.tmp_path(piece.block_id, meta=True).write_bytes(piece.crcs)

    def seal(self) -> Sealed:
        """Finish the last block, merge the tail, fsync and publish every block."""
        if self.current is not None:
            self._end_piece()
        digests = []
        for piece in self.pieces:
            crcs = self._merge_tail(piece) if piece.offset else piece.crcs
            digests.append(checksum.block_digest(crcs))
        for piece in self.pieces:
            self.store.publish_block(piece.block_id)
        blocks = tuple((p.block_id, p.offset + p.size, GENSTAMP) for p in self.pieces)
        return Sealed(blocks, digests, bool(self.pieces and self.pieces[0].offset),
                      self.length)

    def _merge_tail(self, piece: _Piece) -> bytes:
        block_id, num_bytes = self.tail[0], self.tail[1]
        whole = num_bytes - num_bytes % checksum.BYTES_PER_CRC
        crcs = self.store.read_crcs(block_id, whole) + piece.crcs
        with self.store.open_block(block_id, num_bytes) as src, \
                open(self.store.tmp_path(piece.block_id), "r+b") as dst:
            copy_range(src, dst, num_bytes)
        self.store.tmp_path(piece.block_id, meta=True).write_bytes(crcs)
        return crcs

    def discard(self) -> None:
        """Delete every block this writer made, published or not (idempotent)."""
        if self.current is not None:
            self.current.handle.close()
            self.current = None
        self.store.remove(self.ids)

    def close(self) -> None:
        """Release the ids (after the blocks were recorded, or discarded)."""
        if self.closed:
            return
        self.closed = True
        if self.current is not None:
            self.current.handle.close()
            self.current = None
        self.store.release(self.ids)
        if self.tail is not None:
            self.store.release([self.tail[0]])


# ---------------------------------------------------------------------- reading ranges

def segments(blocks, offset: int, length: int) -> list[tuple]:
    """``(block, start in block, count)`` covering ``length`` bytes from ``offset``."""
    out, pos, end = [], 0, offset + length
    for block in blocks:
        lo, hi = max(offset, pos), min(end, pos + block[1])
        if lo < hi:
            out.append((block, lo - pos, hi - lo))
        pos += block[1]
        if pos >= end:
            break
    return out


class RangeReader:
    """A read-only, file-like view of byte ranges of several block files, for the HTTP
    server's file responses when sendfile cannot serve them (``read``, ``readinto``, ``seek``,
    ``close``; no ``fileno``)."""

    mode = "rb"
    name = "<block ranges>"

    def __init__(self, parts: list[tuple]):
        self.parts = parts          # [(open file, start, count)]
        self.index = 0
        self.done = 0               # bytes read from parts[index]

    def fileno(self):
        raise io.UnsupportedOperation("a RangeReader spans several files")

    def seek(self, position: int, whence: int = 0) -> int:
        if whence:
            raise io.UnsupportedOperation("a RangeReader seeks from the start only")
        self.index, self.done = 0, position
        while self.index < len(self.parts) and self.done >= self.parts[self.index][2]:
            self.done -= self.parts[self.index][2]
            self.index += 1
        return position

    def readinto(self, buffer) -> int:
        while self.index < len(self.parts):
            handle, start, count = self.parts[self.index]
            want = min(len(buffer), count - self.done)
            if want > 0:
                n = os.preadv(handle.fileno(), [memoryview(buffer)[:want]], start + self.done)
                if n <= 0:
                    raise BlockMissingError(f"block file {handle.name} ended early")
                self.done += n
                return n
            self.index, self.done = self.index + 1, 0
        return 0

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (from one block file at a time); b"" at the end."""
        if size < 0:
            size = sum(count for _, _, count in self.parts[self.index:]) - self.done
        buffer = bytearray(min(size, 1 << 20))
        return bytes(buffer[:self.readinto(buffer)]) if buffer else b""

    def close(self) -> None:
        for handle, _, _ in self.parts:
            handle.close()


# ---------------------------------------------------------------------- the sweep

def referenced(ns) -> set[int]:
    """Every block id a file of the namespace refers to (call under the namesystem lock)."""
    ids = set()
    for node in walk(ns.root):
        if not node.is_dir:
            ids.update(block[0] for block in node.blocks)
    return ids


class Sweeper:
    """Removes block files that no file refers to and no writer holds, once they are older
    than ``grace`` seconds. Order matters: the disk is listed first, then the held ids, then
    the namespace, so a block published and recorded meanwhile is always seen as in use."""

    def __init__(self, fs, store: BlockStore, grace: float, clock=time.time):
        self.fs = fs
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
        with self.fs.lock:
            candidates -= referenced(self.fs.ns)
        orphans = sorted(candidates)
        self.store.remove(orphans)
        self.removed += len(orphans)
        if orphans:
            log.info("block sweep removed %d unreferenced block(s): %s", len(orphans),
                     ", ".join(f"blk_{b}" for b in orphans[:10]) +
                     (" ..." if len(orphans) > 10 else ""))
        return orphans
