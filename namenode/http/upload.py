"""The body sink of the data step's CREATE and APPEND (HttpServer.streams feeds it).

As in HDFS, where the DataNode opens the file when the data arrives: an upload opens its file
first (data.py logs [MkdirOp], AddFileOp, or AppendOp, with the file under construction by
the upload's client name), so the file is there while it is written; readers see what it
held before (nothing, for a create). At the end the blocks are sealed (fsynced, published)
and one CloseFileOp completes the file with blocks, length and checksum, found by its inode:
a writer follows its file through a rename, and a file deleted meanwhile fails the close with
HDFS's FileNotFoundException. A body cut off keeps what arrived, as HDFS's DataNode closes
its stream when the client goes; a lost lease or a refused close closes the file with what
it had (``abandon``). The writer holds the path's lease (``namenode/namespace/leases.py``)
from its first byte to the end.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from nnlite.namenode import errors
from nnlite.namenode.blocks.streams import BlockWriter, Sealed
from nnlite.namenode.http import remote
from nnlite.namenode.http.wire import Response
from nnlite.namenode.journal.journal import Logged
from nnlite.namenode.namespace import leases

if TYPE_CHECKING:
    from nnlite.namenode.http.data import DataPath

log = logging.getLogger(__name__)


class BlockUpload:
    """The body sink of one CREATE or APPEND data step (see HttpServer.streams): bytes go to
    a BlockWriter; ``finish`` seals the blocks and records them; ``abort`` (the body was cut
    off) or a lost lease deletes them at once."""

    def __init__(self, data: DataPath, lease: leases.Lease, writer: BlockWriter,
                 close: Callable[[Sealed], Awaitable[Logged[bool]]], done: Response,
                 abandon: Callable[[], Logged[bool]] | None = None) -> None:
        self.data = data
        self.lease = lease
        self.writer = writer
        self.close_file = close         # Sealed -> Logged: closes the file (files/writers.py)
        self.abandon = abandon          # () -> Logged: closes the file as it was
        self.done = done
        self.error: Exception | None = None
        self.closed = False
        lease.on_revoke = self._revoked

    @property
    def path(self) -> str:
        """Where the file is now: the lease follows it through renames."""
        return self.lease.path

    def write(self, data: bytes) -> None:
        if self.error is not None:
            return
        try:
            self.writer.write(data)
        except Exception as exc:
            self._fail(exc)
            return
        self.data.leases.renew(self.lease)

    def abort(self, reason: str) -> None:
        """The body was cut off: what arrived is kept, as a DataNode closes the stream of a
        client that went away (WebHdfsHandler), and the file completes with it."""
        log.info("upload of %s by %s cut off (%s): closing it with what arrived", self.path,
                 self.lease.holder, reason)
        try:
            asyncio.get_running_loop().create_task(self.finish())
        except RuntimeError:            # no loop (a caller outside the server): give up
            self.writer.discard()
            self._give_up()
            self._close()

    async def finish(self) -> Response:
        loop = asyncio.get_running_loop()
        try:
            if self.error is not None:
                raise self.error
            self.lease.check()
            self.lease.recording = True
            sealed = await loop.run_in_executor(None, self.writer.seal)
            await loop.run_in_executor(None, self.data.replicate, sealed.blocks)
            await self.data.committer.wait(await self.close_file(sealed))
        except Exception as exc:
            if not self.data.refers(self.path, set(self.writer.ids)):
                self.writer.discard()
            self._give_up()
            return remote.from_error(_io_error(exc, self.path))
        finally:
            self._close()
        return self.done

    def _give_up(self) -> None:
        """Close the file with what it held before the upload (lease recovery)."""
        if self.abandon is None:
            return
        try:
            self.abandon()
        except errors.NamenodeError as exc:
            # refused as any op would be now (a standby, a stepped-down active, an active
            # cut off from etcd): the lease recovery of the next active, or of this one
            # before its writes resume, closes it; one line, no traceback
            log.warning("could not close %s after its upload failed: %s: %s", self.path,
                        exc.exception_name, exc)
        except Exception:   # noqa: BLE001 -- the namenode stopping; startup recovery closes it
            log.warning("could not close %s after its upload failed", self.path, exc_info=True)

    def _fail(self, exc: Exception) -> None:
        self.error = _io_error(exc, self.path)
        self.writer.discard()

    def _revoked(self, reason: str) -> None:
        self._fail(errors.LeaseExpiredError(reason, path=self.path))
        self._give_up()

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
