"""Hadoop's ``ClientDatanodeProtocol`` (``org.apache.hadoop.hdfs.protocol.ClientDatanodeProtocol``
over protobuf, served on a DataNode's IPC port): the calls a client makes to a DataNode, and
``METHODS``, the service's table from method name to (request class, response class).

Only the calls a client of files makes are here: ``getReplicaVisibleLength`` (a reader of a
file being written asks each DataNode of the last block how many bytes it may read:
``DFSInputStream.readBlockLength``) and ``getDatanodeInfo`` (``dfsadmin -getDatanodeInfo``,
and a liveness probe). Field numbers are Hadoop 3's (``ClientDatanodeProtocol.proto``).
"""

from __future__ import annotations

from nnlite.formats.hadoop.hdfs import S as HDFS
from nnlite.formats.hadoop.proto import Schema

PROTOCOL = "org.apache.hadoop.hdfs.protocol.ClientDatanodeProtocol"
VERSION = 1

S = Schema("nnlite.hadoop.client_datanode", uses=[HDFS])
S.message("GetReplicaVisibleLengthRequestProto",
          "required ExtendedBlockProto block = 1")
S.message("GetReplicaVisibleLengthResponseProto",
          "required uint64 length = 1")
S.message("GetDatanodeInfoRequestProto")
S.message("GetDatanodeInfoResponseProto",
          "required DatanodeLocalInfoProto localInfo = 1")

_CLASSES = S.build()
GetReplicaVisibleLengthRequestProto = _CLASSES["GetReplicaVisibleLengthRequestProto"]
GetReplicaVisibleLengthResponseProto = _CLASSES["GetReplicaVisibleLengthResponseProto"]
GetDatanodeInfoRequestProto = _CLASSES["GetDatanodeInfoRequestProto"]
GetDatanodeInfoResponseProto = _CLASSES["GetDatanodeInfoResponseProto"]

METHODS = {
    "getReplicaVisibleLength": (GetReplicaVisibleLengthRequestProto,
                                GetReplicaVisibleLengthResponseProto),
    "getDatanodeInfo": (GetDatanodeInfoRequestProto, GetDatanodeInfoResponseProto),
}
