"""One keep-alive HTTP connection to the namenode (standard library ``http.client`` only): the
client's transport, which moves requests and answers and knows nothing of WebHDFS.

* No connection, a timeout, or a connection dropped before the answer is
  ``NamenodeUnreachableError`` naming the URL; nothing else of the network escapes. Its
  ``sent`` is False when no connection could be made (refused, unknown host, connect
  timeout): the namenode cannot have seen the request.
* A kept-alive connection that the namenode closed while idle (it does after 60 s) is reopened
  and the request sent again, once, and only when the connection was reused, the error says
  the peer had not read the request (``STALE``), and the body can be sent again from where it
  started (bytes, none, or a file that seeks back). So a retried request is applied once.
* A body may be a binary file object: it is streamed from where it stands, with a
  Content-Length when its size is known (a regular file), chunked otherwise (a pipe).
* An answer the server will close after is read to the end and the connection dropped, so the
  next request opens a fresh one.
* ``https://`` URLs speak TLS, trusting the CA file ``trust`` names (ssl-client.xml's
  truststore) or else the system's CAs.
* A large upload can ask first (``Expect: 100-continue``, ``send_expecting_continue``), so a
  refusal arrives as an answer rather than a broken pipe halfway through the body.
* With a Kerberos login (``log_in``: the ticket cache, or a keytab and principal; secure
  mode), every request authenticates as ``AuthenticatedURL`` does (client/kerberos.py): the
  ``hadoop.auth`` cookie the server set, else ``Authorization: Negotiate`` (the server's reply
  token is checked, its cookie kept); a cookie refused with 401 is dropped and the request
  negotiated again, once, when its body can be sent again. A target that carries
  ``delegation=`` (the data step's redirect) is proof enough and sends neither.

This is the one HTTP client stack of nnlite: the WebHDFS client, the CLI, the catalog client,
the watcher and the secondary's image transfer all speak through it.
"""

from __future__ import annotations

import contextlib
import http.client
import io
import os
import select
import socket
import ssl
import stat
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from nnlite.client.errors import BadArgumentError, NamenodeUnreachableError
from nnlite.client.kerberos import KerberosLogin

TIMEOUT = 30.0
USER_AGENT = "nnlite-client/0.1"
NETWORK_ERRORS = (OSError, http.client.HTTPException)
# The peer closed a kept-alive connection before reading the request: safe to send again.
STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
         ConnectionAbortedError)
CHUNK = 1 << 20             # bytes per socket write of a streamed body, per read of a download
CONTINUE = b"HTTP/1.1 100 "


# The TLS context of every https connection of this process (``trust``); None: the
# system's CAs (and SSL_CERT_FILE), as Python's default.
_trusted: ssl.SSLContext | None = None


def trust(ca_file: str | None) -> None:
    """Trust the CA certificates in ``ca_file`` (PEM) on every https connection of this
    process: ssl-client.xml's truststore (``ssl.client.truststore.location``), one per client
    process as Hadoop's ``SSLFactory`` is. None or "": the system's CAs again. Host names are
    checked."""
    global _trusted
    if not ca_file:
        _trusted = None
        return
    try:
        context = ssl.create_default_context(cafile=ca_file)
    except (OSError, ssl.SSLError) as exc:
        raise BadArgumentError(f"ssl.client.truststore.location {ca_file} is not a PEM file "
                               f"of CA certificates: {exc}") from exc
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    _trusted = context


def client_context() -> ssl.SSLContext:
    """The context an https connection of this process verifies its peer with: the
    truststore ``trust`` named, else the system's CAs. For a socket ``Connection`` does not
    open (the HA pulse, ``client/peer.py``'s ``Pulse``)."""
    return _trusted or ssl.create_default_context()


# The Kerberos login every connection of this process authenticates with (``log_in``);
# None: simple authentication (``user.name``).
_login: KerberosLogin | None = None


def log_in(login: KerberosLogin | None) -> None:
    """Authenticate every connection of this process as ``login`` (UserGroupInformation's
    login user); None: simple authentication again."""
    global _login
    _login = login


