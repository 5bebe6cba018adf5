"""The commands on a running namenode: the ``dfs`` group (as ``hdfs dfs``, over WebHDFS, with
``hdfs lsSnapshottableDir`` and ``hdfs snapshotDiff`` as ``dfs`` commands) and the
``dfsadmin`` group (``fetch-image`` included), and the options they share
(``remote_options``, ``json_option``), which ``commands/catalog.py`` reuses. Their errors
become one line in ``commands/support.py``, as every command's do.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from nnlite.client.failover import FailoverConnection
from nnlite.client.webhdfs import DEFAULT_URL as DEFAULT_NAMENODE
from nnlite.client.webhdfs import WebHdfsClient
from nnlite.commands.support import (
    GenericOption,
    conf_options,
    default_name_dir,
    kerberos_options,
    load_config,
    log_in,
    namenode_address,
)


def _os_user() -> str:
    import getpass
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""


user_option = click.option("--user", cls=GenericOption, envvar="HADOOP_USER_NAME",
                           default=_os_user,
                           show_default="$HADOOP_USER_NAME, else the OS user",
                           help="Act as this user.")


def namenode_option(text: str, default: str | None = None
                    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option("--namenode", "namenode_url", cls=GenericOption, metavar="URL|NS",
                        envvar="NNLITE_NAMENODE", default=default, help=text)


def given(name: str, value: str | None) -> str | None:
    """``value`` if the user gave it (command line or environment), else None: a default
    gives way to the nameservice the configuration names."""
    source = click.get_current_context().get_parameter_source(name)
    return None if source is ParameterSource.DEFAULT else value


def remote_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--namenode URL|NS``, ``--user NAME``, ``--conf FILE``, ``-D KEY=VALUE``,
    ``--principal`` and ``--keytab`` (generic options: a group above the command takes them
    too; in secure mode the Kerberos login says who, not --user); the command gets a ``client``
    (closed after), which follows the active namenode when ``--namenode`` names a nameservice
    of the configuration."""
    @functools.wraps(fn)
    def wrapper(*args: Any, namenode_url: str | None, user: str, conf: str | None,
                defines: tuple[str, ...], principal: str | None, keytab: str | None,
                **kw: Any) -> Any:
        config = load_config(conf, defines)
        address = namenode_address(given("namenode_url", namenode_url), config,
                                   DEFAULT_NAMENODE)
        user = log_in(config, principal, keytab) or user
        with WebHdfsClient(address, user) as client:
            return fn(*args, client=client, **kw)
    wrapper = kerberos_options(conf_options(user_option(wrapper)))
    return namenode_option(
        "The namenode's HTTP address, or a nameservice of --conf (ns1, webhdfs://ns1: the "
        "client follows its active namenode). Default: $NNLITE_NAMENODE, else the "
        f"nameservice --conf names, else {DEFAULT_NAMENODE}.", DEFAULT_NAMENODE)(wrapper)


def json_option(fn):
    return click.option("--json", "as_json", is_flag=True,
                        help="One JSON object per line: the namenode's own objects.")(fn)


def echo_lines(lines) -> None:
    for line in lines:
        click.echo(line)


def echo_per_path(rows, key: str, as_json: bool, text) -> None:
    """``(path, object)`` rows as they come: with ``--json`` one ``{key: object, "path":
    path}`` line each, else the lines of ``text(path, object)``."""
    from nnlite.client import display
    for path, obj in rows:
        echo_lines([display.with_path(path, {key: obj})] if as_json else text(path, obj))


@click.group("dfs")
def dfs_group() -> None:
    """File-system commands on a running namenode over WebHDFS, as `hdfs dfs` (relative
    paths are under /user/USER)."""


