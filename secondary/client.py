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

Each transfer is a call of ``client/peer.py``, the client between namenodes (the standby's
checkpointer uploads with the same one), on ``client/connection.py``.

Every request carries the shared secret in ``X-Nnlite-Secret``. Failures are typed: the client
stack's ``NamenodeUnreachableError`` and ``ProtocolError``, and the secondary's refused (with
the namenode's status and message), cut short and digest mismatch. Fault points:
``secondary.during-download`` (after half of a body is stored) and ``secondary.during-upload``
(after half of the image is sent).
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from nnlite.client import peer
from nnlite.client.errors import NoActiveNamenodeError, ProtocolError
from nnlite.client.failover import Address, Nameservice
from nnlite.client.peer import IMAGE_TXID_HEADER, TXID_RANGE_HEADER, Downloaded, Peer
from nnlite.durability import faults
from nnlite.secondary.errors import (
    DigestMismatchError,
    RefusedError,
    SettingError,
    ShortTransferError,
    TransferError,
)

log = logging.getLogger(__name__)

TMP_SUFFIX = peer.TMP_SUFFIX   # a download's temp file (storage.py clears leftovers)
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
    def from_json(cls, doc: dict, url: str) -> NamenodeStatus:
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


class TransferClient:
    """One namenode's transfer endpoints, over the client stack's ``Connection``; a fresh
    connection per request (transfers are rare, and a retry must never send twice).

    ``url`` may name several namenodes (an HA nameservice, or a list of URLs): ``status`` and
    ``roll``, where every checkpoint and every check begins, first make the active one this
    client's (``follow_active``); the downloads and the upload that follow stay with it, so a
    checkpoint talks to one namenode. A failover in between fails that checkpoint, and the
    next one begins at the new active."""

    def __init__(self, url: Address, secret: peer.Credentials, *, timeout: float = 60.0,
                 chunk_size: int = peer.CHUNK):
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
        return Peer(url, self.secret, min(self.timeout, ACTIVE_CHECK_TIMEOUT)).is_active()

    # ------------------------------------------------------------------ requests

    def _peer(self) -> Peer:
        return Peer(self.url + self._base, self.secret, self.timeout,
                    chunk_size=self.chunk_size)

    def status(self) -> NamenodeStatus:
        self.follow_active()
        with _secondary_errors():
            return NamenodeStatus.from_json(self._peer().status(), self.url)

    def roll(self) -> NamenodeStatus:
        """Roll the edits (or find the pending checkpoint); the status after it."""
        self.follow_active()
        with _secondary_errors():
            return NamenodeStatus.from_json(self._peer().roll(), self.url)

    # ------------------------------------------------------------------ downloads

    def download_image(self, dest: str | Path) -> Downloaded:
        """The namenode's fsimage, verified and published as ``dest``."""
        return self._download("/image", Path(dest), IMAGE_TXID_HEADER)

    def download_edits(self, dest: str | Path) -> Downloaded:
        """The rolled edits of the pending checkpoint, verified and published as ``dest``."""
        return self._download("/edits", Path(dest), TXID_RANGE_HEADER)

    def _download(self, path: str, dest: Path, txid_header: str) -> Downloaded:
        with _secondary_errors():
            return self._peer().download(path, dest, txid_header,
                                         halfway=lambda: faults.hit(DURING_DOWNLOAD))

    # ------------------------------------------------------------------ upload

    def upload_image(self, path: str | Path, *, txid: int, namespace_id: int,
                     md5: str) -> dict:
        """PUT the image at ``path`` as the checkpoint for ``txid``; the namenode's answer."""
        with _secondary_errors():
            return self._peer().upload_image(path, txid=txid, namespace_id=namespace_id,
                                             md5=md5, halfway=lambda: faults.hit(DURING_UPLOAD))


@contextmanager
def _secondary_errors():
    """The peer client's refusals and failed transfers as the secondary's typed errors (the
    same message and URL), chained to them."""
    try:
        yield
    except peer.PeerRefusedError as exc:
        raise RefusedError(exc.status, exc.message, url=exc.url) from exc
    except peer.ShortTransferError as exc:
        raise ShortTransferError(exc.message, url=exc.url) from exc
    except peer.DigestMismatchError as exc:
        raise DigestMismatchError(exc.message, url=exc.url) from exc
    except peer.TransferFailedError as exc:
        raise TransferError(exc.message, url=exc.url) from exc
