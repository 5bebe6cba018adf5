"""Hadoop's ``hadoop.auth`` cookie: who a web caller proved to be, so that it negotiates once
and not on every call (``AuthenticationFilter``, ``AuthToken``, ``Signer``).

The value is ``AuthToken``'s string form signed by ``Signer``::

    u=<user>&p=<principal>&t=<type>[&i=<max inactive ms>]&e=<expiry ms>&s=<signature>

``u`` is the principal's short name (auth_to_local), ``t`` the handler's type (``kerberos``),
``e`` the expiry in milliseconds since the epoch (``hadoop.http.authentication.token.
validity`` seconds after the login) and ``s`` the standard Base64 (padded) of the
HMAC-SHA256 of everything before ``&s=`` under the secret. The secret is the bytes of
``hadoop.http.authentication.signature.secret.file`` (``FileSignerSecretProvider``), or,
without one, random bytes drawn at start (``RandomSignerSecretProvider``): a restart then
voids every cookie and the clients negotiate again.

``AuthenticationFilter.createAuthCookie`` writes it quoted, with ``Path=/`` (the path
``AuthenticationFilterInitializer`` sets), the domain when one is configured, ``Secure`` on
HTTPS and ``HttpOnly``; no ``Expires`` (the cookie is not persistent by default, so it lives
for the client's session). A refused request gets an empty ``hadoop.auth=`` so a client drops
what it held.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import time
from dataclasses import dataclass

from nnlite.client.kerberos import COOKIE, cookie_value

SIGNATURE = "&s="                      # Signer.SIGNATURE
KERBEROS = "kerberos"                  # KerberosAuthenticationHandler.TYPE
ATTRIBUTES = ("u", "p", "t", "e")      # AuthToken.ATTRIBUTES
RANDOM_SECRET_BYTES = 32
VERIFIED_KEPT = 4096                   # cookie headers whose signature was checked, kept


class CookieRefused(Exception):
    """A cookie that proves nothing; the message is AuthenticationFilter's reason."""


@dataclass(frozen=True, slots=True)
class AuthToken:
    """``AuthToken``: the user, the principal it authenticated as, the handler's type and
    when it expires (ms since the epoch; -1: never)."""
    user: str
    principal: str
    type: str = KERBEROS
    expires_ms: int = -1
    max_inactive_ms: int = -1

    def __str__(self) -> str:
        inactive = f"i={self.max_inactive_ms}&" if self.max_inactive_ms != -1 else ""
        return (f"u={self.user}&p={self.principal}&t={self.type}&{inactive}"
                f"e={self.expires_ms}")

    @classmethod
    def parse(cls, text: str) -> AuthToken:
        """``AuthToken.parse``: quotes at both ends dropped, ``s`` ignored."""
        if len(text) >= 2 and text[0] == text[-1] == '"':
            text = text[1:-1]
        fields: dict[str, str] = {}
        for part in (p for p in text.split("&") if p):
            key, sep, value = part.partition("=")
            if not sep:
                raise CookieRefused("Invalid authentication token")
            fields[key] = value
        if not all(key in fields for key in ATTRIBUTES):
            raise CookieRefused("Invalid token string, missing attributes")
        try:
            return cls(fields["u"], fields["p"], fields["t"], int(fields["e"]),
                       int(fields.get("i", "-1")))
        except ValueError as exc:
            raise CookieRefused("Invalid authentication token") from exc

    def expired(self, now_ms: int) -> bool:
        return (self.max_inactive_ms != -1 and now_ms > self.max_inactive_ms) or \
            (self.expires_ms != -1 and now_ms > self.expires_ms)


class Signer:
    """``Signer`` over one secret (the file's, or random per start)."""

    def __init__(self, secret: bytes):
        if not secret:
            raise ValueError("the signature secret is empty")
        self.secret = secret

    @classmethod
    def from_file(cls, path: str) -> Signer:
        """The secret file's bytes as ``FileSignerSecretProvider`` reads them (all of them,
        a trailing newline included); no file named: a random secret."""
        if not path:
            return cls(os.urandom(RANDOM_SECRET_BYTES))
        with open(path, "rb") as f:
            secret = f.read()
        if not secret:
            raise ValueError(f"No secret in signature secret file: {path}")
        return cls(secret)

    def signature(self, text: str) -> str:
        digest = hmac.new(self.secret, text.encode("utf-8"), hashlib.sha256).digest()
        return base64.b64encode(digest).decode("ascii")

    def sign(self, text: str) -> str:
        if not text:
            raise ValueError("NULL or empty string to sign")
        return text + SIGNATURE + self.signature(text)

    def verify_and_extract(self, signed: str) -> str:
        """The signed text without its signature; CookieRefused unless the signature is
        this secret's (compared in constant time)."""
        index = signed.rfind(SIGNATURE)
        if index == -1:
            raise CookieRefused(f"Invalid signed text: {signed[:200]}")
        raw, signature = signed[:index], signed[index + len(SIGNATURE):]
        if not hmac.compare_digest(signature.encode("utf-8", "replace"),
                                   self.signature(raw).encode("ascii")):
            raise CookieRefused("Invalid signature")
        return raw


class CookieJar:
    """Issues and reads the ``hadoop.auth`` cookie of one HTTP server."""

    def __init__(self, signer: Signer, validity_s: int, domain: str = "",
                 clock=time.time):
        self.signer = signer
        self.validity_s = validity_s
        self.domain = domain
        self.clock = clock
        # Cookie headers already verified -> their token: a client sends the same cookie on
        # every call, and its HMAC need not be computed again (only its expiry is checked).
        # Only cookies this server signed get in; the dict is emptied when full.
        self.verified: dict[str, AuthToken] = {}

    def issue(self, user: str, principal: str, secure: bool) -> str:
        """The Set-Cookie value for a caller that just authenticated."""
        expires = int(self.clock() * 1000) + self.validity_s * 1000
        return self.header(self.signer.sign(str(AuthToken(user, principal, KERBEROS, expires))),
                           secure)

    def cleared(self, secure: bool) -> str:
        """The empty cookie a refusal carries."""
        return self.header("", secure)

    def header(self, value: str, secure: bool) -> str:
        """``AuthenticationFilter.createAuthCookie``'s attributes, in its order."""
        parts = [f'{COOKIE}="{value}"' if value else f"{COOKIE}=", "Path=/"]
        if self.domain:
            parts.append(f"Domain={self.domain}")
        if secure:
            parts.append("Secure")
        parts.append("HttpOnly")
        return "; ".join(parts)

    def token(self, cookie_header: str | None) -> AuthToken | None:
        """The AuthToken a request's Cookie header proves (``AuthenticationFilter.getToken``):
        None without a hadoop.auth cookie; CookieRefused for an empty, forged, foreign-type
        or expired one."""
        if cookie_header is None:
            return None
        token = self.verified.get(cookie_header)
        if token is None:
            token = self._verify(cookie_header)
            if token is None:
                return None
            if len(self.verified) >= VERIFIED_KEPT:
                self.verified.clear()
            self.verified[cookie_header] = token
        if token.expired(int(self.clock() * 1000)):
            raise CookieRefused("AuthenticationToken expired")
        return token

    def _verify(self, cookie_header: str) -> AuthToken | None:
        value = cookie_value(cookie_header)
        if value is None:
            return None
        if not value:
            raise CookieRefused("Unauthorized access")
        token = AuthToken.parse(self.signer.verify_and_extract(value))
        if token.type != KERBEROS:
            raise CookieRefused("Invalid AuthenticationToken type")
        return token
