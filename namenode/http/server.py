"""A small HTTP/1.1 server on asyncio, built for many short requests on kept-alive connections.

One ``asyncio.Protocol`` per connection parses requests straight from the receive buffer
(request line, headers, a body by Content-Length or chunked encoding) and calls the
application: ``app(request)`` returns a Response, or an awaitable of one (a mutation waits for
its fsync without blocking the loop). Requests on one connection are answered in order; while
an awaitable runs, reading from that connection pauses.

Limits, each answered with a 4xx and the connection closed: a head over ``max_head`` bytes
(431), a body over ``max_body`` bytes (413), a malformed request line, header, length or chunk
(400). After such an answer the connection half-closes and discards what the client still sends
for up to ``LINGER`` seconds, so a client busy sending a large body reads the answer instead of
a reset. Lenient where HTTP allows it: bare LF line ends, empty lines before a request line,
an absolute-form target (``http://host/path``); HEAD gets the head of the GET answer. A client
that does not read its answers stops being read (flow control), so pipelining cannot grow the
server's buffers without bound.
Graceful stop: close the listener, let in-flight requests finish (up to a grace period),
close idle connections.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from http import HTTPStatus
from urllib.parse import unquote_to_bytes

log = logging.getLogger(__name__)

REASONS = {s.value: s.phrase for s in HTTPStatus}
_STATUS_LINES = {code: f"HTTP/1.1 {code} {reason}\r\n".encode("latin-1")
                 for code, reason in REASONS.items()}
MAX_HEAD = 64 * 1024
MAX_BODY = 1 << 20
FILE_CHUNK = 256 * 1024   # bytes per write when the loop cannot sendfile
LINGER = 2.0          # seconds to drain a refused request's remaining bytes before closing
PIPELINE_LIMIT = 64 * 1024   # bytes read ahead while a request is answered; then reading pauses
QUERY_CACHE = 4096    # parsed query strings kept (parse_query)
QUERY_CACHE_KEY = 512  # longer query strings are parsed every time
_QUERIES: dict[str, dict[str, tuple[str, ...]]] = {}


class BadRequest(Exception):
    """A request that cannot be parsed; ``status`` is what the client gets."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class Request:
    __slots__ = ("method", "target", "path", "query", "headers", "body", "keep_alive", "peer")

    def __init__(self, method, target, path, query, headers, body, keep_alive, peer):
        self.method = method
        self.target = target      # raw request target, as sent
        self.path = path          # percent-decoded path (str), without the query
        self.query = query        # lower-cased name -> tuple of values, in order
        self.headers = headers    # lower-cased name -> value
        self.body = body
        self.keep_alive = keep_alive
        self.peer = peer

    def param(self, name: str, default=None):
        """One query parameter (names are case-insensitive). Repeats must be identical."""
        values = self.query.get(name)
        if not values:
            return default
        if len(values) > 1 and any(v != values[0] for v in values):
            raise BadRequest(400, f'Parameter "{name}" is given more than once with '
                                  f"different values: {list(values)}")
        return values[0]


class Response:
    __slots__ = ("status", "body", "content_type", "headers", "file")

    def __init__(self, status: int = 200, body: bytes = b"",
                 content_type: str | None = "application/json", headers=None, file=None):
        self.status = status
        self.body = body
        self.content_type = content_type
        self.headers = headers or ()
        self.file = file    # (open binary file, size): streamed with sendfile, then closed


def decode_component(raw: str, what: str) -> str:
    """Percent-decode as UTF-8; invalid UTF-8 is a client error, not a server crash. ``raw``
    was decoded from the wire as latin-1, so its code points are the bytes as sent."""
    if raw.isascii():
        if "%" not in raw:
            return raw
    else:
        raw = raw.encode("latin-1")     # raw UTF-8 (or garbage) bytes in the request target
    try:
        return unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest(400, f"{what} is not valid UTF-8 after percent-decoding") from exc


