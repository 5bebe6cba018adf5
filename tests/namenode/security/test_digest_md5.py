"""DIGEST-MD5's server side: RFC 2831's examples, Hadoop's token names (vectors from
hdfs-native's tests, taken against Hadoop's own server), refusals, and the security
layers both ways with a client."""

from __future__ import annotations

import pytest

from nnlite.namenode.security import digest_md5
from nnlite.namenode.security.digest_md5 import (
    DigestError,
    DigestMD5Client,
    DigestMD5Server,
    parse_directives,
    response_value,
    session_hash,
)
from tests.namenode.security.digest_client import forge

# RFC 2831 section 4: the IMAP and ACAP examples (user chris, password secret)
RFC_EXAMPLES = [
    pytest.param("OA6MG9tEQGm2hh", "OA6MHXh6VqTrRk", "imap/elwood.innosoft.com",
                 "d388dad90d4bbd760a152321f2143af7", "ea40f60335c427b5527b84dbabcdfffd",
                 id="imap"),
    pytest.param("OA9BSXrbuRhWay", "OA9BSuZWMSpW8m", "acap/elwood.innosoft.com",
                 "6084c6db3fede7352c551284490fd0fc", "2f0b3d7c3c2e486600ef710726aa2eae",
                 id="acap"),
]


@pytest.mark.parametrize("nonce,cnonce,uri,response,rspauth", RFC_EXAMPLES)
def test_the_rfc_examples(nonce, cnonce, uri, response, rspauth):
    ha1 = session_hash("chris", "elwood.innosoft.com", "secret", nonce, cnonce)
    assert response_value(ha1, nonce, "00000001", cnonce, "auth", uri, True) == response
    assert response_value(ha1, nonce, "00000001", cnonce, "auth", uri, False) == rspauth


@pytest.mark.parametrize("nonce,cnonce,uri,response,rspauth", RFC_EXAMPLES)
def test_the_server_accepts_the_rfc_example_responses(nonce, cnonce, uri, response, rspauth):
    protocol, _, host = uri.partition("/")
    server = DigestMD5Server(lambda user: {"chris": "secret"}[user], protocol=protocol,
                             server_id=host)
    server.nonce = nonce
    challenge = server.step(b"")
    assert parse_directives(challenge)["realm"] == "elwood.innosoft.com"
    answer = (f'charset=utf-8,username="chris",realm="elwood.innosoft.com",nonce="{nonce}",'
              f'nc=00000001,cnonce="{cnonce}",digest-uri="{uri}",response={response},'
              f'qop=auth').encode()
    assert server.step(answer) == f"rspauth={rspauth}".encode()
    assert server.complete and server.username == "chris" and server.qop == "auth"
    assert not server.security_layer


# A Hadoop delegation token's SASL names (hdfs-native's tests, recorded against Hadoop):
# identifier and password in base64, realm "default", digest-uri "/default"
HADOOP_TOKENS = [
    pytest.param(bytes([0, 26, 104, 100, 102, 115, 47, 108, 111, 99, 97, 108, 104, 111, 115,
                        116, 64, 69, 88, 65, 77, 80, 76, 69, 46, 67, 79, 77, 0, 0, 138, 1, 142,
                        109, 254, 210, 147, 138, 1, 142, 146, 11, 86, 147, 1, 2]),
                 bytes([14, 15, 143, 95, 134, 65, 129, 9, 34, 197, 119, 3, 114, 115, 76, 203,
                        148, 2, 171, 78]),
                 "A+DoU3+eajz9Ei11Ib0S9CUKLyLPh0qFJbwn1/OZ", "UGP4ejVb7M54KO4yqDwCsA==",
                 "6dca7e74e7ea760a91758106fa7c885c", id="token-1"),
    pytest.param(bytes([0, 26, 104, 100, 102, 115, 47, 108, 111, 99, 97, 108, 104, 111, 115,
                        116, 64, 69, 88, 65, 77, 80, 76, 69, 46, 67, 79, 77, 0, 0, 138, 1, 142,
                        110, 11, 155, 153, 138, 1, 142, 146, 24, 31, 153, 1, 2]),
                 bytes([65, 93, 14, 143, 178, 108, 30, 148, 166, 96, 31, 211, 51, 100, 5, 190,
                        193, 17, 230, 5]),
                 "tm3kclm9F0JMECFNJi5xk/NaGgQ75ZOqb9/vCHt5", "kp49R9SjR4de6ynNgMwNwQ==",
                 "260f34cc6e484ede6277cb9c37672d07", id="token-2"),
]


@pytest.mark.parametrize("identifier,password,nonce,cnonce,response", HADOOP_TOKENS)
def test_hadoop_token_names(identifier, password, nonce, cnonce, response):
    user = digest_md5.token_username(identifier)
    assert digest_md5.token_identifier(user) == identifier
    ha1 = session_hash(user, "default", digest_md5.token_password(password), nonce, cnonce)
    assert response_value(ha1, nonce, "00000001", cnonce, "auth", "/default", True) == \
        response


def _server(qops=("auth",)):
    return DigestMD5Server(lambda user: {"tok": "pw"}.get(user) or _unknown(user),
                           protocol="", server_id="default", qops=qops)


class UnknownToken(Exception):
    pass


def _unknown(user):
    raise UnknownToken(f"token ({user}) can't be found in cache")


def test_the_challenge_layout_is_javas():
    server = _server(("auth-conf", "auth-int", "auth"))
    challenge = server.step(b"").decode()
    assert challenge.startswith('realm="default",nonce="')
    assert challenge.endswith(',qop="auth-conf,auth-int,auth",charset=utf-8,cipher="3des",'
                              'algorithm=md5-sess')
    assert "cipher" not in _server().challenge().decode()


