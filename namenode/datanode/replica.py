"""A replica being written: the ``rbw/`` block and meta files of one WRITE_BLOCK (Hadoop's
``ReplicaBeingWritten``, kept by its ``BlockReceiver``), published into the store when the
last packet arrives.

State, for a replica of ``length`` bytes: the data file ``rbw/blk_<id>`` holds them; ``crcs``
holds the CRC (4 big-endian bytes) of each complete 512-byte chunk, ``partial`` the bytes of
the incomplete last chunk (``length = 512 * len(crcs) / 4 + len(partial)``). The meta file
``rbw/blk_<id>.meta`` (HDFS's ``BlockMetadataHeader`` then the CRCs, the partial chunk's
last: ``namenode.blocks.checksum``) follows every packet, as ``BlockReceiver`` writes each
packet's checksums beside its data, so a replica that a restart (kill -9) cuts off holds
the CRCs of what it wrote; ``rbw/`` is kept across restarts (``namenode.blocks.rwr``
finalizes such a replica at the length its CRCs vouch for).

Rules (``BlockReceiver.receivePacket``):

* Data arrives at ``offset <= length``; above is a gap, refused. Bytes below ``length``
  were sent again (the client re-sends the partial last chunk after an hflush, or replays
  packets) and are the ones on disk: they are skipped, as ``BlockReceiver`` writes from
  its ``onDiskLen``, so a replica never shrinks under a writer (a kill -9 between two
  writes cannot take an acknowledged byte away). Only a pipeline recovery cuts a replica
  back (``cut``, to its acknowledged bytes).
* Each packet's data is written before its CRCs: a kill -9 between the two leaves bytes
  beyond what the meta file vouches for, which ``namenode.blocks.rwr`` does not keep.
* A replica that continues an older block (an append: HDFS appends in place, nnlite writes a
  new block, ``namenode.blocks.streams``) starts as a copy of its first bytes, and keeps its
  checksum type.
* ``sync`` (a packet with ``syncBlock``: hsync) makes what arrived durable in ``rbw/`` (both
  files, and the directory's entries once); ``publish`` uses the store's rule (fsync both
  files, rename the meta then the data into ``blocks/``, fsync the directory); ``discard``
  removes the ``rbw/`` files. Nothing under ``blocks/`` is touched before ``publish``.
* Syncing ahead (``sync_ahead``, then ``synced_ahead``): both files may be fsynced before
  the last packet, through duplicates of their descriptors (a recovery or a discard closing
  the replica's own meanwhile closes nothing the sync uses), off the loop and in parallel
  (one journal commit of the file system for the two); ``version`` counts every change, and
  ``publish`` skips the two fsyncs only if none came after the one synced, so what is
  published is durable before the block is reported finalized either way.
* Readers see the first ``acked`` bytes (those whose packets were acknowledged: after an
  hflush, a new reader sees what was flushed) through ``visible``.
* A block recovery may take the replica from its writer (``ReplicaInPipeline.stopWriter``):
  every change holds ``lock``, and once the replica is finalized or discarded by whoever
  holds it, a change asked for by the other raises ``ReplicaTakenError``.
"""

from __future__ import annotations

import contextlib
import os
import threading

from nnlite.durability import durable
from nnlite.namenode.blocks import checksum
from nnlite.namenode.blocks.store import BlockStore
from nnlite.namenode.blocks.streams import copy_range

CHUNK = checksum.BYTES_PER_CRC


class ReplicaTakenError(ConnectionError):
    """The replica is no longer open to this writer: a block recovery finalized or discarded
    it (the writer's connection is being ended), or it was published."""


