"""What secure mode costs over WebHDFS (issue 32): metadata calls authenticated by the
``hadoop.auth`` cookie or a delegation token against the same calls in simple mode, and what
one SPNEGO login costs.

    python bench/bench_spnego.py [--rounds 2] [--lookups 8:4000] [--creates 32:500]
                                 [--logins 200]

A KDC of its own (Debian's krb5kdc through k5test, ``tests/kerberos_realm.py``) in a
temporary directory, and two ``nnlite namenode`` processes on 127.0.0.1: one in simple mode,
one with ``hadoop.security.authentication=kerberos``. Both are stopped when the script ends.

Calls (as ``bench_rpc.py``'s WebHDFS clients: one process per client, one kept-alive
``http.client`` connection each, one call in flight): GETFILESTATUS from 8 clients and
durable MKDIRS from 32 -- simple (``user.name``), the signed cookie a SPNEGO login set
(``AuthenticationFilter``'s way after the first call: an HMAC-SHA256 check per call), and
``delegation=`` (the token checked by the secret manager, as ``JspHelper.getTokenUGI``).
Each row: calls per second, that rate over simple mode's in the same round, and the
namenode's CPU per call.

Logins: ``--logins`` requests one after another, each on a new connection, each with a new
SPNEGO context from the user's ticket cache (``Authorization: Negotiate``, the server's
acceptor, its replay cache, the cookie issued): milliseconds per login (the client's side
included) and the namenode's CPU per login; beside it the same with the cookie instead.
One run; compare within it.
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_rpc import USER, cpu, race, workload  # noqa: E402  (bench/ is sys.path[0])

from nnlite.client.kerberos import KerberosLogin, cookie_value  # noqa: E402
from tests.kerberos_realm import Realm  # noqa: E402
from tests.servers import NamenodeProcess  # noqa: E402

MODES = ("simple", "cookie", "token")


class Target:
    """Where and how a client calls: the two ports, the cookie and the token."""

    def __init__(self, simple: int, secure: int, cookie: str, token: str) -> None:
        self.simple, self.secure, self.cookie, self.token = simple, secure, cookie, token

    def port(self, mode: str) -> int:
        return self.simple if mode == "simple" else self.secure

    def auth(self, mode: str) -> tuple[str, dict[str, str]]:
        """The query's proof and the headers for ``mode``."""
        if mode == "simple":
            return f"&user.name={USER}", {}
        if mode == "token":
            return f"&delegation={self.token}", {}
        return "", {"Cookie": f'hadoop.auth="{self.cookie}"'}


def client(target: Target, mode: str, op: str, calls: int, k: str, ready, go) -> None:
    conn = http.client.HTTPConnection("localhost", target.port(mode))
    conn.connect()
    proof, headers = target.auth(mode)
    ready.release()
    go.wait()
    for n in range(calls):
        if op == "lookup":
            conn.request("GET", f"/webhdfs/v1/bench/http?op=GETFILESTATUS{proof}",
                         headers=headers)
        else:
            conn.request("PUT", f"/webhdfs/v1/bench/http/{mode}/c{k}/{n}?op=MKDIRS{proof}",
                         headers=headers)
        answer = conn.getresponse()
        body = answer.read()
        if answer.status != 200:
            raise SystemExit(f"{mode} {op}: HTTP {answer.status}: {body[:200]!r}")
    conn.close()


def calls_row(target: Target, nn: NamenodeProcess, mode: str, op: str, clients: int,
              calls: int, r: int) -> tuple[float, float]:
    """(calls per second, the namenode's CPU µs per call) of ``clients`` clients in ``mode``."""
    wall, used = race(nn, client, (target, mode, op, calls), clients, r, mode)
    return clients * calls / wall, used * 1e6 / (clients * calls)


