"""Fixtures of the tools tests: a fixed time zone, and the CLI run in-process."""

from __future__ import annotations

import os
import time

import pytest
from click.testing import CliRunner

from nnlite import cli


def set_zone(monkeypatch, zone: str) -> None:
    monkeypatch.setenv("TZ", zone)
    time.tzset()


@pytest.fixture
def utc(monkeypatch):
    """Local time is UTC for the test (Delimited prints local time, as Hadoop does)."""
    set_zone(monkeypatch, "UTC")
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def zone(monkeypatch):
    """Call with a zone name to make it the local time zone for the rest of the test."""
    yield lambda name: set_zone(monkeypatch, name)
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def nnlite():
    """``nnlite(*args)``: run the CLI in-process; the result has stdout, stderr, exit_code."""
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(cli.main, [str(a) for a in args], catch_exceptions=False)
    return invoke


def read(path) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def exists(path) -> bool:
    return os.path.exists(path)
