"""What a reader of a file sees, and its bytes read with every chunk checked: the reading
WebHDFS's OPEN and GETFILECHECKSUM share with whatever else reads a file in this process, as
a DataNode's ``WebHdfsHandler.onOpen`` reads through a ``DFSInputStream``.

A file being written over hdfs:// reads as a DataNode's OPEN reads it: its length is the
namespace's without the last block, plus that block's visible length on the datanode
(``DFSInputStream.fetchLocatedBlocksAndGetLastBlockLength``, ``readBlockLength``:
``getReplicaVisibleLength``, the bytes a writer's hflush made visible; none when the
datanode has no replica of it), and that block's bytes come from the datanode's replica
(``rbw/``) with its CRCs verified, as READ_BLOCK serves them (``BlockSender``). A checksum
(``readable``) takes the blocks the namespace records, up to the first the store has not
published: the blocks the writer completed (``FileChecksumHelper`` never asks for a visible
length).

Every byte is checked against its chunk's stored CRC first, through ``BlockSender``, the one
verification READ_BLOCK's in-process reader uses (``namenode/datanode/sender.py``:
``VerifiedRange``, a batch at a time). A damaged chunk, a missing block or one shorter than
recorded is HDFS's answer when no replica is left to try: ``BlockMissingException`` "Could
not obtain block: blk_<id>_<genstamp> file=<path>" (``DFSInputStream.refetchLocations``).
In an HA set a block written while this namenode was down is fetched from a standby first;
a damaged one is not read from there instead.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import TypeVar

from nnlite.formats.edits import Block
from nnlite.namenode import errors
from nnlite.namenode.blocks.replication import Replicator
from nnlite.namenode.blocks.store import BlockStore
from nnlite.namenode.blocks.streams import BlockMissingError, segments
from nnlite.namenode.datanode.errors import ChecksumError, DataTransferError
from nnlite.namenode.datanode.sender import BlockSender, VerifiedRange
from nnlite.namenode.datanode.server import DataNodeServer
from nnlite.namenode.fsnamesystem import FileBlocks

MEMORY_READ = 4 << 20       # ranges up to this size are read into memory, larger ones streamed

T = TypeVar("T")
Part = tuple[Block, int, int]       # (block, offset in it, bytes)


class EndOfFileError(errors.NamenodeError):
    JAVA_CLASS = "java.io.EOFException"


class FileReader:
    """Reads files of one block store; ``datanode`` (the built-in one, whose replicas being
    written are read) and ``replicator`` (a standby's copies, in an HA set) are set once they
    run."""

    def __init__(self, store: BlockStore) -> None:
        self.store = store
        self.datanode: DataNodeServer | None = None
        self.replicator: Replicator | None = None

    def readable(self, node: FileBlocks) -> tuple[tuple[Block, ...], int]:
        """A file's blocks and length as the namespace records them (a checksum's); of a
        file being written over hdfs:// (its blocks recorded as they are handed out), those
        up to the first this store has not published: the blocks its writer completed
        (a read adds the block being written: ``visible``)."""
        if not node.under_construction:
            return node.blocks, node.length
        return self._published(node.blocks)

    def visible(self, node: FileBlocks) -> tuple[tuple[Block, ...], int, Block | None]:
        """What a read sees of a file: its blocks, its length and the block being written
        (None if none). Of a file being written over hdfs://, the last block is the
        datanode's at its visible length (``DFSInputStream.readBlockLength``: the replica's
        acknowledged bytes, or its length once finalized), after the blocks before it
        (``readable``'s: up to the first the store has not published)."""
        last = node.blocks[-1] if node.under_construction and node.blocks else None
        visible = None if last is None or self.datanode is None \
            else self.datanode.visible_length(last[0])
        if last is None or visible is None:
            return *self.readable(node), None
        blocks, size = self._published(node.blocks[:-1])
        if len(blocks) < len(node.blocks) - 1:
            return blocks, size, None
        writing = (last[0], visible, last[2])
        return blocks + (writing,), size + visible, writing

    def _published(self, blocks: tuple[Block, ...]) -> tuple[tuple[Block, ...], int]:
        """``blocks`` up to the first this store has not published, and their length."""
        kept = tuple(itertools.takewhile(lambda b: self.store.has(b[0]), blocks))
        return kept, sum(b[1] for b in kept)

    async def read(self, path: str, node: FileBlocks, offset: int,
                   length: int | None) -> bytes | tuple[VerifiedRange, int]:
        """The bytes of ``[offset, offset + length)`` of what a reader sees of ``node``
        (to its end without ``length``), every chunk checked: up to ``MEMORY_READ`` bytes
        read now, more as ``(a VerifiedRange with its first batch checked, its size)``."""
        blocks, size, writing = self.visible(node)
        if offset > size:
            raise EndOfFileError(f"Cannot seek after EOF: offset {offset} is beyond the "
                                 f"length {size} of {path}", path=path)
        count = size - offset if length is None else min(length, size - offset)
        parts: list[Part] = segments(blocks, offset, count)
        if sum(n for _, _, n in parts) != count:
            raise BlockMissingError(f"The blocks of {path} hold fewer bytes than its "
                                    f"length {size}", path=path)
        loop = asyncio.get_running_loop()
        tail = b""
        if parts and parts[-1][0] == writing and self.datanode is not None:
            block, start, n = parts.pop()
            tail = await loop.run_in_executor(
                None, verified(path, [block], self.datanode.sender(block[0], start, n).read))
        if self.replicator is not None:
            # a block written while this namenode was down is on a standby only
            absent = [b for b, _, _ in parts if not self.store.has(b[0])]
            if absent:
                await loop.run_in_executor(None, self.replicator.fetch, absent)
        blocks_read = [b for b, _, _ in parts]
        if count <= MEMORY_READ:
            data = await loop.run_in_executor(None, verified(
                path, blocks_read, lambda: self._read_parts(path, parts)))
            return data + tail
        reader = await loop.run_in_executor(None, verified(
            path, blocks_read, lambda: self._open_parts(path, parts, tail)))
        return reader, count

    def _read_parts(self, path: str, parts: list[Part]) -> bytes:
        """The bytes of the block ranges ``parts``, checked (blocking)."""
        reader = self._open_parts(path, parts)
        try:
            return reader.read()
        finally:
            reader.close()

    def _open_parts(self, path: str, parts: list[Part], tail: bytes = b"") -> VerifiedRange:
        """A VerifiedRange over the block ranges ``parts``, then ``tail`` (the bytes read of
        a block being written), its first batch read and checked (blocking)."""
        senders: list[BlockSender] = []
        reader = VerifiedRange(senders, tail)
        try:
            for block, start, n in parts:
                senders.append(BlockSender(self.store, block[0], start, n))
                try:
                    senders[-1].open()
                except DataTransferError as exc:    # missing, or shorter than recorded
                    raise unobtainable(path, block, exc) from exc
            reader.prime()
        except BaseException:
            reader.close()
            raise
        return reader


def verified(path: str, blocks: list[Block], read: Callable[[], T]) -> Callable[[], T]:
    """``read`` (blocking), with a chunk that does not match its stored CRC answered as a
    DataNode's OPEN answers it when its ``DFSInputStream`` has no good replica left
    (``DFSInputStream.readBuffer``: a ``ChecksumException`` marks the replica corrupt and
    ``chooseDataNode`` tries another; with none left ``refetchLocations`` throws
    ``BlockMissingException``): ``unobtainable``. nnlite keeps one replica here: the
    standby's copy in an HA set is not read instead (``BlockSender`` logs the damaged
    block)."""
    def checked() -> T:
        try:
            return read()
        except ChecksumError as exc:
            block = next((b for b in blocks if b[0] == exc.block_id), (exc.block_id, 0, 0))
            raise unobtainable(path, block, exc) from exc
    return checked


def unobtainable(path: str, block: Block, cause: Exception) -> BlockMissingError:
    """``DFSInputStream.refetchLocations``'s error once no replica of ``block`` can be read,
    with what was wrong with this one."""
    return BlockMissingError(f"Could not obtain block: blk_{block[0]}_{block[2]} file={path} "
                             f"({cause})", path=path)
