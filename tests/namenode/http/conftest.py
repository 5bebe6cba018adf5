"""Fixtures of the modules that drive Hadoop's Java client: ``server`` (the module's namenode,
tests/conftest.py's ``module_namenode``, unless the module brings its own), ``java`` (the
handles for it, with Hadoop's block size unless the module's ``java_block_size`` says
otherwise: the data modules use 1 KiB blocks), ``fs`` (a WebHdfsFileSystem acting as tester)
and ``d`` (a fresh directory per test, unless the module brings its own)."""

from __future__ import annotations

import itertools

import pytest

from tests.namenode.http.java import Java

_dirs = itertools.count()


@pytest.fixture(scope="module")
def server(module_namenode):
    return module_namenode


@pytest.fixture(scope="module")
def java_block_size() -> int | None:
    """The Java client's dfs.blocksize (None: Hadoop's own)."""
    return None


@pytest.fixture(scope="module")
def java(spark, server, java_block_size):
    return Java(spark, server.port, block_size=java_block_size)


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
