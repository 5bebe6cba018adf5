"""The standby's checkpoints, as Hadoop's ``StandbyCheckpointer`` takes them in an HA set.

The standby already holds the namespace in memory, so it needs no download and no merge:

1. when ``checkpoint.txns`` ops or ``checkpoint.period`` seconds have passed since its last
   checkpoint, looked at no more often than every ``checkpoint.check.period`` seconds (Hadoop's
   ``dfs.namenode.checkpoint.check.period``, after an attempt that succeeded or failed), it
   asks the active to roll its edits (``POST /checkpoint/roll``, the secondary's endpoint):
   the active's segment ends at txid R and ``edits.new`` starts at R + 1;
2. it applies the shared journal up to R at least (the HA loop, which pauses tailing
   meanwhile); a standby already past R (restarted after a failed checkpoint, its edits
   replayed further) stays where it is;
3. it saves its tree as an image at its last applied txid T >= R in its own name dirs and
   starts a fresh ``edits`` (``FSNamesystem.checkpoint_standby``), as Hadoop's
   ``StandbyCheckpointer.doCheckpoint`` saves at the standby's last applied txid;
4. it uploads that image to the active (``PUT /checkpoint/image``: length, MD5 and a txid
   from R to the active's last durable one checked there before the swap ``fsimage.ckpt ->
   fsimage``, ``edits.new -> edits``; startup replays only the records after the image, so
   the edits' records R+1..T are skipped).

A failure anywhere leaves both sides consistent: the active keeps ``edits.new`` pending and the
next roll names the same R, which the standby's image already covers, so only the upload is
done again. Once the active's checkpoint moved, it purges the shared journal below it
(``quorum_journal.py``). Each checkpoint is one line in the log.

Both requests, and ``fetch_image``, are calls of ``client/peer.py``, the client between
namenodes; the secondary uploads with the same one.

``fetch_image`` is the other direction: a standby that cannot follow the journal from its own
state downloads the active's image (``GET /checkpoint/image``, length and MD5 verified, then
the image's own txid) and starts again from it (``HealthMonitor.recover``).
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nnlite.client.errors import ClientError, ProtocolError
from nnlite.client.peer import (
    IMAGE_TXID_HEADER,
    Credentials,
    Peer,
    PeerRefusedError,
    TransferFailedError,
)
from nnlite.formats.fsimage.read import read_meta
from nnlite.namenode.errors import NamenodeError
from nnlite.namenode.fsnamesystem import FSNamesystem

log = logging.getLogger(__name__)


class CheckpointRefused(NamenodeError):
    """The active did not take a step of the standby's checkpoint."""


@dataclass(frozen=True)
class FetchedImage:
    """An image downloaded from the active: its file, MD5 and txid, all verified."""
    path: Path
    md5: str
    txid: int

    def discard(self) -> None:
        shutil.rmtree(self.path.parent, ignore_errors=True)


class StandbyCheckpointer:
    def __init__(self, fs: FSNamesystem, secret: Credentials, *, period: float, txns: int,
                 check_period: float = 60.0, timeout: float = 60.0, scheme: str = "http"):
        self.fs = fs
        self.scheme = scheme        # https in an HTTPS_ONLY set (``Config.http_scheme``)
        self.secret = secret
        self.period = period
        self.txns = txns
        # StandbyCheckpointer.CheckpointerThread sleeps min(check period, period) between looks
        self.check_period = min(check_period, period)
        self.timeout = timeout
        self.last_attempt = 0.0
        self.checkpoints = 0
        self.last_error: str | None = None

    def due(self) -> bool:
        fs = self.fs
        behind = fs.last_synced_txid - fs.last_checkpoint_txid
        if behind <= 0 or time.monotonic() - self.last_attempt < self.check_period:
            return False
        return behind >= self.txns or time.time() - fs.last_checkpoint_time >= self.period

    def run(self, active_http: str, catch_up_to: Callable[[int], int]) -> int | None:
        """One checkpoint against the active at ``active_http``; ``catch_up_to(R)`` applies
        the shared journal up to txid R exactly. Returns R, or None after a logged failure."""
        self.last_attempt = time.monotonic()
        started = time.monotonic()
        try:
            status = self._roll(active_http)
            end = int(status["edits"]["last_txid"])
            if catch_up_to(end) < end:
                raise CheckpointRefused(f"could not apply the shared journal up to txid {end}")
            image = self.fs.checkpoint_standby()
            if image.last_txid < end:
                raise CheckpointRefused(f"the standby's image is at txid {image.last_txid}, "
                                        f"the active rolled at {end}")
            end = image.last_txid
            self._upload(active_http, image.name, image.size, image.md5, end)
        except (CheckpointRefused, ClientError, KeyError, ValueError, OSError) as exc:
            self.last_error = str(exc)
            log.warning("standby checkpoint failed (retried in %g s): %s",
                        self.check_period, exc)
            return None
        self.checkpoints += 1
        self.last_error = None
        log.info("standby checkpoint: image at txid %d (%d bytes) uploaded to %s in %.2f s",
                 end, image.size, active_http, time.monotonic() - started)
        return end

    def fetch_image(self, http: str) -> FetchedImage:
        """The fsimage of the namenode at ``http``, streamed into a file beside the first
        name dir, its length, MD5 and txid verified and the file fsynced."""
        target = Path(str(self.fs.dirs[0].root) + ".recover")
        target.mkdir(parents=True, exist_ok=True)
        try:
            got = self._peer(http).download("/image", target / "fsimage", IMAGE_TXID_HEADER)
        except PeerRefusedError as exc:
            raise CheckpointRefused(f"GET /checkpoint/image on {http}: {exc.status} "
                                    f"{exc.body!r}") from exc
        except (TransferFailedError, ProtocolError) as exc:
            shutil.rmtree(target, ignore_errors=True)
            raise CheckpointRefused(f"the image from {http} arrived damaged: {exc}") from exc
        fetched = FetchedImage(got.path, got.md5, got.last_txid)
        if read_meta(str(got.path)).last_txid != got.last_txid:
            fetched.discard()
            raise CheckpointRefused(f"the image from {http} does not hold txid {got.last_txid}")
        return fetched

    def _peer(self, http: str) -> Peer:
        return Peer(f"{self.scheme}://{http}", self.secret, self.timeout)

    def _roll(self, http: str) -> dict:
        try:
            return self._peer(http).roll()
        except PeerRefusedError as exc:
            raise CheckpointRefused(f"POST /checkpoint/roll on {http}: {exc.status} "
                                    f"{exc.body!r}") from exc

    def _upload(self, http: str, path: str, size: int, md5: str, txid: int) -> None:
        if os.stat(path).st_size != size:
            raise CheckpointRefused(f"{path} changed size while being uploaded")
        try:
            self._peer(http).upload_image(path, txid=txid, namespace_id=self.fs.namespace_id,
                                          md5=md5)
        except PeerRefusedError as exc:
            raise CheckpointRefused(f"the active refused the image: {exc.status} "
                                    f"{exc.body!r}") from exc
        except TransferFailedError as exc:
            raise CheckpointRefused(str(exc)) from exc
