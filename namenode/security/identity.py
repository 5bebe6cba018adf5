"""The caller of a request, as Hadoop's ``UserGroupInformation`` settles it for every
transport: a real user (WebHDFS's ``user.name``, the IPC context's ``realUser``) acting as
another (``doas``, the context's ``effectiveUser``) only when the proxy-user rules allow it
(``ProxyUser.authorize``, as ``Server.authorizeConnection`` and WebHDFS's ``UserProvider``
call it). Each transport reads the names off its own wire and words its own refusal."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from nnlite.namenode.security.proxy_users import ProxyUsers


@dataclass(frozen=True, slots=True)
class Caller:
    """Who makes a request: the effective user and the client's address."""
    user: str
    machine: str


def effective_user(real: str, requested: str | None, proxy_users: ProxyUsers,
                   groups: Callable[[str], Iterable[str]], address: str | None) -> str:
    """The user a request acts as: ``requested`` when it names another user than ``real``
    and the proxy-user rules let ``real`` act as it from ``address`` (else
    ``ImpersonationError``), otherwise ``real``."""
    if not requested or requested == real:
        return real
    proxy_users.authorize(real, requested, groups(requested), address)
    return requested
