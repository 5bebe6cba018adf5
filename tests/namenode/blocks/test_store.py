"""store.py: a BlockStore's directory (one owner, one namespace, tmp/ cleared, ids allocated
above every block), its blocks opened, copied and their CRCs read, and where it lives."""

from __future__ import annotations

import pytest

from nnlite.namenode import errors
from nnlite.namenode.blocks import checksum
from nnlite.namenode.blocks.store import BlockStore, default_data_dir
from nnlite.namenode.blocks.streams import BlockMissingError
from tests.namenode.blocks.helpers import CONTENT, written


def test_copy_prefix_and_crcs_of_a_shorter_prefix(store):
    sealed = written(store, CONTENT[:3000], 4096)
    block = sealed.blocks[0]
    assert store.read_crcs(block[0], 1300) == (checksum.chunk_crcs(CONTENT[:1300]),
                                               checksum.CRC32C)
    copy, digest = store.copy_prefix((block[0], 1300))
    assert copy[1] == 1300 and copy[0] != block[0]
    assert store.data_path(copy[0]).read_bytes() == CONTENT[:1300]
    assert digest == checksum.block_digest(checksum.chunk_crcs(CONTENT[:1300]))
    assert copy[0] in store.held()


def test_missing_or_short_blocks_are_reported(store):
    with pytest.raises(BlockMissingError):
        store.open_block(999, 1)
    sealed = written(store, b"abc", 1024)
    with pytest.raises(BlockMissingError):
        store.open_block(sealed.blocks[0][0], 4)


def test_opening_refuses_another_namespace_and_a_second_owner(tmp_path):
    store = BlockStore.open(tmp_path / "data", namespace_id=1)
    with pytest.raises(errors.StorageError, match="in use"):
        BlockStore.open(tmp_path / "data", namespace_id=1)
    store.close()
    BlockStore.open(tmp_path / "data", namespace_id=2).close()   # empty: taken over
    store = BlockStore.open(tmp_path / "data", namespace_id=2)
    written(store, b"x", 1024)
    store.close()
    with pytest.raises(errors.StorageError, match="namespace 2"):
        BlockStore.open(tmp_path / "data", namespace_id=3)


def test_opening_clears_tmp_and_allocates_above_every_id(tmp_path):
    store = BlockStore.open(tmp_path / "data", namespace_id=1, last_block_id=5)
    writer = store.writer(1024)
    writer.write(b"left behind by a crash")           # never sealed
    store.close()
    store = BlockStore.open(tmp_path / "data", namespace_id=1, last_block_id=5)
    assert list(store.tmp.iterdir()) == []
    sealed = written(store, b"x", 1024)
    store.close()
    store = BlockStore.open(tmp_path / "data", namespace_id=1, last_block_id=2)
    assert store.allocate() == sealed.blocks[0][0] + 1
    store.close()


def test_default_data_dir_is_beside_the_first_name_dir(tmp_path):
    assert default_data_dir(tmp_path / "name") == tmp_path / "name-data"
    assert default_data_dir(str(tmp_path / "name") + "/") == tmp_path / "name-data"