@pytest.mark.parametrize("override,message", [
    pytest.param({"response": "0" * 32}, "Mismatched response", id="wrong-password"),
    pytest.param({"nonce": '"other"'}, "Nonce mismatch", id="nonce"),
    pytest.param({"nc": "00000002"}, "Nonce count", id="nonce-count"),
    pytest.param({"digest-uri": '"hdfs/0"'}, "Mismatched URI", id="uri"),
    pytest.param({"realm": '"other"'}, "Invalid realm", id="realm"),
    pytest.param({"qop": "auth-int"}, "unsupported protection", id="qop-not-offered"),
    pytest.param({"authzid": '"hdfs"'}, "not authorized", id="authzid"),
])
def test_forged_responses_are_refused(override, message):
    server = _server()
    client = DigestMD5Client("tok", "pw", "/default")
    with pytest.raises(DigestError, match=message):
        server.step(forge(client.respond(server.step(b"")), **override))
    assert not server.complete


def test_a_missing_directive_and_garbage_are_refused():
    server = _server()
    server.step(b"")
    with pytest.raises(DigestError, match="Missing response"):
        server.step(b'username="tok",nonce="x",cnonce="y",nc=00000001,digest-uri="/default"')
    with pytest.raises(DigestError):
        _server().step(b"not empty")


def test_the_password_lookups_error_passes_through():
    server = _server()
    with pytest.raises(UnknownToken, match="can't be found"):
        server.step(DigestMD5Client("gone", "pw", "/default").respond(server.step(b"")))


def test_a_completed_exchange_takes_no_more_steps():
    server = _server()
    client = DigestMD5Client("tok", "pw", "/default")
    client.verify(server.step(client.respond(server.step(b""))))
    with pytest.raises(DigestError, match="already completed"):
        server.step(b"")
    with pytest.raises(DigestError, match="no security layer"):
        server.wrap(b"x")


@pytest.mark.parametrize("qop", ["auth-int", "auth-conf"])
def test_security_layers_both_ways(qop):
    server = _server((qop, "auth"))
    client = DigestMD5Client("tok", "pw", "/default", (qop,))
    client.verify(server.step(client.respond(server.step(b""))))
    assert server.qop == qop and server.security_layer
    for size in (0, 1, 5, 6, 7, 8, 100, 70000):
        message = bytes(range(256)) * (size // 256) + bytes(range(size % 256))
        sent = client.wrap(message)
        if qop == "auth-conf":
            assert message[:16] not in sent or size < 16
            assert (len(sent) - 6) % 8 == 0
        assert server.unwrap(sent) == message
        assert client.unwrap(server.wrap(message[::-1])) == message[::-1]


@pytest.mark.parametrize("qop", ["auth-int", "auth-conf"])
def test_a_damaged_replayed_or_reordered_message_is_refused(qop):
    server = _server((qop,))
    client = DigestMD5Client("tok", "pw", "/default", (qop,))
    client.verify(server.step(client.respond(server.step(b""))))
    first = client.wrap(b"a call of sixteen bytes")
    damaged = bytearray(first)
    damaged[0] ^= 1
    with pytest.raises(DigestError):
        server.unwrap(bytes(damaged))
    second = client.wrap(b"the next one")
    with pytest.raises(DigestError, match="out of order"):
        server.unwrap(second)


def test_des_keys_have_odd_parity():
    assert digest_md5.des_key(b"\x00" * 7) == b"\x01" * 8
    assert digest_md5.des_key(b"\xff" * 7) == b"\xfe" * 8
    key = digest_md5.des_key(bytes.fromhex("0123456789abcd"))
    assert all(bin(b).count("1") % 2 == 1 for b in key)
    # the 56 key bits, parity bits dropped, are the 7 bytes given
    bits = "".join(f"{b >> 1:07b}" for b in key)
    assert int(bits, 2).to_bytes(7, "big") == bytes.fromhex("0123456789abcd")


def test_directives_parse_quoted_escapes_and_spaces():
    assert parse_directives(b' a="x\\"y", b=tok ,c=""') == {"a": 'x"y', "b": "tok", "c": ""}
    with pytest.raises(DigestError, match="more than once"):
        parse_directives(b"a=1,a=2")


@pytest.mark.parametrize("qop", ["auth", "auth-int", "auth-conf"])
def test_the_client_side_picks_the_strongest_common_qop_and_wraps_both_ways(qop):
    """DigestMD5Client (a datanode mirroring to another: SaslDataTransferClient) against
    the server: the strongest qop both name, rspauth checked, the layers both ways."""
    server = _server(("auth", "auth-int", "auth-conf")[:QOP_RANK[qop] + 1])
    client = digest_md5.DigestMD5Client("tok", "pw", "/default",
                                        ("auth", "auth-int", "auth-conf"))
    client.verify(server.step(client.respond(server.step(b""))))
    assert client.qop == server.qop == qop and client.complete
    assert client.security_layer == (qop != "auth")
    if qop != "auth":
        for message in (b"", b"x", bytes(range(256)) * 300):
            assert server.unwrap(client.wrap(message)) == message
            assert client.unwrap(server.wrap(message[::-1])) == message[::-1]


def test_the_client_side_refuses_no_common_qop_and_a_forged_rspauth():
    client = digest_md5.DigestMD5Client("tok", "pw", "/default", ("auth-conf",))
    with pytest.raises(DigestError, match="No common protection"):
        client.respond(_server(("auth",)).step(b""))
    client = digest_md5.DigestMD5Client("tok", "pw", "/default")
    server = _server(("auth",))
    client.respond(server.step(b""))
    with pytest.raises(DigestError, match="rspauth"):
        client.verify(b"rspauth=" + b"0" * 32)


QOP_RANK = {"auth": 0, "auth-int": 1, "auth-conf": 2}
