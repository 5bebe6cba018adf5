"""Fixtures of the modules that drive Hadoop's Java client: ``server`` (a namenode with the
users of helpers.py, unless the module brings its own), ``java`` (the handles for it) and
``fs`` (a WebHdfsFileSystem acting as tester)."""

from __future__ import annotations

import pytest

from tests.namenode.http.helpers import start_namenode
from tests.namenode.http.java import Java


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    nn = start_namenode(tmp_path_factory)
    try:
        yield nn
    finally:
        nn.stop()


@pytest.fixture(scope="module")
def java(spark, server):
    return Java(spark, server.port)


@pytest.fixture(scope="module")
def fs(java):
    handle = java.open("tester")
    try:
        yield handle
    finally:
        handle.close()
