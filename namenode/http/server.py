"""A small HTTP/1.1 server on asyncio, built for many short requests on kept-alive connections.

One ``asyncio.Protocol`` per connection parses requests straight from the receive buffer
(request line, headers, a body by Content-Length or chunked encoding; the pieces are in
wire.py, streamed bodies and file answers in stream.py) and calls the application:
``app(request)`` returns a Response; or a deferred one, which has ``then(callback, arg)`` and
calls ``callback(response, error, arg)`` exactly once on the loop (a durable write: the
committer's ``Durable``, released when its ops are synced, with no future per request); or an
awaitable of one. Nothing blocks the loop meanwhile. Requests on one connection are answered in
order.

Limits, each answered with a 4xx and the connection closed: a head over ``max_head`` bytes
(431), a body over ``max_body`` bytes (413), a malformed request line, header, length or chunk
(400), a request not complete ``request_timeout`` seconds after its first byte (408; a
streamed body instead must keep up ``min_body_rate`` bytes a second on average after that),
and -- with 503 -- a partial request that would take the bytes held for unfinished requests
across all connections past ``body_budget``. After such an answer the connection half-closes
and discards what the client still sends for up to ``LINGER`` seconds, so a client busy sending
a large body reads the answer instead of a reset. Lenient where HTTP allows it: bare LF line
ends (in every line of a head, or none), empty lines before a request line, an absolute-form
target (``http://host/path``); HEAD gets the head of the GET answer. A client that does not
read its answers, or pipelines more than PIPELINE_LIMIT bytes ahead of them, stops being read
(flow control). Graceful stop: close the listener, let in-flight requests
finish (up to a grace period), close idle connections.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from ssl import SSLContext
from typing import Any, cast

from nnlite.namenode.http.stream import BodyStream, write_file, write_pieces

# BadRequest, Request and Response are this module's API (handlers import them from here)
from nnlite.namenode.http.wire import (
    BadRequest,
    Request,
    Response,
    check_framing,
    decode_component,
    encode_response,
    find_head,
    keeps_alive,
    origin_form,
    parse_header_block,
    parse_headers,
    parse_query,
    parse_request_line,
    read_body,
)
from nnlite.namenode.listen import address_error

log = logging.getLogger(__name__)

MAX_HEAD = 64 * 1024
MAX_BODY = 1 << 20
LINGER = 2.0          # seconds to drain a refused request's remaining bytes before closing
PIPELINE_LIMIT = 64 * 1024   # bytes read ahead while a request is answered; then reading pauses
BUDGET_FREE = 64 * 1024      # a connection may hold this much of a request without the budget
TURN_REQUESTS = 16    # requests one connection answers in a row before the others get a turn


class _Connection(asyncio.Protocol):
    # Set by connection_made, the first call asyncio makes: nothing reaches a connection before.
    transport: asyncio.Transport

    def __init__(self, server: HttpServer, scheme: str = "http") -> None:
        self.server = server
        self.scheme = scheme         # "https" on a TLS listener: the request's own scheme
        self.buf = bytearray()
        self.busy = False
        self.closing = False
        self.peer: Any = None       # (host, port) once connected, as the transport says
        self.stream: BodyStream | None = None
        self.continued = False
        self.lingering = False
        self.write_paused = False
        self.drained: asyncio.Future | None = None   # resolved when writing may go on
        self.read_paused = False     # paused because a busy connection buffered PIPELINE_LIMIT
        self.eof = False             # the client half-closed while a request was answered
        self.deferred = False        # yielded its turn with requests left (TURN_REQUESTS)
        self.last_active = time.monotonic()
        self.started = 0.0           # when the first byte of the request being read came
        self.counted = 0             # bytes of self.buf counted in server.buffered

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream server's transport (create_server): it reads and writes.
        self.transport = cast(asyncio.Transport, transport)
        self.peer = transport.get_extra_info("peername")
        self.server.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.connections.discard(self)
        self.closing = True
        self.server.buffered -= self.counted
        self.counted = 0
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)
        if self.stream is not None:
            self.server.in_flight -= 1
            self.connection_lost_stream()

    def data_received(self, data: bytes) -> None:
        self.last_active = time.monotonic()
        if self.stream is not None:
            self.feed_stream(self.stream, data)
            return
        if self.lingering:
            return          # the rest of a refused request: discarded
        if not self.buf:
            self.started = self.last_active
        elif len(self.buf) + len(data) > BUDGET_FREE and \
                self.server.buffered + len(data) > self.server.body_budget:
            self.refuse(self.server.error_response(
                503, f"The namenode already holds {self.server.buffered} bytes of unfinished "
                     f"requests (nnlite.http.body-budget is {self.server.body_budget}): "
                     f"retry later"))
            self.count()
            return
        self.buf += data
        if not self.busy and not self.deferred:
            self.process()
        self.count()
        if (self.busy or self.deferred) and len(self.buf) > PIPELINE_LIMIT \
                and not self.read_paused:
            # A client pipelining far ahead of its answers: leave the rest in the kernel.
            # (Reading is not paused for every request: a client that waits for its answer
            # sends nothing meanwhile, and each pause and resume is an epoll_ctl call.)
            self.read_paused = True
            self.transport.pause_reading()

    def count(self) -> None:
        """Bring this connection's share of ``server.buffered`` up to date."""
        held = len(self.buf) if not self.lingering else 0
        self.server.buffered += held - self.counted
        self.counted = held

    def overdue(self, now: float) -> bool:
        """A request being read past its deadline: its head and buffered body within
        ``request_timeout`` of its first byte, a streamed body at ``min_body_rate``."""
        server = self.server
        if self.stream is not None:
            elapsed = now - self.started
            return elapsed > server.request_timeout and \
                self.stream.received < server.min_body_rate * elapsed
        return bool(self.buf) and not self.busy and not self.deferred and \
            now - self.started > server.request_timeout

    def pause_writing(self) -> None:
        """The client is not reading its answers: stop reading its requests."""
        self.write_paused = True
        self.transport.pause_reading()

    def resume_writing(self) -> None:
        self.write_paused = False
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)
        if not self.busy and not self.closing:
            self.resume_reading()
            if not self.deferred:        # else its turn comes (take_turn)
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
            if self.busy or self.deferred:
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

    def start_stream(self, request: Request, factory: Callable[[Request], Any]) -> None:
        """Hand the body of ``request`` to a sink as it arrives (large uploads)."""
        try:
            sink = factory(request)
        except Exception as exc:
            sink = self.server.error_for(exc)
        if isinstance(sink, Response):  # refused before the body: answer and close
            self.refuse(sink)
            return
        try:
            stream = self.stream = BodyStream(sink, request, self.server.max_stream)
        except BadRequest as exc:
            sink.abort(str(exc))
            raise
        self.server.in_flight += 1
        self.busy = True
        self.expect_continue(request.headers)
        rest, self.buf = bytes(self.buf), bytearray()
        self.feed_stream(stream, rest)

    def feed_stream(self, stream: BodyStream, data: bytes) -> None:
        """``data`` into ``stream``, the body being read (``self.stream``)."""
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
        """Answer the complete requests in the buffer, in order: TURN_REQUESTS in a row at
        most, then the rest in a later turn of the loop (``take_turn``), so that a client
        pipelining many requests, cheap or not, cannot keep every other connection waiting."""
        answered = 0
        while self.buf and not self.busy and not self.closing and not self.write_paused:
            if answered == TURN_REQUESTS:
                self.deferred = True
                asyncio.get_running_loop().call_soon(self.take_turn)
                return
            answered += 1
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

    def dispatch(self, request: Request, fn: Callable[..., Any], *args: Any) -> None:
        self.server.in_flight += 1
        try:
            result = fn(*args)
        except Exception as exc:
            result = self.server.error_for(exc)
        if isinstance(result, Response):
            self.server.in_flight -= 1
            self.respond(result, request.keep_alive, request.method == "HEAD")
        elif hasattr(result, "then"):   # deferred: a durable write, answered once synced
            self.busy = True
            result.then(self.released, request)
        else:
            self.busy = True
            task = asyncio.ensure_future(result)
            task.add_done_callback(lambda t, r=request: self.finished(t, r))

    def finished(self, task: asyncio.Future, request: Request) -> None:
        if task.cancelled():
            self.server.in_flight -= 1
            self.busy = False
            self.close()
            return
        error = task.exception()
        self.released(None if error else task.result(), error, request)

    def released(self, response: Response | None, error: BaseException | None,
                 request: Request) -> None:
        self.server.in_flight -= 1
        self.busy = False
        if error is not None:
            response = self.server.error_for(error)
        elif response is None:      # a handler that answered nothing: a bug, answered as one
            response = self.server.error_for(
                RuntimeError(f"{request.method} {request.target}: the handler gave no answer"))
        self.respond(response, request.keep_alive, request.method == "HEAD")
        self.carry_on()

    def take_turn(self) -> None:
        self.deferred = False
        self.carry_on()

    def carry_on(self) -> None:
        """Go on with the requests buffered behind an answer, or a yielded turn."""
        if not self.closing and not self.write_paused and not self.deferred:
            if self.read_paused:
                self.resume_reading()
            self.process()
            if self.eof and not self.busy and not self.deferred:
                self.close()
        self.started = time.monotonic()     # what is left in the buffer starts its clock now
        self.count()

    def respond(self, response: Response, keep_alive: bool, head_only: bool = False) -> None:
        keep_alive = keep_alive and not self.server.stopping
        if response.pieces is not None:
            if not head_only:
                self.send_pieces(response, keep_alive)
                return
            response.body = b""
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
        task = asyncio.ensure_future(write_file(self.transport, response.file))
        task.add_done_callback(lambda t: self._file_sent(t, keep_alive))

    def send_pieces(self, response: Response, keep_alive: bool) -> None:
        """Write the head, then the body as it is produced; the connection is busy (reading
        paused) until it is sent. A failure mid-body closes the connection: the client sees
        the body cut short, never a second answer."""
        self.busy = True
        self.transport.pause_reading()
        self.transport.write(encode_response(response, keep_alive))
        task = asyncio.ensure_future(write_pieces(self.transport, response.pieces, keep_alive,
                                                  self.writable))
        task.add_done_callback(lambda t: self._file_sent(t, keep_alive))

    async def writable(self) -> None:
        """Return once the transport is below its high-water mark (at once if it is)."""
        if self.write_paused and not self.closing:
            self.drained = asyncio.get_running_loop().create_future()
            await self.drained

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
        end, body_start, bare_lf = find_head(buf)    # bare LF line ends: RFC 9112 2.2
        if end < 0:
            if len(buf) > self.server.max_head:
                raise BadRequest(431, "Request header fields too large")
            return None
        if end > self.server.max_head:
            raise BadRequest(431, "Request header fields too large")
        head = buf[:end].decode("latin-1")      # never fails: every byte is a code point
        if bare_lf:
            lines = head.split("\n")
            request_line = lines[0]
            headers = parse_headers(lines)
        else:
            request_line, _, fields = head.partition("\r\n")
            headers = parse_header_block(fields)
        method, target, version = parse_request_line(request_line)
        if "transfer-encoding" in headers:
            check_framing(version, headers)
        if target[0] != "/":
            target = origin_form(target)
        self.continued = False
        raw_path, _, raw_query = target.partition("?")
        if ("transfer-encoding" in headers or headers.get("content-length", "0") != "0") \
                and self.server.streams:
            factory = self.server.streams.get(
                (method, raw_path.split("/", 2)[1] if raw_path.count("/") else raw_path))
            if factory is not None:
                del buf[:body_start]
                self.start_stream(Request(method, target, decode_component(raw_path, "the path"),
                                          parse_query(raw_query), headers, b"",
                                          keeps_alive(version, headers), self.peer,
                                          self.scheme), factory)
                return None
        if "transfer-encoding" not in headers and headers.get("content-length", "0") == "0":
            body: bytes | bytearray | None = b""    # no body: the common GET, a PUT of 0
            del buf[:body_start]
        else:
            body, consumed = read_body(buf, headers, body_start, self.server.max_body)
            if body is None:
                if "transfer-encoding" not in headers:    # a chunked body is not invited
                    self.expect_continue(headers)
                return None
            del buf[:consumed]
            body = bytes(body)
        return Request(method, target, decode_component(raw_path, "the path"),
                       parse_query(raw_query), headers, body, keeps_alive(version, headers),
                       self.peer, self.scheme)

    def expect_continue(self, headers: dict) -> None:
        if headers.get("expect", "").lower() == "100-continue" and not self.continued:
            self.continued = True
            self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")


