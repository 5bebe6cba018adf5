"""``nnlite run-ha``: a local HA set on loopback to try a failover with -- three etcd members,
the namenodes of nameservice ``ns1`` (two by default) and no secondary, since the standby takes
the checkpoints (``namenode/ha/checkpointer.py``) -- each a child of ``supervisor.py``'s
``Supervisor``.

The base dir (``--base-dir``, default ``~/.nnlite/ha``, beside ``make run``'s name dir)::

    ha.conf         the set's configuration: the keys of Hadoop's hdfs-site.xml for an HA set
                    (dfs.nameservices, dfs.ha.namenodes.ns1, dfs.namenode.http-address.ns1.nnK,
                    dfs.namenode.rpc-address.ns1.nnK: each namenode's hdfs:// port),
                    nnlite.ha.etcd.endpoints and the shared nnlite.checkpoint.secret (hence
                    0600), with the user's --conf/-D keys. Written at each start (the ports may
                    change), the secret kept. Clients take it too: nnlite dfs --conf ha.conf
    etcd.json       the etcd members' ports and cluster token, chosen once (free loopback ports):
                    a member's peer address is part of the cluster's own state
    etcdK/data, etcdK/log, etcdK/pid    member K's data dir, its log, its pid while it runs
    nnK/name, nnK/name-data, nnK/pid    namenode K's name dir, its blocks, its pid
    run-ha.pid      the supervisor's pid

Start, in order: the etcd members, until they agree on a leader; the namenodes whose name dirs
are formatted (nn1's is formatted first when none is), until one is active; then each other
namenode's name dir is bootstrapped from the active's image (``namenode --bootstrap-standby``,
Hadoop's ``-bootstrapStandby``) and the namenode started, until every one answers. Then one
summary on stdout: where each process listens, its pid, which namenode is active and commands
to paste to try a failover. Events are log lines on stderr, and the namenodes' own lines with
``[nnK] `` before each; etcd's go to its log.

A child that exits on its own starts again (``RestartPolicy``); a namenode only once another
namenode is active (or ``3 x nnlite.ha.lease.ttl + 30`` s after), so that it rejoins as a
standby instead of racing the survivor for the leadership. SIGTERM or SIGINT stop the standbys,
then the active (which resigns), then the etcd members, and ``run-ha`` exits 0.
"""

from __future__ import annotations

import getpass
import json
import logging
import os
import secrets
import shutil
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from nnlite.client.connection import Connection
from nnlite.client.errors import ClientError
from nnlite.client.etcd.client import Etcd
from nnlite.client.etcd.messages import MemberStatus
from nnlite.commands.errors import ProgramMissing
from nnlite.commands.supervisor import Child, Gate, Supervisor
from nnlite.commands.support import default_name_dir
from nnlite.namenode.config import Config, ConfigError
from nnlite.namenode.errors import AddressError
from nnlite.namenode.listen import check_free

log = logging.getLogger(__name__)

NAMESERVICE = "ns1"
HOST = "127.0.0.1"
DEFAULT_PORTS = (9870, 9871)
DEFAULT_RPC_PORT = 8020         # nnK's hdfs:// port by default: 8020 + K - 1
ETCD = "etcd"
ETCD_MEMBERS = 3
ETCD_CLEAN = frozenset({0, -15})        # etcd dies of the SIGTERM it handled
ETCD_START = 60.0                       # s for the members to agree on a leader
NAMENODE_START = 180.0                  # s for an active namenode, and for every one to answer
CONF, MEMBERS, PID = "ha.conf", "etcd.json", "run-ha.pid"
INSTALL = ("etcd is not installed (no etcd on PATH): `make etcd` installs Debian's etcd-server "
           "as root (apt-get install etcd-server), or put an etcd 3.4+ binary on PATH")


def default_base_dir() -> str:
    """``~/.nnlite/ha``: beside the default name dir (read at call time)."""
    return str(Path(default_name_dir()).with_name("ha"))


def etcd_binary() -> str:
    path = shutil.which(ETCD)
    if path is None:
        raise ProgramMissing(INSTALL)
    return path


