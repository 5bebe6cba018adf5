"""Bytes into and out of block files for one request: an upload's ``BlockWriter`` and a
read's ``segments`` (a read's bytes, checked against their CRCs, come through
``namenode.datanode.sender``). The store (``namenode.blocks``) owns the directory,
the names, the ids and publishing; a writer works through it, a reader only reads open files.

* A block is ``(id, num_bytes, genstamp)``; the generation stamp is always ``GENSTAMP``
  (blocks are never rewritten in place).
* Appending to a file whose last block is partial writes a new block holding the old bytes and
  then the new ones; the old bytes are copied in the kernel (``copy_range``) when the upload
  is sealed. The meta file's chunk CRCs (layout in ``namenode.blocks``) continue from the
  old block's last partial chunk.
* A block enters the namespace (in a CloseFileOp) only once published; blocks of an upload
  that fails are deleted at once.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO, TypeVar

from nnlite.formats.edits import Block
from nnlite.namenode import errors
from nnlite.namenode.blocks import checksum

if TYPE_CHECKING:
    from nnlite.namenode.blocks.store import BlockStore

GENSTAMP = 1001
COPY_CHUNK = 8 << 20
B = TypeVar("B", bound=Sequence[int])      # a block: (id, num_bytes, genstamp)


class BlockMissingError(errors.NamenodeError):
    """A block the namespace refers to is missing or shorter than recorded on disk."""
    JAVA_CLASS = "org.apache.hadoop.hdfs.BlockMissingException"


@dataclass(frozen=True)
class Sealed:
    """What a finished writer made: new blocks ``(id, num_bytes, genstamp)`` in file order,
    their ``checksum.block_digest``s, and whether the first one replaces the file's tail."""
    blocks: tuple[Block, ...]
    digests: list[tuple[int, bytes, int]]
    replaces_tail: bool
    length: int


def copy_range(src: BinaryIO, dst: BinaryIO, count: int) -> None:
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
    # opened right after the piece is listed (so a failed open still releases its id)
    handle: BinaryIO = field(init=False, repr=False, compare=False)
    chunker: checksum.CrcChunker = field(default_factory=checksum.CrcChunker)


class BlockWriter:
    """Writes one upload's bytes as new blocks of ``block_size`` bytes, computing the chunk
    CRCs on the way. With a ``tail`` (the file's partial last block) the first new block
    continues it: the new bytes go at offset ``tail[1]`` and ``seal`` copies the old bytes in.

    ``write`` only buffers into tmp/ files (it runs on the event loop); ``seal`` fsyncs and
    publishes (run it in a thread); ``discard`` deletes everything; ``close`` releases the
    ids. The owner calls ``close`` after recording the blocks, or ``discard`` and ``close``."""

    def __init__(self, store: BlockStore, block_size: int, tail: tuple | None) -> None:
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

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        while view:
            piece = self.current
            if piece is None:
                piece = self._start_piece()
            take = view[:piece.capacity - piece.size]
            piece.handle.write(take)
            piece.chunker.feed(take)
            piece.size += len(take)
            self.length += len(take)
            view = view[len(take):]
            if piece.size == piece.capacity:
                self._end_piece(piece)

    def _start_piece(self) -> _Piece:
        block_id = self.store.allocate()
        tail = self.tail if not self.pieces else None    # only the first block continues it
        offset = tail[1] if tail is not None else 0
        piece = _Piece(block_id, self.block_size - offset, offset)
        self.pieces.append(piece)
        # open while the piece fills; _end_piece(), discard() or close() closes it
        piece.handle = open(self.store.tmp_path(block_id), "wb")  # noqa: SIM115
        if tail is not None:
            piece.handle.seek(offset)
            # the continued block keeps its checksum type (old blocks are CRC32)
            piece.chunker = checksum.CrcChunker(self._tail_prefix(tail), self._tail_kind(tail))
        self.current = piece
        return piece

    def _tail_prefix(self, tail: tuple) -> bytes:
        """The bytes of the tail's partial last chunk (they begin the next chunk's CRC)."""
        block_id, num_bytes = tail[0], tail[1]
        rest = num_bytes % checksum.BYTES_PER_CRC
        if not rest:
            return b""
        with self.store.open_block(block_id, num_bytes) as handle:
            return os.pread(handle.fileno(), rest, num_bytes - rest)

    def _tail_kind(self, tail: tuple) -> int:
        return self.store.read_crcs(tail[0], 0)[1]

    def _end_piece(self, piece: _Piece) -> None:
        """Close the current block file, ``piece``'s."""
        self.current = None
        piece.handle.close()
        piece.crcs = piece.chunker.finish()
        if not piece.offset:
            self.store.tmp_path(piece.block_id, meta=True).write_bytes(
                checksum.meta_header(piece.chunker.kind) + piece.crcs)

    def seal(self) -> Sealed:
        """Finish the last block, merge the tail, fsync and publish every block."""
        if self.current is not None:
            self._end_piece(self.current)
        digests = []
        for piece in self.pieces:
            crcs = self._merge_tail(piece) if piece.offset else piece.crcs
            digests.append(checksum.block_digest(crcs, piece.chunker.kind))
        for piece in self.pieces:
            self.store.publish_block(piece.block_id)
        blocks = tuple((p.block_id, p.offset + p.size, GENSTAMP) for p in self.pieces)
        return Sealed(blocks, digests, bool(self.pieces and self.pieces[0].offset),
                      self.length)

    def _merge_tail(self, piece: _Piece) -> bytes:
        if self.tail is None:       # only the first piece of an append has an offset
            raise errors.NamenodeError(f"block {piece.block_id} continues no partial block")
        block_id, num_bytes = self.tail[0], self.tail[1]
        whole = num_bytes - num_bytes % checksum.BYTES_PER_CRC
        crcs = self.store.read_crcs(block_id, whole)[0] + piece.crcs
        with self.store.open_block(block_id, num_bytes) as src, \
                open(self.store.tmp_path(piece.block_id), "r+b") as dst:
            copy_range(src, dst, num_bytes)
        self.store.tmp_path(piece.block_id, meta=True).write_bytes(
            checksum.meta_header(piece.chunker.kind) + crcs)
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

def segments(blocks: Iterable[B], offset: int, length: int) -> list[tuple[B, int, int]]:
    """``(block, start in block, count)`` covering ``length`` bytes from ``offset``."""
    out: list[tuple[B, int, int]] = []
    pos, end = 0, offset + length
    for block in blocks:
        lo, hi = max(offset, pos), min(end, pos + block[1])
        if lo < hi:
            out.append((block, lo - pos, hi - lo))
        pos += block[1]
        if pos >= end:
            break
    return out
