"""``store``: a BlockStore of its own, closed after the test."""

import pytest

from nnlite.namenode.blocks.store import BlockStore


@pytest.fixture
def store(tmp_path):
    s = BlockStore.open(tmp_path / "data", namespace_id=7)
    yield s
    s.close()
