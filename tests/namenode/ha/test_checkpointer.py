"""The standby checkpoints for the HA set (namenode/ha/checkpointer.py)."""

from __future__ import annotations

import http.client
import json

import pytest

from nnlite.client.etcd.client import Etcd
from nnlite.namenode.ha.quorum_journal import Layout
from tests.namenode.ha.haset import HASet
from tests.namenode.ha.test_controller import admin, exists, mkdirs
from tests.servers import wait_for

pytestmark = pytest.mark.crash


@pytest.fixture
def haset(tmp_path, etcd_cluster):
    """Two namenodes whose standby checkpoints every 100 txns, looked at every second, etcd
    purged to the image."""
    ha = HASet(tmp_path, etcd_cluster, settings={
        "checkpoint.txns": "100", "checkpoint.period": "3600", "checkpoint.check.period": "1",
        "nnlite.ha.edits.retained": "0"})
    try:
        yield ha
    finally:
        ha.close()


def roll(url: str) -> int:
    """The secondary's roll (``POST /checkpoint/roll`` with the set's secret): its end R."""
    conn = http.client.HTTPConnection(*url.removeprefix("http://").split(":"), timeout=30)
    try:
        conn.request("POST", "/checkpoint/roll", headers={"X-Nnlite-Secret": "ha-set-secret"})
        resp = conn.getresponse()
        body = resp.read()
    finally:
        conn.close()
    assert resp.status == 200, body
    return int(json.loads(body)["edits"]["last_txid"])


def checkpoint_txid(haset: HASet, i: int) -> int:
    bean = haset.jmx(i)
    return int(bean["LastWrittenTransactionId"]) - int(bean["TransactionsSinceLastCheckpoint"])


def test_the_standby_checkpoints_the_active_purges_etcd_and_a_failover_keeps_everything(
        haset, etcd_cluster):
    first = haset.start_all()
    second = 1 - first
    for n in range(250):
        assert mkdirs(haset.url(first), f"/d{n}")[0] == 200
    wait_for(lambda: int(haset.jmx(first)["TransactionsSinceLastCheckpoint"]) < 100, 30,
             "the standby's checkpoint to reach the active")
    active_bean = haset.jmx(first)
    assert int(active_bean["LastCheckpointTime"]) > 0
    # the standby's own image is the one it uploaded
    assert int(haset.jmx(second)["TransactionsSinceLastCheckpoint"]) < 100
    # and the shared journal no longer holds what the image covers
    etcd = Etcd(etcd_cluster.endpoints)
    layout = Layout.of("/nnlite", "ns1")
    checkpoint = int(active_bean["LastWrittenTransactionId"]) - int(
        active_bean["TransactionsSinceLastCheckpoint"])

    def purged() -> bool:
        keys = etcd.range(layout.txns, layout.txns + b"\xff", keys_only=True).kvs
        return bool(keys) is False or min(layout.txid_of(kv.key) for kv in keys) > checkpoint
    wait_for(purged, 30, "the shared journal to be purged below the checkpoint")
    haset.kill(first)
    assert haset.active(excluding=first) == second
    assert all(exists(haset.url(second), f"/d{n}") for n in range(0, 250, 7))
    haset.start(first)                       # it restarts from its (older) image
    assert mkdirs(haset.url(second), "/after")[0] == 200
    wait_for(lambda: haset.synced_txid(first) >= haset.synced_txid(second), 60,
             "the restarted namenode to follow")


def test_a_standby_past_the_pending_roll_saves_where_it_is_and_the_active_takes_it(haset):
    """A roll whose checkpoint never finished (the standby was killed mid-checkpoint) stays
    pending, and every later roll names its end R; a standby already past R saves at its own
    last applied txid, as Hadoop's StandbyCheckpointer does, and the active installs that
    image over edits that start at R + 1. Before, the standby had to be exactly at R and
    every checkpoint failed from then on, the journal in etcd growing without a purge."""
    first = haset.start_all()
    second = 1 - first
    for n in range(5):
        assert mkdirs(haset.url(first), f"/early{n}")[0] == 200
    rolled = roll(haset.url(first))
    for n in range(150):
        assert mkdirs(haset.url(first), f"/d{n}")[0] == 200
    wait_for(lambda: checkpoint_txid(haset, first) > rolled, 120,
             "the standby's checkpoint past the roll to reach the active")
    assert checkpoint_txid(haset, first) > rolled + 1
    # the active restarts from that image and the edits after R
    haset.kill(first)
    assert haset.active(excluding=first) == second
    haset.start(first)
    assert mkdirs(haset.url(second), "/after")[0] == 200
    wait_for(lambda: haset.synced_txid(first) >= haset.synced_txid(second), 60,
             "the restarted namenode to follow")
    assert admin(haset.url(first), "FAILOVER")[0] == 200
    assert all(exists(haset.url(first), f"/d{n}") for n in range(0, 150, 7))
    assert exists(haset.url(first), "/early4") and exists(haset.url(first), "/after")
