"""Fixtures of the in-process HA tests (``inprocess.py``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nnlite.client.etcd.client import Etcd
from nnlite.namenode.fsnamesystem import FSNamesystem, format_dirs
from nnlite.namenode.storage.namedir import NameDir


@pytest.fixture
def etcd(etcd_single):
    client = Etcd(etcd_single.endpoints)
    yield client
    client.close()


@pytest.fixture
def dirs(tmp_path):
    """Two name dirs of one namespace, as a formatted one and its copy."""
    first, second = tmp_path / "nn1", tmp_path / "nn2"
    format_dirs([NameDir(first)])
    shutil.copytree(first, second)
    return first, second


@pytest.fixture
def open_namesystem():
    """``open_namesystem(root)``: the namesystem of the name dir ``root``; every one opened is
    closed after the test."""
    opened: list[FSNamesystem] = []

    def open_(root: Path) -> FSNamesystem:
        opened.append(FSNamesystem.open([str(root)]))
        return opened[-1]
    yield open_
    for fs in opened:
        fs.close()
