"""The packets of one WRITE_BLOCK, for a pipeline of one (Hadoop's ``BlockReceiver`` and its
``PacketResponder``, with no mirror downstream).

Per packet, in order: read it (``formats.hadoop.datatransfer``: PLEN, HLEN, header,
checksums, data), verify each chunk's checksum (``BlockReceiver.verifyChunks``: one CRC per
512 bytes of the packet's data, counted from its first byte), write the data into the replica
(``replica.ReplicaWriter``), fsync when the packet asks (``syncBlock``), publish the block on
the last packet (``lastPacketInBlock``), and only then send the packet's ack
(``PipelineAckProto``: its seqno, one reply ``SUCCESS``). A heartbeat (seqno -1, no data) is
acknowledged and nothing else. Acks go out in packet order, each after its packet's bytes are
in the replica (and durable, for a synced or last packet).

A packet that cannot be taken -- a wrong checksum (``ERROR_CHECKSUM``), a gap in the offsets
or checksums of the wrong length (``ERROR_INVALID``) -- is answered with an ack carrying that
status and ends the write (``BlockReceiver``: "Terminating due to a checksum error"); the
caller discards the replica. So does a connection cut mid-packet or silent past the timeout,
without an ack. Nothing is published but a block whose last packet was taken.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Callable

from nnlite.formats.hadoop import datatransfer as dt
from nnlite.formats.hadoop.datatransfer import HEART_BEAT_SEQNO, Packet, Status
from nnlite.formats.hadoop.hdfs import ChecksumTypeProto
from nnlite.namenode.blocks import checksum
from nnlite.namenode.datanode.errors import DataTransferError
from nnlite.namenode.datanode.replica import ReplicaWriter

log = logging.getLogger(__name__)


async def read_packet(reader: asyncio.StreamReader, timeout: float) -> Packet:
    """The next packet (``PacketReceiver.receiveNextPacket``); ProtoError if malformed,
    IncompleteReadError if the connection ends inside it, TimeoutError if it stalls."""
    async with asyncio.timeout(timeout):
        payload, header_len = dt.packet_lengths(await reader.readexactly(dt.PACKET_LENGTHS.size))
        return dt.decode_packet(payload, header_len,
                                await reader.readexactly(payload - 4 + header_len))


class BlockReceiver:
    """Receives the packets of one block into ``replica`` and acknowledges them.
    ``verify_kind`` is the checksum type the client chose (``OpWriteBlockProto
    .requestedChecksum``: CRC32, CRC32C or NULL, 512 bytes per checksum); ``on_published``
    is told the block's length and digest after it is published, before the last ack (so a
    client that has the ack finds the block finalized when it calls complete)."""

    def __init__(self, replica: ReplicaWriter, verify_kind: int, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, timeout: float,
                 on_published: Callable[[int, tuple[int, bytes, int]], None]) -> None:
        self.on_published = on_published
        self.replica = replica
        self.verify_kind = verify_kind
        self.reader = reader
        self.writer = writer
        self.timeout = timeout

    async def run(self) -> None:
        """Receive until the last packet is published and acknowledged."""
        loop = asyncio.get_running_loop()
        while True:
            packet = await read_packet(self.reader, self.timeout)
            header = packet.header
            if header.seqno == HEART_BEAT_SEQNO and not header.dataLen \
                    and not header.lastPacketInBlock:
                await self._ack(header.seqno, Status.SUCCESS)
                continue
            try:
                self._take(packet)
                if header.lastPacketInBlock:
                    self.on_published(*await loop.run_in_executor(None, self.replica.publish))
                elif header.syncBlock:
                    await loop.run_in_executor(None, self.replica.sync)
            except DataTransferError as exc:
                await self._ack(header.seqno, exc.status)
                raise
            except OSError as exc:
                await self._ack(header.seqno, Status.ERROR)
                raise DataTransferError(f"blk_{self.replica.block_id}: cannot store packet "
                                        f"{header.seqno}: {exc}") from exc
            self.replica.acked = self.replica.length
            await self._ack(header.seqno, Status.SUCCESS)
            if header.lastPacketInBlock:
                return

    def _take(self, packet: Packet) -> None:
        header = packet.header
        if not header.dataLen:
            return
        if header.offsetInBlock > self.replica.length or header.offsetInBlock < 0:
            raise DataTransferError(
                f"blk_{self.replica.block_id}: packet {header.seqno} starts at offset "
                f"{header.offsetInBlock}, but the replica holds {self.replica.length} bytes",
                Status.ERROR_INVALID)
        crcs = self._verify(packet)
        self.replica.write(header.offsetInBlock, packet.data,
                           crcs if self.verify_kind == self.replica.kind else None)

    def _verify(self, packet: Packet) -> bytes | None:
        """The CRCs of the packet's chunks, checked against those it carries; None for a
        client that sends none (CHECKSUM_NULL)."""
        header = packet.header
        chunks = -(-header.dataLen // checksum.BYTES_PER_CRC)
        size = 0 if self.verify_kind == ChecksumTypeProto.CHECKSUM_NULL else checksum.CRC_SIZE
        if len(packet.checksums) != chunks * size:
            raise DataTransferError(
                f"blk_{self.replica.block_id}: Invalid checksum length: received length is "
                f"{len(packet.checksums)} but expected length is {chunks * size}",
                Status.ERROR_INVALID)
        if not size:
            return None
        crcs = checksum.chunk_crcs(packet.data, self.verify_kind)
        if crcs != packet.checksums:
            bad = next(i for i in range(0, len(crcs), size)
                       if crcs[i:i + size] != packet.checksums[i:i + size])
            position = header.offsetInBlock + bad // size * checksum.BYTES_PER_CRC
            raise DataTransferError(
                f"Checksum error: blk_{self.replica.block_id} at {position} exp: "
                f"{int.from_bytes(packet.checksums[bad:bad + size], 'big')} got: "
                f"{int.from_bytes(crcs[bad:bad + size], 'big')}", Status.ERROR_CHECKSUM)
        return crcs

    async def _ack(self, seqno: int, status: int) -> None:
        self.writer.write(dt.encode_ack(seqno, status))
        await self.writer.drain()
