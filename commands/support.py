"""What every ``nnlite`` command module shares: the exit codes and the typed errors that map to
them (``exit_code``, ``NnliteError``, ``typed_errors``), and the ``--conf``/``-D`` options with
``load_config``. ``cli.py`` and the command modules (``client/cli_dfs.py``,
``tools/cli_tools.py``, ``catalog/cli_catalog.py``) import it; it imports none of them, so
there is no cycle, also when ``cli`` runs as ``python -m cli``.
"""

from __future__ import annotations

import functools

import click

from nnlite.client import errors as client_errors
from nnlite.formats.errors import FormatError
from nnlite.namenode.errors import NameDirError, NamenodeError, StorageError

EXIT_FAILED, EXIT_USAGE, EXIT_STORAGE, EXIT_CORRUPT = 1, 2, 3, 4
# Arguments refused before or by the namenode: usage errors, as click's own are.
CLIENT_USAGE_ERRORS = (client_errors.BadArgumentError, client_errors.IllegalArgumentError,
                       client_errors.InvalidPathError)


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


def conf_options(fn):
    fn = click.option("-D", "defines", multiple=True, metavar="KEY=VALUE",
                      help="Override a configuration key.")(fn)
    return click.option("--conf", type=click.Path(dir_okay=False),
                        help="Configuration file (key = value lines).")(fn)


def load_config(conf, defines):
    from nnlite.namenode.config import Config, ConfigError
    try:
        return Config.load(conf, defines)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
