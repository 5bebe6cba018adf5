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

With block tokens required, ``getReplicaVisibleLength`` first checks the caller's block token
(``DataNode.checkReadAccess``): a connection that authenticated with one (SASL, the IPC
server's ``block_token_caller``) carries its identifier, which must name the block asked
about, be unexpired and grant READ (``InvalidToken`` otherwise); a caller with no block token
(Kerberos) is refused, as Hadoop refuses a UGI without exactly one. A simple-mode
connection, which no SASL authenticated, is not checked.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from nnlite.formats.hadoop import client_datanode as cd
from nnlite.formats.hadoop.block_token import BlockTokenIdentifier
from nnlite.formats.hadoop.hdfs import DatanodeLocalInfoProto
from nnlite.namenode.datanode.errors import ReplicaNotFoundError
from nnlite.namenode.datanode.server import DataNodeServer
from nnlite.namenode.datanode.tokens import READ
from nnlite.namenode.errors import NamenodeError
from nnlite.namenode.security.identity import Caller


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
        self.check_read_access(block, caller)
        length = self.datanode.visible_length(block.blockId)
        if length is None:
            try:
                length = os.stat(self.datanode.store.data_path(block.blockId)).st_size
            except FileNotFoundError:
                raise ReplicaNotFoundError(
                    f"Replica not found for {block.poolId}:blk_{block.blockId}_"
                    f"{block.generationStamp}") from None
        return cd.GetReplicaVisibleLengthResponseProto(length=length)

    def check_read_access(self, block: Any, caller: Caller) -> None:
        """``DataNode.checkReadAccess``: the caller's block token lets it READ ``block``."""
        tokens = self.datanode.tokens
        if not self.datanode.require_tokens or tokens is None or caller.auth == "SIMPLE":
            return
        if not isinstance(caller.token, BlockTokenIdentifier):
            raise NamenodeError("Can't continue since none or more than one BlockTokenIdentifier "
                           "is found.")
        tokens.check_access(caller.token, block.blockId, READ, block.generationStamp,
                            block.poolId)

    def get_datanode_info(self, request: Any, caller: Any) -> Any:
        return cd.GetDatanodeInfoResponseProto(localInfo=DatanodeLocalInfoProto(
            softwareVersion=self.software_version, configVersion="",
            uptime=int(self.clock() - self.started)))
