"""The HA set under faults (issue 34): no acknowledged write lost, no standby diverged.

Each test is one seeded round of faults injected from outside, as an operator's bad day would
bring them, while 32 WebHDFS writers (``haset.Writers``: MKDIRS and small files, retrying and
following the active as Hadoop's failover client does) record every acknowledged op:

* ``kill-active`` / ``kill-standby``: SIGKILL of a namenode, started again on its name dir
  after ``hold`` seconds, as ``nnlite run-ha``'s supervisor restarts it;
* ``kill-standby-in-checkpoint``: the same, once the active has rolled its edits for the
  standby's checkpoint (its ``edits.new`` exists) -- the standby dies mid-checkpoint;
* ``pause-active``: SIGSTOP of the active for 1-12 s, ``pause-active-past-lease`` for 2-3x
  the lease's TTL, then SIGCONT;
* ``etcd-one``: one etcd member SIGKILLed and started again; ``etcd-two``: two at once (the
  quorum is lost), then both started again.

Each fault begins at a random point of the writers' work (after ``after`` more acknowledged
ops). Once it is healed the set must serve again, and the standby follow (reach the txid
the active had then); a standby that takes no checkpoint for 60 s under load is stuck too.
A stuck set has its namenodes' threads dumped into the report. At the end of the round,
every process running and the writers stopped, ``check_round`` waits until both namenodes
hold the same txid, then finds:

* every acknowledged directory and file on the active, each file byte for byte; a graceful
  failover to the other namenode (``/admin?op=FAILOVER``), the same there, and a failover
  back;
* each namenode's local edits a prefix of the shared journal: every txid etcd still holds
  has the same record bytes in the name dir, and none is above ``committed``;
* a checkpoint installed on the active and etcd purged below its image's txid less
  ``nnlite.ha.edits.retained``;
* after the last round, both namenodes stopped: each name dir loaded offline by nnlite's own
  startup (``startup.load``), the two namespaces the same, every acknowledged path in them.

The schedule is a function of the seed and the round alone (``schedule``) and is printed with
every finding, so a failing seed replays the same faults: ``pytest -k 'seed-7'``, or
``bench/ha_soak.py --seeds 7`` (the soak: many seeds and rounds, bench/ha_soak.py).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from nnlite.client.errors import EtcdError
from nnlite.formats import edits
from nnlite.namenode.storage.namedir import EDITS_NEW
from tests.etcd_cluster import EtcdCluster
from tests.namenode.ha.haset import (
    HASet,
    Writers,
    diverged,
    load_offline,
    local_records,
    shared_records,
)
from tests.servers import wait_for

TTL = 2
CHECKPOINT_TXNS = 400
EDITS_RETAINED = 100
SETTINGS = {
    "nnlite.ha.lease.ttl": str(TTL),
    "checkpoint.txns": str(CHECKPOINT_TXNS),
    "checkpoint.period": "5",           # and a failed checkpoint is tried again after 5 s
    "nnlite.ha.edits.retained": str(EDITS_RETAINED),
}
KINDS = ("kill-active", "kill-standby", "kill-standby-in-checkpoint", "pause-active",
         "pause-active-past-lease", "etcd-one", "etcd-two")
# Deadlines of conditions: generous, the machine is 2 busy cores.
RECOVERY = 90.0             # the set serves again after a fault healed
SYNC = 90.0                 # the namenodes reach one txid once the writers stopped
PURGE = 60.0                # a checkpoint is installed and etcd purged below it
START = 120.0               # a namenode restarted on its name dir is loaded
# together every kind of fault: 1 pauses the active 9.4 s, 11 past its lease and loses
# etcd's quorum, 2 and 11 kill the standby mid-checkpoint
SUITE_SEEDS = (1, 2, 11)
SUITE_FAULTS = 4


@dataclass(frozen=True)
class Fault:
    kind: str
    after: int                  # acknowledged ops from the previous fault's healing to this one
    hold: float                 # seconds it lasts: down time, pause
    members: tuple[int, ...] = ()   # the etcd members it kills

    def __str__(self) -> str:
        where = f" members {list(self.members)}" if self.members else ""
        return f"{self.kind}{where} after {self.after} ops, held {self.hold:.2f} s"


def schedule(seed: int, round_: int, faults: int) -> list[Fault]:
    """The faults of round ``round_`` of ``seed``: the same for the same arguments."""
    rng = random.Random(f"issue-34/{seed}/{round_}")
    plan = []
    for _ in range(faults):
        kind = rng.choice(KINDS)
        after = rng.randint(20, 400)
        if kind == "pause-active":
            hold = rng.uniform(1, 12)
        elif kind == "pause-active-past-lease":
            hold = rng.uniform(2 * TTL, 3 * TTL)
        elif kind.startswith("etcd"):
            hold = rng.uniform(1, 8)
        else:
            hold = rng.uniform(0, 3)
        members = tuple(sorted(rng.sample(range(3), 2 if kind == "etcd-two" else 1))) \
            if kind.startswith("etcd") else ()
        plan.append(Fault(kind, after, hold, members))
    return plan


class RoundFailed(AssertionError):
    pass


@dataclass
class Round:
    """One round of ``faults`` on a running set, its writers, and what it saw."""
    haset: HASet
    etcd: EtcdCluster
    seed: int
    number: int
    faults: list[Fault]
    out: Callable[[str], None] = print
    events: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    earlier: list[Writers] = field(default_factory=list)    # the earlier rounds' writers
    writers: Writers | None = None
    lost: int = 0               # acknowledged ops found missing or unreadable
    started: float = field(default_factory=time.monotonic)

    @property
    def everyone(self) -> list[Writers]:
        return self.earlier + ([self.writers] if self.writers else [])

    @property
    def acknowledged(self) -> int:
        return 0 if self.writers is None else self.writers.total() + len(self.writers.files)

    def log(self, line: str) -> None:
        line = f"  [{time.monotonic() - self.started:7.2f} s] {line}"
        self.events.append(line)
        self.out(line)

    def header(self) -> str:
        return (f"seed {self.seed} round {self.number}: "
                + "; ".join(f"{i + 1}. {f}" for i, f in enumerate(self.faults)))

    def run(self) -> Writers:
        self.out(self.header())
        self.writers = Writers(self.haset, 32, file_every=4, prefix=f"/r{self.number}")
        with self.writers:
            for fault in self.faults:
                self._progress(fault.after, f"before {fault.kind}")
                self.log(f"begin {fault}")
                getattr(self, "_" + fault.kind.replace("-", "_"))(fault)
                self._serving(fault)
        self.log(f"writers stopped: {self.writers.total()} MKDIRS and "
                 f"{len(self.writers.files)} files acknowledged, {len(self.writers.errors)} "
                 f"other answers")
        return self.writers

    # ---------------------------------------------------------------- the faults

    def _kill_active(self, fault: Fault) -> None:
        self._kill_and_restart(self.active(), fault.hold, "active")

    def _kill_standby(self, fault: Fault) -> None:
        self._kill_and_restart(1 - self.active(), fault.hold, "standby")

    def _kill_standby_in_checkpoint(self, fault: Fault) -> None:
        active = self.active()
        rolled = Path(self.haset.dirs[active]) / "current" / EDITS_NEW
        try:
            wait_for(rolled.exists, 60, "the active to roll for a checkpoint", interval=0.01)
            self.log(f"{self.haset.ids[active]} rolled its edits for a checkpoint")
        except TimeoutError:    # a following standby checkpoints every 5 s under load
            self._fail(f"no checkpoint began within 60 s: the standby "
                       f"{self.haset.ids[1 - active]} took none; {self._states()}", stuck=True)
        self._kill_and_restart(1 - active, fault.hold, "standby")

    def _kill_and_restart(self, i: int, hold: float, role: str) -> None:
        self.haset.kill(i)
        self.log(f"kill -9 {self.haset.ids[i]} ({role})")
        time.sleep(hold)                        # the fault's down time
        self._start(i)
        self.log(f"{self.haset.ids[i]} started again")

    def _start(self, i: int) -> None:
        try:
            self.haset.start(i, timeout=START)
        except (RuntimeError, TimeoutError) as exc:
            self._fail(f"{self.haset.ids[i]} did not start again on its name dir: "
                       f"{str(exc)[-1500:]}")

    def _pause_active(self, fault: Fault) -> None:
        active = self.active()
        self.haset.pause(active)
        self.log(f"SIGSTOP {self.haset.ids[active]} (active)")
        time.sleep(fault.hold)                  # the fault's length
        self.haset.resume(active)
        self.log(f"SIGCONT {self.haset.ids[active]}")

    _pause_active_past_lease = _pause_active

    def _etcd_one(self, fault: Fault) -> None:
        self._etcd_down(fault)

    _etcd_two = _etcd_one

    def _etcd_down(self, fault: Fault) -> None:
        for m in fault.members:
            self.etcd.kill(m)
        self.log(f"kill -9 etcd member(s) {list(fault.members)}")
        time.sleep(fault.hold)                  # the fault's down time
        for m in fault.members:
            self.etcd.start_member(m, timeout=START)
        self.log(f"etcd member(s) {list(fault.members)} started again")

    # ---------------------------------------------------------------- after each fault

    def _progress(self, ops: int, what: str) -> None:
        assert self.writers is not None
        try:
            self.writers.wait_progress(ops, RECOVERY)
        except TimeoutError as exc:
            self._fail(f"no progress {what}: {exc}; {self._states()}", stuck=True)

    def _serving(self, fault: Fault) -> None:
        """Every namenode process runs (one that exited by itself is a finding, and is
        started again), and the writers are acknowledged again."""
        for i in range(len(self.haset.ids)):
            if not self.haset.running(i):
                node = self.haset.nodes[i]
                code = node.proc.returncode if node is not None else None
                self.findings.append(f"{self.haset.ids[i]} exited by itself (code {code}) "
                                     f"after {fault.kind}")
                self._start(i)
        self._progress(50, f"within {RECOVERY:g} s after {fault.kind} healed")
        active = self.active()
        self._following(active, fault)
        self.log(f"serving again: active {self.haset.ids[active]}, "
                 f"{self.haset.ids[1 - active]} following")

    def _following(self, active: int, fault: Fault) -> None:
        """The standby applies the journal again: it reaches the txid the active has now
        (its lag is a tail interval and a batch)."""
        haset = self.haset
        seen = {}

        def caught_up() -> bool:
            try:
                if "active" not in seen:
                    seen["active"] = haset.synced_txid(active)
                seen["standby"] = haset.synced_txid(1 - active)
                return seen["standby"] >= seen["active"]
            except (OSError, ValueError, KeyError):
                return False
        try:
            wait_for(caught_up, RECOVERY, "the standby to follow", interval=0.1)
        except TimeoutError:
            self._fail(f"{haset.ids[1 - active]} did not follow within {RECOVERY:g} s after "
                       f"{fault.kind}: at txid {seen.get('standby')}, the active was at "
                       f"{seen.get('active')}; {self._states()}", stuck=True)

    def active(self) -> int:
        try:
            return self.haset.active(RECOVERY)
        except TimeoutError:
            self._fail(f"no namenode active within {RECOVERY:g} s: {self._states()}",
                       stuck=True)
            raise

    def _states(self) -> str:
        states = []
        for i, nn in enumerate(self.haset.ids):
            try:
                bean = self.haset.jmx(i)
                role = "active" if bean.get("HAActive") else "standby"
                states.append(f"{nn} {role} at txid {bean['LastSyncedTransactionId']}")
            except (OSError, ValueError, KeyError) as exc:
                states.append(f"{nn} no answer ({exc.__class__.__name__})")
        return ", ".join(states)

    def _fail(self, finding: str, stuck: bool = False) -> None:
        """Raise RoundFailed with ``finding``; a ``stuck`` set (no progress, no active, no
        common txid) first has its namenodes' threads dumped to their logs."""
        self.findings.append(finding)
        if stuck:
            self.haset.dump_threads()
        self.raise_findings()

    def raise_findings(self) -> None:
        """RoundFailed with the report, if anything was found; what the name dirs hold above
        etcd's ``committed`` is added first."""
        if self.findings:
            self.findings += acknowledged_only_locally(self)
            raise RoundFailed(self.report())

    def report(self) -> str:
        replay = f"replay: bench/ha_soak.py --seeds {self.seed} --rounds {self.number}"
        return "\n".join([self.header(), replay, *self.events, "findings:",
                          *(f"  - {f}" for f in self.findings), *log_evidence(self.haset)])