@dfs_group.command("ls")
@click.argument("paths", nargs=-1)
@click.option("-d", "directory", is_flag=True, help="Directories as plain entries.")
@click.option("-R", "recursive", is_flag=True, help="Recurse into subdirectories.")
@click.option("-h", "human", is_flag=True, help="Human-readable sizes (1.5 K).")
@json_option
@remote_options
def dfs_ls(client, paths, directory, recursive, human, as_json) -> None:
    """List PATHs (default: the home directory)."""
    from nnlite.client import display
    from nnlite.client.shell import FsShell
    events = FsShell(client).ls(paths, directory=directory, recursive=recursive)
    echo_lines(display.entries_json(events) if as_json else display.ls_lines(events, human=human))


@dfs_group.command("stat")
@click.argument("args", metavar="[FORMAT] PATH...", nargs=-1, required=True)
@json_option
@remote_options
def dfs_stat(client, args, as_json) -> None:
    """Print each PATH's status in FORMAT (default %y): %n name, %b bytes, %o block size,
    %r replication, %u owner, %g group, %y/%Y modified (UTC/ms), %x/%X accessed, %F type,
    %a octal and %A symbolic permission."""
    from nnlite.client import display
    from nnlite.client.shell import FsShell, split_stat_args
    fmt, paths = split_stat_args(args)
    entries = FsShell(client).stat(paths)
    echo_lines(display.entries_json(entries) if as_json
               else (display.stat_line(fmt, e.path, e.status) for e in entries))


@dfs_group.command("du")
@click.argument("paths", nargs=-1)
@click.option("-s", "summary", is_flag=True, help="One total per PATH, not per child.")
@click.option("-h", "human", is_flag=True, help="Human-readable sizes.")
@click.option("-v", "header", is_flag=True, help="Print a header line.")
@click.option("-x", "exclude_snapshots", is_flag=True,
              help="Leave out what only snapshots keep.")
@json_option
@remote_options
def dfs_du(client, paths, summary, human, header, exclude_snapshots, as_json) -> None:
    """Size and space consumed (all replicas) of each child of PATH, or of PATH with -s."""
    from nnlite.client import display
    from nnlite.client.shell import FsShell
    rows = FsShell(client).du(paths, summary=summary, exclude_snapshots=exclude_snapshots)
    if as_json:
        return echo_lines(display.with_path(path, s) for path, s in rows)
    echo_lines(display.du_lines(list(rows), human=human, header=header))


@dfs_group.command("count")
@click.argument("paths", nargs=-1, required=True)
@click.option("-q", "quota", is_flag=True, help="Also the quotas and what remains of them.")
@click.option("-h", "human", is_flag=True, help="Human-readable sizes.")
@click.option("-v", "header", is_flag=True, help="Print a header line.")
@click.option("-x", "exclude_snapshots", is_flag=True,
              help="Leave out what only snapshots keep.")
@json_option
@remote_options
def dfs_count(client, paths, quota, human, header, exclude_snapshots, as_json) -> None:
    """Directories, files and bytes under each PATH."""
    from nnlite.client import display
    from nnlite.client.shell import FsShell
    rows = FsShell(client).count(paths, exclude_snapshots=exclude_snapshots)
    if as_json:
        return echo_lines(display.with_path(path, s) for path, s in rows)
    if header:
        click.echo(display.count_header(quota))
    echo_lines(display.count_line(path, s, quota=quota, human=human) for path, s in rows)


@dfs_group.command("mkdir")
@click.argument("paths", nargs=-1, required=True)
@click.option("-p", "parents", is_flag=True, help="Create parents; an existing dir is fine.")
@remote_options
def dfs_mkdir(client, paths, parents) -> None:
    """Create directories."""
    from nnlite.client.shell import FsShell
    FsShell(client).mkdir(paths, parents=parents)


@dfs_group.command("rm")
@click.argument("paths", nargs=-1, required=True)
@click.option("-r", "-R", "recursive", is_flag=True, help="Delete directories and contents.")
@click.option("-f", "force", is_flag=True, help="No error for a missing PATH.")
@remote_options
def dfs_rm(client, paths, recursive, force) -> None:
    """Delete PATHs (there is no trash)."""
    from nnlite.client.shell import FsShell
    echo_lines(f"Deleted {path}" for path in FsShell(client).rm(paths, recursive=recursive,
                                                                 force=force))