def parse_query(raw: str) -> dict[str, tuple[str, ...]]:
    """Lower-cased name -> its values in order. Clients repeat the same few query strings
    (``op=GETFILESTATUS&user.name=u``), so parses are kept, up to QUERY_CACHE of them, and
    each request gets its own copy of the dict (the value tuples are immutable)."""
    cached = _QUERIES.get(raw)
    if cached is None:
        cached = _parse_query(raw)
        if len(raw) <= QUERY_CACHE_KEY and len(_QUERIES) < QUERY_CACHE:
            _QUERIES[raw] = cached
    return cached.copy()


def _parse_query(raw: str) -> dict[str, tuple[str, ...]]:
    query: dict[str, list[str]] = {}
    plain = raw.isascii() and "%" not in raw and "+" not in raw  # the common case: no decoding
    for item in raw.split("&"):
        if not item:
            continue
        name, _, value = item.partition("=")
        if plain:
            name = name.lower()
        else:
            name = decode_component(name.replace("+", " "), "a parameter name").lower()
            value = decode_component(value.replace("+", " "), f'parameter "{name}"')
        query.setdefault(name, []).append(value)
    return {name: tuple(values) for name, values in query.items()}


def encode_response(response: Response, keep_alive: bool) -> bytes:
    if response.content_type is None and keep_alive and not response.headers \
            and response.file is None and response.status in _STATUS_LINES:
        # the common WebHDFS answer (JSON goes without a Content-Type: see remote.JSON)
        return b"%sContent-Length: %d\r\n\r\n%s" % (
            _STATUS_LINES[response.status], len(response.body), response.body)
    length = response.file[1] if response.file else len(response.body)
    head = [f"HTTP/1.1 {response.status} {REASONS.get(response.status, 'Unknown')}\r\n"
            f"Content-Length: {length}\r\n"]
    if response.content_type:   # None: no Content-Type header (see remote.JSON)
        head.append(f"Content-Type: {response.content_type}\r\n")
    for name, value in response.headers:
        head.append(f"{name}: {value}\r\n")
    if not keep_alive:
        head.append("Connection: close\r\n")
    head.append("\r\n")
    return "".join(head).encode("latin-1") + response.body


