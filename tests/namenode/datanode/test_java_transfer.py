"""The built-in datanode against Hadoop's own data transfer code (PySpark's hadoop-client-api
jar, over py4j): ``Sender`` writes the ops, ``PacketHeader`` and ``DataChecksum`` make the
packets as ``DataStreamer`` sends them, ``PipelineAck`` reads the acks, ``BlockReaderRemote``
-- the reader ``DFSInputStream`` uses -- reads the blocks back, and ``blockChecksum``'s answer
is read as ``FileChecksumHelper`` reads it. So the bytes are Hadoop's, not this project's."""

from __future__ import annotations

import os

import pytest

from nnlite.formats.hadoop.block_token import BlockTokenIdentifier
from nnlite.namenode.blocks import checksum
from tests.namenode.datanode.client import block_tokens, running_datanode

pytestmark = pytest.mark.spark

DATA = os.urandom(150_000) + b"end"          # 3 packets of 64 KiB, a partial last chunk
PACKET = 64 * 1024


class JavaTransfer:
    """Hadoop's classes for one connection to the datanode."""

    def __init__(self, spark, port: int, pool_id: str) -> None:
        self.gateway = spark.sparkContext._gateway
        self.jvm = jvm = spark.sparkContext._jvm
        self.hdfs = jvm.org.apache.hadoop.hdfs
        self.dt = self.hdfs.protocol.datatransfer
        self.pool_id = pool_id
        self.socket = jvm.java.net.Socket("127.0.0.1", port)
        self.out = jvm.java.io.DataOutputStream(
            jvm.java.io.BufferedOutputStream(self.socket.getOutputStream()))
        self.inp = jvm.java.io.DataInputStream(self.socket.getInputStream())
        self.summer = jvm.org.apache.hadoop.util.DataChecksum.newDataChecksum(
            jvm.org.apache.hadoop.util.DataChecksum.Type.CRC32C, 512)

    def close(self) -> None:
        self.socket.close()

    def block(self, block_id: int, num_bytes: int = 0):
        return self.hdfs.protocol.ExtendedBlock(self.pool_id, block_id, num_bytes, 1001)

    def token(self, proto=None):
        """An empty token, or ``proto`` (a TokenProto) as Hadoop's Token."""
        token = self.jvm.org.apache.hadoop.security.token.Token
        if proto is None:
            return token()
        text = self.jvm.org.apache.hadoop.io.Text
        return token(bytearray(proto.identifier), bytearray(proto.password), text(proto.kind),
                     text(proto.service))

    def target(self, datanode):
        """DatanodeInfo of a datanode, as the namenode names it in a LocatedBlock."""
        node = self.hdfs.protocol.DatanodeID("127.0.0.1", "localhost", datanode.datanode_uuid,
                                             datanode.xfer_port, 0, 0, 0)
        builder = getattr(self.hdfs.protocol, "DatanodeInfo$DatanodeInfoBuilder")()
        return builder.setNodeID(node).build()

    def array(self, cls, items=()):
        out = self.gateway.new_array(cls, len(items))
        for i, item in enumerate(items):
            out[i] = item
        return out

    def response(self):
        proto = getattr(self.hdfs.protocol.proto, "DataTransferProtos$BlockOpResponseProto")
        return proto.parseFrom(self.hdfs.protocolPB.PBHelperClient.vintPrefixed(self.inp))

    def write_block(self, block_id: int, data: bytes, token=None,
                    targets=()) -> list[tuple[int, list[str]]]:
        """Sender.writeBlock, DataStreamer's packets, PipelineAck: (seqno, statuses) per
        ack. ``targets`` is the whole pipeline, this datanode first, as DataStreamer passes
        its nodes (Sender sends them from the second on)."""
        jvm = self.jvm
        storage = jvm.org.apache.hadoop.fs.StorageType
        self.dt.Sender(self.out).writeBlock(
            self.block(block_id), storage.DEFAULT, self.token(token), "DFSClient_java",
            self.array(self.hdfs.protocol.DatanodeInfo, targets),
            self.array(storage, [storage.DEFAULT] * len(targets)), None,
            self.dt.BlockConstructionStage.PIPELINE_SETUP_CREATE, max(1, len(targets)), 0, 0,
            1001, self.summer,
            self.hdfs.server.datanode.CachingStrategy.newDefaultStrategy(), False, False,
            self.array(jvm.boolean), None, self.array(jvm.String))
        self.out.flush()
        assert self.response().getStatus().name() == "SUCCESS"
        seqno = 0
        for offset in range(0, len(data), PACKET):
            self.packet(offset, seqno, data[offset:offset + PACKET], last=False)
            seqno += 1
        self.packet(len(data), seqno, b"", last=True)
        acks = []
        for _ in range(seqno + 1):
            ack = self.dt.PipelineAck()
            ack.readFields(self.inp)
            statuses = [self.dt.PipelineAck.getStatusFromHeader(ack.getHeaderFlag(i)).name()
                        for i in range(ack.getNumOfReplies())]
            acks.append((ack.getSeqno(), statuses))
        return acks

    def packet(self, offset: int, seqno: int, data: bytes, last: bool) -> None:
        nio = self.jvm.java.nio
        sums = nio.ByteBuffer.allocate(4 * -(-len(data) // 512))
        self.summer.calculateChunkedSums(nio.ByteBuffer.wrap(bytearray(data)), sums)
        header = self.dt.PacketHeader(4 + len(data) + sums.capacity(), offset, seqno, last,
                                      len(data), False)
        header.write(self.out)
        self.out.write(sums.array())
        self.out.write(bytearray(data))
        self.out.flush()

    def read_block(self, datanode, block_id: int, offset: int, length: int) -> bytes:
        """BlockReaderRemote, checksums verified, on its own connection (a Peer)."""
        jvm = self.jvm
        channel = jvm.java.nio.channels.SocketChannel.open(
            jvm.java.net.InetSocketAddress("127.0.0.1", datanode.xfer_port))
        peer = self.hdfs.net.NioInetPeer(channel.socket())     # as DFSClient.newConnectedPeer
        node = self.hdfs.protocol.DatanodeID("127.0.0.1", "localhost", datanode.datanode_uuid,
                                             datanode.xfer_port, 0, 0, 0)
        reader = self.hdfs.client.impl.BlockReaderRemote.newBlockReader(
            "/f", self.block(block_id, len(DATA)), self.token(), offset, length, True,
            "DFSClient_java", peer, node, None,
            self.hdfs.server.datanode.CachingStrategy.newDefaultStrategy(), 0,
            jvm.org.apache.hadoop.conf.Configuration())
        buffer = jvm.java.nio.ByteBuffer.allocate(length)
        while buffer.hasRemaining():
            assert reader.read(buffer) > 0
        reader.close()      # CHECKSUM_OK went out after the trailing empty packet
        return bytes(buffer.array())

    def block_checksum(self, block_id: int, num_bytes: int):
        jvm = self.jvm
        options = self.hdfs.protocol.BlockChecksumOptions(
            self.hdfs.protocol.BlockChecksumType.MD5CRC)
        self.dt.Sender(self.out).blockChecksum(self.block(block_id, num_bytes), self.token(),
                                               options)
        self.out.flush()
        reply = self.response()
        assert reply.getStatus().name() == "SUCCESS"
        answer = reply.getChecksumResponse()
        md5 = jvm.org.apache.hadoop.io.MD5Hash(answer.getBlockChecksum().toByteArray())
        crc_type = self.hdfs.protocolPB.PBHelperClient.convert(answer.getCrcType())
        return answer.getBytesPerCrc(), answer.getCrcPerBlock(), bytes(md5.getDigest()), \
            crc_type.name()


@pytest.fixture
def java_transfer(spark, store):
    with running_datanode(store) as datanode:
        transfer = JavaTransfer(spark, datanode.xfer_port, datanode.pool_id)
        try:
            yield datanode, transfer
        finally:
            transfer.close()


def test_hadoop_s_sender_and_block_reader(java_transfer, store):
    datanode, java = java_transfer
    block_id = store.allocate()
    datanode.expect(block_id)
    assert java.write_block(block_id, DATA) == [(n, ["SUCCESS"]) for n in range(4)]
    assert store.data_path(block_id).read_bytes() == DATA
    assert java.read_block(datanode, block_id, 0, len(DATA)) == DATA
    assert java.read_block(datanode, block_id, 70_001, 9_999) == DATA[70_001:80_000]
    crcs = checksum.chunk_crcs(DATA)
    assert java.block_checksum(block_id, len(DATA)) == \
        (512, len(crcs) // 4, checksum.block_digest(crcs)[1], "CRC32C")


def test_hadoop_s_sender_through_a_pipeline_of_two(spark, store, second_store):
    """Sender.writeBlock naming the second datanode as a target, with the block token the
    namenode signed: both datanodes hold the block, each ack has both replies."""
    with running_datanode(store, "secret") as first, \
            running_datanode(second_store, "secret") as second:
        java = JavaTransfer(spark, first.xfer_port, first.pool_id)
        try:
            block_id = store.allocate()
            first.expect(block_id)
            token = block_tokens("secret", first.pool_id).token(block_id, "WRITE")
            acks = java.write_block(block_id, DATA, token,
                                    [java.target(first), java.target(second)])
        finally:
            java.close()
    assert acks == [(n, ["SUCCESS", "SUCCESS"]) for n in range(4)]
    assert store.data_path(block_id).read_bytes() == DATA
    assert second_store.data_path(block_id).read_bytes() == DATA


def test_hadoops_block_token_identifier_reads_ours_and_we_read_hadoops(spark):
    """BlockTokenIdentifier.readFields (the legacy layout's reader a DataNode and
    SaslDataTransferClient use) reads the identifier the namenode signs, field by field;
    and the bytes Hadoop's writeLegacy makes decode here to the same fields."""
    jvm = spark.sparkContext._jvm
    block = jvm.org.apache.hadoop.hdfs.security.token.block
    ours = block_tokens("secret", "BP-7-nnlite-0").token(1 << 40, "WRITE", user="alice")
    ident = block.BlockTokenIdentifier()
    ident.readFields(jvm.java.io.DataInputStream(
        jvm.java.io.ByteArrayInputStream(bytearray(ours.identifier))))
    decoded = BlockTokenIdentifier.decode(ours.identifier)
    assert (ident.getExpiryDate(), ident.getKeyId(), ident.getUserId(),
            ident.getBlockPoolId(), ident.getBlockId(), ident.getAccessModes().toString()) == \
        (decoded.expiry_date, decoded.key_id, "alice", "BP-7-nnlite-0", 1 << 40, "[WRITE]")
    assert bytes(ident.getBytes()) == ours.identifier
    modes = jvm.java.util.EnumSet.of(getattr(block, "BlockTokenIdentifier$AccessMode").READ,
                                     getattr(block, "BlockTokenIdentifier$AccessMode").COPY)
    theirs = block.BlockTokenIdentifier("bob", "BP-9", 77, modes, None, None, False)
    theirs.setExpiryDate(1_700_000_000_123)
    theirs.setKeyId(-5)
    back = BlockTokenIdentifier.decode(bytes(theirs.getBytes()))
    assert (back.expiry_date, back.key_id, back.user_id, back.block_pool_id, back.block_id,
            back.modes) == (1_700_000_000_123, -5, "bob", "BP-9", 77, {"READ", "COPY"})
