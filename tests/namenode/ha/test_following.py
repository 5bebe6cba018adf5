"""How an HA namenode follows the shared journal around a pause, an etcd fault and a change of
roles (namenode/ha/controller.py, with namenode/journal/journal.py's ``requires_shared``).

In-process namesystems on a real etcd member, the controller's loop driven step by step (no
threads): each test sets up the state a fault leaves and checks the rule that must hold
after it. Every test here failed before the rule was made.
"""

from __future__ import annotations

import getpass
import shutil
from pathlib import Path

import pytest

from nnlite.client.errors import EtcdUnavailableError
from nnlite.client.etcd.client import Etcd
from nnlite.formats import edits
from nnlite.namenode.errors import SharedJournalError
from nnlite.namenode.fsnamesystem import FSNamesystem, format_dirs
from nnlite.namenode.ha.controller import HAController
from nnlite.namenode.ha.quorum_journal import Layout, committed_txid, read_batches
from nnlite.namenode.ha.state import HAServiceState
from nnlite.namenode.storage.namedir import EDITS, EDITS_NEW, NameDir

pytestmark = pytest.mark.crash

USER = getpass.getuser()
LAYOUT = Layout.of("/nnlite", "ns1")


def namesystem(root: Path) -> FSNamesystem:
    return FSNamesystem.open([str(root)])


def controller(fs: FSNamesystem, etcd: Etcd, nnid: str) -> HAController:
    return HAController(fs, etcd, LAYOUT, nnid, f"127.0.0.1:{hash(nnid) % 1000 + 1}", ttl=5,
                        tail_interval=0.05, journal_timeout=1.0, edits_retained=0,
                        drain=lambda exc: None, max_lag=30)


def mkdir(fs: FSNamesystem, path: str) -> int:
    logged = fs.mkdirs(path, 0o755, USER)
    fs.durable(logged)
    return logged.txid


def exists(fs: FSNamesystem, path: str) -> bool:
    """Whether the tree holds ``path`` (read past the HA state's check: a standby's too)."""
    with fs.lock:
        return fs.ns.tree.lookup(tuple(path.strip("/").split("/"))) is not None


def local_records(root: Path) -> dict[int, bytes]:
    d = NameDir(root)
    found: dict[int, bytes] = {}
    for name in (EDITS, EDITS_NEW):
        if d.file(name).exists():
            found.update(edits.framed_records(str(d.file(name))))
    return found


def shared_records(etcd: Etcd) -> dict[int, bytes]:
    committed = committed_txid(etcd, LAYOUT) or 0
    found: dict[int, bytes] = {}
    for batch in read_batches(etcd, LAYOUT, 0, committed, limit=10_000):
        records = edits.payloads_in(batch.data, batch.first_txid)
        ends = [off for off, _ in records[1:]] + [len(batch.data)]
        for (off, items), end in zip(records, ends):
            found[items[1]] = batch.data[off:end]
    return found


def assert_prefix_of_the_journal(root: Path, etcd: Etcd) -> None:
    mine, theirs = local_records(root), shared_records(etcd)
    committed = committed_txid(etcd, LAYOUT) or 0
    assert max(mine, default=0) <= committed
    for txid, data in mine.items():
        if txid in theirs:
            assert theirs[txid] == data, f"txid {txid} differs from the shared journal"


@pytest.fixture
def etcd(etcd_single):
    client = Etcd(etcd_single.endpoints)
    yield client
    client.close()


@pytest.fixture
def dirs(tmp_path):
    """Two name dirs of one namespace, as a formatted one and its copy."""
    first, second = tmp_path / "nn1", tmp_path / "nn2"
    format_dirs([NameDir(first)])
    shutil.copytree(first, second)
    return first, second


def lead(fs: FSNamesystem, etcd: Etcd, nnid: str) -> HAController:
    ha = controller(fs, etcd, nnid)
    ha._follow()                   # no leader: it campaigns and takes over
    assert ha.state.state is HAServiceState.ACTIVE
    return ha


def test_an_own_record_never_reaches_the_local_edits_without_the_shared_journal(dirs):
    """Journal.requires_shared: an op logged while no shared journal is attached (an active
    stepping down, or one whose etcd became unavailable) fails its sync, as a batch etcd
    refused does, and the local edits keep only what the journal held."""
    fs = namesystem(dirs[0])
    try:
        fs.journal.requires_shared = True
        before = fs.last_synced_txid
        logged = fs.mkdirs("/lost", 0o755, USER)
        with pytest.raises(SharedJournalError):
            fs.durable(logged)
        assert fs.last_synced_txid == before
        assert max(local_records(dirs[0])) == before
        fs.reload()
        assert not exists(fs, "/lost")
    finally:
        fs.close()


