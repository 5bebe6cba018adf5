"""The command line's own errors (the other packages' errors reach the user through the same
table in ``support.py``)."""

from __future__ import annotations


class CommandError(Exception):
    """Root of the errors the commands raise themselves."""


class ChildDied(CommandError):
    """A daemon that ``nnlite run`` supervises exited on its own (message: which, and how)."""
