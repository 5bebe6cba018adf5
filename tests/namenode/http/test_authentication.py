"""The HTTP door in secure mode (namenode/http/authentication.py), on a real namenode process
with the tests' KDC: every endpoint but /isActive refuses a caller without proof (401 and
``WWW-Authenticate: Negotiate``), curl's SPNEGO and requests-kerberos log in, the signed
``hadoop.auth`` cookie then stands in for the ticket, ``user.name`` and ``doas`` change
nothing the proof and the proxy-user rules do not allow, and the permission checks hold for
principals mapped by auth_to_local."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.namenode.http.secure import kerberos_session, secure_args, server_env

requests = pytest.importorskip("requests")

ENDPOINTS = ["/webhdfs/v1/?op=LISTSTATUS", "/webhdfs/v1/?op=GETHOMEDIRECTORY",
             "/data/v1/f?op=OPEN", "/jmx", "/metrics", "/metrics.json", "/",
             "/admin?op=REPORT", "/catalog/v1/?op=LS", "/checkpoint/txid"]


@pytest.fixture(scope="module")
def nn(kdc, start_module_namenode):
    return start_module_namenode(
        *secure_args(kdc, "-D", "hadoop.proxyuser.carol.users=alice",
                     "-D", "hadoop.proxyuser.carol.hosts=127.0.0.1"),
        env=server_env(kdc), users="tester=supergroup;alice=staff;carol=staff")


def url(nn, target: str) -> str:
    return f"http://localhost:{nn.port}{target}"


@pytest.fixture
def alice(kdc):
    return kerberos_session(kdc.user("alice"))


@pytest.mark.parametrize("target", ENDPOINTS)
def test_every_endpoint_refuses_a_caller_without_proof(nn, target):
    for method in ("GET", "PUT"):
        resp = requests.request(method, url(nn, target), allow_redirects=False)
        assert resp.status_code == 401, (method, target, resp.text[:200])
        assert resp.reason == "Authentication required"        # Hadoop's client's message
        assert resp.headers["WWW-Authenticate"] == "Negotiate"
        assert resp.headers["Set-Cookie"] == "hadoop.auth=; Path=/; HttpOnly"
        assert "Authentication required" in resp.text


def test_is_active_answers_anyone(nn):
    assert requests.get(url(nn, "/isActive")).text == "I am Active!"


def test_user_name_alone_is_no_proof(nn):
    resp = requests.put(url(nn, "/webhdfs/v1/x?op=MKDIRS&user.name=tester"))
    assert resp.status_code == 401


def test_curl_negotiates_and_the_cookie_then_stands_for_the_ticket(kdc, nn, tmp_path):
    if shutil.which("curl") is None:
        pytest.skip("no curl")
    jar = tmp_path / "cookies"
    env = kdc.env_for(kdc.user("alice"))
    out = subprocess.run(["curl", "-sS", "--negotiate", "-u", ":", "-c", str(jar),
                          url(nn, "/webhdfs/v1/?op=GETHOMEDIRECTORY")],
                         env=env, capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(out.stdout) == {"Path": "/user/alice"}
    cookie = next(line for line in jar.read_text().splitlines() if "hadoop.auth" in line)
    assert '"u=alice&p=alice@NNLITE.TEST&t=kerberos&e=' in cookie
    # the cookie alone, from a process with no ticket at all
    out = subprocess.run(["curl", "-sS", "-b", str(jar),
                          url(nn, "/webhdfs/v1/?op=GETHOMEDIRECTORY")],
                         env=kdc.env_for(None), capture_output=True, text=True, timeout=60,
                         check=True)
    assert json.loads(out.stdout) == {"Path": "/user/alice"}


def test_spnego_answers_with_the_reply_token_and_a_signed_cookie(nn, alice):
    resp = alice.get(url(nn, "/webhdfs/v1/?op=GETHOMEDIRECTORY"))
    assert resp.status_code == 200 and resp.json() == {"Path": "/user/alice"}
    assert resp.headers["WWW-Authenticate"].startswith("Negotiate ")
    assert resp.headers["Set-Cookie"].endswith("; Path=/; HttpOnly")
    cookie = resp.cookies["hadoop.auth"]
    plain = requests.get(url(nn, "/webhdfs/v1/?op=GETHOMEDIRECTORY"),
                         cookies={"hadoop.auth": cookie})
    assert plain.json() == {"Path": "/user/alice"}
    assert "Set-Cookie" not in plain.headers           # a cookie login issues none


def test_a_forged_cookie_is_refused_with_its_reason(nn, alice):
    cookie = alice.get(url(nn, "/jmx")).cookies["hadoop.auth"]
    forged = cookie.replace("u=alice", "u=tester").replace("alice@", "tester@")
    resp = requests.get(url(nn, "/jmx"), cookies={"hadoop.auth": forged})
    assert resp.status_code == 401 and "Invalid signature" in resp.text


def test_a_garbage_negotiate_token_is_forbidden(nn):
    resp = requests.get(url(nn, "/jmx"), headers={"Authorization": "Negotiate YWJjZA=="})
    assert resp.status_code == 403


def test_user_name_of_another_user_changes_nothing(nn, alice):
    resp = alice.put(url(nn, "/webhdfs/v1/tmp/x?op=MKDIRS&user.name=tester"))
    assert resp.status_code == 403
    remote = resp.json()["RemoteException"]
    assert remote["javaClassName"] == "java.lang.SecurityException"
    assert remote["message"] == ("Failed to obtain user group information: "
                                 "java.io.IOException: Usernames not matched: name=tester "
                                 "!= expected=alice")
    ok = alice.get(url(nn, "/webhdfs/v1/?op=GETHOMEDIRECTORY&user.name=alice"))
    assert ok.json() == {"Path": "/user/alice"}


def test_doas_only_as_the_proxy_user_rules_allow(kdc, nn, alice):
    resp = alice.get(url(nn, "/webhdfs/v1/?op=GETHOMEDIRECTORY&doas=carol"))
    assert resp.status_code == 403
    assert "User: alice is not allowed to impersonate carol" in resp.json()[
        "RemoteException"]["message"]
    carol = kerberos_session(kdc.user("carol"))
    resp = carol.get(url(nn, "/webhdfs/v1/?op=GETHOMEDIRECTORY&doas=alice"))
    assert resp.json() == {"Path": "/user/alice"}
    resp = carol.get(url(nn, "/webhdfs/v1/?op=GETHOMEDIRECTORY&doas=tester"))
    assert resp.status_code == 403


def test_permissions_hold_for_principals_mapped_by_auth_to_local(kdc, nn, alice):
    tester = kerberos_session(kdc.user("tester"))
    made = tester.put(url(nn, "/webhdfs/v1/locked?op=MKDIRS&permission=755"))
    assert made.json() == {"boolean": True}
    status = tester.get(url(nn, "/webhdfs/v1/locked?op=GETFILESTATUS")).json()
    assert status["FileStatus"]["owner"] == "tester"
    resp = alice.put(url(nn, "/webhdfs/v1/locked/mine?op=MKDIRS"))
    assert resp.status_code == 403
    assert resp.json()["RemoteException"]["exception"] == "AccessControlException"
    assert "user=alice, access=WRITE" in resp.json()["RemoteException"]["message"]
    assert tester.put(url(nn, "/webhdfs/v1/locked?op=SETOWNER&owner=alice")).status_code == 200
    assert alice.put(url(nn, "/webhdfs/v1/locked/mine?op=MKDIRS")).json() == {"boolean": True}


def test_admin_asks_who_the_caller_proved_to_be(kdc, nn, alice):
    resp = alice.get(url(nn, "/admin?op=REPORT&user.name=alice"))
    assert resp.status_code == 403 and "Superuser privilege" in resp.text
    tester = kerberos_session(kdc.user("tester"))
    assert "Report" in tester.get(url(nn, "/admin?op=REPORT")).json()


def test_a_proxy_users_write_goes_through_a_token_of_the_proxied_user(kdc, nn):
    """carol may act as alice: CREATE with doas=alice redirects with a token whose owner is
    alice and real user carol, and the data step writes as alice."""
    from urllib.parse import parse_qs, urlsplit

    from nnlite.namenode.security.tokens import DelegationTokenIdentifier, Token
    tester = kerberos_session(kdc.user("tester"))
    assert tester.put(url(nn, "/webhdfs/v1/proxied?op=MKDIRS")).ok
    assert tester.put(url(nn, "/webhdfs/v1/proxied?op=SETOWNER&owner=alice")).ok
    carol = kerberos_session(kdc.user("carol"))
    resp = carol.put(url(nn, "/webhdfs/v1/proxied/f?op=CREATE&doas=alice"),
                     allow_redirects=False)
    assert resp.status_code == 307, resp.text
    query = parse_qs(urlsplit(resp.headers["Location"]).query)
    assert "doas" not in query and "user.name" not in query
    ident = DelegationTokenIdentifier.decode(
        Token.decode_url(query["delegation"][0]).identifier)
    assert (ident.owner, ident.real_user) == ("alice", "carol@NNLITE.TEST")
    assert requests.put(resp.headers["Location"], data=b"by carol").status_code == 201
    status = carol.get(url(nn, "/webhdfs/v1/proxied/f?op=GETFILESTATUS&doas=alice")).json()
    assert status["FileStatus"]["owner"] == "alice"


def test_a_keytab_without_the_web_principal_or_a_bad_secret_is_a_config_error(kdc, tmp_path):
    """Checked when the namenode starts (the filter's init), naming the key to fix."""
    from nnlite.namenode.config import ConfigError
    from nnlite.namenode.http.authentication import HttpAuthentication
    from nnlite.namenode.security.proxy_users import ProxyUsers
    from nnlite.namenode.security.settings import SecuritySettings
    http = kdc.service("HTTP")
    settings = SecuritySettings(enabled=True, web_principal=http.name,
                                web_keytab=str(kdc.service("nn").keytab))
    with pytest.raises(ConfigError, match="dfs.web.authentication.kerberos.keytab"):
        HttpAuthentication(settings, None, ProxyUsers({}), lambda name: ())
    (tmp_path / "empty").write_bytes(b"")
    settings = SecuritySettings(enabled=True, web_principal=http.name,
                                web_keytab=str(http.keytab),
                                cookie_secret_file=str(tmp_path / "empty"))
    with pytest.raises(ConfigError, match="signature.secret.file: No secret"):
        HttpAuthentication(settings, None, ProxyUsers({}), lambda name: ())
