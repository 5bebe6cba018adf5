"""``store``: a BlockStore of its own for each test, closed after it."""

import pytest

from nnlite.namenode.blocks.store import BlockStore


@pytest.fixture
def store(tmp_path):
    s = BlockStore.open(tmp_path / "data", namespace_id=7)
    yield s
    s.close()
