"""``DataNodeServer``: the namenode's built-in DataNode, serving Hadoop's data transfer
protocol on its transfer port over the namenode's own block store (``namenode.blocks``).

A connection carries ops one after another (``DataXceiver.run``: a client keeps a
connection to read the next block): each op is the 3-byte head and a delimited request
(``formats.hadoop.datatransfer``), answered with a delimited ``BlockOpResponseProto``:

* The SASL handshake (``sasl.DataTransferSasl``): with ``protection``
  (``dfs.data.transfer.protection`` in secure mode) a connection opens with it, and its
  ops run over the wrapped streams when the qop is integrity or privacy.
* Block tokens (``tokens.BlockTokenSecretManager``): with ``require_tokens``
  (``dfs.block.access.token.enable``) every op shows a token for its block and mode --
  WRITE for WRITE_BLOCK, READ for READ_BLOCK and BLOCK_CHECKSUM -- or is answered
  ERROR_ACCESS_TOKEN and the connection closed (``DataXceiver.checkAccess``).
* WRITE_BLOCK (``receiver.BlockReceiver``). Accepted only for a block id the namenode
  handed to a writer (``expect``), or with a WRITE token signed with the block keys this
  datanode shares with the namenodes of its HA set, never for a block published or being
  written; 512 bytes per checksum of CRC32C, CRC32 or NULL; stage
  PIPELINE_SETUP_CREATE, or PIPELINE_SETUP_APPEND for a block ``expect``ed with the block it
  continues. With targets, the pipeline goes on through the first (``mirror.Mirror``): a
  target that cannot be reached or refuses fails the setup (ERROR, ``firstBadLink`` naming
  it). Answered SUCCESS -- the replica's ``rbw/`` files are created meanwhile, off the
  answer's path, and the first packet waits for them (a failure is that packet's ERROR
  ack, which the client meets as a datanode failing mid-write) -- then packets and their
  acks; on the last packet the block is
  published and its length recorded (``finalized``) before its ack. A broken pipeline of
  several is recovered on the datanodes left (PIPELINE_SETUP_STREAMING_RECOVERY,
  PIPELINE_CLOSE_RECOVERY: ``replicas.ReplicaMap``). A write of one datanode whose
  connection broke leaves the bytes it wrote in ``rbw/`` for the namenode's lease
  recovery, which finalizes them (``recover``, also of a write still under way, whose
  writer it stops) or lets them go (``forget``).
* READ_BLOCK (``sender.BlockSender``): SUCCESS with ``ReadOpChecksumInfoProto``, the
  packets, then the client's ``ClientReadStatusProto`` (after a whole range only). A block
  being written is read up to its acknowledged bytes (``visible_length``). The sender of a
  range (``sender``) also serves readers in this process: WebHDFS's OPEN of a file being
  written reads its last block from it (``BlockSender.read``).
* BLOCK_CHECKSUM (``BlockChecksumHelper.ReplicatedBlockChecksumComputer``): bytesPerCrc 512,
  ``crcPerBlock`` the CRCs in the meta file, and the MD5 of the CRCs of the first
  ``numBytes`` bytes (the partial last chunk's recomputed when shorter than the block:
  ``BlockStore.read_crcs``), or with COMPOSITE_CRC the block's CRC as 4 bytes; the type of
  the block's CRCs. So a file's checksum over ``hdfs://`` is the one WebHDFS answers.

Errors: a refused op is answered with its status and message (``errors.DataTransferError``)
and the connection closed; so is a request that does not parse, an unknown op or another
protocol version (``ERROR_UNSUPPORTED``, ``ERROR``: Hadoop's DataXceiver only closes, an
answer says why). The server goes on serving every other connection. A connection is
closed after ``KEEPALIVE`` idle seconds between ops, and a read inside an op waits at most
``SOCKET_TIMEOUT`` (``dfs.client.socket-timeout``, 60 s, plus the 5 s a DataNode adds).
Past ``max_connections`` at once, a new connection is closed unanswered (as
``DataXceiverServer`` past ``dfs.datanode.max.transfer.threads``).

Identity, as the namenode's RPC side reports this DataNode: ``host``, ``xfer_port``,
``ipc_port`` (0 until an IPC server serves ``ipc.ClientDatanodeService`` and sets it),
``datanode_uuid`` (kept in the data dir, ``UUID_FILE``), ``pool_id``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from nnlite.durability import durable
from nnlite.formats.hadoop import datatransfer as dt
from nnlite.formats.hadoop.datatransfer import (
    BlockConstructionStage,
    BlockOpResponseProto,
    ClientReadStatusProto,
    Op,
    OpBlockChecksumResponseProto,
    Status,
)
from nnlite.formats.hadoop.hdfs import BlockChecksumTypeProto, ChecksumTypeProto
from nnlite.formats.hadoop.proto import ProtoError
from nnlite.namenode.blocks import checksum, rwr
from nnlite.namenode.blocks.store import BlockStore
from nnlite.namenode.blocks.streams import GENSTAMP, BlockMissingError
from nnlite.namenode.datanode.errors import DataTransferError
from nnlite.namenode.datanode.mirror import Mirror
from nnlite.namenode.datanode.receiver import BlockReceiver
from nnlite.namenode.datanode.replica import ReplicaWriter
from nnlite.namenode.datanode.replicas import ReplicaMap
from nnlite.namenode.datanode.sasl import DataTransferSasl
from nnlite.namenode.datanode.sender import BlockSender
from nnlite.namenode.datanode.stream import read_message, read_packet
from nnlite.namenode.datanode.tokens import READ, WRITE, BlockTokenSecretManager
from nnlite.namenode.errors import AddressError

log = logging.getLogger(__name__)

SOCKET_TIMEOUT = 65.0       # dfs.client.socket-timeout (60 s) + READ_TIMEOUT_EXTENSION (5 s)
KEEPALIVE = 4.0             # dfs.datanode.socket.reuse.keepalive (4000 ms)
MAX_CONNECTIONS = 4096      # dfs.datanode.max.transfer.threads
# A connection's read buffer: reading pauses above twice this. asyncio's 64 KiB default
# paused and resumed the socket for every 64 KiB packet.
STREAM_BUFFER = 1 << 20
UUID_FILE = "datanode.uuid"
WRITE_STAGES = (BlockConstructionStage.PIPELINE_SETUP_CREATE,
                BlockConstructionStage.PIPELINE_SETUP_APPEND)
RECOVERY_STAGES = (BlockConstructionStage.PIPELINE_SETUP_STREAMING_RECOVERY,
                   BlockConstructionStage.PIPELINE_CLOSE_RECOVERY)
VERIFY_KINDS = (ChecksumTypeProto.CHECKSUM_NULL, ChecksumTypeProto.CHECKSUM_CRC32,
                ChecksumTypeProto.CHECKSUM_CRC32C)


def block_pool_id(namespace_id: int) -> str:
    """The block pool of a namespace. HDFS's is ``BP-<random>-<namenode ip>-<format time>``,
    made once at format and shared by every namenode of an HA set; nnlite derives it from the
    namespace id, the one thing every namenode (and every restart) of a namespace shares.
    Clients treat it as opaque and send it back in every ``ExtendedBlockProto``."""
    return f"BP-{namespace_id}-nnlite-0"


def load_uuid(store: BlockStore) -> str:
    """This data dir's DataNode UUID (``DatanodeID.datanodeUuid``), made on first use and
    kept in ``<data dir>/datanode.uuid`` (a DataNode keeps it in its storage's VERSION)."""
    path = store.root / UUID_FILE
    try:
        return str(uuid.UUID(path.read_text().strip()))
    except (FileNotFoundError, ValueError):
        value = str(uuid.uuid4())
        durable.write_atomic(path, f"{value}\n".encode())
        return value


class DataNodeServer:
    """The transfer port. ``expect``/``forget`` come from the namenode's RPC side (addBlock,
    complete, abandonBlock); ``finalized`` and ``digest`` tell it what a WRITE_BLOCK
    published. Runs on the namenode's event loop; ``start`` and ``close`` are coroutines."""

    def __init__(self, store: BlockStore, tokens: BlockTokenSecretManager | None = None,
                 max_connections: int = MAX_CONNECTIONS, *,
                 require_tokens: bool = False, protection: tuple[str, ...] = (),
                 cipher_suites: str = "", cipher_key_bits: int = 128) -> None:
        self.store = store
        self.max_connections = max_connections
        self.pool_id = block_pool_id(store.namespace_id)
        # with the HA set's block keys: writes the active namenode signed are accepted
        self.tokens = tokens
        # dfs.block.access.token.enable: every op shows a token (DataXceiver.checkAccess)
        self.require_tokens = require_tokens and tokens is not None
        # secure mode's dfs.data.transfer.protection: the SASL handshake opens a connection
        self.sasl = DataTransferSasl(tokens, protection, cipher_suites, cipher_key_bits) \
            if protection and tokens is not None else None
        self.datanode_uuid = load_uuid(store)
        self.host = ""
        self.xfer_port = 0
        self.ipc_port = 0
        self.replicas = ReplicaMap(store, self.tokens)
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task] = set()
        self._handlers: dict[int, Callable[..., Awaitable[bool]]] = {
            Op.WRITE_BLOCK: self._write_block, Op.READ_BLOCK: self._read_block,
            Op.BLOCK_CHECKSUM: self._block_checksum}

    # ------------------------------------------------------------------ the RPC side's view

    def expect(self, block_id: int, tail: tuple[int, int] | None = None) -> None:
        """Accept one WRITE_BLOCK of ``block_id`` (addBlock handed it to a writer; the store
        holds it). With ``tail`` = ``(block id, num_bytes)``, the block continues the first
        ``num_bytes`` of that published block (an append: PIPELINE_SETUP_APPEND)."""
        self.replicas.expect(block_id, tail)

    def forget(self, block_id: int) -> None:
        """The namenode is done with ``block_id`` (completed or abandoned): drop what this
        server knows of it, discarding a replica parked for recovery. A write under way is
        not stopped, but publishes nothing the namenode will refer to."""
        parked = self.replicas.forget(block_id)
        if parked is not None:
            parked.discard()

    def recover(self, block_id: int) -> int | None:
        """Lease recovery of the block a writer left (the namenode's
        ``FSNamesystem.internalReleaseLease`` starts a block recovery; the DataNode's
        ``BlockRecoveryWorker`` runs ``FsDatasetImpl.initReplicaRecovery`` then
        ``updateReplicaUnderRecovery``, and the namenode records the result with
        ``commitBlockSynchronization``). The replica is taken from its writer -- parked
        after its connection broke, or still being written, whose writer is stopped
        (``initReplicaRecovery`` stops an RBW replica's writer first) -- and finalized at
        the bytes it holds (the recovery's length of an RBW replica is its bytes on disk,
        ``ReplicaUnderRecovery.createInfo``: every byte a writer's hflush/hsync returned
        for, and the packets taken since), published durably by the store's rule (fsync,
        rename into ``blocks/``, fsync the directory), and recorded as ``finalized``;
        returns that length. A block already finalized returns its length. A replica this
        datanode has not heard of since it started is one a restart cut off in ``rbw/``:
        finalized at the length its checksums vouch for (``rwr.finalize``, HDFS's RWR
        replica). None when there is nothing to keep: no replica, or one with no byte
        (discarded). Runs on the caller's thread: the fsyncs block it, once per recovered
        lease."""
        done = self.finalized(block_id)
        if done is not None:
            return done
        replica = self.replicas.take(block_id, stop=True)
        if replica is None:
            return None if self.replicas.known(block_id) else rwr.finalize(self.store, block_id)
        with replica.lock:          # a packet or an hsync of its writer ends first
            if replica.fd is None:
                return self._published_meanwhile(replica)
            if replica.length == 0:
                replica.discard()
                return None
            try:
                length, digest = replica.publish()
            except (OSError, BlockMissingError):
                log.warning("datanode: blk_%d could not be finalized for a lease recovery",
                            block_id, exc_info=True)
                replica.discard()
                return None
        self.replicas.published(block_id, length, digest)
        log.info("datanode: blk_%d finalized at %d bytes by a lease recovery", block_id,
                 length)
        return length

    def _published_meanwhile(self, replica: ReplicaWriter) -> int | None:
        """A replica taken from a writer that had just published it (its last packet) or
        had not opened it yet: the length it was published at, or None."""
        if not self.store.has(replica.block_id):
            return None
        self.replicas.published(replica.block_id, replica.length, replica.digest())
        return replica.length

    def finalized(self, block_id: int) -> int | None:
        """The length of ``block_id`` if a WRITE_BLOCK published it, else None."""
        done = self.replicas.finalized(block_id)
        return None if done is None else done[0]

    def visible_length(self, block_id: int) -> int | None:
        """The bytes of ``block_id`` a reader may see: the acknowledged bytes of a block
        being written (after an hflush, what was flushed), the length of a finalized one;
        None if this datanode has neither (``getReplicaVisibleLength``)."""
        replica = self.replicas.being_written(block_id)
        return replica.acked if replica is not None else self.finalized(block_id)

    def sender(self, block_id: int, offset: int, length: int,
               send_checksums: bool = True) -> BlockSender:
        """The sender of ``length`` bytes from ``offset`` of ``block_id``: of the replica
        being written up to its acknowledged bytes (taken now: call it on the event loop),
        else of the published block."""
        replica = self.replicas.being_written(block_id)
        return BlockSender(self.store, block_id, offset, length, send_checksums,
                           None if replica is None else replica.visible())

    def digest(self, block_id: int) -> tuple[int, bytes, int] | None:
        """``checksum.block_digest`` of a block a WRITE_BLOCK published (for the file
        checksum the namenode records at complete), else None."""
        done = self.replicas.finalized(block_id)
        return None if done is None else done[1]

    @property
    def connection_count(self) -> int:
        """Connections being served now (a DataNode's xceiver count)."""
        return len(self._connections)

    # ------------------------------------------------------------------ serving

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` (0: a free port); returns the port."""
        try:
            self._server = await asyncio.start_server(self._accept, host, port,
                                                      reuse_address=True, backlog=1024,
                                                      limit=STREAM_BUFFER)
        except OSError as exc:
            raise AddressError(f"cannot listen on {host}:{port} (the datanode's transfer "
                               f"port): {exc.strerror or exc}") from exc
        self.host = host
        self.xfer_port = self._server.sockets[0].getsockname()[1]
        log.info("datanode %s listening on %s:%d (block pool %s)", self.datanode_uuid, host,
                 self.xfer_port, self.pool_id)
        return self.xfer_port

    async def close(self) -> None:
        """Stop listening and end every connection. A write under way publishes nothing;
        its replica, and every replica parked for recovery, stays in ``rbw/`` (as a DataNode
        that stops keeps its RBW replicas), for the lease recovery of the next start."""
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.gather(*self._connections, return_exceptions=True)
        for replica in self.replicas.drop_parked():
            await asyncio.get_running_loop().run_in_executor(None, replica.release)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        if len(self._connections) >= self.max_connections:
            # DataXceiverServer: "Xceiver count exceeds the limit of concurrent xceivers"
            log.warning("datanode: %d connections, the most it serves: %s refused",
                        len(self._connections), peer)
            writer.close()
            return
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            if self.sasl is not None:
                reader, writer = await self.sasl.accept(reader, writer, SOCKET_TIMEOUT)
            await self._serve(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError) as exc:
            log.debug("datanode connection from %s ended: %r", peer, exc)
        except asyncio.CancelledError:
            # close(): the task ends here, so asyncio's stream callback finds no error
            log.debug("datanode connection from %s closed by the server's stop", peer)
        except (DataTransferError, ProtoError) as exc:
            log.info("datanode: %s (from %s)", exc, peer)
        except Exception:
            log.exception("datanode: serving %s failed", peer)
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        timeout = SOCKET_TIMEOUT
        while True:
            try:
                async with asyncio.timeout(timeout):
                    head = await reader.readexactly(dt.OP_HEAD.size)
            except (asyncio.IncompleteReadError, TimeoutError):
                return          # the client is done (or idle past the keepalive)
            try:
                async with asyncio.timeout(SOCKET_TIMEOUT):
                    op = self._op(dt.decode_op_head(head))
                    request = await read_message(reader, dt.REQUESTS[op])
            except (ProtoError, DataTransferError) as exc:
                status = getattr(exc, "status", Status.ERROR)
                await self._respond(writer, status, str(exc))
                log.info("datanode: refused a request: %s", exc)
                return
            if not await self._run(op, request, reader, writer):
                return
            timeout = KEEPALIVE

    def _op(self, code: int) -> Op:
        if code not in self._handlers:
            name = Op(code).name if code in Op._value2member_map_ else "unknown"
            raise DataTransferError(f"Unsupported op {code} ({name}) in data stream",
                                    Status.ERROR_UNSUPPORTED)
        return Op(code)

    async def _run(self, op: Op, request: Any, reader: asyncio.StreamReader,
                   writer: asyncio.StreamWriter) -> bool:
        """Serve one op; whether the connection may carry another."""
        try:
            return await self._handlers[op](request, reader, writer)
        except DataTransferError as exc:
            if not exc.answered:
                await self._respond(writer, exc.status, str(exc), exc.first_bad_link)
            log.info("datanode: %s %s", op.name, exc)
            return False

    async def _respond(self, writer: asyncio.StreamWriter, status: int, message: str = "",
                       first_bad_link: str | None = None, **fields: Any) -> None:
        response = BlockOpResponseProto(status=status, **fields)
        if message:
            response.message = message
        if first_bad_link is not None:
            response.firstBadLink = first_bad_link
        writer.write(dt.delimited(response))
        await writer.drain()

    def check_access(self, header: Any, op: Op, mode: str) -> None:
        """``DataXceiver.checkAccess``: with block tokens required, the op's token
        (``BaseHeaderProto.token``) must let its bearer use ``mode`` on its block, else
        ``BlockTokenError`` (answered ERROR_ACCESS_TOKEN; a write's answer names this
        datanode as ``firstBadLink``, as Hadoop's does)."""
        if not self.require_tokens or self.tokens is None:
            return
        block = header.block
        try:
            self.tokens.check(header.token, block.blockId, mode, block.generationStamp,
                              pool_id=block.poolId)
        except DataTransferError as exc:
            if mode == WRITE:
                exc.first_bad_link = f"{self.host}:{self.xfer_port}"
            log.warning("Block token verification failed: op=%s, message=%s", op.name, exc)
            raise

    def check_pool(self, block: Any) -> None:
        """DataTransferError unless ``block`` is of this datanode's block pool."""
        if block.poolId != self.pool_id:
            raise DataTransferError(f"block pool {block.poolId} is not served here (this "
                                    f"datanode serves {self.pool_id})")

    # ------------------------------------------------------------------ WRITE_BLOCK

    async def _write_block(self, request: Any, reader: asyncio.StreamReader,
                           writer: asyncio.StreamWriter) -> bool:
        block = request.header.baseHeader.block
        self.check_access(request.header.baseHeader, Op.WRITE_BLOCK, WRITE)
        self._check_write(request)
        if request.stage in RECOVERY_STAGES:
            replica = await self.replicas.recover(request)
            if replica is None:
                return await self._close_finalized(reader, writer)
            fresh, tail = False, None
        else:
            tail = self.replicas.admit(request)
            replica = ReplicaWriter(self.store, block.blockId)
            if request.requestedChecksum.type != ChecksumTypeProto.CHECKSUM_NULL:
                replica.kind = request.requestedChecksum.type
            fresh = True
        self.replicas.start(replica, functools.partial(
            asyncio.get_running_loop().call_soon_threadsafe, writer.transport.abort))
        try:
            await self._receive(request, replica, fresh, tail, reader, writer)
        except BaseException as exc:
            # a broken connection: in a pipeline of several the client will recover it; in
            # a pipeline of one, what was written waits for the namenode's lease recovery
            # (``recover``)
            broken = isinstance(exc, (ConnectionError, asyncio.IncompleteReadError,
                                      TimeoutError))
            stopping = isinstance(exc, asyncio.CancelledError)      # close(): rbw/ stays
            several = request.pipelineSize > 1
            keep = (broken or stopping) and (several or replica.length > 0)
            left = self.replicas.end(replica, keep, expires=several)
            if left is not None:
                await asyncio.shield(asyncio.get_running_loop().run_in_executor(
                    None, left.discard))
            raise
        self.replicas.end(replica, keep=False)
        return True

    async def _receive(self, request: Any, replica: ReplicaWriter, fresh: bool,
                       tail: tuple[int, int] | None, reader: asyncio.StreamReader,
                       writer: asyncio.StreamWriter) -> None:
        """Set up the replica (its files created while the pipeline is set up and answered:
        ``created``) and the pipeline, answer, take the packets."""
        block = request.header.baseHeader.block
        answered = False
        mirror: Mirror | None = None
        created = asyncio.get_running_loop().run_in_executor(
            None, self._create, replica, tail) if fresh else None
        try:
            if len(request.targets):
                mirror = await Mirror.open(request, SOCKET_TIMEOUT, self.sasl)
            await self._respond(writer, Status.SUCCESS, first_bad_link="")
            answered = True     # from here on a refusal is a packet's ack
            await BlockReceiver(replica, request.requestedChecksum.type, reader, writer,
                                SOCKET_TIMEOUT,
                                functools.partial(self._published, block.blockId),
                                mirror, created).run()
        except DataTransferError as exc:
            exc.answered = answered
            raise
        finally:
            if mirror is not None:
                mirror.close()
            if created is not None:
                if not created.done():
                    # the caller discards or keeps the replica: never while it is created
                    await asyncio.shield(asyncio.wait([created]))
                if not created.cancelled():
                    created.exception()     # retrieved: the first packet's ack told it

    @staticmethod
    def _create(replica: ReplicaWriter, tail: tuple[int, int] | None) -> None:
        """``replica.create`` (in the executor), its failure a DataTransferError."""
        try:
            replica.create(tail)
        except (OSError, BlockMissingError) as exc:
            raise DataTransferError(f"blk_{replica.block_id}: cannot create the replica: "
                                    f"{exc}") from exc

    def _published(self, block_id: int, length: int, digest: tuple[int, bytes, int]) -> None:
        self.replicas.published(block_id, length, digest)
        log.debug("datanode: blk_%d published, %d bytes", block_id, length)

    async def _close_finalized(self, reader: asyncio.StreamReader,
                               writer: asyncio.StreamWriter) -> bool:
        """PIPELINE_CLOSE_RECOVERY of a block published here (its last ack was lost): the
        block stays; the packets the client sends again are acknowledged up to the last."""
        await self._respond(writer, Status.SUCCESS, first_bad_link="")
        while True:
            packet, _ = await read_packet(reader, SOCKET_TIMEOUT)
            writer.write(dt.encode_ack(packet.header.seqno, Status.SUCCESS))
            await writer.drain()
            if packet.header.lastPacketInBlock:
                return True

    def _check_write(self, request: Any) -> None:
        """The block pool, the checksum and the stage of a WRITE_BLOCK."""
        block = request.header.baseHeader.block
        self.check_pool(block)
        wanted = request.requestedChecksum
        if wanted.type not in VERIFY_KINDS or wanted.bytesPerChecksum != checksum.BYTES_PER_CRC:
            raise DataTransferError(
                f"blk_{block.blockId}: checksum type {wanted.type} with "
                f"{wanted.bytesPerChecksum} bytes per checksum is not supported (CRC32C, "
                f"CRC32 or NULL, {checksum.BYTES_PER_CRC} bytes)", Status.ERROR_UNSUPPORTED)
        if request.stage not in WRITE_STAGES + RECOVERY_STAGES:
            raise DataTransferError(f"blk_{block.blockId}: stage {request.stage} is not "
                                    "supported", Status.ERROR_UNSUPPORTED)

    # ------------------------------------------------------------------ READ_BLOCK

    async def _read_block(self, request: Any, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> bool:
        block = request.header.baseHeader.block
        self.check_access(request.header.baseHeader, Op.READ_BLOCK, READ)
        self.check_pool(block)
        sender = self.sender(block.blockId, request.offset, request.len,
                             request.sendChecksums)
        loop = asyncio.get_running_loop()
        try:
            try:
                await loop.run_in_executor(None, sender.open)
            except (OSError, BlockMissingError) as exc:
                raise DataTransferError(f"opReadBlock blk_{block.blockId} received "
                                        f"exception {exc}") from exc
            await self._respond(writer, Status.SUCCESS,
                                readOpChecksumInfo=sender.checksum_info())
            await sender.send(writer)
        finally:
            sender.close()
        return await self._read_status(reader)

    async def _read_status(self, reader: asyncio.StreamReader) -> bool:
        """The client's ClientReadStatusProto after a whole range (DataXceiver.readBlock);
        a client that closes instead is done."""
        try:
            async with asyncio.timeout(SOCKET_TIMEOUT):
                status = await read_message(reader, ClientReadStatusProto)
        except (asyncio.IncompleteReadError, ProtoError, TimeoutError) as exc:
            log.debug("datanode: no read status from the client (%r)", exc)
            return False
        if status.status not in (Status.SUCCESS, Status.CHECKSUM_OK):
            log.info("datanode: a client reports status %d after a read", status.status)
        return True

    # ------------------------------------------------------------------ BLOCK_CHECKSUM

    async def _block_checksum(self, request: Any, reader: asyncio.StreamReader,
                              writer: asyncio.StreamWriter) -> bool:
        block = request.header.block
        self.check_access(request.header, Op.BLOCK_CHECKSUM, READ)
        self.check_pool(block)
        composite = request.HasField("blockChecksumOptions") and \
            request.blockChecksumOptions.blockChecksumType == BlockChecksumTypeProto.COMPOSITE_CRC
        try:
            answer = await asyncio.get_running_loop().run_in_executor(
                None, self._checksum, block.blockId, block.numBytes, composite)
        except (OSError, BlockMissingError) as exc:
            raise DataTransferError(f"blockChecksum blk_{block.blockId}: {exc}") from exc
        if request.HasField("blockChecksumOptions"):
            answer.blockChecksumOptions.CopyFrom(request.blockChecksumOptions)
        await self._respond(writer, Status.SUCCESS, checksumResponse=answer)
        return True

    def _checksum(self, block_id: int, num_bytes: int, composite: bool) -> Any:
        """BlockChecksumHelper's answer for the first ``num_bytes`` of a block."""
        if not self.store.has(block_id):
            raise DataTransferError(f"Replica not found for blk_{block_id}")
        with self.store.open_block(block_id, 0) as handle:
            size = handle.seek(0, 2)
        length = min(num_bytes, size)
        crcs, kind = self.store.read_crcs(block_id, length)
        crc_per_block = -(-size // checksum.BYTES_PER_CRC)
        if composite:
            value = self.store.composite_crc([(block_id, length, GENSTAMP)])[1].to_bytes(4, "big")
        else:
            value = checksum.block_digest(crcs, kind)[1]
        return OpBlockChecksumResponseProto(bytesPerCrc=checksum.BYTES_PER_CRC,
                                            crcPerBlock=crc_per_block, blockChecksum=value,
                                            crcType=kind)