def login_row(target: Target, nn: NamenodeProcess, login: KerberosLogin | None,
              what: str, logins: int) -> None:
    """``logins`` new connections in a row, each proving itself once (SPNEGO with ``login``,
    else the cookie) and asking one GETFILESTATUS."""
    cpu0, started = sum(cpu(nn.proc.pid)), time.monotonic()
    for _ in range(logins):
        conn = http.client.HTTPConnection("localhost", target.secure)
        if login is not None:
            headers = {"Authorization": login.token("localhost")[1]}
        else:
            headers = target.auth("cookie")[1]
        conn.request("GET", "/webhdfs/v1/bench/http?op=GETFILESTATUS", headers=headers)
        answer = conn.getresponse()
        answer.read()
        if answer.status != 200:
            raise SystemExit(f"{what}: HTTP {answer.status}")
        conn.close()
    wall, used = time.monotonic() - started, sum(cpu(nn.proc.pid)) - cpu0
    print(f"| {what} | {wall * 1e3 / logins:.2f} | {used * 1e3 / logins:.2f} |", flush=True)


def start(kdc: Realm, base: Path) -> tuple[NamenodeProcess, NamenodeProcess, Target,
                                           KerberosLogin]:
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
        env=kdc.env_for())
    login = KerberosLogin(ccache=f"FILE:{user.ccache}")
    conn = http.client.HTTPConnection("localhost", secure.port)
    conn.request("PUT", "/webhdfs/v1/bench/http?op=MKDIRS",
                 headers={"Authorization": login.token("localhost")[1]})
    answer = conn.getresponse()
    answer.read()
    cookie = cookie_value(answer.getheader("Set-Cookie")) or ""
    conn.request("GET", "/webhdfs/v1/?op=GETDELEGATIONTOKEN",
                 headers={"Cookie": f'hadoop.auth="{cookie}"'})
    token = answer_json(conn)["Token"]["urlString"]
    conn.close()
    simple_conn = http.client.HTTPConnection("127.0.0.1", simple.port)
    simple_conn.request("PUT", f"/webhdfs/v1/bench/http?op=MKDIRS&user.name={USER}")
    simple_conn.getresponse().read()
    simple_conn.close()
    return simple, secure, Target(simple.port, secure.port, cookie, quote(token)), login


def answer_json(conn: http.client.HTTPConnection) -> dict:
    import json
    answer = conn.getresponse()
    body = answer.read()
    if answer.status != 200:
        raise SystemExit(f"HTTP {answer.status}: {body[:200]!r}")
    return json.loads(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--lookups", type=workload, default="8:4000",
                        help="clients:calls each for GETFILESTATUS (default 8:4000)")
    parser.add_argument("--creates", type=workload, default="32:500",
                        help="clients:calls each for MKDIRS (default 32:500)")
    parser.add_argument("--logins", type=int, default=200)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-spnego-", dir=os.environ.get("BENCH_DIR")))
    kdc = Realm.start(base / "kdc")
    started: list[NamenodeProcess] = []
    try:
        simple, secure, target, login = start(kdc, base)
        started += [simple, secure]
        print("| proof | call | clients | calls/s | ÷ simple | namenode µs/call |")
        print("|---|---|---|---|---|---|")
        for r in range(args.rounds):
            for op, (clients, calls) in (("lookup", args.lookups), ("create", args.creates)):
                modes = MODES if r % 2 == 0 else MODES[::-1]
                rates = {mode: calls_row(target, simple if mode == "simple" else secure, mode,
                                         op, clients, calls, r) for mode in modes}
                for mode in MODES:
                    rate, per_call = rates[mode]
                    print(f"| {mode} | {op} | {clients} | {rate:,.0f} | "
                          f"{rate / rates['simple'][0]:.2f} | {per_call:.1f} |", flush=True)
        print("\n| new connection, then one GETFILESTATUS | ms each | namenode CPU ms each |")
        print("|---|---|---|")
        login_row(target, secure, login, "SPNEGO login", args.logins)
        login_row(target, secure, None, "hadoop.auth cookie", args.logins)
    finally:
        for nn in started:
            nn.stop()
        kdc.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
