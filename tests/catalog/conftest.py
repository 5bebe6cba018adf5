"""A namenode whose catalog acts at once (no quiet period), and clients of it."""

import pytest

from tests.catalog.remote import running


@pytest.fixture
def live(start_namenode):
    with running(start_namenode, "nnlite.catalog.quiet=0") as parts:
        yield parts


@pytest.fixture
def server(live):
    return live[0]


@pytest.fixture
def hdfs(live):
    return live[1]


@pytest.fixture
def catalog(live):
    return live[2]
