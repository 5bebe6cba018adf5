"""The receiving end of block replication (``namenode/blocks/replication.py``).

``PUT /blocks/v1/blk_<id>?length=<n>`` streams one block into the block store (a
BlockReceiver: CRC32C recomputed, digest and length checked, published durably) and answers
200 once it is; ``GET /blocks/v1?op=REPORT`` answers the ids of every published block.
Both need the HA set's shared secret (``X-Nnlite-Secret``), or in secure mode a namenode's
Kerberos principal (``security/services.py``), like the checkpoint transfer, and run in any
HA state: a standby is where blocks arrive.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable

from nnlite.client.peer import BLOCK_DIGEST_HEADER
from nnlite.namenode import errors
from nnlite.namenode.blocks.replication import PREFIX, BlockReceiver, digest_text
from nnlite.namenode.blocks.store import BlockStore
from nnlite.namenode.http.transfer import error
from nnlite.namenode.http.wire import Request, Response
from nnlite.namenode.security.services import Gate


class Replica:
    def __init__(self, store: BlockStore, gate: Gate):
        self.store = store
        self.gate = gate      # the shared secret, or in secure mode the service principals

    def __call__(self, req: Request) -> Response | Awaitable[Response]:
        if not self.gate.admits(req):
            return error(403, f"Block transfer refused: {self.gate.refusal}")
        if req.method == "GET" and req.path == PREFIX and req.param("op") == "REPORT":
            return self._report()
        if req.method == "GET" and req.path.startswith(PREFIX + "/blk_"):
            return self._send(req.path[len(PREFIX) + 5:])
        return error(404, f"No block endpoint {req.method} {req.path}")

    async def _report(self) -> Response:
        ids = await asyncio.get_running_loop().run_in_executor(None, self._published)
        return Response(200, json.dumps({"blocks": ids}).encode())

    async def _send(self, name: str) -> Response:
        """One published block, with its digest, for a namenode that lacks it."""
        if not name.isdigit():
            return error(400, "A block is /blocks/v1/blk_<id>")
        block_id = int(name)
        if not self.store.has(block_id):
            return error(404, f"blk_{block_id} is not here")
        loop = asyncio.get_running_loop()
        try:
            # the Response owns the handle: the server sends it with sendfile, then closes it
            handle = open(self.store.data_path(block_id), "rb")  # noqa: SIM115
            size = os.fstat(handle.fileno()).st_size
            digest = await loop.run_in_executor(None, digest_text, self.store, block_id, size)
        except (OSError, errors.NamenodeError) as exc:
            return error(404, f"blk_{block_id} cannot be read here: {exc}")
        return Response(200, b"", "application/octet-stream",
                        headers=((BLOCK_DIGEST_HEADER, digest),), file=(handle, size))

    def _published(self) -> list[int]:
        return sorted({block_id for block_id, _ in self.store.scan()
                       if self.store.data_path(block_id).exists()})

    def upload(self, req: Request) -> Response | _Sink:
        """Stream factory for PUT /blocks/v1/blk_<id>: a sink, or a refusal."""
        if not self.gate.admits(req):
            return error(403, f"Block transfer refused: {self.gate.refusal}")
        name = req.path[len(PREFIX) + 1:] if req.path.startswith(PREFIX + "/") else ""
        try:
            block_id = int(name.removeprefix("blk_")) if name.startswith("blk_") else -1
            length = int(req.param("length") or "-1")
            digest = req.headers[BLOCK_DIGEST_HEADER.lower()]
            int(digest.partition(":")[0])
        except (KeyError, ValueError):
            block_id = -1
        if block_id < 0 or length < 0:
            return error(400, "A block copy needs PUT /blocks/v1/blk_<id>?length=<n> and "
                                f"{BLOCK_DIGEST_HEADER}")
        return _Sink(BlockReceiver(self.store, block_id, length, digest))


class _Sink:
    def __init__(self, receiver: BlockReceiver):
        self.receiver = receiver

    def write(self, data: bytes) -> None:
        self.receiver.write(data)

    def abort(self, reason: str) -> None:
        self.receiver.abort(reason)

    async def finish(self) -> Response:
        try:
            await asyncio.get_running_loop().run_in_executor(None, self.receiver.finish)
        except (errors.NamenodeError, OSError) as exc:
            return error(400, str(exc))
        return Response(200, b'{"stored":true}')
