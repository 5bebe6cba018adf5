"""Takeover: campaign, become active, lead, step down and give way -- Hadoop's
``ActiveStandbyElector`` and the failover part of its ``ZKFailoverController``.

When the leader key is gone a standby campaigns (``election.py``). Winning, it is
**transitioning**: it deletes a deposed active's half batch, catches up to ``committed`` (so
it holds every acknowledged op), starts writing its batches to etcd under its epoch, and
becomes **active**; then ``on_active(first_block_id)`` runs (the daemon's lease recovery of
uploads the old active had under way). Each takeover moves the set's ``term`` on by one and
hands the new active block ids from ``term << TERM_SHIFT``: an old active may have allocated
ids that no op recorded (an upload it never closed, whose block sits on its disk or was copied
to a standby), and a block id must never name two contents.

As the **active** (``lead``, one round of the HA loop) it renews its lease a few times per
TTL. It steps down to standby -- refusing every op at once, dropping what it had applied but
not made durable (``FSNamesystem.reload``), then following the journal -- when etcd says its
lease is gone, when a guarded write is refused (FencedError), or when its lease must have
expired by its own clock. When etcd has no quorum its batch fails (SharedJournalError) and
nothing is acknowledged; it then serves reads and refuses writes with RetriableException until
etcd answers again, confirms the leadership is still its own and the journal is caught up.
A batch that failed made it reload, which revoked every upload: before the writes resume,
``on_active`` runs again and closes their files, as after a takeover.

**Administration** (ZKFC's): ``haadmin -transitionToActive`` and ``-transitionToStandby``
(refused under automatic failover unless forced), and the graceful failover
(``gracefulFailover``): the active is asked to step down and give way (``cedeActive``: no
campaign before ``ceded_until``), then the target campaigns at once. The HA loop carries
each request out (``carry_out_request``); an unhealthy namenode is never made active
(``FailoverController.preFailoverChecks``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from nnlite.client.errors import EtcdError, EtcdUnavailableError
from nnlite.client.etcd.client import Etcd
from nnlite.client.etcd.messages import Compare, Op
from nnlite.namenode.errors import FencedError, HAError, SharedJournalError
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.ha.election import Election
from nnlite.namenode.ha.health import HealthMonitor
from nnlite.namenode.ha.positions import StandbyPositions
from nnlite.namenode.ha.quorum_journal import TERM_SHIFT, Layout, QuorumJournal, committed_txid
from nnlite.namenode.ha.state import HAServiceState, HAState
from nnlite.namenode.ha.tailer import EditLogTailer

log = logging.getLogger(__name__)

ACTIVE, STANDBY, TRANSITIONING = (HAServiceState.ACTIVE, HAServiceState.STANDBY,
                                  HAServiceState.TRANSITIONING)


class Takeover:
    def __init__(self, fs: FSNamesystem, etcd: Etcd, layout: Layout, state: HAState,
                 election: Election, tailer: EditLogTailer, monitor: HealthMonitor,
                 positions: StandbyPositions, namenode_id: str, http: str, *, ttl: int,
                 journal_timeout: float, edits_retained: int,
                 drain: Callable[[Exception], None], on_active: Callable[[int], None],
                 auto_failover: bool, wake: threading.Event):
        self.fs = fs
        self.etcd = etcd
        self.layout = layout
        self.state = state
        self.election = election
        self.tailer = tailer
        self.monitor = monitor
        self.positions = positions
        self.id = namenode_id
        self.http = http
        self.ttl = ttl
        self.journal_timeout = journal_timeout
        self.edits_retained = edits_retained
        self.drain = drain            # fails every waiter of the group commit (the event loop)
        self.on_active = on_active
        self.auto_failover = auto_failover
        self.wake = wake              # the HA loop's: a batch failed, a request
        self.journal: QuorumJournal | None = None
        self.term = 0                 # the set's term this namenode took over in
        # a reload since writes were blocked: its uploads were revoked and their files left
        # under construction by writers that are gone
        self.reloaded = False
        self.etcd_error: str | None = None      # the HA loop's last etcd failure, if any
        self.purged_below = 0
        self.transitions = 0
        # An administrator's request, carried out by the loop: ("active",) or ("standby", s)
        self.requested: tuple | None = None
        self.ceded_until = 0.0             # no campaign before (monotonic): it gave way

    # ------------------------------------------------------------------ the election

    def campaign_if_wanted(self) -> None:
        """No active leads: campaign, under automatic failover or when asked to, unless this
        namenode gave way a moment ago."""
        wanted = self.auto_failover or self.requested == ("active",)
        if wanted and time.monotonic() >= self.ceded_until:
            self.campaign()

    def campaign(self) -> None:
        leadership = self.election.campaign()
        if leadership is None:
            return
        self.state.set(TRANSITIONING, epoch=leadership.epoch)
        try:
            self._take_over(leadership.epoch)
        except BaseException:
            self.step_down("the takeover failed")
            raise

    def _take_over(self, epoch: int) -> None:
        started = time.monotonic()
        journal = QuorumJournal(self.etcd, self.layout, epoch, self.journal_timeout)
        self._check_namespace(journal)
        committed = committed_txid(self.etcd, self.layout)
        if committed is None:
            committed = self._initialise(journal)
        have = self.tailer.tail()
        if have > committed:
            raise HAError(f"this namenode's edits reach txid {have} but the shared journal "
                          f"only {committed}: it was written outside the HA set")
        journal.clear_uncommitted(committed)
        term = self.term = self._next_term(journal)
        self.positions.leave()
        self.journal = journal
        self.fs.share_journal(journal, self.wake.set)
        self.state.writes_blocked = None
        self.state.active = {"id": self.id, "http": self.http, "epoch": epoch}
        # Still transitioning: the uploads the old active had under way are closed first, so
        # no client finds their files under construction by a writer that is gone.
        self.on_active(term << TERM_SHIFT)
        self.reloaded = False
        self.state.set(ACTIVE)
        self.transitions += 1
        log.info("active now: epoch %d, term %d, txid %d, caught up in %.3f s", epoch, term,
                 have, time.monotonic() - started)

    def _check_namespace(self, journal: QuorumJournal) -> None:
        kv = self.etcd.get(self.layout.namespace)
        mine = str(self.fs.namespace_id).encode()
        if kv is None:
            self.etcd.txn([journal._guard(), Compare.version(self.layout.namespace) == 0],
                          [Op.put(self.layout.namespace, mine)])
        elif kv.value != mine:
            raise HAError(f"namespace id {self.fs.namespace_id} is not the HA set's "
                          f"({kv.value.decode()}): this namenode's name dirs belong to another "
                          f"namespace")

    def _next_term(self, journal: QuorumJournal) -> int:
        kv = self.etcd.get(self.layout.term)
        term = 1 + (int(kv.value) if kv is not None else 0)
        guard = (Compare.version(self.layout.term) == 0 if kv is None
                 else Compare.value(self.layout.term) == kv.value)
        result = self.etcd.txn([journal._guard(), guard],
                               [Op.put(self.layout.term, str(term).encode())])
        if not result.succeeded:
            raise FencedError("the set's term moved while this namenode took over")
        return term

    def _initialise(self, journal: QuorumJournal) -> int:
        """The first active of a new HA set: its local edits are the journal's base."""
        base = self.fs.last_synced_txid
        result = self.etcd.txn([journal._guard(), Compare.version(self.layout.committed) == 0],
                               [Op.put(self.layout.committed, str(base).encode())])
        if not result.succeeded:
            raise FencedError("the shared journal was initialised by another namenode")
        log.info("initialised the shared journal at txid %d", base)
        return base

    # ------------------------------------------------------------------ the active

    def lead(self) -> float:
        """One round of the active; returns the pause before the next."""
        failure = self.fs.shared_journal_failure
        if isinstance(failure, FencedError):
            self.step_down(str(failure))
            return 0.0
        if self.election.expires_in() <= 0 and self.etcd_error is None:
            self.step_down("its lease must have expired: no renewal confirmed for "
                           f"{self.ttl} s")
            return 0.0
        if failure is not None or self.state.writes_blocked is not None:
            self._restore_writes(failure)
        renew_every = self.ttl / 4
        if self.election.expires_in() <= self.ttl - renew_every:
            if not self.election.keep_alive():
                self.step_down("etcd says its lease expired")
                return 0.0
            leader = self.election.leader()
            if leader is None or leader.create_revision != self.state.epoch:
                self.step_down("its leader key is gone or another's")
                return 0.0
        self._purge()
        self.positions.read()        # keeps the view of positions.datanodes fresh
        return min(renew_every / 2, 0.25)

    def _restore_writes(self, failure: SharedJournalError | None) -> None:
        """After a batch etcd did not take: drop what was not durable, then, once etcd
        confirms the leadership is still this one's, catch up and write again."""
        if failure is not None:
            self.state.writes_blocked = (
                f"The shared journal in etcd cannot take writes now ({failure}). Reads go on; "
                f"writes resume by themselves once etcd has a quorum again.")
            self.fs.share_journal(None)
            self.drain(failure)
            self.fs.reload()
            self.reloaded = True
        leader = self.election.leader()          # raises EtcdUnavailableError meanwhile
        if leader is None or leader.create_revision != self.state.epoch:
            self.step_down("the leader key is no longer this namenode's")
            return
        self.tailer.tail()
        self.fs.share_journal(self.journal, self.wake.set)
        if self.reloaded:
            # Clients' writes still refused: what a takeover does first is done again, since
            # the reload revoked every upload and stopped the delegation tokens. Otherwise
            # their files stay under construction by writers that are gone, and every
            # CREATE of those paths is refused with AlreadyBeingCreatedException.
            try:
                self.on_active(self.term << TERM_SHIFT)
            except SharedJournalError:
                return           # the next round sees the failed batch and reloads again
            self.reloaded = False
        self.state.writes_blocked = None
        log.info("writes resumed: etcd is reachable and this namenode still leads")

    def step_down(self, reason: str) -> None:
        """Refuse every op at once, then detach the shared journal (an op logged but not yet
        in etcd can no longer reach a local dir: ``Journal.requires_shared``), fail every
        waiter and drop what was not durable; the next round as a standby compares its edits
        with the journal before it applies anything (``EditLogTailer.reconcile``)."""
        log.warning("stepping down to standby: %s", reason)
        was_active = self.state.state is not STANDBY
        self.state.set(STANDBY)
        self.state.active_alive = False
        self.state.writes_blocked = None
        self.fs.share_journal(None)
        self.journal = None
        if was_active:
            self.drain(SharedJournalError(f"this namenode stepped down ({reason}); the op was "
                                          f"not acknowledged"))
            self.fs.reload()
            self.tailer.reconciled = False
        try:
            self.election.resign()
        except EtcdError:
            self.election.held = None

    def etcd_unavailable(self, exc: EtcdUnavailableError) -> None:
        if self.etcd_error is None:
            log.warning("etcd is unavailable: %s", exc)
        self.etcd_error = str(exc)
        if self.state.state is ACTIVE and self.state.writes_blocked is None:
            # New writes are refused; a batch under way stays bound to the shared journal,
            # where it either reaches etcd's quorum under this epoch or fails unacknowledged
            # (never to the local edits alone).
            self.state.writes_blocked = (f"etcd is unavailable ({exc}). Reads go on; writes "
                                         f"resume by themselves once etcd has a quorum again.")

    def _purge(self) -> None:
        journal = self.journal
        below = self.fs.last_checkpoint_txid + 1 - self.edits_retained
        if journal is not None and below > self.purged_below and journal.purge(below):
            self.purged_below = below

    # ------------------------------------------------------------------ administration

    def carry_out_request(self) -> None:
        request = self.requested
        if request is None:
            return
        if request[0] == "standby":
            self.requested = None
            self.ceded_until = time.monotonic() + request[1]
            if self.state.state is ACTIVE:
                self.step_down("an administrator asked it to (it gives way for "
                               f"{request[1]:g} s)")
        elif self.state.state is ACTIVE:
            self.requested = None

    def transition_to_standby(self, force: bool, cede_seconds: float | None = None) -> str:
        """``haadmin -transitionToStandby`` (refused under automatic failover unless forced)
        and the cede of a graceful failover: step down and campaign again only after
        ``cede_seconds`` (default: three lease TTLs). Returns the state reached."""
        if self.auto_failover and not force and cede_seconds is None:
            raise HAError("Refusing to manually manage HA state, since automatic failover is "
                          "enabled. Use -failover instead, or force it (--forcemanual).")
        seconds = 3 * self.ttl if cede_seconds is None else cede_seconds
        self.requested = ("standby", seconds)
        self.wake.set()
        return self._await(lambda: self.state.state is STANDBY, "standby")

    def transition_to_active(self, force: bool) -> str:
        """``haadmin -transitionToActive``: campaign now; refused under automatic failover
        unless forced, and while another namenode is active (use ``failover``)."""
        if self.auto_failover and not force:
            raise HAError("Refusing to manually manage HA state, since automatic failover is "
                          "enabled. Use -failover instead, or force it (--forcemanual).")
        if self.state.state is ACTIVE:
            return "active"
        self._refuse_if_unhealthy()
        leader = self.election.leader_info()
        if leader is not None and leader["id"] != self.id:
            raise HAError(f"namenode {leader['id']} is active: use -failover "
                          f"{leader['id']} {self.id} to move the active role here")
        return self._become_active_now()

    def failover(self, cede: Callable[[str], None]) -> str:
        """A graceful failover to this namenode (HDFS's ``-failover`` under automatic
        failover, ZKFC's ``gracefulFailover``): ``cede(http)`` asks the active at ``http`` to
        step down and give way, then this one campaigns at once."""
        if self.state.state is ACTIVE:
            return "active"
        self._refuse_if_unhealthy()
        self.tailer.tail()
        leader = self.election.leader_info()
        if leader is not None and leader["id"] != self.id:
            cede(leader["http"])
        return self._become_active_now()

    def _refuse_if_unhealthy(self) -> None:
        """An unhealthy namenode does not become active (ZKFC's failover checks the target's
        health first: ``FailoverController.preFailoverChecks``)."""
        health = self.monitor.health()
        if health is not None:
            raise HAError(f"namenode {self.id} cannot become active: it is unhealthy "
                          f"({health})")

    def _become_active_now(self) -> str:
        self.ceded_until = 0.0
        self.requested = ("active",)
        self.wake.set()
        return self._await(lambda: self.state.state is ACTIVE, "active")

    def _await(self, reached: Callable[[], bool], name: str) -> str:
        deadline = time.monotonic() + 3 * self.ttl + 10
        with self.state.changed:
            while not reached():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise HAError(f"namenode {self.id} did not become {name} within "
                                  f"{3 * self.ttl + 10:g} s (it is {self.state.state.value})")
                self.state.changed.wait(min(left, 0.1))
        return name
