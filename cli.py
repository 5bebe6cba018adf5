"""``nnlite``: a thin click layer over the packages. Errors become one line and an exit code.

Exit codes: 0 success, 1 the operation failed (typed error), 2 usage error (click, or an
argument the client or the namenode refused), 3 storage or name-dir problem, or the namenode
unreachable, 4 corrupt file.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
from pathlib import Path

import click

from client import errors as client_errors
from client.webhdfs import DEFAULT_URL as DEFAULT_NAMENODE
from formats.errors import FormatError
from namenode.errors import NameDirError, NamenodeError, StorageError

DEFAULT_NAME_DIR = str(Path.home() / ".nnlite" / "name")
EXIT_FAILED, EXIT_USAGE, EXIT_STORAGE, EXIT_CORRUPT = 1, 2, 3, 4
# Arguments refused before or by the namenode: usage errors, as click's own are.
CLIENT_USAGE_ERRORS = (client_errors.BadArgumentError, client_errors.IllegalArgumentError,
                       client_errors.InvalidPathError)

log = logging.getLogger("nnlite")


def exit_code(exc: BaseException) -> int:
    if isinstance(exc, FormatError):
        return EXIT_CORRUPT
    if isinstance(exc, (NameDirError, StorageError, client_errors.NamenodeUnreachableError)):
        return EXIT_STORAGE
    if isinstance(exc, (click.UsageError, *CLIENT_USAGE_ERRORS)):
        return EXIT_USAGE
    return EXIT_FAILED


class NnliteError(click.ClickException):
    def __init__(self, exc: BaseException):
        super().__init__(str(exc))
        self.exit_code = exit_code(exc)
        self.kind = type(exc).__name__

    def format_message(self) -> str:
        return f"{self.kind}: {self.message}"


def typed_errors(fn):
    """Turn the packages' typed errors into one clear line and a stable exit code."""
    @functools.wraps(fn)
    def wrapper(*args, **kw):
        try:
            return fn(*args, **kw)
        except (FormatError, NamenodeError) as exc:
            raise NnliteError(exc) from exc
    return wrapper


def name_dir_option(fn):
    return click.option("--name-dir", "name_dirs", multiple=True, type=click.Path(),
                        help="A name directory (repeat for redundant copies).")(fn)


def setup_logging(verbose: bool = False) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Log debug messages.")
def main(verbose: bool) -> None:
    """nnlite: an HDFS-style metadata store (namespace, edits log, fsimage, WebHDFS)."""
    setup_logging(verbose)


@main.command("format")
@name_dir_option
@click.option("--force", is_flag=True, help="Erase directories that are already formatted.")
@typed_errors
def format_cmd(name_dirs, force) -> None:
    """Create empty name directories."""
    from namenode.fsnamesystem import format_dirs
    from namenode.storage import NameDir
    dirs = [NameDir(p) for p in (name_dirs or (DEFAULT_NAME_DIR,))]
    namespace_id = format_dirs(dirs, force=force)
    click.echo(f"Formatted {', '.join(str(d.root) for d in dirs)} "
               f"(namespace id {namespace_id})")


def conf_options(fn):
    fn = click.option("-D", "defines", multiple=True, metavar="KEY=VALUE",
                      help="Override a configuration key.")(fn)
    return click.option("--conf", type=click.Path(dir_okay=False),
                        help="Configuration file (key = value lines).")(fn)


def load_config(conf, defines):
    from namenode.config import Config, ConfigError
    try:
        return Config.load(conf, defines)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc


def log_to_file(path: str) -> None:
    if path:
        handler = logging.FileHandler(path)
        handler.setFormatter(logging.getLogger().handlers[0].formatter)
        logging.getLogger().addHandler(handler)


def serve_namenode(name_dirs, host, port, config, format_if_missing: bool) -> None:
    import asyncio
    from namenode.daemon import Namenode
    from namenode.fsnamesystem import format_dirs
    from namenode.storage import NameDir
    paths = list(name_dirs or (DEFAULT_NAME_DIR,))
    if format_if_missing and not any(NameDir(p).is_formatted() for p in paths):
        format_dirs([NameDir(p) for p in paths])
    log_to_file(config.get("nnlite.log.file"))
    from catalog.http import install as install_catalog
    run_event_loop(Namenode(paths, config, host, port, extensions=[install_catalog]).run())


