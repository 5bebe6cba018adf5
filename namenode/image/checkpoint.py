"""The namenode's side of a checkpoint: roll, serve the files, verify an upload, swap, retain.

States: *idle* (only ``edits``) and *pending* (``edits`` rolled, new ops go to ``edits.new``).
A roll in the pending state does not roll again: it reports the pending checkpoint, so a
secondary that crashed mid-checkpoint resumes it. An upload is accepted only while pending,
only for ``txid == end of the rolled edits``, one at a time; it lands in ``fsimage.ckpt`` and
is verified (length, MD5, Parquet footer: namespace id and txid) before the swap
(``install.py``: ``fsimage.ckpt -> fsimage``, ``edits.new -> edits``, the directory fsynced
after each step).

Retention: before a swap, the image being replaced and the edits it was rolled with are
hard-linked into ``<name-dir>/previous.checkpoint/`` as ``fsimage_<txid>`` (+ ``.md5``) and
``edits_<first>-<last>``; the newest ``checkpoints.retained`` images are kept, with every
edits segment that follows the oldest kept image, so each kept image can be rolled forward.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from dataclasses import asdict, dataclass

from nnlite.durability import durable, faults
from nnlite.formats.edits import HEADER_SIZE, decode_header
from nnlite.formats.errors import FormatError
from nnlite.formats.fsimage.layout import ImageMeta
from nnlite.formats.fsimage.md5 import file_md5, parse_md5_sidecar
from nnlite.formats.fsimage.read import read_meta
from nnlite.namenode.errors import NamenodeError
from nnlite.namenode.image.install import finish_swap, mark_verified
from nnlite.namenode.storage.namedir import (
    CKPT,
    EDITS,
    EDITS_NEW,
    IMAGE,
    IMAGE_MD5,
    NameDir,
    copy_file,
)

log = logging.getLogger(__name__)

PREVIOUS = "previous.checkpoint"


class CheckpointError(NamenodeError):
    """A transfer refused; ``status`` is the HTTP status the transfer endpoint answers."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class FileInfo:
    name: str
    size: int
    md5: str
    first_txid: int
    last_txid: int


@dataclass
class CheckpointMetrics:
    checkpoints: int = 0
    last_duration: float = 0.0
    last_image_size: int = 0
    bytes_sent: int = 0
    bytes_received: int = 0
    refused: int = 0


