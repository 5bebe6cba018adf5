"""The packets of one WRITE_BLOCK (Hadoop's ``BlockReceiver`` and its ``PacketResponder``).

Per packet, in order: read it (``formats.hadoop.datatransfer``: PLEN, HLEN, header,
checksums, data), forward it to the mirror if the pipeline goes on (``mirror.Mirror``),
verify each chunk's checksum (``BlockReceiver.verifyChunks``: one CRC per 512 bytes of the
packet's data, counted from its first byte), write the data into the replica
(``replica.ReplicaWriter``), fsync when the packet asks (``syncBlock``), publish the block on
the last packet (``lastPacketInBlock``). Then the responder sends the packet's ack
(``PipelineAckProto``: its seqno, this datanode's reply, then the mirror's replies for the
same packet), in packet order, each once its packet is in the replica here (durable, for a
synced or last packet) and acknowledged downstream; the replica's ``acked`` bytes follow. A
heartbeat (seqno -1, no data) is forwarded and acknowledged, and nothing else.

A packet that cannot be taken -- a wrong checksum (``ERROR_CHECKSUM``), a gap in the offsets
or checksums of the wrong length (``ERROR_INVALID``) -- is answered with an ack carrying that
status and ends the write (``BlockReceiver``: "Terminating due to a checksum error"); the
caller discards the replica. So does a connection cut mid-packet or silent past the timeout,
without an ack. Nothing is published but a block whose last packet was taken.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from nnlite.formats.hadoop import datatransfer as dt
from nnlite.formats.hadoop.datatransfer import HEART_BEAT_SEQNO, Packet, Status
from nnlite.formats.hadoop.hdfs import ChecksumTypeProto
from nnlite.namenode.blocks import checksum
from nnlite.namenode.datanode.errors import DataTransferError
from nnlite.namenode.datanode.mirror import Mirror
from nnlite.namenode.datanode.replica import ReplicaWriter
from nnlite.namenode.datanode.stream import read_packet

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Taken:
    """A packet dealt with here, waiting for its ack: its seqno, this datanode's status, the
    replica's length after it, whether the ack ends the write."""
    seqno: int
    status: int
    length: int
    final: bool


class BlockReceiver:
    """Receives the packets of one block into ``replica`` and acknowledges them.
    ``verify_kind`` is the checksum type the client chose (``OpWriteBlockProto
    .requestedChecksum``: CRC32, CRC32C or NULL, 512 bytes per checksum); ``on_published``
    is told the block's length and digest after it is published, before the last ack (so a
    client that has the ack finds the block finalized when it calls complete)."""

    def __init__(self, replica: ReplicaWriter, verify_kind: int, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, timeout: float,
                 on_published: Callable[[int, tuple[int, bytes, int]], None],
                 mirror: Mirror | None = None) -> None:
        self.replica = replica
        self.verify_kind = verify_kind
        self.reader = reader
        self.writer = writer
        self.timeout = timeout
        self.on_published = on_published
        self.mirror = mirror
        self.taken: asyncio.Queue[Taken] = asyncio.Queue()

    async def run(self) -> None:
        """Receive until the last packet is published and acknowledged."""
        responder = asyncio.ensure_future(self._respond())
        try:
            error = await self._receive(responder)
            await responder
        finally:
            responder.cancel()
        if error is not None:
            raise error

    async def _receive(self, responder: asyncio.Future) -> DataTransferError | None:
        """Take packets until the last one or one refused (returned, once queued for its
        ack)."""
        loop = asyncio.get_running_loop()
        while True:
            packet, raw = await self._next(responder)
            header = packet.header
            if self.mirror is not None:
                await self.mirror.forward(raw)
            try:
                self._take(packet)
                if header.lastPacketInBlock:
                    self.on_published(*await loop.run_in_executor(None, self.replica.publish))
                elif header.syncBlock:
                    await loop.run_in_executor(None, self.replica.sync)
            except DataTransferError as exc:
                self.taken.put_nowait(Taken(header.seqno, exc.status, self.replica.acked, True))
                return exc
            except OSError as exc:
                self.taken.put_nowait(Taken(header.seqno, Status.ERROR, self.replica.acked, True))
                return DataTransferError(f"blk_{self.replica.block_id}: cannot store packet "
                                         f"{header.seqno}: {exc}")
            self.taken.put_nowait(Taken(header.seqno, Status.SUCCESS, self.replica.length,
                                        header.lastPacketInBlock))
            if header.lastPacketInBlock:
                return None

    async def _next(self, responder: asyncio.Future) -> tuple[Packet, bytes]:
        """The next packet, unless the responder failed (the client went away): then its
        error."""
        if responder.done():
            responder.result()
            raise ConnectionError("the responder ended before the last packet")
        return await read_packet(self.reader, self.timeout)

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

    async def _respond(self) -> None:
        """PacketResponder: one ack per packet taken, in order, with the mirror's replies."""
        while True:
            taken = await self.taken.get()
            replies = [taken.status]
            if self.mirror is not None and taken.status == Status.SUCCESS:
                replies += await self.mirror.replies(taken.seqno)
            if taken.status == Status.SUCCESS and taken.seqno != HEART_BEAT_SEQNO:
                self.replica.acked = taken.length
            self.writer.write(dt.encode_ack(taken.seqno, *replies))
            await self.writer.drain()
            if taken.final:
                return
