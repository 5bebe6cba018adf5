"""Truncate, for WebHDFS's TRUNCATE and the RPC call ``truncate`` (``FSDirTruncateOp``).

Blocks never change: a cut inside a block copies the kept prefix into a new block and records
[TruncateOp, AppendOp, CloseFileOp] with the new file checksum; a cut on a block boundary
records a lone TruncateOp. The file is held under a TRUNCATE lease while the copy runs, so no
writer takes it over; the copy reaches a standby (``replicate``) before the op is logged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from nnlite.formats.edits import Block
from nnlite.namenode import errors
from nnlite.namenode.blocks import checksum
from nnlite.namenode.blocks.store import BlockStore
from nnlite.namenode.blocks.streams import segments
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.journal.committer import AsyncCommitter
from nnlite.namenode.namespace import leases, paths


class Truncator:
    """Cuts files: ``truncate`` is done (durable) once it returns."""

    def __init__(self, fs: FSNamesystem, committer: AsyncCommitter, store: BlockStore,
                 lease_manager: leases.LeaseManager, replicate: Callable[[list], None]):
        self.fs = fs
        self.committer = committer
        self.store = store
        self.leases = lease_manager
        self.replicate = replicate      # blocking: copies new blocks to a standby, if any

    async def truncate(self, path: str, user: str, new_length: int,
                       client_machine: str) -> None:
        """Cut the file at ``path`` to ``new_length`` bytes under a TRUNCATE lease."""
        path = self.fs.resolve_path(path, user)
        node = self.fs.get_writable_file(path, user, "truncate")
        inode_id, blocks, length = node.inode_id, node.blocks, node.length
        if new_length > length:
            raise errors.IllegalArgumentError(
                f"Cannot truncate to a larger file size. Current size: {length}, truncate "
                f"size: {new_length}.", path=path)
        lease = self.leases.acquire(paths.normalize(path), leases.TRUNCATE, client_machine)
        lease.recording = True          # copying: another writer must not take over
        copy = None
        try:
            copy, value = await self._cut(blocks, new_length)
            if copy is not None:
                await asyncio.get_running_loop().run_in_executor(None, self.replicate, [copy])
            await self.committer.wait(self.fs.truncate_blocks(
                path, user, new_length, inode_id=inode_id, expected_blocks=blocks,
                last_block=copy, checksum=value, client_name=lease.holder,
                client_machine=client_machine))
        except BaseException:
            if copy is not None and not self.fs.refers_to_blocks(path, {copy[0]}):
                self.store.remove([copy[0]])
            raise
        finally:
            self.leases.release(lease)
            if copy is not None:
                self.store.release([copy[0]])

    async def _cut(self, blocks: tuple[Block, ...],
                   new_length: int) -> tuple[Block | None, bytes]:
        """(a new block holding the kept prefix of the cut block, the new file checksum)
        for a truncate inside a block; (None, b"") on a block boundary."""
        kept = segments(blocks, 0, new_length)
        if not kept or kept[-1][2] == kept[-1][0][1]:
            return None, b""
        block, _, take = kept[-1]
        loop = asyncio.get_running_loop()
        copy, digest = await loop.run_in_executor(None, self.store.copy_prefix,
                                                  (block[0], take))
        try:
            digests = await loop.run_in_executor(
                None, lambda: [self.store.digest(b[0], b[1]) for b, _, _ in kept[:-1]])
        except BaseException:
            self.store.remove([copy[0]])
            self.store.release([copy[0]])
            raise
        return copy, checksum.file_checksum(digests + [digest])
