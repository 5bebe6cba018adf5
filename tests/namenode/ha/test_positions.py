"""positions.py: StandbyPositions -- a standby publishes its position (txid, lag, health, its
datanode) at most once a second, the active reads every other standby's, names only the
datanodes of fresh positions for new pipelines, and a namenode that takes over withdraws its
own.

In-process namesystems on a real etcd member (``inprocess.py``).
"""

from __future__ import annotations

import json

import pytest

from tests.namenode.ha.inprocess import LAYOUT, controller, lead, mkdir

pytestmark = pytest.mark.crash

DATANODE = {"host": "127.0.0.1", "xferPort": 1, "ipcPort": 2, "infoPort": 3, "uuid": "u"}


def test_the_active_reads_the_standby_s_position_and_names_its_fresh_datanode(
        dirs, etcd, open_namesystem):
    first, second = open_namesystem(dirs[0]), open_namesystem(dirs[1])
    ha1 = lead(first, etcd, "nn1")
    mkdir(first, "/d")
    ha2 = controller(second, etcd, "nn2")
    ha2.positions.datanode = DATANODE
    ha2._follow()
    position = ha1.standby_positions()["nn2"]
    assert position["txid"] == second.last_synced_txid == first.last_synced_txid
    assert position["behindNow"] == 0 and position["healthy"] is True
    assert position["datanode"] == DATANODE and position["ageMs"] < 5000
    assert ha1.standby_datanodes() == [DATANODE]
    ha1.positions.stale = 0.0                # every position is stale now
    assert ha1.standby_datanodes() == []
    assert ha2.standby_positions() == {} and ha2.standby_datanodes() == []


def test_a_position_is_published_at_most_once_a_second_and_withdrawn_on_leaving(
        dirs, etcd, open_namesystem):
    fs = open_namesystem(dirs[0])
    ha = controller(fs, etcd, "nn1")
    ha.takeover.auto_failover = False          # a standby that does not campaign
    ha._follow()
    key = LAYOUT.standbys + b"nn1"
    published = etcd.get(key)
    assert published is not None and json.loads(published.value)["txid"] == \
        fs.last_synced_txid
    ha.positions.publish(ha.tailer, healthy=True)     # the same second
    assert etcd.get(key).mod_revision == published.mod_revision
    ha.positions.published -= 1.0                      # a second later
    ha.positions.publish(ha.tailer, healthy=True)
    assert etcd.get(key).mod_revision > published.mod_revision
    ha.positions.leave()
    assert etcd.get(key) is None
