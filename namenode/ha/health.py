"""HealthMonitor: the pulse of the peer active and this namenode's own health, as Hadoop's
``HealthMonitor`` watches a namenode for its ZKFC.

**The pulse.** A thread of its own (``watch_active``) keeps a connection to the active's
``/isActive`` (``client/peer.py``'s ``Pulse``) while this one is a standby: a standby answers
StandbyException only while that connection answers, and RetriableException as soon as it
drops (``state.py`` says why). When the active's port refuses a connection, its process is
gone (a slow or paused active still accepts: the kernel completes the handshake): the standby
deletes the leader key of the epoch it saw, guarded by that epoch, so the set need not wait
out the TTL, as HDFS's ZKFC quits the election at once when its local namenode's RPC port
refuses. Safety never rests on this: every journal write is guarded by the epoch, so an active
deposed by mistake has its next batch refused and steps down.

**Health** (``HAServiceProtocol.monitorHealth``). A standby that cannot apply the shared
journal (a txid refused, the journal purged past it) says so once (``cannot_follow``) and is
unhealthy until ``recover`` has started it again from the active's image; a standby behind
the journal for longer than ``max_lag`` seconds is unhealthy while it stays behind.
"""

from __future__ import annotations

import logging
import threading
import time

from nnlite.client.errors import EtcdError
from nnlite.client.etcd.client import Etcd
from nnlite.client.etcd.messages import Compare, Op
from nnlite.client.peer import Pulse
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.ha.checkpointer import StandbyCheckpointer
from nnlite.namenode.ha.quorum_journal import Layout
from nnlite.namenode.ha.state import HAServiceState, HAState
from nnlite.namenode.ha.tailer import EditLogTailer

log = logging.getLogger(__name__)

# an unhealthy standby asks the active for its image at most this often (seconds)
RECOVER_EVERY = 10.0
STANDBY = HAServiceState.STANDBY


class HealthMonitor:
    def __init__(self, fs: FSNamesystem, etcd: Etcd, layout: Layout, state: HAState,
                 tailer: EditLogTailer, namenode_id: str, http: str, *,
                 checkpointer: StandbyCheckpointer | None, max_lag: float,
                 stopping: threading.Event, wake: threading.Event, tls: bool = False):
        self.fs = fs
        self.etcd = etcd
        self.layout = layout
        self.state = state
        self.tailer = tailer
        self.id = namenode_id
        self.http = http
        self.tls = tls                        # the pulse speaks TLS (an HTTPS_ONLY set)
        self.checkpointer = checkpointer      # fetches the active's image to recover
        self.max_lag_allowed = max_lag
        self.stopping = stopping
        self.wake = wake                      # the HA loop's: an election opened
        # why this standby cannot follow the journal (None: it can), and its recoveries
        self.failure: str | None = None
        self.recover_at = 0.0
        self.recoveries = 0

    # ------------------------------------------------------------------ health

    def health(self) -> str | None:
        """Why this namenode is unhealthy, or None (``HAServiceProtocol.monitorHealth``): a
        standby that cannot apply the journal, or one behind it for longer than
        ``max_lag`` seconds."""
        if self.failure is not None:
            return self.failure
        since = self.tailer.behind_since
        if (self.state.state is STANDBY and since is not None and self.max_lag_allowed > 0
                and time.monotonic() - since > self.max_lag_allowed):
            return (f"this standby has been behind the shared journal for "
                    f"{time.monotonic() - since:.0f} s (more than "
                    f"nnlite.ha.standby.lag.max, {self.max_lag_allowed:g} s)")
        return None

    def cannot_follow(self, exc: Exception) -> None:
        """Say once that this standby cannot apply the shared journal: from now on it is
        unhealthy (``HAController.report``: /jmx, ``haadmin -checkHealth``, the status page)
        and neither checkpoints nor campaigns until ``recover`` has started it again from the
        active's image. No blind retry: a namespace that refused a txid refuses it again."""
        self.failure = f"cannot apply the shared journal: {exc}"
        log.error("this standby is unhealthy: %s; it starts again from the active's image "
                  "(as -bootstrapStandby) once an active answers", self.failure)

    def recover(self, leader: dict | None) -> None:
        """Start this standby again from the active's image: download it (verified), put it
        in place of its own image and edits, and follow the journal from its txid
        (``FSNamesystem.reset_to_image``). Tried at most every ``RECOVER_EVERY`` seconds."""
        now = time.monotonic()
        checkpointer = self.checkpointer
        if (leader is None or checkpointer is None or leader.get("id") == self.id
                or now < self.recover_at):
            return
        self.recover_at = now + RECOVER_EVERY
        try:
            image = checkpointer.fetch_image(leader["http"])
            try:
                self.fs.reset_to_image(str(image.path), image.md5, image.txid)
            finally:
                image.discard()
        except Exception as exc:        # logged and tried again later, the failure stays
            log.warning("could not start again from the active's image (retried in %g s): "
                        "%s", RECOVER_EVERY, exc)
            return
        log.warning("started again from the image of the active %s at txid %d: following "
                    "the shared journal from there", leader.get("id"), image.txid)
        self.failure = None
        self.tailer.reconciled = True
        self.recoveries += 1

    # ------------------------------------------------------------------ the active's pulse

    def watch_active(self) -> None:
        """Keep ``state.active_alive`` true only while the active answers on an open
        connection (module docstring); a thread's target."""
        while not self.stopping.is_set():
            active = self.state.active
            target = active.get("http") if active else None
            if self.state.state is not STANDBY or not active or not target \
                    or target == self.http:
                self.state.active_alive = False
                self.stopping.wait(0.05)
                continue
            try:
                self._pulse(target)
            except ConnectionRefusedError:
                self._open_election(active)
            except OSError:
                pass
            self.state.active_alive = False
            self.stopping.wait(0.05)

    def _open_election(self, active: dict) -> None:
        """The active at ``active['http']`` refused a connection: delete the leader key if it
        is still the one of that epoch, in one transaction guarded by its create revision (a
        later leadership, even of the same namenode, has another), so the election is open."""
        epoch = active.get("epoch")
        if not epoch:
            return
        key = self.layout.leader
        try:
            if self.etcd.txn([Compare.create_revision(key) == epoch], [Op.delete(key)]).succeeded:
                log.warning("the active %s (%s) refuses connections: its process is gone; "
                            "deleted its leader key (epoch %d)", active.get("id"),
                            active.get("http"), epoch)
                self.wake.set()
        except EtcdError as exc:
            log.info("could not open the election after the active refused connections: %s",
                     exc)

    def _pulse(self, target: str) -> None:
        with Pulse.open(target, tls=self.tls) as pulse:
            self.state.pulse = pulse.sock
            try:
                self._pulse_on(pulse, target)
            finally:
                self.state.pulse = None

    def _pulse_on(self, pulse: Pulse, target: str) -> None:
        while not self.stopping.is_set():
            active = self.state.active
            if self.state.state is not STANDBY or not active or active.get("http") != target:
                return
            alive = pulse.ask()
            self.state.active_alive = alive
            if not alive:
                return
            if pulse.closed(0.25):       # the active closed the connection (or died)
                return
