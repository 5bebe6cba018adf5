"""Fixtures of the data tests that drive Hadoop's Java client: ``java`` (handles for the
module's ``server``) and ``fs`` (a WebHdfsFileSystem acting as tester)."""

from __future__ import annotations

import pytest

from tests.data.java_client import Java


@pytest.fixture(scope="module")
def java(spark, server):
    return Java(spark, server.port)


@pytest.fixture(scope="module")
def fs(java):
    handle = java.jvm.org.apache.hadoop.fs.FileSystem.newInstance(java.uri, java.conf(),
                                                                  "tester")
    try:
        yield handle
    finally:
        handle.close()
