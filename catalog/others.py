"""RDD and DStream checkpoints (``ls`` rows, ``show``, ``latest``, ``validate``), and what
``gc`` removes.

An RDD checkpoint directory is one SparkContext's ``setCheckpointDir`` run:
``<uuid>/rdd-<id>/part-<n>``. Spark never reads it again after that context stops (unless
``spark.cleaner.referenceTracking.cleanCheckpoints`` removed it already), so one untouched
for the RDD TTL is abandoned. An ``rdd-<id>`` reads when its part files are ``part-00000``
up to the highest without a gap (``ReliableCheckpointRDD.getPartitions`` fails on any other
name), none still being written; nothing records how many partitions there were, so parts
missing at the end go unseen. Each RDD of the directory may still be read, so the directory
validates only when every one does.

A DStream checkpoint keeps ``checkpoint-<ms>`` files and the ``.bk`` copy of the one before;
``StreamingContext.getOrCreate`` (``CheckpointReader.read``) reads the newest time whose file
is not empty, falling back to older ones, so a time restores when either file is non-empty.
``latest`` and ``validate`` follow the rules of ``verdicts.py``.

``gc`` removes temporary files (Spark's ``.<name>.<uuid>.tmp``, ``_temporary``) older than the
temp TTL that nobody is writing, and abandoned RDD checkpoint directories. Pure planning over
inodes, under the lock; the service deletes the plan with one DELETE_MANY op.
"""

from __future__ import annotations

import re

from nnlite.catalog import verdicts
from nnlite.catalog.layout import DSTREAM, RDD, is_temp, kind_of, tree_usage

_RDD = re.compile(r"rdd-(\d+)")
_DSTREAM = re.compile(r"checkpoint-(\d+)(\.bk)?")


def rdd_summary(node, path: str, now_ms: int, ttl_ms: int) -> dict:
    files, total, newest, writing = tree_usage(node)
    judged = rdd_judge(node, path)
    state = "writing" if writing else verdicts.health(judged, every=True)
    if state == "ok" and now_ms - newest >= ttl_ms:
        state = "abandoned"
    return _row(path, RDD, judged, state, (files, total, newest)) | {
        "rdds": [v.id for v in judged]}


def dstream_summary(node, path: str) -> dict:
    files, total, newest, writing = tree_usage(node)
    judged = dstream_judge(node, path)
    state = "writing" if writing else verdicts.health(judged)
    return _row(path, DSTREAM, judged, state, (files, total, newest))


def _row(path: str, kind: str, judged: list, state: str, usage: tuple) -> dict:
    """An ``ls`` row from the verdicts and ``(files, bytes, newest mtime)``."""
    best = verdicts.newest_restorable(judged)
    return {"path": path, "kind": kind, "lastBatch": judged[-1].id if judged else None,
            "restorableBatch": best.id if best else None, "stateBytes": usage[1],
            "bytes": usage[1], "files": usage[0], "lastUpdate": usage[2], "health": state,
            "pinned": []}


def rdd_judge(node, path: str) -> list[verdicts.Verdict]:
    """Each ``rdd-<id>``, by id: whether ``ReliableCheckpointRDD`` reads its parts."""
    out = []
    for rdd, child in sorted((int(m.group(1)), node.children[m.group(0)])
                             for m in map(_RDD.fullmatch, node.children) if m):
        where = f"{path.rstrip('/')}/rdd-{rdd}"
        if child.is_dir:
            writing = sorted(n for n, c in child.children.items() if c.client_name is not None)
            problems = _part_problems(child, where) + [f"{where}/{n} is being written"
                                                       for n in writing]
            out.append(verdicts.Verdict(rdd, where, not problems, problems,
                                        complete=not writing))
    return out


def _part_problems(node, where: str) -> list[str]:
    """``ReliableCheckpointRDD.getPartitions``: the files named ``part-*``, sorted by the
    number after ``part-``, must be ``part-00000``, ``part-00001``, ... in order."""
    names = [n for n, c in node.children.items() if not c.is_dir and n.startswith("part-")]
    odd = sorted(n for n in names if not n[5:].isdigit())
    if odd:
        return [f"{where}/{odd[0]} is not a part file ReliableCheckpointRDD can order "
                f"(part-<n>): reading the RDD fails"]
    numbers = {int(n[5:]): n for n in names}
    for i in range(len(numbers)):
        if numbers.get(i) != f"part-{i:05d}":
            return [f"{where}/part-{i:05d} is missing (its parts run to "
                    f"{numbers[max(numbers)]}): ReliableCheckpointRDD fails reading the RDD"]
    return []


def dstream_judge(node, path: str) -> list[verdicts.Verdict]:
    """Each checkpoint time, oldest first: restorable when its file or its ``.bk`` copy
    holds data; one with a file still being written is not complete yet."""
    out = []
    for row in dstream_show(node, path)["checkpoints"]:
        where = f"{path.rstrip('/')}/checkpoint-{row['timeMs']}"
        copy = {None: ", with no .bk copy", 0: ", and so is its .bk copy"}.get(
            row["backupBytes"], "")
        problems = [] if row["restorable"] else [
            f"{where} is empty (0 bytes){copy}: StreamingContext.getOrCreate skips it"]
        if row["writing"]:
            problems.append(f"{where} is being written")
        out.append(verdicts.Verdict(row["timeMs"], where, not problems, problems,
                                    complete=not row["writing"]))
    return out


