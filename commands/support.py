"""What every ``nnlite`` command shares: the exit codes, the one table that maps an error to
its code, the one error format, the ``--conf``/``-D`` options with ``load_config``, the
generic options (``GenericOption``: ``--user``, ``--namenode``, ``--conf`` and ``-D``, taken
after the command or before it by any group above it, as Hadoop takes its generic options),
and what ``--namenode`` names (``namenode_address``: a URL, or a nameservice the
configuration names, whose active namenode the client follows).

Every error a command lets escape reaches ``CommandGroup.main`` (the ``nnlite`` group's class),
which writes exactly one line on stderr and exits with the code of ``exit_code``:

    nnlite: <Kind>: <message>                 a typed error of any package, or an OSError
    nnlite: UsageError: <message> (see 'nnlite <command> --help')
    nnlite: <message>                         a command's own refusal (click.ClickException)

* 0: success
* 1: the operation failed
* 2: usage error: a bad argument or option, refused by the command, the client or the namenode
* 3: the environment: name dirs or storage, an address in use, an unreachable namenode or etcd,
  no active namenode in a nameservice, a program not installed (etcd)
* 4: a corrupt file

An error nothing here expected is still one line (``InternalError: <Kind>: <message>``, exit 1);
its traceback goes to the debug log (``nnlite -v``), never to the user's terminal.
"""

from __future__ import annotations

import errno
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from nnlite.client import connection
from nnlite.client import errors as client_errors
from nnlite.client.failover import Address, Nameservice, resolve
from nnlite.commands.errors import CommandError, ProgramMissing
from nnlite.formats.errors import FormatError
from nnlite.namenode.config import Config, ConfigError
from nnlite.namenode.errors import AddressError, NameDirError, NamenodeError, StorageError
from nnlite.secondary.errors import SecondaryError, SettingError
from nnlite.tools.errors import OptionError, ToolError

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])


def default_name_dir() -> str:
    """The name dir ``make run`` formats and uses: ``~/.nnlite/name`` (read at call time)."""
    return str(Path.home() / ".nnlite" / "name")


EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_STORAGE, EXIT_CORRUPT = 0, 1, 2, 3, 4

# The one table, first match wins: (error classes, exit code).
EXIT_CODES: tuple[tuple[tuple[type[BaseException], ...], int], ...] = (
    ((FormatError,), EXIT_CORRUPT),
    ((NameDirError, StorageError, AddressError, client_errors.NamenodeUnreachableError,
      client_errors.NoActiveNamenodeError, client_errors.EtcdUnavailableError, ProgramMissing),
     EXIT_STORAGE),
    ((click.UsageError, OptionError, SettingError, ConfigError, client_errors.BadArgumentError,
      client_errors.IllegalArgumentError, client_errors.InvalidPathError,
      client_errors.AclError), EXIT_USAGE),
)
# Errors whose class name and message are the whole story; anything else is unexpected.
TYPED_ERRORS = (FormatError, NamenodeError, client_errors.ClientError, SecondaryError, ToolError,
                ConfigError, CommandError, OSError)


def exit_code(exc: BaseException) -> int:
    for classes, code in EXIT_CODES:
        if isinstance(exc, classes):
            return code
    return exc.exit_code if isinstance(exc, click.ClickException) else EXIT_FAILED


def error_line(exc: BaseException) -> str:
    """The one line a failed command writes on stderr."""
    if isinstance(exc, click.UsageError):
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
        return f"nnlite: UsageError: {' '.join(exc.format_message().split())}{hint}"
    if isinstance(exc, click.ClickException):
        return f"nnlite: {' '.join(exc.format_message().splitlines())}"
    text = " ".join(str(exc).splitlines())
    if isinstance(exc, TYPED_ERRORS):
        return f"nnlite: {type(exc).__name__}: {text}"
    return f"nnlite: InternalError: {type(exc).__name__}: {text} (nnlite -v logs the traceback)"


