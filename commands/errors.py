"""The command line's own errors (the other packages' errors reach the user through the same
table in ``support.py``)."""

from __future__ import annotations


class CommandError(Exception):
    """Root of the errors the commands raise themselves."""


class ChildDied(CommandError):
    """A daemon that ``nnlite run`` or ``run-ha`` supervises exited on its own (message: which,
    and how)."""


class ProgramMissing(CommandError):
    """A program a command runs is not installed (``run-ha``'s etcd); the message says how to
    install it."""


class StartTimeout(CommandError):
    """What a supervisor started did not come up in time (``run-ha``: etcd's quorum, an
    active namenode)."""


class HealthCheckFailedException(CommandError):
    """``haadmin checkHealth``: the namenode says it is unhealthy (the message says why), as
    HAAdmin's ``-checkHealth`` fails with Hadoop's ``HealthCheckFailedException``."""
