"""WebHDFS's delegation tokens in secure mode (namenode/http/webhdfs.py, data.py,
authentication.py) on a real namenode with the tests' KDC: GETDELEGATIONTOKEN over SPNEGO,
the token standing for its owner on every op and on the data step's redirect,
RENEWDELEGATIONTOKEN by the renewer only, CANCELDELEGATIONTOKEN, and the refusals of a
forged, cancelled, expired or other user's token with Hadoop's messages. Then the Python
clients that log in through requests-kerberos (HdfsCLI's KerberosClient, fsspec's webhdfs
with ``kerberos=True``), unmodified."""

from __future__ import annotations

import itertools
from urllib.parse import parse_qs, urlsplit

import pytest

from nnlite.namenode.security.tokens import DelegationTokenIdentifier, Token
from tests.namenode.http.secure import kerberos_session, secure_args, server_env
from tests.servers import wait_for

requests = pytest.importorskip("requests")

USERS = "tester=supergroup;alice=staff;bob=staff"
INVALID_TOKEN = ("Failed to obtain user group information: "
                 "org.apache.hadoop.security.token.SecretManager$InvalidToken: ")
_ids = itertools.count()


@pytest.fixture(scope="module")
def nn(kdc, start_module_namenode):
    return start_module_namenode(*secure_args(kdc), env=server_env(kdc), users=USERS)


def url(nn, target: str, host: str = "localhost") -> str:
    return f"http://{host}:{nn.port}{target}"


@pytest.fixture
def alice(kdc):
    return kerberos_session(kdc.user("alice"))


def get_token(session, nn, **params) -> str:
    resp = session.get(url(nn, "/webhdfs/v1/?op=GETDELEGATIONTOKEN"), params=params)
    assert resp.status_code == 200, resp.text
    return resp.json()["Token"]["urlString"]


def refusal(resp, status=403) -> dict:
    assert resp.status_code == status, resp.text
    return resp.json()["RemoteException"]


def test_a_token_from_spnego_names_its_owner_and_renewer(nn, alice):
    token = Token.decode_url(get_token(alice, nn, renewer="bob"))
    assert token.kind == "WEBHDFS delegation"
    assert token.service.endswith(f":{nn.rpc_port}")
    ident = DelegationTokenIdentifier.decode(token.identifier)
    assert (ident.owner, ident.renewer, ident.real_user) == ("alice@NNLITE.TEST", "bob", "")
    assert ident.max_date > ident.issue_date > 0


def test_the_token_alone_is_its_owner_and_user_name_must_agree(nn, alice):
    token = get_token(alice, nn)
    home = requests.get(url(nn, "/webhdfs/v1/?op=GETHOMEDIRECTORY"),
                        params={"delegation": token})
    assert home.json() == {"Path": "/user/alice"}
    for name in ("user.name", "doas"):
        resp = requests.get(url(nn, "/webhdfs/v1/?op=GETHOMEDIRECTORY"),
                            params={"delegation": token, name: "tester"})
        assert refusal(resp)["message"].endswith(
            "Usernames not matched: name=tester != expected=alice")


def test_no_token_is_got_with_a_token(nn, alice):
    token = get_token(alice, nn)
    resp = requests.get(url(nn, "/webhdfs/v1/?op=GETDELEGATIONTOKEN"),
                        params={"delegation": token})
    assert refusal(resp, 400)["message"] == "delegation parameter is not null."


def test_renewal_by_the_renewer_only(kdc, nn, alice):
    token = get_token(alice, nn)
    renewed = alice.put(url(nn, "/webhdfs/v1/?op=RENEWDELEGATIONTOKEN"),
                        params={"token": token})
    assert renewed.status_code == 200 and renewed.json()["long"] > 0
    by_token = requests.put(url(nn, "/webhdfs/v1/?op=RENEWDELEGATIONTOKEN"),
                            params={"token": token, "delegation": token})
    assert refusal(by_token)["message"] == ("Delegation Token can be renewed only with "
                                            "kerberos or web authentication")
    bob = kerberos_session(kdc.user("bob"))
    other = refusal(bob.put(url(nn, "/webhdfs/v1/?op=RENEWDELEGATIONTOKEN"),
                            params={"token": token}))
    assert other["exception"] == "AccessControlException"
    assert "with non-matching renewer alice" in other["message"]


