"""``store``: a BlockStore of its own; ``datanode``: a DataNodeServer on it over real TCP
(``client.running_datanode``), closed after the test; ``connect``: clients to it, closed
after the test."""

import pytest

from nnlite.namenode.blocks.store import BlockStore
from tests.namenode.datanode.client import TransferClient, running_datanode


@pytest.fixture
def store(tmp_path):
    s = BlockStore.open(tmp_path / "data", namespace_id=7)
    yield s
    s.close()


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
