"""nnlite's own CLI in secure mode (commands/support.py's ``log_in``, client/connection.py's
SPNEGO and cookie, client/kerberos.py), as separate processes against a real secure namenode
and the tests' KDC: the user's ticket cache after kinit, or ``--keytab`` and ``--principal``;
``nnlite -v`` names the principal; files go through the data step's token; without a ticket
the namenode's 401 is the command's error."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.namenode.http.secure import (
    make_homes,
    secure_args,
    server_env,
)
from tests.servers import ROOT

USERS = "tester=supergroup;alice=staff;bob=staff"


@pytest.fixture(scope="module")
def nn(kdc, start_module_namenode):
    server = start_module_namenode(*secure_args(kdc), env=server_env(kdc), users=USERS)
    make_homes(kdc, server, "alice", "bob")
    return server


def nnlite(kdc, nn, principal, *args: str, secure: bool = True) -> subprocess.CompletedProcess:
    conf = ["-D", "hadoop.security.authentication=kerberos"] if secure else []
    return subprocess.run([sys.executable, "-m", "nnlite.cli", *filter(None, args[:1]), "dfs",
                           *args[1:],
                           "--namenode", f"http://localhost:{nn.port}", *conf],
                          cwd=ROOT, env={**kdc.env_for(principal), "PATH": "/usr/bin:/bin"},
                          capture_output=True, timeout=120)


def test_the_ticket_cache_acts_as_its_principal(kdc, nn):
    alice = kdc.user("alice")
    made = nnlite(kdc, nn, alice, "-v", "mkdir", "-p", "/user/alice/cli/a")
    assert made.returncode == 0, made.stderr
    assert b"acting as alice@NNLITE.TEST (from the ticket cache)" in made.stderr
    listed = nnlite(kdc, nn, alice, "", "ls", "/user/alice/cli")
    assert listed.returncode == 0 and b"alice" in listed.stdout and b"/user/alice/cli/a" in \
        listed.stdout


def test_files_go_through_the_data_steps_token(kdc, nn, tmp_path):
    alice = kdc.user("alice")
    (tmp_path / "local").write_bytes(b"kerberized")
    put = nnlite(kdc, nn, alice, "", "put", str(tmp_path / "local"), "/user/alice/cli-file")
    assert put.returncode == 0, put.stderr
    cat = nnlite(kdc, nn, alice, "", "cat", "/user/alice/cli-file")
    assert cat.stdout == b"kerberized"


def test_a_keytab_and_principal_without_a_ticket_cache(kdc, nn):
    bob = kdc.user("bob")
    made = nnlite(kdc, nn, None, "-v", "mkdir", "/user/bob/from-keytab",
                  "--principal", bob.name, "--keytab", str(bob.keytab), secure=False)
    assert made.returncode == 0, made.stderr
    assert f"acting as {bob.name} (from keytab {bob.keytab})".encode() in made.stderr
    denied = nnlite(kdc, nn, None, "", "mkdir", "/user/alice/not-bobs",
                    "--principal", bob.name, "--keytab", str(bob.keytab))
    assert denied.returncode != 0 and b"Permission denied: user=bob" in denied.stderr


def test_without_a_ticket_the_refusal_is_the_error(kdc, nn):
    no_ticket = nnlite(kdc, nn, None, "", "ls", "/")
    assert no_ticket.returncode == 2 and b"kinit first" in no_ticket.stderr
    simple = nnlite(kdc, nn, None, "", "ls", "/", secure=False)   # user.name: no proof
    assert simple.returncode != 0 and b"401" in simple.stderr


def test_a_refused_cookie_is_dropped_and_the_login_negotiated_again(kdc, nn):
    """In one process (client/connection.py): the cookie a server no longer honours (a
    restart with a new random secret) costs one 401, then the ticket logs in again."""
    from nnlite.client import connection
    from nnlite.client.kerberos import KerberosLogin
    from nnlite.client.webhdfs import WebHdfsClient
    login = KerberosLogin(ccache=f"FILE:{kdc.user('alice').ccache}")
    connection.log_in(login)
    try:
        with WebHdfsClient(f"http://localhost:{nn.port}", "alice") as client:
            assert client.status("/user/alice")["owner"] == "alice"
            server = f"localhost:{nn.port}"
            assert login.cookie(server)
            login.keep(server, 'hadoop.auth="u=alice&p=alice@NNLITE.TEST&t=kerberos&e=1&s=x"')
            assert client.status("/user/alice")["owner"] == "alice"
            assert login.cookie(server) and not login.cookie(server).endswith("&s=x")
    finally:
        connection.log_in(None)


def test_the_catalog_acts_as_the_ticket_cache_principal(kdc, nn):
    """``nnlite catalog`` takes the same login (its API answers only a proved caller)."""
    alice = kdc.user("alice")
    made = nnlite(kdc, nn, alice, "", "mkdir", "-p", "/user/alice/ckpt/q1/offsets")
    assert made.returncode == 0, made.stderr
    proc = subprocess.run([sys.executable, "-m", "nnlite.cli", "-v", "catalog", "ls",
                           "/user/alice/ckpt", "--namenode", f"http://localhost:{nn.port}",
                           "-D", "hadoop.security.authentication=kerberos", "--json"],
                          cwd=ROOT, env={**kdc.env_for(alice), "PATH": "/usr/bin:/bin"},
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert b"acting as alice@NNLITE.TEST" in proc.stderr
    denied = subprocess.run([sys.executable, "-m", "nnlite.cli", "catalog", "ls",
                             "/user/alice/ckpt", "--namenode", f"http://localhost:{nn.port}"],
                            cwd=ROOT, env={**kdc.env_for(None), "PATH": "/usr/bin:/bin"},
                            capture_output=True, timeout=120)
    assert denied.returncode != 0 and b"401" in denied.stderr