def run_event_loop(coroutine) -> None:
    """uvloop when installed (its transports are C; the pure-Python selector loop costs
    ~10-15 us more per request), unless NNLITE_EVENT_LOOP=asyncio asks for the standard one."""
    import asyncio
    if os.environ.get("NNLITE_EVENT_LOOP", "uvloop") == "uvloop":
        try:
            import uvloop
        except ImportError:
            uvloop = None
        if uvloop is not None:
            return uvloop.run(coroutine)
    asyncio.run(coroutine)


def startup_options(fn):
    fn = click.option("--import-checkpoint", type=click.Path(exists=True, file_okay=False),
                      metavar="DIR", help="First rebuild the (empty) name dirs from the "
                      "secondary's checkpoint in DIR, then serve.")(fn)
    fn = click.option("--force", is_flag=True,
                      help="With --recover: continue past every problem without asking.")(fn)
    return click.option("--recover", is_flag=True, help="Offline recovery of damaged edits: "
                        "ask about each problem, save a new image, exit.")(fn)


def recover_namenode(name_dirs, config, force: bool) -> None:
    from namenode import recovery
    prompter = recovery.Prompter(
        ask=lambda text: click.prompt(text, type=click.Choice(sorted(recovery.ANSWERS),
                                                              case_sensitive=False)),
        say=click.echo, force=force)
    outcome = recovery.recover(list(name_dirs or (DEFAULT_NAME_DIR,)), prompter,
                               max_record=config.int("nnlite.edits.max-record"))
    click.echo(outcome.summary())


def import_from_checkpoint(name_dirs, checkpoint_dir) -> None:
    from namenode import importer
    paths = list(name_dirs or (DEFAULT_NAME_DIR,))
    got = importer.import_checkpoint(checkpoint_dir, paths)
    click.echo(f"Imported {got.image} (namespace {got.meta.namespace_id}, txid "
               f"{got.meta.last_txid}, {got.meta.inode_count} inodes) into {', '.join(paths)}")


@main.command("namenode")
@name_dir_option
@click.option("--host", default=None, help="Address to bind (default 127.0.0.1).")
@click.option("--port", type=int, default=None, help="HTTP port (default 9870).")
@conf_options
@startup_options
@typed_errors
def namenode_cmd(name_dirs, host, port, conf, defines, recover, force,
                 import_checkpoint) -> None:
    """Run the namenode in the foreground (WebHDFS on http://HOST:PORT)."""
    config = load_config(conf, defines)
    if (force and not recover) or (recover and import_checkpoint):
        raise click.UsageError("--force goes with --recover; --recover and "
                               "--import-checkpoint exclude each other")
    if recover:
        return recover_namenode(name_dirs, config, force)
    if import_checkpoint:
        import_from_checkpoint(name_dirs, import_checkpoint)
    serve_namenode(name_dirs, host, port, config, False)


@main.command("run")
@name_dir_option
@conf_options
@typed_errors
def run_cmd(name_dirs, conf, defines) -> None:
    """The main job: format a default name dir if none exists, then run the namenode and its
    secondary (checkpoints beside the name dir) until SIGTERM/SIGINT."""
    import launcher
    from namenode.fsnamesystem import format_dirs
    from namenode.storage import NameDir
    paths = list(name_dirs or (DEFAULT_NAME_DIR,))
    if not any(NameDir(p).is_formatted() for p in paths):
        format_dirs([NameDir(p) for p in paths])
    conf_args = (["--conf", conf] if conf else []) + [a for d in defines for a in ("-D", d)]
    sys.exit(launcher.run(paths, conf_args))


@main.command("secondary")
@click.option("--namenode", "namenode_url", metavar="URL",
              help="The namenode's HTTP address (default http://<dfs.namenode.http-address>).")
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
@typed_errors
def secondary_cmd(namenode_url, checkpoint_dir, conf, defines, secret_file, checkpoint_now,
                  geteditsize, port) -> None:
    """Run the secondary: checkpoint the namenode's edits into its fsimage."""
    from namenode.config import ConfigError
    from secondary import daemon
    from secondary.errors import SecondaryError, SettingError
    config = load_config(conf, defines)
    url = namenode_url or "http://" + config.get("dfs.namenode.http-address")
    if checkpoint_now and geteditsize:
        raise click.UsageError("--checkpoint-now and --geteditsize exclude each other")
    if not geteditsize and not checkpoint_dir:
        raise click.UsageError("--checkpoint-dir is required")
    try:
        secret = daemon.resolve_secret(secret_file, config)
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
    except (SettingError, ConfigError) as exc:
        raise click.UsageError(str(exc)) from exc
    except SecondaryError as exc:
        raise NnliteError(exc) from exc