class CommandGroup(click.Group):
    """The ``nnlite`` group: runs a command and turns whatever escapes it into one line."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            result = super().main(args, prog_name, complete_var, False, **extra)
        except click.Abort:
            click.echo("nnlite: Aborted", err=True)
            sys.exit(EXIT_FAILED)
        except OSError as exc:
            if exc.errno == errno.EPIPE:     # the reader went away (| head): nothing to say
                sys.exit(EXIT_FAILED)
            fail(exc)
        except Exception as exc:            # noqa: BLE001 - the one place errors become lines
            fail(exc)
        sys.exit(result if isinstance(result, int) else EXIT_OK)


def fail(exc: BaseException):
    if not isinstance(exc, (click.ClickException, *TYPED_ERRORS)):
        log.debug("unexpected error", exc_info=exc)
    click.echo(error_line(exc), err=True)
    sys.exit(exit_code(exc))


# ------------------------------------------------------------------ generic options

GIVEN_ABOVE = "nnlite.generic_options"      # ctx.meta: generic options given before a command


class GenericOption(click.Option):
    """An option of Hadoop's generic kind (``--user``, ``--namenode``): the command takes it
    after its name, and ``accept_generic_options`` lets every group above the command take it
    too, before the subcommand (``nnlite --user U dfs ls``, ``nnlite dfs --user U ls``). The
    one written last on the command line wins; then the environment variable; then the
    default."""

    def consume_value(self, ctx, opts):
        value, source = super().consume_value(ctx, opts)
        above = ctx.meta.get(GIVEN_ABOVE, {})
        if source is not ParameterSource.COMMANDLINE and self.name in above:
            return above[self.name], ParameterSource.COMMANDLINE
        return value, source


def _given_above(ctx, param, value):
    if value is not None and value != ():   # groups parse in order: a later one overwrites
        ctx.meta.setdefault(GIVEN_ABOVE, {})[param.name] = value


def accept_generic_options(group: click.Group) -> list[GenericOption]:
    """Give ``group`` and every group under it the generic options of the commands below
    them, to take before the subcommand; returns those options."""
    found: dict[str, GenericOption] = {}
    for command in group.commands.values():
        options = (accept_generic_options(command) if isinstance(command, click.Group)
                   else [p for p in command.params if isinstance(p, GenericOption)])
        for option in options:
            found.setdefault(option.name, option)
    taken = {p.name for p in group.params}
    group.params += [click.Option([*option.opts, option.name], metavar=option.metavar,
                                  multiple=option.multiple, expose_value=False,
                                  callback=_given_above,
                                  help=f"As the commands' own {option.opts[0]}, before the "
                                       "command (the last one given wins).")
                     for option in found.values() if option.name not in taken]
    return list(found.values())


def conf_options(fn: F) -> F:
    """``--conf FILE`` and ``-D KEY=VALUE``, generic options as Hadoop's ``-conf`` and
    ``-D`` (a group above the command takes them too)."""
    fn = click.option("-D", "defines", cls=GenericOption, multiple=True, metavar="KEY=VALUE",
                      help="Override a configuration key.")(fn)
    return click.option("--conf", cls=GenericOption, type=click.Path(dir_okay=False),
                        help="Configuration file (key = value lines).")(fn)


def load_config(conf: str | None, defines: list[str] | tuple[str, ...]) -> Config:
    """The configuration; its truststore (``ssl.client.truststore.location``, a PEM file of
    CA certificates) is what every https connection of the command trusts."""
    config = Config.load(conf, defines)
    connection.trust(config.get("ssl.client.truststore.location"))
    return config


def kerberos_options(fn: F) -> F:
    """``--principal`` and ``--keytab``: log in from a keytab (``kinit -kt`` without a
    ticket cache), generic options like ``--user``."""
    fn = click.option("--keytab", cls=GenericOption, type=click.Path(dir_okay=False),
                      help="Log in with Kerberos from this keytab (with --principal).")(fn)
    return click.option("--principal", cls=GenericOption, metavar="NAME",
                        help="The Kerberos principal to act as (default: the ticket "
                             "cache's, after kinit).")(fn)


def log_in(config: Config, principal: str | None, keytab: str | None) -> str | None:
    """Secure mode (``hadoop.security.authentication=kerberos`` in the configuration, or a
    principal or keytab given): every connection of the command authenticates with Kerberos
    (``client/kerberos.py``, the ticket cache after ``kinit`` or the keytab); returns the
    short name it acts as (``nnlite -v`` logs the principal), None in simple mode."""
    if not (principal or keytab or config.security_enabled()):
        return None
    from nnlite.client.kerberos import KerberosLogin
    login = KerberosLogin(principal or None, keytab or None)
    connection.log_in(login)
    log.debug("acting as %s (from %s)", login.principal,
              f"keytab {keytab}" if keytab else "the ticket cache")
    return login.principal.split("@")[0].split("/")[0]


# ------------------------------------------------------------------ which namenode

def nameservices(config: Config) -> dict[str, dict[str, str]]:
    """``{nameservice: {namenode id: http://host:port}}`` of the configuration (its
    ``dfs.nameservices``, ``dfs.ha.namenodes.<ns>``, ``dfs.namenode.http-address.<ns>.<nn>``;
    under HTTPS_ONLY ``https://`` and the ``https-address``: ``Config.ha_urls``)."""
    ns = config.nameservice()
    if not ns:
        return {}
    return {ns: config.ha_urls()}


def namenode_address(given: str | None, config: Config, default: str) -> Address:
    """What ``--namenode`` names (a URL, HOST:PORT, or a nameservice of the configuration:
    ``ns1``, ``webhdfs://ns1``, ``hdfs://ns1``); without it, the configuration's nameservice
    if it names one (as a client's ``fs.defaultFS`` would), else ``default``."""
    known = nameservices(config)
    if given:
        return resolve(given, known)
    if known:
        name, namenodes = next(iter(known.items()))
        return Nameservice(name, namenodes)
    return default
