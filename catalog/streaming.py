"""Structured Streaming checkpoints: which batches exist, which one restores, what is wrong.

``scan`` captures a checkpoint directory's structure from inodes (under the namesystem lock);
everything else here is pure: ``summary`` for ``ls`` reads no file, ``validate`` and ``show``
take the contents of the small log files (``log_files`` names them) as a dict.

Restorable batch ``b``: ``metadata`` exists, ``offsets/b`` and ``commits/b`` exist and parse,
and every state store can rebuild version ``b + 1`` (a snapshot at or below it plus every
delta after it). Spark restarts from the newest committed batch, so the checkpoint restarts
as it is when that batch is restorable and any planned-but-uncommitted ``offsets/b+1`` parses.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from catalog.layout import (FileRef, Store, batch_number, is_temp, read_pins, ref,
                            scan_stores, tree_usage)

ERROR, WARNING = "error", "warning"
LOG_VERSION_PREFIX = b"v"


@dataclass
class Layout:
    path: str
    metadata: FileRef | None = None
    offsets: dict[int, FileRef] = field(default_factory=dict)
    commits: dict[int, FileRef] = field(default_factory=dict)
    sources: dict[str, dict[str, FileRef]] = field(default_factory=dict)
    stores: list[Store] = field(default_factory=list)
    temps: list[FileRef] = field(default_factory=list)
    strays: list[FileRef] = field(default_factory=list)
    empty_state: list[FileRef] = field(default_factory=list)
    pins: frozenset = frozenset()
    files: int = 0
    bytes: int = 0
    state_bytes: int = 0
    newest: int = 0
    writing: list[str] = field(default_factory=list)

    @property
    def last_committed(self) -> int | None:
        return max(self.commits) if self.commits else None

    @property
    def operators(self) -> list[str]:
        return sorted({s.operator for s in self.stores}, key=_natural)


@dataclass(frozen=True)
class Issue:
    level: str          # ERROR makes the checkpoint not restorable as it is
    code: str           # stable, for machines: missing-metadata, gap, corrupt-log, ...
    path: str
    message: str

    def to_json(self) -> dict:
        return {"level": self.level, "code": self.code, "path": self.path,
                "message": self.message}


# ------------------------------------------------------------------------------ scan

def scan(node, path: str) -> Layout:
    """The structure of the checkpoint at ``path`` (``node`` is its inode). Under the lock."""
    layout = Layout(path.rstrip("/") or "/", pins=read_pins(node))
    base = layout.path.rstrip("/")
    _walk(node, base, layout)
    children = node.children
    meta = children.get("metadata")
    if meta is not None and not meta.is_dir:
        layout.metadata = ref(meta, f"{base}/metadata")
    for section, target in (("offsets", layout.offsets), ("commits", layout.commits)):
        _scan_log(children.get(section), f"{base}/{section}", target, layout.strays)
    sources = children.get("sources")
    if sources is not None and sources.is_dir:
        for name, src in sources.children.items():
            if src.is_dir:
                layout.sources[name] = {n: ref(f, f"{base}/sources/{name}/{n}")
                                        for n, f in src.children.items()
                                        if not f.is_dir and not n.startswith(".")}
    state = children.get("state")
    if state is not None and state.is_dir:
        scan_stores(state, f"{base}/state", layout.stores, [])
        layout.state_bytes = tree_usage(state)[1]       # operator metadata included
        layout.empty_state = [f for store in layout.stores for files in store.versions.values()
                              for f in files.values() if f.length == 0]
    return layout


def _walk(node, base: str, layout: Layout) -> None:
    """Counts, newest mtime, temp files and files being written, over the whole subtree."""
    layout.newest = node.mtime
    stack = [(base, node)]
    while stack:
        where, current = stack.pop()
        for name, child in current.children.items():
            if child.mtime > layout.newest:
                layout.newest = child.mtime
            if child.is_dir:
                stack.append((f"{where}/{name}", child))
                continue
            layout.files += 1
            layout.bytes += child.length
            if is_temp(name):
                layout.temps.append(ref(child, f"{where}/{name}"))
            if child.client_name is not None:
                layout.writing.append(f"{where}/{name}")


def _scan_log(node, where: str, target: dict, strays: list) -> None:
    if node is None or not node.is_dir:
        return
    for name, child in node.children.items():
        number = batch_number(name)
        if number is not None and not child.is_dir:
            target[number] = ref(child, f"{where}/{name}")
        elif not is_temp(name) and not name.startswith("."):
            strays.append(ref(child, f"{where}/{name}"))


# --------------------------------------------------------------------------- analysis

def log_files(layout: Layout) -> list[FileRef]:
    """The small text files ``validate`` and ``show`` read (never the state files)."""
    files = [layout.metadata] if layout.metadata else []
    files += layout.offsets.values()
    files += layout.commits.values()
    for entries in layout.sources.values():
        files += entries.values()
    return files


def problems(layout: Layout, batch: int, bad: frozenset | set = frozenset()) -> list[str]:
    """Why ``batch`` cannot be restored (empty when it can). ``bad``: paths of log files
    that did not parse."""
    out = []
    if layout.metadata is None:
        out.append(f"{layout.path}/metadata is missing")
    elif layout.metadata.path in bad:
        out.append(f"{layout.metadata.path} is corrupt")
    for section, files in (("offsets", layout.offsets), ("commits", layout.commits)):
        entry = files.get(batch)
        if entry is None:
            out.append(f"{layout.path}/{section}/{batch} is missing")
        elif entry.path in bad:
            out.append(f"{entry.path} is corrupt or truncated")
    for store in layout.stores:
        if store.chain(batch + 1) is None:
            out.append(store.gap(batch + 1))
    return out


def latest_restorable(layout: Layout, bad: frozenset | set = frozenset()) -> int | None:
    for batch in sorted(layout.commits, reverse=True):
        if not problems(layout, batch, bad):
            return batch
    return None


def health(layout: Layout, restorable: int | None, now_ms: int, quiet_ms: int) -> str:
    """``ok``, ``writing`` (changed within the quiet period or a file open), ``empty``
    (no batch yet), ``degraded`` (restores, but not at its last batch: needs a rollback),
    ``broken`` (nothing restores)."""
    last = layout.last_committed
    if layout.writing or now_ms - layout.newest < quiet_ms:
        return "writing"
    if last is None:
        return "empty" if layout.metadata is not None else "broken"
    if restorable is None:
        return "broken"
    return "ok" if restorable == last else "degraded"


def summary(layout: Layout, now_ms: int, quiet_ms: int) -> dict:
    """One ``ls`` row, from the structure alone."""
    restorable = latest_restorable(layout)
    return {"path": layout.path, "kind": "streaming", "lastBatch": layout.last_committed,
            "restorableBatch": restorable, "stateBytes": layout.state_bytes,
            "bytes": layout.bytes, "files": layout.files, "lastUpdate": layout.newest,
            "health": health(layout, restorable, now_ms, quiet_ms),
            "pinned": sorted(layout.pins)}


def quick_summary(node, path: str, now_ms: int, quiet_ms: int) -> dict:
    """The same row as ``summary(scan(node))`` without capturing every file: counts come
    from one walk, and the newest committed batch is checked by looking its files up by
    name. Only a checkpoint that check cannot vouch for (damaged, or state files with
    unusual names) is scanned in full. Under the lock, like ``scan``."""
    files = total = state_bytes = 0
    newest, writing = node.mtime, False
    for name, child in node.children.items():
        if child.is_dir:
            f, t, n, w = tree_usage(child)
        else:
            f, t, n, w = 1, child.length, child.mtime, child.client_name is not None
        files, total, newest, writing = files + f, total + t, max(newest, n), writing or w
        if name == "state":
            state_bytes = t
    commits = _numbers(node.children.get("commits"))
    last = max(commits) if commits else None
    if last is not None and not _vouch(node, last):
        return summary(scan(node, path), now_ms, quiet_ms)
    fresh = writing or now_ms - newest < quiet_ms
    state = "writing" if fresh else ("ok" if last is not None else (
        "empty" if "metadata" in node.children else "broken"))
    return {"path": path.rstrip("/") or "/", "kind": "streaming", "lastBatch": last,
            "restorableBatch": last, "stateBytes": state_bytes, "bytes": total,
            "files": files, "lastUpdate": newest, "health": state,
            "pinned": sorted(read_pins(node))}


def _numbers(node) -> list[int]:
    if node is None or not node.is_dir:
        return []
    return [int(n) for n, c in node.children.items() if n.isdigit() and not c.is_dir]


def _vouch(node, batch: int) -> bool:
    """True only when batch's offsets, commit and metadata exist and every state store
    holds plainly named files rebuilding version batch + 1."""
    meta, offsets = node.children.get("metadata"), node.children.get("offsets")
    if meta is None or meta.is_dir or offsets is None or str(batch) not in offsets.children:
        return False
    stores: list[Store] = []
    state = node.children.get("state")
    if state is not None and state.is_dir:
        scan_stores(state, "", stores, [], names_only=True)
    return all(_plain_chain(store.node, batch + 1) for store in stores)


def _plain_chain(directory, version: int) -> bool:
    children = directory.children
    for v in range(version, 0, -1):
        if f"{v}.snapshot" in children or f"{v}.zip" in children:
            return True
        if f"{v}.delta" not in children and f"{v}.changelog" not in children:
            return False
    return True


# ------------------------------------------------------------------------- log files

class LogFormatError(ValueError):
    pass


def parse_log(data: bytes, what: str) -> list:
    """The JSON entries of a Spark metadata-log file: ``v<N>`` on the first line, then one
    JSON value per line ("-" for a source without an offset)."""
    if not data:
        raise LogFormatError(f"{what} is empty (0 bytes): the write was cut off")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LogFormatError(f"{what} is not UTF-8 at byte {exc.start}") from exc
    head, _, rest = text.partition("\n")
    if not head.startswith("v") or not head[1:].isdigit():
        raise LogFormatError(f"{what} does not start with a version line like 'v1' "
                             f"(found {head[:20]!r})")
    entries = []
    for number, line in enumerate(rest.split("\n"), start=2):
        if not line or line == "-":
            continue
        try:
            entries.append(json.loads(line))
        except ValueError as exc:
            raise LogFormatError(f"{what} line {number} is not valid JSON ({exc.msg} at "
                                 f"column {exc.colno}): truncated or corrupt") from exc
    return entries


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
    entries = parse_log(data, path)
    if section in ("offsets", "commits") and (not entries or not isinstance(entries[0], dict)):
        raise LogFormatError(f"{path} has no batch metadata line: truncated")
    if section == "offsets" and "batchTimestampMs" not in entries[0]:
        raise LogFormatError(f"{path}: the batch metadata has no batchTimestampMs")
    return entries[0] if entries and isinstance(entries[0], dict) else {}


def _section(layout: Layout, path: str) -> str:
    rel = path[len(layout.path.rstrip("/")) + 1:]
    return rel.split("/", 1)[0]


def parse_all(layout: Layout, contents: dict[str, bytes]) -> tuple[dict, dict]:
    """``(parsed, bad)``: batch metadata by path, and error messages by path."""
    parsed, bad = {}, {}
    for entry in log_files(layout):
        data = contents.get(entry.path)
        if isinstance(data, Exception):
            bad[entry.path] = f"{entry.path} could not be read: {data}"
            continue
        try:
            parsed[entry.path] = check_entry(_section(layout, entry.path), data or b"",
                                             entry.path)
        except LogFormatError as exc:
            bad[entry.path] = str(exc)
    return parsed, bad


# -------------------------------------------------------------------------- validate

def validate(layout: Layout, contents: dict[str, bytes]) -> dict:
    """Every problem found, and whether Spark can restart the query as it is."""
    _, bad = parse_all(layout, contents)
    issues = [Issue(ERROR, "corrupt-log", path, message) for path, message in bad.items()]
    issues += _structure_issues(layout)
    last = layout.last_committed
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


def _structure_issues(layout: Layout) -> list[Issue]:
    issues = []
    if layout.metadata is None:
        issues.append(Issue(ERROR, "missing-metadata", f"{layout.path}/metadata",
                            f"{layout.path}/metadata is missing: Spark cannot tell which "
                            f"query this checkpoint belongs to"))
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
                            f"that was never renamed into place"))
    for f in layout.strays:
        issues.append(Issue(WARNING, "unexpected-file", f.path,
                            f"{f.path} is not a batch file"))
    for f in layout.empty_state:
        issues.append(Issue(ERROR, "empty-state-file", f.path,
                            f"state file {f.path} is empty (0 bytes): truncated"))
    for path in layout.writing:
        issues.append(Issue(WARNING, "being-written", path, f"{path} is still being written"))
    return issues


def _gaps(layout: Layout, section: str, files: dict[int, FileRef]) -> list[Issue]:
    """Missing ids between the oldest unpinned batch and the newest (pinned batches kept
    below a retention cut are islands, not gaps)."""
    live = [b for b in files if b not in layout.pins]
    if not live:
        return []
    lo, hi = min(live), max(files)
    missing = [b for b in range(lo, hi + 1) if b not in files]
    if not missing:
        return []
    return [Issue(ERROR, "gap", f"{layout.path}/{section}",
                  f"{section} has a gap: batch {runs(missing)} missing between {lo} and {hi}")]


def runs(numbers: list[int]) -> str:
    """``[3, 4, 5, 9]`` -> ``"3-5, 9"``."""
    out, start = [], None
    for i, n in enumerate(numbers):
        if start is None:
            start = n
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            out.append(str(start) if start == n else f"{start}-{n}")
            start = None
    return ", ".join(out)


def _issue_order(issue: Issue):
    return (issue.level != ERROR, issue.path, issue.code)


def _natural(name: str):
    return (0, int(name), "") if name.isdigit() else (1, 0, name)


# ------------------------------------------------------------------------------ show

def show(layout: Layout, contents: dict[str, bytes]) -> dict:
    """Per batch: offsets and commit present, watermark, timestamp, bytes, restorable; per
    operator: partitions, stores and the state versions on disk."""
    parsed, bad = parse_all(layout, contents)
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
            "batches": batches, "operators": operators(layout),
            "sources": {name: len(entries) for name, entries in sorted(layout.sources.items())},
            "corrupt": sorted(bad.values())}


def _state_bytes(layout: Layout, version: int) -> int:
    total = 0
    for store in layout.stores:
        files = store.versions.get(version, {})
        total += sum(f.length for f in files.values())
    return total


def operators(layout: Layout) -> list[dict]:
    out = []
    for op in layout.operators:
        stores = [s for s in layout.stores if s.operator == op]
        versions = sorted({v for s in stores for v in s.versions})
        out.append({
            "operator": op, "partitions": len({s.partition for s in stores}),
            "stores": sorted({s.name for s in stores}),
            "minVersion": versions[0] if versions else None,
            "maxVersion": versions[-1] if versions else None,
            "snapshots": sorted({v for s in stores for v, f in s.versions.items()
                                 if "snapshot" in f}),
            "bytes": sum(f.length for s in stores for fs in s.versions.values()
                         for f in fs.values()),
        })
    return out
