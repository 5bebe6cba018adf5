"""RDD and DStream checkpoints (``ls`` rows), and what ``gc`` removes.

An RDD checkpoint directory is one SparkContext's ``setCheckpointDir`` run:
``<uuid>/rdd-<id>/part-<n>``. Spark never reads it again after that context stops (unless
``spark.cleaner.referenceTracking.cleanCheckpoints`` removed it already), so one untouched
for the RDD TTL is abandoned. A DStream checkpoint keeps ``checkpoint-<ms>`` files; the newest
is what a restarted StreamingContext reads.

``gc`` removes temporary files (Spark's ``.<name>.<uuid>.tmp``, ``_temporary``) older than the
temp TTL that nobody is writing, and abandoned RDD checkpoint directories. Pure planning over
inodes, under the lock; the service deletes the plan with one DELETE_MANY op.
"""

from __future__ import annotations

import re

from nnlite.catalog.layout import DSTREAM, RDD, is_temp, kind_of, tree_usage

_RDD = re.compile(r"rdd-(\d+)")
_DSTREAM = re.compile(r"checkpoint-(\d+)(\.bk)?")


def rdd_summary(node, path: str, now_ms: int, ttl_ms: int) -> dict:
    files, total, newest, writing = tree_usage(node)
    rdds = sorted(int(m.group(1)) for m in map(_RDD.fullmatch, node.children) if m)
    if writing:
        state = "writing"
    else:
        state = "abandoned" if now_ms - newest >= ttl_ms else "ok"
    return {"path": path, "kind": RDD, "lastBatch": rdds[-1] if rdds else None,
            "restorableBatch": rdds[-1] if rdds else None, "stateBytes": total,
            "bytes": total, "files": files, "lastUpdate": newest, "health": state,
            "pinned": [], "rdds": rdds}


def dstream_summary(node, path: str) -> dict:
    files, total, newest, writing = tree_usage(node)
    rows = dstream_show(node, path)["checkpoints"]
    times = [row["timeMs"] for row in rows]
    good = [row["timeMs"] for row in rows if row["restorable"]]
    if writing:
        state = "writing"
    else:
        state = "ok" if good and good[-1] == times[-1] else ("degraded" if good else "broken")
    return {"path": path, "kind": DSTREAM, "lastBatch": times[-1] if times else None,
            "restorableBatch": good[-1] if good else None, "stateBytes": total,
            "bytes": total, "files": files, "lastUpdate": newest, "health": state,
            "pinned": []}


def rdd_show(node, path: str) -> dict:
    """``show`` of an RDD checkpoint directory: one row per ``rdd-<id>``."""
    rows = []
    for name, child in node.children.items():
        match = _RDD.fullmatch(name)
        if match and child.is_dir:
            files, total, newest, writing = tree_usage(child)
            parts = sum(1 for n, c in child.children.items()
                        if not c.is_dir and n.startswith("part-"))
            rows.append({"rdd": int(match.group(1)), "parts": parts, "files": files,
                         "bytes": total, "lastUpdate": newest, "writing": writing})
    return {"path": path, "kind": RDD, "rdds": sorted(rows, key=lambda r: r["rdd"])}


def dstream_show(node, path: str) -> dict:
    """``show`` of a DStream checkpoint: one row per ``checkpoint-<ms>`` time, with its
    ``.bk`` copy. ``StreamingContext.getOrCreate`` (``CheckpointReader.read``) tries the
    newest file first and falls back to older ones, so a time restores when either file of
    it is non-empty."""
    rows = {}
    for name, child in node.children.items():
        match = _DSTREAM.fullmatch(name)
        if match and not child.is_dir:
            row = rows.setdefault(int(match.group(1)), {
                "timeMs": int(match.group(1)), "bytes": 0, "backupBytes": None,
                "lastUpdate": 0, "writing": False})
            if match.group(2):
                row["backupBytes"] = child.length
            else:
                row["bytes"] = child.length
            row["lastUpdate"] = max(row["lastUpdate"], child.mtime)
            row["writing"] = row["writing"] or child.client_name is not None
    for row in rows.values():
        row["restorable"] = row["bytes"] > 0 or bool(row["backupBytes"])
    return {"path": path, "kind": DSTREAM, "checkpoints": [rows[t] for t in sorted(rows)]}


def plan_gc(node, path: str, now_ms: int, tmp_ttl_ms: int, rdd_ttl_ms: int,
            can_list=lambda node: True, can_delete=lambda path: True) -> list[dict]:
    """``[{"path", "reason", "bytes"}]`` to remove under ``node``: only below directories
    ``can_list`` allows, and only what ``can_delete`` allows (the caller's own rights, so a
    dry run names nothing the caller could not see or remove)."""
    out = []
    stack = [(path.rstrip("/"), node)]
    while stack:
        where, current = stack.pop()
        if not can_list(current):
            continue
        if kind_of(current) == RDD:
            files, total, newest, writing = tree_usage(current)
            if not writing and now_ms - newest >= rdd_ttl_ms:
                out.append({"path": where or "/", "reason": "abandoned RDD checkpoint",
                            "bytes": total})
                continue
        for name, child in current.children.items():
            target = f"{where}/{name}"
            if is_temp(name) and _stale(child, now_ms, tmp_ttl_ms):
                out.append({"path": target, "reason": "orphan temporary file",
                            "bytes": tree_usage(child)[1] if child.is_dir else child.length})
            elif child.is_dir:
                stack.append((target, child))
    return sorted((item for item in out if can_delete(item["path"])),
                  key=lambda item: item["path"])


def _stale(node, now_ms: int, ttl_ms: int) -> bool:
    if node.is_dir:
        files, _, newest, writing = tree_usage(node)
        return not writing and now_ms - newest >= ttl_ms
    return node.client_name is None and now_ms - node.mtime >= ttl_ms