def log_evidence(haset: HASet, limit: int = 12) -> list[str]:
    """The namenode logs' lines that tell what the HA set did or what failed, each message
    once with how often it came (at most ``limit`` per log), and the nnlite frames of every
    thread a dump (``HASet.dump_threads``) left there."""
    marks = ("cannot apply", "stepping down", "active now", "HA loop failed", "CRITICAL",
             "checkpoint failed", "could not purge", "Error: ", "etcd is unavailable",
             "writes resumed", "reloaded the namespace")
    lines = []
    for path in haset.logs():
        text = path.read_text(errors="replace")
        log, _, dump = text.partition("Fatal Python error: Aborted")
        seen: dict[str, list] = {}
        for line in log.splitlines():
            if any(m in line for m in marks):
                message = line[24:] if line[:2] == "20" else line
                seen.setdefault(message, [line, 0])[1] += 1
        stacks = thread_stacks(dump)
        if seen or stacks:
            lines.append(f"{path}:")
            lines += [f"    {line[:300]}" + (f"  (x{count})" if count > 1 else "")
                      for line, count in list(seen.values())[:limit]]
            lines += [f"    {line}" for line in stacks]
    return lines


def thread_stacks(dump: str) -> list[str]:
    """From a faulthandler dump: each thread with nnlite frames, those frames only (not the
    main thread's: it runs the event loop)."""
    out: list[str] = []
    threads, _, _ = dump.partition("\nCurrent thread ")
    for thread in threads.split("\nThread ")[1:]:
        frames = [line.strip() for line in thread.splitlines()
                  if line.strip().startswith("File") and "/site-packages/" not in line
                  and "/lib/python3" not in line and "<frozen" not in line]
        if frames:
            out.append(f"thread {thread.split()[0]} (most recent call first):")
            out += [f"  {frame[:200]}" for frame in frames[:8]]
    return out


