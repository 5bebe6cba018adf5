"""The WebHDFS data path: CREATE, APPEND and OPEN in two steps, and the ops that read or change
file contents (GETFILECHECKSUM, GETFILEBLOCKLOCATIONS, CONCAT, TRUNCATE).

Step 1 is the namenode's, as in Hadoop: ``PUT op=CREATE``, ``POST op=APPEND`` or
``GET op=OPEN`` on ``/webhdfs/v1/<path>`` checks the request (safe mode, permissions,
existence, ``overwrite``, the lease) and answers ``307`` with an absolute ``Location`` (or
``200 {"Location": ...}`` with ``noredirect=true``). The Location names the data step of the
same server, the role a DataNode has in Hadoop, and carries every parameter of the request
(``user.name`` always, the default user if none was sent; ``noredirect`` dropped)::

    http://<host>:<port>/data/v1/<path>?op=CREATE&user.name=tester&overwrite=false&...

``<host>`` is the bound address (the request's Host when bound to a wildcard address).

Step 2, ``/data/v1/<path>``: CREATE (PUT) and APPEND (POST) stream the body (Content-Length
or chunked) into new blocks (``namenode/blocks/store.py``) and answer ``201`` with
``Location: webhdfs://<host>:<port><path>`` (CREATE) or ``200`` (APPEND), both empty; OPEN
(GET) answers ``200`` with bytes ``[offset, offset + length)`` of what a reader may see.
Every check of step 1 runs again, and the namespace checks a third time when the upload is
recorded. A Location can be used again: fsspec posts every chunk to one APPEND Location,
Hadoop's reader re-opens the OPEN Location with another ``offset``.

What OPEN reads -- of a file being written over hdfs:// too -- and the checking of every
chunk against its stored CRC are ``namenode/files/readers.py``'s (``FileReader``); this module
frames its answer. A damaged chunk found before the answer starts (a range of up to
``MEMORY_READ`` bytes, or in the first batch) is HDFS's answer when no replica is left to try:
403, ``BlockMissingException`` "Could not obtain block: blk_<id>_<genstamp> file=<path>"
(the datanode's ``ExceptionHandler`` maps an IOException to 403). Found later, it cuts the
connection short of the Content-Length, so the client reads fewer bytes, never the damaged
ones (WebHdfsFileSystem: "Premature EOF"). GETFILESTATUS's length stays the namespace's
(``getFileInfo`` asks no datanode), and so do GETFILECHECKSUM's blocks.

An upload opens its file when its data step starts and completes it when its body has
arrived (upload.py holds the body sink and says what happens when a writer goes away, its file
is renamed or deleted). Parameters are read by params.py.

GETFILECHECKSUM is answered by the namenode itself (200, as HttpFS does; Hadoop's client
takes it, and HdfsCLI and fsspec follow no redirect there). CONCAT moves blocks; TRUNCATE
inside a block copies the kept prefix into a new block (blocks never change) and records
[TruncateOp, AppendOp, CloseFileOp], on a block boundary a lone TruncateOp.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import quote, urlencode

from nnlite.formats.edits import Block
from nnlite.namenode import errors
from nnlite.namenode.blocks import checksum
from nnlite.namenode.blocks.replication import Replicator
from nnlite.namenode.blocks.store import BlockStore
from nnlite.namenode.blocks.streams import Sealed
from nnlite.namenode.config import ConfigError
from nnlite.namenode.datanode.server import DataNodeServer
from nnlite.namenode.files.readers import FileReader
from nnlite.namenode.files.truncate import Truncator
from nnlite.namenode.files.writers import (
    Closing,
    append_file,
    close_file,
    concat_files,
    start_file,
)
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.http import remote
from nnlite.namenode.http.params import (
    CreateOptions,
    create_options,
    offset_length,
    param_bool,
    param_int,
    param_required,
)
from nnlite.namenode.http.upload import BlockUpload
from nnlite.namenode.http.webhdfs import WebHdfs
from nnlite.namenode.http.webhdfs_json import EMPTY_OK, TRUE, json_response
from nnlite.namenode.http.wire import BadRequest, Request, Response
from nnlite.namenode.journal.committer import AsyncCommitter
from nnlite.namenode.journal.journal import Logged
from nnlite.namenode.namespace import leases, paths

DATA_PREFIX = "/data/v1"
OCTET = "application/octet-stream"
WILDCARD_HOSTS = ("", "0.0.0.0", "::", "[::]")


def machine(req: Request) -> str:
    return req.peer[0] if req.peer else ""


class DataPath:
    """Step 1 handlers (added to the WebHDFS op table by ``attach``) and the data step
    (``__call__`` for requests without a body, ``upload`` as the streamed-body factory)."""

    webhdfs: WebHdfs        # set by attach, before the namenode serves a request

    def __init__(self, fs: FSNamesystem, committer: AsyncCommitter, store: BlockStore,
                 lease_manager: leases.LeaseManager, *, host: str, port: int,
                 combine_mode: str = "MD5MD5CRC", https_port: int | None = None):
        if combine_mode not in ("MD5MD5CRC", "COMPOSITE_CRC"):
            raise ConfigError(f"dfs.checksum.combine.mode is {combine_mode!r}: MD5MD5CRC or "
                              f"COMPOSITE_CRC")
        self.combine_mode = combine_mode
        self.fs = fs
        self.committer = committer
        self.store = store
        self.leases = lease_manager
        self.host = host
        self.port = port
        self.https_port = https_port      # the HTTPS listener's (dfs.http.policy), if any
        self.reader = FileReader(store)
        self.truncator = Truncator(fs, committer, store, lease_manager, self.replicate)

    @property
    def replicator(self) -> Replicator | None:
        """In an HA set, the copy of new blocks to a standby before a close is logged
        (namenode/blocks/replication.py), and of a block only a standby has before OPEN
        reads it; None: one namenode, one copy."""
        return self.reader.replicator

    @replicator.setter
    def replicator(self, replicator: Replicator | None) -> None:
        self.reader.replicator = replicator

    @property
    def datanode(self) -> DataNodeServer | None:
        """The built-in datanode, whose replicas being written OPEN reads (set once it
        runs)."""
        return self.reader.datanode

    @datanode.setter
    def datanode(self, datanode: DataNodeServer | None) -> None:
        self.reader.datanode = datanode

    def replicate(self, blocks: Sequence[Block]) -> None:
        """Copy new ``blocks`` to a standby before the op that records them is logged
        (blocking: run it in a thread). Without a standby the write goes on; the blocks are
        counted under-replicated and copied later."""
        if self.replicator is not None:
            self.replicator.replicate(blocks)

    def attach(self, webhdfs: WebHdfs) -> None:
        """Serve the data ops through ``webhdfs`` (its op table, its user resolution)."""
        self.webhdfs = webhdfs
        webhdfs.ops.update({
            ("PUT", "CREATE"): self.create, ("POST", "APPEND"): self.append,
            ("GET", "OPEN"): self.open, ("GET", "GETFILECHECKSUM"): self.file_checksum,
            ("GET", "GETFILEBLOCKLOCATIONS"): self.block_locations,
            ("GET", "GET_BLOCK_LOCATIONS"): self.located_blocks,
            ("POST", "CONCAT"): self.concat, ("POST", "TRUNCATE"): self.truncate,
            ("GET", "GETSTATUS"): self.fs_status})

    def fs_status(self, req: Request, path: str, user: str) -> Response:
        """GETSTATUS (``hadoop fs -df``): ``FileSystem.getStatus`` as JsonUtil writes it, from
        the one volume the blocks live on."""
        capacity, used, remaining = self.store.capacity()
        return json_response({"FsStatus": {"capacity": capacity, "used": used,
                                           "remaining": remaining}})

    # ------------------------------------------------------------------ step 1

    def create(self, req: Request, path: str, user: str) -> Response:
        self._check_create(req, path, user, create_options(req, self.fs))
        return self.redirect(req, path)

    def _check_create(self, req: Request, path: str, user: str, options: CreateOptions) -> None:
        path = self.fs.resolve_path(path, user)     # the lease is the inode's path's
        self._writable(req, path, "create", lambda: self.fs.check_create(
            path, user, overwrite=options.overwrite, create_parent=options.create_parent))

    def append(self, req: Request, path: str, user: str) -> Response:
        resolved = self.fs.resolve_path(path, user)
        self._writable(req, resolved, "append to", lambda: self.fs.get_writable_file(
            resolved, user, "append to"))
        return self.redirect(req, path)

    def _writable(self, req: Request, path: str, action: str,
                  check: Callable[[], object]) -> None:
        """The namespace's checks for a new writer of ``path``, behind the lease table's
        door (``LeaseManager.admit_writer``)."""
        self.leases.admit_writer(paths.normalize(path), action, machine(req), check)

    def open(self, req: Request, path: str, user: str) -> Response:
        offset_length(req)
        self.fs.get_readable_file(path, user)
        return self.redirect(req, path)

    def redirect(self, req: Request, path: str) -> Any:
        """The 307 (or ``noredirect``'s 200) to the data step. In secure mode its Location
        carries ``delegation=``, as NamenodeWebHdfsMethods.redirectURI adds one: the
        request's own token, or a new one for the caller (renewer: the caller), answered once
        logged; no ``user.name`` nor ``doas``, the token says who."""
        webhdfs = self.webhdfs
        if webhdfs.authentication is None:
            return self._redirected(req, self.location(req, path))
        given = req.param("delegation")
        if given:
            return self._redirected(req, self.location(req, path, given))
        caller = webhdfs.caller(req)
        logged = self.fs.get_delegation_token(caller.user, caller.user, caller)
        if logged is None:                      # no secret manager: the redirect as asked
            return self._redirected(req, self.location(req, path))
        return webhdfs._answer(lambda token: self._redirected(req, self.location(
            req, path, None if token is None else webhdfs.issued(req, token).encode_url())),
            logged)

    @staticmethod
    def _redirected(req: Request, location: str) -> Response:
        if param_bool(req, "noredirect"):
            return json_response({"Location": location})
        return Response(307, b"", OCTET, headers=[("Location", location)])

    def location(self, req: Request, path: str, delegation: str | None = None) -> str:
        if self.webhdfs.authentication is not None:
            items = [(name, value) for name, values in req.query.items()
                     if name not in ("noredirect", "user.name", "doas", "delegation")
                     for value in values]
            if delegation:
                items.append(("delegation", delegation))
        else:
            items = [(name, value) for name, values in req.query.items()
                     if name != "noredirect" and (name != "user.name" or values[0])
                     for value in values]
            if not req.param("user.name"):
                items.append(("user.name", self.webhdfs.default_user))
        return (f"{req.scheme}://{self.authority(req)}{DATA_PREFIX}{quote(path, safe='/')}?"
                f"{urlencode(items, quote_via=quote)}")

    def authority(self, req: Request) -> str:
        """host:port of this server for the client: the bound address, or when bound to a
        wildcard address the Host the client used (loopback if it sent none usable); the
        port of the listener the request came in on (HTTP or HTTPS, as Hadoop's redirect
        follows ``request.getScheme()``)."""
        port = self.https_port if req.scheme == "https" and self.https_port else self.port
        if self.host not in WILDCARD_HOSTS:
            return f"{self.host}:{port}"
        host = req.headers.get("host", "")
        if not host or not all(c.isalnum() or c in ".-:[]" for c in host):
            return f"127.0.0.1:{port}"
        return host if ":" in host.rpartition("]")[2] else f"{host}:{port}"

    # ------------------------------------------------------------------ reads

    def file_checksum(self, req: Request, path: str,
                      user: str) -> Response | Awaitable[Response]:
        node = self.fs.get_readable_file(path, user)
        blocks, _ = self.reader.readable(node)
        if self.combine_mode == "COMPOSITE_CRC":
            return self._composite_checksum(blocks)
        if node.checksum is not None and checksum.is_checksum(node.checksum) \
                and not node.under_construction:
            return json_response(checksum.to_json(node.checksum))
        return self._computed_checksum(blocks)

    async def _composite_checksum(self, blocks: tuple[Block, ...]) -> Response:
        """COMPOSITE_CRC (``dfs.checksum.combine.mode``): the chunk CRCs composed into one
        CRC of the whole file (``CompositeCrcFileChecksum``), which is the CRC of its bytes."""
        loop = asyncio.get_running_loop()
        kind, crc = await loop.run_in_executor(None, self.store.composite_crc, blocks)
        return json_response(checksum.composite_json(kind, crc))

    async def _computed_checksum(self, blocks: tuple[Block, ...]) -> Response:
        loop = asyncio.get_running_loop()
        value = await loop.run_in_executor(None, self.store.file_checksum, blocks)
        return json_response(checksum.to_json(value))

    def block_locations(self, req: Request, path: str, user: str) -> Response:
        """Hadoop 3's JSON of BlockLocation[]: the blocks overlapping [offset, offset +
        length), every one on this server."""
        offset, length = offset_length(req)
        node = self.fs.get_readable_file(path, user)
        end = offset + max(length, 1) if length is not None else None
        name = f"{self.host_name(req)}:{self.port}"
        out, pos = [], 0
        for block in node.blocks:
            if pos + block[1] > offset and (end is None or pos < end):
                out.append({"cachedHosts": [], "corrupt": False, "hosts": [self.host_name(req)],
                            "length": block[1], "names": [name], "offset": pos,
                            "storageTypes": ["DISK"], "topologyPaths": [f"/default-rack/{name}"]})
            pos += block[1]
        return json_response({"BlockLocations": {"BlockLocation": out}})

    def located_blocks(self, req: Request, path: str, user: str) -> Response:
        """GET_BLOCK_LOCATIONS, the older form: JsonUtil.toJsonString(LocatedBlocks) of the
        blocks overlapping [offset, offset + length), each on this server as its one
        DataNode (DatanodeInfo as JsonUtil writes it)."""
        offset, length = offset_length(req)
        node = self.fs.get_readable_file(path, user)
        end = offset + max(length, 1) if length is not None else None
        host = self.host_name(req)
        capacity, used, remaining = self.store.capacity()
        now = int(time.time() * 1000)
        datanode = {
            "adminState": "NORMAL", "blockPoolUsed": used, "cacheCapacity": 0, "cacheUsed": 0,
            "capacity": capacity, "dfsUsed": used, "hostName": host, "infoPort": self.port,
            "infoSecurePort": 0, "ipAddr": host, "ipcPort": 0, "lastUpdate": now,
            "lastUpdateMonotonic": int(time.monotonic() * 1000), "name": f"{host}:{self.port}",
            "networkLocation": "/default-rack", "remaining": remaining,
            "storageID": f"nnlite-{self.fs.namespace_id}", "xceiverCount": 0,
            "xferPort": self.port}
        pool = f"BP-{self.fs.namespace_id}-{host}-nnlite"

        def located(block: Block, start: int) -> dict:
            return {"block": {"blockId": block[0], "blockPoolId": pool,
                              "generationStamp": block[2], "numBytes": block[1]},
                    "blockToken": {"urlString": "AAAAAA"}, "cachedLocations": [],
                    "isCorrupt": False, "locations": [datanode], "startOffset": start,
                    "storageTypes": ["DISK"]}
        out, pos = [], 0
        for block in node.blocks:
            if pos + block[1] > offset and (end is None or pos < end):
                out.append(located(block, pos))
            pos += block[1]
        last = located(node.blocks[-1], pos - node.blocks[-1][1]) if node.blocks else None
        return json_response({"LocatedBlocks": {
            "fileLength": node.length, "isLastBlockComplete": not node.under_construction,
            "isUnderConstruction": node.under_construction, "lastLocatedBlock": last,
            "locatedBlocks": out}})

    def host_name(self, req: Request) -> str:
        return self.authority(req).rsplit(":", 1)[0]

    # ------------------------------------------------------------------ contents

    async def concat(self, req: Request, path: str, user: str) -> Response:
        sources = [s for s in param_required(req, "sources", "CONCAT").split(",") if s]
        await self.committer.wait(concat_files(self.fs, self.leases, path, sources, user,
                                               machine(req)))
        return EMPTY_OK

    async def truncate(self, req: Request, path: str, user: str) -> Response:
        new_length = param_int(req, "newlength", None, 0)
        if new_length is None:
            raise errors.IllegalArgumentError(
                "Required param newlength for op: TRUNCATE is null or empty")
        await self.truncator.truncate(path, user, new_length, machine(req))
        return TRUE

    def refers(self, path: str, ids: set) -> bool:
        """Whether the file at ``path`` refers to any of the block ``ids`` (a request that
        failed after its batch was applied, e.g. while syncing the journal, must keep them)."""
        return bool(ids) and self.fs.refers_to_blocks(path, ids)

    # ------------------------------------------------------------------ step 2

    def __call__(self, req: Request) -> Response | Awaitable[Response]:
        """A data-step request without a body (OPEN; CREATE or APPEND of nothing)."""
        try:
            op = (req.param("op") or "").upper()
        except BadRequest as exc:
            return remote.from_error(exc)
        if ("GET" if req.method == "HEAD" else req.method, op) == ("GET", "OPEN"):
            return self.read(req)
        sink = self.upload(req)
        if isinstance(sink, Response):
            return sink
        if req.body:
            sink.write(req.body)
        return sink.finish()

    def _target(self, req: Request) -> tuple[str, str]:
        path = req.path[len(DATA_PREFIX):] or "/"
        paths.split(path)
        return path, self.webhdfs.identify(req)

    def upload(self, req: Request) -> BlockUpload | Response:
        """The streamed-body factory of the data step: a BlockUpload, or a refusal."""
        try:
            op = (req.param("op") or "").upper()
            path, user = self._target(req)
            if (req.method, op) == ("PUT", "CREATE"):
                return self._start_create(req, path, user)
            if (req.method, op) == ("POST", "APPEND"):
                return self._start_append(req, path, user)
            raise errors.UnsupportedOperationError(
                f"{req.method[:10]} op={op[:40]} is not an operation of the data step")
        except Exception as exc:
            return remote.from_error(exc)

    def _start_create(self, req: Request, path: str, user: str) -> BlockUpload:
        """Open the file under the upload's lease (logged now, visible once durable), then
        take the body; upload.py completes it."""
        options = create_options(req, self.fs)
        path = self.fs.resolve_path(path, user)
        lease, logged = start_file(self.fs, self.leases, path, user, machine(req),
                                   **options.namespace_kw())     # step 1's checks, again
        node = logged.value
        try:
            writer = self.store.writer(options.block_size)
        except BaseException:
            self.fs.abandon_upload(node, lease.holder)
            self.leases.release(lease)
            raise

        def close(sealed: Sealed) -> Awaitable[Logged[bool]]:
            return close_file(self.fs, self.store, Closing(
                node, lease.holder, (), None, sealed.blocks, lambda: sealed.digests,
                sealed.length, appended=False))

        done = Response(201, b"", OCTET,
                        headers=[("Location", f"webhdfs://{self.authority(req)}"
                                              f"{quote(path, safe='/')}")])
        return BlockUpload(self, lease, writer, close, done,
                           lambda: self.fs.abandon_upload(node, lease.holder))

    def _start_append(self, req: Request, path: str, user: str) -> BlockUpload:
        """Reopen the file under the upload's lease (AppendOp, logged now), then take the
        body; the blocks and length appended to are those of the file as reopened."""
        param_int(req, "buffersize", None, 1, (1 << 31) - 1)
        lease, logged = append_file(self.fs, self.leases, path, user, machine(req))
        node = logged.value                                   # step 1's checks, again
        old, length, old_checksum = node.blocks, node.length, node.checksum

        def close(sealed: Sealed) -> Awaitable[Logged[bool]]:
            base = old[:-1] if sealed.replaces_tail else old
            return close_file(self.fs, self.store, Closing(
                node, lease.holder, base, old_checksum, sealed.blocks,
                lambda: sealed.digests, length + sealed.length, appended=True))

        def abandon() -> Logged[bool]:
            return self.fs.abandon_upload(node, lease.holder)

        try:
            writer = self.store.writer(node.block_size, old[-1] if old else None)
        except BaseException:
            abandon()
            self.leases.release(lease)
            raise
        return BlockUpload(self, lease, writer, close, Response(200, b"", OCTET),
                           abandon)

    async def read(self, req: Request) -> Response:
        """OPEN's data step: the bytes of ``[offset, offset + length)``, every chunk checked
        against its stored CRC (``files/readers.py``)."""
        try:
            path, user = self._target(req)
            offset, length = offset_length(req)
            got = await self.reader.read(path, self.fs.get_readable_file(path, user), offset,
                                         length)
            if isinstance(got, bytes):
                return Response(200, got, OCTET)
            return Response(200, b"", OCTET, file=got)
        except Exception as exc:
            return remote.from_error(exc)
