"""``nnlite run``: the namenode and its secondary as two supervised child processes.

The namenode starts first (formatting the default name dir if none exists is done by the
caller); once it has bound its port and written its transfer token, the secondary starts with
``--secret-file <first name dir>/checkpoint.token`` and a checkpoint dir beside the name dir
(``<parent of the first name dir>/namesecondary``). SIGTERM/SIGINT are forwarded to both; if
either exits on its own, the other is stopped and ``run`` raises ``ChildDied`` naming which
process ended and how, and the command that starts both again.

``nnlite run-ha`` (``commands/haset.py``) supervises more children, etcd members and namenodes,
with the pieces below ``run``: a ``Child`` is one process (its output to a log file or to our
stderr, ``[name] `` before each line; its pid in a pid file while it runs; its own process
group, so a terminal's Ctrl-C reaches the supervisor alone, which stops the children in order).
A ``Supervisor`` starts them, waits for what the caller says is "up", restarts a child that
exits on its own under its ``RestartPolicy`` (and its ``Gate``, such as "another namenode is
active"), logs one line per event, and on SIGTERM/SIGINT stops the children in the groups the
caller gives, each group with SIGTERM, then SIGKILL after ``STOP_TIMEOUT``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from nnlite.commands.errors import ChildDied, StartTimeout
from nnlite.namenode.listen import ANNOUNCE_ENV

log = logging.getLogger(__name__)

TOKEN_FILE = "checkpoint.token"
STOP_TIMEOUT = 30.0         # seconds a child has to exit after SIGTERM, then SIGKILL
POLL = 0.25                 # seconds between the supervisor's looks at its children
T = TypeVar("T")


class StopFlag:
    """"Stop" as SIGTERM/SIGINT say it: a plain attribute, which a handler sets without a
    lock. (A ``threading.Event`` deadlocked: the handler runs in the main thread between two
    bytecodes, possibly while that thread holds the event's lock inside ``wait``, or inside
    the handler of a signal before -- `timeout` forwards a SIGTERM the user also sent -- and
    ``Event.set`` then waits for ever on a lock its own thread holds.) ``wait`` polls."""

    def __init__(self) -> None:
        self.flag = False

    def set(self, *_: object) -> None:
        self.flag = True

    def is_set(self) -> bool:
        return self.flag

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not self.flag and (left := deadline - time.monotonic()) > 0:
            time.sleep(min(left, 0.05))
        return self.flag


def _child(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "nnlite.cli", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, ANNOUNCE_ENV: "1"})


WEB_PORTS = {"NNLITE_HTTP_PORT=": "http", "NNLITE_SECONDARY_HTTP_PORT=": "http",
             "NNLITE_HTTPS_PORT=": "https", "NNLITE_SECONDARY_HTTPS_PORT=": "https"}


def _pump(proc: subprocess.Popen, name: str, seen_port: threading.Event,
          urls: list[str]) -> None:
    """Copy a child's output to ours, prefixed; note its web ports' lines as URLs (HTTP
    first, then HTTPS: the order the namenode binds them, as ``dfs.http.policy`` asks)."""
    for line in proc.stdout or ():      # (_child pipes it: never None)
        key = next((k for k in WEB_PORTS if line.startswith(k)), None)
        if key is not None:             # for us, not for the terminal
            urls.append(f"{WEB_PORTS[key]}://127.0.0.1:{int(line.strip().split('=', 1)[1])}")
            seen_port.set()
            continue
        if line.startswith("NNLITE_RPC_PORT="):    # announced for the tests, not the terminal
            continue
        # A child's one error line is the user's too: pass it on as it is.
        sys.stderr.write(line if line.startswith("nnlite: ") else f"[{name}] {line}")
        sys.stderr.flush()


def run(name_dirs: list[str], conf_args: list[str], port: int, secondary_port: int,
        timeout: float = 300) -> int:
    first = Path(name_dirs[0]).absolute()
    checkpoint_dir = first.parent / "namesecondary"
    nn_args = ["namenode", *[a for d in name_dirs for a in ("--name-dir", d)], "--port",
               str(port), *conf_args]
    namenode = _child(nn_args)
    seen_port = threading.Event()
    announced: list[str] = []
    pump = threading.Thread(target=_pump, args=(namenode, "namenode", seen_port, announced),
                            daemon=True)
    pump.start()
    stop = StopFlag()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop.set)
    secondary = None
    try:
        if not _wait(seen_port, namenode, stop, timeout) or not _wait_file(
                first / TOKEN_FILE, namenode, stop, timeout):
            if namenode.poll() not in (None, 0):     # it failed to start and said why
                pump.join(5)
                return namenode.returncode
            return _finish(namenode, None, stop)
        url = announced[0]
        log.info("namenode up at %s; starting the secondary (checkpoints in %s)", url,
                 checkpoint_dir)
        secondary = _child(["secondary", "--namenode", url, "--checkpoint-dir",
                            str(checkpoint_dir), "--secret-file", str(first / TOKEN_FILE),
                            "--port", str(secondary_port), *conf_args])
        threading.Thread(target=_pump, args=(secondary, "secondary", threading.Event(), []),
                         daemon=True).start()
        while not stop.wait(0.5):
            if namenode.poll() is not None or secondary.poll() is not None:
                break
        return _finish(namenode, secondary, stop)
    finally:
        for proc in (secondary, namenode):
            if proc is not None and proc.poll() is None:
                proc.kill()


def _wait(event: threading.Event, proc: subprocess.Popen, stop: StopFlag,
          timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not event.wait(0.1):
        if proc.poll() is not None or stop.is_set() or time.monotonic() > deadline:
            return False
    return True


def _wait_file(path: Path, proc: subprocess.Popen, stop: StopFlag,
               timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None or stop.is_set() or time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _finish(namenode, secondary, stop: StopFlag) -> int:
    """Stop both (secondary first: it may be mid-checkpoint against the namenode); 0 when
    asked to stop and both stopped cleanly, else ``ChildDied`` for the one that ended first."""
    died = [(name, proc) for name, proc in (("namenode", namenode), ("secondary", secondary))
            if proc is not None and proc.poll() is not None and not stop.is_set()]
    codes = []
    for proc in (secondary, namenode):
        if proc is None:
            continue
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        codes.append(proc.returncode)
    if died:
        name, proc = died[0]
        others = [other for other, p in (("namenode", namenode), ("secondary", secondary))
                  if p is not None and other != name]
        log.info("nnlite run stopped: the %s %s", name, how_it_ended(proc.returncode))
        raise ChildDied(f"the {name} (pid {proc.pid}) {how_it_ended(proc.returncode)}"
                        + "".join(f"; the {other} was stopped" for other in others)
                        + f". Every acknowledged change is in the name dir: start again with "
                        f"`{restart_command()}`")
    clean = all(c == 0 for c in codes)
    log.info("nnlite run stopped (%s)", "cleanly" if clean else f"exit codes {codes}")
    return 0 if clean else 1


def how_it_ended(returncode: int) -> str:
    if returncode < 0:
        return f"was killed by {signal.Signals(-returncode).name}"
    return f"exited with code {returncode}" if returncode else "exited"


def restart_command() -> str:
    """The command this ``run`` was started with, as a user would type it again."""
    return shlex.join(["nnlite", *sys.argv[1:]])


# ------------------------------------------------------------------ run-ha's children

class Child:
    """One supervised process (module docstring). ``clean``: the exit codes that mean it
    stopped as asked (etcd dies of the SIGTERM it handled: -15)."""

    def __init__(self, name: str, argv: list[str], pid_file: Path, log_file: Path | None = None,
                 clean: frozenset[int] = frozenset({0})):
        self.name = name
        self.argv = argv
        self.pid_file = pid_file
        self.log_file = log_file
        self.clean = clean
        self.proc: subprocess.Popen[str] | None = None
        self.up = False                     # it answered since its last start (the caller sets it)
        self.exited_at: float | None = None  # when the supervisor saw it exit on its own
        self.restarts: list[float] = []

    @property
    def pid(self) -> int:
        return self.proc.pid if self.proc is not None else 0

    def poll(self) -> int | None:
        """Its exit code once it exited, else None (also before its first start)."""
        return self.proc.poll() if self.proc is not None else None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if k != ANNOUNCE_ENV}
        with contextlib.ExitStack() as files:     # the child keeps its own copy of the log
            out = (files.enter_context(open(self.log_file, "a"))
                   if self.log_file is not None else None)
            self.proc = subprocess.Popen(self.argv, stdout=out or subprocess.PIPE,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         text=True, env=env, process_group=0)
        if out is None:
            threading.Thread(target=_pump, args=(self.proc, self.name, threading.Event(), []),
                             daemon=True).start()
        self.up, self.exited_at = False, None
        self.pid_file.write_text(f"{self.proc.pid}\n")

    def terminate(self) -> None:
        """Ask it to stop (SIGTERM) if it runs; ``reap`` waits."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def reap(self, timeout: float = STOP_TIMEOUT) -> bool:
        """Wait for it to exit, SIGKILL after ``timeout``; whether it exited as asked (one that
        was not running, or whose exit was an event already, counts as such)."""
        proc = self.proc
        if proc is None or self.exited_at is not None:
            return True
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            log.warning("%s (pid %d) still runs %g s after SIGTERM: killing it", self.name,
                        proc.pid, timeout)
            proc.kill()
            proc.wait()
        self.pid_file.unlink(missing_ok=True)
        return proc.returncode in self.clean

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.pid_file.unlink(missing_ok=True)


