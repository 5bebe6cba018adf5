"""SPNEGO over HTTP (RFC 4559), the server's side, through MIT Kerberos (PyPI's ``gssapi``).

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
The client's side is ``client/kerberos.py``.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from nnlite.client.kerberos import NEGOTIATE, KerberosError, gssapi_module

WWW_AUTHENTICATE = "WWW-Authenticate"
AUTHORIZATION = "authorization"


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


def challenge(reply: str | None = None) -> tuple[str, str]:
    """The ``WWW-Authenticate`` header: bare (a challenge) or with a reply token."""
    return (WWW_AUTHENTICATE, f"{NEGOTIATE} {reply}" if reply else NEGOTIATE)


def _gssapi():
    try:
        return gssapi_module()
    except KerberosError as exc:            # the `kerberos` extra is not installed
        raise SpnegoError(str(exc)) from exc


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
