"""The catalog's verdicts against Spark's own restarts (the conformance matrix): one stateful
query per state-store configuration runs into nnlite, retention thins it, and then for every
batch the catalog is asked to roll back to, on a copy of the checkpoint:

* the catalog says it restores: the rollback is applied, Spark restarts, and the result must be
  exactly the uninterrupted one (nothing lost, nothing counted twice);
* the catalog refuses: the same files are removed by hand, Spark restarts, and it must fail or
  get the result wrong -- a refusal Spark would have survived is a finding, not a pass.

``tests/catalog/test_conformance.py`` runs a representative part in CI; ``bench/conformance.py``
runs the whole matrix and prints its table.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass

from nnlite.catalog.client import CatalogClient, NotRestorable
from nnlite.client.webhdfs import WebHdfsClient

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
PROVIDER = "spark.sql.streaming.stateStore.providerClass"
CHANGELOG = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"
FORMAT = "spark.sql.streaming.stateStore.checkpointFormatVersion"
STORES = {
    "hdfs": {},
    "rocksdb": {PROVIDER: ROCKSDB},
    "rocksdb-changelog": {PROVIDER: ROCKSDB, CHANGELOG: "true"},
    "rocksdb-v2": {PROVIDER: ROCKSDB, CHANGELOG: "true", FORMAT: "2"},
}


@dataclass
class Outcome:
    store: str
    batch: int
    catalog_restores: bool
    spark: str            # "exact", "wrong", "failed: <why>"
    reason: str = ""

    @property
    def agrees(self) -> bool:
        return (self.spark == "exact") == self.catalog_restores


@contextmanager
def spark_conf(spark, settings: dict):
    old = {k: spark.conf.get(k, None) for k in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in old.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def copy_tree(hdfs: WebHdfsClient, src: str, dst: str) -> None:
    for entry in hdfs.list(src):
        name = entry["pathSuffix"]
        if entry["type"] == "DIRECTORY":
            hdfs.mkdirs(f"{dst}/{name}")
            copy_tree(hdfs, f"{src}/{name}", f"{dst}/{name}")
        else:
            hdfs.create(f"{dst}/{name}", b"".join(hdfs.read(f"{src}/{name}")))


def remove_after(hdfs: WebHdfsClient, base: str, batch: int) -> None:
    """What a rollback to ``batch`` removes, done by hand: later offsets, commits and source
    entries, and state versions above ``batch + 1``."""
    def numbered(directory):
        try:
            return hdfs.list(directory)
        except Exception:
            return []
    for section in ("offsets", "commits"):
        for entry in numbered(f"{base}/{section}"):
            name = entry["pathSuffix"]
            if name.isdigit() and int(name) > batch:
                hdfs.delete(f"{base}/{section}/{name}")
    for source in numbered(f"{base}/sources"):
        for entry in numbered(f"{base}/sources/{source['pathSuffix']}"):
            stem = entry["pathSuffix"].split(".")[0]
            if stem.isdigit() and int(stem) > batch:
                hdfs.delete(f"{base}/sources/{source['pathSuffix']}/{entry['pathSuffix']}")
    _remove_state_after(hdfs, f"{base}/state", batch + 1)


def _remove_state_after(hdfs: WebHdfsClient, directory: str, version: int) -> None:
    try:
        entries = hdfs.list(directory)
    except Exception:
        return
    for entry in entries:
        name = entry["pathSuffix"]
        where = f"{directory}/{name}"
        if entry["type"] == "DIRECTORY":
            _remove_state_after(hdfs, where, version)
            continue
        match = re.fullmatch(r"(\d+)(_[^.]*)?\.(delta|snapshot|zip|changelog)", name)
        if match and int(match.group(1)) > version:
            hdfs.delete(where)


def run_store(spark, query_cls, feed, expected, url: str, port: int, tmp_path, store: str,
              batches: int = 6, keep: int = 2, user: str = "tester") -> list[Outcome]:
    """The matrix row of one state-store configuration (see the module docstring)."""
    outcomes = []
    src = tmp_path / f"in-{store}"
    src.mkdir()
    base = f"/conformance/{store}/base"
    files = [feed(src, i) for i in range(batches)]
    want = expected(*files)
    with spark_conf(spark, STORES[store]), WebHdfsClient(url, user) as hdfs, \
            CatalogClient(url, user) as catalog:
        first = query_cls(spark, src, f"webhdfs://127.0.0.1:{port}{base}")
        first.run()
        catalog.retain(base, keep)
        for batch in range(batches):
            copy = f"/conformance/{store}/b{batch}"
            hdfs.mkdirs(copy)
            copy_tree(hdfs, base, copy)
            try:
                catalog.rollback(copy, batch)
                restores, reason = True, ""
            except NotRestorable as exc:
                restores, reason = False, str(exc)
                remove_after(hdfs, copy, batch)
            replay = query_cls(spark, src, f"webhdfs://127.0.0.1:{port}{copy}")
            try:
                replay.run()
            except Exception as exc:               # Spark refused the checkpoint
                outcomes.append(Outcome(store, batch, restores, f"failed: {why(exc)}",
                                        reason))
                continue
            final = {}
            for b in sorted(first.batches):
                if b <= batch:
                    final.update(first.batches[b])
            for b in sorted(replay.batches):
                final.update(replay.batches[b])
            exact = final == want and (not replay.batches or min(replay.batches) == batch + 1)
            outcomes.append(Outcome(store, batch, restores, "exact" if exact else "wrong",
                                    reason))
    return outcomes


def why(exc: Exception) -> str:
    """Spark's own reason: its error class (the innermost, not STREAM_FAILED), else the
    first line of the message the query ended with."""
    text = str(exc)
    classes = [c for c in re.findall(r"\[([A-Z][A-Z_]+(?:\.[A-Z_]+)*)\]", text)
               if c != "STREAM_FAILED"]
    if classes:
        return classes[0]
    return text.split("terminated with exception:")[-1].strip().splitlines()[0][:120]


def table(outcomes: list[Outcome]) -> list[str]:
    lines = ["| state store | batch | catalog | Spark's restart | agrees |", "|---|---|---|---|---|"]
    for o in outcomes:
        lines.append(f"| {o.store} | {o.batch} | {'restores' if o.catalog_restores else 'refuses'}"
                     f" | {o.spark} | {'yes' if o.agrees else '**no**'} |")
    return lines