@dataclass(frozen=True)
class EtcdMember:
    name: str
    client_port: int
    peer_port: int

    @property
    def client_url(self) -> str:
        return f"http://{HOST}:{self.client_port}"

    @property
    def peer_url(self) -> str:
        return f"http://{HOST}:{self.peer_port}"


@dataclass(frozen=True)
class LocalHASet:
    """Where everything of one local HA set lives and listens (module docstring)."""
    base: Path
    ports: tuple[int, ...]           # the namenodes', nn1 first
    members: tuple[EtcdMember, ...]
    token: str                       # etcd's --initial-cluster-token
    secret: str                      # nnlite.checkpoint.secret, shared by the namenodes
    settings: tuple[tuple[str, str], ...] = ()      # the user's own keys (--conf, -D)
    rpc_ports: tuple[int, ...] = ()  # the namenodes' hdfs:// ports, nn1 first

    @classmethod
    def plan(cls, base: Path, ports: list[int], settings: dict[str, str],
             rpc_ports: list[int] | None = None) -> LocalHASet:
        """The set in ``base``: the etcd members it has (or new ones on free ports), the
        namenodes on ``ports`` and ``rpc_ports`` (0: a free one; default 8020, 8021, ...),
        the secret it has (or a new one)."""
        base = base.absolute()
        members, token = _etcd_members(base)
        if rpc_ports is None:
            rpc_ports = [DEFAULT_RPC_PORT + i for i in range(len(ports))]
        if len(rpc_ports) != len(ports):
            raise ConfigError(f"one RPC port per namenode: {len(ports)} namenodes, "
                              f"{len(rpc_ports)} RPC ports")
        free = iter(free_ports(ports.count(0) + rpc_ports.count(0)))
        secret = (settings.get("nnlite.checkpoint.secret") or _kept_secret(base / CONF)
                  or secrets.token_hex(32))
        return cls(base, tuple(p or next(free) for p in ports), members, token, secret,
                   tuple(sorted(settings.items())), tuple(p or next(free) for p in rpc_ports))

    @property
    def ids(self) -> list[str]:
        return [f"nn{i + 1}" for i in range(len(self.ports))]

    @property
    def conf(self) -> Path:
        return self.base / CONF

    def url(self, i: int) -> str:
        return f"http://{HOST}:{self.ports[i]}"

    def rpc_address(self, i: int) -> str:
        return f"{HOST}:{self.rpc_ports[i]}"

    def name_dir(self, i: int) -> Path:
        return self.base / self.ids[i] / "name"

    def values(self) -> dict[str, str]:
        """The keys of ``ha.conf``: the user's, then the set's own over them."""
        return {
            **dict(self.settings),
            "dfs.nameservices": NAMESERVICE,
            f"dfs.ha.namenodes.{NAMESERVICE}": ",".join(self.ids),
            **{f"dfs.namenode.http-address.{NAMESERVICE}.{nn}": f"{HOST}:{port}"
               for nn, port in zip(self.ids, self.ports, strict=True)},
            **{f"dfs.namenode.rpc-address.{NAMESERVICE}.{nn}": self.rpc_address(i)
               for i, nn in enumerate(self.ids)},
            "nnlite.ha.etcd.endpoints": ",".join(m.client_url for m in self.members),
            "nnlite.checkpoint.secret": self.secret,
        }

    def write_config(self) -> None:
        """``ha.conf``, 0600 from its first byte (it holds the secret), replaced whole."""
        self.base.mkdir(parents=True, exist_ok=True)
        text = ("# nnlite run-ha's HA set (commands/haset.py); clients: nnlite ... --conf "
                f"{self.conf}\n" + "".join(f"{k} = {v}\n" for k, v in self.values().items()))
        tmp = self.conf.with_name(CONF + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, self.conf)

    def check_ports(self) -> None:
        """AddressError (one line, exit 3) now for a port another process listens on."""
        for port in self.ports + self.rpc_ports:
            check_free(HOST, port)
        for member in self.members:
            for port in (member.client_port, member.peer_port):
                try:
                    check_free(HOST, port)
                except AddressError as exc:
                    cause = exc.__cause__
                    reason = (os.strerror(cause.errno).lower()
                              if isinstance(cause, OSError) and cause.errno else str(exc))
                    raise AddressError(
                        f"cannot listen on {HOST}:{port} ({reason}), the port of etcd member "
                        f"{member.name} of the set in {self.base}, chosen at its first start "
                        f"({MEMBERS}): stop what holds it, or give run-ha another "
                        "--base-dir") from exc

    def lease_ttl(self) -> int:
        return Config(dict(self.settings)).int("nnlite.ha.lease.ttl")


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports nobody listens on now (held open together)."""
    socks = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind((HOST, 0))
            socks.append(sock)
        return [s.getsockname()[1] for s in socks]
    finally:
        for sock in socks:
            sock.close()


def _etcd_members(base: Path) -> tuple[tuple[EtcdMember, ...], str]:
    """The members ``etcd.json`` records, or new ones on free ports, recorded there."""
    path = base / MEMBERS
    if path.exists():
        try:
            doc = json.loads(path.read_text())
            return tuple(EtcdMember(**m) for m in doc["members"]), doc["token"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{path} is not what run-ha wrote ({exc}): move {base} aside "
                              "to start a new set") from exc
    ports = free_ports(2 * ETCD_MEMBERS)
    members = tuple(EtcdMember(f"etcd{k + 1}", ports[2 * k], ports[2 * k + 1])
                    for k in range(ETCD_MEMBERS))
    token = f"nnlite-ha-{secrets.token_hex(6)}"
    base.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"token": token, "members": [m.__dict__ for m in members]},
                               indent=1) + "\n")
    return members, token


def _kept_secret(conf: Path) -> str:
    return Config.load(str(conf)).get("nnlite.checkpoint.secret") if conf.exists() else ""


# ------------------------------------------------------------------ the children

def etcd_child(haset: LocalHASet, member: EtcdMember, binary: str) -> Child:
    home = haset.base / member.name
    home.mkdir(parents=True, exist_ok=True)
    cluster = ",".join(f"{m.name}={m.peer_url}" for m in haset.members)
    # On a data dir that exists etcd ignores the --initial-* flags: "new" restarts it too.
    argv = [binary, "--name", member.name, "--data-dir", str(home / "data"),
            "--listen-client-urls", member.client_url,
            "--advertise-client-urls", member.client_url,
            "--listen-peer-urls", member.peer_url,
            "--initial-advertise-peer-urls", member.peer_url,
            "--initial-cluster", cluster, "--initial-cluster-state", "new",
            "--initial-cluster-token", haset.token, "--logger", "zap",
            "--log-outputs", "stderr"]
    return Child(member.name, argv, home / "pid", home / "log", clean=ETCD_CLEAN)


def namenode_child(haset: LocalHASet, i: int) -> Child:
    nn = haset.ids[i]
    argv = [sys.executable, "-m", "nnlite.cli", "namenode", "--name-dir",
            str(haset.name_dir(i)), "--host", HOST, "--port", str(haset.ports[i]),
            "--conf", str(haset.conf), "-D", f"dfs.ha.namenode.id={nn}"]
    return Child(nn, argv, haset.base / nn / "pid")


def service_state(url: str) -> str | None:
    """What the namenode at ``url`` says it is (``/admin?op=GETSERVICESTATE``: active,
    standby, ...) once it is in the HA set; None before, or when it does not answer."""
    conn = Connection(url, 1.0)
    try:
        reply = conn.request("GET", "/admin?op=GETSERVICESTATE")
        doc = json.loads(reply.body) if reply.status == 200 else {}
    except (ClientError, ValueError):
        return None
    finally:
        conn.close()
    return doc.get("state") if isinstance(doc, dict) and doc.get("ha") else None


def etcd_statuses(endpoints: list[str]) -> list[MemberStatus | None]:
    """Each member's status, None for one that does not answer."""
    with Etcd(endpoints, timeout=1.0) as etcd:
        found = etcd.member_status()
    return [s if isinstance(s, dict) else None for s in (found.get(e) for e in endpoints)]


