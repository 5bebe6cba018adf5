"""HTTP/1.1 messages on the wire: the Request parsed from bytes and the Response encoded to them.

Functions of the bytes the connection (server.py) has read, which it then consumes; no I/O.
Invariants they rely on:
- A head is decoded as latin-1, so each code point of a target or header is the byte as
  sent; ``decode_component`` turns percent-escapes and raw non-ASCII back into UTF-8 (invalid
  UTF-8 is a 400, never a crash).
- The lines of a head end all in CRLF, or all in a bare LF (RFC 9112 2.2 allows both); a head
  mixing them, or a line holding a CR, LF or NUL otherwise, is refused, so that no line end
  hides a field from this parser that another one would see (request smuggling).
- Header names are lower-cased; a repeated field joins its values with ", " except
  Content-Length, which must repeat the same value. Lengths and chunk sizes are strict digits
  (no sign, ``0x``, ``_`` or space, which ``int()`` would let through). A request framed both
  by Content-Length and Transfer-Encoding, or chunked on HTTP/1.0, is refused (RFC 9112 6.1,
  6.3).
- A chunked body is ``<hex size>[;ext]\\r\\n<data>\\r\\n`` repeated, then ``0\\r\\n``,
  trailer fields and an empty line; ``read_chunked`` needs all of it in the buffer and checks
  each trailer line as a header line.
- Parsed query strings are cached (at most QUERY_CACHE of at most QUERY_CACHE_KEY characters);
  each request gets its own copy of the dict, whose value tuples are immutable. Header blocks
  (the field lines of a CRLF head) are cached the same way (HEAD_CACHE, HEAD_CACHE_KEY).
- The common answer (keep-alive, no Content-Type, no other header, a known status) is the
  status line, ``Content-Length: n`` and the body; anything else is built field by field.
"""

from __future__ import annotations

import itertools
from http import HTTPStatus
from typing import Any
from urllib.parse import unquote_to_bytes

REASONS = {s.value: s.phrase for s in HTTPStatus}
_STATUS_LINES = {code: f"HTTP/1.1 {code} {reason}\r\n".encode("latin-1")
                 for code, reason in REASONS.items()}
# How long a client may keep an idle connection (RFC 7230's Keep-Alive header, which Java's
# KeepAliveCache reads; it keeps one 5 s otherwise). Java checks a cached connection before
# reusing it only for a streaming POST (HttpClient.New), so a CREATE's data step, a streaming
# PUT, sent on a connection whose namenode was killed and restarted on the same port within
# the 5 s fails with "Unexpected end of file from server", a step Hadoop never retries; an
# HA set with a fast takeover does exactly that. No namenode restarts within a second.
# Java reads Keep-Alive only beside "Connection: keep-alive" (HttpClient.parseHTTPHeader).
KEEP_ALIVE = b"Connection: keep-alive\r\nKeep-Alive: timeout=1\r\n"
QUERY_CACHE = 4096    # parsed query strings kept (parse_query)
QUERY_CACHE_KEY = 512  # longer query strings are parsed every time
_QUERIES: dict[str, dict[str, tuple[str, ...]]] = {}
HEAD_CACHE = 1024     # parsed header blocks kept (parse_header_block)
HEAD_CACHE_KEY = 512  # longer blocks are parsed every time
_HEADS: dict[str, dict[str, str]] = {}