@dfs_group.command("mv")
@click.argument("sources", metavar="SRC...", nargs=-1, required=True)
@click.argument("dest", metavar="DST")
@remote_options
def dfs_mv(client, sources, dest) -> None:
    """Move SRC to DST, or several SRCs into the directory DST."""
    from nnlite.client.shell import FsShell
    FsShell(client).mv(list(sources), dest)


@dfs_group.command("chmod")
@click.argument("mode")
@click.argument("paths", nargs=-1, required=True)
@click.option("-R", "recursive", is_flag=True, help="The whole subtree.")
@remote_options
def dfs_chmod(client, mode, paths, recursive) -> None:
    """Set permissions: MODE is octal (755) or symbolic (u+x,go-w; after -- if it starts
    with -)."""
    from nnlite.client.shell import FsShell
    FsShell(client).chmod(mode, paths, recursive=recursive)


@dfs_group.command("chown")
@click.argument("owner", metavar="OWNER[:GROUP]")
@click.argument("paths", nargs=-1, required=True)
@click.option("-R", "recursive", is_flag=True, help="The whole subtree.")
@remote_options
def dfs_chown(client, owner, paths, recursive) -> None:
    """Set the owner and/or group (:GROUP alone changes only the group)."""
    from nnlite.client.shell import FsShell
    FsShell(client).chown(owner, paths, recursive=recursive)


@dfs_group.command("setrep")
@click.argument("replication", metavar="N", type=int)
@click.argument("paths", nargs=-1, required=True)
@click.option("-R", "recursive", is_flag=True, hidden=True, help="Accepted; always recursive.")
@remote_options
def dfs_setrep(client, replication, paths, recursive) -> None:
    """Set the replication of each file at or under PATH."""
    from nnlite.client.shell import FsShell
    echo_lines(f"Replication {replication} set: {path}"
               for path in FsShell(client).setrep(replication, paths))


@dfs_group.command("touchz")
@click.argument("paths", nargs=-1, required=True)
@remote_options
def dfs_touchz(client, paths) -> None:
    """Create empty files (an existing empty file gets a new modification time)."""
    from nnlite.client.shell import FsShell
    FsShell(client).touchz(paths)


@dfs_group.command("getfattr")
@click.argument("paths", nargs=-1, required=True)
@click.option("-n", "name", metavar="NAME", help="This extended attribute.")
@click.option("-d", "dump", is_flag=True, help="Every extended attribute.")
@click.option("-e", "encoding", type=click.Choice(["text", "hex", "base64"],
                                                  case_sensitive=False), default="text",
              show_default=True, help="How values are shown.")
@click.option("-R", "recursive", is_flag=True, help="The whole subtree.")
@json_option
@remote_options
def dfs_getfattr(client, paths, name, dump, encoding, recursive, as_json) -> None:
    """Print extended attributes (-n NAME or -d)."""
    from nnlite.client import display
    from nnlite.client.shell import FsShell
    echo_per_path(FsShell(client).getfattr(paths, name=name, dump=dump, encoding=encoding,
                                           recursive=recursive),
                  "XAttrs", as_json, display.xattr_lines)


@dfs_group.command("setfattr")
@click.argument("paths", nargs=-1, required=True)
@click.option("-n", "name", metavar="NAME", help="Set this extended attribute.")
@click.option("-v", "value", metavar="VALUE",
              help='Its value: "text", 0x<hex>, 0s<base64> or plain text (default empty).')
@click.option("-x", "remove", metavar="NAME", help="Remove this extended attribute.")
@remote_options
def dfs_setfattr(client, paths, name, value, remove) -> None:
    """Set (-n NAME [-v VALUE]) or remove (-x NAME) an extended attribute."""
    from nnlite.client.shell import FsShell
    FsShell(client).setfattr(paths, name=name, value=value, remove=remove)


