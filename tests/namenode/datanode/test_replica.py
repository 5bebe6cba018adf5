"""The replica being written (namenode/datanode/replica.py): its sync ahead, the version it
covers, and the published block either way."""

from __future__ import annotations

import os

from nnlite.durability import durable
from nnlite.namenode.datanode.replica import ReplicaWriter

DATA = os.urandom(1500)


def sync_ahead(replica: ReplicaWriter) -> None:
    """What the receiver does off the loop: fsync the duplicates, close them, record."""
    version, fds = replica.sync_ahead()
    for fd in fds:
        durable.sync_fd(fd)
        os.close(fd)
    replica.synced_ahead(version)


def test_a_sync_ahead_covers_the_replica_until_its_next_change(store):
    replica = ReplicaWriter(store, store.allocate())
    replica.create()
    replica.write(0, DATA[:700])
    assert not replica.synced_now
    sync_ahead(replica)
    assert replica.synced_now
    replica.write(700, DATA[700:])          # a packet after the sync: synced again at publish
    assert not replica.synced_now
    sync_ahead(replica)
    replica.cut(600)                         # a pipeline recovery cuts it back
    assert not replica.synced_now
    replica.write(600, DATA[600:])
    assert not replica.synced_now           # as long as before, but not the bytes synced


def test_a_sync_ahead_that_started_before_a_change_does_not_cover_it(store):
    replica = ReplicaWriter(store, store.allocate())
    replica.create()
    replica.write(0, DATA[:512])
    version, fds = replica.sync_ahead()
    replica.write(512, DATA[512:])           # arrived while the sync was under way
    for fd in fds:
        durable.sync_fd(fd)
        os.close(fd)
    replica.synced_ahead(version)
    assert not replica.synced_now


def test_a_block_published_after_a_sync_ahead_reads_back_with_its_crcs(store):
    block_id = store.allocate()
    replica = ReplicaWriter(store, block_id)
    replica.create()
    replica.write(0, DATA)
    sync_ahead(replica)
    length, digest = replica.publish()
    assert (length, digest) == (len(DATA), replica.digest())
    assert store.data_path(block_id).read_bytes() == DATA
    assert store.read_crcs(block_id, len(DATA) - len(DATA) % 512)[0] == replica.crcs
    assert not os.path.exists(store.rbw_path(block_id))


def test_a_sync_ahead_outlives_the_replica_it_was_taken_from(store):
    """A recovery or a discard may close the replica's descriptors while its sync ahead
    runs: the duplicates stay valid, and the sync closes only them."""
    replica = ReplicaWriter(store, store.allocate())
    replica.create()
    replica.write(0, DATA)
    version, fds = replica.sync_ahead()
    replica.discard()
    for fd in fds:
        durable.sync_fd(fd)
        os.close(fd)
    replica.synced_ahead(version)
    assert replica.sync_ahead() == (replica.version, [])      # closed: nothing to sync
