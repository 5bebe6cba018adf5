"""The packets of one WRITE_BLOCK (Hadoop's ``BlockReceiver`` and its ``PacketResponder``).

Per packet, in order: read it (``formats.hadoop.datatransfer``: PLEN, HLEN, header,
checksums, data), forward it to the mirror if the pipeline goes on (``mirror.Mirror``),
verify each chunk's checksum (``BlockReceiver.verifyChunks``: one CRC per 512 bytes of the
packet's data, counted from its first byte), write the data into the replica
(``replica.ReplicaWriter``), fsync when the packet asks (``syncBlock``), publish the block on
the last packet (``lastPacketInBlock``): both files fsynced in parallel
(``ReplicaWriter.sync_ahead``), then renamed into place. Then the responder sends the packet's ack
(``PipelineAckProto``: its seqno, this datanode's reply, then the mirror's replies for the
same packet), in packet order, each once its packet is in the replica here (durable, for a
synced or last packet) and acknowledged downstream; the replica's ``acked`` bytes follow. A
heartbeat (seqno -1, no data) is forwarded and acknowledged, and nothing else.

Syncing ahead: after a data packet that leaves the replica at most SYNC_AHEAD bytes long
(a small file's one packet: Spark's checkpoint files), the replica's fsyncs start at once,
off the loop, while the client waits for the ack and sends its last, empty packet
(``DataStreamer`` sends ``lastPacketInBlock`` only once every packet before it is
acknowledged): the publish then only renames, the wait after the last packet is one commit
of the file system instead of three. A change after the sync is synced again at the last
packet (``ReplicaWriter.synced_now``), so the rule is the same: nothing is acknowledged as
published before its bytes and CRCs are durable. Larger blocks are synced ahead only over
their first packets, at the cost of one early fsync.

A packet that cannot be taken -- a wrong checksum (``ERROR_CHECKSUM``), a gap in the offsets
or checksums of the wrong length (``ERROR_INVALID``) -- is answered with an ack carrying that
status and ends the write (``BlockReceiver``: "Terminating due to a checksum error"); the
caller discards the replica. So does a connection cut mid-packet or silent past the timeout,
without an ack. Nothing is published but a block whose last packet was taken.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass

from nnlite.durability import durable
from nnlite.formats.hadoop import datatransfer as dt
from nnlite.formats.hadoop.datatransfer import HEART_BEAT_SEQNO, Packet, Status
from nnlite.formats.hadoop.hdfs import ChecksumTypeProto
from nnlite.namenode.blocks import checksum
from nnlite.namenode.datanode.errors import DataTransferError
from nnlite.namenode.datanode.mirror import Mirror
from nnlite.namenode.datanode.replica import ReplicaWriter
from nnlite.namenode.datanode.stream import read_packet

log = logging.getLogger(__name__)

# A replica this long or shorter after a data packet is fsynced before its last packet
# arrives (module docstring): one packet of Hadoop's client (dfs.client-write-packet-size).
SYNC_AHEAD = 64 * 1024


@dataclass(frozen=True, slots=True)
class Taken:
    """A packet dealt with here, waiting for its ack: its seqno, this datanode's status, the
    replica's length after it, whether the ack ends the write."""
    seqno: int
    status: int
    length: int
    final: bool


class BlockReceiver:
    """Receives the packets of one block into ``replica`` and acknowledges them (the first
    once ``created``, the future of the replica's files being created, is done).
    ``verify_kind`` is the checksum type the client chose (``OpWriteBlockProto
    .requestedChecksum``: CRC32, CRC32C or NULL, 512 bytes per checksum); ``on_published``
    is told the block's length and digest after it is published, before the last ack (so a
    client that has the ack finds the block finalized when it calls complete)."""

    def __init__(self, replica: ReplicaWriter, verify_kind: int, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, timeout: float,
                 on_published: Callable[[int, tuple[int, bytes, int]], None],
                 mirror: Mirror | None = None,
                 created: asyncio.Future[None] | None = None) -> None:
        self.replica = replica
        self.verify_kind = verify_kind
        self.reader = reader
        self.writer = writer
        self.timeout = timeout
        self.on_published = on_published
        self.mirror = mirror
        self.created = created      # the replica's files being created: the first packet waits
        self.taken: asyncio.Queue[Taken] = asyncio.Queue()
        self.ahead: asyncio.Future[None] | None = None    # the sync ahead under way

    async def run(self) -> None:
        """Receive until the last packet is published and acknowledged."""
        responder = asyncio.ensure_future(self._respond())
        try:
            error = await self._receive(responder)
            await responder
        finally:
            responder.cancel()
            if self.ahead is not None:      # its descriptors are its own: let it end
                self.ahead.add_done_callback(_retrieve)
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
                if self.created is not None:
                    created, self.created = self.created, None
                    await created
                self._take(packet)
                if header.lastPacketInBlock:
                    await self._synced()
                    self.on_published(*await loop.run_in_executor(None, self.replica.publish))
                elif header.syncBlock:
                    await loop.run_in_executor(None, self.replica.sync)
                elif header.dataLen and self.replica.length <= SYNC_AHEAD and (
                        self.ahead is None or self.ahead.done()):
                    self.ahead = asyncio.ensure_future(self._sync_ahead())
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

    async def _synced(self) -> None:
        """Both files durable as they stand: the sync ahead awaited, and done again (now)
        if a change came after it."""
        if self.ahead is not None:
            ahead, self.ahead = self.ahead, None
            await ahead
        if not self.replica.synced_now:
            await self._sync_ahead()

    async def _sync_ahead(self) -> None:
        """fsync both files of the replica in parallel, off the loop, through duplicates of
        their descriptors (``ReplicaWriter.sync_ahead``)."""
        loop = asyncio.get_running_loop()
        version, fds = self.replica.sync_ahead()
        results = await asyncio.gather(*(loop.run_in_executor(None, _sync_and_close, fd)
                                         for fd in fds), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        if fds:
            self.replica.synced_ahead(version)

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


def _sync_and_close(fd: int) -> None:
    """fdatasync a duplicate descriptor and close it (in the executor's thread)."""
    try:
        durable.sync_fd(fd)
    finally:
        os.close(fd)


def _retrieve(future: asyncio.Future[None]) -> None:
    """A sync ahead that outlived its write: its error, if any, is of no use any more."""
    if not future.cancelled():
        future.exception()
