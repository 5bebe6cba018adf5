"""Fixtures of the command tests: ``server`` (tests/namenode/http's namenode, one per module,
with the users of its helpers.py, unless the module brings its own), ``tester`` (a client
acting as tester, a superuser) and ``base`` (an empty directory per test, ``/t/<test name>``).
"""

from __future__ import annotations

import re

import pytest

from nnlite.client.webhdfs import WebHdfsClient
from tests.namenode.http.conftest import server  # noqa: F401 - the one plain namenode fixture


@pytest.fixture(scope="module")
def tester(server):  # noqa: F811 - the fixture imported above
    with WebHdfsClient(server.url, "tester") as client:
        yield client


@pytest.fixture
def base(tester, request) -> str:
    """An empty directory of this test's own."""
    path = "/t/" + re.sub(r"\W+", "_", request.node.name)
    assert tester.mkdirs(path)
    return path
