"""The client between namenodes: what one namenode (or the secondary) asks another over HTTP.

Hadoop spreads this over ``TransferFsImage`` (the image servlet's downloads and uploads), the
``HAServiceProtocol`` client (is the peer active, give way) and the standby's
``NamenodeProtocol`` proxy (roll the edits); here it is one ``Peer`` on
``client/connection.py``:

* ``is_active()`` -- ``GET /isActive`` (Hadoop's IsNameNodeActiveServlet): None when the peer
  is active, else what it answered or why it could not be asked. ``probe_active(conn)`` is
  the same probe on a connection the caller keeps: the client's failover
  (``client/failover.py``'s ``find_active``) asks with it, so every liveness probe of the
  set is this module's.
* ``Pulse`` -- the same probe kept on one open socket, for the standby's watch of the active
  (``namenode/ha/health.py``): ``open`` lets a refused connection through as
  ``ConnectionRefusedError`` (the process is gone; a paused one still accepts, the kernel
  completes the handshake), ``ask`` sends the probe and reads the status, ``closed`` waits a
  moment for the peer's close, and ``sock`` is what ``HAState.pulse_open`` polls at a refusal.
  In an HTTPS_ONLY set the socket speaks TLS (``open(..., tls=True)``): the refusal and the
  close are the TCP socket's still.
* ``cede(seconds, user)`` -- a graceful failover's request to the active: step down and give
  way for ``seconds``.
* ``roll()``, ``status()`` -- ``POST /checkpoint/roll`` and ``GET /checkpoint/status``: JSON.
* ``download(path, dest, txid_header)`` -- an image or edits streamed into ``<dest>.download``
  while hashed, its length checked against Content-Length and its MD5 against X-MD5-Digest,
  fsynced, then published as ``dest``; nothing is published on a failure.
* ``upload_image(path, ...)`` -- ``PUT /checkpoint/image`` streamed from the file with
  Content-Length and X-MD5-Digest after ``Expect: 100-continue``, so a refusal arrives as an
  answer rather than a broken pipe halfway through a large image. The secondary
  (``secondary/client.py``) and the standby's checkpointer (``namenode/ha/checkpointer.py``)
  both upload with it.
* ``push_block``, ``block_report``, ``open_block`` -- an active's copies of block files to a
  standby (``namenode/blocks/replication.py``, received by ``namenode/http/replica.py``).

The header names both sides use are the one table below (``SECRET_HEADER``, ...): the server
side (``namenode/http/transfer.py``, ``replica.py``) imports them. Every request carries the
shared secret of the HA set (or of the secondary); in secure mode, instead, a SPNEGO token
from the caller's service keytab (``ServiceLogin``).

Not here: the datanode's mirror of an ``hdfs://`` write (``namenode/datanode/mirror.py``,
HDFS's write pipeline) is Hadoop's data transfer protocol between datanodes, not this client;
blocks reach a standby that way too, as the client writes them.

Failures are ``NamenodeUnreachableError`` and ``ProtocolError`` of the client stack, and
``PeerRefusedError`` (the peer's status and message), and a ``TransferFailedError`` (cut
short, digest mismatch, not stored) below; each caller words them in its own errors.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import select
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from nnlite.client.connection import (
    NETWORK_ERRORS,
    Connection,
    answer_of,
    client_context,
    describe,
)
from nnlite.client.errors import ClientError, NamenodeUnreachableError, ProtocolError
from nnlite.durability import durable

# ---------------------------------------------------------------------- the header names
SECRET_HEADER = "X-Nnlite-Secret"        # the shared secret, on every request between them
MD5_HEADER = "X-MD5-Digest"              # an image's or edits' MD5 (hex), both directions
IMAGE_TXID_HEADER = "X-Image-Txid"       # a downloaded image's last txid
TXID_RANGE_HEADER = "X-Txid-Range"       # downloaded edits' "<first>-<last>"
BLOCK_DIGEST_HEADER = "X-Block-Digest"   # a block copy's "<checksum type>:<md5 of chunk CRCs>"

CHECKPOINT_PREFIX = "/checkpoint"
BLOCKS_PREFIX = "/blocks/v1"
TMP_SUFFIX = ".download"
CHUNK = 1 << 20
CONTINUE_WAIT = 5.0          # seconds to wait for "100 Continue" before sending anyway
PULSE_CONNECT_TIMEOUT = 1.0


class PeerRefusedError(ClientError):
    """The peer answered with an error status: ``status``, its JSON ``message`` (or text),
    and the first bytes of its ``body``."""

    def __init__(self, status: int, message: str, body: bytes, *, url: str):
        self.status = status
        self.message = message
        self.body = body
        self.url = url
        super().__init__(f"namenode refused ({status}): {message} ({url})")


class TransferFailedError(ClientError):
    """An image transfer did not complete; ``message`` says why, ``url`` where."""

    def __init__(self, message: str, *, url: str):
        self.message = message
        self.url = url
        super().__init__(f"{message} ({url})")


class ShortTransferError(TransferFailedError):
    """A body ended before its Content-Length (a cut transfer), or a file being uploaded
    shrank."""


class DigestMismatchError(TransferFailedError):
    """A downloaded body's MD5 is not the one its X-MD5-Digest header announced."""


