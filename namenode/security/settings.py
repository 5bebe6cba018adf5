"""Secure mode's settings, read once from the configuration (Hadoop's keys, namenode/config.py)
and handed to every transport: ``SecuritySettings.from_config``.

``enabled`` is ``hadoop.security.authentication = kerberos`` (``UserGroupInformation.
isSecurityEnabled``). Principals keep Hadoop's ``_HOST`` pattern in the configuration and are
resolved here as ``SecurityUtil.getServerPrincipal`` does: ``_HOST`` becomes the lower-case
canonical name of the host the service binds (``localhost`` for 127.0.0.1), so a client that
connects to an address asks for the same principal. In secure mode the superuser is the
namenode principal's short name (the user the namenode logs in as from its keytab, as in
Hadoop), besides ``dfs.permissions.superusergroup``.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

from nnlite.namenode.config import Config, ConfigError

HOST_PATTERN = "_HOST"
QOPS = ("authentication", "integrity", "privacy")          # SaslRpcServer.QualityOfProtection
HTTP_POLICIES = ("HTTP_ONLY", "HTTPS_ONLY", "HTTP_AND_HTTPS")   # HttpConfig.Policy


def canonical_host(host: str) -> str:
    """The host name ``_HOST`` stands for on ``host`` (an address or a name)."""
    if host in ("", "0.0.0.0", "::"):
        host = socket.gethostname()
    try:
        name = socket.getfqdn(host)
    except OSError:
        name = host
    return name.lower()


def server_principal(pattern: str, host: str) -> str:
    """``pattern`` with ``_HOST`` in its host component resolved for ``host``
    (``SecurityUtil.getServerPrincipal``)."""
    parts = pattern.split("/")
    if len(parts) == 2 and parts[1].split("@")[0] == HOST_PATTERN:
        realm = parts[1].partition("@")[2]
        resolved = f"{parts[0]}/{canonical_host(host)}"
        return f"{resolved}@{realm}" if realm else resolved
    return pattern


def short_principal_name(principal: str) -> str:
    """The first component of ``principal`` (``nn/host@REALM`` -> ``nn``)."""
    return principal.split("@")[0].split("/")[0]


@dataclass(frozen=True)
class SecuritySettings:
    enabled: bool = False
    namenode_principal: str = ""      # resolved: nn/localhost@REALM
    namenode_keytab: str = ""
    web_principal: str = ""           # resolved: HTTP/localhost@REALM
    web_keytab: str = ""
    auth_to_local: str = "DEFAULT"
    rpc_protection: tuple[str, ...] = ("authentication",)
    http_policy: str = "HTTP_ONLY"
    data_transfer_protection: tuple[str, ...] = ()
    block_tokens: bool = False
    block_key_update_interval_ms: int = 600 * 60_000
    block_token_lifetime_ms: int = 600 * 60_000
    delegation_key_update_interval_ms: int = 86_400_000
    delegation_token_renew_interval_ms: int = 86_400_000
    delegation_token_max_lifetime_ms: int = 604_800_000
    cookie_validity_s: int = 36_000
    cookie_secret_file: str = ""
    cookie_domain: str = ""

    @classmethod
    def from_config(cls, config: Config, host: str = "127.0.0.1") -> SecuritySettings:
        """The settings for a namenode that binds ``host``; ``ConfigError`` names the first key
        secure mode needs and lacks."""
        enabled = config.security_enabled()
        rpc = _qops(config, "hadoop.rpc.protection", allow_empty=False)
        data = _qops(config, "dfs.data.transfer.protection", allow_empty=True)
        policy = config.get("dfs.http.policy").strip().upper()
        if policy not in HTTP_POLICIES:
            raise ConfigError(f"dfs.http.policy must be one of {', '.join(HTTP_POLICIES)}, "
                              f"not {config.get('dfs.http.policy')!r}")
        nn = config.get("dfs.namenode.kerberos.principal").strip()
        web = config.get("dfs.web.authentication.kerberos.principal").strip()
        nn_keytab = config.get("dfs.namenode.keytab.file").strip()
        web_keytab = config.get("dfs.web.authentication.kerberos.keytab").strip() or nn_keytab
        if enabled:
            for key, value in (("dfs.namenode.kerberos.principal", nn),
                               ("dfs.namenode.keytab.file", nn_keytab),
                               ("dfs.web.authentication.kerberos.principal", web)):
                if not value:
                    raise ConfigError(f"hadoop.security.authentication is kerberos: {key} "
                                      f"must be set")
        return cls(
            enabled=enabled,
            namenode_principal=server_principal(nn, host) if nn else "",
            namenode_keytab=nn_keytab,
            web_principal=server_principal(web, host) if web else "",
            web_keytab=web_keytab,
            auth_to_local=config.get("hadoop.security.auth_to_local"),
            rpc_protection=rpc,
            http_policy=policy,
            data_transfer_protection=data,
            block_tokens=config.bool("dfs.block.access.token.enable") or (enabled and bool(data)),
            block_key_update_interval_ms=config.int("dfs.block.access.key.update.interval")
            * 60_000,
            block_token_lifetime_ms=config.int("dfs.block.access.token.lifetime") * 60_000,
            delegation_key_update_interval_ms=config.int(
                "dfs.namenode.delegation.key.update-interval"),
            delegation_token_renew_interval_ms=config.int(
                "dfs.namenode.delegation.token.renew-interval"),
            delegation_token_max_lifetime_ms=config.int(
                "dfs.namenode.delegation.token.max-lifetime"),
            cookie_validity_s=config.int("hadoop.http.authentication.token.validity"),
            cookie_secret_file=config.get("hadoop.http.authentication.signature.secret.file"),
            cookie_domain=config.get("hadoop.http.authentication.cookie.domain"),
        )

    @property
    def superuser(self) -> str | None:
        """In secure mode, the namenode principal's short name; None in simple mode."""
        return short_principal_name(self.namenode_principal) if self.enabled else None

    @property
    def http_enabled(self) -> bool:
        return self.http_policy in ("HTTP_ONLY", "HTTP_AND_HTTPS")

    @property
    def https_enabled(self) -> bool:
        return self.http_policy in ("HTTPS_ONLY", "HTTP_AND_HTTPS")


def _qops(config: Config, key: str, allow_empty: bool) -> tuple[str, ...]:
    """A comma-separated list of SASL qualities of protection, as Hadoop parses them."""
    values = tuple(v.strip().lower() for v in config.get(key).split(",") if v.strip())
    if not values and not allow_empty:
        raise ConfigError(f"{key} must name one of {', '.join(QOPS)}")
    for value in values:
        if value not in QOPS:
            raise ConfigError(f"{key} must be a list of {', '.join(QOPS)}, not {value!r}")
    return values
