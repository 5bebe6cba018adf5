"""Job checkpoints around Spark writes. The one module of nnlite that imports pyspark, lazily
(``pip install nnlite[spark]``); nothing else in the catalog needs it.

    with JobCheckpoint(catalog, "/jobs/daily-agg") as chk:
        df.write.mode("append").parquet(chk.uri)     # tasks write their parts into chk.uri
    # left the block: complete (one atomic rename); an exception: aborted

    latest = read_latest(spark, catalog, "/jobs/daily-agg")   # the newest complete one

A driver that dies inside the block leaves ``chk-<id>.inprogress``, which ``latest`` never
returns, so readers keep the previous complete checkpoint. The fault point
``catalog.before-complete`` (``NNLITE_FAULTS``) kills the driver right there, for tests.
"""

from __future__ import annotations

import logging
from types import TracebackType
from typing import Literal

from nnlite.catalog.client import CatalogClient
from nnlite.client.errors import InternalError
from nnlite.durability import faults

log = logging.getLogger(__name__)


class JobCheckpoint:
    """``begin`` on enter; ``complete`` on a clean exit, ``abort`` on an exception.
    ``expected_parts`` None trusts Spark's ``_SUCCESS`` marker (the job commit finished)."""

    def __init__(self, catalog: CatalogClient, job: str, expected_parts: int | None = None):
        self.catalog = catalog
        self.job = job
        self.expected_parts = expected_parts
        self.id: int | None = None
        self.path: str | None = None
        self.result: dict | None = None

    @property
    def uri(self) -> str:
        return self.catalog.webhdfs_uri(self._begun()[1])

    def _begun(self) -> tuple[int, str]:
        """The checkpoint's id and directory, which ``__enter__`` begins."""
        if self.id is None or self.path is None:
            raise InternalError(f"the checkpoint of {self.job} has not begun: use a "
                                f"JobCheckpoint in a with statement")
        return self.id, self.path

    def __enter__(self) -> JobCheckpoint:
        begun = self.catalog.begin(self.job)
        self.id, self.path = begun["id"], begun["path"]
        log.info("job checkpoint %s/%d begun in %s", self.job, self.id, self.path)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        chk_id = self._begun()[0]
        if exc is not None:
            try:
                self.catalog.abort(self.job, chk_id)
            except Exception as abort_error:       # the original error matters more
                log.warning("could not abort %s/%d: %s", self.job, self.id, abort_error)
            return False
        faults.hit("catalog.before-complete")
        self.result = self.catalog.complete(self.job, chk_id, self.expected_parts)
        log.info("job checkpoint %s/%d complete: %s", self.job, self.id, self.result["path"])
        return False


def write_checkpoint(catalog: CatalogClient, job: str, df, fmt: str = "parquet",
                     expected_parts: int | None = None, **options) -> dict:
    """Write ``df`` as the next checkpoint of ``job``; the completed checkpoint."""
    _check_dataframe(df)
    with JobCheckpoint(catalog, job, expected_parts) as chk:
        df.write.format(fmt).options(**options).mode("append").save(chk.uri)
    if chk.result is None:      # never: a with block that ends without an error completes it
        raise InternalError(f"the checkpoint of {job} did not complete")
    return chk.result


def read_latest(spark, catalog: CatalogClient, job: str, fmt: str = "parquet"):
    """The newest complete checkpoint of ``job`` as a DataFrame, or None when there is none."""
    latest = catalog.latest_job(job)
    if latest is None:
        return None
    return spark.read.format(fmt).load(catalog.webhdfs_uri(latest["path"]))


def _check_dataframe(df) -> None:
    from pyspark.sql import DataFrame  # lazily: the spark extra
    if not isinstance(df, DataFrame):
        raise TypeError(f"write_checkpoint needs a pyspark DataFrame, not {type(df).__name__}")