class StoreError(TransferFailedError):
    """The download could not be written or published locally (``OSError`` chained)."""


@dataclass(frozen=True, slots=True)
class Downloaded:
    """A published download: where, how many bytes, their MD5, the txids the headers named."""
    path: Path
    size: int
    md5: str
    first_txid: int
    last_txid: int
    seconds: float


@dataclass(frozen=True)
class ServiceLogin:
    """Secure mode's credentials between nnlite's processes, in place of the shared secret:
    ``negotiate(host)`` is a fresh ``Authorization`` value (``Negotiate <base64>``) for the
    peer on ``host``, from the caller's service keytab (HDFS's image transfer authenticates
    so, over SPNEGO). Built by ``namenode/security/services.py``'s ``login``."""
    principal: str
    negotiate: Callable[[str], str]


# What a Peer authenticates with: simple mode's shared secret, or a service login
Credentials = str | ServiceLogin


class Peer:
    """Another namenode of the set at ``url`` (``http://host:port``, or ``host:port``).

    The image transfers and the JSON calls take a fresh connection each (they are rare, and a
    retry must never send twice); the block calls share one kept-alive ``connection``, which
    the caller closes (``close``, or ``with``)."""

    def __init__(self, url: str, secret: Credentials, timeout: float | None = 60.0, *,
                 chunk_size: int = CHUNK):
        self.connection = Connection(url, timeout)
        self.url = self.connection.url
        self.base = self.connection.base
        self.secret = secret
        self.host = urlsplit(self.url).hostname or ""
        self.timeout = timeout
        self.chunk_size = chunk_size

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> Peer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fresh(self, timeout: float | None = None) -> Connection:
        return Connection(self.url + self.base, timeout if timeout is not None
                          else self.timeout)

    def _headers(self, **more: str) -> dict[str, str]:
        if isinstance(self.secret, ServiceLogin):
            return {"Authorization": self.secret.negotiate(self.host), **more}
        return {SECRET_HEADER: self.secret, **more}

    # ------------------------------------------------------------------ HA service

    def is_active(self, timeout: float | None = None) -> str | None:
        """None when the peer says it is active, else what it answered or why not."""
        conn = self._fresh(timeout)
        try:
            return probe_active(conn)
        finally:
            conn.close()

    def cede(self, seconds: float, user: str) -> None:
        """Ask the active to step down and give way for ``seconds`` (a graceful failover:
        long enough for the asking standby to win the election); ``PeerRefusedError`` if
        it does not."""
        query = {"op": "TRANSITIONTOSTANDBY", "cede": f"{seconds:g}", "user.name": user}
        headers = None
        if isinstance(self.secret, ServiceLogin):    # secure: as the service principal
            del query["user.name"]
            headers = self._headers()
        target = f"{self.base}/admin?{urlencode(query)}"
        conn = self._fresh()
        try:
            reply = conn.request("POST", target, headers=headers)
        finally:
            conn.close()
        if reply.status != 200:
            raise refused(reply.status, reply.body, "", self.url + target)

    # ------------------------------------------------------------------ checkpoints

    def roll(self) -> dict:
        """``POST /checkpoint/roll``: the status after the roll (or of the pending one)."""
        return self._json("POST", "/roll")

    def status(self) -> dict:
        return self._json("GET", "/status")

    def _json(self, method: str, path: str) -> dict:
        target = CHECKPOINT_PREFIX + path
        url = self.url + self.base + target
        conn = self._fresh()
        try:
            return json_answer(conn.stream(method, self.base + target, self._headers()), url,
                               f"{method} {url} answered", ": not a namenode's transfer "
                               "endpoint?")
        finally:
            conn.close()

    def download(self, path: str, dest: Path, txid_header: str, *,
                 halfway: Callable[[], None] | None = None) -> Downloaded:
        """``GET /checkpoint<path>`` verified and published as ``dest`` (module docstring);
        ``halfway()`` runs once half of the body is stored (a fault point)."""
        target = self.base + CHECKPOINT_PREFIX + path
        url = self.url + target
        tmp = dest.with_name(dest.name + TMP_SUFFIX)
        start = time.perf_counter()
        conn = self._fresh()
        try:
            resp = conn.stream("GET", target, self._headers())
            if resp.status != 200:
                raise refused_answer(resp, url)
            length, md5, first, last = announced(resp, txid_header, url)
            try:
                received, actual = self._receive(resp, tmp, length, url, halfway)
                check_body(received, length, actual, md5, url)
            except BaseException:
                remove(tmp)
                raise
        finally:
            conn.close()
        try:
            durable.publish(tmp, dest, synced=True)
        except OSError as exc:
            remove(tmp)
            raise StoreError(f"cannot publish the download as {dest}: {exc}", url=url) from exc
        return Downloaded(dest, received, actual, first, last, time.perf_counter() - start)

    def _receive(self, resp, tmp: Path, length: int, url: str,
                 halfway: Callable[[], None] | None) -> tuple[int, str]:
        """Stream the body into ``tmp`` while hashing; fsync it. Returns (bytes, md5)."""
        digest = hashlib.md5(usedforsecurity=False)
        received, pace = 0, _Halves(length, self.chunk_size, halfway)
        try:
            with open(tmp, "wb") as f:
                while True:
                    chunk = read_chunk(resp, pace.want(received), received, length, url)
                    if not chunk:
                        break
                    f.write(chunk)
                    digest.update(chunk)
                    received += len(chunk)
                f.flush()
                durable.sync_fd(f.fileno(), str(tmp))
        except OSError as exc:
            raise StoreError(f"cannot store the download in {tmp}: {exc}", url=url) from exc
        return received, digest.hexdigest()

    def upload_image(self, path: str | Path, *, txid: int, namespace_id: int, md5: str,
                     halfway: Callable[[], None] | None = None) -> dict:
        """PUT the image at ``path`` as the checkpoint for ``txid``; the peer's JSON answer.
        ``halfway()`` runs once half of the image is sent (a fault point)."""
        target = (f"{self.base}{CHECKPOINT_PREFIX}/image?txid={txid}"
                  f"&namespaceid={namespace_id}")
        url = self.url + target
        size = os.stat(path).st_size
        headers = self._headers(**{"Content-Length": str(size), MD5_HEADER: md5,
                                   "Content-Type": "application/octet-stream"})
        conn = self._fresh()
        try:
            try:
                resp = conn.send_expecting_continue(
                    "PUT", target, headers,
                    lambda raw: self._send_file(raw, path, size, url, halfway), CONTINUE_WAIT)
            except NamenodeUnreachableError as exc:
                raise NamenodeUnreachableError(f"upload of {size} bytes for txid {txid} "
                                               f"failed: {exc}", url=url) from exc
            return json_answer(resp, url, f"the upload to {url} was answered")
        finally:
            conn.close()

    def _send_file(self, conn, path, size: int, url: str,
                   halfway: Callable[[], None] | None) -> None:
        sent, pace = 0, _Halves(size, self.chunk_size, halfway)
        with open(path, "rb") as f:
            while sent < size:
                chunk = f.read(pace.want(sent))
                if not chunk:
                    raise ShortTransferError(f"{path} shrank to {sent} bytes while it was "
                                             f"uploaded ({size} announced)", url=url)
                conn.send(chunk)
                sent += len(chunk)

    # ------------------------------------------------------------------ blocks

    def push_block(self, block_id: int, num_bytes: int, body, digest: str, *,
                   sized: bool = False) -> None:
        """``PUT /blocks/v1/blk_<id>?length=<n>`` on the kept connection, ``body`` a file
        object streamed from where it stands (``sized``: announce ``num_bytes`` as its
        Content-Length, for a body that is not a plain file)."""
        headers = self._headers(**{BLOCK_DIGEST_HEADER: digest})
        if sized:
            headers["Content-Length"] = str(num_bytes)
        target = f"{self.base}{BLOCKS_PREFIX}/blk_{block_id}?length={num_bytes}"
        reply = self.connection.request("PUT", target, body=body, headers=headers)
        if reply.status != 200:
            raise refused(reply.status, reply.body, "", self.url + target)

    def block_report(self) -> set[int]:
        """The ids of every block the peer has published (``GET /blocks/v1?op=REPORT``)."""
        target = f"{self.base}{BLOCKS_PREFIX}?op=REPORT"
        reply = self.connection.request("GET", target, headers=self._headers())
        if reply.status != 200:
            raise refused(reply.status, reply.body, "", self.url + target)
        try:
            return set(json.loads(reply.body)["blocks"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ProtocolError(f"the block report of {self.url} is not a list of ids: "
                                f"{reply.body[:200]!r}", url=self.url + target) from exc

    def open_block(self, block_id: int) -> http.client.HTTPResponse | None:
        """``GET /blocks/v1/blk_<id>``: the answer, its body (the block) unread, or None when
        the peer does not have it (that answer read). The caller closes the answer."""
        resp = self.connection.stream("GET", f"{self.base}{BLOCKS_PREFIX}/blk_{block_id}",
                                      headers=self._headers())
        if resp.status != 200:
            resp.read()
            return None
        return resp


class _Halves:
    """A transfer's read sizes: chunks up to half of ``size``, then ``halfway()`` (a fault
    point hit once, with exactly half moved), then whole chunks."""

    def __init__(self, size: int, chunk: int, halfway: Callable[[], None] | None):
        self.half = size // 2
        self.chunk = chunk
        self.halfway = halfway
        self.passed = False

    def want(self, done: int) -> int:
        if not self.passed and done >= self.half:
            self.passed = True
            if self.halfway is not None:
                self.halfway()
        return self.chunk if self.passed else min(self.chunk, self.half - done)


class Pulse:
    """One open connection asking the active ``/isActive`` again and again (module
    docstring); ``open`` raises ``ConnectionRefusedError`` when nothing listens there."""

    def __init__(self, sock: socket.socket, target: str):
        self.sock = sock
        self.request = f"GET /isActive HTTP/1.1\r\nHost: {target}\r\n\r\n".encode()

    @classmethod
    def open(cls, target: str, timeout: float = PULSE_CONNECT_TIMEOUT, *,
             tls: bool = False) -> Pulse:
        """Connect to ``target`` (``host:port``); with ``tls`` (an HTTPS_ONLY set), the
        handshake follows on the same socket, verified as every https connection of the
        process is (``connection.client_context``). A refusal is still the connect's, before
        any TLS; a failed handshake is an ``ssl.SSLError`` (an ``OSError``)."""
        host, _, port = target.rpartition(":")
        sock = socket.create_connection((host, int(port)), timeout=timeout)
        if tls:
            try:
                sock = client_context().wrap_socket(sock, server_hostname=host)
            except BaseException:
                sock.close()
                raise
        return cls(sock, target)

    def __enter__(self) -> Pulse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()

    def ask(self) -> bool:
        """Whether the peer answers the probe 200 (it is active)."""
        self.sock.sendall(self.request)
        return status_of(self.sock) == 200

    def closed(self, wait: float) -> bool:
        """Whether the peer closed the connection (or died) within ``wait`` seconds."""
        readable, _, _ = select.select([self.sock], [], [], wait)
        return bool(readable)


# ---------------------------------------------------------------------- helpers

def probe_active(conn: Connection) -> str | None:
    """``GET /isActive`` on ``conn``: None when the namenode there says it is active, else
    what it answered or why it could not be asked. ``Peer.is_active`` asks on a fresh
    connection, the client's failover (``FailoverConnection.find_active``) on its kept one."""
    try:
        reply = conn.request("GET", conn.base + "/isActive")
    except NamenodeUnreachableError as exc:
        return answer_of(exc)
    return None if reply.status == 200 else f"not active (HTTP {reply.status})"


def status_of(sock: socket.socket) -> int:
    """Read one small HTTP answer from ``sock``; its status code."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionResetError("the active closed the connection")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionResetError("the active closed the connection")
        body += chunk
    return int(lines[0].split()[1])


def read_chunk(resp, want: int, received: int, length: int, url: str) -> bytes:
    try:
        return resp.read(want)
    except http.client.IncompleteRead as exc:
        raise ShortTransferError(f"download ended after {received} of {length} bytes "
                                 "(cut off?)", url=url) from exc
    except NETWORK_ERRORS as exc:
        raise NamenodeUnreachableError(f"download from {url} failed after {received} of "
                                       f"{length} bytes: {describe(exc)}", url=url) from exc


def read_all(resp, url: str) -> bytes:
    try:
        return resp.read()
    except NETWORK_ERRORS as exc:
        raise NamenodeUnreachableError(f"the answer of {url} was cut off: {describe(exc)}",
                                       url=url) from exc


def json_answer(resp, url: str, what: str, hint: str = "") -> dict:
    """The JSON of a 200 answer; a refusal raised, a body that is not JSON a ProtocolError
    (``what`` answered with something other than JSON, then ``hint``)."""
    if resp.status != 200:
        raise refused_answer(resp, url)
    body = read_all(resp, url)
    try:
        return json.loads(body)
    except ValueError as exc:
        raise ProtocolError(f"{what} with something other than JSON ({len(body)} bytes)"
                            f"{hint}") from exc


def refused(status: int, body: bytes, reason: str, url: str) -> PeerRefusedError:
    """An error answer as a typed error (its JSON "error" message if any)."""
    try:
        message = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        message = body.decode("utf-8", "replace")[:200] or reason
    return PeerRefusedError(status, message, body[:300], url=url)


def refused_answer(resp, url: str) -> PeerRefusedError:
    try:
        body = resp.read(64 * 1024)
    except NETWORK_ERRORS:
        body = b""
    return refused(resp.status, body, resp.reason, url)


def announced(resp, txid_header: str, url: str) -> tuple[int, str, int, int]:
    """Content-Length, X-MD5-Digest and the txids of a download; ProtocolError if absent."""
    length, md5, txids = (resp.getheader(h) for h in ("Content-Length", MD5_HEADER,
                                                      txid_header))
    try:
        length = int(length)
        if txids is None or md5 is None or len(md5) != 32:
            raise ValueError("missing")
        first, _, last = txids.partition("-")
        first_txid, last_txid = (int(first), int(last)) if last else (0, int(first))
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"the download of {url} lacks a valid Content-Length, {MD5_HEADER} "
                            f"or {txid_header} header (got {length!r}, {md5!r}, {txids!r})"
                            ) from exc
    return length, md5.lower(), first_txid, last_txid


def check_body(received: int, length: int, actual: str, announced_md5: str, url: str) -> None:
    if received != length:
        raise ShortTransferError(f"download ended after {received} of {length} bytes "
                                 "(cut off?)", url=url)
    if actual != announced_md5:
        raise DigestMismatchError(f"downloaded {received} bytes with MD5 {actual}; the "
                                  f"namenode announced {announced_md5}", url=url)


def remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
