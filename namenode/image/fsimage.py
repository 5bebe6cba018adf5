"""The namesystem's image side, as Hadoop's ``FSImage`` is ``FSNamesystem``'s: the last
checkpoint (its txid and time), saving the tree as the image, rolling the edits for a
checkpoint, and what the checkpoint endpoints serve and accept (``ImageServlet``'s part: the
status a checkpointer polls, the image and the rolled edits it downloads, the upload it
sends and its install, Hadoop 1's ``rollFSImage``).

``FSNamesystem`` owns one and keeps the doors that decide whether an op may run: it calls the
``*_locked`` steps under its lock after its operation check (``save_namespace``,
``roll_edits``, ``checkpoint_standby``). The endpoints' steps take that lock themselves,
hashing and verifying files outside it, and ask the namesystem's check for ops that run in
every state (``check``) under it. The files themselves are ``checkpoint.py``'s."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict

from nnlite.durability import faults
from nnlite.namenode.image import columns, install, startup
from nnlite.namenode.image.checkpoint import (
    CheckpointError,
    CheckpointMetrics,
    Checkpoints,
    FileInfo,
    ImageUpload,
)
from nnlite.namenode.journal.journal import Journal
from nnlite.namenode.namespace.tree import Tree
from nnlite.namenode.storage.namedir import EDITS, EDITS_NEW, NameDir

log = logging.getLogger(__name__)


class FSImage:
    """The image and the checkpoints of ``dirs``, whose edits ``journal`` writes."""

    def __init__(self, dirs: list[NameDir], journal: Journal, loaded: startup.Loaded,
                 lock: threading.Lock, check: Callable[[], None]) -> None:
        """``lock``: the namesystem's; ``check``: its operation check for an op that runs in
        every state (UNCHECKED), called under the lock."""
        self.dirs = dirs
        self.journal = journal
        self.lock = lock
        self.check = check
        self.namespace_id = loaded.namespace_id
        self.checkpoints = Checkpoints(dirs, loaded.namespace_id)
        self.last_checkpoint_txid = loaded.image_txid
        # The image's own creation time: a restart must not reset the checkpoint.period clock.
        self.last_checkpoint_time = loaded.image_time or time.time()

    # ------------------------------------------------------------ under the namesystem lock

    def save_locked(self, tree: Tree, *, empty: bool) -> int:
        """Write ``tree`` as the image of every txid logged and start a fresh ``edits``
        (``empty``: with no record, as an HA standby's); returns the image's txid."""
        self.journal.sync_all_locked()
        txid = self.journal.txid
        self._install(tree, txid)
        self.journal.restart_segment(empty=empty)
        self.checkpointed(txid)
        log.info("saved namespace at txid %d", txid)
        return txid

    def save_standby_locked(self, tree: Tree) -> FileInfo:
        """A standby's checkpoint: ``tree`` saved at the last applied txid and a fresh, empty
        ``edits`` after it, unless the image already holds that txid; returns the image."""
        self.journal.sync_all_locked()
        txid = self.journal.txid
        if txid > self.last_checkpoint_txid:
            self._install(tree, txid)
            self.journal.restart_segment(empty=True)
            self.checkpointed(txid)
        return self.checkpoints.image()

    def _install(self, tree: Tree, txid: int) -> None:
        healthy = [d for d in self.dirs if d.healthy]
        install.install(healthy, lambda p: columns.save(tree, p, self.namespace_id, txid))

    def checkpointed(self, txid: int) -> None:
        """The image now holds every txid up to ``txid``."""
        self.last_checkpoint_txid = txid
        self.last_checkpoint_time = time.time()

    def roll_locked(self, failed_dirs: list[NameDir]) -> int:
        """End the current edits segment and continue in ``edits.new``; returns the last txid
        of the closed segment. While a checkpoint is pending it rolls nothing and names the
        end of the segment it rolled, so a secondary that crashed resumes it. ``failed_dirs``
        are brought back first where they can be."""
        if self.pending:
            log.info("roll asked while a checkpoint is pending: resuming it")
            return self.journal.roll()
        end = self.journal.roll(failed_dirs)
        self.checkpoints.rolled_now()
        log.info("rolled edits at txid %d for a checkpoint", end)
        return end

    @property
    def pending(self) -> bool:
        """Whether edits were rolled for a checkpoint not installed yet (also read without
        the lock, for the metrics)."""
        return self.journal.segment_name == EDITS_NEW

    @property
    def metrics(self) -> CheckpointMetrics:
        """The checkpoint counters (the transfer endpoint adds the bytes it sends)."""
        return self.checkpoints.metrics

    # ------------------------------------------------------------ the checkpoint endpoints

    def status(self) -> dict:
        """What the secondary polls: the txids, the last checkpoint, the image, and while a
        checkpoint is pending its rolled edits (described outside the lock; read again if a
        roll or a swap came in between)."""
        while True:
            rolled = self._rolled_if_pending()
            with self.lock:
                self.check()
                pending = self.pending
                if pending == (rolled is not None):
                    return {"namespaceId": self.namespace_id, "txid": self.journal.txid,
                            "lastCheckpointTxid": self.last_checkpoint_txid,
                            "lastCheckpointTime": int(self.last_checkpoint_time * 1000),
                            "pending": pending, "image": asdict(self.checkpoints.image()),
                            "edits": asdict(rolled) if rolled else None}

    def _rolled_if_pending(self) -> FileInfo | None:
        try:
            return self.rolled_edits() if self.pending else None
        except CheckpointError as exc:
            if exc.status == 409:
                return None
            raise

    def image_file(self) -> FileInfo:
        """The current fsimage, as a checkpoint downloads it."""
        return self.checkpoints.image()

    def rolled_edits(self) -> FileInfo:
        """The closed ``edits`` of the pending checkpoint, as a checkpoint downloads it (409
        when none is pending). Its end comes from the journal under the lock; the file is
        hashed outside it (hashing a large file there would stall every writer)."""
        with self.lock:
            self.check()
            if not self.pending:
                raise CheckpointError(409, "No checkpoint is pending: roll the edits first")
            last = self.journal.roll()          # while pending, a no-op naming the rolled end
            path = self.checkpoints.primary().file(EDITS)
            size = path.stat().st_size
        return self.checkpoints.rolled(path, size, last)

    def begin_upload(self, txid: int, md5: str, length: int,
                     namespace_id: int) -> ImageUpload:
        """Check an announced image upload before any byte is stored; returns its sink."""
        refuse = self.checkpoints.refuse
        if namespace_id != self.namespace_id:
            raise refuse(403, f"Image for namespace {namespace_id} refused: this namenode "
                              f"serves namespace {self.namespace_id}")
        if txid <= self.last_checkpoint_txid:
            raise refuse(410, f"Image for txid {txid} refused: a checkpoint up to txid "
                              f"{self.last_checkpoint_txid} is already in place")
        rolled = self.rolled_edits()
        if txid > self.journal.synced_txid:
            raise refuse(409, f"Image for txid {txid} refused: this namenode's edits end at "
                              f"txid {self.journal.synced_txid}")
        return self.checkpoints.begin_upload(txid, md5, length, rolled)

    def abort_upload(self, upload: ImageUpload, reason: str) -> None:
        self.checkpoints.abort(upload, reason)

    def install(self, upload: ImageUpload) -> dict:
        """Verify a stored upload and swap it in (``rollFSImage``; a worker thread runs it):
        under the lock the image goes into every healthy dir, ``edits.new`` becomes
        ``edits`` and the checkpoint bookkeeping moves on (checkpoint.py's steps)."""
        checkpoints = self.checkpoints
        try:
            started = time.monotonic()
            meta = checkpoints.verify(upload)
            faults.hit("checkpoint.after-ckpt-written")
            verified = time.monotonic()
            rolled = self.rolled_edits()
            with self.lock:
                self.check()
                if meta.last_txid <= self.last_checkpoint_txid:
                    # a save of this namenode's own overtook the upload (an HA namenode that
                    # became a standby meanwhile): the newer image stays
                    raise checkpoints.refuse(
                        410, f"Image for txid {meta.last_txid} refused: a checkpoint up to "
                             f"txid {self.last_checkpoint_txid} is already in place")
                checkpoints.swap(upload, rolled, self.journal.drop)
                self.journal.segment_renamed(EDITS)
                faults.hit("checkpoint.after-swap")
                self.checkpointed(meta.last_txid)
            return checkpoints.installed(upload, meta, started, verified)
        except CheckpointError:
            upload.discard()        # refused: its file goes (after the swap's rename, none)
            raise
        finally:
            checkpoints.end_upload()