def test_a_cancelled_token_is_refused_and_only_owner_or_renewer_cancel(kdc, nn, alice):
    token = get_token(alice, nn)
    bob = kerberos_session(kdc.user("bob"))
    denied = refusal(bob.put(url(nn, "/webhdfs/v1/?op=CANCELDELEGATIONTOKEN"),
                             params={"token": token}))
    assert "bob@NNLITE.TEST is not authorized to cancel the token" in denied["message"]
    done = alice.put(url(nn, "/webhdfs/v1/?op=CANCELDELEGATIONTOKEN"), params={"token": token})
    assert done.status_code == 200 and done.content == b""
    resp = requests.get(url(nn, "/webhdfs/v1/?op=GETHOMEDIRECTORY"),
                        params={"delegation": token})
    gone = refusal(resp)
    assert gone["javaClassName"] == "java.lang.SecurityException"
    assert gone["message"].startswith(INVALID_TOKEN)
    assert gone["message"].endswith("can't be found in cache")


def test_a_forged_token_is_refused(nn, alice):
    token = Token.decode_url(get_token(alice, nn))
    forged = Token(token.identifier, bytes(b ^ 1 for b in token.password), token.kind,
                   token.service).encode_url()
    resp = requests.get(url(nn, "/webhdfs/v1/?op=GETHOMEDIRECTORY"),
                        params={"delegation": forged})
    assert refusal(resp)["message"].endswith("is invalid, password doesn't match")
    garbage = requests.get(url(nn, "/webhdfs/v1/?op=GETHOMEDIRECTORY"),
                           params={"delegation": "AAAA"})
    assert refusal(garbage)["message"].startswith(INVALID_TOKEN)


def test_another_users_token_acts_as_that_user_only(kdc, nn):
    bob = kerberos_session(kdc.user("bob"))
    token = get_token(bob, nn)
    resp = requests.get(url(nn, "/webhdfs/v1/?op=GETHOMEDIRECTORY"),
                        params={"delegation": token, "user.name": "alice"})
    assert refusal(resp)["message"].endswith("name=alice != expected=bob")


def test_the_data_step_redirect_carries_a_token_for_the_caller(kdc, nn, alice):
    home = f"/user/alice/f{next(_ids)}"
    tester = kerberos_session(kdc.user("tester"))           # in the supergroup
    assert tester.put(url(nn, f"/webhdfs/v1{home}?op=MKDIRS")).json() == {"boolean": True}
    assert tester.put(url(nn, f"/webhdfs/v1{home}?op=SETOWNER&owner=alice")).ok
    resp = alice.put(url(nn, f"/webhdfs/v1{home}/data?op=CREATE&user.name=alice"),
                     allow_redirects=False)
    assert resp.status_code == 307, resp.text
    location = resp.headers["Location"]
    query = parse_qs(urlsplit(location).query)
    assert "user.name" not in query and len(query["delegation"]) == 1
    ident = DelegationTokenIdentifier.decode(Token.decode_url(query["delegation"][0]).identifier)
    assert ident.owner == "alice@NNLITE.TEST"
    put = requests.put(location, data=b"secret bytes")       # no Kerberos: the token says who
    assert put.status_code == 201, put.text
    opened = alice.get(url(nn, f"/webhdfs/v1{home}/data?op=OPEN"), allow_redirects=False)
    assert "delegation=" in opened.headers["Location"]
    assert requests.get(opened.headers["Location"]).content == b"secret bytes"
    status = alice.get(url(nn, f"/webhdfs/v1{home}/data?op=GETFILESTATUS")).json()
    assert status["FileStatus"]["owner"] == "alice"


@pytest.fixture(scope="module")
def short_lived(kdc, start_module_namenode):
    return start_module_namenode(*secure_args(
        kdc, "-D", "dfs.namenode.delegation.token.renew-interval=1500"),
        env=server_env(kdc), users=USERS)


def test_an_expired_token_is_refused(short_lived, alice):
    token = get_token(alice, short_lived)
    target = url(short_lived, "/webhdfs/v1/?op=GETHOMEDIRECTORY")
    assert requests.get(target, params={"delegation": token}).status_code == 200

    def expired():
        resp = requests.get(target, params={"delegation": token})
        return resp.status_code == 403 and "is expired" in resp.text
    wait_for(expired, 30, "the token to expire")
    message = requests.get(target, params={"delegation": token}).json()[
        "RemoteException"]["message"]
    assert message.startswith(INVALID_TOKEN) and "expected renewal time" in message


