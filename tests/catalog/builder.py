"""Checkpoint-shaped namespaces for the catalog's tests, built in memory the way Spark lays
them out (see catalog/layout.py), with the log files' contents beside them, and one helper per
kind of damage."""

from __future__ import annotations

import json
import uuid

from nnlite.namenode.namespace import delete
from tests.namenode.helpers import SUPER, new_ns, write_file

BASE = "/ckpt/q1"
QUERY_ID = "3f1c58a4-1111-4c4d-9b5e-5d1f2a7b9e01"


def offsets_bytes(batch: int, watermark: int = 0, version: int = 1) -> bytes:
    """An offsets entry with one file source at log offset ``batch``: OffsetSeqLog's v1 (the
    source's offset on its own line) or v2 (``spark.sql.streaming.offsetLog.formatVersion=2``,
    ``0:<offset>``)."""
    meta = {"batchWatermarkMs": watermark, "batchTimestampMs": 1_700_000_000_000 + batch,
            "conf": {"spark.sql.shuffle.partitions": "2"}}
    source = json.dumps({"logOffset": batch})
    return f"v{version}\n{json.dumps(meta)}\n{'0:' if version == 2 else ''}{source}".encode()


def commit_bytes(watermark: int = 0, unique_ids: list[str] | None = None) -> bytes:
    """A commit; with ``unique_ids`` (one per partition of operator 0) a CommitMetadataV2
    naming them (checkpoint format version 2)."""
    if unique_ids is None:
        return f"v1\n{json.dumps({'nextBatchWatermarkMs': watermark})}".encode()
    meta = {"nextBatchWatermarkMs": watermark, "stateUniqueIds": {"0": [[u] for u in unique_ids]}}
    return f"v2\n{json.dumps(meta)}".encode()


def unique_id(version: int, partition: int, attempt: int = 0) -> str:
    """The unique id of a state version's files (format version 2), one per task attempt."""
    return str(uuid.UUID(int=version * 1000 + partition * 10 + attempt))


class Checkpoint:
    """A streaming checkpoint in a fresh namespace: ``files`` maps path -> bytes."""

    def __init__(self, batches: int = 6, *, partitions: int = 2, snapshot_every: int = 0,
                 pending: bool = False, base: str = BASE, ns=None, offsets_version: int = 1,
                 unique_ids: bool = False):
        """``unique_ids``: checkpoint format version 2, RocksDB's names
        (``<v>_<id>.changelog``, ``<v>_<id>.zip`` snapshots) and v2 commits naming them."""
        self.ns = ns or new_ns()
        self.offsets_version = offsets_version
        self.unique_ids = unique_ids
        self.base = base
        self.files: dict[str, bytes] = {}
        self.put("metadata", json.dumps({"id": QUERY_ID}).encode())
        for batch in range(batches):
            self.add_batch(batch, partitions, snapshot_every)
        if pending:
            self.put(f"offsets/{batches}", offsets_bytes(batches, version=offsets_version))
        self.put("state/0/_metadata/metadata", b"v1\n{}")

    def put(self, rel: str, data: bytes) -> str:
        path = f"{self.base}/{rel}"
        write_file(self.ns, path, sizes=(len(data),) if data else (), caller=SUPER)
        self.files[path] = data
        return path

    def add_batch(self, batch: int, partitions: int = 2, snapshot_every: int = 0) -> None:
        self.put(f"offsets/{batch}", offsets_bytes(batch, batch * 10, self.offsets_version))
        self.put(f"sources/0/{batch}", f'v1\n{{"path":"in/{batch}.json"}}'.encode())
        version = batch + 1
        for p in range(partitions):
            self.put(self.state_name(version, p, "delta"), b"delta" * (p + 1))
            if snapshot_every and version % snapshot_every == 0:
                self.put(self.state_name(version, p, "snapshot"), b"snapshot")
        ids = [unique_id(version, p) for p in range(partitions)] if self.unique_ids else None
        self.put(f"commits/{batch}", commit_bytes(batch * 10, ids))

    def state_name(self, version: int, partition: int, kind: str, attempt: int = 0) -> str:
        """The path (relative) of a state file: ``<v>.delta|.snapshot``, or with unique ids
        ``<v>_<id>.changelog|.zip``."""
        if not self.unique_ids:
            return f"state/0/{partition}/{version}.{kind}"
        suffix = "changelog" if kind == "delta" else "zip"
        return f"state/0/{partition}/{version}_{unique_id(version, partition, attempt)}.{suffix}"

    def remove(self, rel: str) -> None:
        path = f"{self.base}/{rel}"
        delete.delete(self.ns, path, True, SUPER)
        self.files.pop(path, None)

    def node(self):
        return self.ns.tree.get(self.base)
