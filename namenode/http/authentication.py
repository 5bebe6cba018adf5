"""Who an HTTP request is, in secure mode: proved once, before any handler runs, as Hadoop's
``AuthenticationFilter`` with its ``KerberosAuthenticationHandler`` guards the NameNode's web
server, HDFS's ``AuthFilter`` lets a WebHDFS ``delegation=`` through to be checked, and
``JspHelper.getUGI`` turns the proof into the caller. Simple mode never comes here.

Every path but ``/isActive`` (an internal servlet, for load balancers and the standbys'
pulse) needs one of, in this order:

1. ``delegation=<token>`` on ``/webhdfs/v1`` or ``/data/v1`` (``AuthFilter`` skips the filter
   for it): the token is decoded and verified by the namesystem's secret manager
   (``getTokenUGI``); a token that does not verify is 403 ``SecurityException`` "Failed to
   obtain user group information: org.apache.hadoop.security.token.SecretManager$InvalidToken:
   <why>", the message ``WebHdfsFileSystem.validateResponse`` splits to re-raise the
   ``InvalidToken`` (and fetch a new token).
2. A ``hadoop.auth`` cookie this server signed (``security/auth_cookie.py``) and not expired.
   A forged, foreign or expired one counts for nothing; its reason is the 401's.
3. ``Authorization: Negotiate <token>``: SPNEGO (``security/spnego.py``) with the web
   principal's key. Success sets a new ``hadoop.auth`` cookie and returns the reply token in
   ``WWW-Authenticate``; a token GSSAPI refuses is 403.

With none, the answer is 401 with ``WWW-Authenticate: Negotiate``, an emptied
``hadoop.auth`` cookie and Jetty's error page for "Authentication required".

The caller (``caller``) is then JspHelper's: for a token, its owner (proxied by its real user
when issued to a proxy), with ``user.name`` and ``doas``, if sent, required to name that same
user; for a Kerberos principal, its ``auth_to_local`` short name, ``user.name`` (if sent)
required to be that name, and a ``doas`` allowed only by ``hadoop.proxyuser.<that name>.*``.
A mismatch is 403 ``SecurityException`` "Failed to obtain user group information:
java.io.IOException: Usernames not matched: name=<sent> != expected=<proved>": ``user.name``
never changes who a request is.
"""

from __future__ import annotations

import asyncio
import html
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from nnlite.client import java_classes as java
from nnlite.client.kerberos import negotiate_token
from nnlite.namenode import errors
from nnlite.namenode.config import ConfigError
from nnlite.namenode.http.wire import Request, Response
from nnlite.namenode.security.auth_cookie import CookieJar, CookieRefused, Signer
from nnlite.namenode.security.auth_to_local import AuthToLocal, AuthToLocalError
from nnlite.namenode.security.identity import Caller, kerberos_caller, token_caller
from nnlite.namenode.security.proxy_users import ProxyUsers
from nnlite.namenode.security.settings import SecuritySettings
from nnlite.namenode.security.spnego import (
    AUTHORIZATION,
    SpnegoAcceptor,
    SpnegoError,
    SpnegoRefused,
    challenge,
)
from nnlite.namenode.security.tokens import HDFS_DELEGATION_KIND, DelegationTokenIdentifier, Token

log = logging.getLogger(__name__)

OPEN_PATHS = ("/isActive",)                       # HttpServer2.addInternalServlet, no auth
TOKEN_PREFIXES = ("/webhdfs/v1", "/data/v1")      # AuthFilter: a delegation= skips the filter
REQUIRED = "Authentication required"              # AuthenticationFilter's reason
# SecurityUtil.FAILED_TO_GET_UGI_MSG_HEADER
UGI_FAILED = "Failed to obtain user group information:"

KEPT = 4096                                       # decoded tokens, callers kept
Verify = Callable[[Token], DelegationTokenIdentifier]
Groups = Callable[[str], Iterable[str]]


class UgiError(errors.AccessControlError):
    """``UserProvider``'s SecurityException: the request's names do not fit its proof."""
    JAVA_CLASS = java.SECURITY