class ReplicaWriter:
    """The rbw files and chunk CRCs of one block being written. ``create`` and ``sync``,
    ``publish``, ``discard`` do disk I/O that may block (run them in a thread); ``write`` only
    writes into the page cache."""

    def __init__(self, store: BlockStore, block_id: int, kind: int = checksum.DEFAULT) -> None:
        self.store = store
        self.block_id = block_id
        self.kind = kind
        self.crcs = bytearray()
        self.partial = bytearray()
        self.fd: int | None = None
        self.meta_fd: int | None = None
        self.synced = False         # rbw/'s entries of both files are durable
        self.version = 0            # +1 at every change of either file
        self.synced_version = -1    # the version both files were fsynced at (sync_ahead)
        self.acked = 0              # bytes acknowledged to the writer: what readers may see
        self.lock = threading.RLock()   # the writer's and a block recovery's changes

    def visible(self) -> tuple[int, bytes, int]:
        """What a reader of the replica may see (``ReplicaBeingWritten``'s bytes acked):
        its length, the CRCs of the complete chunks within it, the checksum type. Taken on
        the event loop, between packets."""
        whole = self.acked // CHUNK * checksum.CRC_SIZE
        return self.acked, bytes(self.crcs[:whole]), self.kind

    @property
    def length(self) -> int:
        return len(self.crcs) // checksum.CRC_SIZE * CHUNK + len(self.partial)

    def create(self, tail: tuple[int, int] | None = None) -> None:
        """Open the rbw data and meta files; with ``tail`` = ``(block id, num_bytes)``, start
        as a copy of that published block's first bytes, in its checksum type."""
        with self.lock:
            self._create(tail)

    def _create(self, tail: tuple[int, int] | None) -> None:
        self.version += 1
        flags = os.O_RDWR | os.O_CREAT | os.O_TRUNC
        self.fd = os.open(self.store.rbw_path(self.block_id), flags, 0o644)
        self.meta_fd = os.open(self.store.rbw_path(self.block_id, meta=True), flags, 0o644)
        if tail is not None:
            old_id, num_bytes = tail
            whole = num_bytes - num_bytes % CHUNK
            crcs, self.kind = self.store.read_crcs(old_id, whole)
            with self.store.open_block(old_id, num_bytes) as src:
                with os.fdopen(os.dup(self.fd), "r+b") as dst:
                    copy_range(src, dst, num_bytes)
                self.partial = bytearray(os.pread(src.fileno(), num_bytes - whole, whole))
            self.crcs = bytearray(crcs)
        os.pwrite(self.meta_fd, checksum.meta_header(self.kind), 0)
        self._write_crcs(0)

    def write(self, offset: int, data: bytes, crcs: bytes | None = None) -> None:
        """Put ``data`` at ``offset`` (at most ``length``: the caller checked), and the CRCs
        of the chunks it changed into the meta file. ``crcs``, if given, are the CRCs of
        ``data``'s chunks counted from its first byte in this replica's type (the packet's,
        verified): used as they are when ``offset`` starts a chunk, else the CRCs are
        computed."""
        with self.lock:
            self.version += 1
            self._write(offset, data, crcs)
            self._write_crcs(offset // CHUNK)

    def _write(self, offset: int, data: bytes, crcs: bytes | None) -> None:
        fd = self._open_fd()
        if offset < self.length:            # sent again: the bytes on disk stay
            view = memoryview(data)[self.length - offset:]
            offset, crcs = self.length, None
        else:
            view = memoryview(data)
        if not view:
            return
        os.pwrite(fd, view, offset)
        if self.partial:
            take = view[:CHUNK - len(self.partial)]
            self.partial += take
            view = view[len(take):]
            crcs = None         # data's chunks are not this replica's
            if len(self.partial) == CHUNK:
                self.crcs += checksum.chunk_crcs(bytes(self.partial), self.kind)
                self.partial.clear()
        whole = len(view) - len(view) % CHUNK
        if whole:
            self.crcs += crcs[:whole // CHUNK * checksum.CRC_SIZE] if crcs is not None \
                else checksum.chunk_crcs(bytes(view[:whole]), self.kind)
        self.partial += view[whole:]

    def _write_crcs(self, first: int, shrunk: bool = False) -> None:
        """The meta file from chunk ``first`` on: the complete chunks' CRCs, the partial
        chunk's last (``BlockReceiver`` rewrites that one as its chunk grows); cut to them
        when the replica ``shrunk``."""
        if self.meta_fd is None:
            return
        tail = bytes(self.crcs[first * checksum.CRC_SIZE:])
        if self.partial:
            tail += checksum.chunk_crcs(bytes(self.partial), self.kind)
        start = checksum.META_HEADER.size + first * checksum.CRC_SIZE
        os.pwrite(self.meta_fd, tail, start)
        if shrunk:
            os.ftruncate(self.meta_fd, start + len(tail))

    def cut(self, offset: int) -> None:
        """Back to the first ``offset`` bytes."""
        with self.lock:
            fd = self._open_fd()
            self.version += 1
            whole = offset - offset % CHUNK
            del self.crcs[whole // CHUNK * checksum.CRC_SIZE:]
            self.partial = bytearray(os.pread(fd, offset - whole, whole))
            os.ftruncate(fd, offset)
            self._write_crcs(whole // CHUNK, shrunk=True)

    def _open_fd(self) -> int:
        if self.fd is None:
            raise ReplicaTakenError(f"replica blk_{self.block_id} is not open (finalized, "
                                    "discarded, or taken by a block recovery)")
        return self.fd

    def all_crcs(self) -> bytes:
        """Every chunk's CRC, the partial last chunk's included (the meta file's body)."""
        if not self.partial:
            return bytes(self.crcs)
        return bytes(self.crcs) + checksum.chunk_crcs(bytes(self.partial), self.kind)

    def sync(self) -> None:
        """hsync: the bytes so far and their meta, durable in ``rbw/``."""
        with self.lock:
            fd = self._open_fd()
            durable.sync_fd(fd, f"blk_{self.block_id}")
            if self.meta_fd is not None:
                durable.sync_fd(self.meta_fd, f"blk_{self.block_id}.meta")
            if not self.synced:
                durable.sync_dir(self.store.rbw)
                self.synced = True

    def sync_ahead(self) -> tuple[int, list[int]]:
        """The replica's version and duplicates of its open descriptors, to fsync off the
        loop (each closed by whoever syncs it), then ``synced_ahead(version)``; no
        descriptor when it is not open."""
        with self.lock:
            return self.version, [os.dup(fd) for fd in (self.fd, self.meta_fd)
                                  if fd is not None]

    def synced_ahead(self, version: int) -> None:
        """Both files were fsynced at ``version`` (after ``sync_ahead`` returned it)."""
        with self.lock:
            self.synced_version = max(self.synced_version, version)

    @property
    def synced_now(self) -> bool:
        """Both files are durable as they stand (no change since the last sync ahead)."""
        return self.synced_version == self.version

    def publish(self) -> tuple[int, tuple[int, bytes, int]]:
        """Finalize: publish both files (the meta holds every CRC), not fsyncing them again
        when a sync ahead covered their last change; returns the length and the block's
        digest (``checksum.block_digest``)."""
        with self.lock:
            self._open_fd()
            self._close()
            self.store.publish_from(self.block_id, self.store.rbw_path(self.block_id),
                                    self.store.rbw_path(self.block_id, meta=True),
                                    synced=self.synced_now)
            return self.length, self.digest()

    def digest(self) -> tuple[int, bytes, int]:
        """``checksum.block_digest`` of the replica's bytes."""
        return checksum.block_digest(self.all_crcs(), self.kind)

    def release(self) -> None:
        """Close the files and keep them in ``rbw/`` (the datanode stops: a restart's lease
        recovery finalizes what they hold)."""
        with self.lock:
            self._close()

    def discard(self) -> None:
        """Remove the rbw files (never a published block)."""
        with self.lock:
            self._close()
            for path in (self.store.rbw_path(self.block_id),
                         self.store.rbw_path(self.block_id, meta=True)):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)

    def _close(self) -> None:
        for fd in (self.fd, self.meta_fd):
            if fd is not None:
                os.close(fd)
        self.fd = self.meta_fd = None
