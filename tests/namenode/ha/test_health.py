"""health.py: HealthMonitor -- a standby behind the journal past its bound is unhealthy and
healthy again once caught up; the pulse opens the election of a gone active only for the
epoch it saw.

In-process namesystems on a real etcd member (``inprocess.py``); the pulse against real
processes is test_controller.py's.
"""

from __future__ import annotations

import pytest

from tests.namenode.ha.inprocess import controller, exists, lead, mkdir

pytestmark = pytest.mark.crash


def test_a_standby_behind_for_longer_than_the_bound_is_unhealthy(dirs, etcd, open_namesystem):
    """HAServiceProtocol.monitorHealth's view of a standby's lag: behind the journal for
    longer than nnlite.ha.standby.lag.max is unhealthy, caught up it is healthy again."""
    first, second = open_namesystem(dirs[0]), open_namesystem(dirs[1])
    lead(first, etcd, "nn1")
    ha2 = controller(second, etcd, "nn2")
    ha2.monitor.max_lag_allowed = 0.01
    ha2._follow()
    assert ha2.health() is None
    mkdir(first, "/later")
    ha2.tailer.behind_since = 0.0                   # it saw /later committed long ago
    assert "behind the shared journal" in (ha2.health() or "")
    ha2._follow()
    assert ha2.health() is None and exists(second, "/later")


def test_the_election_is_opened_only_for_the_epoch_the_standby_saw(dirs, etcd, open_namesystem):
    """A refused port deletes the leader key guarded by the epoch the standby saw: a later
    leadership (another create revision) is left alone."""
    first, second = open_namesystem(dirs[0]), open_namesystem(dirs[1])
    ha1 = lead(first, etcd, "nn1")
    epoch = ha1.state.epoch
    ha2 = controller(second, etcd, "nn2")
    ha2.monitor._open_election({"id": "nn1", "http": "127.0.0.1:1", "epoch": epoch - 1})
    assert ha1.election.leader() is not None and not ha2.wake.is_set()
    ha2.monitor._open_election({"id": "nn1", "http": "127.0.0.1:1", "epoch": epoch})
    assert ha1.election.leader() is None and ha2.wake.is_set()