@dataclass(frozen=True, slots=True)
class Proof:
    """What a request proved: a Kerberos ``principal`` (SPNEGO or the cookie), or a verified
    delegation ``token`` and its URL string (for the data step's redirect)."""
    principal: str = ""
    token: DelegationTokenIdentifier | None = None
    token_string: str = ""
    refused: str = ""            # why the delegation token did not verify


class HttpAuthentication:
    """The filter and ``getUGI`` for one namenode's HTTP service."""

    def __init__(self, settings: SecuritySettings, verify: Verify, proxy_users: ProxyUsers,
                 groups: Groups, rules: AuthToLocal | None = None,
                 acceptor: SpnegoAcceptor | None = None, cookies: CookieJar | None = None):
        self.verify = verify
        self.proxy_users = proxy_users
        self.groups = groups
        self.rules = rules or AuthToLocal(settings.auth_to_local,
                                          settings.web_principal.partition("@")[2])
        try:
            self.acceptor = acceptor or SpnegoAcceptor(settings.web_principal,
                                                       settings.web_keytab)
            self.cookies = cookies or CookieJar(Signer.from_file(settings.cookie_secret_file),
                                                settings.cookie_validity_s,
                                                settings.cookie_domain)
        except SpnegoError as exc:
            raise ConfigError(f"dfs.web.authentication.kerberos.keytab: {exc}") from exc
        except (OSError, ValueError) as exc:
            raise ConfigError(f"hadoop.http.authentication.signature.secret.file: "
                              f"{exc}") from exc
        # What one client sends on every call, worked out once (each emptied when full): a
        # token string decoded (it is still verified on every call: it may be cancelled or
        # expire), and the caller of a proof with the names a request adds to it.
        self.decoded: dict[str, Token] = {}
        self.callers: dict[tuple, Caller] = {}

    # ------------------------------------------------------------------ the filter

    def authenticate(self, req: Request) -> tuple[Proof | None, list[tuple[str, str]]] | Response:
        """``(proof, headers for the answer)``; ``(None, [])`` on an open path; or the
        refusal to send instead of any answer."""
        if req.path in OPEN_PATHS:
            return None, []
        secure = req.scheme == "https"
        token_string = req.param("delegation")
        if token_string and req.path.startswith(TOKEN_PREFIXES):
            return self._by_token(token_string), []
        reason = REQUIRED
        try:
            token = self.cookies.token(req.headers.get("cookie"))
            if token is not None:
                return Proof(token.principal), []
        except CookieRefused as exc:
            log.warning("AuthenticationToken ignored: %s", exc)
            reason = str(exc)
        negotiate = negotiate_token(req.headers.get(AUTHORIZATION))
        if negotiate is None:
            return self.refusal(req, 401, reason, [challenge()])
        try:
            accepted = self.acceptor.accept(negotiate)
            if accepted.principal is None:           # another leg: the client's turn
                return self.refusal(req, 401, REQUIRED, [challenge(accepted.reply)])
            user = self.rules.short_name(accepted.principal)
        except (SpnegoRefused, AuthToLocalError) as exc:
            log.warning("Authentication exception: %s", exc)
            return self.refusal(req, 403, str(exc), [])
        headers = [("Set-Cookie", self.cookies.issue(user, accepted.principal, secure))]
        if accepted.reply:
            headers.append(challenge(accepted.reply))
        return Proof(accepted.principal), headers

    def _by_token(self, token_string: str) -> Proof:
        """``getTokenUGI``: decode, verify; refusals become UgiError at ``caller``."""
        try:
            hdfs = self.decoded.get(token_string)
            if hdfs is None:
                token = Token.decode_url(token_string)   # its kind is HDFS's there, whatever
                hdfs = token.with_service(token.service, HDFS_DELEGATION_KIND)   # it says
                if len(self.decoded) >= KEPT:
                    self.decoded.clear()
                self.decoded[token_string] = hdfs
            return Proof(token=self.verify(hdfs), token_string=token_string)
        except errors.InvalidTokenError as exc:
            return Proof(refused=f"{UGI_FAILED} {java.INVALID_TOKEN}: {exc}")

    def refusal(self, req: Request, status: int, reason: str,
                headers: list[tuple[str, str]]) -> Response:
        """``AuthenticationFilter``'s refusal: the emptied cookie and Jetty's error page."""
        headers = [*headers, ("Set-Cookie", self.cookies.cleared(req.scheme == "https"))]
        return Response(status, error_page(status, reason, req.path),
                        "text/html;charset=iso-8859-1", headers=headers,
                        reason=_phrase(reason))

    # ------------------------------------------------------------------ JspHelper.getUGI

    def caller(self, req: Request, proof: Proof) -> Caller:
        """The caller a proved request acts as (module docstring); UgiError or the
        proxy-user refusal (ImpersonationError) otherwise."""
        address = req.peer[0] if req.peer else ""
        named, doas = req.param("user.name"), req.param("doas")
        if proof.refused:
            raise UgiError(proof.refused)
        key = (proof.principal, proof.token, named, doas, address)
        caller = self.callers.get(key)
        if caller is None:
            caller = self._caller(proof, named, doas, address)
            if len(self.callers) >= KEPT:
                self.callers.clear()
            self.callers[key] = caller
        return caller

    def _caller(self, proof: Proof, named: str | None, doas: str | None,
                address: str) -> Caller:
        if proof.token is not None:
            owner = self._short(proof.token.owner)
            self._check_username(owner, named)
            self._check_username(owner, doas)
            return token_caller(proof.token, None, address, self.rules)
        self._check_username(self._short(proof.principal), named)
        return kerberos_caller(proof.principal, doas or None, address, self.rules,
                               self.proxy_users, self.groups)

    def _short(self, name: str) -> str:
        try:
            return self.rules.short_name(name)
        except AuthToLocalError as exc:
            raise UgiError(f"{UGI_FAILED} java.io.IOException: {exc}") from exc

    def _check_username(self, expected: str, name: str | None) -> None:
        """``JspHelper.checkUsername``: an optional name that must map to ``expected``."""
        if not name:
            return
        short = self._short(name)
        if short != expected:
            raise UgiError(f"{UGI_FAILED} java.io.IOException: Usernames not matched: "
                           f"name={short} != expected={expected}")


