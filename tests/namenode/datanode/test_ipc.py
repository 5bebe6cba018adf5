"""ClientDatanodeProtocol's calls on the built-in datanode (namenode/datanode/ipc.py), each
request and answer through its protobuf bytes as an IPC server passes them, and the block
token check a secure caller's call passes first."""

from __future__ import annotations

import pytest

from nnlite.formats.hadoop import client_datanode as cd
from nnlite.formats.hadoop.block_token import BlockTokenIdentifier
from nnlite.formats.hadoop.hdfs import ExtendedBlockProto
from nnlite.formats.hadoop.proto import parse
from nnlite.namenode.datanode.errors import (
    BlockTokenError,
    DataTransferError,
    ReplicaNotFoundError,
)
from nnlite.namenode.datanode.ipc import ClientDatanodeService
from nnlite.namenode.datanode.tokens import READ, WRITE
from nnlite.namenode.errors import NamenodeError
from nnlite.namenode.security.identity import Caller
from tests.namenode.datanode.client import running_datanode
from tests.namenode.datanode.test_server import DATA, start_write


def call(service, method: str, request):
    request_class, response_class = service.METHODS[method]
    request = parse(request_class, request.SerializeToString())
    answer = service.handlers[method](request, None)
    return parse(response_class, answer.SerializeToString())


def visible_length(service, block_id: int, pool: str) -> int:
    block = ExtendedBlockProto(poolId=pool, blockId=block_id, generationStamp=1001)
    return call(service, "getReplicaVisibleLength",
                cd.GetReplicaVisibleLengthRequestProto(block=block)).length


def test_the_visible_length_of_a_block_being_written_and_finalized(store, datanode, connect):
    service = ClientDatanodeService(datanode, "nnlite 0.1.0")
    block_id, writer = start_write(store, datanode, connect)
    assert visible_length(service, block_id, datanode.pool_id) == 0
    writer.send(writer.packet(0, 0, DATA[:1000], sync=True))
    writer.ack()
    assert visible_length(service, block_id, datanode.pool_id) == 1000
    writer.send(writer.packet(1000, 1, b"", last=True))
    writer.ack()
    assert visible_length(service, block_id, datanode.pool_id) == 1000
    datanode.forget(block_id)                       # completed: the block on disk
    assert visible_length(service, block_id, datanode.pool_id) == 1000


def test_no_replica_and_another_pool(store, datanode):
    service = ClientDatanodeService(datanode, "nnlite 0.1.0")
    with pytest.raises(ReplicaNotFoundError, match="Replica not found for BP-7-nnlite-0:blk_9_"):
        visible_length(service, 9, datanode.pool_id)
    assert ReplicaNotFoundError.JAVA_CLASS.endswith("datanode.ReplicaNotFoundException")
    with pytest.raises(DataTransferError, match="block pool BP-1 is not served"):
        visible_length(service, 9, "BP-1")


def test_datanode_info(datanode):
    ticks = iter([100.0, 142.5])
    service = ClientDatanodeService(datanode, "nnlite 0.1.0", clock=lambda: next(ticks))
    info = call(service, "getDatanodeInfo", cd.GetDatanodeInfoRequestProto()).localInfo
    assert (info.softwareVersion, info.uptime) == ("nnlite 0.1.0", 42)
    assert service.PROTOCOL == "org.apache.hadoop.hdfs.protocol.ClientDatanodeProtocol"


def test_a_block_tokens_caller_reads_only_the_block_its_token_grants(store):
    """``DataNode.checkReadAccess``: with block tokens required, the identifier a caller's
    SASL handshake proved (``block_token_caller``) must name the block asked about and grant
    READ; a caller with none (Kerberos) is refused; a simple connection is not checked."""
    with running_datanode(store, "set-secret", require_tokens=True) as datanode:
        service = ClientDatanodeService(datanode, "nnlite 0.1.0")
        tokens, pool = datanode.tokens, datanode.pool_id
        block = ExtendedBlockProto(poolId=pool, blockId=5, generationStamp=1001)

        def ask(token=None, auth="TOKEN"):
            ident = None if token is None else BlockTokenIdentifier.decode(token.identifier)
            caller = Caller("alice", "127.0.0.1", auth, token=ident)
            return service.handlers["getReplicaVisibleLength"](
                cd.GetReplicaVisibleLengthRequestProto(block=block), caller)

        with pytest.raises(BlockTokenError, match=r"Block token with .* doesn't apply to "
                                                  rf"block {pool}:blk_5_1001"):
            ask(tokens.token(6, READ, "alice"))
        with pytest.raises(BlockTokenError, match="doesn't have READ permission"):
            ask(tokens.token(5, WRITE, "alice"))
        with pytest.raises(NamenodeError, match="none or more than one BlockTokenIdentifier"):
            ask(auth="KERBEROS")
        with pytest.raises(ReplicaNotFoundError):       # past the check: no replica here
            ask(tokens.token(5, READ, "alice"))
        with pytest.raises(ReplicaNotFoundError):
            ask(auth="SIMPLE")