@dataclass(frozen=True)
class Gate:
    """What a child's restart waits for besides the policy's delay, for at most ``hold``
    seconds (``what`` completes the event line: "it starts again once ...")."""
    what: str
    open: Callable[[], bool]
    hold: float


@dataclass(frozen=True)
class RestartPolicy:
    """A child that exits on its own starts again only if it was up since its last start
    (one that failed to start would fail again: the supervisor stops everything instead, as
    ``run`` does), not before ``delay`` seconds, and at most ``limit`` times in ``window``
    seconds."""
    delay: float = 1.0
    limit: int = 5
    window: float = 600.0

    def refusal(self, child: Child, now: float) -> str | None:
        """Why ``child`` may not start again, or None."""
        if not child.up:
            return "before it was up"
        recent = [t for t in child.restarts if now - t < self.window]
        if len(recent) >= self.limit:
            return f"after {len(recent)} restarts in {self.window:g} s"
        return None


class Supervisor:
    """Children started in order, restarted under ``policy``, stopped in groups (module
    docstring). Its SIGTERM/SIGINT handlers only set ``stopping``; the caller's loop acts."""

    def __init__(self, policy: RestartPolicy = RestartPolicy()):
        self.policy = policy
        self.children: list[Child] = []
        self.gates: dict[str, Gate] = {}
        self.stopping = StopFlag()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self.stopping.set)

    def start(self, child: Child, gate: Gate | None = None) -> Child:
        self.children.append(child)
        if gate is not None:
            self.gates[child.name] = gate
        child.start()
        log.info("%s started (pid %d)", child.name, child.pid)
        return child

    def wait_until(self, found: Callable[[], T | None], timeout: float, what: str) -> T | None:
        """Poll ``found`` until it gives a value (returned); None once asked to stop. While
        the caller brings its children up, none restarts: one that exits raises ChildDied,
        and ``timeout`` seconds without a value raise StartTimeout."""
        deadline = time.monotonic() + timeout
        while not self.stopping.is_set():
            value = found()
            if value is not None:
                return value
            for child in self.children:
                if child.poll() is not None:
                    raise self.died(child, "while the others were starting")
            if time.monotonic() > deadline:
                raise StartTimeout(f"timed out after {timeout:g} s waiting for {what}; the "
                                   f"lines above say why")
            self.stopping.wait(POLL)
        return None

    def watch(self, tick: Callable[[], None]) -> None:
        """Until asked to stop: ``tick()``, then restart whatever exited and may start again
        (``RestartPolicy``, ``Gate``); raise ChildDied for one that may not."""
        while not self.stopping.wait(POLL):
            tick()
            for child in self.children:
                if child.poll() is not None and not self.stopping.is_set():
                    self._exited(child, time.monotonic())

    def _exited(self, child: Child, now: float) -> None:
        gate = self.gates.get(child.name)
        if child.exited_at is None:
            child.exited_at = now
            child.pid_file.unlink(missing_ok=True)
            refusal = self.policy.refusal(child, now)
            if refusal is not None:
                raise self.died(child, refusal)
            log.info("%s (pid %d) %s; it starts again %s", child.name, child.pid,
                     how_it_ended(child.poll() or 0), f"once {gate.what}" if gate else
                     f"in {self.policy.delay:g} s")
        waited = now - child.exited_at
        if waited >= self.policy.delay and (gate is None or gate.open() or waited >= gate.hold):
            child.restarts.append(now)
            child.start()
            log.info("%s started again (pid %d; restart %d)", child.name, child.pid,
                     len(child.restarts))

    def died(self, child: Child, when: str) -> ChildDied:
        """The error that ends the supervision when ``child`` exited and may not restart."""
        where = f" (its log: {child.log_file})" if child.log_file is not None else ""
        return ChildDied(f"{child.name} (pid {child.pid}) {how_it_ended(child.poll() or 0)} "
                         f"{when}{where}; everything else was stopped")

    def stop(self, groups: list[list[Child]]) -> int:
        """Stop ``groups`` in order, each group's children together; 0 when every one that
        still ran exited as asked, else 1."""
        names = "; then ".join(", ".join(c.name for c in group) for group in groups if group)
        log.info("stopping %s", names)
        clean = True
        for group in groups:
            for child in group:
                child.terminate()
            clean = all([child.reap() for child in group]) and clean
        log.info("stopped %s", "cleanly" if clean else "(a child did not exit as asked)")
        return 0 if clean else 1

    def kill_all(self) -> None:
        for child in self.children:
            child.kill()
