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

A reader in this process (WebHDFS's OPEN of a file being written, which on a DataNode reads
through a ``DFSInputStream``: ``WebHdfsHandler.onOpen``) takes the same range with ``read``:
the bytes checked against those CRCs, as a ``BlockReaderRemote`` checks READ_BLOCK's packets
(``DataChecksum.verifyChunkedSums``), so a damaged chunk is a ``ChecksumError``, not data.

Disk reads run in a thread, ``BATCH_PACKETS`` packets at a time; the block's files stay open
for the whole read (a published block never changes, and a sweep's unlink leaves open files
readable).
"""

from __future__ import annotations

import asyncio
import os
from typing import BinaryIO

from nnlite.formats.hadoop import datatransfer as dt
from nnlite.formats.hadoop.datatransfer import ChecksumProto, ReadOpChecksumInfoProto, Status
from nnlite.formats.hadoop.hdfs import ChecksumTypeProto
from nnlite.namenode.blocks import checksum
from nnlite.namenode.blocks.store import BlockStore
from nnlite.namenode.datanode.errors import ChecksumError, DataTransferError

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

    def _open_published(self) -> int:
        self.data = self.store.open_block(self.block_id, 0)
        if self.send_checksums:
            self.meta = open(self.store.meta_path(self.block_id), "rb")
            head = self.meta.read(checksum.META_HEADER.size)
            self.kind, self.crc_start = checksum.meta_layout(
                head, os.fstat(self.meta.fileno()).st_size)
        return os.fstat(self.data.fileno()).st_size

    def _open_being_written(self) -> int:
        """The rbw file (or the block, if it was published meanwhile: the same bytes); the
        CRCs come from the writer's, the partial last chunk's computed from the data."""
        size, _, self.kind = self.being_written or (0, b"", 0)
        try:
            self.data = open(self.store.rbw_path(self.block_id), "rb")
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
            data, crcs = self._read(self.start, self.end - self.start)
        finally:
            self.close()
        if self.send_checksums:
            self._verify(data, crcs)
        skip = self.offset - self.start
        return data[skip:skip + self.length]

    def _verify(self, data: bytes, crcs: bytes) -> None:
        if checksum.chunk_crcs(data, self.kind) == crcs:
            return
        size = checksum.CRC_SIZE
        bad = next(i for i in range(0, len(data), CHUNK)
                   if checksum.chunk_crcs(data[i:i + CHUNK], self.kind) !=
                   crcs[i // CHUNK * size:(i // CHUNK + 1) * size])
        raise ChecksumError(f"Checksum error: blk_{self.block_id} at offset "
                            f"{self.start + bad}: the chunk does not match its stored CRC")

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
