"""The catalog's Python API: ``CatalogClient`` over the namenode's ``/catalog/v1`` endpoint.

It rides on the WebHDFS client's connection (keep-alive, retries of idempotent reads, typed
errors): a ``RemoteException`` becomes the ``client.errors`` class its Java name registers,
and the catalog's own names register the classes below. Every change is durable on the
namenode when the call returns.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from nnlite.catalog.http import PREFIX
from nnlite.client.errors import RemoteError, register_remote
from nnlite.client.webhdfs import DEFAULT_URL, WebHdfsClient


@register_remote("org.nnlite.catalog.CatalogException")
class CatalogRemoteError(RemoteError):
    """A catalog refusal without a more specific class."""


@register_remote("org.nnlite.catalog.NotACheckpointException")
class NotACheckpoint(CatalogRemoteError):
    pass


@register_remote("org.nnlite.catalog.CheckpointNotFoundException")
class CheckpointNotFound(CatalogRemoteError):
    pass


@register_remote("org.nnlite.catalog.CheckpointBusyException")
class CheckpointBusy(CatalogRemoteError):
    pass


@register_remote("org.nnlite.catalog.NotRestorableException")
class NotRestorable(CatalogRemoteError):
    pass


@register_remote("org.nnlite.catalog.IncompleteCheckpointException")
class IncompleteCheckpoint(CatalogRemoteError):
    pass


class CatalogClient:
    """The catalog of the namenode at ``url``, acting as ``user``."""

    def __init__(self, url: str = DEFAULT_URL, user: str = "dr.who", *,
                 timeout: float | None = 600.0, hdfs: WebHdfsClient | None = None):
        self.hdfs = hdfs or WebHdfsClient(url, user, timeout=timeout)
        self.url = self.hdfs.url

    def close(self) -> None:
        self.hdfs.close()

    def webhdfs_uri(self, path: str) -> str:
        """``webhdfs://host:port/path`` for this namenode: what Spark and Flink take."""
        where = urlsplit(self.url)
        return f"webhdfs://{where.hostname}:{where.port or 9870}{path}"

    def __enter__(self) -> CatalogClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _call(self, method: str, path: str, op: str, key: str, **params):
        target = self.hdfs._target(path, op, params, prefix=PREFIX)
        reply = self.hdfs.connection.request(method, target)
        if reply.status != 200:
            raise self.hdfs._error(reply, op, path)
        return self.hdfs._field(self.hdfs._json(reply, op), key)

    # ------------------------------------------------------------------ reads

    def ls(self, root: str = "/") -> list[dict]:
        return self._call("GET", root, "LS", "Checkpoints")

    def show(self, path: str) -> dict:
        return self._call("GET", path, "SHOW", "Checkpoint")

    def latest(self, path: str) -> dict:
        return self._call("GET", path, "LATEST", "Latest")

    def validate(self, path: str) -> dict:
        return self._call("GET", path, "VALIDATE", "Validation")

    # ------------------------------------------------------------------ changes

    def retain(self, path: str, keep: int) -> dict:
        return self._call("POST", path, "RETAIN", "Retention", keep=keep)

    def rollback(self, path: str, to_batch: int) -> dict:
        return self._call("POST", path, "ROLLBACK", "Rollback", tobatch=to_batch)

    def pin(self, path: str, batch: int) -> dict:
        return self._call("POST", path, "PIN", "Pins", batch=batch)

    def unpin(self, path: str, batch: int) -> dict:
        return self._call("POST", path, "UNPIN", "Pins", batch=batch)

    def gc(self, root: str = "/", dry_run: bool = False) -> dict:
        return self._call("POST", root, "GC", "GC", dryrun=dry_run)

    # ------------------------------------------------------------------ job checkpoints

    def begin(self, job: str) -> dict:
        """A new checkpoint id for ``job`` and the directory its tasks write into."""
        return self._call("POST", job, "BEGIN", "JobCheckpoint")

    def complete(self, job: str, chk_id: int, expected_parts: int | None = None) -> dict:
        return self._call("POST", job, "COMPLETE", "JobCheckpoint", id=chk_id,
                          parts=expected_parts)

    def abort(self, job: str, chk_id: int) -> dict:
        return self._call("POST", job, "ABORT", "JobCheckpoint", id=chk_id)

    def latest_job(self, job: str) -> dict | None:
        """The newest complete checkpoint of ``job`` (``{"id", "path"}``), or None."""
        return self.latest(job)["latest"]
