"""The secondary's client of the namenode's image transfer (``namenode/http/transfer.py``).

* ``status()``, ``roll()``: the JSON of ``GET /checkpoint/status`` and ``POST /checkpoint/roll``
  as a ``NamenodeStatus``. With the namenodes of an HA set, both first find the active one
  (``follow_active``: ``GET /isActive``); the rest of the checkpoint stays with it.
* ``download_image(dest)``, ``download_edits(dest)``: the body streams into ``<dest>.download``
  while it is hashed; then its length is checked against Content-Length and its MD5 against
  X-MD5-Digest, it is fsynced, and only then published as ``dest`` (durable.publish). On any
  failure the temp file is removed and nothing is published.
* ``upload_image(path, ...)``: ``PUT /checkpoint/image`` streamed from the file, with
  Content-Length and X-MD5-Digest. It sends ``Expect: 100-continue`` and waits for the
  namenode's 100 before the body, so a refusal (409, 410, 403) arrives as an answer instead of
  a broken pipe halfway through a large image.

Requests go through ``client/connection.py``, nnlite's one HTTP client stack.

Every request carries the shared secret in ``X-Nnlite-Secret``. Failures are typed: the client
stack's ``NamenodeUnreachableError`` and ``ProtocolError``, and the secondary's refused (with
the namenode's status and message), cut short and digest mismatch. Fault points: ``secondary.during-download`` (after half of a body
is stored) and ``secondary.during-upload`` (after half of the image is sent).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from nnlite.client.connection import NETWORK_ERRORS, Connection, describe
from nnlite.client.errors import NamenodeUnreachableError, NoActiveNamenodeError, ProtocolError
from nnlite.client.failover import Address, Nameservice, answer_of
from nnlite.durability import durable, faults
from nnlite.secondary.errors import (
    DigestMismatchError,
    RefusedError,
    SettingError,
    ShortTransferError,
    TransferError,
)

log = logging.getLogger(__name__)

PREFIX = "/checkpoint"
SECRET_HEADER = "X-Nnlite-Secret"
MD5_HEADER = "X-MD5-Digest"
IMAGE_TXID_HEADER = "X-Image-Txid"
TXID_RANGE_HEADER = "X-Txid-Range"
TMP_SUFFIX = ".download"
CHUNK = 1 << 20
CONTINUE_WAIT = 5.0          # seconds to wait for "100 Continue" before sending anyway
ACTIVE_CHECK_TIMEOUT = 10.0  # seconds a namenode may take to say whether it is active
DURING_DOWNLOAD = "secondary.during-download"
DURING_UPLOAD = "secondary.during-upload"


@dataclass(frozen=True, slots=True)
class ServedFile:
    """An image or edits file as the namenode describes it."""
    size: int
    md5: str
    first_txid: int
    last_txid: int


@dataclass(frozen=True, slots=True)
class NamenodeStatus:
    namespace_id: int
    txid: int
    last_checkpoint_txid: int
    last_checkpoint_time: float      # seconds since the epoch
    pending: bool
    image: ServedFile
    edits: ServedFile | None         # the rolled edits, while a checkpoint is pending

    @property
    def uncheckpointed(self) -> int:
        return self.txid - self.last_checkpoint_txid

    @classmethod
    def from_json(cls, doc: dict, url: str) -> "NamenodeStatus":
        try:
            edits = doc.get("edits")
            return cls(int(doc["namespaceId"]), int(doc["txid"]),
                       int(doc["lastCheckpointTxid"]), int(doc["lastCheckpointTime"]) / 1000,
                       bool(doc["pending"]), _remote_file(doc["image"]),
                       _remote_file(edits) if edits else None)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ProtocolError(f"malformed checkpoint status from {url}: "
                                f"{str(doc)[:200]!r}: {exc!r}") from exc


def _remote_file(doc: dict) -> ServedFile:
    return ServedFile(int(doc["size"]), str(doc["md5"]).lower(), int(doc["first_txid"]),
                      int(doc["last_txid"]))


@dataclass(frozen=True, slots=True)
class Downloaded:
    """A published download: where, how many bytes, their MD5, the txids the headers named."""
    path: Path
    size: int
    md5: str
    first_txid: int
    last_txid: int
    seconds: float


class TransferClient:
    """One namenode's transfer endpoints, over the client stack's ``Connection``; a fresh
    connection per request (transfers are rare, and a retry must never send twice).

    ``url`` may name several namenodes (an HA nameservice, or a list of URLs): ``status`` and
    ``roll``, where every checkpoint and every check begins, first make the active one this
    client's (``follow_active``); the downloads and the upload that follow stay with it, so a
    checkpoint talks to one namenode. A failover in between fails that checkpoint, and the
    next one begins at the new active."""

    def __init__(self, url: Address, secret: str, *, timeout: float = 60.0,
                 chunk_size: int = CHUNK):
        self.nameservice: Nameservice | None = None
        if not isinstance(url, str):
            nameservice = url if isinstance(url, Nameservice) else Nameservice.of_urls(url)
            urls = list(nameservice.namenodes.values())
            if not urls:
                raise SettingError(f"nameservice {nameservice.name} names no namenode")
            if len(urls) > 1:
                self.nameservice = nameservice
            url = urls[0]
        self._point_at(url)
        self.secret = secret
        self.timeout = timeout
        self.chunk_size = chunk_size

    def _point_at(self, url: str) -> None:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SettingError(f"the namenode URL must be http://HOST:PORT, not {url!r}")
        self.url = f"{parts.scheme}://{parts.netloc}"
        self._base = parts.path.rstrip("/")

    def follow_active(self) -> None:
        """With several namenodes: make the one that says ``/isActive`` (Hadoop's
        IsNameNodeActiveServlet) this client's, asking the current one first; raise
        ``NoActiveNamenodeError`` naming each one's answer when none does. With one, nothing."""
        nameservice = self.nameservice
        if nameservice is None:
            return
        ids = list(nameservice.namenodes)
        urls = [nameservice.namenodes[nn] for nn in ids]
        current = next((i for i, u in enumerate(urls) if u.rstrip("/") == self.url), 0)
        answers: dict[str, str] = {}
        for step in range(len(urls)):
            i = (current + step) % len(urls)
            answer = self._is_active(urls[i])
            if answer is None:
                if i != current:
                    log.info("following the active namenode %s", nameservice.label(ids[i]))
                self._point_at(urls[i])
                return
            answers[ids[i]] = answer
        raise NoActiveNamenodeError(
            f"no namenode of {nameservice.name} is active: " + "; ".join(
                f"{nameservice.label(nn)}: {answer}" for nn, answer in answers.items()),
            tried=answers)

    def _is_active(self, url: str) -> str | None:
        """None when the namenode at ``url`` is active, else what it answered."""
        conn = Connection(url, min(self.timeout, ACTIVE_CHECK_TIMEOUT))
        try:
            reply = conn.request("GET", conn.base + "/isActive")
        except NamenodeUnreachableError as exc:
            return answer_of(exc)
        finally:
            conn.close()
        return None if reply.status == 200 else f"not active (HTTP {reply.status})"

    # ------------------------------------------------------------------ requests

    def _connection(self) -> Connection:
        return Connection(self.url + self._base, self.timeout)

    def _target(self, path: str) -> str:
        return self._base + PREFIX + path

    def _stream(self, conn: Connection, method: str, path: str):
        """The answer of a request whose body the caller reads; a refusal raised."""
        resp = conn.stream(method, self._target(path), {SECRET_HEADER: self.secret})
        if resp.status != 200:
            raise _refused(resp, self.url + self._target(path))
        return resp

    def _json(self, method: str, path: str) -> dict:
        url = self.url + self._target(path)
        conn = self._connection()
        try:
            resp = self._stream(conn, method, path)
            body = _read_all(resp, url)
        finally:
            conn.close()
        try:
            return json.loads(body)
        except ValueError as exc:
            raise ProtocolError(f"{method} {url} answered with something other than JSON "
                                f"({len(body)} bytes): not a namenode's transfer endpoint?"
                                ) from exc

    def status(self) -> NamenodeStatus:
        self.follow_active()
        return NamenodeStatus.from_json(self._json("GET", "/status"), self.url)

    def roll(self) -> NamenodeStatus:
        """Roll the edits (or find the pending checkpoint); the status after it."""
        self.follow_active()
        return NamenodeStatus.from_json(self._json("POST", "/roll"), self.url)

    # ------------------------------------------------------------------ downloads

    def download_image(self, dest: str | Path) -> Downloaded:
        """The namenode's fsimage, verified and published as ``dest``."""
        return self._download("/image", Path(dest), IMAGE_TXID_HEADER)

    def download_edits(self, dest: str | Path) -> Downloaded:
        """The rolled edits of the pending checkpoint, verified and published as ``dest``."""
        return self._download("/edits", Path(dest), TXID_RANGE_HEADER)

    def _download(self, path: str, dest: Path, txid_header: str) -> Downloaded:
        url = self.url + self._target(path)
        tmp = dest.with_name(dest.name + TMP_SUFFIX)
        start = time.perf_counter()
        conn = self._connection()
        try:
            resp = self._stream(conn, "GET", path)
            length, md5, first, last = _announced(resp, txid_header, url)
            try:
                received, actual = self._receive(resp, tmp, length, url)
                _check_body(received, length, actual, md5, url)
            except BaseException:
                _remove(tmp)
                raise
        finally:
            conn.close()
        try:
            durable.publish(tmp, dest, synced=True)
        except OSError as exc:
            _remove(tmp)
            raise TransferError(f"cannot publish the download as {dest}: {exc}",
                                url=url) from exc
        return Downloaded(dest, received, actual, first, last, time.perf_counter() - start)

    def _receive(self, resp, tmp: Path, length: int, url: str) -> tuple[int, str]:
        """Stream the body into ``tmp`` while hashing; fsync it. Returns (bytes, md5)."""
        digest = hashlib.md5(usedforsecurity=False)
        received, half, past_half = 0, length // 2, False
        try:
            with open(tmp, "wb") as f:
                while True:
                    if not past_half and received >= half:
                        past_half = True
                        faults.hit(DURING_DOWNLOAD)
                    want = self.chunk_size if past_half else min(self.chunk_size, half - received)
                    chunk = _read_chunk(resp, want, received, length, url)
                    if not chunk:
                        break
                    f.write(chunk)
                    digest.update(chunk)
                    received += len(chunk)
                f.flush()
                durable.sync_fd(f.fileno(), str(tmp))
        except OSError as exc:
            raise TransferError(f"cannot store the download in {tmp}: {exc}", url=url) from exc
        return received, digest.hexdigest()

    # ------------------------------------------------------------------ upload

    def upload_image(self, path: str | Path, *, txid: int, namespace_id: int,
                     md5: str) -> dict:
        """PUT the image at ``path`` as the checkpoint for ``txid``; the namenode's answer."""
        target = self._target(f"/image?txid={txid}&namespaceid={namespace_id}")
        url = self.url + target
        size = os.stat(path).st_size
        headers = {SECRET_HEADER: self.secret, "Content-Length": str(size), MD5_HEADER: md5,
                   "Content-Type": "application/octet-stream"}
        conn = self._connection()
        try:
            try:
                resp = conn.send_expecting_continue(
                    "PUT", target, headers, lambda raw: self._send_body(raw, path, size, url),
                    CONTINUE_WAIT)
            except NamenodeUnreachableError as exc:
                raise NamenodeUnreachableError(f"upload of {size} bytes for txid {txid} "
                                               f"failed: {exc}", url=url) from exc
            if resp.status != 200:
                raise _refused(resp, url)
            body = _read_all(resp, url)
        finally:
            conn.close()
        try:
            return json.loads(body)
        except ValueError as exc:
            raise ProtocolError(f"the upload to {url} was answered with something other than "
                                f"JSON ({len(body)} bytes)") from exc

    def _send_body(self, conn, path, size: int, url: str) -> None:
        sent, half, past_half = 0, size // 2, False
        with open(path, "rb") as f:
            while sent < size:
                if not past_half and sent >= half:
                    past_half = True
                    faults.hit(DURING_UPLOAD)
                want = self.chunk_size if past_half else min(self.chunk_size, half - sent)
                chunk = f.read(want)
                if not chunk:
                    raise TransferError(f"{path} shrank to {sent} bytes while it was uploaded "
                                        f"({size} announced)", url=url)
                conn.send(chunk)
                sent += len(chunk)