def kerberos_login() -> KerberosLogin | None:
    """The process's Kerberos login, if any (secure mode)."""
    return _login


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    headers: dict            # lower-case names
    body: bytes


class Connection:
    """One keep-alive HTTP connection to ``url``'s host and port."""

    def __init__(self, url: str, timeout: float | None = TIMEOUT,
                 tls: ssl.SSLContext | None = None):
        parts = urlsplit(url if "://" in url else f"http://{url}")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise BadArgumentError(f"the namenode URL must be http://HOST:PORT, not {url!r}")
        try:
            port = parts.port
        except ValueError as exc:
            raise BadArgumentError(f"bad port in the namenode URL {url!r}") from exc
        self.url = f"{parts.scheme}://{parts.netloc}"
        self.base = parts.path.rstrip("/")
        self.timeout = timeout
        self._https = parts.scheme == "https"
        self._tls = tls      # an https connection's own context (etcd's client certificate)
        self._host, self._port = parts.hostname, port
        self._conn: http.client.HTTPConnection | None = None
        # Send a request again on a fresh connection when a kept-alive one turns out stale
        # (below); a failover client turns it off and drops stale ones first (drop_stale).
        self.retry_stale = True

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def drop_stale(self) -> None:
        """Close the kept-alive connection if the peer closed it meanwhile (or sent what no
        request asked for): then a request that fails on a kept-alive connection lost its
        answer, it did not meet a stale connection (a failover client tells them apart)."""
        sock = self._conn.sock if self._conn is not None else None
        if sock is not None and select.select([sock], [], [], 0)[0]:
            self.close()

    def _open(self) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(self._host, self._port, timeout=self.timeout,
                                               blocksize=CHUNK, context=self._tls or _trusted)
        return http.client.HTTPConnection(self._host, self._port, timeout=self.timeout,
                                          blocksize=CHUNK)

    def request(self, method: str, target: str, body=None, headers=None) -> Reply:
        """One exchange; a kept-alive connection the peer closed meanwhile is reopened once
        (it had not read the request, so sending it again applies it once). ``body``: bytes,
        or a binary file object streamed from where it stands (sent again on a retry only if
        it can seek back). ``headers``: more request headers."""
        return self._with_retry(method, target, body, headers, self._exchange)

    def stream(self, method: str, target: str, headers: dict[str, str] | None = None,
               body: bytes | None = None) -> http.client.HTTPResponse:
        """Send a request (with a small ``body``, or none); the response with its body unread.
        The caller reads it to the end (the connection is kept) or calls ``close()``."""
        return self._with_retry(method, target, body, headers, self._send)

    def set_timeout(self, timeout: float | None) -> None:
        """Wait up to ``timeout`` seconds (None: for ever) for each later read, also on the
        open connection: a stream may stay quiet far longer than an answer takes to come."""
        self.timeout = timeout
        if self._conn is not None:
            self._conn.timeout = timeout
            if self._conn.sock is not None:
                self._conn.sock.settimeout(timeout)

    def abort(self) -> None:
        """Shut the socket down, from any thread: a read blocked on it (a stream's) returns
        at once, as at the end of the stream. Its owner still calls ``close()``."""
        conn = self._conn
        sock = conn.sock if conn is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):  # already closed or never connected
                sock.shutdown(socket.SHUT_RDWR)

    def send_expecting_continue(self, method: str, target: str, headers: dict, send_body,
                                wait: float) -> http.client.HTTPResponse:
        """A request with ``Expect: 100-continue`` on a fresh connection: the head, then
        ``send_body(conn)`` once the server said 100 (or said nothing for ``wait`` seconds),
        then the answer, its body unread. A refusal that comes instead of the 100 is answered
        without the body ever being sent, so a large upload refused is not a broken pipe."""
        self.close()
        conn = self._conn = self._open()
        try:
            conn.putrequest(method, target, skip_accept_encoding=True)
            for name, value in {"User-Agent": USER_AGENT, **headers,
                                "Expect": "100-continue"}.items():
                conn.putheader(name, value)
            conn.endheaders()
            wait = min(self.timeout or wait, wait)
            if isinstance(conn.sock, ssl.SSLSocket):    # TLS cannot peek: read, then replay
                early = _interim_tls(conn.sock, wait)
                if early:
                    return _replayed(early, conn.sock, method)
                send_body(conn)
            elif _continue(conn.sock, wait):
                send_body(conn)
            return conn.getresponse()
        except NETWORK_ERRORS as exc:
            self.close()
            raise self._unreachable(exc) from exc

    def _unreachable(self, exc: BaseException, sent: bool = True) -> NamenodeUnreachableError:
        return NamenodeUnreachableError(
            f"cannot reach the namenode at {self.url} ({describe(exc)}); is it running? "
            "Point --namenode (or NNLITE_NAMENODE) at it", url=self.url, sent=sent)

    def _with_retry(self, method: str, target: str, body, headers, exchange):
        start = position(body)
        for attempt in (1, 2):
            reused = self._conn is not None
            if self._conn is None:
                self._conn = self._open()
            conn = self._conn
            if conn.sock is None:           # what http.client would do first, done here so a
                try:                        # failure says nothing was sent (``sent=False``)
                    conn.connect()
                except NETWORK_ERRORS as exc:
                    self.close()
                    raise self._unreachable(exc, sent=False) from exc
            try:
                return exchange(conn, method, target, body, headers)
            except NETWORK_ERRORS as exc:
                self.close()
                if (reused and attempt == 1 and self.retry_stale and isinstance(exc, STALE)
                        and rewind(body, start)):
                    continue
                raise self._unreachable(exc) from exc
        raise AssertionError("not reached")

    def _send(self, conn, method: str, target: str, body=None,
              extra=None) -> http.client.HTTPResponse:
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json", **(extra or {})}
        if body is not None and not isinstance(body, (bytes, bytearray, memoryview)):
            size = _remaining(body)
            if size is not None:
                headers["Content-Length"] = str(size)
            headers["Content-Type"] = "application/octet-stream"
        login = _login
        if login is None or "delegation=" in target.partition("?")[2]:
            conn.request(method, target, body=body, headers=headers)
            return conn.getresponse()
        return self._authenticated(conn, login, method, target, body, headers)

    def _authenticated(self, conn, login: KerberosLogin, method: str, target: str, body,
                       headers: dict) -> http.client.HTTPResponse:
        """The request as ``login``: with its cookie for this server, else negotiated."""
        server = f"{self._host}:{self._port}"
        cookie = login.cookie(server)
        context = None
        if cookie:
            headers["Cookie"] = f'hadoop.auth="{cookie}"'
        else:
            context, headers["Authorization"] = login.token(self._host or "")
        conn.request(method, target, body=body, headers=headers)
        resp = conn.getresponse()
        for set_cookie in resp.msg.get_all("Set-Cookie") or ():
            login.keep(server, set_cookie)
        if context is not None and resp.status != 401:
            login.verify(context, resp.getheader("WWW-Authenticate"))
        if resp.status == 401 and cookie and rewind(body, None):
            resp.read()                     # the cookie expired or the server restarted
            login.forget(server)
            headers.pop("Cookie", None)
            return self._authenticated(conn, login, method, target, body, headers)
        return resp

    def without_timeout(self) -> Connection:
        """A new connection to the same place that waits as long as the answer takes."""
        return Connection(self.url + self.base, None)

    def _exchange(self, conn, method: str, target: str, body, headers) -> Reply:
        resp = self._send(conn, method, target, body, headers)
        data = resp.read()
        if resp.will_close:
            self.close()
        return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)