class _Connection(asyncio.Protocol):
    def __init__(self, server: "HttpServer"):
        self.server = server
        self.transport = None
        self.buf = bytearray()
        self.busy = False
        self.closing = False
        self.peer = None
        self.stream: BodyStream | None = None
        self.continued = False
        self.lingering = False
        self.write_paused = False
        self.read_paused = False     # paused because a busy connection buffered PIPELINE_LIMIT
        self.eof = False             # the client half-closed while a request was answered
        self.last_active = time.monotonic()

    def connection_made(self, transport) -> None:
        self.transport = transport
        self.peer = transport.get_extra_info("peername")
        self.server.connections.add(self)

    def connection_lost(self, exc) -> None:
        self.server.connections.discard(self)
        self.closing = True
        if self.stream is not None:
            self.server.in_flight -= 1
            self.connection_lost_stream()

    def data_received(self, data: bytes) -> None:
        self.last_active = time.monotonic()
        if self.stream is not None:
            self.feed_stream(data)
            return
        if self.lingering:
            return          # the rest of a refused request: discarded
        self.buf += data
        if not self.busy:
            self.process()
        if self.busy and len(self.buf) > PIPELINE_LIMIT and not self.read_paused:
            # A client pipelining far ahead of its answers: leave the rest in the kernel.
            # (Reading is not paused for every request: a client that waits for its answer
            # sends nothing meanwhile, and each pause and resume is an epoll_ctl call.)
            self.read_paused = True
            self.transport.pause_reading()

    def pause_writing(self) -> None:
        """The client is not reading its answers: stop reading its requests."""
        self.write_paused = True
        self.transport.pause_reading()

    def resume_writing(self) -> None:
        self.write_paused = False
        if not self.busy and not self.closing:
            self.resume_reading()
            self.process()

    def resume_reading(self) -> None:
        self.read_paused = False
        self.transport.resume_reading()

    def connection_lost_stream(self) -> None:
        if self.stream is not None:
            self.stream.sink.abort("the client closed the connection mid-body")
            self.stream = None

    def eof_received(self) -> bool | None:
        """The client half-closed. Mid-way through a streamed body (an image upload), the body
        is cut short: abort the sink and answer 400 before closing. While a request is being
        answered, keep the connection open until the requests that came before the half-close
        are answered (``finished``). Otherwise close."""
        stream = self.stream
        if stream is None:
            if self.busy:
                self.eof = True      # answer what came before the half-close, then close
                return True
            return None
        self.stream = None
        self.server.in_flight -= 1
        stream.sink.abort("the client closed its side mid-body")
        of = "" if stream.chunked else f" of {stream.received + stream.remaining}"
        self.refuse(self.server.error_response(
            400, f"Request body cut short: the client closed its side after {stream.received}"
                 f"{of} bytes"))
        return True

    def start_stream(self, request: Request, factory) -> None:
        """Hand the body of ``request`` to a sink as it arrives (large uploads)."""
        try:
            sink = factory(request)
        except Exception as exc:
            sink = self.server.error_for(exc)
        if isinstance(sink, Response):  # refused before the body: answer and close
            self.refuse(sink)
            return
        try:
            self.stream = BodyStream(sink, request, self.server.max_stream)
        except BadRequest as exc:
            sink.abort(str(exc))
            raise
        self.server.in_flight += 1
        self.busy = True
        self.expect_continue(request.headers)
        rest, self.buf = bytes(self.buf), bytearray()
        self.feed_stream(rest)

    def feed_stream(self, data: bytes) -> None:
        stream = self.stream
        try:
            leftover = stream.feed(data)
        except BadRequest as exc:
            self.stream = None
            self.server.in_flight -= 1
            stream.sink.abort(str(exc))
            self.fail(exc)
            return
        except Exception as exc:
            self.stream = None
            self.server.in_flight -= 1
            stream.sink.abort(str(exc))
            self.refuse(self.server.error_for(exc))
            return
        if leftover is None:
            return
        self.stream = None
        self.buf += leftover
        self.busy = False
        self.server.in_flight -= 1
        self.dispatch(stream.request, stream.sink.finish)

    def process(self) -> None:
        """Answer every complete request in the buffer, in order."""
        while self.buf and not self.busy and not self.closing and not self.write_paused:
            try:
                request = self.parse()
            except BadRequest as exc:
                self.fail(exc)
                return
            except Exception as exc:   # a parser bug must not cost more than this connection
                log.error("cannot parse a request", exc_info=exc)
                self.fail(BadRequest(400, "Malformed request"))
                return
            if request is None:
                return
            self.dispatch(request, self.server.app, request)

    def dispatch(self, request: Request, fn, *args) -> None:
        self.server.in_flight += 1
        try:
            result = fn(*args)
        except Exception as exc:
            result = self.server.error_for(exc)
        if isinstance(result, Response):
            self.server.in_flight -= 1
            self.respond(result, request.keep_alive, request.method == "HEAD")
        else:
            self.busy = True
            task = asyncio.ensure_future(result)    # a future (a durable write) stays itself
            task.add_done_callback(lambda t, r=request: self.finished(t, r))

    def finished(self, task: asyncio.Future, request: Request) -> None:
        self.server.in_flight -= 1
        self.busy = False
        if task.cancelled():
            self.close()
            return
        error = task.exception()
        response = self.server.error_for(error) if error else task.result()
        self.respond(response, request.keep_alive, request.method == "HEAD")
        if not self.closing and not self.write_paused:
            if self.read_paused:
                self.resume_reading()
            self.process()
            if self.eof and not self.busy:
                self.close()

    def respond(self, response: Response, keep_alive: bool, head_only: bool = False) -> None:
        keep_alive = keep_alive and not self.server.stopping
        if response.file is not None:
            if not head_only:
                self.send_file(response, keep_alive)
                return
            response.file[0].close()
        if not self.closing:
            data = encode_response(response, keep_alive)
            if head_only and response.body:
                data = data[:-len(response.body)]
            self.transport.write(data)
        if not keep_alive:
            self.close()

    def send_file(self, response: Response, keep_alive: bool) -> None:
        """Write the head, then stream the file with sendfile; the connection is busy
        (reading paused) until the file is sent."""
        self.busy = True
        self.transport.pause_reading()
        self.transport.write(encode_response(response, keep_alive))
        task = asyncio.ensure_future(self._send_file(response.file))
        task.add_done_callback(lambda t: self._file_sent(t, keep_alive))

    async def _send_file(self, file) -> None:
        handle, size = file
        try:
            try:
                await asyncio.get_running_loop().sendfile(self.transport, handle, 0, size)
            except NotImplementedError:     # uvloop's loop has no sendfile
                await self._write_file(handle, size)
        finally:
            handle.close()

    async def _write_file(self, handle, size: int) -> None:
        """The file in chunks through ``transport.write``, waiting while the client is slow."""
        left = size
        while left > 0:
            chunk = handle.read(min(FILE_CHUNK, left))
            if not chunk:
                raise OSError(f"{handle.name} ended {left} bytes short of {size}")
            self.transport.write(chunk)
            left -= len(chunk)
            while self.transport.get_write_buffer_size() > FILE_CHUNK:
                if self.transport.is_closing():
                    raise ConnectionError("the client went away during a file download")
                await asyncio.sleep(0.001)

    def _file_sent(self, task: asyncio.Future, keep_alive: bool) -> None:
        self.busy = False
        if task.cancelled() or task.exception() is not None or not keep_alive:
            if not task.cancelled() and task.exception() is not None:
                log.warning("sending a file failed: %r", task.exception())
            self.close()
            return
        if not self.closing and not self.write_paused:
            self.resume_reading()
            self.process()

    def fail(self, exc: BadRequest) -> None:
        """Answer a request that cannot be parsed, then stop reading requests."""
        self.refuse(self.server.error_response(exc.status, str(exc)))

    def refuse(self, response: Response) -> None:
        """Send ``response`` as the last answer, half-close, and drain what the client still
        sends for up to LINGER seconds before closing: closing at once with unread bytes
        would make the kernel reset the connection, and a client still busy sending its body
        could lose the answer."""
        transport = self.transport
        if self.closing or transport is None or transport.is_closing():
            self.close()
            return
        transport.write(encode_response(response, False))
        if not transport.can_write_eof():
            self.close()
            return
        self.closing = self.lingering = True
        self.buf = bytearray()
        transport.write_eof()
        transport.resume_reading()
        asyncio.get_running_loop().call_later(LINGER, self.close)

    def close(self) -> None:
        self.closing = True
        self.lingering = False
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    # ------------------------------------------------------------------ parsing

    def parse(self) -> Request | None:
        buf = self.buf
        if buf[0] in b"\r\n":        # empty lines before a request line are ignored
            del buf[:len(buf) - len(buf.lstrip(b"\r\n"))]
            if not buf:
                return None
        end = buf.find(b"\r\n\r\n")
        lf_end = buf.find(b"\n\n", 0, end if end >= 0 else len(buf))
        bare_lf = lf_end >= 0           # bare LF line ends (RFC 9112 2.2 allows them)
        if bare_lf:
            end = lf_end
        elif end < 0:
            if len(buf) > self.server.max_head:
                raise BadRequest(431, "Request header fields too large")
            return None
        if end > self.server.max_head:
            raise BadRequest(431, "Request header fields too large")
        head = buf[:end].decode("latin-1")      # never fails: every byte is a code point
        if bare_lf:
            body_start = end + 2
            lines = head.replace("\r", "").split("\n")
        else:
            body_start = end + 4
            lines = head.split("\r\n")
        method, target, version = _request_line(lines[0])
        if target[0] != "/":
            target = _origin_form(target)
        headers = _headers(lines) if len(lines) > 1 else {}
        self.continued = False
        raw_path, _, raw_query = target.partition("?")
        if ("transfer-encoding" in headers or headers.get("content-length", "0") != "0") \
                and self.server.streams:
            factory = self.server.streams.get(
                (method, raw_path.split("/", 2)[1] if raw_path.count("/") else raw_path))
            if factory is not None:
                del buf[:body_start]
                self.start_stream(self.request(method, target, version, headers, b""), factory)
                return None
        if "transfer-encoding" not in headers and "content-length" not in headers:
            body = b""                  # no body: the common GET
            del buf[:body_start]
        else:
            body, consumed = self.body(headers, body_start)
            if body is None:
                return None
            del buf[:consumed]
            body = bytes(body)
        return Request(method, target, decode_component(raw_path, "the path"),
                       parse_query(raw_query), headers, body, _keep_alive(version, headers),
                       self.peer)

    def request(self, method, target, version, headers, body) -> Request:
        raw_path, _, raw_query = target.partition("?")
        path = decode_component(raw_path, "the path")
        return Request(method, target, path, parse_query(raw_query), headers, body,
                       _keep_alive(version, headers), self.peer)

    def body(self, headers: dict, start: int):
        """(body, bytes consumed including the head), or (None, 0) when incomplete."""
        buf = self.buf
        coding = headers.get("transfer-encoding")
        if coding is not None:
            if coding.lower() != "chunked":
                raise BadRequest(400, f"Unsupported Transfer-Encoding {coding[:40]!r}")
            return self.chunked(start)
        length = headers.get("content-length")
        if length is None:
            return b"", start
        if not (length.isascii() and length.isdigit()):
            raise BadRequest(400, f"Invalid Content-Length {length[:40]!r}")
        size = int(length)
        if size > self.server.max_body:
            raise BadRequest(413, f"Request body of {size} bytes exceeds the limit of "
                                  f"{self.server.max_body}")
        if len(buf) - start < size:
            self.expect_continue(headers)
            return None, 0
        return buf[start:start + size], start + size

    def chunked(self, pos: int):
        buf = self.buf
        out = bytearray()
        while True:
            line_end = buf.find(b"\r\n", pos)
            if line_end < 0:
                return None, 0
            size = _chunk_size(bytes(buf[pos:line_end]))
            if len(out) + size > self.server.max_body:
                raise BadRequest(413, f"Chunked body exceeds the limit of "
                                      f"{self.server.max_body} bytes")
            pos = line_end + 2
            if size == 0:
                trailer_end = buf.find(b"\r\n", pos)
                if trailer_end < 0:
                    return None, 0
                while trailer_end != pos:  # skip trailer fields up to the empty line
                    pos = trailer_end + 2
                    trailer_end = buf.find(b"\r\n", pos)
                    if trailer_end < 0:
                        return None, 0
                return out, pos + 2
            if len(buf) < pos + size + 2:
                return None, 0
            if buf[pos + size:pos + size + 2] != b"\r\n":
                raise BadRequest(400, "Malformed chunked body: missing CRLF after chunk data")
            out += buf[pos:pos + size]
            pos += size + 2

    def expect_continue(self, headers: dict) -> None:
        if headers.get("expect", "").lower() == "100-continue" and not self.continued:
            self.continued = True
            self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")