# ------------------------------------------------------------ offline tools: oiv, oev, verify

def tool_errors(fn):
    """The tools' own errors: a bad option value is a usage error (2); a bad rendering given to
    ``oev -p binary`` or an unreadable/unwritable file exits 1; damage in a file exits 4."""
    @functools.wraps(fn)
    def wrapper(*args, **kw):
        from tools.errors import OptionError, ToolError
        try:
            return fn(*args, **kw)
        except OptionError as exc:
            raise click.UsageError(str(exc)) from exc
        except (ToolError, OSError) as exc:
            raise NnliteError(exc) from exc
    return typed_errors(wrapper)


def input_option(help_text: str):
    return click.option("-i", "--input", "input_path", required=True, help=help_text,
                        type=click.Path(exists=True, dir_okay=False))


def output_option(fn):
    return click.option("-o", "--output", default="-", show_default=True,
                        help="Output file; - for standard output.")(fn)


def max_record_option(fn):
    return click.option("--max-record", type=click.IntRange(min=1), default=None,
                        help="Largest record accepted, in bytes (default 1 MiB).")(fn)


def processor_option(choices, default: str):
    return click.option("-p", "--processor", type=click.Choice(choices, case_sensitive=False),
                        default=default, show_default=True, help="What to produce.")


def _tools_processors():
    from tools import OEV_PROCESSORS, OIV_PROCESSORS
    return OIV_PROCESSORS, OEV_PROCESSORS


OIV_CHOICES, OEV_CHOICES = _tools_processors()


@main.command("oiv")
@input_option("The fsimage to read.")
@output_option
@processor_option(OIV_CHOICES, "Delimited")
@click.option("--delimiter", default=None, help="Delimited: field separator (default tab).")
@click.option("--no-header", is_flag=True, help="Delimited: leave out the header line.")
@click.option("--step", type=int, default=None, help="FileDistribution: bucket width in bytes "
              "(default 2 MiB).")
@click.option("--max", "max_size", type=int, default=None,
              help="FileDistribution: largest size with its own bucket (default 128 GiB).")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="FileDistribution: also draw the histogram as a PNG bar chart.")
@click.option("--md5", default=None, help="Expected MD5 of the image (default: the digest in "
              "FSIMAGE.md5, when that file exists).")
@tool_errors
def oiv_cmd(input_path, output, processor, delimiter, no_header, step, max_size, plot,
            md5) -> None:
    """Offline image viewer: render an fsimage, one inode per line or record."""
    from tools import oiv
    options = oiv.OivOptions(processor=processor, delimiter=delimiter, header=not no_header,
                             step=step, max_size=max_size, plot=plot, md5=md5)
    result = oiv.run(input_path, output, options)
    click.echo(f"oiv: {result.md5_note}; {result.written} of {result.meta.inode_count} inodes "
               f"rendered (image txid {result.meta.last_txid})", err=True)
    result.check()


@main.command("oev")
@input_option("The edits file to read (for -p binary: its JSON or XML rendering).")
@output_option
@processor_option(OEV_CHOICES, "XML")
@max_record_option
@tool_errors
def oev_cmd(input_path, output, processor, max_record) -> None:
    """Offline edits viewer: render an edits file as JSON, XML or stats; -p binary turns a
    JSON or XML rendering back into an edits file."""
    from tools import oev, oev_binary
    if processor == "binary":
        if output == "-":
            raise click.UsageError("-p binary writes a file: give -o FILE")
        done = oev_binary.to_binary(input_path, output)
        click.echo(oev_binary.describe_binary(done), err=True)
        return
    result = oev.view(input_path, output, processor, **oev.reader_options(max_record))
    click.echo(oev.describe_view(result), err=True)
    if result.error is not None:
        raise result.error


@main.group("edits")
def edits_group() -> None:
    """Offline checks of edits files."""


@edits_group.command("verify")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@max_record_option
@tool_errors
def edits_verify_cmd(path, max_record) -> None:
    """Check an edits file (frames, CRCs, txids); exit 0 only if it is clean."""
    from tools import oev, verify
    report = verify.verify_edits(path, **oev.reader_options(max_record))
    click.echo(report.render(), nl=False)
    if not report.ok:
        click.get_current_context().exit(EXIT_CORRUPT)


@main.group("fsimage")
def fsimage_group() -> None:
    """Offline checks of fsimage files."""


