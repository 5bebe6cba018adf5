"""HAController: one namenode's part in an HA set, run in a thread of its own.

As a **standby** it follows the shared journal (``quorum_journal.py``): every ``tail``
interval it reads ``committed`` and applies the chunks up to it with
``FSNamesystem.apply_replicated`` -- the replay appliers, the code startup replays with --
writing them to its own edits as they are. When the leader key is gone it campaigns
(``election.py``). Winning, it is **transitioning**: it deletes a deposed active's half batch,
catches up to ``committed`` (so it holds every acknowledged op), starts writing its batches to
etcd under its epoch, and becomes **active**; then ``on_active(first_block_id)`` runs (the
daemon's lease recovery of uploads the old active had under way). Each takeover moves the
set's ``term`` on by one and hands the new active block ids from ``term << TERM_SHIFT``: an old
active may have allocated ids that no op recorded (an upload it never closed, whose block sits
on its disk or was copied to a standby), and a block id must never name two contents.

As the **active** it renews its lease a few times per TTL. It steps down to standby -- refusing
every op at once, dropping what it had applied but not made durable (``FSNamesystem.reload``),
then following the journal -- when etcd says its lease is gone, when a guarded write is
refused (FencedError), or when its lease must have expired by its own clock. When etcd has no
quorum its batch fails (SharedJournalError) and nothing is acknowledged; it then serves reads
and refuses writes with RetriableException until etcd answers again, confirms the leadership
is still its own and the journal is caught up.

A second thread (``_watch_active``) keeps a connection to the active's ``/isActive`` while
this one is a standby: a standby answers StandbyException only while that connection
answers, and RetriableException as soon as it drops (``state.py`` says why). When the
active's port refuses a connection, its process is gone (a slow or paused active still
accepts: the kernel completes the handshake): the standby deletes the leader key of the
epoch it saw, guarded by that epoch, so the set need not wait out the TTL, as HDFS's ZKFC
quits the election at once when its local namenode's RPC port refuses. Safety never rests on this: every journal write is
guarded by the epoch, so an active deposed by mistake has its next batch refused and steps
down.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Callable

from nnlite.client.errors import EtcdError, EtcdUnavailableError
from nnlite.client.etcd.client import Etcd
from nnlite.client.etcd.messages import Compare, Op
from nnlite.client.peer import Pulse
from nnlite.formats import edits
from nnlite.formats.errors import FormatError
from nnlite.namenode.errors import FencedError, NamenodeError, ReplayError, SharedJournalError
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.ha.checkpointer import StandbyCheckpointer
from nnlite.namenode.ha.election import Election
from nnlite.namenode.ha.quorum_journal import (
    TERM_SHIFT,
    Layout,
    QuorumJournal,
    committed_txid,
    leader_value,
    read_batches,
)
from nnlite.namenode.ha.state import HAServiceState, HAState

log = logging.getLogger(__name__)

# a standby position older than this (seconds) names no datanode for new blocks; a standby
# publishes it about once a second
STALE_POSITION = 5.0
# an unhealthy standby asks the active for its image at most this often (seconds)
RECOVER_EVERY = 10.0
ACTIVE, STANDBY, TRANSITIONING = (HAServiceState.ACTIVE, HAServiceState.STANDBY,
                                  HAServiceState.TRANSITIONING)


class HAError(NamenodeError):
    """This namenode cannot take part in the HA set (another namespace, a journal behind
    its own edits)."""


class HAController:
    def __init__(self, fs: FSNamesystem, etcd: Etcd, layout: Layout, namenode_id: str,
                 http: str, *, ttl: int, tail_interval: float, journal_timeout: float,
                 edits_retained: int, drain: Callable[[Exception], None],
                 on_active: Callable[[int], None] = lambda first_block_id: None,
                 auto_failover: bool = True,
                 checkpointer: StandbyCheckpointer | None = None, max_lag: float = 0.0):
        self.fs = fs
        self.etcd = etcd
        self.layout = layout
        self.id = namenode_id
        self.http = http
        self.state = HAState()
        self.election = Election(etcd, layout, leader_value(namenode_id, http), ttl)
        self.ttl = ttl
        self.tail_interval = tail_interval
        self.journal_timeout = journal_timeout
        self.edits_retained = edits_retained
        self.drain = drain            # fails every waiter of the group commit (the event loop)
        self.on_active = on_active
        self.auto_failover = auto_failover
        self.checkpointer = checkpointer       # the standby's checkpoints (checkpointer.py)
        self.journal: QuorumJournal | None = None
        self.etcd_error: str | None = None
        self.purged_below = 0
        self.behind_since: float | None = None    # a standby saw txids it had not applied
        self.max_behind = 0                       # ... and the worst of the last second
        self.max_lag = 0.0
        self.published = 0.0
        self._positions: dict = {}
        self._positions_read = 0.0
        # this namenode's datanode as the others name it (``DatanodeID``'s fields: host,
        # xferPort, ipcPort, infoPort, uuid), published with its position; None: none runs
        self.datanode: dict | None = None
        self.transitions = 0
        # A standby's health: why it cannot follow the journal (None: it can), whether its
        # edits were compared with the journal since it last led or started, its recoveries
        self.failure: str | None = None
        self.reconciled = False
        self.recover_at = 0.0
        self.recoveries = 0
        self.max_lag_allowed = max_lag
        self.stopping = threading.Event()
        self.wake = threading.Event()      # a batch failed, a request, or stop: run the loop
        # An administrator's request, carried out by the loop: ("active",) or ("standby", s)
        self.requested: tuple | None = None
        self.ceded_until = 0.0             # no campaign before (monotonic): it gave way
        self._threads: list[threading.Thread] = []
        fs.join_ha_set(self.state)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        for target, name in ((self._run, "nnlite-ha"), (self._watch_active, "nnlite-ha-watch")):
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
        while not self.stopping.is_set():
            pause = self.tail_interval
            try:
                self._carry_out_request()
                if self.state.state is ACTIVE:
                    pause = self._lead()
                else:
                    self._follow()
                self.etcd_error = None
            except EtcdUnavailableError as exc:
                self._etcd_unavailable(exc)
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
        if self.failure is None:
            try:
                if not self.reconciled:
                    self._reconcile()
                self.tail()
            except (ReplayError, HAError, FormatError) as exc:
                self._cannot_follow(exc)
        if self.failure is not None:
            self._recover(leader)
        self._publish_position()
        if self.failure is not None:
            return          # never checkpoints nor campaigns with a namespace it cannot vouch for
        checkpointer = self.checkpointer
        if (checkpointer is not None and leader is not None and self.state.active_alive
                and checkpointer.due()):
            checkpointer.run(leader["http"], lambda end: self.tail(upto=end))
        if leader is None:
            self.state.active_alive = False
            wanted = self.auto_failover or self.requested == ("active",)
            if wanted and time.monotonic() >= self.ceded_until:
                self._campaign()

    # ------------------------------------------------------------------ a standby's health

    def _reconcile(self) -> None:
        """Make this namenode's edits a prefix of the shared journal before it follows it,
        as a JournalNode's segment recovery makes every replica agree with the recovered
        segment (``Journal.acceptRecovery``): each local record after the image that etcd
        still holds is compared, byte for byte, with etcd's record of that txid; from the
        first that differs, or lies past ``committed``, the local edits are cut
        (``FSNamesystem.truncate_edits``). A difference at or below the image cannot be cut:
        the namenode starts again from the active's image (``_recover``)."""
        committed = committed_txid(self.etcd, self.layout)
        if committed is None:
            self.reconciled = True
            return
        fs = self.fs
        local = fs.local_records(after_txid=fs.last_checkpoint_txid)
        first_bad = None
        if local:
            theirs = self._shared_records(local[0][0], min(local[-1][0], committed))
            for txid, data in local:
                if txid > committed or theirs.get(txid, data) != data:
                    first_bad = txid
                    break
        if first_bad is not None:
            where = "past" if first_bad > committed else "beside"
            log.error("this namenode's edits run %s the shared journal from txid %d "
                      "(committed %d): cutting them there", where, first_bad, committed)
            fs.truncate_edits(first_bad - 1)
        self.reconciled = True

    def _shared_records(self, first: int, last: int) -> dict[int, bytes]:
        """The shared journal's framed records of txids ``first..last`` that etcd still
        holds, by txid."""
        found: dict[int, bytes] = {}
        after = first - 1
        while after < last:
            batches = read_batches(self.etcd, self.layout, after, last)
            if not batches:
                break
            for batch in batches:
                records = edits.payloads_in(batch.data, batch.first_txid,
                                            source=f"shared journal chunk {batch.last_txid}")
                ends = [off for off, _ in records[1:]] + [len(batch.data)]
                for (off, items), end in zip(records, ends):
                    if first <= items[1] <= last:
                        found[items[1]] = batch.data[off:end]
                after = batch.last_txid
        return found

    def _cannot_follow(self, exc: Exception) -> None:
        """Say once that this standby cannot apply the shared journal: from now on it is
        unhealthy (``report``: /jmx, ``haadmin -checkHealth``, the status page) and neither
        checkpoints nor campaigns until ``_recover`` has started it again from the active's
        image. No blind retry: a namespace that refused a txid refuses it again."""
        self.failure = f"cannot apply the shared journal: {exc}"
        log.error("this standby is unhealthy: %s; it starts again from the active's image "
                  "(as -bootstrapStandby) once an active answers", self.failure)

    def _recover(self, leader: dict | None) -> None:
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
        self.reconciled = True
        self.recoveries += 1

    def health(self) -> str | None:
        """Why this namenode is unhealthy, or None (``HAServiceProtocol.monitorHealth``): a
        standby that cannot apply the journal, or one behind it for longer than
        ``max_lag`` seconds."""
        if self.failure is not None:
            return self.failure
        since = self.behind_since
        if (self.state.state is STANDBY and since is not None and self.max_lag_allowed > 0
                and time.monotonic() - since > self.max_lag_allowed):
            return (f"this standby has been behind the shared journal for "
                    f"{time.monotonic() - since:.0f} s (more than "
                    f"nnlite.ha.standby.lag.max, {self.max_lag_allowed:g} s)")
        return None

    def tail(self, upto: int | None = None) -> int:
        """Apply every committed batch this namenode lacks (up to txid ``upto`` at most);
        returns the last txid it holds."""
        committed = committed_txid(self.etcd, self.layout)
        if committed is not None and upto is not None:
            committed = min(committed, upto)
        have = self.fs.last_synced_txid
        if committed is not None and have < committed:
            self.max_behind = max(self.max_behind, committed - have)
            if self.behind_since is None:
                self.behind_since = time.monotonic()
        while committed is not None and have < committed:
            batches = read_batches(self.etcd, self.layout, have, committed)
            if not batches:
                raise HAError(f"the shared journal no longer holds txids after {have} (it "
                              f"was purged after a checkpoint): bootstrap this namenode from "
                              f"the active's image")
            for batch in batches:
                try:
                    have = self.fs.apply_replicated(batch.data, batch.first_txid,
                                                    batch.last_txid, upto=committed)
                except ReplayError:
                    # the tree may hold part of the batch: start again from the disk
                    self.fs.reload()
                    raise
        if upto is None and self.behind_since is not None:
            self.max_lag = max(self.max_lag, time.monotonic() - self.behind_since)
            self.behind_since = None
        return have

    def _publish_position(self) -> None:
        """Put this standby's position where the active reads its lag, about once a
        second: its txid, and the worst lag of that second -- the most txids it saw
        committed and not yet applied, and the longest time from seeing a committed txid
        it lacked to having applied it."""
        now = time.monotonic()
        if now - self.published < 1.0:
            return
        self.published = now
        value = json.dumps({"txid": self.fs.last_synced_txid, "lagTxns": self.max_behind,
                            "lagMs": int(self.max_lag * 1000), "http": self.http,
                            "at": time.time(), "datanode": self.datanode,
                            "healthy": self.failure is None}).encode()
        self.max_behind, self.max_lag = 0, 0.0
        self.etcd.put(self.layout.standbys + self.id.encode(), value)

    def standby_positions(self) -> dict:
        """The active's view of each standby: its txid, how many txids and how long it is
        behind, and how old that report is (``ageMs``: by the wall clocks of both, which an
        HA set keeps in step as etcd's leases assume). Reads etcd at most once a second:
        the active's loop calls it each round, so the cache stays warm for
        ``standby_datanodes``."""
        if self.state.state is not ACTIVE:
            return {}
        now = time.monotonic()
        if now - self._positions_read < 1.0:
            return self._positions
        self._positions_read = now
        committed = self.fs.last_synced_txid
        positions = {}
        try:
            for kv in self.etcd.range(self.layout.standbys, prefix=True).kvs:
                name = kv.key[len(self.layout.standbys):].decode()
                if name == self.id:
                    continue
                doc = json.loads(kv.value)
                positions[name] = {"txid": doc["txid"], "lagTxns": int(doc["lagTxns"]),
                                   "lagMs": int(doc["lagMs"]),
                                   "behindNow": max(0, committed - int(doc["txid"])),
                                   "ageMs": int((time.time() - doc.get("at", 0)) * 1000),
                                   "datanode": doc.get("datanode"),
                                   "healthy": bool(doc.get("healthy", True))}
        except (EtcdError, ValueError, KeyError):
            return self._positions
        self._positions = positions
        return positions

    def standby_datanodes(self) -> list[dict]:
        """The datanodes of the standbys whose position is fresh (younger than
        ``STALE_POSITION`` seconds when last read), in the set's order of ids; no etcd
        call (the cache ``standby_positions`` keeps). As HDFS's
        ``DatanodeManager`` leaves a datanode whose heartbeat is older than
        ``dfs.namenode.stale.datanode.interval`` out of new pipelines."""
        positions = self._positions if self.state.state is ACTIVE else {}
        return [p["datanode"] for _, p in sorted(positions.items())
                if p.get("datanode") and p["ageMs"] < STALE_POSITION * 1000]

    def _campaign(self) -> None:
        leadership = self.election.campaign()
        if leadership is None:
            return
        self.state.set(TRANSITIONING, epoch=leadership.epoch)
        try:
            self._take_over(leadership.epoch)
        except BaseException:
            self._step_down("the takeover failed")
            raise

    def _take_over(self, epoch: int) -> None:
        started = time.monotonic()
        journal = QuorumJournal(self.etcd, self.layout, epoch, self.journal_timeout)
        self._check_namespace(journal)
        committed = committed_txid(self.etcd, self.layout)
        if committed is None:
            committed = self._initialise(journal)
        have = self.tail()
        if have > committed:
            raise HAError(f"this namenode's edits reach txid {have} but the shared journal "
                          f"only {committed}: it was written outside the HA set")
        journal.clear_uncommitted(committed)
        term = self._next_term(journal)
        self._leave_standbys()
        self.journal = journal
        self.fs.share_journal(journal, self.wake.set)
        self.state.writes_blocked = None
        self.state.active = {"id": self.id, "http": self.http, "epoch": epoch}
        # Still transitioning: the uploads the old active had under way are closed first, so
        # no client finds their files under construction by a writer that is gone.
        self.on_active(term << TERM_SHIFT)
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

    def _leave_standbys(self) -> None:
        """This namenode is no longer a standby: its position goes, so that once it dies no
        active names its datanode in a pipeline while that position would still look fresh
        (``STALE_POSITION``); and the positions of the others are read afresh, not from the
        cache of an earlier time as the active."""
        self.etcd.delete(self.layout.standbys + self.id.encode())
        self._positions, self._positions_read = {}, 0.0

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

    def _lead(self) -> float:
        """One round of the active; returns the pause before the next."""
        failure = self.fs.shared_journal_failure
        if isinstance(failure, FencedError):
            self._step_down(str(failure))
            return 0.0
        if self.election.expires_in() <= 0 and self.etcd_error is None:
            self._step_down("its lease must have expired: no renewal confirmed for "
                            f"{self.ttl} s")
            return 0.0
        if failure is not None or self.state.writes_blocked is not None:
            self._restore_writes(failure)
        renew_every = self.ttl / 4
        if self.election.expires_in() <= self.ttl - renew_every:
            if not self.election.keep_alive():
                self._step_down("etcd says its lease expired")
                return 0.0
            leader = self.election.leader()
            if leader is None or leader.create_revision != self.state.epoch:
                self._step_down("its leader key is gone or another's")
                return 0.0
        self._purge()
        self.standby_positions()        # keeps standby_datanodes' view fresh
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
        leader = self.election.leader()          # raises EtcdUnavailableError meanwhile
        if leader is None or leader.create_revision != self.state.epoch:
            self._step_down("the leader key is no longer this namenode's")
            return
        self.tail()
        self.fs.share_journal(self.journal, self.wake.set)
        self.state.writes_blocked = None
        log.info("writes resumed: etcd is reachable and this namenode still leads")

    def _step_down(self, reason: str) -> None:
        """Refuse every op at once, then detach the shared journal (an op logged but not yet
        in etcd can no longer reach a local dir: ``Journal.requires_shared``), fail every
        waiter and drop what was not durable; the next ``_follow`` compares its edits with
        the journal before it applies anything."""
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
            self.reconciled = False
        try:
            self.election.resign()
        except EtcdError:
            self.election.held = None

    def _etcd_unavailable(self, exc: EtcdUnavailableError) -> None:
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
        if journal is not None and below > self.purged_below:
            if journal.purge(below):
                self.purged_below = below

    # ------------------------------------------------------------------ administration

    def _carry_out_request(self) -> None:
        request = self.requested
        if request is None:
            return
        if request[0] == "standby":
            self.requested = None
            self.ceded_until = time.monotonic() + request[1]
            if self.state.state is ACTIVE:
                self._step_down("an administrator asked it to (it gives way for "
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
        self.tail()
        leader = self.election.leader_info()
        if leader is not None and leader["id"] != self.id:
            cede(leader["http"])
        return self._become_active_now()

    def _refuse_if_unhealthy(self) -> None:
        """An unhealthy namenode does not become active (ZKFC's failover checks the target's
        health first: ``FailoverController.preFailoverChecks``)."""
        health = self.health()
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

    # ------------------------------------------------------------------ the active's pulse

    def _watch_active(self) -> None:
        """Keep ``state.active_alive`` true only while the active answers on an open
        connection (module docstring)."""
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
        with Pulse.open(target) as pulse:
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

    # ------------------------------------------------------------------ figures

    def report(self) -> dict:
        state = self.state
        journal = self.journal
        health = self.health()
        return {
            "state": state.state.value,
            "namenodeId": self.id,
            "epoch": state.epoch,
            "active": (state.active or {}).get("id"),
            "activeAlive": state.active_alive,
            "writesBlocked": state.writes_blocked,
            "etcdError": self.etcd_error,
            "transitions": self.transitions,
            "journalAppends": journal.appends if journal else 0,
            "journalAppendSeconds": journal.append_seconds if journal else 0.0,
            "lastAppliedTxid": self.fs.last_synced_txid,
            "journalCommittedTxid": journal.last_txid if journal else None,
            "standbys": self.standby_positions(),
            "checkpoints": self.checkpointer.checkpoints if self.checkpointer else 0,
            "healthy": health is None,
            "health": health,
            "recoveries": self.recoveries,
        }