def position(body) -> int | None:
    if body is None or isinstance(body, (bytes, bytearray, memoryview)):
        return None
    try:
        return body.tell() if body.seekable() else None
    except (AttributeError, OSError, ValueError):
        return None


def rewind(body, start: int | None) -> bool:
    """Whether ``body`` can be sent again (bytes, nothing, or a file sought back)."""
    if body is None or isinstance(body, (bytes, bytearray, memoryview)):
        return True
    if start is None:
        return False
    body.seek(start)
    return True


def _remaining(body) -> int | None:
    """The bytes left in a regular file from where it stands; None for a pipe (chunked)."""
    try:
        st = os.fstat(body.fileno())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return max(st.st_size - body.tell(), 0)


def describe(exc: BaseException) -> str:
    """A network error in a few words, for a message that already names the URL."""
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, socket.gaierror):
        return f"unknown host: {exc.strerror or exc}"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "no answer in time"
    if isinstance(exc, http.client.RemoteDisconnected):
        return "the connection closed before an answer"
    if isinstance(exc, http.client.HTTPException):    # its text holds the peer's raw bytes
        return f"what answers does not speak HTTP/1.1 ({type(exc).__name__}): not a namenode"
    return str(exc) or type(exc).__name__


def answer_of(exc: NamenodeUnreachableError) -> str:
    """What became of a request that got no answer, in a few words."""
    cause = exc.__cause__
    return describe(cause) if cause is not None else str(exc)


