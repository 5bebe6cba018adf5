"""tailer.py: EditLogTailer -- a standby applies the committed journal up to a bound,
counts its lag, and makes its edits a prefix of the journal before it follows
(``reconcile``: edits past ``committed`` or beside the journal's records are cut).

In-process namesystems on a real etcd member (``inprocess.py``).
"""

from __future__ import annotations

import shutil

import pytest

from nnlite.namenode.errors import HAError
from nnlite.namenode.ha.quorum_journal import committed_txid
from tests.namenode.ha.inprocess import (
    LAYOUT,
    assert_prefix_of_the_journal,
    controller,
    exists,
    lead,
    mkdir,
)

pytestmark = pytest.mark.crash


def test_tail_stops_at_its_bound_and_reports_its_lag_once(dirs, etcd, open_namesystem):
    """``tail(upto)`` applies no further than ``upto`` and stays behind; the next ``tail()``
    catches up, and ``take_lag`` gives the worst lag once, then starts again from none."""
    first, second = open_namesystem(dirs[0]), open_namesystem(dirs[1])
    lead(first, etcd, "nn1")
    start = second.last_synced_txid
    for n in range(3):
        mkdir(first, f"/d{n}")
    committed = committed_txid(etcd, LAYOUT)
    assert committed is not None and committed > start + 1
    tailer = controller(second, etcd, "nn2").tailer
    assert tailer.tail(upto=committed - 1) == committed - 1
    assert tailer.behind_since is not None          # still behind the journal
    assert tailer.tail() == committed and tailer.behind_since is None
    assert exists(second, "/d2")
    behind, seconds = tailer.take_lag()
    assert behind == committed - 1 - start and seconds > 0    # the most seen at once
    assert tailer.take_lag() == (0, 0.0)


def test_a_journal_purged_past_the_standby_cannot_be_tailed(dirs, etcd, open_namesystem):
    first, second = open_namesystem(dirs[0]), open_namesystem(dirs[1])
    ha1 = lead(first, etcd, "nn1")
    mkdir(first, "/d")
    ha1.takeover.journal.purge(first.last_synced_txid + 1)
    with pytest.raises(HAError, match="no longer holds txids"):
        controller(second, etcd, "nn2").tailer.tail()


def test_edits_past_the_shared_journal_are_cut_before_following(
        dirs, etcd, etcd_single, open_namesystem):
    """A namenode whose local edits run past ``committed`` (acknowledged by no one) cuts them
    before it follows, as a JournalNode's recovery cuts a replica to the recovered segment."""
    fs = open_namesystem(dirs[0])
    ha = lead(fs, etcd, "nn1")
    for n in range(3):
        mkdir(fs, f"/shared{n}")
    committed = committed_txid(etcd, LAYOUT)
    fs.journal.requires_shared = False       # the old local-only path, to make the state
    fs.share_journal(None)
    mkdir(fs, "/local-only")
    fs.journal.requires_shared = True
    assert fs.last_synced_txid == committed + 1
    ha.takeover.step_down("a test")
    ha.election.resign()
    ha.takeover.auto_failover = False
    ha._follow()
    assert fs.last_synced_txid == committed
    assert not exists(fs, "/local-only") and exists(fs, "/shared2")
    assert_prefix_of_the_journal(dirs[0], etcd_single.endpoints)


def test_edits_beside_the_shared_journal_are_cut_and_the_active_s_applied(
        dirs, etcd, etcd_single, open_namesystem):
    """The issue's divergence: the deposed active holds its own txids N+1.. while the new
    active wrote others under the same txids. Following, it must take the journal's, not
    skip the txids it already holds."""
    first = open_namesystem(dirs[0])
    ha1 = lead(first, etcd, "nn1")
    for n in range(3):
        mkdir(first, f"/shared{n}")
    # the second namenode starts from the same state (its name dir a copy of now)
    shutil.rmtree(dirs[1])
    shutil.copytree(dirs[0], dirs[1], ignore=shutil.ignore_patterns("in_use.lock"))
    first.journal.requires_shared = False
    first.share_journal(None)
    mkdir(first, "/nn1-only-a")
    mkdir(first, "/nn1-only-b")
    first.journal.requires_shared = True
    ha1.election.resign()                    # its lease is gone: nn2 takes over
    second = open_namesystem(dirs[1])
    ha2 = lead(second, etcd, "nn2")
    for n in range(3):
        mkdir(second, f"/nn2-{n}")
    ha1.takeover.step_down("its leader key is gone")
    ha1.takeover.auto_failover = False
    ha1._follow()
    assert first.last_synced_txid == second.last_synced_txid
    assert all(exists(first, f"/nn2-{n}") for n in range(3))
    assert not exists(first, "/nn1-only-a") and not exists(first, "/nn1-only-b")
    assert_prefix_of_the_journal(dirs[0], etcd_single.endpoints)
    assert ha1.health() is None and ha2.health() is None
