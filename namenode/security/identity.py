"""The caller of a request, as Hadoop's ``UserGroupInformation`` settles it for every
transport: a real user (WebHDFS's ``user.name``, the IPC context's ``realUser``) acting as
another (``doas``, the context's ``effectiveUser``) only when the proxy-user rules allow it
(``ProxyUser.authorize``, as ``Server.authorizeConnection`` and WebHDFS's ``UserProvider``
call it). Each transport reads the names off its own wire and words its own refusal.

In secure mode the transport proves a name and this module alone turns it into the caller:
``kerberos_caller`` for a principal that SPNEGO or SASL GSSAPI authenticated (its
``auth_to_local`` short name, then the proxy-user check of a ``doas``), ``token_caller`` for a
delegation token's verified identifier (its owner, and its real user when the token was
issued to a proxy; no ``doas`` on top of a token, as ``Server.processConnectionContext`` and
``JspHelper.getUGI`` refuse it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from nnlite.formats.hadoop.block_token import BlockTokenIdentifier
from nnlite.namenode import errors
from nnlite.namenode.config import ConfigError
from nnlite.namenode.security.auth_to_local import AuthToLocal, AuthToLocalError
from nnlite.namenode.security.proxy_users import ProxyUsers
from nnlite.namenode.security.settings import SecuritySettings
from nnlite.namenode.security.tokens import DelegationTokenIdentifier

Auth = Literal["SIMPLE", "KERBEROS", "TOKEN"]     # UserGroupInformation.AuthenticationMethod
Groups = Callable[[str], Iterable[str]]


class TokenImpersonationError(errors.AccessControlError):
    """A ``doas`` on a connection authenticated by a token (Hadoop refuses any)."""


@dataclass(frozen=True, slots=True)
class Caller:
    """Who makes a request: the effective user (a short name: what permissions check) and
    the client's address; how it authenticated, the real user's short name when a proxy acts,
    and the full names (``getUserName``: a principal in secure mode) that delegation tokens
    record as owner and real user."""
    user: str
    machine: str
    auth: Auth = "SIMPLE"
    real_user: str | None = None
    full_name: str = ""
    real_full_name: str = ""
    # the identifier of the token a TOKEN caller proved (UGI's getTokenIdentifiers): a
    # datanode's IPC port checks a block token's block and mode per call
    token: BlockTokenIdentifier | DelegationTokenIdentifier | None = field(
        default=None, compare=False, repr=False)

    @property
    def name(self) -> str:
        """``UserGroupInformation.getUserName``: the full name of the effective user."""
        return self.full_name or self.user

    @property
    def real_name(self) -> str:
        """The full name of the real user when a proxy acts, else ``""``."""
        return self.real_full_name or (self.real_user or "")

    @property
    def may_handle_tokens(self) -> bool:
        """``FSNamesystem.isAllowedDelegationTokenOp``: only a caller that proved itself with
        Kerberos may get or renew a delegation token (not one holding a token)."""
        return self.auth == "KERBEROS"


def effective_user(real: str, requested: str | None, proxy_users: ProxyUsers,
                   groups: Groups, address: str | None) -> str:
    """The user a request acts as: ``requested`` when it names another user than ``real``
    and the proxy-user rules let ``real`` act as it from ``address`` (else
    ``ImpersonationError``), otherwise ``real``."""
    if not requested or requested == real:
        return real
    proxy_users.authorize(real, requested, groups(requested), address)
    return requested


def kerberos_caller(principal: str, requested: str | None, address: str,
                    rules: AuthToLocal, proxy_users: ProxyUsers, groups: Groups) -> Caller:
    """The caller for an authenticated Kerberos ``principal`` that asks to act as
    ``requested`` (a ``doas``, or the IPC context's effective user; its full principal
    names the principal itself). ``AuthToLocalError`` when the rules map it to no user,
    ``ImpersonationError`` when the proxy-user rules refuse the ``doas``."""
    real = rules.short_name(principal)
    if not requested or requested in (principal, real):
        return Caller(real, address, "KERBEROS", None, principal)
    wanted = rules.short_name(requested)
    user = effective_user(real, wanted, proxy_users, groups, address)
    return Caller(user, address, "KERBEROS", real, requested, principal)


def token_caller(identifier: DelegationTokenIdentifier, requested: str | None, address: str,
                 rules: AuthToLocal) -> Caller:
    """The caller for a verified delegation token: its owner, proxied by its real user when
    it was issued to a proxy. A ``requested`` user other than the owner is refused."""
    owner = rules.short_name(identifier.owner)
    if requested and requested not in (identifier.owner, owner):
        raise TokenImpersonationError(
            f"Authenticated user ({identifier.owner} (auth:TOKEN)) doesn't match what the "
            f"client claims to be ({requested})")
    real = identifier.proxy_real_user
    return Caller(owner, address, "TOKEN", rules.short_name(real) if real else None,
                  identifier.owner, real or "")


def rules_of(settings: SecuritySettings) -> AuthToLocal:
    """``hadoop.security.auth_to_local`` for the namenode principal's realm (the realm the
    KDC's default realm is, in a working set-up)."""
    return AuthToLocal(settings.auth_to_local, settings.namenode_principal.partition("@")[2])


def login_user(settings: SecuritySettings) -> str:
    """The user the namenode logs in as from its keytab: its principal's short name under
    auth_to_local (``getShortUserName``), the superuser in secure mode, as in Hadoop
    (``nn/_HOST@REALM`` is ``nn`` by DEFAULT, ``hdfs`` where a rule says so). A principal
    the rules map to no user is a ``ConfigError``: the namenode could not log in."""
    try:
        return rules_of(settings).short_name(settings.namenode_principal)
    except AuthToLocalError as exc:
        raise ConfigError(f"dfs.namenode.kerberos.principal "
                          f"{settings.namenode_principal}: {exc}") from exc
