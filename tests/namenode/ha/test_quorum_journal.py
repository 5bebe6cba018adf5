"""The quorum journal's rules against a real etcd (namenode/ha/quorum_journal.py)."""

from __future__ import annotations

import pytest

from nnlite.client.errors import EtcdError
from nnlite.client.etcd.client import Etcd
from nnlite.formats import edits
from nnlite.namenode.errors import FencedError
from nnlite.namenode.ha import quorum_journal
from nnlite.namenode.ha.election import Election
from nnlite.namenode.ha.quorum_journal import (
    CHUNK_BYTES,
    Layout,
    QuorumJournal,
    committed_txid,
    leader_value,
    read_batches,
)


def records(first: int, count: int, size: int = 100) -> bytes:
    """``count`` framed MKDIR records from txid ``first``, each about ``size`` bytes."""
    return b"".join(edits.encode_record(first + i, edits.MkdirOp(
        f"/d{first + i}-" + "x" * size, 16385 + first + i, 0o755, "u", "g", 0))
        for i in range(count))


@pytest.fixture
def etcd(etcd_single):
    client = Etcd(etcd_single.endpoints)
    yield client
    client.close()


def lead(etcd: Etcd, layout: Layout, who: str = "nn1") -> QuorumJournal:
    election = Election(etcd, layout, leader_value(who, "127.0.0.1:1"), ttl=5)
    held = election.campaign()
    assert held is not None
    etcd.put(layout.committed, b"0")
    return QuorumJournal(etcd, layout, held.epoch, timeout=5)


def read_all(etcd: Etcd, layout: Layout) -> bytes:
    committed = committed_txid(etcd, layout)
    have, out = 0, b""
    while have < committed:
        for batch in read_batches(etcd, layout, have, committed):
            assert batch.first_txid == have + 1
            out += batch.data
            have = batch.last_txid
    return out


def test_a_batch_larger_than_etcds_request_limit_is_split_and_read_back_whole(etcd):
    layout = Layout.of("/t", "big")
    journal = lead(etcd, layout)
    data = records(1, 12000, 300)                # ~4 MiB: over twice 1.5 MiB per request
    assert len(data) > 2 * quorum_journal.MAX_REQUEST_BYTES
    journal.append(data, 1, 12000)
    assert committed_txid(etcd, layout) == 12000
    chunks = etcd.range(layout.txns, layout.txns + b"\xff", keys_only=True).kvs
    assert len(chunks) > 2 and all(
        len(kv.value) <= CHUNK_BYTES for kv in etcd.range(layout.txns, prefix=True).kvs)
    assert read_all(etcd, layout) == data


def test_half_a_batch_is_never_read_and_the_next_active_clears_it(etcd):
    layout = Layout.of("/t", "half")
    journal = lead(etcd, layout)
    journal.append(records(1, 10), 1, 10)
    # a deposed active's half batch: chunks above committed, committed not moved
    half = records(11, 5)
    etcd.put(layout.txn_key(15), half)
    assert committed_txid(etcd, layout) == 10
    assert read_all(etcd, layout) == records(1, 10)
    assert journal.clear_uncommitted(10) == 1
    journal.append(records(11, 3), 11, 13)
    assert read_all(etcd, layout) == records(1, 13)


def test_a_deposed_active_cannot_append(etcd):
    layout = Layout.of("/t", "fence")
    old = lead(etcd, layout, "nn1")
    old.append(records(1, 2), 1, 2)
    etcd.delete(layout.leader)                   # its lease expired
    new = lead(etcd, layout, "nn2")
    etcd.put(layout.committed, b"2")
    new.append(records(3, 2), 3, 4)
    with pytest.raises(FencedError):
        old.append(records(5, 2), 5, 6)
    assert committed_txid(etcd, layout) == 4


def test_a_retried_batch_that_had_landed_counts_once(etcd):
    layout = Layout.of("/t", "retry")
    journal = lead(etcd, layout)
    journal.append(records(1, 4), 1, 4)
    journal.append(records(1, 4), 1, 4)          # its answer was lost: sent again
    assert committed_txid(etcd, layout) == 4
    assert read_all(etcd, layout) == records(1, 4)


def test_purge_deletes_what_a_checkpoint_covers_and_compacts(etcd):
    layout = Layout.of("/t", "purge")
    journal = lead(etcd, layout)
    for first in range(1, 100, 10):
        journal.append(records(first, 10), first, first + 9)
    assert journal.purge(51) > 0
    left = [layout.txid_of(kv.key) for kv in etcd.range(layout.txns, prefix=True).kvs]
    assert min(left) == 60 and max(left) == 100
    with pytest.raises(EtcdError, match="compacted"):      # the history is gone too
        etcd.range(layout.committed, revision=1)
