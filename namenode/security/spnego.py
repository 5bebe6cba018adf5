"""SPNEGO over HTTP (RFC 4559), both sides, through MIT Kerberos (PyPI's ``gssapi``).

The acceptor is ``KerberosAuthenticationHandler.authenticate``'s: a request without
``Authorization: Negotiate <base64>`` is answered 401 with a bare ``WWW-Authenticate:
Negotiate``; with one, a new GSSAPI context is accepted with the web principal's key from the
web keytab (``dfs.web.authentication.kerberos.principal`` and ``.keytab``). An established
context names the client's principal, and its reply token (mutual authentication) goes back
as ``WWW-Authenticate: Negotiate <base64>`` on the answer; a context that needs another leg is
answered 401 with its token, as Hadoop does (each request starts a new context). A token
GSSAPI refuses is ``SpnegoRefused`` (the filter's 403). SPNEGO-wrapped and raw Kerberos
tokens are both accepted (curl and requests-gssapi send the first, Java's
``KerberosAuthenticator`` the second).

The initiator is the client's (``AuthenticatedURL`` with ``KerberosAuthenticator``): the
token for ``HTTP@<host>`` from the caller's ticket cache, or from a keytab and principal
(``UserGroupInformation.loginUserFromKeytab``), and the check of the server's reply token.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

NEGOTIATE = "Negotiate"
WWW_AUTHENTICATE = "WWW-Authenticate"
AUTHORIZATION = "authorization"
SPNEGO_OID = "1.3.6.1.5.5.2"


class SpnegoError(Exception):
    """SPNEGO could not run (no gssapi, an unreadable keytab, no credentials)."""


class SpnegoRefused(SpnegoError):
    """A Negotiate token that proves nothing."""


@dataclass(frozen=True, slots=True)
class Accepted:
    """The outcome of one Negotiate token: ``principal`` once the context is established
    (None: another leg is needed), ``reply`` the token to send back (base64, or None)."""
    principal: str | None
    reply: str | None


def negotiate_token(header: str | None) -> str | None:
    """The base64 token of an ``Authorization: Negotiate <token>`` header; None when the
    header is absent or names another scheme."""
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != NEGOTIATE.lower():
        return None
    return token.strip()


def challenge(reply: str | None = None) -> tuple[str, str]:
    """The ``WWW-Authenticate`` header: bare (a challenge) or with a reply token."""
    return (WWW_AUTHENTICATE, f"{NEGOTIATE} {reply}" if reply else NEGOTIATE)


def _gssapi():
    try:
        import gssapi
    except ImportError as exc:              # the `kerberos` extra is not installed
        raise SpnegoError("Kerberos needs PyPI's gssapi (pip install 'nnlite[kerberos]', "
                          "or make kerberos)") from exc
    return gssapi


class SpnegoAcceptor:
    """Accepts Negotiate tokens for ``principal`` with the keys of ``keytab``."""

    def __init__(self, principal: str, keytab: str):
        gssapi = _gssapi()
        self.principal = principal
        self.keytab = keytab
        try:
            name = gssapi.Name(principal, gssapi.NameType.kerberos_principal)
            self.creds = gssapi.Credentials(name=name, usage="accept",
                                            store={"keytab": keytab})
        except gssapi.exceptions.GSSError as exc:
            raise SpnegoError(f"cannot accept SPNEGO as {principal} with keytab {keytab}: "
                              f"{exc.gen_message()}") from exc

    def accept(self, token_b64: str) -> Accepted:
        """One leg of a new context for the client's base64 token."""
        gssapi = _gssapi()
        try:
            token = base64.b64decode(token_b64, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise SpnegoRefused("the Negotiate token is not base64") from exc
        if not token:
            raise SpnegoRefused("the Negotiate token is empty")
        try:
            context = gssapi.SecurityContext(creds=self.creds, usage="accept")
            reply = context.step(token)
            principal = str(context.initiator_name) if context.complete else None
        except gssapi.exceptions.GSSError as exc:
            raise SpnegoRefused(f"GSSException: {exc.gen_message()}") from exc
        return Accepted(principal, base64.b64encode(reply).decode("ascii") if reply else None)


class SpnegoInitiator:
    """A client's credentials: its ticket cache (``ccache``, default: ``KRB5CCNAME``'s) or a
    keytab with the principal to log in as (a ticket is got from the KDC into memory)."""

    def __init__(self, principal: str | None = None, keytab: str | None = None,
                 ccache: str | None = None):
        gssapi = _gssapi()
        store: dict[str, str] = {}
        if keytab:
            store["client_keytab"] = keytab
            store["ccache"] = "MEMORY:nnlite-" + str(id(self))
        elif ccache:
            store["ccache"] = ccache
        name = gssapi.Name(principal, gssapi.NameType.kerberos_principal) if principal else None
        try:
            self.creds = gssapi.Credentials(name=name, usage="initiate", store=store or None)
            self.principal = str(self.creds.name)
        except gssapi.exceptions.GSSError as exc:
            where = f"keytab {keytab}" if keytab else "the ticket cache (kinit first)"
            raise SpnegoError(f"no Kerberos credentials in {where}: "
                              f"{exc.gen_message()}") from exc

    def token(self, host: str) -> tuple[object, str]:
        """A new context for ``HTTP@host`` and its first token (base64) for an
        ``Authorization: Negotiate`` header."""
        gssapi = _gssapi()
        target = gssapi.Name(f"HTTP@{host}", gssapi.NameType.hostbased_service)
        try:
            context = gssapi.SecurityContext(name=target, creds=self.creds, usage="initiate",
                                             mech=gssapi.OID.from_int_seq(SPNEGO_OID),
                                             flags=gssapi.RequirementFlag.mutual_authentication
                                             | gssapi.RequirementFlag.out_of_sequence_detection)
            first = context.step()
        except gssapi.exceptions.GSSError as exc:
            raise SpnegoError(f"cannot get a ticket for HTTP/{host}: "
                              f"{exc.gen_message()}") from exc
        return context, base64.b64encode(first or b"").decode("ascii")

    @staticmethod
    def verify(context, header: str | None) -> None:
        """Check the server's reply token, when it sent one (mutual authentication)."""
        token = negotiate_token(header)
        if not token:
            return
        gssapi = _gssapi()
        try:
            context.step(base64.b64decode(token))
        except (gssapi.exceptions.GSSError, binascii.Error, ValueError) as exc:
            raise SpnegoError(f"the server's Negotiate reply does not verify: {exc}") from exc