@dfs_group.command("getfacl")
@click.argument("paths", nargs=-1, required=True)
@click.option("-R", "recursive", is_flag=True, help="The whole subtree.")
@json_option
@remote_options
def dfs_getfacl(client, paths, recursive, as_json) -> None:
    """Print the ACL of each PATH: owner, group, the entries (with the permissions the mask
    leaves, as #effective:), a directory's default ACL."""
    from nnlite.client import display
    from nnlite.client.shell import FsShell
    echo_per_path(FsShell(client).getfacl(paths, recursive=recursive), "AclStatus", as_json,
                  display.getfacl_lines)


@dfs_group.command("setfacl")
@click.argument("paths", nargs=-1, required=True)
@click.option("-m", "modify", metavar="ACL_SPEC", help="Add or change these entries.")
@click.option("-x", "remove", metavar="ACL_SPEC",
              help="Remove these entries (named without permissions).")
@click.option("--set", "replace", metavar="ACL_SPEC",
              help="Replace the ACL; it must have the user, group and other entries.")
@click.option("-b", "remove_all", is_flag=True,
              help="Remove all but the base entries (user, group, other).")
@click.option("-k", "remove_default", is_flag=True, help="Remove the default ACL.")
@click.option("-R", "recursive", is_flag=True,
              help="The whole subtree (files take only the access entries).")
@remote_options
def dfs_setfacl(client, paths, modify, remove, replace, remove_all, remove_default,
                recursive) -> None:
    """Change ACLs with one of -m, -x, --set, -b, -k. ACL_SPEC: comma-separated
    [default:]user|group|mask|other:[NAME]:[PERM] entries, e.g.
    user:alice:r-x,default:group:staff:rwx."""
    from nnlite.client.acls import setfacl_change
    from nnlite.client.shell import FsShell
    change = setfacl_change(remove_all=remove_all, remove_default=remove_default,
                            modify=modify, remove=remove, replace=replace)
    FsShell(client).setfacl(change, paths, recursive=recursive)


@dfs_group.command("createSnapshot")
@click.argument("directory", metavar="DIR")
@click.argument("name", required=False)
@remote_options
def dfs_create_snapshot(client, directory, name) -> None:
    """Take a snapshot of the snapshottable directory DIR, named NAME (default: s and the
    time, s20260101-120000.000)."""
    from nnlite.client.shell import FsShell
    click.echo(f"Created snapshot {FsShell(client).create_snapshot(directory, name)}")


@dfs_group.command("deleteSnapshot")
@click.argument("directory", metavar="DIR")
@click.argument("name")
@remote_options
def dfs_delete_snapshot(client, directory, name) -> None:
    """Delete the snapshot NAME of DIR."""
    from nnlite.client.shell import FsShell
    FsShell(client).delete_snapshot(directory, name)


@dfs_group.command("renameSnapshot")
@click.argument("directory", metavar="DIR")
@click.argument("old")
@click.argument("new")
@remote_options
def dfs_rename_snapshot(client, directory, old, new) -> None:
    """Rename the snapshot OLD of DIR to NEW."""
    from nnlite.client.shell import FsShell
    FsShell(client).rename_snapshot(directory, old, new)


@dfs_group.command("lsSnapshottableDir")
@json_option
@remote_options
def dfs_ls_snapshottable_dir(client, as_json) -> None:
    """The snapshottable directories you own (every one for a superuser): mode, owner,
    group, modified, snapshots taken, snapshot quota, path; as `hdfs lsSnapshottableDir`."""
    from nnlite.client import display
    listing = client.snapshottable_dirs()
    echo_lines(map(display.to_json, listing) if as_json
               else display.snapshottable_lines(listing))


