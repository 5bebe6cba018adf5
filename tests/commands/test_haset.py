"""``nnlite run-ha`` (commands/haset.py) as a user runs it, its own process with real etcd
members and namenodes on free loopback ports: a namenode becomes active and takes a write;
SIGKILL of its process hands the set to the other one, which takes writes, and the supervisor
starts the killed one again as a standby; SIGTERM stops every process it started (exit 0, no
pid left running); a second run on the same base dir serves what the first one wrote. Without
etcd on PATH, or with a port taken, it is one line and exit 3 before anything starts."""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from nnlite.client.webhdfs import WebHdfsClient
from nnlite.commands.errors import ChildDied
from nnlite.commands.supervisor import Child, RestartPolicy
from nnlite.commands.support import EXIT_STORAGE, EXIT_USAGE
from nnlite.formats.hadoop import client_namenode as cn
from tests.etcd_cluster import INSTALL, etcd_binary, free_ports
from tests.namenode.rpc.rawclient import RawClient
from tests.servers import ROOT, wait_for

USER = getpass.getuser()         # the namenodes' superuser: run-ha runs as this user


def needs_etcd(test):
    """Runs real etcd members (`make test-fast` leaves it out); skipped without etcd."""
    return pytest.mark.etcd(pytest.mark.skipif(etcd_binary() is None, reason=INSTALL)(test))


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NNLITE_")}
    return {**env, **extra}


class RunHA:
    """One ``nnlite run-ha`` process on ``base`` with its namenodes on ``ports`` (HTTP) and
    ``rpc_ports`` (hdfs://); its stdout and stderr in files."""

    def __init__(self, tmp_path: Path, base: Path, ports: list[int], rpc_ports: list[int],
                 run: int = 1):
        self.base = base
        self.ports = ports
        self.rpc_ports = rpc_ports
        self.out, self.err = tmp_path / f"out{run}", tmp_path / f"err{run}"
        self.seen: set[int] = set()         # every pid of a child ever seen
        args = [a for p in ports for a in ("--port", str(p))] + \
            [a for p in rpc_ports for a in ("--rpc-port", str(p))]
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "nnlite.cli", "run-ha", "--base-dir", str(base), *args],
                cwd=ROOT, stdout=out, stderr=err, env=environment())

    def url(self, i: int) -> str:
        return f"http://127.0.0.1:{self.ports[i]}"

    def wait_up(self) -> str:
        """The summary, once printed."""
        def printed() -> str | None:
            assert self.proc.poll() is None, self.err.read_text()
            text = self.out.read_text()
            return text if "Try a failover" in text else None
        return wait_for(printed, 240, "run-ha's summary", interval=0.2)

    def children(self) -> dict[int, str]:
        """The running children, pid -> the first words of the command line."""
        found = {}
        tasks = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        for pid in map(int, tasks.read_text().split()):
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            found[pid] = " ".join(a.decode() for a in argv[:6])
        self.seen |= set(found)
        return found

    def pid(self, name: str) -> int | None:
        path = self.base / name / "pid"
        try:
            return int(path.read_text())
        except (OSError, ValueError):
            return None

    def state(self, i: int) -> str | None:
        try:
            with urllib.request.urlopen(f"{self.url(i)}/admin?op=GETSERVICESTATE",
                                        timeout=2) as resp:
                return json.load(resp)["state"]
        except OSError:
            return None

    def active(self, excluding: int | None = None) -> int:
        def find() -> int | None:
            return next((i + 1 for i in range(len(self.ports))
                         if i != excluding and self.state(i) == "active"), None)
        return wait_for(find, 120, "an active namenode", interval=0.2) - 1

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(120)

    def close(self) -> None:
        """Whatever happened: no process of this run is left."""
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.children()
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for pid in self.seen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def runs(tmp_path):
    """Start ``RunHA``s; every one is stopped (and its children killed) after the test."""
    started: list[RunHA] = []

    def start(base: Path, ports: list[int], rpc_ports: list[int] | None = None) -> RunHA:
        run = RunHA(tmp_path, base, ports, rpc_ports or free_ports(len(ports)),
                    len(started) + 1)
        started.append(run)
        return run
    yield start
    for run in started:
        run.close()


