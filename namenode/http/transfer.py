"""Image transfer between the namenode and the secondary (not WebHDFS; secondary only).

Every request carries the shared secret in ``X-Nnlite-Secret`` (from the configuration key
``nnlite.checkpoint.secret``, or else the token file ``<first name dir>/checkpoint.token``,
created 0600 at first start); a wrong or missing secret gets 403 and changes nothing. In
secure mode the caller instead proves a service principal by SPNEGO, as Hadoop's
``ImageServlet.isValidRequestor`` wants (``security/services.py``); any other caller gets 403.

    GET  /checkpoint/status   JSON: namespaceId, txid, lastCheckpointTxid, lastCheckpointTime,
                              pending, image {name,size,md5,last_txid}, edits (when pending)
    POST /checkpoint/roll     roll edits -> edits.new (or report the pending checkpoint); JSON
                              as status
    GET  /checkpoint/image    the current fsimage, streamed. Headers: Content-Length,
                              X-MD5-Digest (hex, as Hadoop's image servlet), X-Image-Txid
    GET  /checkpoint/edits    the rolled edits of the pending checkpoint, streamed. Headers:
                              Content-Length, X-MD5-Digest, X-Txid-Range: "<first>-<last>"
    PUT  /checkpoint/image?txid=N&namespaceid=I   the new image as the body, with
                              Content-Length and X-MD5-Digest. Stored as
                              fsimage.ckpt_<txid>, verified, swapped. 200 {"txid","size","md5"}.

Refusals (nothing changes on disk): 403 bad secret or wrong namespace; 409 no checkpoint
pending, txid other than the end of the rolled edits, or another upload in progress; 410 an
image for this txid (or a later one) is already in place; 400 short body, digest mismatch,
unreadable image; 411 no Content-Length.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from nnlite.client.peer import IMAGE_TXID_HEADER, MD5_HEADER, TXID_RANGE_HEADER
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.http.wire import Request, Response
from nnlite.namenode.image.checkpoint import CheckpointError, ImageUpload
from nnlite.namenode.security.services import Gate

log = logging.getLogger(__name__)

TOKEN_FILE = "checkpoint.token"
PREFIX = "/checkpoint"


def load_secret(configured: str, first_name_dir: str) -> str:
    """The configured secret, else the token file in the first name dir (created once)."""
    if configured:
        return configured
    path = Path(first_name_dir) / TOKEN_FILE
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32) + "\n")
    return path.read_text().strip()


def error(status: int, message: str) -> Response:
    return Response(status, json.dumps({"error": message, "status": status}).encode())


class Transfer:
    """The checkpoint endpoints, each one operation of ``fs``'s image side (``FSImage``)."""

    def __init__(self, fs: FSNamesystem, gate: Gate):
        self.fs = fs
        self.gate = gate      # the shared secret, or in secure mode the service principals

    def __call__(self, req: Request) -> Response | Awaitable[Response]:
        if not self.gate.admits(req):
            return error(403, f"Checkpoint transfer refused: {self.gate.refusal}")
        route = (req.method, req.path)
        try:
            if route == ("GET", PREFIX + "/status"):     # threads: may hash the edits
                return self._in_thread(self.fs.image.status)
            if route == ("POST", PREFIX + "/roll"):
                return self._in_thread(self._roll)
            if route == ("GET", PREFIX + "/image"):
                return self._file(self.fs.image.image_file(), IMAGE_TXID_HEADER)
            if route == ("GET", PREFIX + "/edits"):
                return self._file_in_thread(self.fs.image.rolled_edits, TXID_RANGE_HEADER)
            if route == ("PUT", PREFIX + "/image"):
                return error(400, "Image upload without a body")
        except CheckpointError as exc:
            return error(exc.status, str(exc))
        return error(404, f"No checkpoint endpoint {req.method} {req.path}")

    def _roll(self) -> dict:
        """Roll the edits unless a checkpoint is already pending; answer the status."""
        self.fs.roll_edits()
        return self.fs.image.status()

    async def _in_thread(self, fn: Callable[[], Any]) -> Response:
        try:
            result = await asyncio.get_running_loop().run_in_executor(None, fn)
        except CheckpointError as exc:
            return error(exc.status, str(exc))
        return Response(200, json.dumps(result).encode())

    async def _file_in_thread(self, fn: Callable[[], Any], header: str) -> Response:
        try:
            info = await asyncio.get_running_loop().run_in_executor(None, fn)
        except CheckpointError as exc:
            return error(exc.status, str(exc))
        return self._file(info, header)

    def _file(self, info: Any, header: str) -> Response:
        # the Response owns the handle: the server sends it with sendfile, then closes it
        handle = open(info.name, "rb")  # noqa: SIM115
        size = os.fstat(handle.fileno()).st_size
        value = (str(info.last_txid) if header == IMAGE_TXID_HEADER
                 else f"{info.first_txid}-{info.last_txid}")
        self.fs.image.metrics.bytes_sent += size
        return Response(200, b"", "application/octet-stream",
                        headers=((MD5_HEADER, info.md5), (header, value)),
                        file=(handle, size))

    # ------------------------------------------------------------------ upload (streamed)

    def upload(self, req: Request) -> Any:
        """Stream factory for PUT /checkpoint/image: a sink, or a refusal Response."""
        if not self.gate.admits(req):
            return error(403, f"Checkpoint transfer refused: {self.gate.refusal}")
        if req.path != PREFIX + "/image":
            return error(404, f"No checkpoint endpoint PUT {req.path}")
        try:
            length = int(req.headers["content-length"])
            txid = int(req.param("txid", ""))
            namespace_id = int(req.param("namespaceid", ""))
            md5 = req.headers[MD5_HEADER.lower()]
        except (KeyError, ValueError):
            return error(411, "Image upload needs Content-Length, X-MD5-Digest and the txid "
                              "and namespaceid parameters")
        try:
            upload = self.fs.image.begin_upload(txid, md5, length, namespace_id)
        except CheckpointError as exc:
            return error(exc.status, str(exc))
        return UploadSink(self.fs, upload)


class UploadSink:
    """Receives the body into the upload's own file (``install.upload_file``); on finish
    verifies and swaps off the loop."""

    def __init__(self, fs: FSNamesystem, upload: ImageUpload):
        self.fs = fs
        self.upload = upload

    def write(self, data: bytes) -> None:
        self.upload.write(data)

    def abort(self, reason: str) -> None:
        self.fs.image.abort_upload(self.upload, reason)

    async def finish(self) -> Response:
        if self.upload.error is not None:
            self.fs.image.abort_upload(self.upload, str(self.upload.error))
            return error(self.upload.error.status, str(self.upload.error))
        loop = asyncio.get_running_loop()
        try:
            result = await loop.run_in_executor(None, self.fs.image.install, self.upload)
        except CheckpointError as exc:
            return error(exc.status, str(exc))
        return Response(200, json.dumps(result).encode())
