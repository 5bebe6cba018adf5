"""The daemons' commands: ``format``, ``namenode`` (with ``--recover``, ``--import-checkpoint``
and ``--bootstrap-standby``), ``secondary``, ``run``, the main job (both daemons, supervised by
``commands/supervisor.py``), ``run-ha``, a local HA set (``commands/haset.py``), and
``run-secure``, a local secure set (``commands/secureset.py``). ``cli.py`` adds them to
``nnlite``.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from nnlite.commands.support import (
    conf_options,
    default_name_dir,
    load_config,
    namenode_address,
)
from nnlite.namenode.config import Config
from nnlite.namenode.recovery.dialog import ANSWERS, Prompter

if TYPE_CHECKING:
    from nnlite.namenode.image.importer import CheckpointImage


def name_dir_option(fn):
    return click.option("--name-dir", "name_dirs", multiple=True, type=click.Path(),
                        help="A name directory (repeat for redundant copies).")(fn)


@click.command("format")
@name_dir_option
@click.option("--force", is_flag=True, help="Erase directories that are already formatted.")
def format_cmd(name_dirs, force) -> None:
    """Create empty name directories."""
    from nnlite.namenode.fsnamesystem import format_dirs
    from nnlite.namenode.storage.namedir import NameDir
    dirs = [NameDir(p) for p in (name_dirs or (default_name_dir(),))]
    namespace_id = format_dirs(dirs, force=force)
    click.echo(f"Formatted {', '.join(str(d.root) for d in dirs)} "
               f"(namespace id {namespace_id})")


def log_to_file(path: str) -> None:
    if path:
        handler = logging.FileHandler(path)
        handler.setFormatter(logging.getLogger().handlers[0].formatter)
        logging.getLogger().addHandler(handler)


def serve_namenode(name_dirs, host, port, config, format_if_missing: bool,
                   rpc_port: int | None = None) -> None:
    from nnlite.namenode.daemon import Namenode
    from nnlite.namenode.fsnamesystem import format_dirs
    from nnlite.namenode.storage.namedir import NameDir
    paths = list(name_dirs or (default_name_dir(),))
    if format_if_missing and not any(NameDir(p).is_formatted() for p in paths):
        format_dirs([NameDir(p) for p in paths])
    log_to_file(config.get("nnlite.log.file"))
    from nnlite.catalog.http import install as install_catalog
    run_event_loop(Namenode(paths, config, host, port, extensions=[install_catalog],
                            rpc_port=rpc_port).run())


def run_event_loop(coroutine) -> None:
    """uvloop when installed (its transports are C; the pure-Python selector loop costs
    ~10-15 us more per request), unless NNLITE_EVENT_LOOP=asyncio asks for the standard one."""
    import asyncio
    if os.environ.get("NNLITE_EVENT_LOOP", "uvloop") == "uvloop":
        try:
            import uvloop
        except ImportError:
            pass                        # not installed: the standard loop below
        else:
            return uvloop.run(coroutine)
    asyncio.run(coroutine)


def startup_options(fn):
    fn = click.option("--bootstrap-standby", "bootstrap_standby_flag", is_flag=True,
                      help="Fill the empty name dirs with "
                      "the image of the HA set's active namenode (as hdfs namenode "
                      "-bootstrapStandby; --conf names the set, dfs.ha.namenode.id this "
                      "namenode), then exit.")(fn)
    fn = click.option("--import-checkpoint", type=click.Path(exists=True, file_okay=False),
                      metavar="DIR", help="First rebuild the (empty) name dirs from the "
                      "secondary's checkpoint in DIR, then serve.")(fn)
    fn = click.option("--force", is_flag=True,
                      help="With --recover: continue past every problem without asking.")(fn)
    return click.option("--recover", is_flag=True, help="Offline recovery of damaged edits: "
                        "ask about each problem, save a new image, exit.")(fn)


def recover_namenode(name_dirs, config, force: bool) -> None:
    from nnlite.namenode.recovery.recover import recover
    prompter = Prompter(
        ask=lambda text: click.prompt(text, type=click.Choice(sorted(ANSWERS),
                                                              case_sensitive=False)),
        say=click.echo, force=force, shared_journal=bool(config.nameservice()))
    outcome = recover(list(name_dirs or (default_name_dir(),)), prompter,
                      max_record=config.int("nnlite.edits.max-record"),
                      shared_journal=prompter.shared_journal)
    click.echo(outcome.summary())


def import_from_checkpoint(name_dirs, checkpoint_dir) -> None:
    from nnlite.namenode.image import importer
    paths = list(name_dirs or (default_name_dir(),))
    got = importer.import_checkpoint(checkpoint_dir, paths)
    click.echo(f"Imported {got.image} (namespace {got.meta.namespace_id}, txid "
               f"{got.meta.last_txid}, {got.meta.inode_count} inodes) into {', '.join(paths)}")


def bootstrap_standby(name_dirs: list[str] | tuple[str, ...],
                      config: Config) -> tuple[str, CheckpointImage]:
    """``namenode --bootstrap-standby``, Hadoop's ``namenode -bootstrapStandby``: the empty
    name dirs of a namenode of an HA set get another namenode's image -- the active's, when
    the set names several others -- over the checkpoint transfer (``GET /checkpoint/image``
    with the set's shared secret, verified as ``dfsadmin fetch-image`` verifies it), imported
    as ``--import-checkpoint`` imports one: the image, an edits log after it, VERSION with its
    namespace id. Started, the namenode is a standby that applies the shared journal from the
    image's txid on. Returns the id of the namenode that gave the image, and the image."""
    from nnlite.client.failover import Nameservice
    from nnlite.namenode.image import importer
    from nnlite.namenode.storage.namedir import NameDir
    from nnlite.secondary.client import TransferClient
    namenodes, me = config.ha_namenodes(), config.get("dfs.ha.namenode.id")
    if not namenodes:
        raise click.UsageError("--bootstrap-standby needs an HA set: --conf with "
                               "dfs.nameservices, dfs.ha.namenodes.<ns> and their addresses")
    if (me not in namenodes or not config.get("nnlite.checkpoint.secret")
            or not config.etcd_endpoints()):
        raise click.UsageError(f"--bootstrap-standby needs dfs.ha.namenode.id, this namenode's "
                               f"id (one of {', '.join(namenodes)}), nnlite.checkpoint.secret, "
                               "the set's shared secret, and nnlite.ha.etcd.endpoints")
    paths = list(name_dirs or (default_name_dir(),))
    for path in paths:
        importer.check_empty(NameDir(path))     # before the download, not only after it
    others = {nn: url for nn, url in config.ha_urls().items() if nn != me}
    client = TransferClient(Nameservice(config.nameservice(), others),
                            config.get("nnlite.checkpoint.secret"))
    client.follow_active()
    staging = Path(paths[0]).absolute().with_name(Path(paths[0]).name + ".bootstrap")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        got = client.download_image(staging / "fsimage")
        importer.seal_fetched(got.path, got.md5, got.last_txid)
        own_record = opens_own_edits(config, got.last_txid)
        image = importer.import_checkpoint(staging, paths, empty_edits=not own_record)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return next(nn for nn, url in others.items() if url == client.url), image


def opens_own_edits(config: Config, image_txid: int) -> bool:
    """Whether a standby bootstrapped from an image at ``image_txid`` opens its edits with a
    record of its own, START_LOG_SEGMENT at ``image_txid + 1``, as an import does. Not when
    the shared journal holds that txid: a standby writes no record of its own, each later one
    is the journal's. When it holds every txid but that one, the record is the one that opened
    the first active's edits, before the journal began after it (a set formatted from one name
    dir): the same record, so yes. When more is missing (the first active's edits held ops
    beyond its image), only the active's own edits have them: refused, as Hadoop's
    -bootstrapStandby refuses an image older than the shared edits."""
    from nnlite.client.etcd.client import Etcd
    from nnlite.namenode.ha.quorum_journal import Layout, committed_txid, read_batches
    from nnlite.namenode.security.tls import etcd_context
    layout = Layout.of(config.get("nnlite.ha.etcd.prefix"), config.nameservice())
    with Etcd(config.etcd_endpoints(), tls=etcd_context(config)) as etcd:
        committed = committed_txid(etcd, layout)
        if committed is None:               # no active yet: as format opens them
            return True
        found = read_batches(etcd, layout, image_txid, committed, limit=1)
    first = found[0].first_txid if found else committed + 1
    if first <= image_txid + 2:
        return first == image_txid + 2
    raise click.ClickException(
        f"the shared journal begins at txid {first}, and the image is at txid {image_txid}: "
        f"txids {image_txid + 1}-{first - 1} are only in the active's own edits. Save the "
        "namespace on the active (nnlite dfsadmin safemode enter, save-namespace, safemode "
        "leave), then bootstrap again")


@click.command("namenode")
@name_dir_option
@click.option("--host", default=None, help="Address to bind (default 127.0.0.1).")
@click.option("--port", type=int, default=None, help="HTTP port (default 9870).")
@click.option("--rpc-port", type=click.IntRange(0, 65535), default=None,
              help="Hadoop IPC port for hdfs:// clients (default from "
                   "dfs.namenode.rpc-address, 8020; 0: a free port).")
@conf_options
@startup_options
def namenode_cmd(name_dirs, host, port, rpc_port, conf, defines, recover, force,
                 import_checkpoint, bootstrap_standby_flag) -> None:
    """Run the namenode in the foreground (WebHDFS on http://HOST:PORT, hdfs:// on the RPC
    port)."""
    config = load_config(conf, defines)
    if (force and not recover) or sum(map(bool, (recover, import_checkpoint,
                                                bootstrap_standby_flag))) > 1:
        raise click.UsageError("--force goes with --recover; --recover, --import-checkpoint "
                               "and --bootstrap-standby exclude each other")
    if recover:
        return recover_namenode(name_dirs, config, force)
    if bootstrap_standby_flag:
        source, image = bootstrap_standby(name_dirs, config)
        meta = image.meta
        return click.echo(f"Bootstrapped {', '.join(name_dirs or (default_name_dir(),))} "
                          f"from {source}'s image (namespace {meta.namespace_id}, txid "
                          f"{meta.last_txid}, {meta.inode_count} inodes): start the namenode "
                          "to follow the shared journal from there")
    if import_checkpoint:
        import_from_checkpoint(name_dirs, import_checkpoint)
    serve_namenode(name_dirs, host, port, config, False, rpc_port)


@click.command("run")
@name_dir_option
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help="The namenode's HTTP port (default from dfs.namenode.http-address, 9870).")
@click.option("--secondary-port", type=click.IntRange(0, 65535), default=None,
              help="The secondary's status port (default from "
                   "dfs.namenode.secondary.http-address, 9868).")