def etcd_leader(endpoints: list[str]) -> int | None:
    """The leader's member id once every member answers and names the same one."""
    leaders = {s["leader"] if s else 0 for s in etcd_statuses(endpoints)}
    return leaders.pop() if len(leaders) == 1 and 0 not in leaders else None


class States:
    """The namenodes' states, asked on every tick of the supervisor: a child that answers is
    up (the restart policy's condition); each change of the active is one log line. A running
    namenode that does not answer in time keeps the state it last said."""

    def __init__(self, haset: LocalHASet, namenodes: dict[str, Child], etcd: list[Child]):
        self.haset = haset
        self.namenodes = namenodes
        self.etcd = etcd
        self.states: dict[str, str] = {}
        self.active: str | None = None

    def tick(self) -> None:
        for i, nn in enumerate(self.haset.ids):
            child = self.namenodes.get(nn)
            if child is None or not child.running:
                self.states.pop(nn, None)
                continue
            state = service_state(self.haset.url(i))
            if state is not None:           # no answer (busy, etcd electing): as it was
                child.up = True
                self.states[nn] = state
        for child, member in zip(self.etcd, self.haset.members, strict=True):
            if child.running and not child.up:
                child.up = etcd_leader([member.client_url]) is not None
        active = next((nn for nn, state in self.states.items() if state == "active"), None)
        if active != self.active:
            if active is None:
                log.info("no namenode is active (%s was)", self.active)
            else:
                log.info("%s is active now (%s)", active,
                         self.haset.url(self.haset.ids.index(active)))
            self.active = active

    def found_active(self) -> str | None:
        self.tick()
        return self.active

    def all_up(self) -> bool | None:
        self.tick()
        return True if all(c.up for c in self.namenodes.values()) else None

    def gate(self, nn: str) -> Gate:
        """A namenode's restart waits for another one to be active."""
        return Gate("another namenode is active", lambda: self.active not in (None, nn),
                    3 * self.haset.lease_ttl() + 30)

    def stop_order(self) -> list[list[Child]]:
        """The standbys, then the active; the etcd followers, then the leader (a leader that
        stops hands its leadership on, and waits seconds for a follower that stops too)."""
        active = [c for nn, c in self.namenodes.items() if nn == self.active]
        statuses = etcd_statuses([m.client_url for m in self.haset.members])
        leader = [c for c, s in zip(self.etcd, statuses, strict=True)
                  if s and s["member_id"] == s["leader"]]
        return [[c for c in self.namenodes.values() if c not in active], active,
                [c for c in self.etcd if c not in leader], leader]