# -------------------------------------------------------------------- the end of a round

def check_round(rnd: Round) -> None:
    """The checks of the module docstring on a set whose faults are all healed; findings go
    to ``rnd.findings``, and any raises RoundFailed with the round's report."""
    haset, etcd = rnd.haset, rnd.etcd
    etcd.wait_healthy(START)
    active = rnd.active()
    synced = wait_synced(rnd)
    check_prefixes(rnd)
    check_acknowledged(rnd, active)
    if synced is None:
        haset.dump_threads()
    rnd.raise_findings()
    rnd.log(f"both namenodes at txid {synced}; {haset.ids[active]} active")
    for target in (1 - active, active):
        status, body = haset.failover(target)
        if status != 200 or not haset.is_active(target):
            rnd._fail(f"failover to {haset.ids[target]}: {status} {body[:300]!r}; "
                      f"{rnd._states()}")
        rnd.log(f"failover to {haset.ids[target]}")
        if target != active:
            check_acknowledged(rnd, target)
            rnd.raise_findings()
    check_purged(rnd, active)


def wait_synced(rnd: Round) -> int | None:
    """The txid both namenodes reached; None (a finding) if they did not in time."""
    haset = rnd.haset
    seen: list[int] = []

    def same() -> int:
        try:
            seen[:] = [haset.synced_txid(i) for i in range(len(haset.ids))]
        except (OSError, ValueError, KeyError):
            return 0
        return seen[0] if len(set(seen)) == 1 else 0
    try:
        return wait_for(same, SYNC, "both namenodes at the same synced txid", interval=0.2)
    except TimeoutError:
        committed = shared_records(rnd.etcd.endpoints).committed
        # strict=False: seen stays empty until one poll reaches every namenode.
        synced = dict(zip(haset.ids, seen, strict=False))
        rnd.findings.append(f"the namenodes never reached the same txid within {SYNC:g} "
                            f"s: synced {synced}, etcd committed "
                            f"{committed}; {rnd._states()}")
        return None


