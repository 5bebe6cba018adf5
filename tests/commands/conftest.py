"""Fixtures of the command tests: ``server`` (tests/conftest.py's ``module_namenode``, one per
module, unless the module brings its own), ``tester`` (a client acting as tester, a superuser)
and ``base`` (an empty directory per test, ``/t/<test name>``).
"""

from __future__ import annotations

import re

import pytest

from nnlite.client.webhdfs import WebHdfsClient


@pytest.fixture(scope="module")
def server(module_namenode):
    return module_namenode


@pytest.fixture(scope="module")
def tester(server):
    with WebHdfsClient(server.url, "tester") as client:
        yield client


@pytest.fixture
def base(tester, request) -> str:
    """An empty directory of this test's own."""
    path = "/t/" + re.sub(r"\W+", "_", request.node.name)
    assert tester.mkdirs(path)
    return path