# ---------------------------------------------------------------------- helpers

def _read_chunk(resp, want: int, received: int, length: int, url: str) -> bytes:
    try:
        return resp.read(want)
    except http.client.IncompleteRead as exc:
        raise ShortTransferError(f"download ended after {received} of {length} bytes "
                                 "(cut off?)", url=url) from exc
    except NETWORK_ERRORS as exc:
        raise NamenodeUnreachableError(f"download from {url} failed after {received} of "
                                       f"{length} bytes: {describe(exc)}", url=url) from exc


def _read_all(resp, url: str) -> bytes:
    try:
        return resp.read()
    except NETWORK_ERRORS as exc:
        raise NamenodeUnreachableError(f"the answer of {url} was cut off: {describe(exc)}",
                                       url=url) from exc


def _refused(resp, url: str) -> RefusedError:
    """The namenode's error answer as a typed error (its JSON "error" message if any)."""
    try:
        body = resp.read(64 * 1024)
    except NETWORK_ERRORS:
        body = b""
    try:
        message = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        message = body.decode("utf-8", "replace")[:200] or resp.reason
    return RefusedError(resp.status, message, url=url)


def _announced(resp, txid_header: str, url: str) -> tuple[int, str, int, int]:
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


def _check_body(received: int, length: int, actual: str, announced: str, url: str) -> None:
    if received != length:
        raise ShortTransferError(f"download ended after {received} of {length} bytes "
                                 "(cut off?)", url=url)
    if actual != announced:
        raise DigestMismatchError(f"downloaded {received} bytes with MD5 {actual}; the "
                                  f"namenode announced {announced}", url=url)


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