def mkdir(url: str, path: str) -> None:
    with WebHdfsClient(url, USER) as client:
        assert client.mkdirs(path)


def names(url: str, path: str) -> set[str]:
    with WebHdfsClient(url, USER) as client:
        return {s["pathSuffix"] for s in client.list(path)}


@needs_etcd
@pytest.mark.crash
def test_a_failover_the_killed_namenode_back_as_a_standby_and_a_clean_stop(tmp_path, runs):
    base = tmp_path / "ha"
    run = runs(base, free_ports(2))
    summary = run.wait_up()
    assert re.search(rf"nn1 +http://127\.0\.0\.1:\d+ +hdfs://127\.0\.0\.1:{run.rpc_ports[0]} "
                     r"+pid \d+ +active", summary), summary
    assert "nn2" in summary and "standby (takes the checkpoints)" in summary
    assert f"--conf {base / 'ha.conf'}" in summary and "kill -9 " in summary
    kinds = sorted(cmd.split()[0].rsplit("/", 1)[-1] for cmd in run.children().values())
    assert kinds == ["etcd"] * 3 + [Path(sys.executable).name] * 2, kinds
    assert (base / "ha.conf").stat().st_mode & 0o777 == 0o600
    assert (base / "nn2" / "name" / "current" / "VERSION").read_text().split(
        "namespaceID=")[1].split()[0] == (base / "nn1" / "name" / "current" / "VERSION"
                                          ).read_text().split("namespaceID=")[1].split()[0]

    active = run.active()
    other = 1 - active
    # each namenode serves hdfs:// on its --rpc-port (ha.conf names them for clients)
    with RawClient(run.rpc_ports[active]).connect(user=USER) as client:
        assert client.answer("getHAServiceState", cn.HAServiceStateRequestProto()).state == \
            cn.HAServiceStateProto.ACTIVE
    conf = (base / "ha.conf").read_text()
    assert f"dfs.namenode.rpc-address.ns1.nn2 = 127.0.0.1:{run.rpc_ports[1]}" in conf
    mkdir(run.url(active), "/ha/before")
    killed = run.pid(f"nn{active + 1}")
    assert killed is not None
    os.kill(killed, signal.SIGKILL)
    assert run.active(excluding=active) == other
    mkdir(run.url(other), "/ha/after")
    assert names(run.url(other), "/ha") == {"before", "after"}

    # The supervisor starts the killed namenode again once the other is active: a standby.
    wait_for(lambda: run.pid(f"nn{active + 1}") not in (None, killed), 60, "the restart")
    wait_for(lambda: run.state(active) == "standby", 120, "the killed namenode as a standby")
    assert run.state(other) == "active"
    run.children()
    err = run.err.read_text()
    assert f"nn{active + 1} (pid {killed}) was killed by SIGKILL; it starts again once " \
           "another namenode is active" in err
    assert f"nn{other + 1} is active now" in err and f"nn{active + 1} started again" in err

    assert run.stop() == 0, run.err.read_text()
    assert len(run.seen) == 6 and not [pid for pid in run.seen if alive(pid)]
    assert not list(base.glob("*/pid")) and not (base / "run-ha.pid").exists()
    assert "stopped cleanly" in run.err.read_text()

    # Again on the same base dir: the same etcd members, the same namespace.
    again = runs(base, run.ports, run.rpc_ports)
    again.wait_up()
    assert names(again.url(again.active()), "/ha") == {"before", "after"}
    assert again.stop() == 0, again.err.read_text()


