"""The steps of one checkpoint (``Merger.run``), and the namespace and image they keep from one
checkpoint to the next. When to run them, and what a failure costs, is checkpointer.py's.

1. roll: ``POST /checkpoint/roll``; the namenode closes ``edits`` (or reports the checkpoint
   that is already pending, which is then resumed).
2. base: the namespace to replay onto. The one kept in memory since the last checkpoint is
   used when the namenode's image is the one it was built on or the one this secondary
   uploaded (same MD5) and the pending edits reach it. Otherwise it is loaded from the image
   in the checkpoint dir if that is the namenode's image, else from a downloaded image.
3. download the rolled edits (length and MD5 checked, fsynced, published) and replay them with
   ``namenode.image.startup.replay`` on the ``Tree``, the code the namenode runs at startup.
4. save the new image to ``fsimage.ckpt``, read it back (MD5, size, footer txid, namespace),
   install it as the checkpoint dir's ``fsimage``, and upload it. An image that could not be
   verified is never uploaded.

Failures keep what is still true: a transfer failure leaves the namespace as it is (the next
try resumes: an image already merged for the pending edits is only uploaded again); a replay
that fails midway leaves a namespace that cannot be trusted, so it is dropped (and reloaded
from the image next time); a local image that cannot be loaded is forgotten (downloaded next
time). Fault points: ``secondary.after-roll``, ``secondary.after-download``,
``secondary.during-merge`` (at the end of the replay: an injected error there is a merge
failure); the client has the others.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

from nnlite.client.errors import ProtocolError
from nnlite.durability import durable, faults
from nnlite.formats.errors import FormatError
from nnlite.formats.fsimage.md5 import file_md5
from nnlite.formats.fsimage.read import read_meta
from nnlite.namenode.errors import NamenodeError
from nnlite.namenode.image import columns, startup
from nnlite.namenode.namespace.tree import Tree
from nnlite.secondary.client import NamenodeStatus, ServedFile, TransferClient
from nnlite.secondary.errors import ImageVerifyError, MergeError
from nnlite.secondary.outcome import CheckpointResult, Counters, Phases
from nnlite.secondary.storage import CheckpointDir, ImageRef, remove, verify_image

# The checkpointer's logger: these lines were its own before the steps had a module.
log = logging.getLogger(__name__)

AFTER_ROLL = "secondary.after-roll"
AFTER_DOWNLOAD = "secondary.after-download"
DURING_MERGE = "secondary.during-merge"


@dataclass
class Merged:
    """The tree kept in memory between checkpoints."""
    tree: Tree
    txid: int                          # the last txid applied to it
    base_md5: str                      # the namenode image it was built on (or uploaded as)
    saved: ImageRef | None = None      # the image saved from it at ``txid``, if any


class Merger:
    """Checkpoints one namenode into one checkpoint directory, step by step. ``merged`` is the
    namespace kept in memory (None: load one next time), ``local`` the image the checkpoint
    dir holds (None: download one next time). The owner sets ``local`` when it opens the dir
    and may drop either; only the steps set them otherwise. Downloads and uploads are added
    to ``counters``. Not thread-safe: one caller."""

    def __init__(self, client: TransferClient, checkpoint_dir: CheckpointDir,
                 counters: Counters, *, max_record: int, clock: Callable[[], float]):
        self.client = client
        self.dir = checkpoint_dir
        self.counters = counters
        self.max_record = max_record
        self.clock = clock
        self.merged: Merged | None = None
        self.local: ImageRef | None = None

    def run(self, phases: Phases, reason: str) -> CheckpointResult:
        """One checkpoint, timed in ``phases``; raises when a step fails."""
        with phases("roll"):
            status = self.client.roll()
        faults.hit(AFTER_ROLL)
        edits = _rolled(status, self.client.url)
        self.dir.adopt(status.namespace_id)
        merged = self._usable_merged(status, edits)
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
        saved = merged.saved
        resumed = saved is not None and saved.txid == merged.txid
        if saved is None or not resumed:
            with phases("save"):
                saved = merged.saved = self._save(merged, status.namespace_id)
        with phases("upload"):
            self._upload(merged, status.namespace_id, recheck=resumed)
        merged.base_md5 = saved.md5
        return CheckpointResult(reason, first, merged.txid, ops, saved.size, saved.md5,
                                downloaded, phases.seconds, self.clock())

    def _usable_merged(self, status: NamenodeStatus, edits: ServedFile) -> Merged | None:
        """The kept namespace, if the namenode's image is the one it stands on."""
        m, image_ = self.merged, status.image
        if m is None:
            return None
        known = {m.base_md5, m.saved.md5 if m.saved else None}
        if image_.md5 in known and image_.last_txid <= m.txid <= edits.last_txid:
            return m
        log.info("the namenode's image (txid %d, MD5 %s) is not the one the namespace in "
                 "memory (txid %d) stands on: reloading it", image_.last_txid, image_.md5,
                 m.txid)
        self.merged = None
        return None

    def _needs_download(self, image_: ServedFile) -> bool:
        return self.local is None or self.local.md5 != image_.md5

    def _base(self, status: NamenodeStatus, phases: Phases) -> Merged:
        """A namespace loaded from the namenode's image (downloaded unless held locally)."""
        image_ = status.image
        if self._needs_download(image_):
            with phases("download"):
                self.local = self._download_image(status)
        local = self.local
        if local is None:       # never: held already, or downloaded just above
            raise MergeError("no local copy of the namenode's image to load", phase="load")
        with phases("load"), _gc_paused():
            try:
                tree, meta = columns.load(str(self.dir.image_path), local.md5)
            except (FormatError, NamenodeError, OSError) as exc:
                self.local = None         # distrust the local copy: download it next time
                raise MergeError(f"cannot load {self.dir.image_path}: {exc}",
                                 phase="load") from exc
        self.merged = Merged(tree, meta.last_txid, image_.md5)
        return self.merged

    def _download_image(self, status: NamenodeStatus) -> ImageRef:
        got = self.client.download_image(self.dir.ckpt_path)
        self.counters.images_downloaded += 1
        self.counters.bytes_downloaded += got.size
        try:
            meta = read_meta(str(got.path))
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

    def _download_edits(self, edits: ServedFile) -> None:
        got = self.client.download_edits(self.dir.edits_path)
        self.counters.edits_downloaded += 1
        self.counters.bytes_downloaded += got.size
        if (got.first_txid, got.last_txid, got.md5) != (edits.first_txid, edits.last_txid,
                                                        edits.md5):
            raise ProtocolError(f"downloaded edits {got.first_txid}-{got.last_txid} (MD5 "
                                f"{got.md5}); the roll announced {edits.first_txid}-"
                                f"{edits.last_txid} (MD5 {edits.md5})", url=self.client.url)

    def _replay(self, merged: Merged, edits: ServedFile) -> int:
        """Apply the downloaded edits after ``merged.txid``; a failure drops the namespace
        (it may hold part of the edits)."""
        path = str(self.dir.edits_path)
        try:
            reader, count = startup.replay(merged.tree, path, merged.txid, merged.txid + 1,
                                          self.max_record)
            if reader.last_txid != edits.last_txid or reader.torn_tail is not None:
                raise FormatError(f"the edits end at txid {reader.last_txid}; the namenode "
                                  f"announced {edits.last_txid}", path=path)
            faults.hit(DURING_MERGE)
        except (FormatError, NamenodeError, OSError) as exc:
            self.merged = None
            raise MergeError(f"replaying {path} after txid {merged.txid} failed: {exc}",
                             phase="replay", txid=merged.txid) from exc
        merged.txid = reader.last_txid
        merged.saved = None
        return count

    def _save(self, merged: Merged, namespace_id: int) -> ImageRef:
        """Write the new image to ``fsimage.ckpt``, verify it, install it as ``fsimage``."""
        ckpt = self.dir.ckpt_path
        try:
            info = columns.save(merged.tree, str(ckpt), namespace_id, merged.txid)
            durable.sync_file(ckpt)
            ref = verify_image(ckpt, info, namespace_id, merged.txid)
        except ImageVerifyError:
            remove(ckpt)
            raise
        except (OSError, ValueError, FormatError) as exc:
            remove(ckpt)
            raise MergeError(f"cannot save the image for txid {merged.txid} to {ckpt}: {exc}",
                             phase="save", txid=merged.txid) from exc
        self.local = self.dir.install_ckpt(ref)
        return ref

    def _upload(self, merged: Merged, namespace_id: int, *, recheck: bool) -> None:
        """Upload the saved image; one saved by an earlier try is checked again first."""
        ref, path = merged.saved, self.dir.image_path
        if ref is None:         # never: run saves it first
            raise MergeError(f"no image was saved for txid {merged.txid} to upload",
                             phase="upload", txid=merged.txid)
        if recheck and (not path.exists() or file_md5(str(path)) != ref.md5):
            merged.saved = self.local = None
            raise ImageVerifyError(f"{path} is not the image saved for txid {ref.txid} any "
                                   "more; it will be saved again", phase="upload",
                                   txid=ref.txid)
        self.client.upload_image(path, txid=ref.txid, namespace_id=namespace_id, md5=ref.md5)
        self.counters.bytes_uploaded += ref.size


def _rolled(status: NamenodeStatus, url: str) -> ServedFile:
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