@conf_options
def run_cmd(name_dirs, port, secondary_port, conf, defines) -> None:
    """The main job: format a default name dir if none exists, then run the namenode and its
    secondary (checkpoints beside the name dir) until SIGTERM/SIGINT. The secondary always
    talks to the port the namenode bound."""
    from nnlite.commands import supervisor
    from nnlite.namenode.fsnamesystem import format_dirs
    from nnlite.namenode.listen import check_free
    from nnlite.namenode.storage.namedir import NameDir
    config = load_config(conf, defines)
    port = config.address("dfs.namenode.http-address")[1] if port is None else port
    secondary_port = (config.address("dfs.namenode.secondary.http-address")[1]
                      if secondary_port is None else secondary_port)
    if port == secondary_port != 0:
        raise click.UsageError(f"the namenode and the secondary cannot share port {port}: "
                               "choose --port and --secondary-port apart")
    check_free(config.address("dfs.namenode.http-address")[0], port)     # before formatting
    check_free(config.address("dfs.namenode.secondary.http-address")[0], secondary_port)
    paths = list(name_dirs or (default_name_dir(),))
    if not any(NameDir(p).is_formatted() for p in paths):
        format_dirs([NameDir(p) for p in paths])
    conf_args = (["--conf", conf] if conf else []) + [a for d in defines for a in ("-D", d)]
    sys.exit(supervisor.run(paths, conf_args, port, secondary_port))