class BadRequest(Exception):
    """A request that cannot be parsed; ``status`` is what the client gets."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class Request:
    __slots__ = ("method", "target", "path", "query", "headers", "body", "keep_alive", "peer",
                 "scheme", "proof")

    def __init__(self, method: str, target: str, path: str, query: dict[str, Any],
                 headers: dict[str, str], body: Any, keep_alive: bool, peer: Any,
                 scheme: str = "http") -> None:
        self.method = method
        self.target = target      # raw request target, as sent
        self.path = path          # percent-decoded path (str), without the query
        self.query = query        # lower-cased name -> tuple of values, in order
        self.headers = headers    # lower-cased name -> value
        self.body = body
        self.keep_alive = keep_alive
        self.peer = peer
        self.scheme = scheme      # "https" when it came over TLS (dfs.http.policy)
        self.proof: Any = None    # secure mode: what it proved (http/authentication.py)

    def param(self, name: str, default: Any = None) -> Any:
        """One query parameter (names are case-insensitive). Repeats must be identical."""
        values = self.query.get(name)
        if not values:
            return default
        if len(values) > 1 and any(v != values[0] for v in values):
            raise BadRequest(400, f'Parameter "{name}" is given more than once with '
                                  f"different values: {list(values)}")
        return values[0]


class Response:
    __slots__ = ("status", "body", "content_type", "headers", "file", "pieces", "reason")

    def __init__(self, status: int = 200, body: bytes = b"",
                 content_type: str | None = "application/json", headers: Any = None,
                 file: Any = None, pieces: Any = None, reason: str | None = None) -> None:
        self.status = status
        self.body = body
        self.content_type = content_type
        self.headers = headers or ()
        self.file = file    # (open binary file, size): streamed with sendfile, then closed
        # an async iterator of bytes: the body, produced while it is sent (chunked, or
        # delimited by closing the connection when it is not kept alive)
        self.pieces = pieces
        # the status line's reason phrase, when not the status's own (Jetty's setStatus(code,
        # reason): AuthenticationFilter's "Authentication required", which Hadoop's
        # WebHdfsFileSystem makes the message of its AccessControlException)
        self.reason = reason


def decode_component(raw: str, what: str) -> str:
    """Percent-decode as UTF-8; invalid UTF-8 is a client error, not a server crash. ``raw``
    was decoded from the wire as latin-1, so its code points are the bytes as sent."""
    wire: str | bytes = raw
    if raw.isascii():
        if "%" not in raw:
            return raw
    else:
        wire = raw.encode("latin-1")    # raw UTF-8 (or garbage) bytes in the request target
    try:
        return unquote_to_bytes(wire).decode("utf-8")
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
            and response.file is None and response.pieces is None \
            and response.status in _STATUS_LINES and response.reason is None:
        # the common WebHDFS answer (JSON goes without a Content-Type: see remote.JSON)
        return b"%s%sContent-Length: %d\r\n\r\n%s" % (
            _STATUS_LINES[response.status], KEEP_ALIVE, len(response.body), response.body)
    reason = response.reason or REASONS.get(response.status, "Unknown")
    head = [f"HTTP/1.1 {response.status} {reason}\r\n"]
    if response.pieces is None:
        length = response.file[1] if response.file else len(response.body)
        head.append(f"Content-Length: {length}\r\n")
    elif keep_alive:
        head.append("Transfer-Encoding: chunked\r\n")
    if response.content_type:   # None: no Content-Type header (see remote.JSON)
        head.append(f"Content-Type: {response.content_type}\r\n")
    for name, value in response.headers:
        head.append(f"{name}: {value}\r\n")
    head.append("Connection: close\r\n" if not keep_alive else KEEP_ALIVE.decode("latin-1"))
    head.append("\r\n")
    return "".join(head).encode("latin-1") + response.body


def find_head(buf: bytearray) -> tuple[int, int, bool]:
    """Where the head at the start of ``buf`` ends: (the end of its last line, where the body
    starts, whether its lines end in a bare LF), or (-1, 0, False) while it is incomplete. A
    head ending its lines in a bare LF must end every one so (and hold no CR); a head ending
    them in CRLF must hold no other CR or LF, which ``parse_request_line`` and
    ``parse_headers`` check line by line."""
    crlf = buf.find(b"\n\r\n")         # an empty line after CRLF (or after a bare LF)
    end = buf.find(b"\n\n", 0, crlf + 1 if crlf >= 0 else len(buf))
    if end < 0:
        end = crlf
        if end < 0:
            return -1, 0, False
    bare_lf = buf[end - 1] != 13        # the last line's end
    if bare_lf != (buf[end + 1] == 10) or bare_lf and buf.find(b"\r", 0, end) >= 0:
        raise BadRequest(400, "Malformed head: its lines end both in CRLF and in a bare LF")
    return (end, end + 2, True) if bare_lf else (end - 1, end + 3, False)


def parse_request_line(line: str) -> tuple[str, str, str]:
    parts = line.split(" ")
    if len(parts) != 3 or not parts[1] or len(parts[2]) != 8 or \
            not parts[2].startswith("HTTP/1.") or not parts[2][7].isdigit() or \
            "\n" in parts[1] or "\r" in parts[1]:
        raise BadRequest(400, f"Malformed request line {line[:100]!r}")
    return parts[0], parts[1], parts[2]


def check_framing(version: str, headers: dict) -> None:
    """Refuse a body framed two ways, or chunked where HTTP/1.0 knows no chunks (RFC 9112 6.1,
    6.3): a proxy in front could read it the other way."""
    if "transfer-encoding" in headers:
        if "content-length" in headers:
            raise BadRequest(400, "Both Content-Length and Transfer-Encoding frame the body")
        if version == "HTTP/1.0":
            raise BadRequest(400, "Transfer-Encoding in an HTTP/1.0 request")


def origin_form(target: str) -> str:
    """``http://host:port/path?query`` -> ``/path?query`` (RFC 9112 3.2.2)."""
    scheme, sep, rest = target.partition("://")
    if not sep or scheme.lower() not in ("http", "https"):
        raise BadRequest(400, f"Malformed request target {target[:100]!r}")
    slash = rest.find("/")
    query = rest.find("?")
    if slash < 0 or 0 <= query < slash:
        return "/" + rest[query:] if query >= 0 else "/"
    return rest[slash:]