@dfs_group.command("snapshotDiff")
@click.argument("directory", metavar="DIR")
@click.argument("older", metavar="FROM")
@click.argument("newer", metavar="TO")
@json_option
@remote_options
def dfs_snapshot_diff(client, directory, older, newer, as_json) -> None:
    """What changed in DIR from snapshot FROM to TO (. is the current tree; .snapshot/NAME
    is NAME): M modified, + created, - deleted, R renamed; as `hdfs snapshotDiff`."""
    from nnlite.client import display
    from nnlite.client.shell import FsShell
    report = FsShell(client).snapshot_diff(directory, older, newer)
    echo_lines([display.to_json(report)] if as_json else display.snapshot_diff_lines(report))


@dfs_group.command("put")
@click.argument("sources", metavar="LOCAL...", nargs=-1, required=True)
@click.argument("dest", metavar="DST")
@click.option("-f", "force", is_flag=True, help="Overwrite an existing file.")
@remote_options
def dfs_put(client, sources, dest, force) -> None:
    """Copy local files or directories (recursively) to DST, streamed from disk."""
    from nnlite.client.shell import FsShell
    FsShell(client).put(list(sources), dest, force=force)


@dfs_group.command("get")
@click.argument("source", metavar="SRC")
@click.argument("dest", metavar="LOCALDST")
@click.option("-f", "force", is_flag=True, help="Overwrite an existing local file.")
@remote_options
def dfs_get(client, source, dest, force) -> None:
    """Copy a file or directory (recursively) to the local LOCALDST."""
    from nnlite.client.shell import FsShell
    FsShell(client).get(source, dest, force=force)


@dfs_group.command("cat")
@click.argument("paths", nargs=-1, required=True)
@remote_options
def dfs_cat(client, paths) -> None:
    """Print the contents of files to standard output."""
    from nnlite.client.shell import FsShell
    out = click.open_file("-", "wb")       # the binary stdout, left open
    for chunk in FsShell(client).cat(paths):
        out.write(chunk)
    out.flush()


@dfs_group.command("appendToFile")
@click.argument("sources", metavar="LOCAL...", nargs=-1, required=True)
@click.argument("dest", metavar="DST")
@remote_options
def dfs_append_to_file(client, sources, dest) -> None:
    """Append local files (- is standard input) to DST, creating it if missing."""
    from nnlite.client.shell import FsShell
    FsShell(client).append_to_file(list(sources), dest,
                                   stdin=click.open_file("-", "rb"))


@click.group("dfsadmin")
def dfsadmin_group() -> None:
    """Administration of a running namenode."""


@dfsadmin_group.command("fetch-image")
@click.argument("out_dir", metavar="DIR", type=click.Path(file_okay=False))
@namenode_option("The namenode's HTTP address, or a nameservice of --conf (the active "
                 "namenode's image is fetched). Default: $NNLITE_NAMENODE, else the "
                 "nameservice --conf names, else http://<dfs.namenode.http-address>.")
@click.option("--secret-file", type=click.Path(dir_okay=False),
              help="File holding the image-transfer secret: the namenode writes it to "
                   "<first name dir>/checkpoint.token. Default: the key "
                   "nnlite.checkpoint.secret, else ~/.nnlite/name/checkpoint.token.")
@conf_options
def fetch_image_cmd(out_dir, namenode_url, secret_file, conf, defines) -> None:
    """Download the namenode's most recent fsimage to DIR/fsimage (+ fsimage.md5), verified.
    As Hadoop's dfsadmin -fetchImage, that is the image of the last checkpoint: edits logged
    since are not in it (dfsadmin save-namespace first for an image of the live namespace)."""
    from nnlite.namenode.image.importer import seal_fetched
    from nnlite.secondary.client import TransferClient
    config = load_config(conf, defines)
    address = namenode_address(namenode_url, config, config.namenode_url())
    secret = transfer_secret(secret_file, config)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    client = TransferClient(address, secret)
    client.follow_active()
    got = client.download_image(Path(out_dir) / "fsimage")
    meta = seal_fetched(got.path, got.md5, got.last_txid)
    click.echo(f"Fetched the last checkpoint's image, txid {meta.last_txid} ({got.size} bytes, "
               f"md5 {got.md5}), to {got.path}; later edits are not in it")


