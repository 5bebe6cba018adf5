"""HAController: one namenode's part in an HA set, run in a thread of its own; it composes
the pieces Hadoop's ZKFC and standby namenode are cut into:

* ``EditLogTailer`` (``tailer.py``): as a **standby**, every ``tail`` interval, follow the
  shared journal, its edits first made a prefix of it (``reconcile``);
* ``HealthMonitor`` (``health.py``): the pulse of the active (a second thread), and whether
  this namenode is healthy: a standby that cannot apply the journal starts again from the
  active's image; one that lags too long is unhealthy;
* ``Takeover`` (``takeover.py``): when no active leads, campaign and take over; as the
  **active**, renew the lease and step down when it is lost; the administrator's transitions
  and the graceful failover;
* ``StandbyPositions`` (``positions.py``): each standby's position in etcd, and the active's
  view of them (lag, datanodes for new pipelines).

Each round of the loop (``_run``) carries out an administrator's request, then leads one
round as the active or follows one round as a standby (``_follow``: who leads, tail or
recover, publish the position, checkpoint, campaign when no one leads). A standby that cannot
vouch for its namespace neither checkpoints nor campaigns.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from nnlite.client.errors import EtcdError, EtcdUnavailableError
from nnlite.client.etcd.client import Etcd
from nnlite.formats.errors import FormatError
from nnlite.namenode.errors import HAError, ReplayError
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.ha.checkpointer import StandbyCheckpointer
from nnlite.namenode.ha.election import Election
from nnlite.namenode.ha.health import HealthMonitor
from nnlite.namenode.ha.positions import StandbyPositions
from nnlite.namenode.ha.quorum_journal import Layout, leader_value
from nnlite.namenode.ha.state import HAServiceState, HAState
from nnlite.namenode.ha.tailer import EditLogTailer
from nnlite.namenode.ha.takeover import Takeover

log = logging.getLogger(__name__)

ACTIVE, STANDBY = HAServiceState.ACTIVE, HAServiceState.STANDBY


class HAController:
    def __init__(self, fs: FSNamesystem, etcd: Etcd, layout: Layout, namenode_id: str,
                 http: str, *, ttl: int, tail_interval: float, journal_timeout: float,
                 edits_retained: int, drain: Callable[[Exception], None],
                 on_active: Callable[[int], None] = lambda first_block_id: None,
                 auto_failover: bool = True,
                 checkpointer: StandbyCheckpointer | None = None, max_lag: float = 0.0,
                 scheme: str = "http"):
        self.fs = fs
        self.id = namenode_id
        # how the set's namenodes call each other at ``http`` (host:port): http, or https
        # under HTTPS_ONLY (``Config.http_scheme``), the pulse included
        self.scheme = scheme
        self.state = HAState()
        self.election = Election(etcd, layout, leader_value(namenode_id, http), ttl)
        self.ttl = ttl
        self.tail_interval = tail_interval
        self.checkpointer = checkpointer       # the standby's checkpoints (checkpointer.py)
        self.stopping = threading.Event()
        self.wake = threading.Event()      # a batch failed, a request, or stop: run the loop
        self.tailer = EditLogTailer(fs, etcd, layout)
        self.monitor = HealthMonitor(fs, etcd, layout, self.state, self.tailer, namenode_id,
                                     http, checkpointer=checkpointer, max_lag=max_lag,
                                     stopping=self.stopping, wake=self.wake,
                                     tls=scheme == "https")
        self.positions = StandbyPositions(fs, etcd, layout, self.state, namenode_id, http)
        self.takeover = Takeover(fs, etcd, layout, self.state, self.election, self.tailer,
                                 self.monitor, self.positions, namenode_id, http, ttl=ttl,
                                 journal_timeout=journal_timeout,
                                 edits_retained=edits_retained, drain=drain,
                                 on_active=on_active, auto_failover=auto_failover,
                                 wake=self.wake)
        self._threads: list[threading.Thread] = []
        fs.join_ha_set(self.state)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        for target, name in ((self._run, "nnlite-ha"),
                             (self.monitor.watch_active, "nnlite-ha-watch")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        """Stop following or leading; an active resigns, so a standby takes over at once."""
        self.stopping.set()
        self.wake.set()
        for thread in self._threads:
            thread.join(timeout=10)
        if self.state.state is ACTIVE:
            self.state.set(HAServiceState.STOPPING)
            try:
                self.election.resign()
            except EtcdError as exc:
                log.warning("could not resign the leadership (%s): it expires with its lease",
                            exc)

    # ------------------------------------------------------------------ the loop

    def _run(self) -> None:
        takeover = self.takeover
        while not self.stopping.is_set():
            pause = self.tail_interval
            try:
                takeover.carry_out_request()
                if self.state.state is ACTIVE:
                    pause = takeover.lead()
                else:
                    self._follow()
                takeover.etcd_error = None
            except EtcdUnavailableError as exc:
                takeover.etcd_unavailable(exc)
            except HAError as exc:
                log.critical("%s", exc)
                self.state.set(STANDBY)
                pause = 5.0
            except Exception:
                log.exception("the HA loop failed (retried)")
                pause = 1.0
            self.wake.wait(pause)
            self.wake.clear()

    def _follow(self) -> None:
        # Who leads is read first: a standby that cannot apply the journal still knows the
        # active, so it answers StandbyException and can start again from the active's image.
        leader = self.election.leader_info()
        self.state.active = leader
        monitor, tailer = self.monitor, self.tailer
        if monitor.failure is None:
            try:
                if not tailer.reconciled:
                    tailer.reconcile()
                tailer.tail()
            except (ReplayError, HAError, FormatError) as exc:
                monitor.cannot_follow(exc)
        if monitor.failure is not None:
            monitor.recover(leader)
        self.positions.publish(tailer, healthy=monitor.failure is None)
        if monitor.failure is not None:
            return          # never checkpoints nor campaigns with a namespace it cannot vouch for
        checkpointer = self.checkpointer
        if (checkpointer is not None and leader is not None and self.state.active_alive
                and checkpointer.due()):
            checkpointer.run(leader["http"], lambda end: tailer.tail(upto=end))
        if leader is None:
            self.state.active_alive = False
            self.takeover.campaign_if_wanted()

    # ------------------------------------------------------------------ what others ask

    def health(self) -> str | None:
        """Why this namenode is unhealthy, or None (``HealthMonitor.health``)."""
        return self.monitor.health()

    def standby_positions(self) -> dict:
        """The active's view of each standby (``StandbyPositions.read``)."""
        return self.positions.read()

    def standby_datanodes(self) -> list[dict]:
        """The datanodes of the standbys with a fresh position, for new pipelines
        (``StandbyPositions.datanodes``; as HDFS's ``DatanodeManager`` leaves stale
        datanodes out)."""
        return self.positions.datanodes()

    def transition_to_standby(self, force: bool, cede_seconds: float | None = None) -> str:
        """``haadmin -transitionToStandby`` and a graceful failover's cede
        (``Takeover.transition_to_standby``)."""
        return self.takeover.transition_to_standby(force, cede_seconds)

    def transition_to_active(self, force: bool) -> str:
        """``haadmin -transitionToActive`` (``Takeover.transition_to_active``)."""
        return self.takeover.transition_to_active(force)

    def failover(self, cede: Callable[[str], None]) -> str:
        """A graceful failover to this namenode (``Takeover.failover``)."""
        return self.takeover.failover(cede)

    # ------------------------------------------------------------------ figures

    def report(self) -> dict:
        state = self.state
        journal = self.takeover.journal
        health = self.health()
        return {
            "state": state.state.value,
            "namenodeId": self.id,
            "epoch": state.epoch,
            "active": (state.active or {}).get("id"),
            "activeAlive": state.active_alive,
            "writesBlocked": state.writes_blocked,
            "etcdError": self.takeover.etcd_error,
            "transitions": self.takeover.transitions,
            "journalAppends": journal.appends if journal else 0,
            "journalAppendSeconds": journal.append_seconds if journal else 0.0,
            "lastAppliedTxid": self.fs.last_synced_txid,
            "journalCommittedTxid": journal.last_txid if journal else None,
            "standbys": self.standby_positions(),
            "checkpoints": self.checkpointer.checkpoints if self.checkpointer else 0,
            "healthy": health is None,
            "health": health,
            "recoveries": self.monitor.recoveries,
        }

