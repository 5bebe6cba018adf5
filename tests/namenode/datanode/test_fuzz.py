"""A fuzz run of the transfer port: a valid WRITE_BLOCK session (op, packets, the last
packet) damaged one way per example -- cut short, bytes flipped, garbage spliced in -- sent
on a connection of its own. Whatever arrives: no internal error, every connection ends,
nothing is left in rbw/ once the namenode's lease recovery has run (``recover``: a replica
cut after an acknowledged packet waits for it), a block is published only whole or at its
acknowledged bytes and with the CRCs of its bytes, and the server goes on serving."""

from __future__ import annotations

import logging
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nnlite.namenode.blocks import checksum
from tests.namenode.datanode.client import TransferClient
from tests.namenode.datanode.test_server import assert_serving, rbw_files, wait_until

PIECE = os.urandom(5000)


def session(client: TransferClient, block_id: int) -> bytes:
    """What a client sends for a block of three packets."""
    return (client.write_request(block_id) + client.packet(0, 0, PIECE[:2000])
            + client.packet(2000, 1, PIECE[2000:], sync=True)
            + client.packet(len(PIECE), 2, b"", last=True))


damage = st.one_of(
    st.tuples(st.just("cut"), st.floats(0, 1)),
    st.tuples(st.just("flip"), st.lists(st.tuples(st.floats(0, 1), st.integers(1, 255)),
                                        min_size=1, max_size=4)),
    st.tuples(st.just("splice"), st.tuples(st.floats(0, 1), st.binary(min_size=1,
                                                                       max_size=40))))


def damaged(data: bytes, how) -> bytes:
    kind, what = how
    if kind == "cut":
        return data[:int(what * (len(data) - 1))]
    if kind == "flip":
        out = bytearray(data)
        for where, mask in what:
            out[int(where * (len(out) - 1))] ^= mask
        return bytes(out)
    where, garbage = what
    at = int(where * len(data))
    return data[:at] + garbage + data[at:]


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(how=damage)
def test_damaged_sessions(store, datanode, caplog, how):
    caplog.set_level(logging.ERROR, logger="nnlite.namenode.datanode")
    block_id = store.allocate()
    datanode.expect(block_id)
    with TransferClient(datanode.xfer_port, datanode.pool_id) as client:
        client.sock.settimeout(5)
        client.send(damaged(session(client, block_id), how))
        client.sock.shutdown(1)         # all sent: the server reads to the end, answers, closes
        while client.rfile.read(4096):
            pass
    wait_until(lambda: datanode.connection_count == 0)
    recovered = datanode.recover(block_id)
    assert rbw_files(store) == []
    assert recovered is None or recovered == len(store.data_path(block_id).read_bytes())
    if store.has(block_id):
        data = store.data_path(block_id).read_bytes()
        assert store.read_crcs(block_id, len(data))[0] == checksum.chunk_crcs(data)
        assert datanode.finalized(block_id) == len(data)
    assert [r.getMessage() for r in caplog.records] == []


def test_the_server_serves_after_the_fuzz(store, datanode, connect):
    assert_serving(store, datanode, connect)