def rdd_latest(node, path: str) -> dict | None:
    return verdicts.latest(rdd_judge(node, path))


def dstream_latest(node, path: str) -> dict | None:
    return verdicts.latest(dstream_judge(node, path))


def rdd_validate(node, path: str) -> dict:
    return verdicts.validation(path, RDD, rdd_judge(node, path), every=True)


def dstream_validate(node, path: str) -> dict:
    return verdicts.validation(
        path, DSTREAM, dstream_judge(node, path),
        advice=lambda best, _: (f"StreamingContext.getOrCreate falls back to {best.path} by "
                                f"itself: the batches after it run again"))


def rdd_show(node, path: str) -> dict:
    """``show`` of an RDD checkpoint directory: one row per ``rdd-<id>``, judged."""
    rows = []
    for v in rdd_judge(node, path):
        child = node.children[f"rdd-{v.id}"]
        files, total, newest, writing = tree_usage(child)
        parts = sum(1 for n, c in child.children.items()
                    if not c.is_dir and n.startswith("part-"))
        rows.append({"rdd": v.id, "parts": parts, "files": files, "bytes": total,
                     "lastUpdate": newest, "writing": writing, "restorable": v.restorable,
                     "problems": v.problems})
    return {"path": path, "kind": RDD, "rdds": rows}


def dstream_show(node, path: str) -> dict:
    """``show`` of a DStream checkpoint: one row per ``checkpoint-<ms>`` time, with its
    ``.bk`` copy. ``StreamingContext.getOrCreate`` (``CheckpointReader.read``) tries the
    newest file first and falls back to older ones, so a time restores when either file of
    it is non-empty."""
    rows: dict[int, dict] = {}
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


TMP_TTL_SETTING, RDD_TTL_SETTING = "nnlite.catalog.gc.tmp-ttl", "nnlite.catalog.gc.rdd-ttl"


def plan_gc(node, path: str, now_ms: int, tmp_ttl_ms: int, rdd_ttl_ms: int,
            can_list=lambda node: True, can_delete=lambda path: True
            ) -> tuple[list[dict], list[dict]]:
    """``(removed, kept)`` under ``node``, by path. ``removed``: ``{"path", "reason",
    "bytes"}`` to delete. ``kept``: the candidates that stay, each with ``"why"``: ``young``
    (changed less than its TTL ago: ``"lastChange"``, ``"setting"``, ``"ttlMs"``, and
    ``"removableAt"``, when gc will remove it), ``writing`` (a file of it is open) or
    ``denied`` (the caller may not delete it). Only below directories ``can_list`` allows,
    and only what ``can_delete`` allows: the caller's own rights, so a dry run names nothing
    the caller could not see or remove."""
    removed: list[dict] = []
    kept: list[dict] = []
    stack = [(path.rstrip("/"), node)]
    while stack:
        where, current = stack.pop()
        if not can_list(current):
            continue
        if kind_of(current) == RDD:
            rdd = _candidate(current, where or "/", ("abandoned RDD checkpoint",
                                                     "RDD checkpoint"),
                             now_ms, rdd_ttl_ms, RDD_TTL_SETTING)
            (kept if rdd.get("why") else removed).append(rdd)
            if not rdd.get("why"):
                continue
        for name, child in current.children.items():
            target = f"{where}/{name}"
            if is_temp(name):
                temp = _candidate(child, target, ("orphan temporary file", "temporary file"),
                                  now_ms, tmp_ttl_ms, TMP_TTL_SETTING)
                (kept if temp.get("why") else removed).append(temp)
                if not temp.get("why"):
                    continue
            if child.is_dir:
                stack.append((target, child))
    denied = [{**item, "why": "denied"} for item in removed if not can_delete(item["path"])]
    removed = [item for item in removed if can_delete(item["path"])]
    return _by_path(removed), _by_path(kept + denied)


def _by_path(items: list[dict]) -> list[dict]:
    return sorted(items, key=lambda item: item["path"])


def _candidate(node, path: str, reasons: tuple[str, str], now_ms: int, ttl_ms: int,
               setting: str) -> dict:
    """What gc does with ``node``: removed (``reasons[0]``) once nothing in it is open and
    it is unchanged for ``ttl_ms``, else kept (``reasons[1]``) and why."""
    if node.is_dir:
        _, size, newest, writing = tree_usage(node)
    else:
        size, newest, writing = node.length, node.mtime, node.client_name is not None
    if writing:
        return {"path": path, "reason": reasons[1], "bytes": size, "why": "writing"}
    if now_ms - newest < ttl_ms:
        return {"path": path, "reason": reasons[1], "bytes": size, "why": "young",
                "lastChange": newest, "setting": setting, "ttlMs": ttl_ms,
                "removableAt": newest + ttl_ms}
    return {"path": path, "reason": reasons[0], "bytes": size}
