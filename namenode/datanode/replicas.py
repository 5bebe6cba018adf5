"""``ReplicaMap``: what the datanode knows of the blocks it is told of and writes (Hadoop's
``ReplicaMap``, and ``FsDatasetImpl``'s choice of the replica a WRITE_BLOCK writes:
``createRbw``, ``recoverRbw``, ``recoverClose``).

A block id moves through:

* expected -- the namenode handed it to a writer (``expect``; with the block it continues,
  for an append) or a writer shows a WRITE token the namenode signed
  (``tokens.BlockTokenSecretManager``);
* being written -- one WRITE_BLOCK has it (``start``); a second is refused;
* parked -- its connection ended before the last packet in a pipeline of more than one
  datanode: the replica stays in ``rbw/`` for ``RECOVERY_GRACE`` seconds, for the client's
  pipeline recovery (``PIPELINE_SETUP_STREAMING_RECOVERY``: ``recover`` takes it back, cut
  to its acknowledged bytes), then is discarded. In a pipeline of one there is nobody to
  recover the pipeline with, but the namenode may still recover the lease: a replica with
  bytes written is parked with no expiry (an RBW replica stays on a DataNode until block
  recovery finalizes it), one without is discarded at once. The namenode's ``forget``
  hands a parked replica back to be discarded, its lease recovery's ``take`` hands it back
  to be finalized (``FsDatasetImpl.initReplicaRecovery``, below) -- also a replica still
  being written, whose writer is stopped: its connection is aborted, as
  ``initReplicaRecovery`` stops the writer of an RBW replica (``ReplicaInPipeline
  .stopWriter``) before it recovers it;
* finalized -- published, with its length and digest for the namenode (``finalized``,
  ``digest``) until it ``forget``s it. A PIPELINE_CLOSE_RECOVERY of a finalized block (the
  last ack was lost) is accepted: the block stays as published.

The namenode's RPC side calls from the event loop, the datanode's connections too; a lock
keeps the tables consistent all the same.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nnlite.formats.hadoop.datatransfer import BlockConstructionStage as Stage
from nnlite.formats.hadoop.datatransfer import Status
from nnlite.namenode.blocks.store import BlockStore
from nnlite.namenode.datanode.errors import DataTransferError
from nnlite.namenode.datanode.replica import ReplicaWriter
from nnlite.namenode.datanode.tokens import WRITE, BlockTokenSecretManager

log = logging.getLogger(__name__)

RECOVERY_GRACE = 60.0       # seconds a replica of a broken pipeline waits for its recovery
RECOVERY_WAIT = 10.0        # seconds a recovery waits for the broken connection to end
Digest = tuple[int, bytes, int]


@dataclass
class Write:
    """A block being written, or parked for recovery."""
    replica: ReplicaWriter
    abort: Callable[[], object] | None = None   # ends the writer's connection
    parked: bool = False
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    expiry: asyncio.TimerHandle | None = None


class ReplicaMap:
    def __init__(self, store: BlockStore, tokens: BlockTokenSecretManager | None = None) -> None:
        self.store = store
        self.tokens = tokens
        self._lock = threading.Lock()
        self._expected: dict[int, tuple[int, int] | None] = {}   # block id -> tail
        self._writes: dict[int, Write | None] = {}                # None: being admitted
        self._finalized: dict[int, tuple[int, Digest]] = {}

    # ------------------------------------------------------------------ the namenode's side

    def expect(self, block_id: int, tail: tuple[int, int] | None = None) -> None:
        with self._lock:
            self._expected[block_id] = tail

    def forget(self, block_id: int) -> ReplicaWriter | None:
        """Drop what is known of ``block_id``; returns its parked replica, if any, for the
        caller to discard (a write still under way is left to end on its own)."""
        with self._lock:
            self._expected.pop(block_id, None)
            self._finalized.pop(block_id, None)
        return self.take(block_id)

    def take(self, block_id: int, stop: bool = False) -> ReplicaWriter | None:
        """The parked replica of ``block_id``, no longer parked (for the caller to finalize
        or discard), or None when none is parked: lease recovery's
        ``FsDatasetImpl.initReplicaRecovery``, which takes an RBW replica out of the writer's
        hands. With ``stop``, a write still under way is taken too and its connection
        aborted (``ReplicaInPipeline.stopWriter``): its writer finds the replica closed at
        its next change (``ReplicaTakenError``) and ends without touching it."""
        with self._lock:
            write = self._writes.get(block_id)
            if write is None or not (write.parked or stop):
                return None
            del self._writes[block_id]
        if write.expiry is not None:
            write.expiry.cancel()
        if not write.parked and write.abort is not None:
            write.abort()
            log.info("datanode: the writer of blk_%d stopped for a block recovery", block_id)
        return write.replica

    def known(self, block_id: int) -> bool:
        """Whether a write of ``block_id`` is being admitted, written or parked."""
        with self._lock:
            return block_id in self._writes

    def finalized(self, block_id: int) -> tuple[int, Digest] | None:
        with self._lock:
            return self._finalized.get(block_id)

    def being_written(self, block_id: int) -> ReplicaWriter | None:
        with self._lock:
            write = self._writes.get(block_id)
        return None if write is None else write.replica

    def parked(self, block_id: int) -> bool:
        """Whether the block's replica waits for a pipeline recovery."""
        with self._lock:
            write = self._writes.get(block_id)
        return write is not None and write.parked

    # ------------------------------------------------------------------ a new write

    def admit(self, request: Any) -> tuple[int, int] | None:
        """Check a new block's WRITE_BLOCK (stage CREATE or APPEND) and mark the block as
        being admitted; returns the block it continues, if any."""
        block = request.header.baseHeader.block
        signed = self.tokens is not None and \
            self.tokens.permits(request.header.baseHeader.token, block.blockId, WRITE) and \
            not self.store.has(block.blockId)
        with self._lock:
            if block.blockId not in self._expected and not signed:
                status = Status.ERROR_EXISTS if block.blockId in self._finalized \
                    else Status.ERROR_INVALID
                raise DataTransferError(f"blk_{block.blockId} was not allocated to a writer "
                                        "by the namenode (or is written already)", status)
            if block.blockId in self._writes:
                raise DataTransferError(f"blk_{block.blockId} is being written already",
                                        Status.ERROR_EXISTS)
            # signed and not expected: a new block, whose length nobody here asks for
            tail = self._expected.get(block.blockId)
            _check_stage(request, tail)
            self._writes[block.blockId] = None
        return tail

    def start(self, replica: ReplicaWriter, abort: Callable[[], object] | None = None) -> None:
        """``replica`` is being written; ``abort`` ends its writer's connection (any
        thread)."""
        with self._lock:
            self._writes[replica.block_id] = Write(replica, abort)

    def published(self, block_id: int, length: int, digest: Digest) -> None:
        with self._lock:
            if block_id in self._expected:      # else forgotten meanwhile: the sweep's
                self._finalized[block_id] = (length, digest)
                del self._expected[block_id]

    def end(self, replica: ReplicaWriter, keep: bool,
            expires: bool = True) -> ReplicaWriter | None:
        """The write of ``replica`` ended. With ``keep`` (a broken connection) the replica is
        parked for recovery, discarded after ``RECOVERY_GRACE`` if ``expires`` (a pipeline
        of several: its client recovers it now or never), else kept until the namenode
        takes or forgets it (a pipeline of one: only lease recovery can finalize it);
        without ``keep`` it is returned, for the caller to discard if unpublished. Nothing
        when a block recovery took it meanwhile."""
        block_id = replica.block_id
        with self._lock:
            write = self._writes.get(block_id)
            if write is None or write.replica is not replica:
                return None
            write.ended.set()
            if not keep:
                del self._writes[block_id]
                return write.replica
            write.parked = True
        if expires:
            write.expiry = asyncio.get_running_loop().call_later(
                RECOVERY_GRACE, self._expire, block_id, write)
        log.info("datanode: blk_%d parked at %d bytes (%d acknowledged) for a %s recovery",
                 block_id, write.replica.length, write.replica.acked,
                 "pipeline" if expires else "lease")
        return None

    def _expire(self, block_id: int, write: Write) -> None:
        with self._lock:
            if self._writes.get(block_id) is not write or not write.parked:
                return
            del self._writes[block_id]
        log.info("datanode: blk_%d was not recovered in %.0f s: discarded", block_id,
                 RECOVERY_GRACE)
        asyncio.get_running_loop().run_in_executor(None, write.replica.discard)

    def drop_parked(self) -> list[ReplicaWriter]:
        """The parked replicas, no longer waiting (the datanode stops): for the caller to
        release (their files stay in ``rbw/``)."""
        with self._lock:
            parked = {block_id: w for block_id, w in self._writes.items()
                      if w is not None and w.parked}
            for block_id in parked:
                del self._writes[block_id]
        for write in parked.values():
            if write.expiry is not None:
                write.expiry.cancel()
        return [w.replica for w in parked.values()]

    # ------------------------------------------------------------------ recovery

    async def recover(self, request: Any) -> ReplicaWriter | None:
        """The replica a PIPELINE_SETUP_STREAMING_RECOVERY goes on with, cut to its
        acknowledged bytes (``recoverRbw``), or None for a PIPELINE_CLOSE_RECOVERY of a
        finalized block. Waits up to ``RECOVERY_WAIT`` for the broken connection to end."""
        block = request.header.baseHeader.block
        with self._lock:
            write = self._writes.get(block.blockId)
            done = block.blockId in self._finalized or self.store.has(block.blockId)
        if request.stage == Stage.PIPELINE_CLOSE_RECOVERY and done:
            return None
        if write is not None and not write.parked:
            try:
                async with asyncio.timeout(RECOVERY_WAIT):
                    await write.ended.wait()
            except TimeoutError:
                pass
        with self._lock:
            write = self._writes.get(block.blockId)
            if write is None or not write.parked:
                raise DataTransferError(f"Unable to recover blk_{block.blockId}: no replica "
                                        "of a broken pipeline here", Status.ERROR)
            replica = write.replica
            if replica.acked < request.minBytesRcvd:
                raise DataTransferError(
                    f"Unable to recover blk_{block.blockId}: {replica.acked} bytes "
                    f"acknowledged here, the client has {request.minBytesRcvd}", Status.ERROR)
            write.parked = False
            write.ended = asyncio.Event()
            if write.expiry is not None:
                write.expiry.cancel()
        replica.cut(replica.acked)
        return replica


def _check_stage(request: Any, tail: tuple[int, int] | None) -> None:
    block = request.header.baseHeader.block
    appending = request.stage == Stage.PIPELINE_SETUP_APPEND
    if appending != (tail is not None):
        raise DataTransferError(
            f"blk_{block.blockId}: stage {request.stage} does not match the block the "
            "namenode allocated (" + ("an append" if tail else "a new block") + ")",
            Status.ERROR_INVALID)
    if tail is not None and block.numBytes != tail[1]:
        raise DataTransferError(f"blk_{block.blockId}: an append after {block.numBytes} "
                                f"bytes, but the block it continues has {tail[1]}",
                                Status.ERROR_INVALID)
