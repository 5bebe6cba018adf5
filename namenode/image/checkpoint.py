"""The namenode's side of a checkpoint, on disk: serve the files, verify an upload, swap, retain.

States: *idle* (only ``edits``) and *pending* (``edits`` rolled, new ops go to ``edits.new``).
A roll in the pending state does not roll again: it reports the pending checkpoint, so a
secondary that crashed mid-checkpoint resumes it. An upload is accepted only while pending,
only for ``txid == end of the rolled edits``, one at a time; it lands in a file of its own,
``fsimage.ckpt_<txid>`` (``install.upload_file``: a standby's own save, which installs through
``fsimage.ckpt``, may run while an upload to it as the active it was is still streaming), and
is verified (length, MD5, Parquet footer: namespace id and txid) before the swap, which, under
the namesystem lock, renames it to ``fsimage.ckpt`` and goes on as ``install.py`` does
(``fsimage.ckpt -> fsimage``, ``edits.new -> edits``, the directory fsynced after each step).
``FSImage`` (``fsimage.py``) owns the ``Checkpoints`` of its name dirs and runs the steps that
need the namesystem's lock or its journal (the roll, the status, the swap with the checkpoint
bookkeeping); this module does the file work it asks for.

Retention: before a swap, the image being replaced and the edits it was rolled with are
hard-linked into ``<name-dir>/previous.checkpoint/`` as ``fsimage_<txid>`` (+ ``.md5``) and
``edits_<first>-<last>``; the newest ``checkpoints.retained`` images are kept, with every
edits segment that follows the oldest kept image, so each kept image can be rolled forward.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nnlite.durability import durable
from nnlite.formats.edits import HEADER_SIZE, decode_header
from nnlite.formats.errors import FormatError
from nnlite.formats.fsimage.layout import ImageMeta
from nnlite.formats.fsimage.md5 import file_md5, parse_md5_sidecar
from nnlite.formats.fsimage.read import read_meta
from nnlite.namenode.errors import NamenodeError
from nnlite.namenode.image.install import finish_swap, mark_verified, upload_file
from nnlite.namenode.storage.namedir import (
    CKPT,
    EDITS,
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
    """The checkpoint files of one FSNamesystem's name dirs: the image and the rolled edits
    described for download, the one upload at a time, the swap and retention."""

    def __init__(self, dirs: list[NameDir], namespace_id: int, retained: int = 2):
        self.dirs = dirs
        self.namespace_id = namespace_id
        self.retained = retained
        self.metrics = CheckpointMetrics()
        self._rolled: FileInfo | None = None
        self._image: FileInfo | None = None
        self._upload_lock = threading.Lock()
        self._roll_started = 0.0

    # ------------------------------------------------------------------ the files served

    def primary(self) -> NameDir:
        healthy = [d for d in self.dirs if d.healthy]
        if not healthy:
            raise CheckpointError(503, "no healthy name directory")
        return healthy[0]

    def rolled_now(self) -> None:
        """The edits were just rolled for a checkpoint: its duration counts from now."""
        self._roll_started = time.monotonic()

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

    def rolled(self, path: Path, size: int, last_txid: int) -> FileInfo:
        """The closed ``edits`` at ``path`` (``size`` bytes, up to ``last_txid``) of the
        pending checkpoint: its first txid from its header, its digest computed once (the
        caller has released the namesystem lock). Kept by its name, size and end: a later
        roll ends later, so a description is never served for another segment."""
        cached = self._rolled
        if cached is not None and (cached.name, cached.size, cached.last_txid) == \
                (str(path), size, last_txid):
            return cached
        with open(path, "rb") as f:
            first = decode_header(f.read(HEADER_SIZE), path=str(path))
        info = FileInfo(str(path), size, file_md5(str(path)), first, last_txid)
        self._rolled = info
        return info

    # ------------------------------------------------------------------ upload

    def begin_upload(self, txid: int, md5: str, length: int,
                     rolled: FileInfo) -> ImageUpload:
        """The sink of an announced upload for the pending checkpoint's ``rolled`` edits (the
        namesystem checked its namespace and txid first); one at a time. The image covers
        the rolled edits at least: the secondary's ends with them, an HA standby's may go
        further (it saves at its last applied txid), and startup replays only the records
        after the image from the edits that start after the roll."""
        if txid < rolled.last_txid:
            raise self.refuse(409, f"Image for txid {txid} refused: the pending checkpoint "
                                    f"covers the edits up to txid {rolled.last_txid}")
        if not self._upload_lock.acquire(blocking=False):
            raise self.refuse(409, "Another checkpointer is already uploading an image for "
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
        return max((d for d in self.dirs if d.healthy), key=free)

    def refuse(self, status: int, message: str) -> CheckpointError:
        """A transfer refused (counted, logged), to raise."""
        self.metrics.refused += 1
        log.warning("checkpoint transfer refused (%d): %s", status, message)
        return CheckpointError(status, message)

    def verify(self, upload: ImageUpload) -> ImageMeta:
        """The stored upload checked (length, digest, footer) and fsynced, before the swap."""
        try:
            return upload.verify()
        except OSError as exc:          # the final fsync on a full disk
            upload.discard()
            raise self.refuse(507, f"cannot store the image in {upload.dir.root}: "
                                   f"{exc}") from exc

    def swap(self, upload: ImageUpload, rolled: FileInfo,
             drop: Callable[[NameDir, str], None]) -> None:
        """Put a verified upload in place in every healthy dir (namesystem lock held): a dir
        that cannot take the image is failed through ``drop`` (the journal's), as Hadoop
        reports a storage dir on a failed save, and the checkpoint goes on in the others;
        then each keeps the image it replaces (retention) and finishes the swap."""
        try:
            durable.rename_durably(upload.path, upload.dir.file(CKPT))
        except OSError as exc:      # the caller discards a refused upload
            raise self.refuse(507, f"cannot stage the image in {upload.dir.root}: "
                                   f"{exc}") from exc
        for d in [d for d in self.dirs if d.healthy and d is not upload.dir]:
            try:
                copy_file(upload.dir.file(CKPT), d.file(CKPT))
                mark_verified(d, upload.md5)
            except OSError as exc:
                durable.remove_durably(d.file(CKPT))
                drop(d, f"cannot store the checkpoint image: {exc}")
        try:
            mark_verified(upload.dir, upload.md5)
        except OSError as exc:      # as a crash here would: startup finishes it
            raise self.refuse(507, f"cannot mark the image verified in "
                                   f"{upload.dir.root}: {exc}") from exc
        for d in [d for d in self.dirs if d.healthy]:
            self._retain(d, rolled)
            finish_swap(d, edits_new_to_edits=True)

    def installed(self, upload: ImageUpload, meta: ImageMeta, started: float,
                  verified: float) -> dict:
        """Count and log an installed checkpoint; what the upload is answered."""
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

    def end_upload(self) -> None:
        """The upload was installed or refused: the next one may begin."""
        self._upload_lock.release()

    def abort(self, upload: ImageUpload, reason: str) -> None:
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
    """Receives an image into ``path`` (``install.upload_file``) while hashing it."""

    def __init__(self, checkpoints: Checkpoints, d: NameDir, txid: int, md5: str, length: int):
        self.checkpoints = checkpoints
        self.dir = d
        self.txid = txid
        self.md5 = md5
        self.length = length
        self.size = 0
        self._hash = hashlib.md5()
        self.error: CheckpointError | None = None
        self.path = upload_file(d, txid)
        # open across the upload's write() calls; close(), verify() or discard() end it
        self._file = open(self.path, "wb")  # noqa: SIM115

    def write(self, data: bytes) -> None:
        """Store and hash ``data``; on a full disk the partial image is removed at once
        (freeing its space) and ``error`` says why, and the rest of the body is counted only:
        the sink answers with it once the body is in."""
        if self.error is None:
            try:
                self._file.write(data)
            except OSError as exc:
                self.discard()
                self.error = self.checkpoints.refuse(
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
        fail = self.checkpoints.refuse
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
            meta = read_meta(str(self.path))
        except FormatError as exc:
            self.discard()
            raise fail(400, f"Uploaded image is not readable: {exc}") from exc
        namespace_id = self.checkpoints.namespace_id
        if meta.namespace_id != namespace_id or meta.last_txid != self.txid:
            self.discard()
            raise fail(400, f"Uploaded image is for namespace {meta.namespace_id} txid "
                            f"{meta.last_txid}; expected {namespace_id} txid {self.txid}")
        return meta

    def discard(self) -> None:
        if not self._file.closed:
            # its buffer could not be written: gone anyway
            with contextlib.suppress(OSError):
                self._file.close()
        durable.remove_durably(self.path)


def _link(src: Path, dst: Path) -> None:
    if dst.exists():
        dst.unlink()
    os.link(src, dst)