# ------------------------------------------------------------------ run-ha

def run(haset: LocalHASet, binary: str) -> int:
    """Start the set (etcd from ``binary``), print the summary, supervise until SIGTERM or
    SIGINT; the exit code."""
    haset.check_ports()
    haset.write_config()
    pid_file = haset.base / PID
    pid_file.write_text(f"{os.getpid()}\n")
    supervisor = Supervisor()
    etcd = [etcd_child(haset, m, binary) for m in haset.members]
    states = States(haset, {}, etcd)
    try:
        if _start(haset, supervisor, states) is None:
            return supervisor.stop(states.stop_order())
        print_summary(haset, states)
        supervisor.watch(states.tick)
        return supervisor.stop(states.stop_order())
    except Exception:               # a child that died, a bootstrap refused: the rest stop
        supervisor.stop(states.stop_order())
        raise
    finally:
        supervisor.kill_all()
        pid_file.unlink(missing_ok=True)


def _start(haset: LocalHASet, supervisor: Supervisor, states: States) -> bool | None:
    """Bring the set up (module docstring); None when asked to stop meanwhile."""
    from nnlite.commands.daemons import bootstrap_standby
    from nnlite.namenode.fsnamesystem import format_dirs
    from nnlite.namenode.storage.namedir import NameDir
    for child in states.etcd:
        supervisor.start(child)
    endpoints = [m.client_url for m in haset.members]
    if supervisor.wait_until(lambda: etcd_leader(endpoints), ETCD_START,
                             "the etcd members to agree on a leader") is None:
        return None
    dirs = [NameDir(haset.name_dir(i)) for i in range(len(haset.ids))]
    if not any(d.is_formatted() for d in dirs):
        format_dirs([dirs[0]])
    later = [i for i, d in enumerate(dirs) if not d.is_formatted()]
    for i in (i for i in range(len(dirs)) if i not in later):
        _start_namenode(haset, supervisor, states, i)
    if supervisor.wait_until(states.found_active, NAMENODE_START,
                             "a namenode to become active") is None:
        return None
    for i in later:
        config = Config.load(str(haset.conf), [f"dfs.ha.namenode.id={haset.ids[i]}"])
        source, image = bootstrap_standby([str(dirs[i].root)], config)
        log.info("%s's name dir bootstrapped from %s's image (txid %d)", haset.ids[i], source,
                 image.meta.last_txid)
        _start_namenode(haset, supervisor, states, i)
    return supervisor.wait_until(states.all_up, NAMENODE_START, "every namenode to answer")