def transfer_secret(secret_file, config) -> str:
    """``--secret-file``, else ``nnlite.checkpoint.secret``, else the token a namenode on the
    default name dir wrote (the one ``make run`` starts)."""
    from nnlite.secondary.daemon import resolve_secret
    default = Path(default_name_dir()) / "checkpoint.token"
    if not secret_file and not config.get("nnlite.checkpoint.secret") and default.is_file():
        secret_file = str(default)
    return resolve_secret(secret_file, config)


@dfsadmin_group.command("allowSnapshot")
@click.argument("directory", metavar="DIR")
@remote_options
def dfsadmin_allow_snapshot(client, directory) -> None:
    """Let snapshots be taken of DIR (superuser)."""
    from nnlite.client.shell import FsShell
    click.echo(f"Allowing snapshot on {FsShell(client).allow_snapshot(directory)} succeeded")


@dfsadmin_group.command("disallowSnapshot")
@click.argument("directory", metavar="DIR")
@remote_options
def dfsadmin_disallow_snapshot(client, directory) -> None:
    """No more snapshots of DIR; it must have none left (superuser)."""
    from nnlite.client.shell import FsShell
    path = FsShell(client).allow_snapshot(directory, allow=False)
    click.echo(f"Disallowing snapshot on {path} succeeded")


def each_namenode(client: WebHdfsClient) -> Iterator[tuple[str | None, WebHdfsClient]]:
    """``(None, client)``; with a nameservice, ``(HOST:PORT, a client of it)`` for each of its
    namenodes instead, in order: HDFS's DFSAdmin runs -safemode and -saveNamespace on every
    namenode of an HA set, naming each."""
    if not isinstance(client.connection, FailoverConnection):
        yield None, client
        return
    for url in client.connection.nameservice.namenodes.values():
        with WebHdfsClient(url, client.user) as one:
            yield one.url.split("://", 1)[-1], one


@dfsadmin_group.command("safemode")
@click.argument("action", metavar="ACTION",
                type=click.Choice(["get", "enter", "leave", "wait"]))
@json_option
@remote_options
def dfsadmin_safemode(client, action, as_json) -> None:
    """Safe mode: ACTION get, enter, leave, or wait (until it is off). Superuser. With a
    nameservice, on each of its namenodes ("Safe mode is OFF in HOST:PORT")."""
    from nnlite.client import display
    for where, one in each_namenode(client):
        on = one.safe_mode(action)
        where_json = {} if where is None else {"namenode": where}
        click.echo(display.to_json({"SafeMode": on, **where_json}) if as_json
                   else display.safe_mode_line(on) + (f" in {where}" if where else ""))


@dfsadmin_group.command("save-namespace")
@json_option
@remote_options
def dfsadmin_save_namespace(client, as_json) -> None:
    """Write a new fsimage of the whole namespace; needs safe mode (superuser). With a
    nameservice, on each of its namenodes."""
    from nnlite.client import display
    for where, one in each_namenode(client):
        txid = one.save_namespace()
        where_json = {} if where is None else {"namenode": where}
        click.echo(display.to_json({"txid": txid, **where_json}) if as_json
                   else f"Save namespace successful (image at txid {txid})"
                   + (f" for {where}" if where else ""))


@dfsadmin_group.command("roll-edits")
@json_option
@remote_options
def dfsadmin_roll_edits(client, as_json) -> None:
    """Close the current edits segment and continue in edits.new (superuser)."""
    from nnlite.client import display
    txid = client.roll_edits()
    click.echo(display.to_json({"txid": txid}) if as_json
               else f"Successfully rolled edit logs (the closed segment ends at txid {txid})")


@dfsadmin_group.command("report")
@json_option
@remote_options
def dfsadmin_report(client, as_json) -> None:
    """Txids, edits size, name dirs and their health, counts (superuser)."""
    from nnlite.client import display
    report = client.report()
    echo_lines([display.to_json(report)] if as_json else display.report_lines(report))