def check_prefixes(rnd: Round) -> None:
    """Each name dir's edits a prefix of the shared journal (module docstring)."""
    haset = rnd.haset
    on_disk = [local_records(d) for d in haset.dirs]    # before etcd (acknowledged_only_locally)
    shared = shared_records(rnd.etcd.endpoints)
    for nn, local in zip(haset.ids, on_disk, strict=True):
        wrong = diverged(local, shared)
        if wrong:
            rnd.findings.append(f"{nn}'s edits are not a prefix of the shared journal "
                                f"({len(wrong)} txids): {wrong[:5]}")
        both = len(local.keys() & shared.records.keys())
        rnd.log(f"{nn}'s edits: txids {min(local, default=0)}-{max(local, default=0)}, "
                f"{both} of them in etcd, {len(wrong)} differing")


def check_acknowledged(rnd: Round, i: int) -> None:
    url = rnd.haset.url(i)
    counted = 0
    for writers in rnd.everyone:
        lost, bad = writers.missing(url), writers.unreadable(url)
        counted += len(lost) + len(bad)
        if lost:
            rnd.findings.append(f"{len(lost)} acknowledged MKDIRS of {writers.prefix} missing "
                                f"on {rnd.haset.ids[i]}: {lost[:8]}")
        if bad:
            rnd.findings.append(f"{len(bad)} acknowledged files of {writers.prefix} not read "
                                f"back from {rnd.haset.ids[i]}: {bad[:8]}")
    rnd.lost = max(rnd.lost, counted)
    if not rnd.findings:
        rnd.log(f"{rnd.haset.ids[i]} holds every acknowledged op, files byte for byte")


