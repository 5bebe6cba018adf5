"""``nnlite``: a thin click layer over the packages. Errors become one line and an exit code.

Exit codes: 0 success, 1 the operation failed (typed error), 2 usage error (click),
3 storage or name-dir problem, 4 corrupt file.
"""

from __future__ import annotations

import functools
import logging
import signal
import sys
import threading
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


@main.command("run")
@name_dir_option
@typed_errors
def run_cmd(name_dirs) -> None:
    """The main job: format a default name dir if none exists, then run the store."""
    from namenode.fsnamesystem import FSNamesystem, format_dirs
    from namenode.storage import NameDir
    paths = list(name_dirs or (DEFAULT_NAME_DIR,))
    dirs = [NameDir(p) for p in paths]
    if not any(d.is_formatted() for d in dirs):
        format_dirs(dirs)
    with FSNamesystem.open(paths) as fs:
        report = fs.report()
        log.info("store is up: txid %d, %d files, %d directories", report["lastWrittenTxid"],
                 report["files"], report["directories"])
        wait_for_signal()
    log.info("store stopped cleanly")


def wait_for_signal() -> None:
    """Block until SIGTERM or SIGINT."""
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    while not stop.wait(3600):
        pass


if __name__ == "__main__":
    main()
