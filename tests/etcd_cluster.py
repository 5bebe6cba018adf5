"""Real etcd clusters for tests: ``EtcdCluster(tmp_path, members=3).start()`` runs that many
``etcd`` processes (Debian's etcd-server, ``make etcd``) on free 127.0.0.1 ports, each with
its data dir and log under ``tmp_path``, and returns once they agree on a leader.
``kill(i)`` SIGKILLs a member, ``stop_member(i)`` stops it with SIGTERM, ``start_member(i)``
starts it again on its data dir; ``close()`` kills whatever still runs and removes the data
dirs, keeping the logs: etcd preallocates each WAL segment (64 MiB, plus the next one as
``0.tmp``), so a three-member cluster holds about 370 MiB on disk, and the suite's hundred
clusters left in pytest's basetemp filled a CI disk. The fixtures
``etcd_cluster`` and ``etcd_single`` (tests/conftest.py) wrap it.

Health is read with urllib from each member's ``/v3/maintenance/status``, not with
``nnlite.client.etcd``, so a bug of the client under test cannot hide behind its fixture.
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from tests.servers import wait_for

ETCD = "etcd"
INSTALL = ("etcd is not installed: `make etcd` installs Debian's etcd-server as root "
           "(apt-get install etcd-server), or put an etcd 3.4+ binary on PATH")
START_TIMEOUT = 60.0        # a busy 2-core machine runs three etcds and the tests
STOP_TIMEOUT = 30.0
ATTEMPTS = 3                # a free port taken before etcd binds it: start again on others
T = TypeVar("T")


def etcd_binary() -> str | None:
    return shutil.which(ETCD)


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports nobody listens on now (held open together, so none
    repeats)."""
    socks = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            socks.append(sock)
        return [s.getsockname()[1] for s in socks]
    finally:
        for sock in socks:
            sock.close()


class PortTaken(Exception):
    """A member could not bind its port: someone took it after free_ports picked it."""


@dataclass
class Member:
    name: str
    client_port: int
    peer_port: int
    data_dir: Path
    log: Path
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    down: bool = False      # stopped or killed on purpose (an exit then is no failure)
    tls: ssl.SSLContext | None = field(default=None, repr=False)   # https: a client's

    @property
    def client_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.client_port}"

    @property
    def peer_url(self) -> str:
        return f"http://127.0.0.1:{self.peer_port}"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def status(self) -> dict[str, Any] | None:
        """The member's maintenance status, or None when it does not answer."""
        req = urllib.request.Request(f"{self.client_url}/v3/maintenance/status", data=b"{}",
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=2, context=self.tls) as resp:
                doc = json.load(resp)
        except (OSError, ValueError, urllib.error.HTTPError):
            return None
        return doc if isinstance(doc, dict) else None

    def leader(self) -> int:
        """The leader's member id as this member sees it; 0 when none (or no answer)."""
        status = self.status()
        return int(status.get("leader", 0)) if status else 0

    def member_id(self) -> int:
        status = self.status()
        return int(status["header"]["member_id"]) if status else 0