def check_purged(rnd: Round, active: int) -> None:
    """A checkpoint is installed on the active, and etcd holds no chunk wholly below its
    image's txid less the retained edits."""
    haset = rnd.haset
    seen: dict = {}

    def purged() -> bool:
        try:
            seen["synced"] = haset.synced_txid(active)
            seen["image"] = image = haset.checkpoint_txid(active)
        except (OSError, ValueError, KeyError):
            return False
        seen["chunks"] = chunks = shared_records(rnd.etcd.endpoints).chunks
        seen["below"] = below = image + 1 - EDITS_RETAINED
        return (seen["synced"] - image < CHECKPOINT_TXNS and image > 0
                and all(last >= below for last in chunks))
    try:
        wait_for(purged, PURGE, "a checkpoint and the purge of etcd below it", interval=0.5)
    except TimeoutError:
        chunks = seen.get("chunks") or [0]
        rnd._fail(f"no checkpoint and purge within {PURGE:g} s: {haset.ids[active]} synced "
                  f"{seen.get('synced')}, image at txid {seen.get('image')}, etcd holds "
                  f"{len(chunks)} chunks from last txid {min(chunks)} (none below "
                  f"{seen.get('below')} expected)")
    rnd.log(f"checkpoint at txid {seen['image']}; etcd holds {len(seen['chunks'])} chunks, "
            f"none below {seen['below']}")


def acknowledged_only_locally(rnd: Round) -> list[str]:
    """Where a name dir parts from the shared journal -- txids above etcd's ``committed``, or
    held with other bytes than etcd's -- and which of those records are acknowledged ops the
    journal holds nowhere: written to the local edits without etcd, and acknowledged (an op
    is acknowledged only once both hold it). Empty when etcd cannot be read."""
    # the name dirs first: an active writes etcd before its dirs, so etcd read after them
    # holds every txid they hold unless one was written without it
    on_disk = [local_records(d) for d in rnd.haset.dirs]
    try:
        shared = shared_records(rnd.etcd.endpoints)
    except (OSError, EtcdError):
        return []
    committed = shared.committed or 0
    acked = {path for writers in rnd.everyone for path in writers.acknowledged()}
    in_journal = {op_path(r) for r in shared.records.values()}
    found = []
    for nn, local in zip(rnd.haset.ids, on_disk, strict=True):
        apart = {txid: op_path(record) for txid, record in local.items()
                 if txid > committed or shared.records.get(txid, record) != record}
        lost = [f"{path} (txid {txid})" for txid, path in sorted(apart.items())
                if path in acked and path not in in_journal]
        rnd.lost = max(rnd.lost, len(lost))
        if apart:
            found.append(f"{nn}'s edits part from the shared journal at txids {min(apart)}-"
                         f"{max(apart)} (etcd committed {committed}); {len(lost)} of them are "
                         f"acknowledged ops etcd holds nowhere: {lost[:8]}")
    return found


def op_path(record: bytes) -> str | None:
    frame = edits.frame_at(record, 0, len(record), edits.DEFAULT_MAX_RECORD)
    return None if isinstance(frame, str) else getattr(frame.op, "path", None)