def _request_line(line: str) -> tuple[str, str, str]:
    parts = line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1.") or not parts[1]:
        raise BadRequest(400, f"Malformed request line {line[:100]!r}")
    return parts[0], parts[1], parts[2]


def _origin_form(target: str) -> str:
    """``http://host:port/path?query`` -> ``/path?query`` (RFC 9112 3.2.2)."""
    scheme, sep, rest = target.partition("://")
    if not sep or scheme.lower() not in ("http", "https"):
        raise BadRequest(400, f"Malformed request target {target[:100]!r}")
    slash = rest.find("/")
    query = rest.find("?")
    if slash < 0 or 0 <= query < slash:
        return "/" + rest[query:] if query >= 0 else "/"
    return rest[slash:]


def _chunk_size(line: bytes) -> int:
    """The hex size of a chunk-size line (extensions after ';' ignored); strictly hex digits,
    so no sign, no '0x', no '_' (what Python's int() would let through)."""
    text = line.split(b";", 1)[0].strip(b" \t")
    if not text or len(text) > 16 or text.strip(b"0123456789abcdefABCDEF"):
        raise BadRequest(400, f"Malformed chunk size {line[:20]!r}")
    return int(text, 16)


def _headers(lines: list[str]) -> dict[str, str]:
    """The header fields of ``lines[1:]`` (``lines[0]`` is the request line). Lower-cased
    names; a repeated field joins its values with ", " (RFC 9110 5.3), except Content-Length,
    which must then repeat the same value."""
    headers = {}
    for line in itertools.islice(lines, 1, None):
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise BadRequest(400, f"Malformed header line {line[:100]!r}")
        name, value = name.lower(), value.strip()
        if name in headers:
            if name == "content-length" and headers[name] != value:
                raise BadRequest(400, "Conflicting Content-Length fields")
            if name != "content-length":
                headers[name] += ", " + value
            continue
        headers[name] = value
    return headers


