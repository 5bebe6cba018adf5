"""``ClientDatanodeService``: the built-in datanode's ``ClientDatanodeProtocol`` calls, for an
IPC server to dispatch on the datanode's IPC port (as a DataNode's
``ClientDatanodeProtocolServerSideTranslatorPB``). The frames, the connection context and
the answers are the IPC server's (``namenode/rpc/server.py``, ``formats/hadoop/ipc.py``);
this is the table it dispatches from: ``PROTOCOL``, ``METHODS`` (name -> request and
response classes) and ``handlers`` (name -> ``handler(request, caller)`` returning the
response).

* ``getReplicaVisibleLength``: what a reader may read of a block -- a replica being
  written's acknowledged bytes, a finalized block's length
  (``DataNodeServer.visible_length``), or a published block's size on disk;
  ``ReplicaNotFoundException`` if there is none here (``DFSInputStream.readBlockLength``
  then counts the block as empty on this datanode).
* ``getDatanodeInfo``: software version, no config version, uptime in seconds.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable

from nnlite.formats.hadoop import client_datanode as cd
from nnlite.formats.hadoop.hdfs import DatanodeLocalInfoProto
from nnlite.namenode.datanode.errors import ReplicaNotFoundError
from nnlite.namenode.datanode.server import DataNodeServer


class ClientDatanodeService:
    PROTOCOL = cd.PROTOCOL
    METHODS = cd.METHODS

    def __init__(self, datanode: DataNodeServer, software_version: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.datanode = datanode
        self.software_version = software_version
        self.clock = clock
        self.started = clock()
        self.handlers: dict[str, Callable[[Any, Any], Any]] = {
            "getReplicaVisibleLength": self.get_replica_visible_length,
            "getDatanodeInfo": self.get_datanode_info}

    def get_replica_visible_length(self, request: Any, caller: Any) -> Any:
        block = request.block
        self.datanode.check_pool(block)
        length = self.datanode.visible_length(block.blockId)
        if length is None:
            try:
                length = os.stat(self.datanode.store.data_path(block.blockId)).st_size
            except FileNotFoundError:
                raise ReplicaNotFoundError(
                    f"Replica not found for {block.poolId}:blk_{block.blockId}_"
                    f"{block.generationStamp}") from None
        return cd.GetReplicaVisibleLengthResponseProto(length=length)

    def get_datanode_info(self, request: Any, caller: Any) -> Any:
        return cd.GetDatanodeInfoResponseProto(localInfo=DatanodeLocalInfoProto(
            softwareVersion=self.software_version, configVersion="",
            uptime=int(self.clock() - self.started)))
