"""support.py: the exit code of each kind of error, and ``--user`` and ``--namenode`` wherever a
user puts them, as Hadoop's generic options: at the top (``nnlite --user U dfs ls``), on the
group (``nnlite dfs --user U ls``) and after the command; the last one on the command line
wins, and any of them over the environment (HADOOP_USER_NAME=tester, NNLITE_NAMENODE=the test
namenode, as tests/commands/helpers.py sets them). The user shows in the home directory a
relative path resolves under."""

from __future__ import annotations

import click
import pytest

from nnlite import cli
from nnlite.client import errors
from nnlite.commands.support import GenericOption, exit_code
from tests.commands.helpers import failed, nnlite, ok
from tests.servers import closed_port


@pytest.mark.parametrize("error, code", [
    (errors.PathNotFoundError("x"), 1),
    (errors.AccessControlError("x"), 1),
    (errors.ImpersonationError("x"), 1),
    (errors.SafeModeError("x"), 1),
    (errors.UnknownOperationError("x"), 1),
    (errors.ProtocolError("x"), 1),
    (errors.NamenodeUnreachableError("x", url="http://h:1"), 3),
    (errors.BadArgumentError("x"), 2),
    (errors.IllegalArgumentError("x"), 2),
    (errors.InvalidPathError("x"), 2),
], ids=lambda v: type(v).__name__ if isinstance(v, Exception) else str(v))
def test_exit_codes_are_stable_per_kind(error, code):
    assert exit_code(error) == code


def home_of(result) -> str:
    """The user a ``dfs ls rel`` ran as, from its one-line error."""
    message = failed(result, "PathNotFoundError", 1)
    return message.split("/")[2]


@pytest.mark.parametrize("args", [
    ["--user", "eve", "dfs", "ls", "rel"],
    ["dfs", "--user", "eve", "ls", "rel"],
    ["dfs", "ls", "--user", "eve", "rel"],
    ["dfs", "ls", "rel", "--user", "eve"],
    ["--user", "bob", "dfs", "--user", "eve", "ls", "rel"],
    ["--user", "bob", "dfs", "ls", "rel", "--user", "eve"],
    ["dfs", "--user", "bob", "ls", "--user", "eve", "rel"],
    ["--user", "amy", "dfs", "--user", "bob", "ls", "--user", "eve", "rel"],
], ids=["top", "group", "command", "after-path", "group-over-top", "command-over-top",
        "command-over-group", "all-three"])
def test_user_in_every_position_the_last_wins(server, args):
    assert home_of(nnlite(server, *args)) == "eve"


def test_without_the_option_the_environment_then_the_os_user(server):
    import getpass
    assert home_of(nnlite(server, "dfs", "ls", "rel")) == "tester"
    assert home_of(nnlite(server, "dfs", "ls", "rel", user=None)) == getpass.getuser()


def test_namenode_in_every_position_the_last_wins(server):
    closed = f"http://127.0.0.1:{closed_port()}"
    good = server.url
    for args in (["--namenode", closed, "dfs", "ls", "/"],
                 ["dfs", "--namenode", closed, "ls", "/"],
                 ["--namenode", good, "dfs", "--namenode", closed, "ls", "/"],
                 ["dfs", "--namenode", good, "ls", "--namenode", closed, "/"]):
        assert closed in failed(nnlite(server, *args), "NamenodeUnreachableError", 3), args
    for args in (["--namenode", closed, "dfs", "--namenode", good, "ls", "/"],
                 ["--namenode", closed, "dfs", "ls", "--namenode", good, "/"],
                 ["dfs", "--namenode", closed, "ls", "/", "--namenode", good]):
        ok(nnlite(None, *args))


def test_dfsadmin_takes_them_before_its_command(server):
    for args in (["--user", "bob", "dfsadmin", "safemode", "get"],
                 ["dfsadmin", "--user", "bob", "safemode", "get"],
                 ["--user", "tester", "dfsadmin", "--user", "bob", "safemode", "get"]):
        assert "Superuser privilege is required" in failed(nnlite(server, *args),
                                                           "AccessControlError", 1)
    assert ok(nnlite(server, "dfsadmin", "--user", "bob", "safemode", "get",
                     "--user", "tester")) == ["Safe mode is OFF"]
    closed = f"http://127.0.0.1:{closed_port()}"
    assert ok(nnlite(None, "--namenode", closed, "dfsadmin", "--namenode", server.url,
                     "report"))[0].startswith("Namespace ID: ")


def test_catalog_takes_them_before_its_command():
    first, second = (f"http://127.0.0.1:{closed_port()}" for _ in range(2))
    for args, named in ((["--namenode", first, "catalog", "ls", "/"], first),
                        (["catalog", "--namenode", first, "ls", "/"], first),
                        (["--namenode", first, "catalog", "--namenode", second, "ls", "/"],
                         second),
                        (["catalog", "--namenode", first, "ls", "/", "--namenode", second],
                         second)):
        assert named in failed(nnlite(None, *args), "NamenodeUnreachableError", 3), args


def test_every_group_above_a_command_with_them_takes_them():
    def check(group: click.Group, path: str) -> set[str]:
        below: set[str] = set()
        for name, command in group.commands.items():
            below |= (check(command, f"{path} {name}") if isinstance(command, click.Group)
                      else {p.name for p in command.params if isinstance(p, GenericOption)})
        assert below <= {p.name for p in group.params}, path
        return below
    assert check(cli.main, "nnlite") == {"user", "namenode_url", "conf", "defines",
                                         "principal", "keytab"}
