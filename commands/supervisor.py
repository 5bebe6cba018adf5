"""``nnlite run``: the namenode and its secondary as two supervised child processes.

The namenode starts first (formatting the default name dir if none exists is done by the
caller); once it has bound its port and written its transfer token, the secondary starts with
``--secret-file <first name dir>/checkpoint.token`` and a checkpoint dir beside the name dir
(``<parent of the first name dir>/namesecondary``). SIGTERM/SIGINT are forwarded to both; if
either exits on its own, the other is stopped and ``run`` raises ``ChildDied`` naming which
process ended and how, and the command that starts both again.
"""

from __future__ import annotations

import logging
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from nnlite.commands.errors import ChildDied
from nnlite.namenode.http.server import ANNOUNCE_ENV

log = logging.getLogger(__name__)

TOKEN_FILE = "checkpoint.token"


def _child(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "nnlite.cli", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, ANNOUNCE_ENV: "1"})


def _pump(proc: subprocess.Popen, name: str, seen_port: threading.Event,
          port: list[int]) -> None:
    """Copy a child's output to ours, prefixed; note the namenode's port line."""
    for line in proc.stdout or ():      # (_child pipes it: never None)
        if line.startswith(("NNLITE_HTTP_PORT=", "NNLITE_SECONDARY_HTTP_PORT=")):
            port.append(int(line.strip().split("=", 1)[1]))    # for us, not for the terminal
            seen_port.set()
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
    announced: list[int] = []
    pump = threading.Thread(target=_pump, args=(namenode, "namenode", seen_port, announced),
                            daemon=True)
    pump.start()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    secondary = None
    try:
        if not _wait(seen_port, namenode, stop, timeout) or not _wait_file(
                first / TOKEN_FILE, namenode, stop, timeout):
            if namenode.poll() not in (None, 0):     # it failed to start and said why
                pump.join(5)
                return namenode.returncode
            return _finish(namenode, None, stop)
        url = f"http://127.0.0.1:{announced[0]}"
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


def _wait(event: threading.Event, proc: subprocess.Popen, stop: threading.Event,
          timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not event.wait(0.1):
        if proc.poll() is not None or stop.is_set() or time.monotonic() > deadline:
            return False
    return True


def _wait_file(path: Path, proc: subprocess.Popen, stop: threading.Event,
               timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None or stop.is_set() or time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _finish(namenode, secondary, stop: threading.Event) -> int:
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
