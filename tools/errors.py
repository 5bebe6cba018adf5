"""Typed errors of the tools. Damage found in a file is a ``formats.errors.FormatError``; these
are the tools' own failures (bad input given by a person, a bad option value)."""

from __future__ import annotations


class ToolError(Exception):
    """Root of the tools' own errors."""


class InputError(ToolError):
    """A JSON or XML rendering given to ``oev -p binary`` cannot be turned into records."""

    def __init__(self, message: str, *, path: str | None = None, where: str | None = None):
        self.path = path
        self.where = where
        context = ", ".join(x for x in (path and f"file {path}", where) if x)
        super().__init__(f"{message} ({context})" if context else message)


class OptionError(ToolError):
    """An option value the tool cannot work with (the CLI reports it as a usage error)."""


class MissingDependencyError(ToolError):
    """An optional package that a requested feature needs is not installed."""
