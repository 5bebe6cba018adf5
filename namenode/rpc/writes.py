"""Files being written over RPC: ``create``/``append`` open one, ``addBlock`` hands out its
blocks on the built-in datanode, ``complete`` closes it with the blocks the datanode
finalized (Hadoop's ``FSDirWriteFileOp`` and the lease rules of ``LeaseManager``).

Rules:

* A file is opened under a lease of the shared table (``namenode/namespace/leases.py``,
  kind CREATE or APPEND, the same table WebHDFS's uploads use), so one writer at a time,
  whichever protocol. The RPC client name (``DFSClient_...``) maps to the leases it holds;
  ``renewLease`` renews them all.
* The namespace records the blocks of an RPC write as HDFS's ``FSDirWriteFileOp
  .persistBlocks`` does (UpdateBlocksOp): at ``addBlock`` (the previous block at the length
  its writer reported, the new one empty), at ``abandonBlock``, and at an ``fsync`` that
  sends the last block's length (``SyncFlag.UPDATE_LENGTH``: ``FSNamesystem.fsync``
  updates the length of the last block), so the file's length in ``getFileInfo`` is the
  one its writer last reported and a restart knows every block of it. ``complete`` closes
  it with one CloseFileOp with every block and the file checksum (blocks are immutable, so
  an append adds new blocks after the old ones; ``append`` answers no last block, and the
  client starts a new block, as after a full last block in HDFS).
* A block id is held in the store from ``addBlock`` until the close is durable (or the write
  is abandoned), so the sweep never removes a block the close is about to record.
* ``complete`` answers false while a block is not yet finalized by the datanode; the client
  retries (``DFSOutputStream.completeFile``), as HDFS answers before the last block reaches its
  minimal replication (``dfs.namenode.replication.min``, 1: this namenode's own datanode).
  In an HA set a block wants one copy more, on a standby's datanode (``wanted`` = 2): a
  block whose pipeline named fewer datanodes (``placed``: no standby was live) is reported
  to ``on_short`` once its close is durable, as HDFS's ``BlockManager`` queues a block below
  its replication in ``UnderReplicatedBlocks``; the resync copies it. A pipeline that
  completes had every datanode of its pipeline acknowledge the last packet (a client
  rebuilding it without a failed datanode, ``updatePipeline``, records the datanodes left),
  so a block placed on two is on two.
* A lease revoked (another writer after the soft limit, ``recoverLease``, the hard limit)
  closes the file with the blocks the datanode holds for this write, as HDFS's lease
  recovery does (``_revoked``), or as it was before the write when it holds none: the last
  block at the bytes its replica holds, its writer stopped if still connected (the
  datanode's ``recover``: ``BlockRecoveryWorker``, ``FsDatasetImpl.initReplicaRecovery``,
  then ``commitBlockSynchronization``'s close). After a restart the startup lease recovery
  does the same from ``rbw/`` (``namenode/blocks/lease_recovery.py``, ``rwr.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nnlite.formats.edits import Block
from nnlite.namenode import errors
from nnlite.namenode.blocks.store import BlockStore
from nnlite.namenode.blocks.streams import GENSTAMP
from nnlite.namenode.files.writers import (
    Closing,
    append_file,
    close_file,
    release_file,
    start_file,
)
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.journal.committer import AsyncCommitter
from nnlite.namenode.journal.journal import Logged
from nnlite.namenode.namespace import leases, paths
from nnlite.namenode.namespace.inode import INodeFile
from nnlite.namenode.rpc.status import Datanode

log = logging.getLogger(__name__)


@dataclass(eq=False)
class OpenFile:
    """One file being written by one RPC client."""
    client: str                      # the RPC client name
    node: INodeFile
    lease: leases.Lease
    appended: bool
    base: tuple[Block, ...]           # the blocks the file had when opened
    base_checksum: bytes | None
    blocks: list[Block] = field(default_factory=list)   # added by this write, in order
    pending: int | None = None       # the block handed out by the last addBlock
    revoked: str | None = None
    copies: dict[int, int] = field(default_factory=dict)    # block id -> its pipeline's size
    flushed: int = 0                 # the pending block's length its writer's fsync sent

    @property
    def path(self) -> str:
        return self.lease.path

    def ids(self) -> list[int]:
        ids = [b[0] for b in self.blocks]
        return ids + [self.pending] if self.pending is not None else ids


class Writes:
    """The open RPC writes of one namenode: by inode id and by client name."""

    def __init__(self, fs: FSNamesystem, committer: AsyncCommitter, store: BlockStore,
                 table: leases.LeaseManager, datanode: Datanode | None) -> None:
        self.fs = fs
        self.committer = committer
        self.store = store
        self.leases = table
        self.datanode = datanode
        self.files: dict[int, OpenFile] = {}
        self.by_client: dict[str, set[int]] = {}
        self.wanted = 1                       # copies a block wants (2 in an HA set)
        self.on_short: Callable[[list[int]], None] = lambda block_ids: None

    # ------------------------------------------------------------------ opening

    def create(self, path: str, user: str, client: str, machine: str,
               **create_kw: Any) -> Logged[INodeFile]:
        """Open a new file (``startFile``: ``files/writers.py``)."""
        lease, logged = start_file(self.fs, self.leases, path, user, machine, **create_kw)
        self._open(OpenFile(client, logged.value, lease, False, (), None))
        return logged

    def append(self, path: str, user: str, client: str, machine: str) -> Logged[INodeFile]:
        """Reopen a complete file (``appendFile``, AppendOp: ``files/writers.py``) for new
        blocks after its own."""
        lease, logged = append_file(self.fs, self.leases, path, user, machine)
        node = logged.value
        self._open(OpenFile(client, node, lease, True, tuple(node.blocks), node.checksum))
        return logged

    def _open(self, file: OpenFile) -> None:
        self.files[file.node.id] = file
        self.by_client.setdefault(file.client, set()).add(file.node.id)
        file.lease.on_revoke = lambda reason: self._revoked(file, reason)

    # ------------------------------------------------------------------ blocks

    def file(self, path: str, client: str, file_id: int = 0) -> OpenFile:
        """The write of ``client`` on the file (by id when the client sent one, else by
        path); LeaseExpiredException as ``FSNamesystem.checkLease`` when there is none."""
        found = self.files.get(file_id) if file_id else next(
            (f for i in self.by_client.get(client, ()) if (f := self.files[i]).path ==
             paths.normalize(path)), None)
        if found is None or found.client != client:
            raise errors.LeaseExpiredError(
                f"Client (={client}) is not the lease owner of {path}: no lease on it "
                f"(the file is closed, deleted, or written by someone else)", path=path)
        found.lease.check()
        self.leases.renew(found.lease)
        return found

    def add_block(self, file: OpenFile, previous: tuple[int, int] | None) -> Block:
        """Record the previous block (id, client's length) and hand out a new one."""
        self._commit_pending(file, previous)
        if self.datanode is None:
            raise errors.NamenodeError("no datanode is running: this namenode serves file "
                                       "contents over WebHDFS only", path=file.path)
        block_id = self.store.allocate()
        file.pending, file.flushed = block_id, 0
        self.datanode.expect(block_id)
        try:
            self._record(file)
        except BaseException:
            file.pending = None
            self._forget([block_id])
            raise
        return (block_id, 0, GENSTAMP)

    def fsync(self, file: OpenFile, last_block_length: int) -> None:
        """hflush/hsync (``FSNamesystem.fsync``): with the length of the block being written
        (``SyncFlag.UPDATE_LENGTH``; -1 without), the namespace records it, so the file's
        length is the flushed one, in ``getFileInfo`` and after a restart."""
        if file.pending is not None and last_block_length > 0:
            file.flushed = last_block_length
            self._record(file)

    def _record(self, file: OpenFile) -> None:
        """Log the file's blocks as they stand (UpdateBlocksOp; the RPC answer waits for it
        to be durable, as for every op logged before it)."""
        blocks = file.base + tuple(file.blocks)
        if file.pending is not None:
            blocks += ((file.pending, file.flushed, GENSTAMP),)
        self.fs.record_upload_blocks(file.node, file.lease.holder, blocks)

    def placed(self, file: OpenFile, block_id: int, datanodes: int) -> None:
        """addBlock named ``datanodes`` datanodes in ``block_id``'s pipeline, or the client
        rebuilt it with that many after one failed (``updatePipeline``)."""
        file.copies[block_id] = datanodes

    def writing(self, client: str, block_id: int) -> OpenFile:
        """The write of ``client`` whose block being written is ``block_id`` (the pipeline
        recovery calls name the block, not the file: ``FSNamesystem.checkUCBlock``);
        LeaseExpiredException when there is none."""
        found = next((f for i in self.by_client.get(client, ())
                      if (f := self.files[i]).pending == block_id), None)
        if found is None:
            raise errors.LeaseExpiredError(
                f"blk_{block_id} is not a block {client} is writing (its file is closed, "
                f"deleted, or written by someone else)")
        found.lease.check()
        self.leases.renew(found.lease)
        return found

    def abandon_block(self, file: OpenFile, block_id: int) -> None:
        """The client gives up the block it was handed (``abandonBlock``)."""
        if file.pending == block_id:
            file.pending = None
            self._forget([block_id])
            self._record(file)

    def _commit_pending(self, file: OpenFile, last: tuple[int, int] | None) -> None:
        file.blocks = self._with_last(file, last)
        if last is not None:
            file.pending = None

    def _with_last(self, file: OpenFile, last: tuple[int, int] | None) -> list[Block]:
        """This write's blocks, with the one handed out last as the client reports it."""
        if last is None or file.pending is None:
            return list(file.blocks)
        block_id, length = last
        if block_id != file.pending:
            raise errors.NamenodeError(
                f"Block blk_{block_id} is not the last block of {file.path} handed to "
                f"this client (blk_{file.pending})", path=file.path)
        return [*file.blocks, (block_id, length, GENSTAMP)]

    def offset(self, file: OpenFile) -> int:
        """Where the next block starts in the file."""
        return sum(b[1] for b in file.base) + sum(b[1] for b in file.blocks)

    # ------------------------------------------------------------------ closing

    def finalized(self, blocks: list[Block]) -> list[Block] | None:
        """``blocks`` with the lengths the datanode finalized, None while one is not
        finalized yet."""
        out = []
        for block_id, _, genstamp in blocks:
            length = self.datanode.finalized(block_id) if self.datanode is not None else None
            if length is None:
                return None
            out.append((block_id, length, genstamp))
        return out

    async def complete(self, file: OpenFile, last: tuple[int, int] | None) -> bool:
        """Close the file with its blocks once the datanode has finalized them all (false
        until then); true once the CloseFileOp is durable."""
        blocks = self.finalized(self._with_last(file, last))
        if blocks is None:
            return False            # nothing changes: the client asks again
        self._commit_pending(file, last)
        file.lease.recording = True
        try:
            await self.committer.wait(await close_file(self.fs, self.store,
                                                       self._closing(file, blocks)))
        except errors.NamenodeError:
            self._close(file)           # the file is gone or no longer this client's
            raise
        finally:
            file.lease.recording = False
        short = [b[0] for b in blocks if file.copies.get(b[0], 1) < self.wanted]
        if short:
            self.on_short(short)
        self._close(file)
        return True

    def _closing(self, file: OpenFile, blocks: list[Block]) -> Closing:
        """The close of ``file`` with this write's ``blocks`` after the ones it had; the
        checksum from the datanode's digests of the new blocks (it computed them as it
        wrote: known now, so a new file's close reads nothing), the store's of the blocks
        the file had and of a new one the datanode no longer tracks."""
        known = [self.datanode.digest(b[0]) if self.datanode is not None else None
                 for b in blocks]

        def new_digests() -> list:
            return [digest or self.store.digest(block_id, length)
                    for digest, (block_id, length, _) in zip(known, blocks, strict=True)]
        return Closing(file.node, file.lease.holder, file.base, file.base_checksum,
                       tuple(blocks), new_digests,
                       sum(b[1] for b in file.base) + sum(b[1] for b in blocks),
                       file.appended, digests_known=None not in known)

    def in_progress(self, inode_id: int) -> tuple[tuple[Block, ...], Block | None] | None:
        """What a reader may see of a file an RPC client is writing: the blocks completed
        so far (the file's own, then this write's with the lengths the datanode finalized
        or the client reported) and the block being written, if any; None if no RPC write
        of that file is under way."""
        file = self.files.get(inode_id)
        if file is None:
            return None
        blocks = []
        for block_id, reported, genstamp in file.blocks:
            length = self.datanode.finalized(block_id) if self.datanode is not None else None
            blocks.append((block_id, reported if length is None else length, genstamp))
        last = (file.pending, 0, GENSTAMP) if file.pending is not None else None
        return file.base + tuple(blocks), last

    def renew(self, client: str) -> None:
        for inode_id in self.by_client.get(client, ()):
            self.leases.renew(self.files[inode_id].lease)

    def recover(self, path: str) -> bool:
        """``recoverLease``: revoke the writer of ``path`` (its file closes with what the
        datanode holds of it, ``_revoked``); true when the file is closed."""
        lease = self.leases.holder(paths.normalize(path))
        if lease is not None:
            self.leases.revoke(lease, f"Lease of {lease.path} held by {lease.holder} "
                                      f"recovered by recoverLease")
        return True

    def _revoked(self, file: OpenFile, reason: str) -> None:
        """Lease recovery (``FSNamesystem.internalReleaseLease``): the file is closed with
        the blocks the datanode holds for it -- those it finalized, and the last one being
        written, finalized by the datanode at the bytes its replica holds, its writer
        stopped if still connected (``recover``) -- or as it was before this write when it
        holds none."""
        file.revoked = reason
        try:
            release_file(self.fs, self.store, self._closing(file, self._recovered(file)))
        except Exception:   # noqa: BLE001 -- the namenode stopping; startup recovery closes it
            log.warning("could not close %s after its lease was revoked", file.path,
                        exc_info=True)
        self._close(file)

    def _recovered(self, file: OpenFile) -> list[Block]:
        """This write's blocks the datanode finalized, in order up to the first it did not;
        then the block being written, if the datanode finalizes it now. ``recover(block_id)
        -> int | None`` is the datanode's, when it has one: the length it finalized the
        block at."""
        blocks: list[Block] = []
        for block_id, _, genstamp in file.blocks:
            length = self.datanode.finalized(block_id) if self.datanode is not None else None
            if length is None:
                return blocks
            blocks.append((block_id, length, genstamp))
        recover = getattr(self.datanode, "recover", None)
        if file.pending is not None and recover is not None:
            length = recover(file.pending)
            if length:
                blocks.append((file.pending, length, GENSTAMP))
        return blocks

    def _close(self, file: OpenFile) -> None:
        if self.files.get(file.node.id) is file:
            del self.files[file.node.id]
            ids = self.by_client.get(file.client)
            if ids is not None:
                ids.discard(file.node.id)
                if not ids:
                    del self.by_client[file.client]
        self.leases.release(file.lease)
        self._forget(file.ids())

    def _forget(self, ids: list[int]) -> None:
        """The store may sweep these ids once nothing refers to them; the datanode stops
        tracking them."""
        if self.datanode is not None:
            for block_id in ids:
                self.datanode.forget(block_id)
        self.store.release(ids)