class Checkpoints:
    """Owns the pending-checkpoint state of one FSNamesystem."""

    def __init__(self, fs, retained: int = 2):
        self.fs = fs
        self.retained = retained
        self.metrics = CheckpointMetrics()
        self._rolled: FileInfo | None = None
        self._image: FileInfo | None = None
        self._upload_lock = threading.Lock()
        self._roll_started = 0.0
        self._generation = 0           # counts rolls and swaps: a stale digest is not cached

    # ------------------------------------------------------------------ status and roll

    def primary(self) -> NameDir:
        healthy = [d for d in self.fs.dirs if d.healthy]
        if not healthy:
            raise CheckpointError(503, "no healthy name directory")
        return healthy[0]

    @property
    def pending(self) -> bool:
        return self.fs.journal.segment_name == EDITS_NEW

    def status(self) -> dict:
        fs = self.fs
        while True:
            edits = self._rolled_if_pending()       # outside the lock: it may hash the file
            with fs.lock:
                if self.pending == (edits is not None):
                    return {"namespaceId": fs.namespace_id, "txid": fs.journal.txid,
                            "lastCheckpointTxid": fs.last_checkpoint_txid,
                            "lastCheckpointTime": int(fs.last_checkpoint_time * 1000),
                            "pending": self.pending, "image": asdict(self.image()),
                            "edits": asdict(edits) if edits else None}
            # a roll or a swap came in between: look again

    def _rolled_if_pending(self) -> FileInfo | None:
        try:
            return self.rolled() if self.pending else None
        except CheckpointError as exc:
            if exc.status == 409:
                return None
            raise

    def roll(self) -> dict:
        """Roll ``edits`` to ``edits.new`` unless a checkpoint is already pending."""
        fs = self.fs
        with fs.lock:
            fs.journal.check_writable()
            if not self.pending:
                end = fs.journal.roll(fs.failed_dirs())
                self._rolled = None
                self._generation += 1
                self._roll_started = time.monotonic()
                log.info("rolled edits at txid %d for a checkpoint", end)
            else:
                log.info("roll asked while a checkpoint is pending: resuming it")
        return self.status()

    def image(self) -> FileInfo:
        d = self.primary()
        path = d.file(IMAGE)
        stat = path.stat()
        cached = self._image
        if cached is None or cached.size != stat.st_size or cached.name != str(path) \
                or getattr(self, "_image_mtime", None) != stat.st_mtime_ns:
            md5 = parse_md5_sidecar(d.file(IMAGE_MD5).read_text())
            txid = read_meta(str(path)).last_txid
            cached = FileInfo(str(path), stat.st_size, md5, 0, txid)
            self._image, self._image_mtime = cached, stat.st_mtime_ns
        return cached

    def rolled(self) -> FileInfo:
        """The closed ``edits`` of the pending checkpoint. Its txids come from its header and
        from ``edits.new``, which continues it; its digest is computed once, outside the
        namesystem lock (hashing a large file there would stall every writer)."""
        fs = self.fs
        with fs.lock:
            if not self.pending:
                raise CheckpointError(409, "No checkpoint is pending: roll the edits first")
            if self._rolled is not None:
                return self._rolled
            generation = self._generation
            last = fs.journal.roll()        # while pending, a no-op naming the rolled end
            path = self.primary().file(EDITS)
            size = path.stat().st_size
        with open(path, "rb") as f:
            first = decode_header(f.read(HEADER_SIZE), path=str(path))
        info = FileInfo(str(path), size, file_md5(str(path)), first, last)
        with fs.lock:
            if self._generation == generation and self.pending:
                self._rolled = info
        return info

    # ------------------------------------------------------------------ upload

    def begin_upload(self, txid: int, md5: str, length: int, namespace_id: int) -> "ImageUpload":
        """Check an announced upload before any byte is stored; returns its sink."""
        fs = self.fs
        if namespace_id != fs.namespace_id:
            raise self._refuse(403, f"Image for namespace {namespace_id} refused: this "
                                    f"namenode serves namespace {fs.namespace_id}")
        if txid <= fs.last_checkpoint_txid:
            raise self._refuse(410, f"Image for txid {txid} refused: a checkpoint up to txid "
                                    f"{fs.last_checkpoint_txid} is already in place")
        rolled = self.rolled()
        if txid != rolled.last_txid:
            raise self._refuse(409, f"Image for txid {txid} refused: the pending checkpoint "
                                    f"covers the edits up to txid {rolled.last_txid}")
        if not self._upload_lock.acquire(blocking=False):
            raise self._refuse(409, "Another checkpointer is already uploading an image for "
                                    f"txid {txid}")
        return ImageUpload(self, self._roomiest(), txid, md5.lower(), length)

    def _roomiest(self) -> NameDir:
        """The healthy dir with the most free space: the upload lands there first."""
        def free(d: NameDir) -> int:
            try:
                st = os.statvfs(d.root)
                return st.f_bavail * st.f_frsize
            except OSError:
                return -1
        self.primary()                      # raises when none is healthy
        return max((d for d in self.fs.dirs if d.healthy), key=free)

    def _refuse(self, status: int, message: str) -> CheckpointError:
        self.metrics.refused += 1
        log.warning("checkpoint transfer refused (%d): %s", status, message)
        return CheckpointError(status, message)

    def install(self, upload: "ImageUpload") -> dict:
        """Verify the stored upload and swap it in (runs in a worker thread)."""
        fs = self.fs
        try:
            started = time.monotonic()
            try:
                meta = upload.verify()
            except OSError as exc:          # the final fsync on a full disk
                upload.discard()
                raise self._refuse(507, f"cannot store the image in {upload.dir.root}: "
                                        f"{exc}") from exc
            faults.hit("checkpoint.after-ckpt-written")
            verified = time.monotonic()
            rolled = self.rolled()
            with fs.lock:
                # A dir that cannot take the image is failed, as Hadoop reports a storage
                # dir on a failed save; the checkpoint goes on in the others.
                for d in [d for d in fs.dirs if d.healthy and d is not upload.dir]:
                    try:
                        copy_file(upload.dir.file(CKPT), d.file(CKPT))
                        mark_verified(d, upload.md5)
                    except OSError as exc:
                        durable.remove_durably(d.file(CKPT))
                        fs.journal.drop(d, f"cannot store the checkpoint image: {exc}")
                try:
                    mark_verified(upload.dir, upload.md5)
                except OSError as exc:      # as a crash here would: startup finishes it
                    raise self._refuse(507, f"cannot mark the image verified in "
                                            f"{upload.dir.root}: {exc}") from exc
                dirs = [d for d in fs.dirs if d.healthy]
                for d in dirs:
                    self._retain(d, rolled)
                    finish_swap(d, edits_new_to_edits=True)
                fs.journal.segment_renamed(EDITS)
                faults.hit("checkpoint.after-swap")
                fs.last_checkpoint_txid = meta.last_txid
                fs.last_checkpoint_time = time.time()
                self._rolled = None
                self._generation += 1
            now = time.monotonic()
            took = now - self._roll_started if self._roll_started else 0.0
            m = self.metrics
            m.checkpoints += 1
            m.last_duration, m.last_image_size = took, upload.size
            m.bytes_received += upload.size
            log.info("checkpoint installed: image txid %d, %d bytes, %.2f s since the roll "
                     "(verify %.3f s, swap %.3f s)", meta.last_txid, upload.size, took,
                     verified - started, now - verified)
            return {"txid": meta.last_txid, "size": upload.size, "md5": upload.md5}
        finally:
            self._upload_lock.release()

    def abort(self, upload: "ImageUpload", reason: str) -> None:
        log.warning("checkpoint upload for txid %d abandoned: %s", upload.txid, reason)
        upload.discard()
        self._upload_lock.release()

    # ------------------------------------------------------------------ retention

    def _retain(self, d: NameDir, rolled: FileInfo) -> None:
        """Hard-link the image being replaced and its rolled edits into previous.checkpoint/,
        then keep the newest ``retained`` images and the edits after the oldest kept one."""
        area = d.root / PREVIOUS
        area.mkdir(exist_ok=True)
        old = read_meta(str(d.file(IMAGE))).last_txid
        _link(d.file(IMAGE), area / f"fsimage_{old}")
        _link(d.file(IMAGE_MD5), area / f"fsimage_{old}.md5")
        _link(d.file(EDITS), area / f"edits_{rolled.first_txid}-{rolled.last_txid}")
        durable.sync_dir(area)
        images = sorted(int(p.name.split("_")[1]) for p in area.glob("fsimage_*")
                        if not p.name.endswith(".md5"))
        keep = images[-self.retained:] if self.retained > 0 else []
        oldest = keep[0] if keep else rolled.last_txid + 1
        for p in list(area.iterdir()):
            if p.name.startswith("fsimage_"):
                txid = int(p.name.split("_")[1].split(".")[0])
                if txid not in keep:
                    p.unlink()
            elif p.name.startswith("edits_"):
                last = int(p.name.split("-")[1])
                if last <= oldest:
                    p.unlink()
        durable.sync_dir(area)


