"""``Mirror``: the next datanode of a write pipeline, as a DataNode's ``DataXceiver`` opens
it (``writeBlock`` with targets) and its ``PacketResponder`` reads it.

Setup: connect to the first target's transfer address (in secure mode with
``dfs.data.transfer.protection``, the data port's SASL handshake with the writer's token
first: ``sasl.DataTransferSasl.connect``), send it the same WRITE_BLOCK with
the targets after it (``targets``, ``targetStorageTypes``, ``targetStorageIds`` and
``targetPinnings`` shifted by one), read its ``BlockOpResponseProto``. A target that cannot
be reached, or that refuses, fails the setup with ``firstBadLink`` naming it (or the link
the target itself names), so the client rebuilds the pipeline without it.

Streaming: every packet is forwarded as it came, before it is taken here; the mirror's ack
for each packet, in order, carries one reply per datanode downstream, which go after this
datanode's own reply. A mirror that stops answering (the connection ends, an ack is late or
out of order) is failed once and for all: every later ack reports ERROR in its place and
nothing more is forwarded, as ``PacketResponder``'s ``mirrorError``; the client then
recovers the pipeline without it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from nnlite.formats.hadoop import datatransfer as dt
from nnlite.formats.hadoop.datatransfer import BlockOpResponseProto, Op, PipelineAckProto, Status
from nnlite.formats.hadoop.proto import ProtoError
from nnlite.namenode.datanode.errors import DataTransferError
from nnlite.namenode.datanode.sasl import DataTransferSasl
from nnlite.namenode.datanode.stream import read_message
from nnlite.namenode.security.digest_md5 import DigestError

log = logging.getLogger(__name__)


def xfer_address(target: Any) -> str:
    """``DatanodeID.getXferAddr``: ip:port of a DatanodeInfoProto."""
    return f"{target.id.ipAddr}:{target.id.xferPort}"


def downstream_request(request: Any) -> Any:
    """The WRITE_BLOCK the mirror gets: this one without its first target."""
    forward = dt.OpWriteBlockProto()
    forward.CopyFrom(request)
    for name in ("targets", "targetStorageTypes", "targetStorageIds", "targetPinnings"):
        field = getattr(forward, name)
        if len(field):
            del field[0]
    return forward


class Mirror:
    def __init__(self, address: str, downstream: int, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, timeout: float) -> None:
        self.address = address
        self.downstream = downstream        # datanodes from the mirror on: replies per ack
        self.reader = reader
        self.writer = writer
        self.timeout = timeout
        self.failed = False

    @classmethod
    async def open(cls, request: Any, timeout: float,
                   sasl: DataTransferSasl | None = None) -> Mirror:
        """Connect to the first target and set up the rest of the pipeline there; with
        ``sasl``, after the data port's handshake with the request's block token."""
        address = xfer_address(request.targets[0])
        host, port = address.rsplit(":", 1)
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(host, int(port))
        except (OSError, TimeoutError) as exc:
            raise DataTransferError(f"cannot reach the mirror {address}: {exc!r}",
                                    first_bad_link=address) from exc
        if sasl is not None:
            try:
                reader, writer = await sasl.connect(reader, writer,
                                                    request.header.baseHeader.token, timeout)
            except (OSError, TimeoutError, asyncio.IncompleteReadError, ProtoError,
                    DigestError) as exc:
                writer.close()
                raise DataTransferError(f"the mirror {address} refused the SASL handshake: "
                                        f"{exc}", first_bad_link=address) from exc
        mirror = cls(address, len(request.targets), reader, writer, timeout)
        try:
            writer.write(dt.encode_op(Op.WRITE_BLOCK, downstream_request(request)))
            async with asyncio.timeout(timeout):
                await writer.drain()
                response = await read_message(reader, BlockOpResponseProto)
        except (OSError, TimeoutError, asyncio.IncompleteReadError, ProtoError) as exc:
            mirror.close()
            raise DataTransferError(f"the mirror {address} did not answer: {exc!r}",
                                    first_bad_link=address) from exc
        if response.status != Status.SUCCESS:
            mirror.close()
            raise DataTransferError(
                f"the mirror {address} refused the block: {response.message}",
                response.status, first_bad_link=response.firstBadLink or address)
        return mirror

    async def forward(self, raw: bytes) -> None:
        """Send a packet on, unless the mirror failed."""
        if self.failed:
            return
        try:
            self.writer.write(raw)
            async with asyncio.timeout(self.timeout):
                await self.writer.drain()
        except (OSError, TimeoutError) as exc:
            self._fail(f"forwarding failed: {exc!r}")

    async def replies(self, seqno: int) -> list[int]:
        """The mirror's replies for packet ``seqno`` (ERROR for each, once it failed)."""
        if not self.failed:
            try:
                async with asyncio.timeout(self.timeout):
                    ack = await read_message(self.reader, PipelineAckProto)
                if ack.seqno != seqno:
                    raise ProtoError(f"its ack is for packet {ack.seqno}, not {seqno}")
                return dt.ack_statuses(ack)
            except (OSError, TimeoutError, asyncio.IncompleteReadError, ProtoError) as exc:
                self._fail(f"no ack: {exc!r}")
        return [Status.ERROR] * self.downstream

    def _fail(self, why: str) -> None:
        log.info("datanode: the mirror %s failed (%s); going on without it", self.address, why)
        self.failed = True
        self.close()

    def close(self) -> None:
        self.writer.close()
