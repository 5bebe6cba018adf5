"""Helpers of the ``nnlite dfs`` / ``dfsadmin`` tests: run a command with CliRunner against a
live namenode and check the one-line error contract.

The namenode's address and the user come from the environment (NNLITE_NAMENODE,
HADOOP_USER_NAME) unless a test passes ``--namenode``/``--user``, so the defaults are exercised
too; the host's own values of those variables never leak in.
"""

from __future__ import annotations

from click.testing import CliRunner, Result

from nnlite import cli


def nnlite(server, *args: str, user: str | None = "tester") -> Result:
    """``nnlite ARGS...`` with the namenode's URL and the user in the environment."""
    env = {"NNLITE_NAMENODE": server.url if server else None, "HADOOP_USER_NAME": user}
    return CliRunner(env=env).invoke(cli.main, list(args))


def run(server, group: str, *args: str, user: str | None = "tester") -> Result:
    return nnlite(server, group, *args, user=user)


def dfs(server, *args: str, user: str | None = "tester") -> Result:
    return run(server, "dfs", *args, user=user)


def dfsadmin(server, *args: str, user: str | None = "tester") -> Result:
    return run(server, "dfsadmin", *args, user=user)


def ok(result: Result) -> list[str]:
    """The command succeeded; its standard output lines."""
    assert result.exit_code == 0, (result.exit_code, result.output, result.exception)
    assert result.stderr == "", result.stderr
    return result.stdout.splitlines()


def failed(result: Result, kind: str, code: int) -> str:
    """The command failed with exactly one ``nnlite: <kind>: ...`` line on stderr, nothing on
    stdout, exit ``code`` and no traceback; returns the message."""
    assert result.exit_code == code, (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert result.stdout == "", result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    prefix = f"nnlite: {kind}: "
    assert lines[0].startswith(prefix), lines[0]
    return lines[0][len(prefix):]