@click.command("run-ha")
@click.option("--base-dir", type=click.Path(file_okay=False), default=None,
              help="Where the set lives: its configuration ha.conf, the name dirs, etcd's "
                   "data (default ~/.nnlite/ha).")
@click.option("--port", "ports", type=click.IntRange(0, 65535), multiple=True,
              help="A namenode's HTTP port, once per namenode (default: 9870 and 9871; 0: a "
                   "free one).")
@click.option("--rpc-port", "rpc_ports", type=click.IntRange(0, 65535), multiple=True,
              help="A namenode's hdfs:// (Hadoop IPC) port, once per namenode, in the order "
                   "of --port (default: 8020, 8021, ...; 0: a free one).")
@conf_options
def run_ha_cmd(base_dir, ports, rpc_ports, conf, defines) -> None:
    """A local HA set on loopback to try a failover: three etcd members and the namenodes
    (one per --port, each also serving hdfs:// on its --rpc-port) of nameservice ns1, the
    standby taking the checkpoints. Prints where each
    listens, which namenode is active and commands to try a failover; restarts a process that
    dies (a namenode once the other is active), at most 5 times in 10 minutes each: one
    more exit, or one before it was up, stops the set and exits 1; runs until
    SIGTERM/SIGINT."""
    from nnlite.commands import haset
    from nnlite.namenode.config import DEFAULTS
    ports = ports or haset.DEFAULT_PORTS
    given = [p for p in ports if p]
    if len(ports) < 2 or len(set(given)) < len(given):
        raise click.UsageError("give --port once per namenode, for two at least, each its own")
    if rpc_ports and len(rpc_ports) != len(ports):
        raise click.UsageError("give --rpc-port once per namenode (as many as --port), or not "
                               "at all")
    binary = haset.etcd_binary()        # before anything is written
    config = load_config(conf, defines)
    settings = {k: v for k, v in config.values.items() if DEFAULTS.get(k) != v}
    base = Path(base_dir or haset.default_base_dir())
    sys.exit(haset.run(haset.LocalHASet.plan(base, list(ports), settings,
                                             list(rpc_ports) or None), binary))


