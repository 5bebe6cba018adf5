"""SPNEGO through MIT Kerberos (namenode/security/spnego.py) against the tests' own KDC: the
acceptor names the client's principal and returns a reply token the initiator verifies;
garbage, a ticket for another service and a missing keytab are refused."""

import pytest

from nnlite.namenode.security.spnego import (
    SpnegoAcceptor,
    SpnegoError,
    SpnegoInitiator,
    SpnegoRefused,
    challenge,
    negotiate_token,
)


@pytest.fixture(scope="module")
def acceptor(kdc):
    http = kdc.service("HTTP")
    return SpnegoAcceptor(http.name, str(http.keytab))


def test_a_ticket_cache_login_is_accepted_with_mutual_authentication(kdc, acceptor):
    alice = kdc.user("alice")
    initiator = SpnegoInitiator(ccache=f"FILE:{alice.ccache}")
    assert initiator.principal == alice.name
    context, token = initiator.token("localhost")
    accepted = acceptor.accept(token)
    assert accepted.principal == alice.name and accepted.reply
    SpnegoInitiator.verify(context, f"Negotiate {accepted.reply}")
    assert context.complete


def test_a_keytab_login_is_accepted(kdc, acceptor):
    bob = kdc.user("bob")
    initiator = SpnegoInitiator(principal=bob.name, keytab=str(bob.keytab))
    assert acceptor.accept(initiator.token("localhost")[1]).principal == bob.name


@pytest.mark.parametrize("token", ["YWJj", "not base64!", ""])
def test_garbage_is_refused(acceptor, token):
    with pytest.raises(SpnegoRefused):
        acceptor.accept(token)


def test_a_ticket_for_another_service_is_refused(kdc, acceptor):
    alice = kdc.user("alice")
    initiator = SpnegoInitiator(ccache=f"FILE:{alice.ccache}")
    _, token = initiator.token("localhost")
    other = kdc.service("HTTP", host="elsewhere")
    with pytest.raises(SpnegoRefused):
        SpnegoAcceptor(other.name, str(other.keytab)).accept(token)


def test_no_credentials_and_no_keytab_are_clear_errors(kdc, tmp_path):
    with pytest.raises(SpnegoError, match="kinit first"):
        SpnegoInitiator(ccache=f"FILE:{tmp_path / 'empty.ccache'}")
    with pytest.raises(SpnegoError, match="cannot accept"):
        SpnegoAcceptor("HTTP/localhost@NNLITE.TEST", str(tmp_path / "missing.keytab"))


def test_headers():
    assert negotiate_token("Negotiate abc=") == "abc="
    assert negotiate_token("negotiate  abc") == "abc"
    assert negotiate_token("Basic abc") is None and negotiate_token(None) is None
    assert challenge() == ("WWW-Authenticate", "Negotiate")
    assert challenge("xyz") == ("WWW-Authenticate", "Negotiate xyz")
