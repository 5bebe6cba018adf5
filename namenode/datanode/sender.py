"""READ_BLOCK's packets: a range of a published block with its stored chunk CRCs (Hadoop's
``BlockSender``).

The range is widened to whole chunks: it starts at ``offset`` rounded down to a 512-byte
chunk (``chunkOffset`` of ``ReadOpChecksumInfoProto``: the client skips the bytes before
``offset``) and ends at ``offset + len`` rounded up, but not past the block's end. A request
outside the block (``offset > length`` or ``offset + len > length``) is refused before any
packet ("Offset ... and length ... don't match block"). Packets carry ``CHUNKS_PER_PACKET``
chunks (64 KiB: ``BlockSender``'s transferTo buffer), the CRCs read from the meta file, so a
reader checks the bytes against what was written, not against a fresh computation; seqnos
count from 0; an empty packet with ``lastPacketInBlock`` ends the block. With
``sendChecksums`` false the checksum type is NULL and packets carry no checksums.

A replica still being written (``replica.ReplicaWriter``) is read up to its acknowledged
bytes, as a DataNode serves a replica being written to a reader after an hflush; its CRCs
are the writer's, the partial last chunk's computed from the bytes read.

A reader in this process (WebHDFS's OPEN, which on a DataNode reads through a
``DFSInputStream``: ``WebHdfsHandler.onOpen``) takes the same ranges with ``read`` or
``read_next``, or several at once through a ``VerifiedRange`` (a file for the HTTP server's
answer): the bytes checked against those CRCs, as a ``BlockReaderRemote`` checks
READ_BLOCK's packets (``DataChecksum.verifyChunkedSums``), whole runs of chunks at a time
(``checksum.chunks_match``), so a damaged chunk is a ``ChecksumError`` (logged, with the
block file), not data.

Disk reads run in a thread, ``BATCH_PACKETS`` packets at a time; the block's files stay open
for the whole read (a published block never changes, and a sweep's unlink leaves open files
readable).
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
from typing import BinaryIO

from nnlite.formats.hadoop import datatransfer as dt
from nnlite.formats.hadoop.datatransfer import ChecksumProto, ReadOpChecksumInfoProto, Status
from nnlite.formats.hadoop.hdfs import ChecksumTypeProto
from nnlite.namenode.blocks import checksum
from nnlite.namenode.blocks.store import BlockStore
from nnlite.namenode.datanode.errors import ChecksumError, DataTransferError

log = logging.getLogger(__name__)

CHUNK = checksum.BYTES_PER_CRC
CHUNKS_PER_PACKET = 128
BATCH_PACKETS = 16


class BlockSender:
    """One READ_BLOCK of ``length`` bytes from ``offset`` of block ``block_id``. ``open``
    (blocking: run it in a thread) checks the range and opens the files; ``send`` writes the
    packets; ``close`` closes the files."""

    def __init__(self, store: BlockStore, block_id: int, offset: int, length: int,
                 send_checksums: bool = True,
                 being_written: tuple[int, bytes, int] | None = None) -> None:
        self.store = store
        self.block_id = block_id
        self.offset = offset
        self.length = length
        self.send_checksums = send_checksums
        # a replica being written: ReplicaWriter.visible() (length, CRCs, type)
        self.being_written = being_written
        self.data: BinaryIO | None = None
        self.meta: BinaryIO | None = None
        self.kind = checksum.DEFAULT
        self.crc_start = 0          # offset of the first CRC in the meta file
        self.start = self.end = 0
        self.position = 0           # where read_next goes on

    def open(self) -> None:
        if self.being_written is not None:
            size = self._open_being_written()
        elif not self.store.has(self.block_id):
            raise DataTransferError(f"Replica not found for blk_{self.block_id}")
        else:
            size = self._open_published()
        if self.offset > size or self.offset + self.length > size:
            raise DataTransferError(
                f"Offset {self.offset} and length {self.length} don't match block "
                f"blk_{self.block_id} ( blockLen {size} )", Status.ERROR_INVALID)
        self.start = self.offset - self.offset % CHUNK
        self.end = min(-(-(self.offset + self.length) // CHUNK) * CHUNK, size)
        self.position = self.start

    def _open_published(self) -> int:
        self.data = self.store.open_block(self.block_id, 0)
        if self.send_checksums:
            # held across the packets of the read; close() closes it
            self.meta = open(self.store.meta_path(self.block_id), "rb")  # noqa: SIM115
            head = self.meta.read(checksum.META_HEADER.size)
            self.kind, self.crc_start = checksum.meta_layout(
                head, os.fstat(self.meta.fileno()).st_size)
        return os.fstat(self.data.fileno()).st_size

    def _open_being_written(self) -> int:
        """The rbw file (or the block, if it was published meanwhile: the same bytes); the
        CRCs come from the writer's, the partial last chunk's computed from the data."""
        size, _, self.kind = self.being_written or (0, b"", 0)
        try:
            # held across the packets of the read; close() closes it
            self.data = open(self.store.rbw_path(self.block_id), "rb")  # noqa: SIM115
        except FileNotFoundError:
            self.data = self.store.open_block(self.block_id, size)
        return size

    def checksum_info(self) -> ReadOpChecksumInfoProto:
        kind = self.kind if self.send_checksums else ChecksumTypeProto.CHECKSUM_NULL
        return ReadOpChecksumInfoProto(
            checksum=ChecksumProto(type=kind, bytesPerChecksum=CHUNK), chunkOffset=self.start)

    def _read(self, position: int, count: int) -> tuple[bytes, bytes]:
        """``count`` bytes of data from ``position`` and their chunks' CRCs."""
        if self.data is None:
            raise DataTransferError(f"blk_{self.block_id} is not open")
        data = os.pread(self.data.fileno(), count, position)
        if len(data) != count:
            raise DataTransferError(f"blk_{self.block_id} ended at {position + len(data)}, "
                                    f"before {position + count}")
        if not self.send_checksums:
            return data, b""
        if self.being_written is not None:
            return data, self._crcs_being_written(position, data)
        if self.meta is None:
            raise DataTransferError(f"the meta file of blk_{self.block_id} is not open")
        chunks = -(-count // CHUNK)
        crcs = os.pread(self.meta.fileno(), chunks * checksum.CRC_SIZE,
                        self.crc_start + position // CHUNK * checksum.CRC_SIZE)
        if len(crcs) != chunks * checksum.CRC_SIZE:
            raise DataTransferError(f"the meta file of blk_{self.block_id} holds fewer CRCs "
                                    f"than its {self.end} bytes need")
        return data, crcs

    def _crcs_being_written(self, position: int, data: bytes) -> bytes:
        """The CRCs of ``data``'s chunks (``position`` starts a chunk): the writer's where it
        has them, computed for the rest (the partial last chunk)."""
        _, crcs, kind = self.being_written or (0, b"", 0)
        first, size = position // CHUNK, checksum.CRC_SIZE
        have = max(0, min(len(crcs) // size, first + -(-len(data) // CHUNK)) - first)
        rest = data[have * CHUNK:]
        return crcs[first * size:(first + have) * size] + \
            (checksum.chunk_crcs(rest, kind) if rest else b"")

    def read(self) -> bytes:
        """The range's bytes, every chunk they touch checked against its CRC (blocking: run
        it in a thread); opens and closes the files."""
        self.open()
        try:
            return self.read_next(self.end - self.start)
        finally:
            self.close()

    def read_next(self, size: int) -> bytes:
        """The next bytes of the range, from whole chunks of at most ``size`` bytes (a
        multiple of CHUNK) checked against their CRCs; b"" at its end (blocking: run it in
        a thread; ``open`` first)."""
        position = self.position
        count = min(self.end - position, size)
        if count <= 0:
            return b""
        self.position += count
        data, crcs = self._read(position, count)
        if self.send_checksums:
            self._verify(data, crcs, position)
        lo, hi = max(self.offset - position, 0), min(self.offset + self.length - position, count)
        return data[lo:hi] if (lo, hi) != (0, count) else data

    def _verify(self, data: bytes, crcs: bytes, position: int) -> None:
        """``DataChecksum.verifyChunkedSums``: every chunk of ``data`` (read from
        ``position``) against its CRC, whole runs at a time (``checksum.chunks_match``);
        the first that differs is the error."""
        if checksum.chunks_match(data, crcs, self.kind):
            return
        size = checksum.CRC_SIZE
        bad = next(i for i in range(0, len(data), CHUNK)
                   if checksum.chunk_crcs(data[i:i + CHUNK], self.kind) !=
                   crcs[i // CHUNK * size:(i // CHUNK + 1) * size])
        log.error("blk_%d is damaged on disk: its chunk at offset %d does not match its "
                  "stored CRC (%s)", self.block_id, position + bad, self.store.data_path(
                      self.block_id) if self.being_written is None else "being written")
        raise ChecksumError(f"Checksum error: blk_{self.block_id} at offset "
                            f"{position + bad}: the chunk does not match its stored CRC",
                            block_id=self.block_id, position=position + bad)

    async def send(self, writer: asyncio.StreamWriter) -> None:
        """Every packet of the range, then the empty last one."""
        loop = asyncio.get_running_loop()
        packet_size = CHUNKS_PER_PACKET * CHUNK
        position, seqno = self.start, 0
        while position < self.end:
            count = min(self.end - position, packet_size * BATCH_PACKETS)
            data, crcs = await loop.run_in_executor(None, self._read, position, count)
            for at in range(0, count, packet_size):
                piece = data[at:at + packet_size]
                sums = crcs[at // CHUNK * checksum.CRC_SIZE:
                            (at + len(piece) + CHUNK - 1) // CHUNK * checksum.CRC_SIZE]
                writer.write(dt.encode_packet(dt.packet_header(position + at, seqno, len(piece)),
                                              sums, piece))
                seqno += 1
            await writer.drain()
            position += count
        writer.write(dt.encode_packet(dt.packet_header(self.end, seqno, 0, last=True), b"", b""))
        await writer.drain()

    def close(self) -> None:
        for handle in (self.data, self.meta):
            if handle is not None:
                handle.close()
        self.data = self.meta = None


class VerifiedRange:
    """A read-only, file-like view of ranges of several blocks, each read through its
    ``BlockSender`` (opened) and checked against its stored CRCs ``BATCH`` bytes at a time,
    then of ``tail`` (bytes read and checked already: those of a block being written), for
    the HTTP server's file answers (``http/stream.py``'s ``write_file``: ``read`` on uvloop's
    loop, FILE_CHUNK at a time; ``readinto`` in a thread where asyncio's sendfile finds no
    ``fileno``). A damaged chunk raises ``ChecksumError`` from either; the server then cuts
    the connection, so the client reads fewer bytes than the Content-Length it was
    promised, never the damaged ones. ``prime`` reads the first
    batch ahead, so damage there is known before the answer's head is sent."""

    mode = "rb"
    name = "<verified block ranges>"
    BATCH = 256 << 10          # the server's FILE_CHUNK: its reads take whole batches

    def __init__(self, senders: list[BlockSender], tail: bytes = b"") -> None:
        self.senders = senders
        self.tail = tail
        self.index = 0
        self.piece = b""            # the batch being handed out, from ``at``
        self.at = 0
        self.consumed = 0           # bytes handed out

    def fileno(self) -> int:
        raise io.UnsupportedOperation("a VerifiedRange checks what it reads: no sendfile")

    def seek(self, position: int, whence: int = 0) -> int:
        """Only to where the reader is (asyncio's sendfile seeks there when done)."""
        if whence or position != self.consumed:
            raise io.UnsupportedOperation("a VerifiedRange reads forward only")
        return position

    def prime(self) -> None:
        """Read and check the first batch now (blocking: run it in a thread)."""
        if self.at == len(self.piece):
            self.piece, self.at = self._next(), 0

    def _take(self, size: int) -> bytes:
        """Up to ``size`` bytes of the current piece (the next one once it is used up);
        a whole piece as it is, not copied."""
        self.prime()
        piece, at = self.piece, self.at
        self.at = min(at + size, len(piece))
        self.consumed += self.at - at
        return piece if (at, self.at) == (0, len(piece)) else piece[at:self.at]

    def readinto(self, buffer: bytearray | memoryview) -> int:
        data = self._take(len(buffer))
        memoryview(buffer)[:len(data)] = data
        return len(data)

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (all that is left with -1); b"" at the end."""
        if size >= 0:
            return self._take(size)
        return b"".join(iter(lambda: self._take(self.BATCH), b""))

    def _next(self) -> bytes:
        while self.index < len(self.senders):
            piece = self.senders[self.index].read_next(self.BATCH)
            if piece:
                return piece
            self.senders[self.index].close()
            self.index += 1
        tail, self.tail = self.tail, b""
        return tail

    def close(self) -> None:
        for sender in self.senders:
            sender.close()
