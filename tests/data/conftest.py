"""Fixtures of the data tests that drive Hadoop's Java client: ``server`` (a namenode, unless
the module brings its own), ``java`` (tests/namenode/http/java.py's handles, with the data
tests' 1 KiB blocks), ``fs`` (a WebHdfsFileSystem acting as tester) and ``d`` (a fresh
directory per test)."""

from __future__ import annotations

import itertools

import pytest

from tests.data import BLOCK
from tests.namenode.http.helpers import start_namenode
from tests.namenode.http.java import Java

_dirs = itertools.count()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    nn = start_namenode(tmp_path_factory)
    try:
        yield nn
    finally:
        nn.stop()


@pytest.fixture(scope="module")
def java(spark, server):
    return Java(spark, server.port, block_size=BLOCK)


@pytest.fixture(scope="module")
def fs(java):
    handle = java.open("tester")
    try:
        yield handle
    finally:
        handle.close()


@pytest.fixture
def d(fs, java) -> str:
    path = f"/j{next(_dirs)}"
    assert fs.mkdirs(java.path(path))
    return path
