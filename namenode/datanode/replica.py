"""A replica being written: the ``tmp/`` block and meta files of one WRITE_BLOCK (Hadoop's
``ReplicaBeingWritten``, kept by its ``BlockReceiver``), published into the store when the
last packet arrives.

State, for a replica of ``length`` bytes: the data file ``tmp/blk_<id>`` holds them; ``crcs``
holds the CRC (4 big-endian bytes) of each complete 512-byte chunk, ``partial`` the bytes of
the incomplete last chunk (``length = 512 * len(crcs) / 4 + len(partial)``). The meta file
``tmp/blk_<id>.meta`` (HDFS's ``BlockMetadataHeader`` then the CRCs, the partial chunk's
last: ``namenode.blocks.checksum``) is written when the replica is synced or published.

Rules (``BlockReceiver.receivePacket``):

* Data arrives at ``offset <= length``. Below ``length`` the replica is cut back to
  ``offset`` first (a packet sent again: the client re-sends the partial last chunk after
  an hflush, or replays packets); above is a gap, refused.
* A replica that continues an older block (an append: HDFS appends in place, nnlite writes a
  new block, ``namenode.blocks.streams``) starts as a copy of its first bytes, and keeps its
  checksum type.
* ``sync`` (a packet with ``syncBlock``: hsync) makes what arrived durable in ``tmp/``;
  ``publish`` uses the store's rule (fsync both files, rename the meta then the data into
  ``blocks/``, fsync the directory); ``discard`` removes the ``tmp/`` files. Nothing under
  ``blocks/`` is touched before ``publish``.
* Readers see the first ``acked`` bytes (those whose packets were acknowledged: after an
  hflush, a new reader sees what was flushed) through ``visible``.
* A block recovery may take the replica from its writer (``ReplicaInPipeline.stopWriter``):
  every change holds ``lock``, and once the replica is finalized or discarded by whoever
  holds it, a change asked for by the other raises ``ReplicaTakenError``.
"""

from __future__ import annotations

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
    """The tmp files and chunk CRCs of one block being written. ``create`` and ``sync``,
    ``publish``, ``discard`` do disk I/O that may block (run them in a thread); ``write`` only
    writes into the page cache."""

    def __init__(self, store: BlockStore, block_id: int, kind: int = checksum.DEFAULT) -> None:
        self.store = store
        self.block_id = block_id
        self.kind = kind
        self.crcs = bytearray()
        self.partial = bytearray()
        self.fd: int | None = None
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
        """Open the tmp data file; with ``tail`` = ``(block id, num_bytes)``, start as a copy
        of that published block's first bytes, in its checksum type."""
        with self.lock:
            self._create(tail)

    def _create(self, tail: tuple[int, int] | None) -> None:
        self.fd = os.open(self.store.tmp_path(self.block_id),
                          os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        if tail is None:
            return
        old_id, num_bytes = tail
        whole = num_bytes - num_bytes % CHUNK
        crcs, self.kind = self.store.read_crcs(old_id, whole)
        with self.store.open_block(old_id, num_bytes) as src:
            with os.fdopen(os.dup(self.fd), "r+b") as dst:
                copy_range(src, dst, num_bytes)
            self.partial = bytearray(os.pread(src.fileno(), num_bytes - whole, whole))
        self.crcs = bytearray(crcs)

    def write(self, offset: int, data: bytes, crcs: bytes | None = None) -> None:
        """Put ``data`` at ``offset`` (at most ``length``: the caller checked). ``crcs``, if
        given, are the CRCs of ``data``'s chunks counted from its first byte in this
        replica's type (the packet's, verified): used as they are when ``offset`` starts a
        chunk, else the CRCs are computed."""
        with self.lock:
            self._write(offset, data, crcs)

    def _write(self, offset: int, data: bytes, crcs: bytes | None) -> None:
        fd = self._open_fd()
        if offset < self.length:
            self.cut(offset)
        os.pwrite(fd, data, offset)
        view = memoryview(data)
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

    def cut(self, offset: int) -> None:
        """Back to the first ``offset`` bytes."""
        with self.lock:
            fd = self._open_fd()
            whole = offset - offset % CHUNK
            del self.crcs[whole // CHUNK * checksum.CRC_SIZE:]
            self.partial = bytearray(os.pread(fd, offset - whole, whole))
            os.ftruncate(fd, offset)

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

    def _write_meta(self) -> None:
        with open(self.store.tmp_path(self.block_id, meta=True), "wb") as meta:
            meta.write(checksum.meta_header(self.kind) + self.all_crcs())

    def sync(self) -> None:
        """hsync: the bytes so far and their meta, durable in ``tmp/``."""
        with self.lock:
            fd = self._open_fd()
            self._write_meta()
            durable.sync_fd(fd, f"blk_{self.block_id}")
            durable.sync_file(self.store.tmp_path(self.block_id, meta=True))

    def publish(self) -> tuple[int, tuple[int, bytes, int]]:
        """Finalize: write the meta, publish both files; returns the length and the block's
        digest (``checksum.block_digest``)."""
        with self.lock:
            self._open_fd()
            self._write_meta()
            self._close()
            self.store.publish_block(self.block_id)
            return self.length, self.digest()

    def digest(self) -> tuple[int, bytes, int]:
        """``checksum.block_digest`` of the replica's bytes."""
        return checksum.block_digest(self.all_crcs(), self.kind)

    def discard(self) -> None:
        """Remove the tmp files (never a published block)."""
        with self.lock:
            self._close()
            for path in (self.store.tmp_path(self.block_id),
                         self.store.tmp_path(self.block_id, meta=True)):
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass

    def _close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
