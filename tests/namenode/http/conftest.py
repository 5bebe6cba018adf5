"""Fixtures of the modules that drive Hadoop's Java client: ``java`` (the handles for the
module's ``server``) and ``fs`` (a WebHdfsFileSystem acting as tester)."""

from __future__ import annotations

import pytest

from tests.namenode.http.java import Java


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