@fsimage_group.command("verify")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--md5", default=None, help="Expected MD5 (default: the digest in PATH.md5).")
@tool_errors
def fsimage_verify_cmd(path, md5) -> None:
    """Check an fsimage (MD5, footer, schema, every page, the tree); exit 0 only if clean."""
    from tools import verify
    report = verify.verify_image(path, md5=md5)
    click.echo(report.render(), nl=False)
    if not report.ok:
        click.get_current_context().exit(EXIT_CORRUPT)


# ------------------------------------------------------------ analytics and image fetching

@main.command("analyze")
@click.argument("fsimage", type=click.Path(exists=True))
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Also write Parquet and CSV tables, PNG charts and report.html here.")
@click.option("--master", default="local[2]", show_default=True, help="Spark master.")
@click.option("--top", type=click.IntRange(min=1), default=20, show_default=True,
              help="Rows of the top-N tables.")
@click.option("--small-file-size", "small_bytes", type=click.IntRange(min=1),
              default=1 << 20, show_default=True, help="Files shorter than this are small.")
@typed_errors
def analyze_cmd(fsimage, out, master, top, small_bytes) -> None:
    """Analyse an fsimage (or a name/checkpoint dir) with PySpark: sizes, small files,
    owners, top-level dirs, replication, oldest data, Spark checkpoints."""
    try:
        import pyspark  # noqa: F401  (only to say clearly what is missing)
        from analytics import analyze, report
    except ImportError as exc:
        raise click.ClickException(f"nnlite analyze needs pyspark and matplotlib ({exc}): "
                                   "pip install 'nnlite[spark]'") from exc
    try:
        result = analyze.analyze(fsimage, master=master, top=top, small_bytes=small_bytes)
    except FileNotFoundError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(report.summary(result))
    if out:
        written = report.write(result, out)
        click.echo(f"\nWrote {len(written)} files to {out}; open {Path(out) / 'report.html'}")


@main.group("dfsadmin")
def dfsadmin_group() -> None:
    """Administration of a running namenode."""


@dfsadmin_group.command("fetch-image")
@click.argument("out_dir", metavar="DIR", type=click.Path(file_okay=False))
@click.option("--namenode", "namenode_url", metavar="URL",
              help="The namenode's HTTP address (default http://<dfs.namenode.http-address>).")
@click.option("--secret-file", type=click.Path(dir_okay=False),
              help="File holding the transfer secret (e.g. <name-dir>/checkpoint.token); "
                   "else the key nnlite.checkpoint.secret.")
@conf_options
@typed_errors
def fetch_image_cmd(out_dir, namenode_url, secret_file, conf, defines) -> None:
    """Download the namenode's current fsimage to DIR/fsimage (+ fsimage.md5), verified."""
    from namenode.importer import seal_fetched
    from secondary.client import TransferClient
    from secondary.daemon import resolve_secret
    from secondary.errors import SecondaryError, SettingError
    config = load_config(conf, defines)
    url = namenode_url or "http://" + config.get("dfs.namenode.http-address")
    try:
        secret = resolve_secret(secret_file, config)
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        got = TransferClient(url, secret).download_image(Path(out_dir) / "fsimage")
    except SettingError as exc:
        raise click.UsageError(str(exc)) from exc
    except SecondaryError as exc:
        raise NnliteError(exc) from exc
    meta = seal_fetched(got.path, got.md5, got.last_txid)
    click.echo(f"Fetched the image at txid {meta.last_txid} ({got.size} bytes, md5 {got.md5}) "
               f"to {got.path}")


# ------------------------------------------------------------ dfs, dfsadmin: a running namenode

class OneLineError(NnliteError):
    """The remote commands' error: ``nnlite: <Kind>: <message>`` on stderr."""

    def show(self, file=None) -> None:
        click.echo(f"nnlite: {self.format_message()}", err=True)


def one_line_usage(exc: click.UsageError) -> OneLineError:
    hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
    return OneLineError(click.UsageError(" ".join(exc.format_message().split()) + hint))


