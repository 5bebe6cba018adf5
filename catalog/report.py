"""What ``validate`` and ``show`` say about a streaming checkpoint, from its structure
(``streaming.scan``) and the contents of its small log files (``streaming.log_files``).

A Spark metadata-log file (offsets, commits, source logs) is ``v<N>`` on its first line and
one JSON value per line after it; ``metadata`` is one JSON object with the query ``id``. A file
that does not parse is reported with its path, line and what is wrong, and makes the batches
that need it unrestorable. Pure functions: no I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from nnlite.catalog.layout import SNAPSHOT, FileRef
from nnlite.catalog.streaming import (
    ERROR,
    WARNING,
    Layout,
    latest_restorable,
    leftovers,
    log_files,
    problems,
    runs,
    source_log_offsets,
)


@dataclass(frozen=True)
class Issue:
    level: str          # ERROR makes the checkpoint not restorable as it is
    code: str           # stable, for machines: missing-metadata, gap, corrupt-log, ...
    path: str
    message: str

    def to_json(self) -> dict:
        return {"level": self.level, "code": self.code, "path": self.path,
                "message": self.message}


# ------------------------------------------------------------------------- log files

class LogFormatError(ValueError):
    pass


# The newest version of each batch log that Spark 4.3 reads; a newer one fails the restart
# (MetadataVersionUtil.validateVersion: "UnsupportedLogVersion: maximum supported log version
# is v<max>, but encountered v<n>").
MAX_LOG_VERSION = {"offsets": 2,      # OffsetSeqLog.MAX_VERSION
                   "commits": 3}      # CommitLog.MAX_VERSION
# OffsetSeqLog's version 2 (spark.sql.streaming.offsetLog.formatVersion=2, OffsetMap): each
# line after the batch metadata is ``<sourceId>:<offset JSON or ->`` instead of one line per
# source in order.
OFFSET_MAP_VERSION = 2
VOID_OFFSET = "-"         # OffsetSeqLog.SERIALIZED_VOID_OFFSET


def _lines(data: bytes, what: str, section: str = "") -> tuple[int, list[str]]:
    """``(version, lines after the version line)`` of a Spark metadata-log file."""
    if not data:
        raise LogFormatError(f"{what} is empty (0 bytes): the write was cut off")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LogFormatError(f"{what} is not UTF-8 at byte {exc.start}") from exc
    head, _, rest = text.partition("\n")
    if not head.startswith("v") or not head[1:].strip().isdigit():
        raise LogFormatError(f"{what} does not start with a version line like 'v1' "
                             f"(found {head[:20]!r})")
    version = int(head[1:])
    newest = MAX_LOG_VERSION.get(section, version)
    if not 0 < version <= newest:
        raise LogFormatError(f"{what} is log version v{version}: Spark reads {section} up to "
                             f"v{newest} (UnsupportedLogVersion)")
    return version, rest.split("\n")


def _json(line: str, what: str, number: int):
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise LogFormatError(f"{what} line {number} is not valid JSON ({exc.msg} at "
                             f"column {exc.colno}): truncated or corrupt") from exc


def parse_log(data: bytes, what: str, section: str = "") -> list:
    """The JSON entries of a Spark metadata-log file: ``v<N>`` on the first line, then one
    JSON value per line ("-" for a source without an offset)."""
    _, lines = _lines(data, what, section)
    return [_json(line, what, number) for number, line in enumerate(lines, start=2)
            if line and line != VOID_OFFSET]


def parse_offsets(data: bytes, what: str) -> tuple[dict, dict[str, object]]:
    """``(batch metadata, {source id: offset})`` of an offsets entry, as
    ``OffsetSeqLog.deserialize`` reads it. v1: the lines after the metadata are the sources in
    order, ids ``"0"``, ``"1"``, ... v2 (OffsetMap): ``<sourceId>:<offset>`` lines, split at
    the first colon; a line without one fails the restart ("Invalid OffsetMap format"). A
    source without an offset (``-``) maps to None. The source id names the source's log
    directory, ``sources/<id>``: the ordinal, or with source evolution
    (``spark.sql.streaming.queryEvolution.enableSourceEvolution``) the name a query gives
    the source (``DataStreamReader.name``), its lines ``<name>:<offset>`` and its log
    ``sources/<name>`` (run)."""
    version, lines = _lines(data, what, "offsets")
    if not lines or not lines[0].strip():
        raise LogFormatError(f"{what} has no batch metadata line: truncated")
    meta = _json(lines[0], what, 2)
    if not isinstance(meta, dict):
        raise LogFormatError(f"{what} has no batch metadata line: truncated")
    if "batchTimestampMs" not in meta:
        raise LogFormatError(f"{what}: the batch metadata has no batchTimestampMs")
    sources: dict[str, object] = {}
    body = lines[1:-1] if lines[-1] == "" else lines[1:]     # getLines: no line after a \n
    for number, line in enumerate(body, start=3):
        source = str(len(sources))
        if version == OFFSET_MAP_VERSION:
            source, colon, line = line.partition(":")
            if not colon:
                raise LogFormatError(f"{what} line {number} is not <sourceId>:<offset> "
                                     f"(Invalid OffsetMap format): truncated or corrupt")
        sources[source] = None if line == VOID_OFFSET else _json(line, what, number)
    return meta, sources


def check_entry(section: str, data: bytes, path: str) -> dict:
    """Parse one offsets/commits/metadata file; the batch metadata it carries."""
    if section == "metadata":
        try:
            doc = json.loads(data.decode("utf-8")) if data else None
        except (UnicodeDecodeError, ValueError) as exc:
            raise LogFormatError(f"{path} is not valid JSON: truncated or corrupt") from exc
        if not isinstance(doc, dict) or "id" not in doc:
            raise LogFormatError(f"{path} has no query id (expected {{\"id\": ...}})")
        return doc
    if section == "offsets":
        return parse_offsets(data, path)[0]
    entries = parse_log(data, path, section)
    if section == "commits" and (not entries or not isinstance(entries[0], dict)):
        raise LogFormatError(f"{path} has no batch metadata line: truncated")
    if section == "commits":
        commit_unique_ids(entries[0], path)
    return entries[0] if entries and isinstance(entries[0], dict) else {}


def commit_unique_ids(meta: dict, what: str) -> dict[tuple[str, str], list[str]]:
    """``{(operator, partition): unique ids}`` of a commit's ``stateUniqueIds``
    (CommitMetadataV2, checkpoint format version 2: operator id -> per partition, in order,
    the unique ids of its stores' files for the next state version); empty without them.
    A shape json4s could not read as ``Map[Long, Array[Array[String]]]`` fails the
    restart."""
    ids = meta.get("stateUniqueIds")
    if ids is None:
        return {}
    if not isinstance(ids, dict) or not all(
            isinstance(parts, list) and all(isinstance(part, list) and
                                            all(isinstance(u, str) for u in part)
                                            for part in parts)
            for parts in ids.values()) or not all(op.isdigit() for op in ids):
        raise LogFormatError(f"{what}: stateUniqueIds is not {{operator id: [[unique id, "
                             f"...] per partition]}}: corrupt")
    return {(op, str(index)): part for op, parts in ids.items()
            for index, part in enumerate(parts)}


def _section(layout: Layout, path: str) -> str:
    rel = path[len(layout.path.rstrip("/")) + 1:]
    return rel.split("/", 1)[0]


def parse_all(layout: Layout, contents: dict[str, bytes]) -> tuple[dict, dict]:
    """``(parsed, bad)``: batch metadata by path, and error messages by path, for the log
    files in ``contents`` (all of ``log_files`` unless the caller read fewer). Each offsets
    entry's file-source log offsets go to ``layout.log_offsets`` (rule 6 of streaming.py)."""
    parsed, bad = {}, {}
    offsets = {f.path: batch for batch, f in layout.offsets.items()}
    commits = {f.path: batch for batch, f in layout.commits.items()}
    for entry in log_files(layout):
        if entry.path not in contents:
            continue
        data = contents[entry.path]
        if isinstance(data, Exception):
            bad[entry.path] = f"{entry.path} could not be read: {data}"
            continue
        try:
            if entry.path in offsets:
                parsed[entry.path], sources = parse_offsets(data or b"", entry.path)
                layout.log_offsets[offsets[entry.path]] = source_log_offsets(sources)
            else:
                parsed[entry.path] = check_entry(_section(layout, entry.path), data or b"",
                                                 entry.path)
            if entry.path in commits:
                layout.unique_ids[commits[entry.path]] = commit_unique_ids(parsed[entry.path],
                                                                           entry.path)
        except LogFormatError as exc:
            bad[entry.path] = str(exc)
    return parsed, bad


# -------------------------------------------------------------------------- validate

def validate(layout: Layout, contents: dict[str, bytes],
             checksums: dict[str, str] | None = None) -> dict:
    """Every problem found, and whether Spark can restart the query as it is.
    ``checksums``: state files that fail their ``.crc`` sidecar, path -> why
    (``checksums.verify``): an error where the last committed batch's restore reads them, a
    warning elsewhere (nothing reads them)."""
    _, bad = parse_all(layout, contents)
    issues = [Issue(ERROR, "corrupt-log", path, message) for path, message in bad.items()]
    issues += _structure_issues(layout)
    last = layout.last_committed
    read = _chain_paths(layout, last) if last is not None else set()
    for path, message in (checksums or {}).items():
        issues.append(Issue(ERROR if path in read else WARNING, "checksum-mismatch", path,
                            message))
    bad = {**bad, **(checksums or {})}
    restorable = latest_restorable(layout, set(bad))
    if last is not None and restorable != last:
        for message in problems(layout, last, set(bad)):
            issues.append(Issue(ERROR, "not-restorable", layout.path,
                                f"batch {last} (the last committed) cannot be restored: "
                                f"{message}"))
    pending = last + 1 if last is not None else 0
    if layout.offsets.get(pending) and layout.offsets[pending].path in bad:
        issues.append(Issue(ERROR, "corrupt-pending", layout.offsets[pending].path,
                            f"batch {pending} is planned but its offsets do not parse: "
                            f"Spark fails reading it on restart"))
    ok = not any(i.level == ERROR for i in issues) and (last is not None or
                                                        layout.metadata is not None)
    advice = None
    if not ok and restorable is not None and restorable != last:
        advice = (f"nnlite catalog rollback {layout.path} --to-batch {restorable} makes the "
                  f"query restart from batch {restorable + 1}")
    return {"path": layout.path, "restorable": ok, "lastBatch": last,
            "restorableBatch": restorable, "advice": advice,
            "issues": [i.to_json() for i in sorted(issues, key=_issue_order)]}


def _chain_paths(layout: Layout, batch: int) -> set[str]:
    """The state files a restart after ``batch`` reads."""
    return {f.path for store in layout.stores
            for f in store.chain(batch + 1, layout.unique_ids, layout.lineage) or ()}


def _structure_issues(layout: Layout) -> list[Issue]:
    issues = []
    if layout.metadata is None:
        issues.append(Issue(ERROR, "missing-metadata", f"{layout.path}/metadata",
                            f"{layout.path}/metadata is missing while the offset and commit "
                            f"logs hold batches: Spark refuses to restart "
                            f"(STREAMING_CHECKPOINT_MISSING_METADATA_FILE)"))
    issues += _gaps(layout, "offsets", layout.offsets)
    issues += _gaps(layout, "commits", layout.commits)
    last = layout.last_committed
    for batch in sorted(set(layout.commits) - set(layout.offsets)):
        issues.append(Issue(ERROR, "commit-without-offsets", layout.commits[batch].path,
                            f"commits/{batch} exists but offsets/{batch} does not"))
    beyond = sorted(b for b in layout.offsets if last is None or b > last)
    if len(beyond) > 1:
        issues.append(Issue(ERROR, "uncommitted-offsets", layout.offsets[beyond[-1]].path,
                            f"offsets without commit beyond the last batch "
                            f"({runs(beyond)}); Spark plans at most one batch ahead"))
    elif beyond:
        issues.append(Issue(WARNING, "pending-batch", layout.offsets[beyond[0]].path,
                            f"batch {beyond[0]} was planned but not committed; Spark "
                            f"re-runs it on restart"))
    for f in layout.temps:
        issues.append(Issue(WARNING, "leftover-temp", f.path,
                            f"leftover temporary file {f.path} ({f.length} bytes): a write "
                            f"that was never renamed into place; nnlite catalog gc removes "
                            f"it once unchanged for nnlite.catalog.gc.tmp-ttl"))
    for f in layout.strays:
        issues.append(Issue(WARNING, "unexpected-file", f.path,
                            f"{f.path} is not a batch file"))
    for f, version, named in leftovers(layout):
        issues.append(Issue(WARNING, "leftover-unique-id", f.path,
                            f"{f.path}: state version {version} of a unique id that "
                            f"commits/{version - 1} does not record ({', '.join(named)}): "
                            f"left by a task attempt that was not committed; a restore never "
                            f"reads it (RocksDB.load takes the committed id), retention "
                            f"removes it"))
    for f in layout.empty_state:
        issues.append(Issue(ERROR, "empty-state-file", f.path,
                            f"state file {f.path} is empty (0 bytes): truncated"))
    for path in layout.writing:
        issues.append(Issue(WARNING, "being-written", path, f"{path} is still being written"))
    return issues


def _gaps(layout: Layout, section: str, files: dict[int, FileRef]) -> list[Issue]:
    """Missing ids between the oldest unpinned batch and the newest (pinned batches kept
    below a retention cut are islands, not gaps)."""
    islands = set(layout.pins) | {p - 1 for p in layout.pins}    # a pin keeps offsets p - 1
    live = [b for b in files if b not in islands]
    if not live:
        return []
    lo, hi = min(live), max(files)
    missing = [b for b in range(lo, hi + 1) if b not in files]
    if not missing:
        return []
    return [Issue(ERROR, "gap", f"{layout.path}/{section}",
                  f"{section} has a gap: batch {runs(missing)} missing between {lo} and {hi}")]


def _issue_order(issue: Issue):
    return (issue.level != ERROR, issue.path, issue.code)


# ------------------------------------------------------------------------------ show

def show(layout: Layout, contents: dict[str, bytes],
         checksums: dict[str, str] | None = None) -> dict:
    """Per batch: offsets and commit present, watermark, timestamp, bytes, restorable; per
    operator: partitions, stores and the state versions on disk. ``checksums``: as
    ``validate``'s."""
    parsed, bad = parse_all(layout, contents)
    bad = {**bad, **(checksums or {})}
    batches = []
    for batch in sorted(set(layout.offsets) | set(layout.commits)):
        offsets, commit = layout.offsets.get(batch), layout.commits.get(batch)
        meta = parsed.get(offsets.path, {}) if offsets else {}
        state = _state_bytes(layout, batch + 1)
        batches.append({
            "batch": batch, "offsets": offsets is not None, "commit": commit is not None,
            "watermarkMs": meta.get("batchWatermarkMs"),
            "timestampMs": meta.get("batchTimestampMs"),
            "bytes": (offsets.length if offsets else 0) + (commit.length if commit else 0),
            "stateVersion": batch + 1, "stateBytes": state,
            "pinned": batch in layout.pins,
            "restorable": commit is not None and not problems(layout, batch, set(bad)),
        })
    query_id = parsed.get(layout.metadata.path, {}).get("id") if layout.metadata else None
    return {"path": layout.path, "queryId": query_id, "lastBatch": layout.last_committed,
            "asyncProgressTracking": layout.async_progress, "batches": batches,
            "operators": operators(layout),
            "sources": {name: len(entries) for name, entries in sorted(layout.sources.items())},
            "corrupt": sorted(bad.values())}


def _state_bytes(layout: Layout, version: int) -> int:
    return sum(f.length for store in layout.stores for v, _, f in store.files()
               if v == version)


def operators(layout: Layout) -> list[dict]:
    out = []
    for op in layout.operators:
        stores = [s for s in layout.stores if s.operator == op]
        versions = sorted({v for s in stores for v, _, _ in s.files()})
        out.append({
            "operator": op, "partitions": len({s.partition for s in stores}),
            "stores": sorted({s.name for s in stores}),
            "minVersion": versions[0] if versions else None,
            "maxVersion": versions[-1] if versions else None,
            "snapshots": sorted({v for s in stores for v, kind, _ in s.files()
                                 if kind == SNAPSHOT}),
            "bytes": sum(f.length for s in stores for _, _, f in s.files()),
        })
    return out
