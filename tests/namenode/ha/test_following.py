"""The HA controller's loop (namenode/ha/controller.py) around a pause, an etcd fault and a
standby that cannot follow, with namenode/journal/journal.py's ``requires_shared``.

In-process namesystems on a real etcd member, the controller's loop driven step by step (no
threads, ``inprocess.py``): each test sets up the state a fault leaves and checks the rule
that must hold after it. Every test here failed before the rule was made. The rules of each
part the controller composes are in test_tailer.py, test_health.py, test_positions.py and
test_takeover.py.
"""

from __future__ import annotations

import pytest

from nnlite.namenode.errors import SharedJournalError
from nnlite.namenode.ha.state import HAServiceState
from tests.namenode.ha.haset import local_records
from tests.namenode.ha.inprocess import USER, controller, exists, lead, mkdir

pytestmark = pytest.mark.crash


def test_an_own_record_never_reaches_the_local_edits_without_the_shared_journal(
        dirs, open_namesystem):
    """Journal.requires_shared: an op logged while no shared journal is attached (an active
    stepping down, or one whose etcd became unavailable) fails its sync, as a batch etcd
    refused does, and the local edits keep only what the journal held."""
    fs = open_namesystem(dirs[0])
    fs.journal.requires_shared = True
    before = fs.last_synced_txid
    logged = fs.mkdirs("/lost", 0o755, USER)
    with pytest.raises(SharedJournalError):
        fs.durable(logged)
    assert fs.last_synced_txid == before
    assert max(local_records(str(dirs[0]))) == before
    fs.reload()
    assert not exists(fs, "/lost")


def test_a_standby_that_cannot_follow_says_so_once_and_neither_campaigns_nor_loops(
        dirs, etcd, open_namesystem):
    """The journal no longer holds what the standby lacks (purged after a checkpoint): it is
    unhealthy, in its report, and does not campaign with a namespace it cannot vouch for."""
    first, second = open_namesystem(dirs[0]), open_namesystem(dirs[1])
    ha1 = lead(first, etcd, "nn1")
    for n in range(5):
        mkdir(first, f"/d{n}")
    ha1.takeover.journal.purge(first.last_synced_txid + 1)    # as after a checkpoint at that txid
    ha2 = controller(second, etcd, "nn2")
    ha2._follow()
    assert ha2.health() is not None and "shared journal" in ha2.health()
    report = ha2.report()
    assert report["healthy"] is False and report["health"] == ha2.health()
    ha1.election.resign()                        # no leader: a healthy standby would run
    before = second.last_synced_txid
    for _ in range(3):
        ha2._follow()
    assert ha2.state.state is HAServiceState.STANDBY
    assert second.last_synced_txid == before
