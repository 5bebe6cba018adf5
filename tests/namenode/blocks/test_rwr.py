"""rwr.py: a replica a restart left in rbw/ is finalized at the length its checksums vouch for
(BlockPoolSlice.validateIntegrityAndSetLength: the chunks both files cover, the last one only if its
CRC matches, or the longest prefix of it that its CRC matches), its data file cut to it and its meta
rewritten; one with nothing valid is removed. Each case damages an intact replica one way."""

from __future__ import annotations

import os

import pytest

from nnlite.namenode.blocks import checksum, rwr
from nnlite.namenode.blocks.store import BlockStore

CHUNK = checksum.BYTES_PER_CRC
DATA = os.urandom(3 * CHUNK + 100)              # three whole chunks and a partial one


def replica(store: BlockStore, data: bytes, crcs: bytes, header: bool = True) -> int:
    """An rbw replica of ``data`` whose meta holds ``crcs``; its block id."""
    block_id = store.allocate()
    store.rbw_path(block_id).write_bytes(data)
    store.rbw_path(block_id, meta=True).write_bytes(
        (checksum.meta_header() if header else b"") + crcs)
    return block_id


def crcs(data: bytes) -> bytes:
    return checksum.chunk_crcs(data)


def torn_last_chunk(data):
    """The last chunk's bytes changed after its CRC was written (a crash mid-chunk)."""
    return data[:-1] + bytes([data[-1] ^ 1]), crcs(data)


@pytest.mark.parametrize("damage,length", [
    (lambda d: (d, crcs(d)), len(DATA)),
    (lambda d: (d + b"x" * 50, crcs(d)), len(DATA)),          # a packet without its CRCs
    (lambda d: (d + b"x" * 500, crcs(d)), len(DATA)),         # ... that filled the chunk
    (torn_last_chunk, 3 * CHUNK),
    (lambda d: (d, crcs(d)[:8]), 2 * CHUNK),                   # CRCs of two chunks only
    (lambda d: (d, crcs(d)[:9]), 2 * CHUNK),                   # a torn CRC
    (lambda d: (d[:CHUNK], crcs(d)), CHUNK),                   # more CRCs than data
    (lambda d: (b"", crcs(d)), 0),
    (lambda d: (d, b""), 0),
], ids=["intact", "unchecked-tail", "unchecked-chunk", "torn-last-chunk", "short-meta", "torn-crc",
        "short-data", "no-data", "no-crc"])
def test_the_valid_length_of_a_replica(store, damage, length):
    data, sums = damage(DATA)
    block_id = replica(store, data, sums)
    assert rwr.valid_length(store, block_id)[0] == length


def test_finalize_publishes_the_valid_prefix(store):
    data, sums = torn_last_chunk(DATA)
    block_id = replica(store, data, sums)
    assert rwr.finalize(store, block_id) == 3 * CHUNK
    assert store.has(block_id) and os.listdir(store.rbw) == []
    assert store.data_path(block_id).read_bytes() == DATA[:3 * CHUNK]
    assert store.read_crcs(block_id, 3 * CHUNK) == (crcs(DATA[:3 * CHUNK]), checksum.DEFAULT)
    assert rwr.finalize(store, block_id) == 3 * CHUNK         # published: its size


def test_a_partial_last_chunk_gets_its_own_crc(store):
    block_id = replica(store, DATA + b"x" * 50, crcs(DATA))
    assert rwr.finalize(store, block_id) == len(DATA)
    assert store.meta_path(block_id).read_bytes() == checksum.meta_header() + crcs(DATA)


def test_nothing_valid_is_removed_and_no_replica_is_none(store):
    block_id = replica(store, DATA, b"", header=False)
    assert rwr.finalize(store, block_id) is None
    assert os.listdir(store.rbw) == [] and not store.has(block_id)
    assert rwr.finalize(store, store.allocate()) is None


def test_rbw_survives_a_reopen_of_the_store_and_tmp_does_not(tmp_path):
    """... but for the replica of a block published since (a copy received meanwhile)."""
    store = BlockStore.open(tmp_path / "data", namespace_id=7)
    block_id = replica(store, DATA, crcs(DATA))
    copied = replica(store, DATA, crcs(DATA))
    store.data_path(copied).write_bytes(DATA)
    store.tmp_path(copied + 1).write_bytes(b"an upload cut off")
    store.close()
    store = BlockStore.open(tmp_path / "data", namespace_id=7)
    try:
        assert os.listdir(store.tmp) == []
        assert sorted(os.listdir(store.rbw)) == [f"blk_{block_id}", f"blk_{block_id}.meta"]
        assert rwr.finalize(store, block_id) == len(DATA)
        assert store.allocate() > copied                       # ids in rbw/ are not reused
    finally:
        store.close()


def test_a_block_published_from_a_copy_supersedes_its_rbw_replica(store):
    """A standby's replica of a pipeline that broke, then the block copied whole from the
    active: the rbw/ files go with the publish."""
    block_id = replica(store, DATA[:700], crcs(DATA[:700]))
    store.tmp_path(block_id).write_bytes(DATA)
    store.tmp_path(block_id, meta=True).write_bytes(checksum.meta_header() + crcs(DATA))
    store.publish_from(block_id, store.tmp_path(block_id), store.tmp_path(block_id, meta=True))
    assert store.data_path(block_id).read_bytes() == DATA and os.listdir(store.rbw) == []