def _start_namenode(haset: LocalHASet, supervisor: Supervisor, states: States, i: int) -> None:
    nn = haset.ids[i]
    states.namenodes[nn] = supervisor.start(namenode_child(haset, i), states.gate(nn))


# ------------------------------------------------------------------ the summary

def print_summary(haset: LocalHASet, states: States) -> None:
    print(summary(haset, states), flush=True)


def summary(haset: LocalHASet, states: States) -> str:
    nnlite = _nnlite_command()
    conf = haset.conf
    active = states.active or haset.ids[0]
    i = haset.ids.index(active)
    other = haset.ids[(i + 1) % len(haset.ids)]
    j = haset.ids.index(other)
    lines = [f"HA set {NAMESERVICE} is up in {haset.base} (its configuration: {conf})"]
    for child, member in zip(states.etcd, haset.members, strict=True):
        lines.append(f"  {member.name:6} {member.client_url:24} pid {child.pid:<8} "
                     f"log {child.log_file}")
    for k, nn in enumerate(haset.ids):
        state = states.states.get(nn, "?")
        role = " (takes the checkpoints)" if state == "standby" else ""
        lines.append(f"  {nn:6} {haset.url(k):24} hdfs://{haset.rpc_address(k):17} "
                     f"pid {states.namenodes[nn].pid:<8} {state}{role}")
    user = getpass.getuser()
    lines += [
        "Try a failover, from another shell:",
        f"  {nnlite} haadmin --conf {conf} getServiceState {active}",
        f"  curl -s '{haset.url(j)}/admin?op=GETSERVICESTATE'",
        f"  {nnlite} dfs --conf {conf} --namenode {NAMESERVICE} mkdir -p /tried/before",
        f"  kill -9 {states.namenodes[active].pid}      # {active}, the active namenode",
        f"  {nnlite} dfs --conf {conf} --namenode {NAMESERVICE} mkdir -p /tried/after   "
        f"# waits for {other}",
        f"  curl -s -X PUT '{haset.url(j)}/webhdfs/v1/tried/curl?op=MKDIRS&user.name={user}'",
        f"  {nnlite} haadmin --conf {conf} getServiceState {other}",
        f"The dfs commands follow {NAMESERVICE}'s active namenode; curl asks {other} alone (a "
        "write there answers StandbyException",
        "until it has taken over, a few seconds after the kill). A namenode that dies starts "
        "again once another one",
        f"is active, and rejoins as a standby. Pids: {haset.base}/<id>/pid. Ctrl-C or SIGTERM "
        "stops everything.",
    ]
    return "\n".join(lines)


def _nnlite_command() -> str:
    """How a user runs this nnlite: the script beside this Python, else ``python -m``."""
    script = Path(sys.executable).parent / "nnlite"
    return str(script) if script.exists() else f"{sys.executable} -m nnlite.cli"