def test_a_token_answered_survives_a_kill_9(kdc, start_namenode, alice):
    """The answer of GETDELEGATIONTOKEN waits for its edit to be durable: SIGKILL right after
    it, and the restarted namenode honours the token."""
    first = start_namenode(*secure_args(kdc), env=server_env(kdc), users=USERS)
    token = get_token(alice, first)
    first.kill()
    again = start_namenode(*secure_args(kdc), env=server_env(kdc), users=USERS,
                           name_dirs=first.name_dirs)
    home = requests.get(url(again, "/webhdfs/v1/?op=GETHOMEDIRECTORY"),
                        params={"delegation": token})
    assert home.status_code == 200 and home.json() == {"Path": "/user/alice"}


def test_over_https_the_cookie_is_secure_and_the_token_swebhdfs(kdc, start_namenode,
                                                                  tmp_path):
    """swebhdfs://: the login's cookie carries Secure (createAuthCookie on HTTPS) and
    GETDELEGATIONTOKEN hands out a ``SWEBHDFS delegation`` token, as over Hadoop's HTTPS
    port; the token then works alone over HTTPS."""
    from tests.tls_certs import Certificates
    certs = Certificates.make(tmp_path / "tls")
    defines = [a for d in certs.server_defines() for a in ("-D", d)]
    nn = start_namenode(*secure_args(kdc, *defines), env=server_env(kdc), users=USERS)
    alice = kerberos_session(kdc.user("alice"))
    base = f"https://localhost:{nn.https_port}/webhdfs/v1"
    resp = alice.get(f"{base}/?op=GETDELEGATIONTOKEN", verify=str(certs.ca))
    assert resp.status_code == 200, resp.text
    assert resp.headers["Set-Cookie"].endswith("; Path=/; Secure; HttpOnly")
    token = Token.decode_url(resp.json()["Token"]["urlString"])
    assert token.kind == "SWEBHDFS delegation"
    home = requests.get(f"{base}/?op=GETHOMEDIRECTORY", verify=str(certs.ca),
                        params={"delegation": token.encode_url()})
    assert home.json() == {"Path": "/user/alice"}


def test_a_webhdfs_token_works_on_the_new_active_after_a_failover(kdc, etcd_cluster, tmp_path,
                                                                  alice):
    """An HA set in secure mode: a token the active issued over WebHDFS (SPNEGO) is
    answered 403 StandbyException by the standby (HDFS-6475: ``ExceptionHandler.toCause``
    unwraps the InvalidToken ``retrievePassword`` wraps it in), so WebHdfsFileSystem fails
    over; it proves its owner alone on the standby once that took over from the killed
    active (its GET_DELEGATION_TOKEN went through the shared journal)."""
    from tests.namenode.ha.haset import HASet
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"),
                           path=tmp_path / "nn.keytab")
    settings = {"hadoop.security.authentication": "kerberos",
                "dfs.namenode.kerberos.principal": f"nn/_HOST@{kdc.name}",
                "dfs.namenode.keytab.file": str(keytab),
                "dfs.web.authentication.kerberos.principal": f"HTTP/_HOST@{kdc.name}",
                "dfs.web.authentication.kerberos.keytab": str(keytab),
                "hadoop.user.group.static.mapping.overrides": USERS}
    (tmp_path / "ha").mkdir()
    haset = HASet(tmp_path / "ha", etcd_cluster, settings=settings)
    try:
        active = haset.start_all()
        token = get_token(alice, NamenodeAt(haset.ports[active]))
        standby = f"http://localhost:{haset.ports[1 - active]}/webhdfs/v1/?op=GETHOMEDIRECTORY"

        def standby_refusal():          # a tuple: a 403 Response is false
            resp = requests.get(standby, params={"delegation": token})
            return None if "Retriable" in resp.text else (resp,)
        refusal, = wait_for(standby_refusal, 60, "the standby's StandbyException")
        assert refusal.status_code == 403
        exception = refusal.json()["RemoteException"]
        assert exception["javaClassName"] == "org.apache.hadoop.ipc.StandbyException"
        assert "Operation category READ is not supported in state standby" in \
            exception["message"]
        haset.kill(active)
        new = haset.active(excluding=active)
        target = f"http://localhost:{haset.ports[new]}/webhdfs/v1/?op=GETHOMEDIRECTORY"

        def answered():
            resp = requests.get(target, params={"delegation": token})
            return resp if resp.status_code != 403 or "Retriable" not in resp.text else None
        resp = wait_for(answered, 60, "the token on the new active")
        assert resp.status_code == 200 and resp.json() == {"Path": "/user/alice"}
    finally:
        haset.close()


class NamenodeAt:
    """What ``url`` needs of a namenode: its HTTP port."""

    def __init__(self, port: int):
        self.port = port
