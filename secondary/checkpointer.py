"""doCheckpoint and the trigger policy: the secondary's whole job, one checkpoint at a time.

A checkpoint (``Checkpointer.do_checkpoint``):

1. roll: ``POST /checkpoint/roll``; the namenode closes ``edits`` (or reports the checkpoint
   that is already pending, which is then resumed).
2. base: the namespace to replay onto. The one kept in memory since the last checkpoint is
   used when the namenode's image is the one it was built on or the one this secondary
   uploaded (same MD5) and the pending edits reach it. Otherwise it is loaded from the image
   in the checkpoint dir if that is the namenode's image, else from a downloaded image.
3. download the rolled edits (length and MD5 checked, fsynced, published) and replay them with
   ``namenode.loader.replay``, the code the namenode runs at startup.
4. save the new image to ``fsimage.ckpt``, read it back (MD5, size, footer txid, namespace),
   install it as the checkpoint dir's ``fsimage``, and upload it. An image that could not be
   verified is never uploaded.

Failures keep what is still true: a transfer failure leaves the namespace as it is (the next
try resumes: an image already merged for the pending edits is only uploaded again); a replay
that fails midway leaves a namespace that cannot be trusted, so it is dropped and reloaded from
the image. After ``checkpoint.max-retries`` merge failures in a row the namespace and the local
image are dropped and the next try starts from a freshly downloaded image.

Trigger (``TriggerPolicy``): checkpoint when a checkpoint is pending on the namenode (resume
it), or ``txid - lastCheckpointTxid >= checkpoint.txns``, or ``now - lastCheckpointTime >=
checkpoint.period``. Fault points: ``secondary.after-roll``, ``secondary.after-download``,
``secondary.during-merge`` (at the end of the replay: an injected error there is a merge
failure); the client has the others.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from formats import edits as E
from formats import fsimage as F
from formats.errors import FormatError
from namenode import durable, faults, image, loader
from namenode.errors import NamenodeError
from namenode.namespace import Namespace
from secondary.client import NamenodeStatus, RemoteFile, TransferClient
from secondary.errors import (CheckpointDirError, ImageVerifyError, MergeError, ProtocolError,
                              SecondaryError)
from secondary.storage import CheckpointDir, ImageRef, remove, verify_image

log = logging.getLogger(__name__)

PHASES = ("roll", "download", "load", "replay", "save", "upload")
AFTER_ROLL = "secondary.after-roll"
AFTER_DOWNLOAD = "secondary.after-download"
DURING_MERGE = "secondary.during-merge"


@dataclass(frozen=True, slots=True)
class TriggerPolicy:
    """When a check should become a checkpoint. ``period`` in seconds."""
    txns: int
    period: float

    def reason(self, status: NamenodeStatus, now: float) -> str | None:
        """Why to checkpoint now ("pending", "txns", "period"), or None to wait."""
        if status.pending:
            return "pending"
        if status.uncheckpointed >= self.txns:
            return "txns"
        if now - status.last_checkpoint_time >= self.period:
            return "period"
        return None


@dataclass(frozen=True)
class CheckpointResult:
    """One finished checkpoint, as logged and as the status endpoint reports it."""
    reason: str
    first_txid: int            # first txid replayed in this checkpoint (0: none replayed)
    last_txid: int             # the txid of the uploaded image
    ops: int                   # records replayed
    image_size: int
    image_md5: str
    image_downloaded: bool
    phases: dict               # phase -> seconds (0.0 when skipped)
    finished: float            # wall clock, seconds since the epoch

    def to_json(self) -> dict:
        return {**asdict(self), "phases": {k: round(v, 4) for k, v in self.phases.items()}}


@dataclass(frozen=True)
class Failure:
    time: float
    phase: str
    error: str

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class _Merged:
    """The namespace kept in memory between checkpoints."""
    ns: Namespace
    txid: int                          # the last txid applied to it
    base_md5: str                      # the namenode image it was built on (or uploaded as)
    saved: ImageRef | None = None      # the image saved from it at ``txid``, if any


class _Phases:
    """Seconds per phase of one checkpoint; ``current`` names the phase a failure hit."""

    def __init__(self):
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self.current = "status"

    @contextmanager
    def __call__(self, name: str):
        self.current = name
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - start


@dataclass
class Counters:
    checkpoints: int = 0
    failures: int = 0                  # failed checkpoints, all causes
    failures_in_row: int = 0
    merge_failures_in_row: int = 0
    images_downloaded: int = 0
    edits_downloaded: int = 0
    bytes_downloaded: int = 0
    bytes_uploaded: int = 0


class Checkpointer:
    """Checkpoints one namenode into one checkpoint directory. Not thread-safe: one caller."""

    def __init__(self, client: TransferClient, checkpoint_dir: str | Path, *,
                 policy: TriggerPolicy, max_retries: int = 3,
                 max_record: int = E.DEFAULT_MAX_RECORD, clock: Callable[[], float] = time.time):
        self.client = client
        self.dir = CheckpointDir(checkpoint_dir)
        self.policy = policy
        self.max_retries = max(1, max_retries)
        self.max_record = max_record
        self.clock = clock
        self.counters = Counters()
        self.last_result: CheckpointResult | None = None
        self.last_failure: Failure | None = None
        self.last_status: NamenodeStatus | None = None
        self.busy = threading.Event()
        self._merged: _Merged | None = None
        self._local: ImageRef | None = None
        self._opened = False

    @classmethod
    def from_config(cls, namenode_url: str, checkpoint_dir: str | Path, secret: str, config,
                    clock: Callable[[], float] = time.time) -> "Checkpointer":
        client = TransferClient(namenode_url, secret,
                                timeout=config.int("dfs.image.transfer.timeout") / 1000)
        policy = TriggerPolicy(config.int("checkpoint.txns"),
                               config.float("checkpoint.period"))
        return cls(client, checkpoint_dir, policy=policy,
                   max_retries=config.int("checkpoint.max-retries"),
                   max_record=config.int("nnlite.edits.max-record"), clock=clock)

    # ------------------------------------------------------------------ life cycle

    def open(self) -> "Checkpointer":
        """Lock the checkpoint dir, finish what a crash left, note the image it holds."""
        self.dir.open()
        self._local = self.dir.image_ref()
        self._opened = True
        if self._local:
            log.info("checkpoint directory %s holds an image at txid %d", self.dir.root,
                     self._local.txid)
        return self

    def close(self) -> None:
        if self._opened:
            self.dir.close()
            self._opened = False

    def __enter__(self) -> "Checkpointer":
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def namespace(self) -> Namespace | None:
        """The namespace kept in memory between checkpoints (None when there is none)."""
        merged = self._merged
        return merged.ns if merged else None

    @property
    def namespace_txid(self) -> int | None:
        """The txid of the namespace kept in memory (None when there is none)."""
        merged = self._merged
        return merged.txid if merged else None

    # ------------------------------------------------------------------ the daemon's tick

    def edits_size(self) -> int:
        """Transactions the namenode has not checkpointed yet."""
        return self.client.status().uncheckpointed

    def check(self) -> CheckpointResult | None:
        """Ask the namenode's status; checkpoint if the policy says so. Failures are logged,
        counted and left for the next check, never raised."""
        try:
            status = self.last_status = self.client.status()
        except SecondaryError as exc:
            log.warning("checkpoint check failed: %s", exc)
            self.last_failure = Failure(self.clock(), "status", _line(exc))
            return None
        reason = self.policy.reason(status, self.clock())
        if reason is None:
            log.debug("no checkpoint needed: %d uncheckpointed txns", status.uncheckpointed)
            return None
        try:
            return self.do_checkpoint(reason)
        except SecondaryError as exc:
            log.error("checkpoint failed; retrying at the next check: %s", _line(exc))
            return None

    # ------------------------------------------------------------------ doCheckpoint

    def do_checkpoint(self, reason: str = "forced") -> CheckpointResult:
        """One checkpoint, start to finish; raises a SecondaryError when it fails."""
        if not self._opened:
            raise CheckpointDirError("the checkpoint directory is not open: call open() first")
        phases = _Phases()
        self.busy.set()
        try:
            result = self._checkpoint(phases, reason)
        except MergeError as exc:
            self._failed(exc, phases.current, merge=True)
            raise
        except SecondaryError as exc:
            self._failed(exc, phases.current)
            raise
        except OSError as exc:
            err = CheckpointDirError(f"local I/O failed during {phases.current} in "
                                     f"{self.dir.root}: {exc}")
            self._failed(err, phases.current)
            raise err from exc
        except Exception as exc:
            self._merged = None         # unexpected: the namespace may be half updated
            self._failed(exc, phases.current)
            raise
        finally:
            self.busy.clear()
        self._succeeded(result)
        return result

    def _checkpoint(self, phases: _Phases, reason: str) -> CheckpointResult:
        with phases("roll"):
            status = self.client.roll()
        faults.hit(AFTER_ROLL)
        edits = _rolled(status, self.client.url)
        self.dir.adopt(status.namespace_id)
        merged = self._usable_merged(status)
        downloaded = merged is None and self._needs_download(status.image)
        if merged is None:
            merged = self._base(status, phases)
        first, ops = 0, 0
        if merged.txid < edits.last_txid:
            with phases("download"):
                self._download_edits(edits)
            faults.hit(AFTER_DOWNLOAD)
            first = merged.txid + 1
            with phases("replay"), _gc_paused():
                ops = self._replay(merged, edits)
        resumed = merged.saved is not None and merged.saved.txid == merged.txid
        if not resumed:
            with phases("save"):
                merged.saved = self._save(merged, status.namespace_id)
        with phases("upload"):
            self._upload(merged, status.namespace_id, recheck=resumed)
        merged.base_md5 = merged.saved.md5
        return CheckpointResult(reason, first, merged.txid, ops, merged.saved.size,
                                merged.saved.md5, downloaded, phases.seconds, self.clock())

    def _usable_merged(self, status: NamenodeStatus) -> _Merged | None:
        """The kept namespace, if the namenode's image is the one it stands on."""
        m, image_ = self._merged, status.image
        if m is None:
            return None
        known = {m.base_md5, m.saved.md5 if m.saved else None}
        if image_.md5 in known and image_.last_txid <= m.txid <= status.edits.last_txid:
            return m
        log.info("the namenode's image (txid %d, MD5 %s) is not the one the namespace in "
                 "memory (txid %d) stands on: reloading it", image_.last_txid, image_.md5,
                 m.txid)
        self._merged = None
        return None

    def _needs_download(self, image_: RemoteFile) -> bool:
        return self._local is None or self._local.md5 != image_.md5

    def _base(self, status: NamenodeStatus, phases: _Phases) -> _Merged:
        """A namespace loaded from the namenode's image (downloaded unless held locally)."""
        image_ = status.image
        if self._needs_download(image_):
            with phases("download"):
                self._local = self._download_image(status)
        with phases("load"), _gc_paused():
            try:
                ns, meta = image.load(str(self.dir.image_path), self._local.md5)
            except (FormatError, NamenodeError, OSError) as exc:
                self._local = None        # distrust the local copy: download it next time
                raise MergeError(f"cannot load {self.dir.image_path}: {exc}",
                                 phase="load") from exc
        self._merged = _Merged(ns, meta.last_txid, image_.md5)
        return self._merged

    def _download_image(self, status: NamenodeStatus) -> ImageRef:
        got = self.client.download_image(self.dir.ckpt_path)
        self.counters.images_downloaded += 1
        self.counters.bytes_downloaded += got.size
        try:
            meta = F.read_meta(str(got.path))
        except FormatError as exc:
            self.dir.discard_ckpt()
            raise ProtocolError(f"the downloaded image is not readable: {exc}",
                                url=self.client.url) from exc
        expected = (status.namespace_id, status.image.last_txid, status.image.md5)
        if (meta.namespace_id, meta.last_txid, got.md5) != expected or got.last_txid != \
                meta.last_txid:
            self.dir.discard_ckpt()
            raise ProtocolError(
                f"the downloaded image is namespace {meta.namespace_id} txid {meta.last_txid} "
                f"MD5 {got.md5}; the status announced {expected} (did the image change?)",
                url=self.client.url)
        log.info("downloaded the namenode's image: txid %d, %d bytes in %.2f s",
                 meta.last_txid, got.size, got.seconds)
        return self.dir.install_ckpt(ImageRef(got.md5, meta.last_txid, got.size))

    def _download_edits(self, edits: RemoteFile) -> None:
        got = self.client.download_edits(self.dir.edits_path)
        self.counters.edits_downloaded += 1
        self.counters.bytes_downloaded += got.size
        if (got.first_txid, got.last_txid, got.md5) != (edits.first_txid, edits.last_txid,
                                                        edits.md5):
            raise ProtocolError(f"downloaded edits {got.first_txid}-{got.last_txid} (MD5 "
                                f"{got.md5}); the roll announced {edits.first_txid}-"
                                f"{edits.last_txid} (MD5 {edits.md5})", url=self.client.url)

    def _replay(self, merged: _Merged, edits: RemoteFile) -> int:
        """Apply the downloaded edits after ``merged.txid``; a failure drops the namespace
        (it may hold part of the edits)."""
        path = str(self.dir.edits_path)
        try:
            reader, count = loader.replay(merged.ns, path, merged.txid, merged.txid + 1,
                                          self.max_record)
            if reader.last_txid != edits.last_txid or reader.torn_tail is not None:
                raise FormatError(f"the edits end at txid {reader.last_txid}; the namenode "
                                  f"announced {edits.last_txid}", path=path)
            faults.hit(DURING_MERGE)
        except (FormatError, NamenodeError, OSError) as exc:
            self._merged = None
            raise MergeError(f"replaying {path} after txid {merged.txid} failed: {exc}",
                             phase="replay", txid=merged.txid) from exc
        merged.txid = reader.last_txid
        merged.saved = None
        return count

    def _save(self, merged: _Merged, namespace_id: int) -> ImageRef:
        """Write the new image to ``fsimage.ckpt``, verify it, install it as ``fsimage``."""
        ckpt = self.dir.ckpt_path
        try:
            info = image.save(merged.ns, str(ckpt), namespace_id, merged.txid)
            durable.sync_file(ckpt)
            ref = verify_image(ckpt, info, namespace_id, merged.txid)
        except ImageVerifyError:
            remove(ckpt)
            raise
        except (OSError, ValueError, FormatError) as exc:
            remove(ckpt)
            raise MergeError(f"cannot save the image for txid {merged.txid} to {ckpt}: {exc}",
                             phase="save", txid=merged.txid) from exc
        self._local = self.dir.install_ckpt(ref)
        return ref

    def _upload(self, merged: _Merged, namespace_id: int, *, recheck: bool) -> None:
        """Upload the saved image; one saved by an earlier try is checked again first."""
        ref, path = merged.saved, self.dir.image_path
        if recheck and (not path.exists() or F.file_md5(str(path)) != ref.md5):
            merged.saved = self._local = None
            raise ImageVerifyError(f"{path} is not the image saved for txid {ref.txid} any "
                                   "more; it will be saved again", phase="upload",
                                   txid=ref.txid)
        self.client.upload_image(path, txid=ref.txid, namespace_id=namespace_id, md5=ref.md5)
        self.counters.bytes_uploaded += ref.size

    # ------------------------------------------------------------------ outcome

    def _succeeded(self, result: CheckpointResult) -> None:
        c = self.counters
        c.checkpoints += 1
        c.failures_in_row = c.merge_failures_in_row = 0
        self.last_result = result
        log.info("checkpoint done (%s): txids %s, %d ops replayed, image %d bytes%s; %s",
                 result.reason, f"{result.first_txid}-{result.last_txid}" if result.ops
                 else f"up to {result.last_txid} (nothing to replay)", result.ops,
                 result.image_size, " (namenode image downloaded)" if result.image_downloaded
                 else "", ", ".join(f"{k} {v:.3f} s" for k, v in result.phases.items()))

    def _failed(self, exc: Exception, phase: str, *, merge: bool = False) -> None:
        c = self.counters
        c.failures += 1
        c.failures_in_row += 1
        self.last_failure = Failure(self.clock(), phase, _line(exc))
        log.error("checkpoint failed in %s (%d in a row): %s", phase, c.failures_in_row,
                  _line(exc))
        if not merge:
            return
        c.merge_failures_in_row += 1
        if c.merge_failures_in_row >= self.max_retries:
            log.warning("%d merge failures in a row: dropping the namespace in memory and the "
                        "local image; the next checkpoint starts from a downloaded image",
                        c.merge_failures_in_row)
            self._merged = self._local = None
            c.merge_failures_in_row = 0


def _rolled(status: NamenodeStatus, url: str) -> RemoteFile:
    if not status.pending or status.edits is None:
        raise ProtocolError("the namenode answered the roll without a pending checkpoint",
                            url=url)
    return status.edits


@contextmanager
def _gc_paused():
    """As the namenode's loader: the cyclic collector would rescan the growing tree again and
    again while inodes are created; nothing built here is garbage until it ends."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0]
