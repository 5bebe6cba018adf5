"""Who may call the endpoints between nnlite's own processes -- the checkpoint transfer
(``http/transfer.py``: status, roll, image and edits downloads, the image upload), the block
copies and reports (``http/replica.py``) -- in either mode.

* Simple mode: the shared secret in ``X-Nnlite-Secret`` (``nnlite.checkpoint.secret``, or the
  token file of the first name dir), compared in constant time: ``SharedSecret``.
* Secure mode: the caller proved a Kerberos principal by SPNEGO (``http/authentication.py``
  put it on the request as ``req.proof``), and that principal is one of the configuration's
  services, as Hadoop's ``ImageServlet.isValidRequestor`` decides: the namenode principal
  (``dfs.namenode.kerberos.principal``) with ``_HOST`` resolved for this namenode's host and
  for every namenode of its HA set (``HAUtil.getConfForOtherNodes``), and the secondary's
  (``dfs.secondary.namenode.kerberos.principal``) resolved for
  ``dfs.namenode.secondary.http-address``'s host: ``ServicePrincipals``. A user's
  principal, a delegation token or no proof at all is refused with ImageServlet's 403
  message; the secret counts for nothing.

The calling side: ``credentials`` gives ``client/peer.py`` the secret, or in secure mode a
``ServiceLogin`` from the service's keytab (``login``: SPNEGO through ``client/kerberos.py``,
a fresh context per request).
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from nnlite.client.kerberos import KerberosError, KerberosLogin
from nnlite.client.peer import SECRET_HEADER, Credentials, ServiceLogin
from nnlite.namenode.config import Config, ConfigError
from nnlite.namenode.security.settings import server_principal

# ImageServlet.validateRequest's refusal (HTTP 403)
NOT_A_SERVICE = "Only Namenode, Secondary Namenode, and administrators may access this servlet"


@dataclass(frozen=True)
class SharedSecret:
    """Simple mode's check: the request carries the set's (or the secondary's) secret."""
    secret: bytes
    refusal: str = "missing or wrong shared secret"

    def admits(self, req) -> bool:
        given = req.headers.get(SECRET_HEADER.lower(), "").encode()
        return bool(given) and hmac.compare_digest(given, self.secret)


@dataclass(frozen=True)
class ServicePrincipals:
    """Secure mode's check: the request proved one of ``principals``."""
    principals: frozenset[str]
    refusal: str = NOT_A_SERVICE

    @classmethod
    def of(cls, config: Config, host: str) -> ServicePrincipals:
        """``isValidRequestor``'s set for a namenode bound to ``host``."""
        nn = config.get("dfs.namenode.kerberos.principal").strip()
        secondary = config.get("dfs.secondary.namenode.kerberos.principal").strip()
        hosts = {host, *(a.rpartition(":")[0] for a in config.ha_namenodes().values())}
        found = {server_principal(nn, h) for h in hosts if nn}
        if secondary:
            found.add(server_principal(
                secondary, config.address("dfs.namenode.secondary.http-address")[0]))
        return cls(frozenset(found))

    def admits(self, req) -> bool:
        proof = getattr(req, "proof", None)
        principal = getattr(proof, "principal", "") if proof is not None else ""
        return bool(principal) and principal in self.principals


Gate = SharedSecret | ServicePrincipals


def gate(config: Config, host: str, secret: str, secure: bool) -> Gate:
    """The check of the mode ``secure`` says."""
    return ServicePrincipals.of(config, host) if secure else SharedSecret(secret.encode())


def login(principal: str, keytab: str) -> ServiceLogin:
    """The SPNEGO credentials of a service (``principal``, ``_HOST`` resolved, with its
    ``keytab``) for ``client/peer.py``: each request gets a fresh token for
    ``HTTP/<canonical host of the peer>`` (``client/kerberos.py``'s login)."""
    kerberos = KerberosLogin(principal, keytab)
    return ServiceLogin(kerberos.principal, lambda host: kerberos.token(host)[1])


def credentials(config: Config, host: str, secret: str, secure: bool,
                principal_key: str = "dfs.namenode.kerberos.principal",
                keytab_key: str = "dfs.namenode.keytab.file") -> Credentials:
    """What this process's peers authenticate with: the shared secret, or in secure mode a
    login from the service keytab the keys name (a namenode's by default; the secondary
    passes its own keys)."""
    if not secure:
        return secret
    pattern, keytab = config.get(principal_key).strip(), config.get(keytab_key).strip()
    if not pattern or not keytab:
        raise ConfigError(f"hadoop.security.authentication is kerberos: {principal_key} and "
                          f"{keytab_key} must be set")
    try:
        return login(server_principal(pattern, host), keytab)
    except KerberosError as exc:
        raise ConfigError(f"{keytab_key}: {exc}") from exc
