"""The hadoop.auth cookie (namenode/security/auth_cookie.py): AuthToken's string form, the
Signer's HMAC-SHA256 in standard Base64, and AuthenticationFilter's refusals."""

import base64
import hashlib
import hmac

import pytest

from nnlite.client.kerberos import cookie_value
from nnlite.namenode.security.auth_cookie import AuthToken, CookieJar, CookieRefused, Signer

NOW_S = 1_700_000_000


def jar(secret=b"secret", validity=60, domain="", now=NOW_S):
    return CookieJar(Signer(secret), validity, domain, clock=lambda: now)


def test_token_string_is_authtokens_and_parses_back():
    token = AuthToken("alice", "alice@NNLITE.TEST", "kerberos", 1234)
    assert str(token) == "u=alice&p=alice@NNLITE.TEST&t=kerberos&e=1234"
    assert AuthToken.parse(f'"{token}&s=abc"') == token
    inactive = AuthToken("a", "a@R", "kerberos", 5, 7)
    assert str(inactive) == "u=a&p=a@R&t=kerberos&i=7&e=5"
    assert AuthToken.parse(str(inactive)) == inactive


def test_the_signature_is_base64_hmac_sha256_of_the_text():
    text = "u=alice&p=alice@NNLITE.TEST&t=kerberos&e=1234"
    expected = base64.b64encode(hmac.new(b"k\n", text.encode(), hashlib.sha256).digest())
    assert Signer(b"k\n").sign(text) == f"{text}&s={expected.decode()}"
    assert Signer(b"k\n").verify_and_extract(Signer(b"k\n").sign(text)) == text


def test_the_secret_file_is_read_whole(tmp_path):
    path = tmp_path / "secret"
    path.write_bytes(b"shared secret\n")
    assert Signer.from_file(str(path)).secret == b"shared secret\n"
    path.write_bytes(b"")
    with pytest.raises(ValueError, match="No secret"):
        Signer.from_file(str(path))
    assert Signer.from_file("").secret != Signer.from_file("").secret     # random per start


def test_issued_cookie_is_quoted_with_filter_attributes_and_reads_back():
    header = jar(domain="example.test").issue("alice", "alice@NNLITE.TEST", secure=True)
    assert header.startswith('hadoop.auth="u=alice&p=alice@NNLITE.TEST&t=kerberos&e=')
    assert header.endswith('"; Path=/; Domain=example.test; Secure; HttpOnly')
    value = cookie_value(header)
    token = jar().token(f"other=1; hadoop.auth={value}")
    assert token == AuthToken("alice", "alice@NNLITE.TEST", "kerberos", (NOW_S + 60) * 1000)
    assert jar().cleared(False) == "hadoop.auth=; Path=/; HttpOnly"


@pytest.mark.parametrize("cookie, reason", [
    ("hadoop.auth=", "Unauthorized access"),
    ('hadoop.auth="u=hdfs&p=hdfs@R&t=kerberos&e=99999999999999"', "Invalid signed text"),
    ("hadoop.auth=u=hdfs&p=hdfs@R&t=kerberos&e=99999999999999&s=AAAA", "Invalid signature"),
])
def test_empty_unsigned_and_forged_cookies_are_refused(cookie, reason):
    with pytest.raises(CookieRefused, match=reason):
        jar().token(cookie)


def test_a_cookie_of_another_secret_type_or_time_is_refused():
    signed = Signer(b"secret").sign("u=a&p=a@R&t=kerberos&e=1000")
    with pytest.raises(CookieRefused, match="expired"):
        jar().token(f'hadoop.auth="{signed}"')
    foreign = Signer(b"secret").sign(f"u=a&p=a@R&t=simple&e={(NOW_S + 9) * 1000}")
    with pytest.raises(CookieRefused, match="Invalid AuthenticationToken type"):
        jar().token(f'hadoop.auth="{foreign}"')
    other = jar(secret=b"other").issue("a", "a@R", False)
    with pytest.raises(CookieRefused, match="Invalid signature"):
        jar().token(f"hadoop.auth={cookie_value(other)}")
    missing = Signer(b"secret").sign("u=a&t=kerberos&e=1")
    with pytest.raises(CookieRefused, match="missing attributes"):
        jar().token(f'hadoop.auth="{missing}"')


def test_no_cookie_is_no_token():
    assert jar().token(None) is None and jar().token("JSESSIONID=1") is None
    assert cookie_value("a=1; hadoop.auth=\"x\"") == "x"


def test_a_verified_cookie_is_kept_but_its_expiry_still_checked():
    now = [NOW_S]
    kept = CookieJar(Signer(b"secret"), 60, clock=lambda: now[0])
    header = "hadoop.auth=" + cookie_value(kept.issue("alice", "alice@R", False))
    assert kept.token(header).user == "alice" and header in kept.verified
    assert kept.token(header).user == "alice"
    now[0] += 61
    with pytest.raises(CookieRefused, match="expired"):
        kept.token(header)
    with pytest.raises(CookieRefused, match="Invalid signature"):
        kept.token(header.replace("u=alice", "u=tester"))
    assert len(kept.verified) == 1                     # a refused cookie is not kept
