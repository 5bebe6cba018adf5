"""``store``: a BlockStore of its own (``second_store``: another); ``datanode``: a
DataNodeServer on it over real TCP (``client.running_datanode``), closed after the test;
``connect``: clients to it, closed after the test."""

import pytest

from nnlite.namenode.blocks.store import BlockStore
from tests.namenode.datanode.client import TransferClient, running_datanode


def _store(root):
    s = BlockStore.open(root, namespace_id=7)
    yield s
    s.close()


@pytest.fixture
def store(tmp_path):
    yield from _store(tmp_path / "data")


@pytest.fixture
def second_store(tmp_path):
    """Another datanode's store, of the same namespace (an HA set's standby)."""
    yield from _store(tmp_path / "data2")


@pytest.fixture
def datanode(store):
    with running_datanode(store) as server:
        yield server


@pytest.fixture
def connect(datanode):
    clients = []

    def open_client() -> TransferClient:
        clients.append(TransferClient(datanode.xfer_port, datanode.pool_id))
        return clients[-1]

    yield open_client
    for client in clients:
        client.close()
