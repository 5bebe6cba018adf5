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

from nnlite.catalog.client import CatalogClient
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
        return self.catalog.webhdfs_uri(self.path)

    def __enter__(self) -> "JobCheckpoint":
        begun = self.catalog.begin(self.job)
        self.id, self.path = begun["id"], begun["path"]
        log.info("job checkpoint %s/%d begun in %s", self.job, self.id, self.path)
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        if exc is not None:
            try:
                self.catalog.abort(self.job, self.id)
            except Exception as abort_error:       # the original error matters more
                log.warning("could not abort %s/%d: %s", self.job, self.id, abort_error)
            return False
        faults.hit("catalog.before-complete")
        self.result = self.catalog.complete(self.job, self.id, self.expected_parts)
        log.info("job checkpoint %s/%d complete: %s", self.job, self.id, self.result["path"])
        return False


def write_checkpoint(catalog: CatalogClient, job: str, df, fmt: str = "parquet",
                     expected_parts: int | None = None, **options) -> dict:
    """Write ``df`` as the next checkpoint of ``job``; the completed checkpoint."""
    _check_dataframe(df)
    with JobCheckpoint(catalog, job, expected_parts) as chk:
        df.write.format(fmt).options(**options).mode("append").save(chk.uri)
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
