"""The data transfer protocol's frames read from an asyncio stream: a varint-delimited
message (``PBHelperClient.vintPrefixed``) and a packet (``PacketReceiver``), each with its
raw bytes where a mirror forwards them. The byte layouts are
``formats/hadoop/datatransfer.py``'s."""

from __future__ import annotations

import asyncio
from typing import Any

from nnlite.formats.hadoop import datatransfer as dt
from nnlite.formats.hadoop.datatransfer import Packet
from nnlite.formats.hadoop.proto import ProtoError, parse, read_varint

MAX_MESSAGE = 1 << 20       # bytes of one delimited message (an op's request, an ack)


async def read_message(reader: asyncio.StreamReader, cls: Any) -> Any:
    """The next varint-delimited ``cls``; ProtoError if it does not parse or is over
    ``MAX_MESSAGE``, IncompleteReadError if the stream ends inside it."""
    prefix = bytearray()
    while not prefix or prefix[-1] & 0x80:
        if len(prefix) == 10:
            raise ProtoError("a varint is longer than 10 bytes")
        prefix += await reader.readexactly(1)
    length, _ = read_varint(prefix)
    if length > MAX_MESSAGE:
        raise ProtoError(f"a {cls.DESCRIPTOR.name} of {length} bytes is over the "
                         f"{MAX_MESSAGE} a message may have")
    return parse(cls, await reader.readexactly(length))


async def read_packet(reader: asyncio.StreamReader, timeout: float) -> tuple[Packet, bytes]:
    """The next packet and its bytes as they came; ProtoError if malformed,
    IncompleteReadError if the stream ends inside it, TimeoutError if it stalls."""
    async with asyncio.timeout(timeout):
        prefix = await reader.readexactly(dt.PACKET_LENGTHS.size)
        payload, header_len = dt.packet_lengths(prefix)
        rest = await reader.readexactly(payload - 4 + header_len)
    return dt.decode_packet(payload, header_len, rest), prefix + rest