def _keep_alive(version: str, headers: dict) -> bool:
    connection = headers.get("connection", "").lower()
    if version == "HTTP/1.0":
        return connection == "keep-alive"
    return connection != "close"


class BodyStream:
    """Feeds a request body to ``sink.write`` as it arrives: by Content-Length, or decoding
    chunked transfer encoding incrementally. ``feed`` returns None while the body is
    incomplete, else the bytes that follow it (the next request)."""

    def __init__(self, sink, request: Request, limit: int):
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

    def feed(self, data: bytes):
        if not self.chunked:
            take = data[:self.remaining]
            if take:
                self.sink.write(take)
                self.received += len(take)
                self.remaining -= len(take)
            return data[len(take):] if self.remaining == 0 else None
        self.pending += data
        return self._chunks()

    def _chunks(self):
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
                size = _chunk_size(line)
                self._check(size)
                self.remaining = size
                self.state = "data" if size else "trailer"
            elif not line:  # the empty line that ends the trailer
                return bytes(buf)


class HttpServer:
    """Serves ``app`` on host:port. ``error_response(status, message)`` formats parse errors."""

    def __init__(self, app, error_response, *, max_head: int = MAX_HEAD,
                 max_body: int = MAX_BODY, error_for=None, max_stream: int = 1 << 40,
                 idle_timeout: float = 60.0):
        self.app = app
        self.idle_timeout = idle_timeout
        self._reaper: asyncio.Task | None = None
        self.error_response = error_response
        # (method, first path segment) -> factory(request) -> sink, for streamed bodies
        self.streams: dict[tuple[str, str], object] = {}
        self.max_stream = max_stream
        self._error_for = error_for
        self.max_head = max_head
        self.max_body = max_body
        self.connections: set[_Connection] = set()
        self.in_flight = 0
        self.stopping = False
        self._server: asyncio.AbstractServer | None = None

    def error_for(self, exc: BaseException) -> Response:
        """The response for an exception a handler let escape (never a traceback)."""
        if self._error_for is not None:
            return self._error_for(exc)
        log.error("unhandled error in a request handler", exc_info=exc)
        return self.error_response(500, f"Internal error ({type(exc).__name__})")

    async def start(self, host: str, port: int) -> int:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Connection(self), host, port,
                                                reuse_address=True, backlog=1024)
        self._reaper = asyncio.ensure_future(self._reap_idle())
        return self._server.sockets[0].getsockname()[1]

    async def _reap_idle(self) -> None:
        """Close connections that sent nothing for ``idle_timeout`` seconds while not being
        answered (as Jetty's idle timeout does): a stalled client cannot hold a socket."""
        while True:
            await asyncio.sleep(min(5.0, self.idle_timeout / 2))
            cutoff = time.monotonic() - self.idle_timeout
            for conn in list(self.connections):
                if not conn.busy and conn.last_active < cutoff:
                    conn.close()

    async def stop(self, grace: float = 10.0) -> None:
        """Stop accepting, let in-flight requests finish, close every connection."""
        self.stopping = True
        if self._reaper is not None:
            self._reaper.cancel()
        if self._server is not None:
            self._server.close()
        deadline = asyncio.get_running_loop().time() + grace
        while self.in_flight and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)
        for conn in list(self.connections):
            conn.close()
        if self._server is not None:
            await self._server.wait_closed()