class HttpServer:
    """Serves ``app`` on host:port. ``error_response(status, message)`` formats parse errors."""

    def __init__(self, app: Callable[[Request], Any],
                 error_response: Callable[[int, str], Response], *, max_head: int = MAX_HEAD,
                 max_body: int = MAX_BODY,
                 error_for: Callable[[Any], Response] | None = None,
                 max_stream: int = 1 << 40, idle_timeout: float = 60.0,
                 body_budget: int = 256 << 20, request_timeout: float = 60.0,
                 min_body_rate: float = 1024.0) -> None:
        self.app = app
        self.idle_timeout = idle_timeout
        self.body_budget = body_budget
        self.request_timeout = request_timeout
        self.min_body_rate = min_body_rate
        self.buffered = 0            # bytes of unfinished requests held, all connections
        self._reaper: asyncio.Task | None = None
        self.error_response = error_response
        # (method, first path segment) -> factory(request) -> sink, for streamed bodies
        self.streams: dict[tuple[str, str], Callable[[Request], Any]] = {}
        self.max_stream = max_stream
        self._error_for = error_for
        self.max_head = max_head
        self.max_body = max_body
        self.connections: set[_Connection] = set()
        self.in_flight = 0
        self.stopping = False
        self._servers: list[asyncio.AbstractServer] = []   # one per listener (HTTP, HTTPS)

    def error_for(self, exc: BaseException) -> Response:
        """The response for an exception a handler let escape (never a traceback)."""
        if self._error_for is not None:
            return self._error_for(exc)
        log.error("unhandled error in a request handler", exc_info=exc)
        return self.error_response(500, f"Internal error ({type(exc).__name__})")

    async def start(self, host: str, port: int, ssl: SSLContext | None = None) -> int:
        """Listen on host:port (TLS with ``ssl``: HTTPS, as ``dfs.http.policy`` asks) and
        return the bound port. Called once per listener; all serve the same app."""
        loop = asyncio.get_running_loop()
        scheme = "http" if ssl is None else "https"
        try:
            server = await loop.create_server(lambda: _Connection(self, scheme), host, port,
                                              reuse_address=True, backlog=1024, ssl=ssl)
        except OSError as exc:
            raise address_error(host, port, exc) from exc
        self._servers.append(server)
        if self._reaper is None:
            self._reaper = asyncio.ensure_future(self._reap_idle())
        # through Any: uvloop's ``sockets`` is a list where typeshed says tuple, and a
        # compiled build (bench/bench_mypyc.py) checks the declared type at run time
        return cast(Any, server).sockets[0].getsockname()[1]

    async def _reap_idle(self) -> None:
        """Close connections that sent nothing for ``idle_timeout`` seconds while not being
        answered (as Jetty's idle timeout does), and answer 408 to requests past their
        deadline (``_Connection.overdue``): a stalled or trickling client cannot hold a
        socket, or memory, for long."""
        while True:
            await asyncio.sleep(min(5.0, self.idle_timeout / 2, self.request_timeout / 4))
            now = time.monotonic()
            cutoff = now - self.idle_timeout
            for conn in list(self.connections):
                if conn.closing:
                    continue
                if conn.overdue(now):
                    if conn.stream is not None:
                        conn.stream.sink.abort("the request body came too slowly")
                        conn.stream = None
                        self.in_flight -= 1
                    conn.refuse(self.error_response(
                        408, f"The request was not complete within {self.request_timeout:g} "
                             f"seconds (nnlite.http.request-timeout)"))
                    conn.count()
                elif not conn.busy and conn.last_active < cutoff:
                    conn.close()

    async def stop(self, grace: float = 10.0) -> None:
        """Stop accepting, let in-flight requests finish, close every connection."""
        self.stopping = True
        if self._reaper is not None:
            self._reaper.cancel()
        for server in self._servers:
            server.close()
        deadline = asyncio.get_running_loop().time() + grace
        while self.in_flight and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)
        for conn in list(self.connections):
            conn.close()
        for server in self._servers:
            await server.wait_closed()