def _interim_tls(sock: ssl.SSLSocket, wait: float) -> bytes:
    """``_continue`` on a TLS socket, which cannot peek: read what the server sends within
    ``wait`` seconds up to the end of a head. A 100 is consumed (b""); nothing is b"" too
    (send the body); anything else is the final answer's first bytes, for ``_replayed``."""
    deadline = time.monotonic() + wait
    got = b""
    while True:
        # once part of a 100 came, wait for the rest of it (it is on its way)
        left = None if got else max(0.0, deadline - time.monotonic())
        if not sock.pending() and not select.select([sock], [], [], left)[0]:
            return b""                          # nothing within ``wait``: send the body
        chunk = sock.recv(4096)
        if not chunk:
            return got or b"HTTP/1.1 502 Closed\r\n\r\n"     # closed: no answer at all
        got += chunk
        head = got.replace(b"HTTP/1.0", b"HTTP/1.1", 1)
        end = got.find(b"\r\n\r\n")
        if not CONTINUE.startswith(head[:len(CONTINUE)]) and not head.startswith(CONTINUE):
            return got                          # a final answer came first
        if end >= 0:
            return got[end + 4:]                # the 100, consumed; a final answer after it?


class _Replay(io.RawIOBase):
    """The bytes already read from a socket, then the socket itself."""

    def __init__(self, first: bytes, sock: ssl.SSLSocket):
        self.first = first
        self.sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.first:
            n = min(len(buffer), len(self.first))
            buffer[:n] = self.first[:n]
            self.first = self.first[n:]
            return n
        return self.sock.recv_into(buffer)


class _ReplaySource:
    def __init__(self, first: bytes, sock: ssl.SSLSocket):
        self.reader = io.BufferedReader(_Replay(first, sock))

    def makefile(self, mode: str):
        return self.reader


def _replayed(first: bytes, sock: ssl.SSLSocket, method: str) -> http.client.HTTPResponse:
    """The final answer whose first bytes ``_interim_tls`` read, parsed by http.client."""
    response = http.client.HTTPResponse(_ReplaySource(first, sock),  # type: ignore[arg-type]
                                        method=method)
    response.begin()
    return response


def _continue(sock: socket.socket, wait: float) -> bool:
    """After the head of a request with ``Expect: 100-continue``: True to send the body (a 100
    arrived and was consumed, or nothing arrived within ``wait`` seconds); False when the final
    answer came first (a refusal, left unread for getresponse)."""
    deadline = time.monotonic() + wait
    while True:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([sock], [], [], max(0.0, left))
        if not ready:
            return True
        head = sock.recv(1024, socket.MSG_PEEK)
        if not head:
            return False                        # closed: getresponse reports it
        if not head[:13].replace(b"HTTP/1.0", b"HTTP/1.1").startswith(CONTINUE[:len(head)]):
            return False
        end = head.find(b"\r\n\r\n")
        if end >= 0:
            sock.recv(end + 4)
            return True
        if left <= 0:
            return True
        time.sleep(0.001)                       # a 100 arriving in pieces
