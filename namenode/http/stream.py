"""Bodies too large to hold in memory: request bodies fed to a sink as they arrive
(``BodyStream``), and file answers written to the client (``write_file``).

- ``BodyStream`` frames a body by Content-Length, or decodes chunked transfer encoding
  (``<hex size>[;ext]\\r\\n<data>\\r\\n`` ..., ``0\\r\\n``, trailer fields, an empty line)
  incrementally, whatever the split of the bytes between reads. Its sink has ``write(bytes)``,
  ``finish()`` (the body is complete) and ``abort(reason)``. ``feed`` returns None while the
  body is incomplete, then the bytes after it (the next request on the connection). A framing
  line (size, trailer) over 4096 bytes is a 400; more than ``limit`` body bytes is a 413.
- ``write_file`` sends ``(open binary file, size)`` with sendfile, or in FILE_CHUNK writes
  where the loop has none (uvloop), and closes the file either way.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, BinaryIO

from nnlite.namenode.http.wire import BadRequest, Request, parse_chunk_size, parse_headers

FILE_CHUNK = 256 * 1024   # bytes per write when the loop cannot sendfile


class BodyStream:
    """Feeds a request body to ``sink.write`` as it arrives: by Content-Length, or decoding
    chunked transfer encoding incrementally. ``feed`` returns None while the body is
    incomplete, else the bytes that follow it (the next request)."""

    def __init__(self, sink: Any, request: Request, limit: int) -> None:
        self.sink = sink
        self.request = request
        self.limit = limit
        self.received = 0
        coding = request.headers.get("transfer-encoding")
        if coding is not None and coding.lower() != "chunked":
            raise BadRequest(400, f"Unsupported Transfer-Encoding {coding[:40]!r}")
        self.chunked = coding is not None
        length = request.headers.get("content-length", "0")
        if not self.chunked and not (length.isascii() and length.isdigit()):
            raise BadRequest(400, f"Invalid Content-Length {length[:40]!r}")
        self.remaining = 0 if self.chunked else int(length)
        self.pending = bytearray()   # chunked framing not yet decoded
        self.state = "size"          # size | data | data-crlf | trailer
        self._check(self.remaining)

    def _check(self, more: int) -> None:
        if self.received + more > self.limit:
            raise BadRequest(413, f"Request body exceeds the limit of {self.limit} bytes")

    def feed(self, data: bytes) -> bytes | None:
        if not self.chunked:
            take = data[:self.remaining]
            if take:
                self.sink.write(take)
                self.received += len(take)
                self.remaining -= len(take)
            return data[len(take):] if self.remaining == 0 else None
        self.pending += data
        return self._chunks()

    def _chunks(self) -> bytes | None:
        buf = self.pending
        while True:
            if self.state == "data":
                take = bytes(buf[:self.remaining])
                if take:
                    self.sink.write(take)
                    self.received += len(take)
                    self.remaining -= len(take)
                    del buf[:len(take)]
                if self.remaining:
                    return None
                self.state = "data-crlf"
            end = buf.find(b"\r\n")
            if end < 0:
                if len(buf) > 4096:
                    raise BadRequest(400, "Malformed chunked body")
                return None
            line = bytes(buf[:end])
            del buf[:end + 2]
            if self.state == "data-crlf":
                if line:
                    raise BadRequest(400, "Malformed chunked body: missing CRLF after data")
                self.state = "size"
            elif self.state == "size":
                size = parse_chunk_size(line)
                self._check(size)
                self.remaining = size
                self.state = "data" if size else "trailer"
            elif not line:  # the empty line that ends the trailer
                return bytes(buf)
            else:           # a trailer field, checked as wire.read_chunked checks it
                parse_headers([line.decode("latin-1")], 0)


async def write_file(transport: asyncio.WriteTransport, file: tuple[BinaryIO, int]) -> None:
    """Send ``file``, an (open binary file, size), after its head; the file is closed after."""
    handle, size = file
    try:
        try:
            await asyncio.get_running_loop().sendfile(transport, handle, 0, size)
        except NotImplementedError:     # uvloop's loop has no sendfile
            await _write_chunks(transport, handle, size)
    finally:
        handle.close()


async def _write_chunks(transport: asyncio.WriteTransport, handle: BinaryIO,
                        size: int) -> None:
    """The file in chunks through ``transport.write``, waiting while the client is slow."""
    left = size
    while left > 0:
        chunk = handle.read(min(FILE_CHUNK, left))
        if not chunk:
            raise OSError(f"{handle.name} ended {left} bytes short of {size}")
        transport.write(chunk)
        left -= len(chunk)
        while transport.get_write_buffer_size() > FILE_CHUNK:
            if transport.is_closing():
                raise ConnectionError("the client went away during a file download")
            await asyncio.sleep(0.001)


async def write_pieces(transport: asyncio.WriteTransport, pieces: AsyncIterator[bytes],
                       chunked: bool, writable: Callable[[], Awaitable[None]]) -> None:
    """Send a produced body after its head: each piece as a chunk (or as it is, for a body
    delimited by closing), the next one produced only once the client has taken the last
    (``writable()`` waits while the transport is above its high-water mark), so a client
    that does not read holds one piece, not the whole answer."""
    async for piece in pieces:
        if transport.is_closing():
            raise ConnectionError("the client went away during a streamed answer")
        if piece:
            transport.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
        await writable()
        await asyncio.sleep(0)      # other requests are served between two pieces
    if chunked and not transport.is_closing():
        transport.write(b"0\r\n\r\n")
