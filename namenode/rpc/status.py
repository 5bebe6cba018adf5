"""The namespace as ``hdfs.proto`` messages: file status, located blocks, the built-in
datanode, content summaries (``PBHelperClient.convert`` in Hadoop).

Invariants: a directory's ``length``, ``block_replication`` and ``blocksize`` are 0 and its
``childrenNum`` its number of entries; ``permission`` is the mode's 12 bits (``toShort``),
ACL and snapshots are ``flags`` bits (Hadoop 3: ``HAS_ACL``, ``SNAPSHOT_ENABLED``); no
erasure coding policy, encryption or symlink is ever set. Every block is on the built-in
datanode first, with the generation stamp ``GENSTAMP`` and the block token
``Locator.block_tokens`` signs for it (READ for a reader, WRITE for a writer:
``BlockManager.setBlockToken``), or an empty one when none is signed; in an HA set the
other namenodes' datanodes follow it (``Locator.peers``). Quantities Hadoop keeps signed (a
quota of -1) go as their two's complement in
the ``uint64`` fields, as protobuf's Java runtime writes a negative ``long``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from nnlite.formats.hadoop import hdfs
from nnlite.namenode.datanode.tokens import EMPTY_TOKEN, READ, WRITE, BlockTokenSecretManager
from nnlite.namenode.fsnamesystem import FileBlocks
from nnlite.namenode.namespace.erasure_coding import CELL_SIZE
from nnlite.namenode.namespace.erasure_coding import Policy as ErasureCodingPolicy
from nnlite.namenode.namespace.inode import INode
from nnlite.namenode.namespace.storage_policy import Policy, effective_id

IS_DIR, IS_FILE = hdfs.HdfsFileStatusFileType.IS_DIR, hdfs.HdfsFileStatusFileType.IS_FILE
HAS_ACL, SNAPSHOT_ENABLED = hdfs.HdfsFileStatusFlags.HAS_ACL, \
    hdfs.HdfsFileStatusFlags.SNAPSHOT_ENABLED
UINT64 = (1 << 64) - 1
RACK = "/default-rack"


class Datanode(Protocol):
    """The built-in datanode as the namenode names it to clients
    (``nnlite.namenode.datanode.server.DataNodeServer``)."""
    host: str
    xfer_port: int
    ipc_port: int
    datanode_uuid: str
    pool_id: str

    def expect(self, block_id: int, tail: tuple[int, int] | None = None) -> None:
        """Accept one WRITE_BLOCK of ``block_id`` (addBlock handed it to a writer)."""

    def forget(self, block_id: int) -> None:
        """The namenode is done with ``block_id`` (completed or abandoned)."""

    def finalized(self, block_id: int) -> int | None:
        """The length of the block once the datanode has finalized it, else None."""

    def digest(self, block_id: int) -> tuple[int, bytes, int] | None:
        """``checksum.block_digest`` of a block the datanode finalized, else None."""


def signed(value: int) -> int:
    """A ``uint64`` field back to the Java ``long`` the client meant (-1 for 2**64-1)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def file_status(node: INode, name: str, snapshottable: bool = False) -> Any:
    """HdfsFileStatusProto of ``node``, named ``name`` (empty for the path asked about)."""
    flags = (HAS_ACL if node.acl is not None else 0) | (SNAPSHOT_ENABLED if snapshottable else 0)
    status = hdfs.HdfsFileStatusProto(
        path=name.encode(), owner=node.owner, group=node.group, modification_time=node.mtime,
        access_time=node.atime, fileId=node.id & UINT64, storagePolicy=effective_id(node),
        flags=flags)
    # set in place: a FsPermissionProto made apart is built, then copied in (0.4 µs a status,
    # once per entry of a listing)
    status.permission.perm = node.permission & 0o7777
    if node.is_dir:
        status.fileType, status.length = IS_DIR, 0
        status.childrenNum = len(node.children)
    else:
        status.fileType, status.length = IS_FILE, node.length
        status.block_replication, status.blocksize = node.replication, node.block_size
        status.childrenNum = 0
    return status