def parse_chunk_size(line: bytes) -> int:
    """The hex size of a chunk-size line (extensions after ';' ignored); strictly hex digits,
    so no sign, no '0x', no '_' and no space (what Python's int() would let through) but
    before a ';' (RFC 9112 7.1.1), and no CR, LF or NUL anywhere in the line."""
    text, semi, _ = line.partition(b";")
    if semi:
        text = text.rstrip(b" \t")
    if not text or len(text) > 16 or text.strip(b"0123456789abcdefABCDEF") or \
            b"\r" in line or b"\n" in line or b"\0" in line:
        raise BadRequest(400, f"Malformed chunk size {line[:20]!r}")
    return int(text, 16)


def parse_header_block(text: str) -> dict[str, str]:
    """``parse_headers`` of a head's field lines as sent, CRLF-separated (the text after the
    request line's CRLF). A client sends the same fields with every request, so parses are
    kept as query strings are (``parse_query``); each request gets its own copy."""
    cached = _HEADS.get(text)
    if cached is None:
        cached = parse_headers(text.split("\r\n"), 0) if text else {}
        if len(text) <= HEAD_CACHE_KEY and len(_HEADS) < HEAD_CACHE:
            _HEADS[text] = cached
    return cached.copy()


def parse_headers(lines: list[str], first: int = 1) -> dict[str, str]:
    """The header fields of ``lines[first:]`` (by default ``lines[0]`` is the request line).
    Lower-cased names; a repeated field joins its values with ", " (RFC 9110 5.3), except
    Content-Length, which must then repeat the same value. A line holding a CR, LF or NUL
    is refused (RFC 9110 5.5)."""
    headers: dict[str, str] = {}
    for line in itertools.islice(lines, first, None):
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip() or \
                "\r" in line or "\n" in line or "\0" in line:
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


def keeps_alive(version: str, headers: dict) -> bool:
    connection = headers.get("connection", "").lower()
    if version == "HTTP/1.0":
        return connection == "keep-alive"
    return connection != "close"


def read_body(buf: bytearray, headers: dict, start: int,
              max_body: int) -> tuple[bytes | bytearray | None, int]:
    """The body that starts at ``buf[start]``, framed by ``headers``: (body, offset just past
    it), or (None, 0) while incomplete. Over ``max_body`` bytes is a 413."""
    coding = headers.get("transfer-encoding")
    if coding is not None:
        if coding.lower() != "chunked":
            raise BadRequest(400, f"Unsupported Transfer-Encoding {coding[:40]!r}")
        return read_chunked(buf, start, max_body)
    length = headers.get("content-length")
    if length is None:
        return b"", start
    if not (length.isascii() and length.isdigit()):
        raise BadRequest(400, f"Invalid Content-Length {length[:40]!r}")
    size = int(length)
    if size > max_body:
        raise BadRequest(413, f"Request body of {size} bytes exceeds the limit of {max_body}")
    if len(buf) - start < size:
        return None, 0
    return buf[start:start + size], start + size


def read_chunked(buf: bytearray, pos: int,
                 max_body: int) -> tuple[bytes | bytearray | None, int]:
    """The chunked body that starts at ``buf[pos]``: (body, offset just past its trailer), or
    (None, 0) while incomplete. Over ``max_body`` bytes is a 413."""
    out = bytearray()
    while True:
        line_end = buf.find(b"\r\n", pos)
        if line_end < 0:
            return None, 0
        size = parse_chunk_size(bytes(buf[pos:line_end]))
        if len(out) + size > max_body:
            raise BadRequest(413, f"Chunked body exceeds the limit of {max_body} bytes")
        pos = line_end + 2
        if size == 0:
            trailer_end = buf.find(b"\r\n", pos)
            if trailer_end < 0:
                return None, 0
            while trailer_end != pos:  # check and drop trailer fields up to the empty line
                parse_headers([buf[pos:trailer_end].decode("latin-1")], 0)
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
