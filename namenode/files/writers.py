"""A writer admitted to a file and the checksum its close records, the same for WebHDFS's
uploads (``http/data.py``) and RPC writes (``rpc/writes.py``), as Hadoop's
``FSNamesystem.startFile``, ``appendFile`` and ``completeFile`` serve both.

``start_file`` and ``append_file``: the lease table's door first (``LeaseManager
.admit_writer``: a holder silent past the soft limit is revoked, one still writing is named
in the refusal), the namespace's checks behind it, then a lease of the kind (CREATE or
APPEND) and the op under it (AddOp, AppendOp), the lease released if the op fails. A
``/.reserved`` path is resolved first: the lease is the inode's path's.

``concat_files``: no writer may hold the target or a source (``LeaseManager.check_free``).

``close_file``: the close of a writer's file (``completeFile``: one CloseFileOp with its
blocks, length and checksum), its checksum computed first in a thread -- on the loop when
it reads nothing (``Closing.in_memory``: every digest at hand, as an RPC write's are from
the datanode that finalized its blocks), which spares the close a thread's round trip on
the client's path; ``release_file``
the same on the caller's thread, for lease recovery (``internalReleaseLease``).
``close_checksum``: a close that added no block keeps the file's checksum; else the digests
of the blocks kept from before the write and of the new blocks, combined.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nnlite.formats.edits import Block
from nnlite.namenode.blocks import checksum
from nnlite.namenode.blocks.store import BlockStore
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.journal.journal import Logged
from nnlite.namenode.namespace import leases, paths
from nnlite.namenode.namespace.inode import INodeFile

Opened = tuple[leases.Lease, Logged[INodeFile]]


def start_file(fs: FSNamesystem, table: leases.LeaseManager, path: str, user: str,
               machine: str, **create_kw: Any) -> Opened:
    """Create the file at ``path`` under a new CREATE lease (``create_kw``: the namespace's
    ``start_upload`` options, ``overwrite`` and ``create_parent`` among them)."""
    path = fs.resolve_path(path, user)
    table.admit_writer(paths.normalize(path), "create", machine, lambda: fs.check_create(
        path, user, overwrite=create_kw.get("overwrite", False),
        create_parent=create_kw.get("create_parent", True)))
    return _under_lease(table, path, leases.CREATE, machine, lambda holder: fs.start_upload(
        path, user, holder, machine, **create_kw))


def append_file(fs: FSNamesystem, table: leases.LeaseManager, path: str, user: str,
                machine: str) -> Opened:
    """Reopen the complete file at ``path`` under a new APPEND lease."""
    path = fs.resolve_path(path, user)
    table.admit_writer(paths.normalize(path), "append to", machine,
                       lambda: fs.get_writable_file(path, user, "append to"))
    return _under_lease(table, path, leases.APPEND, machine, lambda holder: fs
                        .reopen_for_append(path, user, holder, machine))


def concat_files(fs: FSNamesystem, table: leases.LeaseManager, target: str, sources: list[str],
                 user: str, machine: str) -> Logged[bool]:
    """Move the blocks of ``sources`` to the end of ``target`` (``FSDirConcatOp``) when no
    writer that still makes progress holds any of them (the leases are by resolved path)."""
    target = fs.resolve_path(target, user)
    sources = [fs.resolve_path(s, user) for s in sources]
    for path in (target, *sources):
        table.check_free(paths.normalize(path), "concat", machine)
    return fs.concat(target, sources, user)


def _under_lease(table: leases.LeaseManager, path: str, kind: str, machine: str,
                 op: Callable[[str], Logged[INodeFile]]) -> Opened:
    lease = table.acquire(paths.normalize(path), kind, machine)
    try:
        return lease, op(lease.holder)
    except BaseException:
        table.release(lease)
        raise


@dataclass(frozen=True, slots=True)
class Closing:
    """A writer's file as its close records it: the blocks ``kept`` from before the write
    and their checksum, the ``new`` blocks and their digests (``new_digests``: blocking,
    unless ``digests_known``: then at hand, no I/O), ``length`` bytes in all."""
    node: INodeFile
    holder: str
    kept: tuple[Block, ...]
    kept_checksum: bytes | None
    new: tuple[Block, ...]
    new_digests: Callable[[], list]
    length: int
    appended: bool
    digests_known: bool = False

    @property
    def in_memory(self) -> bool:
        """The checksum reads no block: the new digests are known, and no kept block's
        digest is read (none kept, or the kept checksum stands: ``close_checksum``)."""
        return self.digests_known and (not self.kept or (
            not self.new and self.kept_checksum is not None
            and checksum.is_checksum(self.kept_checksum)))

    def checksum(self, store: BlockStore) -> bytes:
        """The checksum the close records (``close_checksum``; blocking)."""
        return close_checksum(lambda: digests(store, self.kept), self.kept_checksum,
                              self.new_digests())

    def record(self, fs: FSNamesystem, value: bytes) -> Logged[bool]:
        """The CloseFileOp, by inode (wherever a rename took the file)."""
        return fs.complete_upload(self.node, self.holder, blocks=self.kept + self.new,
                                  length=self.length, checksum=value, appended=self.appended)


async def close_file(fs: FSNamesystem, store: BlockStore, closing: Closing) -> Logged[bool]:
    """Close a writer's file (``FSNamesystem.completeFile``): its checksum computed in a
    thread (on the loop when ``closing.in_memory``), then one CloseFileOp."""
    if closing.in_memory:
        return closing.record(fs, closing.checksum(store))
    value = await asyncio.get_running_loop().run_in_executor(None, closing.checksum, store)
    return closing.record(fs, value)


def release_file(fs: FSNamesystem, store: BlockStore, closing: Closing) -> Logged[bool]:
    """``close_file`` on the caller's thread (blocking), for a lease recovery
    (``FSNamesystem.internalReleaseLease``) that closes the file where it runs."""
    return closing.record(fs, closing.checksum(store))


def close_checksum(kept_digests: Callable[[], list], kept_checksum: bytes | None,
                   new_digests: list) -> bytes:
    """The file checksum a close records: ``kept_checksum`` (the file's before the write)
    when no block was added and it is one, else the combined digests of the kept blocks
    (``kept_digests``, read only then: blocking) and of the new ones."""
    if not new_digests and kept_checksum is not None and checksum.is_checksum(kept_checksum):
        return kept_checksum
    return checksum.file_checksum(kept_digests() + list(new_digests))


def digests(store: BlockStore, blocks: tuple[Block, ...] | list[Block]) -> list:
    """The store's digests of ``blocks`` (blocking)."""
    return [store.digest(b[0], b[1]) for b in blocks]