def peer_info(peer: dict) -> Any:
    """DatanodeInfoProto of another namenode's datanode, as its position in etcd names it
    (``{"host", "xferPort", "ipcPort", "infoPort", "uuid"}``); its figures are unknown here."""
    return hdfs.DatanodeInfoProto(
        id=hdfs.DatanodeIDProto(ipAddr=peer["host"], hostName=peer["host"],
                                datanodeUuid=peer["uuid"], xferPort=peer["xferPort"],
                                infoPort=peer["infoPort"], ipcPort=peer["ipcPort"]),
        capacity=0, dfsUsed=0, remaining=0, blockPoolUsed=0,
        lastUpdate=int(time.time() * 1000), xceiverCount=0, location=RACK,
        adminState=hdfs.DatanodeInfoAdminState.NORMAL,
        lastUpdateMonotonic=int(time.monotonic() * 1000))


class Locator:
    """Blocks to LocatedBlocks on the built-in datanode; ``http_port`` is the namenode's
    (the datanode's info port), ``capacity`` the block store's (capacity, used, remaining).
    ``block_tokens``, when set, signs each located block's token
    (``namenode/datanode/tokens.py``); else tokens are empty.

    In an HA set, ``peers()`` names the datanodes of the other namenodes that are alive
    (``HAController.standby_datanodes``) and ``lacking(block_id)`` says a block is known to
    be missing from them (under-replicated, ``blocks/replication.py``). A block's locations
    are then this datanode first, then every peer unless the block is lacking -- as HDFS's
    ``BlockManager`` lists each live replica -- and a new block's pipeline is this datanode
    and the first peer (``BlockPlacementPolicyDefault`` chooses the writer's node first):
    the writer sends to the first, which mirrors to the second (HDFS's pipeline). A peer
    listed for a block it lost costs a reader one refused READ_BLOCK: ``DFSInputStream``
    marks the node dead and reads the next location, as it does for a datanode that is gone."""

    def __init__(self, datanode: Datanode | None, http_port: int,
                 capacity: Callable[[], tuple[int, int, int]],
                 block_tokens: BlockTokenSecretManager | None = None,
                 peers: Callable[[], list[dict]] = list,
                 lacking: Callable[[int], bool] = lambda block_id: False) -> None:
        self.datanode = datanode
        self.http_port = http_port
        self.capacity = capacity
        self.block_tokens = block_tokens
        self.peers = peers
        self.lacking = lacking

    def datanode_info(self) -> Any:
        dn = self.datanode
        if dn is None:
            raise LookupError("no datanode")
        total, used, remaining = self.capacity()
        return hdfs.DatanodeInfoProto(
            id=hdfs.DatanodeIDProto(ipAddr=dn.host, hostName=dn.host,
                                    datanodeUuid=dn.datanode_uuid, xferPort=dn.xfer_port,
                                    infoPort=self.http_port, ipcPort=dn.ipc_port),
            capacity=total, dfsUsed=used, remaining=remaining, blockPoolUsed=used,
            lastUpdate=int(time.time() * 1000), xceiverCount=0, location=RACK,
            adminState=hdfs.DatanodeInfoAdminState.NORMAL,
            lastUpdateMonotonic=int(time.monotonic() * 1000))

    def extended(self, block_id: int, num_bytes: int, genstamp: int) -> Any:
        pool = self.datanode.pool_id if self.datanode is not None else ""
        return hdfs.ExtendedBlockProto(poolId=pool, blockId=block_id,
                                       generationStamp=genstamp, numBytes=num_bytes)

    def located(self, block: tuple[int, int, int], offset: int, write: bool = False,
                exclude: frozenset[str] = frozenset(), user: str = "") -> Any:
        """LocatedBlockProto of ``block`` (id, bytes, genstamp) starting at ``offset``; with
        ``write``, for the writer addBlock hands it to, without the peers whose uuid is in
        ``exclude`` (the client's ``excludeNodes``: a datanode that failed its last
        pipeline, as ``BlockPlacementPolicy.chooseTarget`` skips them). The block token
        names ``user``, the caller (informational: a datanode checks no user)."""
        token = EMPTY_TOKEN if self.block_tokens is None else \
            self.block_tokens.token(block[0], WRITE if write else READ, user)
        located = hdfs.LocatedBlockProto(b=self.extended(*block), offset=offset,
                                         corrupt=False, blockToken=token)
        if self.datanode is not None:
            self._add(located, self.datanode_info(), self.datanode.datanode_uuid)
            peers = self.peers()
            if write:
                peers = [p for p in peers if p["uuid"] not in exclude][:1]
            elif peers and self.lacking(block[0]):
                peers = []
            for peer in peers:
                self._add(located, peer_info(peer), peer["uuid"])
        return located

    @staticmethod
    def _add(located: Any, info: Any, uuid: str) -> None:
        located.locs.append(info)
        located.isCached.append(False)
        located.storageTypes.append(hdfs.StorageTypeProto.DISK)
        located.storageIDs.append(f"DS-{uuid}")

    def located_blocks(self, file: FileBlocks, offset: int = 0, length: int | None = None,
                       writing: Any = None, user: str = "") -> Any:
        """LocatedBlocksProto of the blocks overlapping [offset, offset + length). For a file
        an RPC writer is writing (``writing``: ``Writes.in_progress``), its blocks so far and
        the one being written, as HDFS names a file under construction: ``fileLength`` the
        completed blocks', the last block incomplete (a reader asks the datanode how much
        of it is visible, ``getReplicaVisibleLength``)."""
        blocks, last = (file.blocks, None) if writing is None else writing
        end = None if length is None else offset + max(length, 1)
        size = sum(b[1] for b in blocks)
        out = hdfs.LocatedBlocksProto(fileLength=size if writing is not None else file.length,
                                      underConstruction=file.under_construction,
                                      isLastBlockComplete=not file.under_construction)
        position = 0
        for block in blocks:
            if position + block[1] > offset and (end is None or position < end):
                out.blocks.append(self.located(block, position, user=user))
            position += block[1]
        if last is not None:
            located = self.located(last, position, user=user)
            out.blocks.append(located)
            out.lastBlock.CopyFrom(located)
        elif blocks and not file.under_construction:
            out.lastBlock.CopyFrom(self.located(blocks[-1], position - blocks[-1][1],
                                                user=user))
        return out


