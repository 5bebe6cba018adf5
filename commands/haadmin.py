"""The ``haadmin`` group: HDFS's ``hdfs haadmin`` on the namenodes of the nameservice the
configuration names (``--conf``: ``dfs.nameservices``, ``dfs.ha.namenodes.<ns>``,
``dfs.namenode.http-address.<ns>.<nn>``). Each command takes namenode ids (``nn1``), as
HAAdmin's do, and prints what HAAdmin prints:

* ``getServiceState NNID``: ``active`` or ``standby`` (``/admin?op=GETSERVICESTATE``);
* ``checkHealth NNID``: nothing and exit 0 when the namenode is healthy, else one line saying
  why and exit 1 (HAAdmin's ``-checkHealth``, ``HAServiceProtocol.monitorHealth``): a
  standby that cannot apply the shared journal, or that has been behind it for longer than
  ``nnlite.ha.standby.lag.max``;
* ``transitionToActive [--forcemanual] NNID``, ``transitionToStandby [--forcemanual] NNID``:
  nothing on success; under automatic failover (``dfs.ha.automatic-failover.enabled``, the
  default) the namenode refuses unless ``--forcemanual``. HAAdmin asks for a confirmation
  there, since a forced ZKFC-less transition can split the brain; nnlite's transitions still
  go through the etcd election and its fencing, so none is asked;
* ``failover FROM TO``: a graceful failover (``POST /admin?op=FAILOVER`` to TO, which asks the
  active to give way, as ZKFC's ``gracefulFailover``); ``Failover to NameNode at HOST:PORT
  successful`` under automatic failover, ``Failover from FROM to TO successful`` otherwise
  (HAAdmin's two messages).

A separate group rather than ``dfsadmin`` subcommands: HDFS keeps these under ``hdfs haadmin``,
and they address namenodes by id, where ``dfsadmin`` takes ``--namenode``. The spelling
follows ``dfsadmin``'s (HDFS's option names as subcommands: ``dfsadmin allowSnapshot``).
Errors become one line and an exit code in ``support.py``: an unknown id is a usage error (2),
an unreachable namenode 3, a refusal 1.

In secure mode (``hadoop.security.authentication=kerberos`` in the configuration, or
``--principal``/``--keytab``) every command logs in as the other commands do (``log_in``: the
ticket cache after ``kinit``, or the keytab), as HAAdmin runs as the UGI's login user; the
transitions and the failover are then the namenode principal's (its superuser), the state
anyone's who proved a name.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from nnlite.client.webhdfs import WebHdfsClient
from nnlite.commands.dfs import user_option
from nnlite.commands.errors import HealthCheckFailedException
from nnlite.commands.support import (
    conf_options,
    kerberos_options,
    load_config,
    log_in,
    nameservices,
)
from nnlite.namenode.config import Config


@click.group("haadmin")
def haadmin_group() -> None:
    """High availability of the namenodes of the configured nameservice, as `hdfs haadmin`
    (NNID: one of dfs.ha.namenodes.<ns> in --conf)."""


class Namenodes:
    """The configured nameservice's namenodes, by id, as haadmin addresses them."""

    def __init__(self, config: Config, user: str):
        known = nameservices(config)
        if not known:
            raise click.UsageError("no nameservice is configured: give --conf with "
                                   "dfs.nameservices, dfs.ha.namenodes.<ns> and "
                                   "dfs.namenode.http-address.<ns>.<nn>")
        self.name, self.urls = next(iter(known.items()))
        self.user = user
        self.automatic = config.bool("dfs.ha.automatic-failover.enabled")

    def url(self, nnid: str) -> str:
        if nnid not in self.urls:
            raise click.UsageError(f"{nnid} is not a namenode of {self.name} "
                                   f"(dfs.ha.namenodes.{self.name}: {', '.join(self.urls)})")
        return self.urls[nnid]

    def client(self, nnid: str) -> WebHdfsClient:
        return WebHdfsClient(self.url(nnid), self.user)


def ha_options(fn: Callable[..., None]) -> Callable[..., None]:
    """``--conf``/``-D``, ``--user``, ``--principal`` and ``--keytab``; the command gets the
    ``namenodes``, after the Kerberos login in secure mode (then the login says who)."""
    @functools.wraps(fn)
    def wrapper(*args: Any, conf: str | None, defines: tuple[str, ...], user: str,
                principal: str | None, keytab: str | None, **kw: Any) -> None:
        config = load_config(conf, defines)
        user = log_in(config, principal, keytab) or user
        return fn(*args, namenodes=Namenodes(config, user), **kw)
    return kerberos_options(conf_options(user_option(wrapper)))


forcemanual = click.option("--forcemanual", is_flag=True,
                           help="Even under automatic failover (the transition still goes "
                                "through the election).")


@haadmin_group.command("getServiceState")
@click.argument("nnid")
@ha_options
def get_service_state(nnid: str, namenodes: Namenodes) -> None:
    """Print NNID's state: active or standby."""
    with namenodes.client(nnid) as client:
        click.echo(client.service_state()["state"])


@haadmin_group.command("checkHealth")
@click.argument("nnid")
@ha_options
def check_health(nnid: str, namenodes: Namenodes) -> None:
    """Exit 0 if NNID is healthy; else say why and exit 1."""
    with namenodes.client(nnid) as client:
        state = client.service_state()
    if state.get("healthy", True) is False:
        raise HealthCheckFailedException(f"{nnid} is unhealthy: {state.get('health')}")


@haadmin_group.command("transitionToActive")
@click.argument("nnid")
@forcemanual
@ha_options
def transition_to_active(nnid: str, forcemanual: bool, namenodes: Namenodes) -> None:
    """Make NNID active (superuser). Refused under automatic failover without
    --forcemanual, and while another namenode is active (use failover)."""
    with namenodes.client(nnid) as client:
        client.transition_to_active(force=forcemanual)


@haadmin_group.command("transitionToStandby")
@click.argument("nnid")
@forcemanual
@ha_options
def transition_to_standby(nnid: str, forcemanual: bool, namenodes: Namenodes) -> None:
    """Make NNID a standby (superuser); it gives way for three lease TTLs. Refused under
    automatic failover without --forcemanual."""
    with namenodes.client(nnid) as client:
        client.transition_to_standby(force=forcemanual)


@haadmin_group.command("failover")
@click.argument("source", metavar="FROM")
@click.argument("target", metavar="TO")
@ha_options
def failover(source: str, target: str, namenodes: Namenodes) -> None:
    """Make TO the active namenode (superuser): a graceful failover, the active gives way."""
    namenodes.url(source)
    with namenodes.client(target) as client:
        client.failover()
    if namenodes.automatic:
        address = namenodes.url(target).split("://", 1)[-1]
        click.echo(f"Failover to NameNode at {address} successful")
    else:
        click.echo(f"Failover from {source} to {target} successful")