class OneLineCommand(click.Command):
    """A usage mistake (missing argument, bad option value) is one line too, exit code 2."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            raise one_line_usage(exc) from exc


def remote_errors(fn):
    """Client errors become one line and their exit code; so does anything unexpected (its
    traceback goes to the debug log, ``nnlite -v``), so no traceback reaches the user."""
    @functools.wraps(fn)
    def wrapper(*args, **kw):
        try:
            return fn(*args, **kw)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except client_errors.ClientError as exc:
            raise OneLineError(exc) from exc
        except Exception as exc:
            log.debug("unexpected error", exc_info=True)
            raise OneLineError(client_errors.InternalError(
                f"{type(exc).__name__}: {exc} (nnlite -v ... logs the traceback)")) from exc
    return wrapper


def _os_user() -> str:
    import getpass
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""


def remote_options(fn):
    """``--namenode URL`` and ``--user NAME``; the command gets a ``client`` (closed after)."""
    @remote_errors
    @functools.wraps(fn)
    def wrapper(*args, namenode_url, user, **kw):
        from client.webhdfs import WebHdfsClient
        with WebHdfsClient(namenode_url, user) as client:
            return fn(*args, client=client, **kw)
    wrapper = click.option("--user", envvar="HADOOP_USER_NAME", default=_os_user,
                           show_default="$HADOOP_USER_NAME, else the OS user",
                           help="Act as this user.")(wrapper)
    return click.option("--namenode", "namenode_url", metavar="URL", envvar="NNLITE_NAMENODE",
                        default=DEFAULT_NAMENODE, show_default=True,
                        help="The namenode's HTTP address ($NNLITE_NAMENODE).")(wrapper)


def json_option(fn):
    return click.option("--json", "as_json", is_flag=True,
                        help="One JSON object per line: the namenode's own objects.")(fn)


def echo_lines(lines) -> None:
    for line in lines:
        click.echo(line)


class DfsGroup(click.Group):
    command_class = OneLineCommand

    def resolve_command(self, ctx, args):
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            raise one_line_usage(exc) from exc


@main.group("dfs", cls=DfsGroup)
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
    from client import format as F
    from client.shell import FsShell
    events = FsShell(client).ls(paths, directory=directory, recursive=recursive)
    echo_lines(F.entries_json(events) if as_json else F.ls_lines(events, human=human))


@dfs_group.command("stat")
@click.argument("args", metavar="[FORMAT] PATH...", nargs=-1, required=True)
@json_option
@remote_options
def dfs_stat(client, args, as_json) -> None:
    """Print each PATH's status in FORMAT (default %y): %n name, %b bytes, %o block size,
    %r replication, %u owner, %g group, %y/%Y modified (UTC/ms), %x/%X accessed, %F type,
    %a octal and %A symbolic permission."""
    from client import format as F
    from client.shell import FsShell, split_stat_args
    fmt, paths = split_stat_args(args)
    entries = FsShell(client).stat(paths)
    echo_lines(F.entries_json(entries) if as_json
               else (F.stat_line(fmt, e.path, e.status) for e in entries))


@dfs_group.command("du")
@click.argument("paths", nargs=-1)
@click.option("-s", "summary", is_flag=True, help="One total per PATH, not per child.")
@click.option("-h", "human", is_flag=True, help="Human-readable sizes.")
@click.option("-v", "header", is_flag=True, help="Print a header line.")
@json_option
@remote_options
def dfs_du(client, paths, summary, human, header, as_json) -> None:
    """Size and space consumed (all replicas) of each child of PATH, or of PATH with -s."""
    from client import format as F
    from client.shell import FsShell
    rows = FsShell(client).du(paths, summary=summary)
    if as_json:
        return echo_lines(F.with_path(path, s) for path, s in rows)
    echo_lines(F.du_lines(list(rows), human=human, header=header))


@dfs_group.command("count")
@click.argument("paths", nargs=-1, required=True)
@click.option("-q", "quota", is_flag=True, help="Also the quotas and what remains of them.")
@click.option("-h", "human", is_flag=True, help="Human-readable sizes.")
@click.option("-v", "header", is_flag=True, help="Print a header line.")
@json_option
@remote_options
def dfs_count(client, paths, quota, human, header, as_json) -> None:
    """Directories, files and bytes under each PATH."""
    from client import format as F
    from client.shell import FsShell
    rows = FsShell(client).count(paths)
    if as_json:
        return echo_lines(F.with_path(path, s) for path, s in rows)
    if header:
        click.echo(F.count_header(quota))
    echo_lines(F.count_line(path, s, quota=quota, human=human) for path, s in rows)


@dfs_group.command("mkdir")
@click.argument("paths", nargs=-1, required=True)
@click.option("-p", "parents", is_flag=True, help="Create parents; an existing dir is fine.")
@remote_options
def dfs_mkdir(client, paths, parents) -> None:
    """Create directories."""
    from client.shell import FsShell
    FsShell(client).mkdir(paths, parents=parents)


@dfs_group.command("rm")
@click.argument("paths", nargs=-1, required=True)
@click.option("-r", "-R", "recursive", is_flag=True, help="Delete directories and contents.")
@click.option("-f", "force", is_flag=True, help="No error for a missing PATH.")
@remote_options
def dfs_rm(client, paths, recursive, force) -> None:
    """Delete PATHs (there is no trash)."""
    from client.shell import FsShell
    echo_lines(f"Deleted {path}" for path in FsShell(client).rm(paths, recursive=recursive,
                                                                 force=force))


@dfs_group.command("mv")
@click.argument("sources", metavar="SRC...", nargs=-1, required=True)
@click.argument("dest", metavar="DST")
@remote_options
def dfs_mv(client, sources, dest) -> None:
    """Move SRC to DST, or several SRCs into the directory DST."""
    from client.shell import FsShell
    FsShell(client).mv(list(sources), dest)


@dfs_group.command("chmod")
@click.argument("mode")
@click.argument("paths", nargs=-1, required=True)
@click.option("-R", "recursive", is_flag=True, help="The whole subtree.")
@remote_options
def dfs_chmod(client, mode, paths, recursive) -> None:
    """Set permissions: MODE is octal (755) or symbolic (u+x,go-w; after -- if it starts
    with -)."""
    from client.shell import FsShell
    FsShell(client).chmod(mode, paths, recursive=recursive)


@dfs_group.command("chown")
@click.argument("owner", metavar="OWNER[:GROUP]")
@click.argument("paths", nargs=-1, required=True)
@click.option("-R", "recursive", is_flag=True, help="The whole subtree.")
@remote_options
def dfs_chown(client, owner, paths, recursive) -> None:
    """Set the owner and/or group (:GROUP alone changes only the group)."""
    from client.shell import FsShell
    FsShell(client).chown(owner, paths, recursive=recursive)


@dfs_group.command("setrep")
@click.argument("replication", metavar="N", type=int)
@click.argument("paths", nargs=-1, required=True)
@click.option("-R", "recursive", is_flag=True, hidden=True, help="Accepted; always recursive.")
@remote_options
def dfs_setrep(client, replication, paths, recursive) -> None:
    """Set the replication of each file at or under PATH."""
    from client.shell import FsShell
    echo_lines(f"Replication {replication} set: {path}"
               for path in FsShell(client).setrep(replication, paths))


@dfs_group.command("touchz")
@click.argument("paths", nargs=-1, required=True)
@remote_options
def dfs_touchz(client, paths) -> None:
    """Create empty files (an existing empty file gets a new modification time)."""
    from client.shell import FsShell
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
    from client import format as F
    from client.shell import FsShell
    for path, attrs in FsShell(client).getfattr(paths, name=name, dump=dump,
                                                encoding=encoding, recursive=recursive):
        echo_lines([F.with_path(path, {"XAttrs": attrs})] if as_json
                   else F.xattr_lines(path, attrs))


@dfs_group.command("setfattr")
@click.argument("paths", nargs=-1, required=True)
@click.option("-n", "name", metavar="NAME", help="Set this extended attribute.")
@click.option("-v", "value", metavar="VALUE",
              help='Its value: "text", 0x<hex>, 0s<base64> or plain text (default empty).')
@click.option("-x", "remove", metavar="NAME", help="Remove this extended attribute.")
@remote_options
def dfs_setfattr(client, paths, name, value, remove) -> None:
    """Set (-n NAME [-v VALUE]) or remove (-x NAME) an extended attribute."""
    from client.shell import FsShell
    FsShell(client).setfattr(paths, name=name, value=value, remove=remove)


@dfs_group.command("put")
@click.argument("sources", metavar="LOCAL...", nargs=-1, required=True)
@click.argument("dest", metavar="DST")
@click.option("-f", "force", is_flag=True, help="Overwrite an existing file.")
@remote_options
def dfs_put(client, sources, dest, force) -> None:
    """Copy local files or directories (recursively) to DST, streamed from disk."""
    from client.shell import FsShell
    FsShell(client).put(list(sources), dest, force=force)


@dfs_group.command("get")
@click.argument("source", metavar="SRC")
@click.argument("dest", metavar="LOCALDST")
@click.option("-f", "force", is_flag=True, help="Overwrite an existing local file.")
@remote_options
def dfs_get(client, source, dest, force) -> None:
    """Copy a file or directory (recursively) to the local LOCALDST."""
    from client.shell import FsShell
    FsShell(client).get(source, dest, force=force)


@dfs_group.command("cat")
@click.argument("paths", nargs=-1, required=True)
@remote_options
def dfs_cat(client, paths) -> None:
    """Print the contents of files to standard output."""
    from client.shell import FsShell
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
    from client.shell import FsShell
    FsShell(client).append_to_file(list(sources), dest,
                                   stdin=click.open_file("-", "rb"))


@dfsadmin_group.command("safemode", cls=OneLineCommand)
@click.argument("action", metavar="ACTION",
                type=click.Choice(["get", "enter", "leave", "wait"]))
@json_option
@remote_options
def dfsadmin_safemode(client, action, as_json) -> None:
    """Safe mode: ACTION get, enter, leave, or wait (until it is off). Superuser."""
    from client import format as F
    on = client.safe_mode(action)
    click.echo(F.to_json({"SafeMode": on}) if as_json else F.safe_mode_line(on))


@dfsadmin_group.command("save-namespace", cls=OneLineCommand)
@json_option
@remote_options
def dfsadmin_save_namespace(client, as_json) -> None:
    """Write a new fsimage of the whole namespace; needs safe mode (superuser)."""
    from client import format as F
    txid = client.save_namespace()
    click.echo(F.to_json({"txid": txid}) if as_json
               else f"Save namespace successful (image at txid {txid})")


@dfsadmin_group.command("roll-edits", cls=OneLineCommand)
@json_option
@remote_options
def dfsadmin_roll_edits(client, as_json) -> None:
    """Close the current edits segment and continue in edits.new (superuser)."""
    from client import format as F
    txid = client.roll_edits()
    click.echo(F.to_json({"txid": txid}) if as_json
               else f"Successfully rolled edit logs (the closed segment ends at txid {txid})")


@dfsadmin_group.command("report", cls=OneLineCommand)
@json_option
@remote_options
def dfsadmin_report(client, as_json) -> None:
    """Txids, edits size, name dirs and their health, counts (superuser)."""
    from client import format as F
    report = client.report()
    echo_lines([F.to_json(report)] if as_json else F.report_lines(report))



# ------------------------------------------------------------ catalog: Spark checkpoints

@main.group("catalog", cls=DfsGroup)
def catalog_group() -> None:
    """The Spark checkpoint catalog: Structured Streaming, RDD, DStream and job checkpoints
    kept in nnlite (over the namenode's /catalog/v1)."""


def catalog_options(fn):
    """``--namenode``, ``--user``, ``--json``; the command gets a ``catalog`` client."""
    @functools.wraps(fn)
    def wrapper(*args, client, **kw):
        from catalog.client import CatalogClient
        return fn(*args, catalog=CatalogClient(hdfs=client), **kw)
    return json_option(remote_options(wrapper))


def echo_answer(doc, as_json: bool, lines) -> None:
    from client import format as F
    echo_lines([F.to_json(doc)] if as_json else lines(doc))


@catalog_group.command("ls")
@click.argument("root", default="/")
@catalog_options
def catalog_ls(catalog, root, as_json) -> None:
    """Every checkpoint under ROOT: kind, last batch or id, health, size, last update."""
    from catalog import format as CF
    from client import format as F
    rows = catalog.ls(root)
    echo_lines([F.to_json(r) for r in rows] if as_json else CF.ls_lines(rows))


@catalog_group.command("show")
@click.argument("path")
@catalog_options
def catalog_show(catalog, path, as_json) -> None:
    """Per batch: offsets, commit, watermark, timestamps, bytes; state per operator."""
    from catalog import format as CF
    echo_answer(catalog.show(path), as_json, CF.show_lines)


@catalog_group.command("latest")
@click.argument("path")
@catalog_options
def catalog_latest(catalog, path, as_json) -> None:
    """The last fully restorable batch (or the newest complete job checkpoint id)."""
    doc = catalog.latest(path)
    latest = doc["latest"]
    if as_json:
        echo_answer(doc, True, None)
    elif latest is None:
        raise click.ClickException(f"{path}: nothing restorable")
    else:
        click.echo(latest["id"] if isinstance(latest, dict) else latest)


@catalog_group.command("validate")
@click.argument("path")
@catalog_options
def catalog_validate(catalog, path, as_json) -> None:
    """Gaps, uncommitted offsets, missing metadata or state, temp files, corrupt logs.
    Exit code 0 only when Spark can restart the query from it as it is."""
    from catalog import format as CF
    doc = catalog.validate(path)
    echo_answer(doc, as_json, CF.validate_lines)
    if not doc["restorable"]:
        raise click.exceptions.Exit(EXIT_FAILED)


@catalog_group.command("retain")
@click.argument("path")
@click.option("--keep", type=click.IntRange(min=1), required=True,
              help="How many of the newest batches (or job checkpoints) stay restorable.")
@catalog_options
def catalog_retain(catalog, path, keep, as_json) -> None:
    """Delete batches older than the newest KEEP (pinned ones stay); every kept batch stays
    restorable, and the deletes are durable before it answers."""
    from catalog import format as CF
    echo_answer(catalog.retain(path, keep), as_json, lambda d: [CF.change_line("retain", d)])


@catalog_group.command("rollback")
@click.argument("path")
@click.option("--to-batch", type=click.IntRange(min=0), required=True,
              help="The batch to go back to: the query restarts from the next one.")
@catalog_options
def catalog_rollback(catalog, path, to_batch, as_json) -> None:
    """Remove every later offsets, commit, source-log entry and state version in one atomic
    op (refused while the query writes)."""
    from catalog import format as CF
    echo_answer(catalog.rollback(path, to_batch), as_json,
                lambda d: [CF.change_line("rollback", d)])


def _pin_command(name: str, on: bool, summary: str):
    @catalog_group.command(name, help=summary)
    @click.argument("path")
    @click.argument("batch", type=click.IntRange(min=0))
    @catalog_options
    def command(catalog, path, batch, as_json) -> None:
        doc = catalog.pin(path, batch) if on else catalog.unpin(path, batch)
        echo_answer(doc, as_json, lambda d: [f"{d.get('path', path)}: pinned {d.get('pinned')}"])
    return command


catalog_pin = _pin_command("pin", True, "Protect BATCH (and the state it needs) from retention.")
catalog_unpin = _pin_command("unpin", False, "Let retention remove BATCH again.")


@catalog_group.command("gc")
@click.argument("root", default="/")
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@catalog_options
def catalog_gc(catalog, root, dry_run, as_json) -> None:
    """Remove orphan temp files and abandoned RDD checkpoint directories under ROOT
    (older than nnlite.catalog.gc.tmp-ttl / rdd-ttl on the namenode)."""
    from catalog import format as CF
    echo_answer(catalog.gc(root, dry_run), as_json, lambda d: [CF.change_line("gc", d)])


@catalog_group.command("begin")
@click.argument("job")
@catalog_options
def catalog_begin(catalog, job, as_json) -> None:
    """Start a job checkpoint: prints its id and the directory to write into."""
    echo_answer(catalog.begin(job), as_json, lambda d: [f"{d['id']} {d['path']}"])


@catalog_group.command("complete")
@click.argument("job")
@click.argument("chk_id", type=int)
@click.option("--parts", type=click.IntRange(min=0), default=None,
              help="Part files expected (default: require Spark's _SUCCESS marker).")
@catalog_options
def catalog_complete(catalog, job, chk_id, parts, as_json) -> None:
    """Verify a job checkpoint's parts and mark it complete (one atomic rename)."""
    echo_answer(catalog.complete(job, chk_id, parts), as_json,
                lambda d: [f"complete: {d['path']} ({d['parts']} parts)"])


@catalog_group.command("abort")
@click.argument("job")
@click.argument("chk_id", type=int)
@catalog_options
def catalog_abort(catalog, job, chk_id, as_json) -> None:
    """Discard a job checkpoint that is in progress."""
    echo_answer(catalog.abort(job, chk_id), as_json, lambda d: [f"aborted {job} {chk_id}"])


@catalog_group.command("watch")
@click.argument("local_dir", type=click.Path(file_okay=False))
@click.option("--into", required=True, metavar="PATH",
              help="Where the copy lives in nnlite (an absolute path).")
@click.option("--interval", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
              help="Seconds between full rescans (a safety net for lost events).")
@click.option("--once", is_flag=True,
              help="One reconciliation pass, then exit (0 when the copy is complete).")
@remote_options
@typed_errors
def catalog_watch(client, local_dir, into, interval, once) -> None:
    """Mirror a local Structured Streaming checkpoint directory into nnlite in commit order
    (offsets and state before commits), until SIGTERM/SIGINT."""
    from catalog.watch import run_watch
    run_watch(client, local_dir, into, interval=interval, once=once)


if __name__ == "__main__":
    main()