class ImageUpload:
    """Receives an image into ``fsimage.ckpt`` while hashing it."""

    def __init__(self, checkpoints: Checkpoints, d: NameDir, txid: int, md5: str, length: int):
        self.checkpoints = checkpoints
        self.dir = d
        self.txid = txid
        self.md5 = md5
        self.length = length
        self.size = 0
        self._hash = hashlib.md5()
        self.error: CheckpointError | None = None
        self._file = open(d.file(CKPT), "wb")

    def write(self, data: bytes) -> None:
        """Store and hash ``data``; on a full disk the partial image is removed at once
        (freeing its space) and ``error`` says why, and the rest of the body is counted only:
        the sink answers with it once the body is in."""
        if self.error is None:
            try:
                self._file.write(data)
            except OSError as exc:
                self.discard()
                self.error = self.checkpoints._refuse(
                    507, f"cannot store the image in {self.dir.root}: {exc}")
        self._hash.update(data)
        self.size += len(data)

    def close(self) -> None:
        if not self._file.closed:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()

    def verify(self) -> ImageMeta:
        """Length, digest, then the Parquet footer: the upload must be this checkpoint."""
        self.close()
        fail = self.checkpoints._refuse
        if self.size != self.length:
            self.discard()
            raise fail(400, f"Image upload is {self.size} bytes, {self.length} were announced "
                            "(cut off?)")
        actual = self._hash.hexdigest()
        if actual != self.md5:
            self.discard()
            raise fail(400, f"Image upload digest {actual} does not match the announced "
                            f"{self.md5}")
        try:
            meta = read_meta(str(self.dir.file(CKPT)))
        except FormatError as exc:
            self.discard()
            raise fail(400, f"Uploaded image is not readable: {exc}") from exc
        fs = self.checkpoints.fs
        if meta.namespace_id != fs.namespace_id or meta.last_txid != self.txid:
            self.discard()
            raise fail(400, f"Uploaded image is for namespace {meta.namespace_id} txid "
                            f"{meta.last_txid}; expected {fs.namespace_id} txid {self.txid}")
        return meta

    def discard(self) -> None:
        if not self._file.closed:
            try:
                self._file.close()
            except OSError:                  # its buffer could not be written: gone anyway
                pass
        durable.remove_durably(self.dir.file(CKPT))


def _link(src, dst) -> None:
    if dst.exists():
        dst.unlink()
    os.link(src, dst)