def test_without_etcd_it_is_one_line_and_exit_3(tmp_path):
    (tmp_path / "bin").mkdir()
    result = subprocess.run([sys.executable, "-m", "nnlite.cli", "run-ha", "--base-dir",
                             str(tmp_path / "ha")], cwd=ROOT, capture_output=True, text=True,
                            env=environment(PATH=str(tmp_path / "bin")), timeout=60)
    assert result.returncode == EXIT_STORAGE, result.stderr
    assert result.stderr.splitlines() == [
        "nnlite: ProgramMissing: etcd is not installed (no etcd on PATH): `make etcd` installs "
        "Debian's etcd-server as root (apt-get install etcd-server), or put an etcd 3.4+ "
        "binary on PATH"]
    assert result.stdout == "" and not (tmp_path / "ha").exists()


@needs_etcd
def test_a_port_taken_is_one_line_and_exit_3_before_anything_starts(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "nnlite.cli", "run-ha", "--base-dir", str(tmp_path / "ha"),
             "--port", str(free_ports(1)[0]), "--port", str(port)], cwd=ROOT,
            capture_output=True, text=True, env=environment(), timeout=60)
    assert result.returncode == EXIT_STORAGE, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"nnlite: AddressError: cannot listen on 127.0.0.1:{port}")
    assert not list((tmp_path / "ha").glob("etcd*/log"))


@pytest.mark.parametrize("ports", [["19870"], ["19870", "19870"]], ids=["one", "twice"])
def test_the_namenodes_need_two_ports_of_their_own(tmp_path, ports):
    args = [a for p in ports for a in ("--port", p)]
    result = subprocess.run([sys.executable, "-m", "nnlite.cli", "run-ha", "--base-dir",
                             str(tmp_path / "ha"), *args], cwd=ROOT, capture_output=True,
                            text=True, env=environment(), timeout=60)
    assert result.returncode == EXIT_USAGE
    assert "give --port once per namenode" in result.stderr
    assert not (tmp_path / "ha").exists()


# ------------------------------------------------------------------ the restart policy

def exited(tmp_path: Path, up: bool, restarts: list[float]) -> Child:
    child = Child("nn1", ["true"], tmp_path / "pid")
    child.up, child.restarts = up, restarts
    return child


def test_a_child_restarts_only_if_it_was_up_and_not_too_often(tmp_path):
    policy = RestartPolicy(delay=1, limit=2, window=60)
    assert policy.refusal(exited(tmp_path, False, []), 100) == "before it was up"
    assert policy.refusal(exited(tmp_path, True, [30, 50]), 100) is None     # 30: long ago
    assert policy.refusal(exited(tmp_path, True, [50, 90]), 100) == "after 2 restarts in 60 s"


def test_a_child_that_fails_to_start_ends_the_supervision(tmp_path):
    from nnlite.commands.supervisor import Supervisor
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    supervisor = Supervisor()
    try:
        child = supervisor.start(Child("etcd1", [sys.executable, "-c", "raise SystemExit(3)"],
                                       tmp_path / "pid", tmp_path / "log"))
        with pytest.raises(ChildDied, match=r"etcd1 \(pid \d+\) exited with code 3 before "
                                            r"it was up \(its log: .*log\)"):
            wait_for(lambda: child.poll() is not None, 30, "the exit")
            supervisor.watch(lambda: None)
        assert not (tmp_path / "pid").exists()
    finally:
        supervisor.kill_all()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def test_an_rpc_port_per_namenode_or_none(tmp_path):
    result = subprocess.run([sys.executable, "-m", "nnlite.cli", "run-ha", "--base-dir",
                             str(tmp_path / "ha"), "--port", "19870", "--port", "19871",
                             "--rpc-port", "18020"], cwd=ROOT, capture_output=True, text=True,
                            env=environment(), timeout=60)
    assert result.returncode == EXIT_USAGE
    assert "give --rpc-port once per namenode" in result.stderr
    assert not (tmp_path / "ha").exists()
