"""A client's Kerberos login for the web ports (SPNEGO, RFC 4559), as Hadoop's
``AuthenticatedURL`` with its ``KerberosAuthenticator`` logs in: a GSSAPI context for
``HTTP/<host>`` from the user's ticket cache (after ``kinit``; ``KRB5CCNAME``) or from a keytab
and principal (``UserGroupInformation.loginUserFromKeytab``: a ticket got into memory), its
token sent as ``Authorization: Negotiate <base64>``, the server's reply token checked (mutual
authentication), and the signed ``hadoop.auth`` cookie the server sets kept and sent back, so
that a client negotiates once per server and not on every call.

``<host>`` is the canonical name of the host the URL names, as ``KerberosUtil.
getServicePrincipal`` resolves it: ``localhost`` for 127.0.0.1. MIT Kerberos through PyPI's
``gssapi`` does the cryptography (the ``kerberos`` extra).
"""

from __future__ import annotations

import base64
import binascii
import itertools
import socket
import threading

from nnlite.client.errors import BadArgumentError

NEGOTIATE = "Negotiate"
COOKIE = "hadoop.auth"                 # AuthenticatedURL.AUTH_COOKIE
SPNEGO_OID = "1.3.6.1.5.5.2"


class KerberosError(BadArgumentError):
    """No usable Kerberos credentials, or a server whose reply does not verify."""


def gssapi_module():
    """PyPI's gssapi, or a KerberosError saying how to install it."""
    try:
        import gssapi
    except ImportError as exc:
        raise KerberosError("Kerberos needs PyPI's gssapi: pip install 'nnlite[kerberos]' "
                            "(make kerberos builds it against MIT Kerberos)") from exc
    return gssapi


def negotiate_token(header: str | None) -> str | None:
    """The base64 token of a ``Negotiate <token>`` header (Authorization or
    WWW-Authenticate); None when absent or of another scheme; "" for a bare challenge."""
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != NEGOTIATE.lower():
        return None
    return token.strip()


def cookie_value(header: str | None) -> str | None:
    """The ``hadoop.auth`` value in a Cookie or Set-Cookie header, quotes removed; None when
    absent, "" when emptied."""
    if not header or COOKIE not in header:
        return None
    for part in header.split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name == COOKIE:
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            return value
    return None


def service_host(host: str) -> str:
    """The host component of ``HTTP/<host>`` for a URL's host (its canonical name)."""
    try:
        return socket.getfqdn(host).lower()
    except OSError:
        return host.lower()


_MEMORY_CACHES = itertools.count(1)


class KerberosLogin:
    """The credentials a client acts with: ``ccache`` (default: ``KRB5CCNAME``'s ticket
    cache) or ``keytab`` with ``principal``; ``principal`` alone picks that principal's
    tickets from the cache collection."""

    def __init__(self, principal: str | None = None, keytab: str | None = None,
                 ccache: str | None = None):
        gssapi = gssapi_module()
        if keytab and not principal:
            raise KerberosError("--keytab needs --principal: the principal to log in as")
        store: dict[str, str] = {}
        if keytab:
            # a name no other login of this process has had: MIT's memory caches outlive
            # the object, and an id() reused after one is freed finds another principal's
            # tickets there ("Principal in credential cache does not match desired name")
            store = {"client_keytab": keytab,
                     "ccache": f"MEMORY:nnlite-{next(_MEMORY_CACHES)}"}
        elif ccache:
            store = {"ccache": ccache}
        name = gssapi.Name(principal, gssapi.NameType.kerberos_principal) if principal else None
        try:
            self.creds = gssapi.Credentials(name=name, usage="initiate", store=store or None)
            self.principal = str(self.creds.name)
        except gssapi.exceptions.GSSError as exc:
            where = f"keytab {keytab}" if keytab else "the ticket cache (kinit first)"
            raise KerberosError(f"no Kerberos credentials in {where}: "
                                f"{exc.gen_message()}") from exc
        self.cookies: dict[str, str] = {}      # "host:port" -> hadoop.auth value
        self.lock = threading.Lock()

    def token(self, host: str) -> tuple[object, str]:
        """A new context for ``HTTP/<host>`` and the ``Authorization`` header value."""
        gssapi = gssapi_module()
        target = gssapi.Name(f"HTTP@{service_host(host)}", gssapi.NameType.hostbased_service)
        flags = (gssapi.RequirementFlag.mutual_authentication
                 | gssapi.RequirementFlag.out_of_sequence_detection)
        try:
            context = gssapi.SecurityContext(name=target, creds=self.creds, usage="initiate",
                                             mech=gssapi.OID.from_int_seq(SPNEGO_OID),
                                             flags=flags)
            first = context.step() or b""
        except gssapi.exceptions.GSSError as exc:
            raise KerberosError(f"cannot get a ticket for HTTP/{service_host(host)} as "
                                f"{self.principal}: {exc.gen_message()}") from exc
        return context, f"{NEGOTIATE} {base64.b64encode(first).decode('ascii')}"

    @staticmethod
    def verify(context, header: str | None) -> None:
        """Check the server's reply token, when it sent one (mutual authentication)."""
        token = negotiate_token(header)
        if not token:
            return
        gssapi = gssapi_module()
        try:
            context.step(base64.b64decode(token))
            complete = context.complete
        except (gssapi.exceptions.GSSError, binascii.Error, ValueError) as exc:
            raise KerberosError(f"the server's Negotiate reply does not verify: {exc}") from exc
        if not complete:
            raise KerberosError("the server's Negotiate reply does not complete the login")

    # ------------------------------------------------------------------ the cookie

    def cookie(self, server: str) -> str | None:
        with self.lock:
            return self.cookies.get(server)

    def keep(self, server: str, set_cookie: str | None) -> None:
        """Keep (or drop, when emptied) the hadoop.auth cookie a server set."""
        value = cookie_value(set_cookie)
        if value is None:
            return
        with self.lock:
            if value:
                self.cookies[server] = value
            else:
                self.cookies.pop(server, None)

    def forget(self, server: str) -> None:
        with self.lock:
            self.cookies.pop(server, None)