def check_offline(haset: HASet, everyone: list[Writers], scratch: Path) -> list[str]:
    """Both namenodes stopped (SIGKILL: nothing is in flight), each name dir loaded as its
    next start would: the same namespace, every acknowledged path in it with its length."""
    for i in range(len(haset.ids)):
        haset.kill(i)
    trees = [load_offline(d, scratch) for d in haset.dirs]
    findings = []
    if trees[0] != trees[1]:
        differ = sorted(set(trees[0].items()) ^ set(trees[1].items()))
        findings.append(f"the name dirs load different namespaces ({len(differ)} entries "
                        f"differ): {differ[:8]}")
    for nn, tree in zip(haset.ids, trees, strict=True):
        wrong = [f"{path}: {tree.get(path)}, not {want}" for writers in everyone
                 for path, want in expected(writers).items() if tree.get(path) != want]
        if wrong:
            findings.append(f"{len(wrong)} acknowledged paths wrong in {nn}'s name dir loaded "
                            f"offline: {wrong[:8]}")
    return findings


def expected(writers: Writers) -> dict[str, tuple[bool, int]]:
    return {path: (True, 0) if data is None else (False, len(data))
            for path, data in writers.acknowledged().items()}


# -------------------------------------------------------------------- the test

def run_seed(tmp_path: Path, etcd: EtcdCluster, seed: int, rounds: int, faults: int,
             out: Callable[[str], None] = print, deadline: float | None = None,
             on_round: Callable[[Round], None] = lambda rnd: None) -> list[Round]:
    """Up to ``rounds`` rounds of ``seed`` on a new set (none begins after ``deadline``, a
    monotonic time), each checked, then the offline check; the rounds run. ``on_round`` is
    called after each round's checks, passed or not. Raises RoundFailed at the first failed
    check. Stops every namenode it started."""
    haset = HASet(tmp_path, etcd, settings=SETTINGS, restartable_ports=True)
    done: list[Round] = []
    everyone: list[Writers] = []
    try:
        haset.start_all()
        for number in range(1, rounds + 1):
            if deadline is not None and done and time.monotonic() > deadline:
                break
            rnd = Round(haset, etcd, seed, number, schedule(seed, number, faults), out,
                        earlier=list(everyone))
            done.append(rnd)
            try:
                everyone.append(rnd.run())
                check_round(rnd)
                if number == rounds or (deadline is not None and time.monotonic() > deadline):
                    check_last(rnd, tmp_path / "offline")
            finally:
                on_round(rnd)
    finally:
        haset.close()
    return done


def check_last(rnd: Round, scratch: Path) -> None:
    rnd.findings += check_offline(rnd.haset, rnd.everyone, scratch)
    rnd.raise_findings()
    rnd.log("offline: both name dirs load the same namespace with every acknowledged path")


@pytest.mark.crash
@pytest.mark.parametrize("seed", SUITE_SEEDS, ids=[f"seed-{s}" for s in SUITE_SEEDS])
def test_faults_lose_no_acknowledged_op_and_leave_no_standby_diverged(tmp_path, etcd_cluster,
                                                                        seed):
    rounds = run_seed(tmp_path, etcd_cluster, seed, rounds=1, faults=SUITE_FAULTS)
    assert all(rnd.acknowledged > 0 for rnd in rounds)
    errors = [e for rnd in rounds if rnd.writers for e in rnd.writers.errors
              if not cut_off_upload(e)]
    assert not errors, f"answers a WebHDFS client cannot take: {errors[:8]}"


def cut_off_upload(error: str) -> bool:
    """An upload whose namenode stepped down under it: its data step is answered as HDFS's
    lease check answers a writer whose lease was recovered (FileNotFoundException, "Holder
    ... does not have any open files"); the next active closes the file (ARCHITECTURE's
    failover) and the writer writes it again. Not an acknowledged op, so no loss."""
    return " 404 " in error and "FileNotFoundException" in error and "Holder" in error


def test_a_schedule_is_a_function_of_its_seed_and_round():
    assert schedule(7, 1, 6) == schedule(7, 1, 6)
    assert schedule(7, 1, 6) != schedule(7, 2, 6)
    every = [f for s in range(40) for f in schedule(s, 1, 4)]
    assert {f.kind for f in every} == set(KINDS)
    for f in every:
        assert len(f.members) == {"etcd-one": 1, "etcd-two": 2}.get(f.kind, 0)
        if f.kind == "pause-active-past-lease":
            assert 2 * TTL <= f.hold <= 3 * TTL
        elif f.kind == "pause-active":
            assert 1 <= f.hold <= 12
