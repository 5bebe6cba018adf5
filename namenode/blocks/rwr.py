"""Replicas a restart cut off: the ``rbw/`` files of blocks an ``hdfs://`` client was writing
through the built-in datanode when the namenode stopped (kill -9 included), finalized at the
length their checksums vouch for.

HDFS's DataNode keeps its ``rbw/`` replicas across a restart and loads them as
ReplicaWaitingToBeRecovered (RWR), their length set by
``BlockPoolSlice.validateIntegrityAndSetLength``: the chunks both the data file and the meta
file cover, the last of them kept only if its CRC matches (a crash corrupts at most the
last chunk), the data file cut to that length. Here the last chunk keeps the longest prefix
its CRC matches (``_vouched``): the partial chunk a kill cut between a packet's data and
its CRCs. Block recovery then finalizes the replica at
it (``BlockRecoveryWorker``, ``FsDatasetImpl.initReplicaRecovery`` /
``updateReplicaUnderRecovery``) and the namenode closes the file with it
(``commitBlockSynchronization``). Here the namenode's startup lease recovery
(``lease_recovery.py``) asks ``finalize`` for each block of a file being written that was
not published, and the built-in datanode asks it for a block it has no replica of in memory.

Since the datanode writes each packet's CRCs beside its data (``datanode/replica.py``),
every byte a writer's hflush or hsync returned for survives a kill -9 of the namenode with
its CRC; an hsync'd byte survives a power loss too.
"""

from __future__ import annotations

import logging
import os

from nnlite.namenode.blocks import checksum
from nnlite.namenode.blocks.store import BlockStore

log = logging.getLogger(__name__)

CHUNK = checksum.BYTES_PER_CRC


def valid_length(store: BlockStore, block_id: int) -> tuple[int, int, bytes]:
    """``(length, checksum type, CRCs of the complete chunks within it)`` of the rbw replica
    of ``block_id`` (``validateIntegrityAndSetLength``); length 0 when there is no replica,
    no byte, or no meta header."""
    data, meta = store.rbw_path(block_id), store.rbw_path(block_id, meta=True)
    try:
        size = os.stat(data).st_size
        body = meta.read_bytes()
    except FileNotFoundError:
        return 0, checksum.DEFAULT, b""
    head = checksum.META_HEADER.size
    if size == 0 or len(body) < head:
        return 0, checksum.DEFAULT, b""
    _, kind, _ = checksum.META_HEADER.unpack_from(body)
    chunks = min(-(-size // CHUNK), (len(body) - head) // checksum.CRC_SIZE)
    if chunks == 0:
        return 0, kind, b""
    last = (chunks - 1) * CHUNK
    with open(data, "rb") as handle:
        tail = os.pread(handle.fileno(), min(CHUNK, size - last), last)
    stored = body[head + (chunks - 1) * checksum.CRC_SIZE:head + chunks * checksum.CRC_SIZE]
    length = last + _vouched(tail, stored, kind)
    return length, kind, body[head:head + length // CHUNK * checksum.CRC_SIZE]


def _vouched(chunk: bytes, stored: bytes, kind: int) -> int:
    """How much of the last chunk its stored CRC vouches for: all of it, else the longest
    prefix it is the CRC of (the datanode writes a packet's data before its CRCs, so a kill
    between the two leaves a partial chunk grown past the CRC written with the packet
    before, whose bytes were acknowledged), else none (HDFS's rule drops the chunk)."""
    for size in range(len(chunk), 0, -1):
        if checksum.chunk_crcs(chunk[:size], kind) == stored:
            return size
    return 0


def finalize(store: BlockStore, block_id: int) -> int | None:
    """Publish the rbw replica of ``block_id`` at its valid length (the data file cut to it,
    the meta file rewritten with its CRCs, the store's publish: fsync, rename, fsync the
    directory); returns that length. A block published already returns its size; None when
    there is nothing to keep (no replica, or no valid byte: its files are removed)."""
    if store.has(block_id):
        return os.stat(store.data_path(block_id)).st_size
    length, kind, crcs = valid_length(store, block_id)
    data, meta = store.rbw_path(block_id), store.rbw_path(block_id, meta=True)
    if length == 0:
        store.remove([block_id])
        return None
    with open(data, "r+b") as handle:
        handle.truncate(length)
        partial = os.pread(handle.fileno(), length % CHUNK, length - length % CHUNK)
    meta.write_bytes(checksum.meta_header(kind) + crcs +
                     (checksum.chunk_crcs(partial, kind) if partial else b""))
    store.publish_from(block_id, data, meta)
    log.warning("blk_%d: a replica being written when the namenode stopped, finalized at "
                "%d bytes (the length its checksums vouch for)", block_id, length)
    return length
