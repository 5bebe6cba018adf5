"""The standby's checkpoints, as Hadoop's ``StandbyCheckpointer`` takes them in an HA set.

The standby already holds the namespace in memory, so it needs no download and no merge:

1. when ``checkpoint.txns`` ops or ``checkpoint.period`` seconds have passed since its last
   checkpoint, it asks the active to roll its edits (``POST /checkpoint/roll``, the secondary's
   endpoint): the active's segment ends at txid R and ``edits.new`` starts at R + 1;
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

``fetch_image`` is the other direction: a standby that cannot follow the journal from its own
state downloads the active's image (``GET /checkpoint/image``, length and MD5 verified, then
the image's own txid) and starts again from it (``HAController._recover``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from nnlite.client.connection import Connection
from nnlite.client.errors import NamenodeUnreachableError
from nnlite.durability import durable
from nnlite.formats.fsimage.read import read_meta
from nnlite.namenode.errors import NamenodeError
from nnlite.namenode.fsnamesystem import FSNamesystem

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Nnlite-Secret"


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
    def __init__(self, fs: FSNamesystem, secret: str, *, period: float, txns: int,
                 timeout: float = 60.0):
        self.fs = fs
        self.secret = secret
        self.period = period
        self.txns = txns
        self.timeout = timeout
        self.last_attempt = 0.0
        self.checkpoints = 0
        self.last_error: str | None = None

    def due(self) -> bool:
        fs = self.fs
        behind = fs.last_synced_txid - fs.last_checkpoint_txid
        if behind <= 0 or time.monotonic() - self.last_attempt < min(self.period, 60.0):
            return False
        return behind >= self.txns or time.time() - fs.last_checkpoint_time >= self.period

    def run(self, active_http: str, catch_up_to: Callable[[int], int]) -> int | None:
        """One checkpoint against the active at ``active_http``; ``catch_up_to(R)`` applies
        the shared journal up to txid R exactly. Returns R, or None after a logged failure."""
        self.last_attempt = time.monotonic()
        started = time.monotonic()
        try:
            status = self._call(active_http, "POST", "/checkpoint/roll")
            end = int(status["edits"]["last_txid"])
            if catch_up_to(end) < end:
                raise CheckpointRefused(f"could not apply the shared journal up to txid {end}")
            image = self.fs.checkpoint_standby()
            if image.last_txid < end:
                raise CheckpointRefused(f"the standby's image is at txid {image.last_txid}, "
                                        f"the active rolled at {end}")
            end = image.last_txid
            self._upload(active_http, image.name, image.size, image.md5, end)
        except (CheckpointRefused, NamenodeUnreachableError, KeyError, ValueError,
                OSError) as exc:
            self.last_error = str(exc)
            log.warning("standby checkpoint failed (retried in %g s): %s",
                        min(self.period, 60.0), exc)
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
        path = target / "fsimage"
        conn = Connection(f"http://{http}", self.timeout)
        try:
            resp = conn.stream("GET", "/checkpoint/image", headers={SECRET_HEADER: self.secret})
            if resp.status != 200:
                raise CheckpointRefused(f"GET /checkpoint/image on {http}: {resp.status} "
                                        f"{resp.read(300)!r}")
            length = int(resp.getheader("Content-Length") or -1)
            md5 = (resp.getheader("X-MD5-Digest") or "").lower()
            txid = int(resp.getheader("X-Image-Txid") or -1)
            digest = hashlib.md5(usedforsecurity=False)
            received = 0
            with open(path, "wb") as f:
                while chunk := resp.read(1 << 20):
                    digest.update(chunk)
                    f.write(chunk)
                    received += len(chunk)
                f.flush()
                durable.sync_fd(f.fileno(), str(path))
        finally:
            conn.close()
        fetched = FetchedImage(path, md5, txid)
        if received != length or digest.hexdigest() != md5 or txid < 0:
            fetched.discard()
            raise CheckpointRefused(f"the image from {http} arrived damaged: {received} of "
                                    f"{length} bytes, MD5 {digest.hexdigest()} against {md5!r}")
        if read_meta(str(path)).last_txid != txid:
            fetched.discard()
            raise CheckpointRefused(f"the image from {http} does not hold txid {txid}")
        return fetched

    def _call(self, http: str, method: str, path: str) -> dict:
        conn = Connection(f"http://{http}", self.timeout)
        try:
            reply = conn.request(method, path, headers={SECRET_HEADER: self.secret})
        finally:
            conn.close()
        if reply.status != 200:
            raise CheckpointRefused(f"{method} {path} on {http}: {reply.status} "
                                    f"{reply.body[:300]!r}")
        return json.loads(reply.body)

    def _upload(self, http: str, path: str, size: int, md5: str, txid: int) -> None:
        target = (f"/checkpoint/image?txid={txid}"
                  f"&namespaceid={self.fs.namespace_id}")
        conn = Connection(f"http://{http}", self.timeout)
        try:
            with open(path, "rb") as image:
                if os.fstat(image.fileno()).st_size != size:
                    raise CheckpointRefused(f"{path} changed size while being uploaded")
                reply = conn.request("PUT", target, body=image,
                                     headers={SECRET_HEADER: self.secret,
                                              "X-MD5-Digest": md5})
        finally:
            conn.close()
        if reply.status != 200:
            raise CheckpointRefused(f"the active refused the image: {reply.status} "
                                    f"{reply.body[:300]!r}")
