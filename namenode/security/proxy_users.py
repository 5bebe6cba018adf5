"""Who may act as whom: Hadoop's proxy-user rules for ``doas``.

As ``org.apache.hadoop.security.authorize.DefaultImpersonationProvider`` decides: the real
user R may act as user U only when the configuration has, for R,

* ``hadoop.proxyuser.R.users`` naming U, or ``hadoop.proxyuser.R.groups`` naming one of U's
  groups (``*`` for anyone) -- else "User: R is not allowed to impersonate U";
* ``hadoop.proxyuser.R.hosts`` including the address the request came from (``*``, IP
  addresses, CIDR ranges or host names, as ``MachineList``) -- else "Unauthorized connection
  for super-user: R from IP A".

Being the superuser grants nothing here, as in Hadoop. WebHDFS wraps the refusal in a
SecurityException (403), as its UserProvider does.
"""

from __future__ import annotations

import ipaddress
import re
import socket

from nnlite.client import java_classes as java
from nnlite.namenode import errors

KEY = re.compile(r"hadoop\.proxyuser\.([^.]+)\.(hosts|groups|users)$")


class ImpersonationError(errors.AccessControlError):
    """A doas that the caller may not use. Hadoop's UserProvider wraps the
    AuthorizationException in a SecurityException (403)."""
    JAVA_CLASS = java.SECURITY


class ProxyUsers:
    """The ``hadoop.proxyuser.*`` settings, parsed once."""

    def __init__(self, settings: dict[str, str]):
        self.rules: dict[str, dict[str, str]] = {}
        for key, value in settings.items():
            match = KEY.match(key)
            if match:
                self.rules.setdefault(match.group(1), {})[match.group(2)] = value

    def authorize(self, real: str, user: str, groups, address: str | None) -> None:
        """Raise ImpersonationError unless ``real`` may act as ``user`` (whose groups are
        ``groups``) from ``address``."""
        rule = self.rules.get(real, {})
        if "users" not in rule and "groups" not in rule or not (
                _listed(rule.get("users", ""), [user]) or
                _listed(rule.get("groups", ""), groups)):
            raise _refused(f"User: {real} is not allowed to impersonate {user}")
        if address is None or not _host_allowed(rule.get("hosts", ""), address):
            raise _refused(f"Unauthorized connection for super-user: {real} from IP "
                           f"{address}")


def _refused(reason: str) -> ImpersonationError:
    return ImpersonationError("Failed to obtain user group information: org.apache.hadoop."
                              f"security.authorize.AuthorizationException: {reason}")


def _entries(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _listed(value: str, names) -> bool:
    entries = _entries(value)
    return "*" in entries or any(name in entries for name in names)


def _host_allowed(value: str, address: str) -> bool:
    """``MachineList.includes``: ``*``, an IP address, a CIDR range or a host name."""
    entries = _entries(value)
    if "*" in entries:
        return True
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    for entry in entries:
        try:
            if "/" in entry:
                if ip in ipaddress.ip_network(entry, strict=False):
                    return True
                continue
            if ip == ipaddress.ip_address(entry):
                return True
        except ValueError:          # a host name
            try:
                if address in {info[4][0] for info in socket.getaddrinfo(entry, None)}:
                    return True
            except OSError:
                continue
    return False