def test_an_active_cut_off_from_etcd_acknowledges_nothing(dirs, etcd, etcd_single):
    """The issue's first cause: the active's keep-alive failed, it detached the shared
    journal and wrote the next batches to its local edits alone."""
    fs = namesystem(dirs[0])
    try:
        ha = lead(fs, etcd, "nn1")
        mkdir(fs, "/before")
        etcd_single.kill(0)
        logged = fs.mkdirs("/during", 0o755, USER)      # logged before the HA loop noticed
        ha._etcd_unavailable(EtcdUnavailableError("every member refused"))
        with pytest.raises(SharedJournalError):
            fs.durable(logged)
        assert fs.last_synced_txid == logged.txid - 1
        assert max(local_records(dirs[0])) == logged.txid - 1
    finally:
        fs.close()


def test_edits_past_the_shared_journal_are_cut_before_following(dirs, etcd):
    """A namenode whose local edits run past ``committed`` (acknowledged by no one) cuts them
    before it follows, as a JournalNode's recovery cuts a replica to the recovered segment."""
    fs = namesystem(dirs[0])
    try:
        ha = lead(fs, etcd, "nn1")
        for n in range(3):
            mkdir(fs, f"/shared{n}")
        committed = committed_txid(etcd, LAYOUT)
        fs.journal.requires_shared = False       # the old local-only path, to make the state
        fs.share_journal(None)
        mkdir(fs, "/local-only")
        fs.journal.requires_shared = True
        assert fs.last_synced_txid == committed + 1
        ha._step_down("a test")
        ha.election.resign()
        ha.auto_failover = False
        ha._follow()
        assert fs.last_synced_txid == committed
        assert not exists(fs, "/local-only") and exists(fs, "/shared2")
        assert_prefix_of_the_journal(dirs[0], etcd)
    finally:
        fs.close()


def test_edits_beside_the_shared_journal_are_cut_and_the_active_s_applied(dirs, etcd):
    """The issue's divergence: the deposed active holds its own txids N+1.. while the new
    active wrote others under the same txids. Following, it must take the journal's, not
    skip the txids it already holds."""
    first, second = namesystem(dirs[0]), None
    try:
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
        second = namesystem(dirs[1])
        ha2 = lead(second, etcd, "nn2")
        for n in range(3):
            mkdir(second, f"/nn2-{n}")
        ha1._step_down("its leader key is gone")
        ha1.auto_failover = False
        ha1._follow()
        assert first.last_synced_txid == second.last_synced_txid
        assert all(exists(first, f"/nn2-{n}") for n in range(3))
        assert not exists(first, "/nn1-only-a") and not exists(first, "/nn1-only-b")
        assert_prefix_of_the_journal(dirs[0], etcd)
        assert ha1.health() is None and ha2.health() is None
    finally:
        first.close()
        if second is not None:
            second.close()


def test_a_standby_that_cannot_follow_says_so_once_and_neither_campaigns_nor_loops(
        dirs, etcd):
    """The journal no longer holds what the standby lacks (purged after a checkpoint): it is
    unhealthy, in its report, and does not campaign with a namespace it cannot vouch for."""
    first, second = namesystem(dirs[0]), namesystem(dirs[1])
    try:
        ha1 = lead(first, etcd, "nn1")
        for n in range(5):
            mkdir(first, f"/d{n}")
        ha1.journal.purge(first.last_synced_txid + 1)    # as after a checkpoint at that txid
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
    finally:
        first.close()
        second.close()


def test_a_standby_behind_for_longer_than_the_bound_is_unhealthy(dirs, etcd):
    """HAServiceProtocol.monitorHealth's view of a standby's lag: behind the journal for
    longer than nnlite.ha.standby.lag.max is unhealthy, caught up it is healthy again."""
    first, second = namesystem(dirs[0]), namesystem(dirs[1])
    try:
        lead(first, etcd, "nn1")
        ha2 = controller(second, etcd, "nn2")
        ha2.max_lag_allowed = 0.01
        ha2._follow()
        assert ha2.health() is None
        mkdir(first, "/later")
        ha2.behind_since = 0.0                   # it saw /later committed long ago
        assert "behind the shared journal" in (ha2.health() or "")
        ha2._follow()
        assert ha2.health() is None and exists(second, "/later")
    finally:
        first.close()
        second.close()


def test_an_unhealthy_standby_refuses_to_become_active(dirs, etcd):
    """FailoverController.preFailoverChecks: a failover to an unhealthy target is refused
    (here, the journal was purged past what the standby holds)."""
    from nnlite.namenode.ha.controller import HAError
    first, second = namesystem(dirs[0]), namesystem(dirs[1])
    try:
        ha1 = lead(first, etcd, "nn1")
        mkdir(first, "/d")
        ha1.journal.purge(first.last_synced_txid + 1)
        ha2 = controller(second, etcd, "nn2")
        ha2._follow()
        for attempt in (lambda: ha2.failover(lambda http: None),
                        lambda: ha2.transition_to_active(force=True)):
            with pytest.raises(HAError, match="cannot become active: it is unhealthy"):
                attempt()
        assert ha1.state.state is HAServiceState.ACTIVE
    finally:
        first.close()
        second.close()