@click.command("run-secure")
@click.option("--base-dir", type=click.Path(file_okay=False), default=None,
              help="Where the set lives: its realm (krb5/), secure.conf, the name dir "
                   "(default ~/.nnlite/secure).")
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help="The namenode's HTTP port (default 9880; 0: a free one).")
@click.option("--rpc-port", type=click.IntRange(0, 65535), default=None,
              help="The namenode's hdfs:// port (default 8040; 0: a free one).")
@click.option("--secondary-port", type=click.IntRange(0, 65535), default=None,
              help="The secondary's status port (default 9878; 0: a free one).")
@click.option("--user", "user", default=None,
              help="The user principal to make, with a keytab (default: your login name).")
@conf_options
def run_secure_cmd(base_dir, port, rpc_port, secondary_port, user, conf, defines) -> None:
    """A local secure set on loopback to try secure mode: a Kerberos realm of its own (MIT
    KDC), the principals and keytabs, a namenode and its secondary with
    hadoop.security.authentication=kerberos. Prints the lines to paste (kinit, a WebHDFS
    call, the CLI, a Spark driver with a keytab); runs until SIGTERM/SIGINT."""
    import getpass

    from nnlite.commands import secureset
    from nnlite.namenode.config import DEFAULTS
    config = load_config(conf, defines)
    own = {k: v for k, v in config.values.items() if DEFAULTS.get(k) != v}
    defaults = secureset.DEFAULT_PORTS
    ports = (defaults[0] if port is None else port, defaults[1] if rpc_port is None
             else rpc_port, defaults[2] if secondary_port is None else secondary_port)
    base = Path(base_dir or secureset.default_base_dir())
    sys.exit(secureset.run(secureset.LocalSecureSet.plan(base, user or getpass.getuser(),
                                                         ports), own))


@click.command("secondary")
@click.option("--namenode", "namenode_url", metavar="URL|NS",
              help="The namenode's HTTP address, or a nameservice of --conf: each checkpoint "
                   "is taken from its active namenode (default: the nameservice --conf names, "
                   "else http://<dfs.namenode.http-address>).")
@click.option("--checkpoint-dir", type=click.Path(file_okay=False),
              help="Where checkpoints are kept (laid out as a name directory).")
@conf_options
@click.option("--secret-file", type=click.Path(dir_okay=False),
              help="File holding the transfer secret (e.g. <name-dir>/checkpoint.token).")
@click.option("--checkpoint-now", is_flag=True, help="Checkpoint once, then exit.")
@click.option("--geteditsize", is_flag=True,
              help="Print the namenode's uncheckpointed transactions, then exit.")
@click.option("--port", type=int, default=None,
              help="Status HTTP port (default from dfs.namenode.secondary.http-address).")
def secondary_cmd(namenode_url, checkpoint_dir, conf, defines, secret_file, checkpoint_now,
                  geteditsize, port) -> None:
    """Run the secondary: checkpoint the namenode's edits into its fsimage."""
    from nnlite.secondary import daemon
    config = load_config(conf, defines)
    url = namenode_address(namenode_url, config, config.namenode_url())
    if checkpoint_now and geteditsize:
        raise click.UsageError("--checkpoint-now and --geteditsize exclude each other")
    if not geteditsize and not checkpoint_dir:
        raise click.UsageError("--checkpoint-dir is required")
    secret = daemon.resolve_credentials(secret_file, config)
    if geteditsize:
        click.echo(daemon.edits_size(url, secret, config))
    elif checkpoint_now:
        daemon.lower_priority(config)
        result = daemon.checkpoint_now(url, checkpoint_dir, secret, config)
        click.echo(f"Checkpoint done: image txid {result.last_txid}, {result.ops} ops "
                   f"replayed, {result.image_size} bytes")
    else:
        log_to_file(config.get("nnlite.log.file"))
        daemon.lower_priority(config)
        daemon.serve(url, checkpoint_dir, secret, config, port)
