"""takeover.py: Takeover -- an active cut off from etcd acknowledges nothing, an unhealthy
namenode is never made active, manual transitions need force under automatic failover, and a
namenode that gave way does not campaign until its time is up, each takeover moving the
set's term on.

In-process namesystems on a real etcd member (``inprocess.py``); failovers between real
processes are test_controller.py's and test_faults.py's.
"""

from __future__ import annotations

import pytest

from nnlite.client.errors import EtcdUnavailableError
from nnlite.namenode.blocks.lease_recovery import recover_uploads
from nnlite.namenode.errors import HAError, RetriableError, SharedJournalError
from nnlite.namenode.ha.state import HAServiceState
from nnlite.namenode.namespace.leases import CREATE, client_name
from tests.namenode.ha.haset import local_records
from tests.namenode.ha.inprocess import LAYOUT, USER, controller, lead, mkdir
from tests.servers import wait_for

pytestmark = pytest.mark.crash


def test_an_active_cut_off_from_etcd_acknowledges_nothing(dirs, etcd, etcd_single, open_namesystem):
    """The issue's first cause: the active's keep-alive failed, it detached the shared
    journal and wrote the next batches to its local edits alone."""
    fs = open_namesystem(dirs[0])
    ha = lead(fs, etcd, "nn1")
    mkdir(fs, "/before")
    etcd_single.kill(0)
    logged = fs.mkdirs("/during", 0o755, USER)      # logged before the HA loop noticed
    ha.takeover.etcd_unavailable(EtcdUnavailableError("every member refused"))
    with pytest.raises(SharedJournalError):
        fs.durable(logged)
    assert fs.last_synced_txid == logged.txid - 1
    assert max(local_records(str(dirs[0]))) == logged.txid - 1


def test_writes_resume_after_a_failed_batch_only_once_the_cut_off_uploads_are_closed(
        dirs, etcd, etcd_single, open_namesystem):
    """A batch etcd could not take made the active reload, which revoked every upload: when
    etcd answers again, the takeover's own first step (``on_active``: the daemon's lease
    recovery) runs again before a client's write is let in. Else the upload's file stays
    under construction by a writer that is gone and every CREATE of it is refused
    (AlreadyBeingCreatedException), as the HA fault test's seed 11 found."""
    fs = open_namesystem(dirs[0])
    recovered: list[list[tuple[str, str]]] = []
    ha = lead(fs, etcd, "nn1", lambda first_block_id: recovered.append(recover_uploads(fs)))
    assert recovered == [[]]
    fs.durable(fs.start_upload("/f", USER, client_name(CREATE, 7), "127.0.0.1"))
    etcd_single.kill(0)
    logged = fs.mkdirs("/during", 0o755, USER)
    with pytest.raises(SharedJournalError):
        fs.durable(logged)

    def lead_once() -> bool:
        """One round of the HA loop as the active (``HAController._run``)."""
        try:
            ha.takeover.lead()
        except EtcdUnavailableError as exc:
            ha.takeover.etcd_unavailable(exc)
            return False
        ha.takeover.etcd_error = None
        return True
    assert not lead_once()          # reloads, then finds etcd still gone
    assert ha.state.writes_blocked is not None and len(recovered) == 1
    with pytest.raises(RetriableError):
        fs.mkdirs("/refused", 0o755, USER)
    etcd_single.start_member(0)
    wait_for(lambda: lead_once() and ha.state.writes_blocked is None, 60, "writes to resume")
    assert ha.state.state is HAServiceState.ACTIVE
    assert recovered[1:] == [[("/f", "closed with the blocks it has")]]
    assert fs.files_under_construction() == []
    fs.durable(fs.start_upload("/f", USER, client_name(CREATE, 8), "127.0.0.1",
                               overwrite=True))
    assert lead_once()              # a round with nothing reloaded recovers nothing
    assert len(recovered) == 2


def test_a_batch_etcd_refuses_is_cut_from_the_local_edits(dirs, etcd, open_namesystem):
    """journal.py's overlap: the active's local write runs while etcd takes the batch, so a
    batch etcd refuses (here fenced: the leader key was taken from it) has reached the local
    edits and must be cut from them again before its waiters fail."""
    fs = open_namesystem(dirs[0])
    lead(fs, etcd, "nn1")
    mkdir(fs, "/before")
    edits_file = dirs[0] / "current" / "edits"
    size = edits_file.stat().st_size
    etcd.delete(LAYOUT.leader)                      # deposed: the guard no longer holds
    logged = fs.mkdirs("/refused", 0o755, USER)
    with pytest.raises(SharedJournalError):
        fs.durable(logged)
    assert fs.last_synced_txid == logged.txid - 1
    assert max(local_records(str(dirs[0]))) == logged.txid - 1
    assert edits_file.stat().st_size == size        # cut back, no hole or torn tail left
    fs.reload()                                     # as the step-down does: from the disk
    assert fs.last_synced_txid == logged.txid - 1


def test_an_unhealthy_standby_refuses_to_become_active(dirs, etcd, open_namesystem):
    """FailoverController.preFailoverChecks: a failover to an unhealthy target is refused
    (here, the journal was purged past what the standby holds)."""
    first, second = open_namesystem(dirs[0]), open_namesystem(dirs[1])
    ha1 = lead(first, etcd, "nn1")
    mkdir(first, "/d")
    ha1.takeover.journal.purge(first.last_synced_txid + 1)
    ha2 = controller(second, etcd, "nn2")
    ha2._follow()
    for attempt in (lambda: ha2.failover(lambda http: None),
                    lambda: ha2.transition_to_active(force=True)):
        with pytest.raises(HAError, match="cannot become active: it is unhealthy"):
            attempt()
    assert ha1.state.state is HAServiceState.ACTIVE


def test_manual_transitions_need_force_under_automatic_failover(dirs, etcd, open_namesystem):
    fs = open_namesystem(dirs[0])
    ha = controller(fs, etcd, "nn1")
    for attempt in (lambda: ha.transition_to_active(force=False),
                    lambda: ha.transition_to_standby(force=False)):
        with pytest.raises(HAError, match="Refusing to manually manage HA state"):
            attempt()
    assert ha.takeover.requested is None


def test_a_ceded_active_waits_before_it_campaigns_and_each_takeover_moves_the_term(
        dirs, etcd, open_namesystem):
    fs = open_namesystem(dirs[0])
    ha = lead(fs, etcd, "nn1")
    assert etcd.get(LAYOUT.term).value == b"1"
    ha.takeover.requested = ("standby", 60.0)
    ha.takeover.carry_out_request()
    assert ha.state.state is HAServiceState.STANDBY and ha.election.leader() is None
    ha._follow()                             # no leader, but it gave way
    assert ha.state.state is HAServiceState.STANDBY
    ha.takeover.ceded_until = 0.0
    ha._follow()
    assert ha.state.state is HAServiceState.ACTIVE
    assert etcd.get(LAYOUT.term).value == b"2"
