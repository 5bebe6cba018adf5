"""A client's Kerberos login for the web ports (client/kerberos.py), against the tests' KDC:
the ticket cache or a keytab, the Negotiate header for HTTP/<canonical host>, the server's
reply checked, and the hadoop.auth cookie kept per server."""

import base64

import pytest

from nnlite.client.kerberos import (
    KerberosError,
    KerberosLogin,
    cookie_value,
    negotiate_token,
    service_host,
)


def test_the_service_host_is_the_canonical_name():
    assert service_host("127.0.0.1") == "localhost"
    assert service_host("LOCALHOST") == "localhost"


def test_a_ticket_cache_gives_a_negotiate_header_for_http_localhost(kdc):
    import gssapi
    http = kdc.service("HTTP")
    alice = kdc.user("alice")
    login = KerberosLogin(ccache=f"FILE:{alice.ccache}")
    assert login.principal == alice.name
    context, header = login.token("127.0.0.1")
    acceptor = gssapi.SecurityContext(creds=gssapi.Credentials(
        usage="accept", store={"keytab": str(http.keytab)}), usage="accept")
    reply = acceptor.step(base64.b64decode(negotiate_token(header)))
    assert str(acceptor.initiator_name) == alice.name
    KerberosLogin.verify(context, "Negotiate " + base64.b64encode(reply).decode())
    with pytest.raises(KerberosError, match="does not verify"):
        KerberosLogin.verify(login.token("localhost")[0], "Negotiate YWJj")
    KerberosLogin.verify(context, None)                 # no reply: nothing to check


def test_a_keytab_login_needs_its_principal(kdc, tmp_path):
    bob = kdc.user("bob")
    assert KerberosLogin(bob.name, str(bob.keytab)).principal == bob.name
    with pytest.raises(KerberosError, match="--principal"):
        KerberosLogin(keytab=str(bob.keytab))
    with pytest.raises(KerberosError, match="kinit first"):
        KerberosLogin(ccache=f"FILE:{tmp_path / 'none'}")


def test_the_cookie_is_kept_per_server_and_dropped_when_emptied(kdc):
    login = KerberosLogin(ccache=f"FILE:{kdc.user('alice').ccache}")
    login.keep("h:1", 'hadoop.auth="u=a&s=x"; Path=/; HttpOnly')
    login.keep("h:1", "JSESSIONID=1; Path=/")
    assert login.cookie("h:1") == "u=a&s=x" and login.cookie("h:2") is None
    login.keep("h:1", "hadoop.auth=; Path=/; HttpOnly")
    assert login.cookie("h:1") is None


def test_header_parsing():
    assert negotiate_token("Negotiate abc=") == "abc=" and negotiate_token("Negotiate") == ""
    assert negotiate_token("Basic abc") is None and negotiate_token(None) is None
    assert cookie_value('a=1; hadoop.auth="x=1&s=y"') == "x=1&s=y"
    assert cookie_value("a=1") is None and cookie_value("hadoop.auth=") == ""


def test_keytab_logins_one_after_another_each_get_their_own_principal(kdc):
    """Each keytab login has a memory cache of its own: a later login of another principal
    (which may reuse a freed login's address) never meets the earlier one's tickets."""
    import gc
    alice, bob = kdc.user("alice"), kdc.user("bob")
    for _ in range(20):
        for user in (alice, bob):
            assert KerberosLogin(user.name, str(user.keytab)).principal == user.name
            gc.collect()
