"""The body sink of the data step's CREATE and APPEND (HttpServer.streams feeds it).

Invariant: an upload changes the namespace only once its whole body arrived: its blocks are
sealed (fsynced, published), then one batch of ops is logged ([MkdirOp], AddFileOp,
CloseFileOp for a create; AppendOp, CloseFileOp for an append) holding blocks, length and the
MD5-of-MD5-of-CRC32 checksum (namenode/checksum.py). A body cut off, a lost lease or a failed
check deletes the upload's blocks at once and records nothing. The writer holds the path's
lease (namenode/leases.py) from its first byte to the end. data.py starts uploads.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from nnlite.namenode import errors
from nnlite.namenode.blocks import leases
from nnlite.namenode.blocks.streams import BlockWriter
from nnlite.namenode.http import remote
from nnlite.namenode.http.wire import Response

if TYPE_CHECKING:
    from nnlite.namenode.http.data import DataPath

log = logging.getLogger("namenode.http.data")   # the data step's logger, as before the split


class BlockUpload:
    """The body sink of one CREATE or APPEND data step (see HttpServer.streams): bytes go to
    a BlockWriter; ``finish`` seals the blocks and records them; ``abort`` (the body was cut
    off) or a lost lease deletes them at once."""

    def __init__(self, data: DataPath, path: str, lease: leases.Lease, writer: BlockWriter,
                 finalize, commit, done: Response):
        self.data = data
        self.path = path
        self.lease = lease
        self.writer = writer
        self.finalize = finalize        # Sealed -> (blocks, length, checksum), in a thread
        self.commit = commit            # (blocks, length, checksum) -> (result, ops)
        self.done = done
        self.error: Exception | None = None
        self.closed = False
        lease.on_revoke = self._revoked

    def write(self, data) -> None:
        if self.error is not None:
            return
        try:
            self.writer.write(data)
        except Exception as exc:
            self._fail(exc)
            return
        self.data.leases.renew(self.lease)

    def abort(self, reason: str) -> None:
        log.info("upload of %s by %s dropped: %s", self.path, self.lease.holder, reason)
        self.writer.discard()
        self._close()

    async def finish(self) -> Response:
        loop = asyncio.get_running_loop()
        try:
            if self.error is not None:
                raise self.error
            self.lease.check()
            self.lease.recording = True
            sealed = await loop.run_in_executor(None, self.writer.seal)
            blocks, length, value = await loop.run_in_executor(None, self.finalize, sealed)
            await self.data.committer.mutate(self.commit, blocks, length, value)
        except Exception as exc:
            if not self.data.refers(self.path, set(self.writer.ids)):
                self.writer.discard()
            return remote.from_error(_io_error(exc, self.path))
        finally:
            self._close()
        return self.done

    def _fail(self, exc: Exception) -> None:
        self.error = _io_error(exc, self.path)
        self.writer.discard()

    def _revoked(self, reason: str) -> None:
        self._fail(leases.LeaseExpiredError(reason, path=self.path))

    def _close(self) -> None:
        if not self.closed:
            self.closed = True
            self.writer.close()
            self.data.leases.release(self.lease)


def _io_error(exc: Exception, path: str) -> Exception:
    """Disk trouble is the client's IOException (403), not an internal error."""
    if isinstance(exc, OSError) and not isinstance(exc, errors.NamenodeError):
        return errors.NamenodeError(f"Cannot store or read the data of {path}: {exc}",
                                    path=path)
    return exc