class EtcdCluster:
    """``members`` etcd processes forming one cluster, under ``tmp_path``."""

    def __init__(self, tmp_path: Path, members: int = 3, tls=None) -> None:
        """``tls`` (tests/tls_certs.py's ``Certificates``): https client URLs, members run
        with ``--client-cert-auth``; ``client_tls`` is then a client's context."""
        self.tmp_path = Path(tmp_path)
        self.tmp_path.mkdir(parents=True, exist_ok=True)
        self.size = members
        self.tls = tls
        self.client_tls: ssl.SSLContext | None = None
        if tls is not None:
            self.client_cert = tls.client("etcd-client")
            self.client_tls = ssl.create_default_context(cafile=str(tls.ca))
            self.client_tls.load_cert_chain(*map(str, self.client_cert))
        self.token = f"nnlite-test-{uuid.uuid4().hex[:12]}"
        self.members = self._members()

    def _members(self) -> list[Member]:
        ports = free_ports(2 * self.size)
        return [Member(f"m{i}", ports[2 * i], ports[2 * i + 1], self.tmp_path / f"m{i}.etcd",
                       self.tmp_path / f"m{i}.log", tls=self.client_tls)
                for i in range(self.size)]

    @property
    def endpoints(self) -> list[str]:
        return [m.client_url for m in self.members]

    @property
    def initial_cluster(self) -> str:
        return ",".join(f"{m.name}={m.peer_url}" for m in self.members)

    # ---------------------------------------------------------------- life

    def start(self, timeout: float = START_TIMEOUT) -> EtcdCluster:
        """Start every member and wait until they agree on a leader."""
        for attempt in range(1, ATTEMPTS + 1):
            try:
                for member in self.members:
                    self._spawn(member, "new")
                self.wait_healthy(timeout)
                return self
            except PortTaken:
                self.close()
                if attempt == ATTEMPTS:
                    raise
                self.token = f"nnlite-test-{uuid.uuid4().hex[:12]}"
                for member in self.members:
                    shutil.rmtree(member.data_dir, ignore_errors=True)
                self.members = self._members()
        raise AssertionError("not reached")

    def _spawn(self, member: Member, state: str) -> None:
        binary = etcd_binary()
        assert binary, INSTALL
        cmd = [binary, "--name", member.name, "--data-dir", str(member.data_dir),
               "--listen-client-urls", member.client_url,
               "--advertise-client-urls", member.client_url,
               "--listen-peer-urls", member.peer_url,
               "--initial-advertise-peer-urls", member.peer_url,
               "--initial-cluster", self.initial_cluster,
               "--initial-cluster-state", state,
               "--initial-cluster-token", self.token,
               "--logger", "zap", "--log-outputs", "stderr"]
        if self.tls is not None:      # etcd 3.4's client TLS with client certificates
            cmd += ["--client-cert-auth", "--trusted-ca-file", str(self.tls.ca),
                    "--cert-file", str(self.tls.server_cert),
                    "--key-file", str(self.tls.server_key)]
        with open(member.log, "ab") as log:
            log.write(f"\n=== {time.strftime('%H:%M:%S')} {' '.join(cmd)}\n".encode())
            log.flush()
            member.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL)
        member.down = False

    def kill(self, i: int) -> None:
        """SIGKILL member ``i`` (no goodbye to its peers) and reap it."""
        member = self.members[i]
        member.down = True
        if member.running:
            assert member.proc is not None
            member.proc.send_signal(signal.SIGKILL)
        if member.proc is not None:
            member.proc.wait(STOP_TIMEOUT)

    def stop_member(self, i: int, timeout: float = STOP_TIMEOUT) -> None:
        """Stop member ``i`` with SIGTERM (SIGKILL if it lingers past ``timeout``)."""
        member = self.members[i]
        member.down = True
        if member.running:
            assert member.proc is not None
            member.proc.terminate()
            try:
                member.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill(i)

    def start_member(self, i: int, timeout: float = START_TIMEOUT, *,
                     wait_leader: bool = True) -> None:
        """Start member ``i`` again on its data dir (``--initial-cluster-state existing``);
        wait until it answers and, with ``wait_leader``, until it knows a leader."""
        member = self.members[i]
        assert not member.running, f"{member.name} is running"
        self._spawn(member, "existing")
        check = member.leader if wait_leader else member.status
        self._wait(lambda: self._alive(member) and check(), timeout,
                   f"{member.name} to {'follow a leader' if wait_leader else 'answer'}")

    def wait_healthy(self, timeout: float = START_TIMEOUT) -> int:
        """Wait until every running member sees the same leader, itself running; its index."""
        def agreed() -> int:
            """The leader's index + 1 once the running members agree on it, else 0."""
            running = [m for m in self.members if self._alive(m)]
            leaders = {m.leader() for m in running}
            if len(leaders) != 1 or 0 in leaders:
                return 0
            ids = {m.member_id(): i for i, m in enumerate(self.members) if m in running}
            index = ids.get(leaders.pop())
            return 0 if index is None else index + 1
        return self._wait(agreed, timeout, "the etcd members to agree on a leader") - 1

    def close(self) -> None:
        """Kill every member still running and remove every member's data dir (not its log)."""
        for i in range(len(self.members)):
            self.kill(i)
        for member in self.members:
            shutil.rmtree(member.data_dir, ignore_errors=True)

    def __enter__(self) -> EtcdCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- helpers

    def _alive(self, member: Member) -> bool:
        """Whether the member runs; a member that exited because its port was taken raises
        PortTaken, any other exit an error with the end of its log."""
        if member.running:
            return True
        if member.proc is None or member.down:
            return False
        tail = member.log.read_text(errors="replace")[-3000:]
        if "address already in use" in tail:
            raise PortTaken(f"{member.name}: {member.client_url} or {member.peer_url} taken")
        raise RuntimeError(f"etcd member {member.name} exited with {member.proc.returncode}; "
                           f"the end of {member.log}:\n{tail}")

    def _wait(self, predicate: Callable[[], T], timeout: float, what: str) -> T:
        try:
            return wait_for(predicate, timeout, what, interval=0.1)
        except TimeoutError as exc:
            logs = "\n".join(f"--- {m.log}:\n{m.log.read_text(errors='replace')[-1500:]}"
                             for m in self.members if m.log.exists())
            raise TimeoutError(f"{exc}\n{logs}") from None