def error_page(status: int, reason: str, path: str) -> bytes:
    """Jetty's error page, as ``sendError(status, reason)`` writes it."""
    reason, path = html.escape(reason[:300]), html.escape(path[:300])
    return (f'<html>\n<head>\n<meta http-equiv="Content-Type" content="text/html;'
            f'charset=ISO-8859-1"/>\n<title>Error {status} {reason}</title>\n</head>\n'
            f"<body><h2>HTTP ERROR {status} {reason}</h2>\n<table>\n"
            f"<tr><th>URI:</th><td>{path}</td></tr>\n"
            f"<tr><th>STATUS:</th><td>{status}</td></tr>\n"
            f"<tr><th>MESSAGE:</th><td>{reason}</td></tr>\n"
            f"</table>\n\n</body>\n</html>\n").encode("latin-1", "replace")


def _phrase(reason: str) -> str:
    """A reason phrase that fits a status line: printable latin-1, one line, short."""
    text = "".join(c if " " <= c <= "~" else "?" for c in reason[:120])
    return text or REQUIRED


def with_headers(result: Any, headers: list[tuple[str, str]]) -> Any:
    """``result`` (a Response, a deferred answer with ``then``, or a coroutine) with
    ``headers`` added to the Response it ends in."""
    if not headers:
        return result
    if isinstance(result, Response):      # a copy: some answers are shared constants
        return Response(result.status, result.body, result.content_type,
                        (*result.headers, *headers), result.file, result.pieces, result.reason)
    if hasattr(result, "then"):
        return _Headed(result, headers)
    return _headed(result, headers)


class _Headed:
    __slots__ = ("inner", "headers")

    def __init__(self, inner: Any, headers: list[tuple[str, str]]) -> None:
        self.inner = inner
        self.headers = headers

    def then(self, callback: Callable[[Any, Any, Any], None], arg: Any) -> None:
        def released(response: Any, error: Any, waiter: Any) -> None:
            callback(with_headers(response, self.headers) if isinstance(response, Response)
                     else response, error, waiter)
        self.inner.then(released, arg)


async def _headed(coroutine: Any, headers: list[tuple[str, str]]) -> Any:
    response = await coroutine
    while not isinstance(response, Response) and asyncio.iscoroutine(response):
        response = await response
    return with_headers(response, headers) if isinstance(response, Response) else response

