"""What secure mode costs over hdfs:// (issue 32): metadata calls through a SASL-authenticated
connection against the same calls in simple mode, and what setting up one connection costs.

    python bench/bench_sasl.py [--rounds 2] [--lookups 8:4000] [--creates 32:500]
                               [--connections 200]

A KDC of its own (Debian's krb5kdc through k5test, ``tests/kerberos_realm.py``) in a
temporary directory, and two ``nnlite namenode`` processes on 127.0.0.1: one in simple mode,
one with ``hadoop.security.authentication=kerberos`` and ``hadoop.rpc.protection`` offering
all three qops, so each client picks its own. Both are stopped when the script ends.

Calls (as ``bench_rpc.py``'s: one process per client, one connection each, one call in
flight): ``getFileInfo`` from 8 clients and durable ``mkdirs`` from 32, over connections
authenticated once each -- simple (the context's user), Kerberos GSSAPI from the user's
ticket cache at ``auth``, ``auth-int`` and ``auth-conf`` (every frame wrapped by MIT's
``gss_wrap``), and DIGEST-MD5 with a delegation token at ``auth``. Each row: calls per
second, that rate over simple mode's in the same round, and the namenode's CPU per call.

Set-up: ``--connections`` connections one after another, each opened, authenticated, asked
one ``getFileInfo`` and closed: milliseconds per connection (the client's side included:
gssapi's context from the ticket cache, a DIGEST response) and the namenode's CPU per
connection. One run; compare within it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_rpc import USER, cpu, race, rpc_calls, workload  # noqa: E402  (bench/ is sys.path[0])

from nnlite.formats.hadoop import acl  # noqa: E402
from nnlite.formats.hadoop import client_namenode as cn  # noqa: E402
from nnlite.formats.hadoop import security as sec  # noqa: E402
from tests.kerberos_realm import Realm  # noqa: E402
from tests.namenode.rpc.rawclient import RawClient  # noqa: E402
from tests.namenode.security.sasl_client import SaslClient  # noqa: E402
from tests.servers import NamenodeProcess  # noqa: E402

MODES = ("simple", "kerberos auth", "kerberos auth-int", "kerberos auth-conf", "token auth")


class Target:
    """Where and how a client connects: a port, the mode, the user's ticket cache, a token."""

    def __init__(self, simple: int, secure: int, ccache: str, token) -> None:
        self.simple, self.secure, self.ccache = simple, secure, ccache
        self.token = (bytes(token.identifier), bytes(token.password))

    def connect(self, mode: str):
        if mode == "simple":
            return RawClient(self.simple).connect(USER)
        kind, qop = mode.split()
        client = SaslClient(self.secure)
        if kind == "kerberos":
            return client.kerberos(self.ccache, qop).context()
        return client.token(*self.token, qop).context()

    def pid_port(self, mode: str) -> int:
        return self.simple if mode == "simple" else self.secure


def client(target: Target, mode: str, op: str, calls: int, k: str, ready, go) -> None:
    conn = target.connect(mode)
    ready.release()
    go.wait()
    rpc_calls(conn, op, calls, f"/bench/rpc/{mode.replace(' ', '-')}/c{k}")
    conn.close()


def calls_row(target: Target, nn: NamenodeProcess, mode: str, op: str, clients: int,
              calls: int, r: int) -> tuple[float, float]:
    """(calls per second, the namenode's CPU µs per call) of ``clients`` clients in ``mode``."""
    wall, used = race(nn, client, (target, mode, op, calls), clients, r, mode)
    return clients * calls / wall, used * 1e6 / (clients * calls)


def setup_row(target: Target, nn: NamenodeProcess, mode: str, connections: int) -> None:
    lookup = cn.GetFileInfoRequestProto(src="/bench/rpc")
    cpu0, started = sum(cpu(nn.proc.pid)), time.monotonic()
    for _ in range(connections):
        with target.connect(mode) as conn:
            conn.answer("getFileInfo", lookup)
    wall, used = time.monotonic() - started, sum(cpu(nn.proc.pid)) - cpu0
    print(f"| {mode} | {wall * 1e3 / connections:.2f} | {used * 1e3 / connections:.2f} |",
          flush=True)


def start(kdc: Realm, base: Path) -> tuple[NamenodeProcess, NamenodeProcess, Target]:
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"), path=base / "nn.keytab")
    user = kdc.user(USER)
    users = ("-D", f"hadoop.user.group.static.mapping.overrides={USER}=supergroup")
    simple = NamenodeProcess.start([str(base / "simple")], *users)
    secure = NamenodeProcess.start(
        [str(base / "secure")], *users,
        "-D", "hadoop.security.authentication=kerberos",
        "-D", f"dfs.namenode.kerberos.principal=nn/_HOST@{kdc.name}",
        "-D", f"dfs.namenode.keytab.file={keytab}",
        "-D", f"dfs.web.authentication.kerberos.principal=HTTP/_HOST@{kdc.name}",
        "-D", "hadoop.rpc.protection=authentication,integrity,privacy", env=kdc.env_for())
    with SaslClient(secure.rpc_port).kerberos(user.ccache).context() as conn:
        token = conn.answer("getDelegationToken",
                            sec.GetDelegationTokenRequestProto(renewer=USER)).token
    target = Target(simple.rpc_port, secure.rpc_port, str(user.ccache), token)
    for mode in ("simple", "kerberos auth"):
        with target.connect(mode) as conn:
            conn.answer("mkdirs", cn.MkdirsRequestProto(
                src="/bench/rpc", masked=acl.FsPermissionProto(perm=0o755),
                createParent=True))
    return simple, secure, target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--lookups", type=workload, default="8:4000",
                        help="clients:calls each for getFileInfo (default 8:4000)")
    parser.add_argument("--creates", type=workload, default="32:500",
                        help="clients:calls each for mkdirs (default 32:500)")
    parser.add_argument("--connections", type=int, default=200)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-sasl-", dir=os.environ.get("BENCH_DIR")))
    kdc = Realm.start(base / "kdc")
    started: list[NamenodeProcess] = []
    try:
        simple, secure, target = start(kdc, base)
        started += [simple, secure]
        print("| connection | call | clients | calls/s | ÷ simple | namenode µs/call |")
        print("|---|---|---|---|---|---|")
        for r in range(args.rounds):
            for op, (clients, calls) in (("lookup", args.lookups), ("create", args.creates)):
                modes = MODES if r % 2 == 0 else MODES[::-1]
                rates = {}
                for mode in modes:
                    nn = simple if mode == "simple" else secure
                    rates[mode] = calls_row(target, nn, mode, op, clients, calls, r)
                for mode in MODES:
                    rate, per_call = rates[mode]
                    print(f"| {mode} | {op} | {clients} | {rate:,.0f} | "
                          f"{rate / rates['simple'][0]:.2f} | {per_call:.1f} |", flush=True)
        print("\n| connection set-up | ms per connection | namenode CPU ms per connection |")
        print("|---|---|---|")
        for mode in ("simple", "kerberos auth", "kerberos auth-conf", "token auth"):
            setup_row(target, simple if mode == "simple" else secure, mode, args.connections)
    finally:
        for nn in started:
            nn.stop()
        kdc.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
