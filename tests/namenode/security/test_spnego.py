"""SPNEGO through MIT Kerberos (namenode/security/spnego.py) against the tests' own KDC: the
acceptor names the client's principal and returns a reply token the initiator verifies;
garbage, a ticket for another service and a missing keytab are refused."""

import pytest

from nnlite.client.kerberos import KerberosLogin, negotiate_token
from nnlite.namenode.security.spnego import (
    SpnegoAcceptor,
    SpnegoError,
    SpnegoRefused,
    challenge,
)


@pytest.fixture(scope="module")
def acceptor(kdc):
    http = kdc.service("HTTP")
    return SpnegoAcceptor(http.name, str(http.keytab))


def test_a_ticket_cache_login_is_accepted_with_mutual_authentication(kdc, acceptor):
    alice = kdc.user("alice")
    initiator = KerberosLogin(ccache=f"FILE:{alice.ccache}")
    assert initiator.principal == alice.name
    context, header = initiator.token("127.0.0.1")        # HTTP/localhost, as Hadoop asks
    accepted = acceptor.accept(negotiate_token(header))
    assert accepted.principal == alice.name and accepted.reply
    KerberosLogin.verify(context, f"Negotiate {accepted.reply}")
    assert context.complete


def test_a_keytab_login_is_accepted(kdc, acceptor):
    bob = kdc.user("bob")
    initiator = KerberosLogin(principal=bob.name, keytab=str(bob.keytab))
    header = initiator.token("localhost")[1]
    assert acceptor.accept(negotiate_token(header)).principal == bob.name


@pytest.mark.parametrize("token", ["YWJj", "not base64!", ""])
def test_garbage_is_refused(acceptor, token):
    with pytest.raises(SpnegoRefused):
        acceptor.accept(token)


def test_a_ticket_for_another_service_is_refused(kdc, acceptor):
    alice = kdc.user("alice")
    initiator = KerberosLogin(ccache=f"FILE:{alice.ccache}")
    token = negotiate_token(initiator.token("localhost")[1])
    other = kdc.service("HTTP", host="elsewhere")
    with pytest.raises(SpnegoRefused):
        SpnegoAcceptor(other.name, str(other.keytab)).accept(token)


def test_no_keytab_is_a_clear_error(tmp_path):
    with pytest.raises(SpnegoError, match="cannot accept"):
        SpnegoAcceptor("HTTP/localhost@NNLITE.TEST", str(tmp_path / "missing.keytab"))


def test_challenge_headers():
    assert challenge() == ("WWW-Authenticate", "Negotiate")
    assert challenge("xyz") == ("WWW-Authenticate", "Negotiate xyz")