def content_summary(summary: dict) -> Any:
    return hdfs.ContentSummaryProto(
        length=summary["length"], fileCount=summary["fileCount"],
        directoryCount=summary["directoryCount"], quota=summary["quota"] & UINT64,
        spaceConsumed=summary["spaceConsumed"], spaceQuota=summary["spaceQuota"] & UINT64,
        snapshotLength=summary.get("snapshotLength", 0),
        snapshotFileCount=summary.get("snapshotFileCount", 0),
        snapshotDirectoryCount=summary.get("snapshotDirectoryCount", 0),
        snapshotSpaceConsumed=summary.get("snapshotSpaceConsumed", 0),
        erasureCodingPolicy="" if summary["directoryCount"] else "Replicated")


def quota_usage(usage: dict) -> Any:
    return hdfs.QuotaUsageProto(
        fileAndDirectoryCount=usage["fileAndDirectoryCount"], quota=usage["quota"] & UINT64,
        spaceConsumed=usage["spaceConsumed"], spaceQuota=usage["spaceQuota"] & UINT64)


def storage_policy(policy: Policy) -> Any:
    """BlockStoragePolicyProto (``PBHelperClient.convert(BlockStoragePolicy)``)."""
    def types(names: tuple[str, ...]) -> Any:
        return hdfs.StorageTypesProto(
            storageTypes=[getattr(hdfs.StorageTypeProto, n) for n in names])
    return hdfs.BlockStoragePolicyProto(
        policyId=policy.id, name=policy.name, creationPolicy=types(policy.storage_types),
        creationFallbackPolicy=types(policy.creation_fallbacks),
        replicationFallbackPolicy=types(policy.replication_fallbacks))


def ec_policy(policy: ErasureCodingPolicy) -> Any:
    """ErasureCodingPolicyProto of a system policy as ``getErasureCodingPolicies`` lists it
    (``PBHelperClient.convertErasureCodingPolicy(ErasureCodingPolicyInfo)``): DISABLED."""
    return hdfs.ErasureCodingPolicyProto(
        name=policy.name, cellSize=CELL_SIZE, id=policy.id,
        state=hdfs.ErasureCodingPolicyState.DISABLED,
        schema=hdfs.ECSchemaProto(codecName=policy.codec, dataUnits=policy.data_units,
                                  parityUnits=policy.parity_units))


def server_defaults(defaults: dict) -> Any:
    return hdfs.FsServerDefaultsProto(
        blockSize=defaults["blockSize"], bytesPerChecksum=defaults["bytesPerChecksum"],
        writePacketSize=defaults["writePacketSize"], replication=defaults["replication"],
        fileBufferSize=defaults["fileBufferSize"],
        encryptDataTransfer=defaults["encryptDataTransfer"],
        trashInterval=defaults["trashInterval"],
        checksumType=hdfs.ChecksumTypeProto.CHECKSUM_CRC32C,
        keyProviderUri=defaults.get("keyProviderUri", ""),
        policyId=defaults.get("defaultStoragePolicyId", 0))
