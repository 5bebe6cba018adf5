"""``nnlite``: a thin click layer over the packages. Errors become one line and an exit code.

Exit codes: 0 success, 1 the operation failed (typed error), 2 usage error (click),
3 storage or name-dir problem, 4 corrupt file.
"""

from __future__ import annotations

import functools
import logging
import sys
from pathlib import Path

import click

from formats.errors import FormatError
from namenode.errors import NameDirError, NamenodeError, StorageError

DEFAULT_NAME_DIR = str(Path.home() / ".nnlite" / "name")
EXIT_FAILED, EXIT_STORAGE, EXIT_CORRUPT = 1, 3, 4

log = logging.getLogger("nnlite")


def exit_code(exc: BaseException) -> int:
    if isinstance(exc, FormatError):
        return EXIT_CORRUPT
    if isinstance(exc, (NameDirError, StorageError)):
        return EXIT_STORAGE
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
    asyncio.run(Namenode(paths, config, host, port).run())


@main.command("namenode")
@name_dir_option
@click.option("--host", default=None, help="Address to bind (default 127.0.0.1).")
@click.option("--port", type=int, default=None, help="HTTP port (default 9870).")
@conf_options
@typed_errors
def namenode_cmd(name_dirs, host, port, conf, defines) -> None:
    """Run the namenode in the foreground (WebHDFS on http://HOST:PORT)."""
    serve_namenode(name_dirs, host, port, load_config(conf, defines), False)


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
            result = daemon.checkpoint_now(url, checkpoint_dir, secret, config)
            click.echo(f"Checkpoint done: image txid {result.last_txid}, {result.ops} ops "
                       f"replayed, {result.image_size} bytes")
        else:
            log_to_file(config.get("nnlite.log.file"))
            daemon.serve(url, checkpoint_dir, secret, config, port)
    except (SettingError, ConfigError) as exc:
        raise click.UsageError(str(exc)) from exc
    except SecondaryError as exc:
        raise NnliteError(exc) from exc


if __name__ == "__main__":
    main()
