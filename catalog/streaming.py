"""Structured Streaming checkpoints: which batches exist, which one restores, what is wrong.

``scan`` captures a checkpoint directory's structure from inodes (under the namesystem lock);
everything else here is pure. ``summary`` and ``quick_summary`` make ``ls``'s row and read no
file; ``report.py`` builds ``validate`` and ``show`` on top, with the contents of the small log
files that ``log_files`` names.

Restorable batch ``b`` -- Spark (4.3, as installed) restarts after it -- when each rule holds.
Where a rule comes from Spark's restart path, the class is named; "run" marks the rules a test
proves by restarting real Spark (tests/catalog/test_spark_catalog.py):

1. The newest offsets entry is where Spark resumes (``MicroBatchExecution.populateStartOffsets``
   via ``OffsetSeqLog.getLatest``): with ``commits/b`` the newest commit, it plans ``b + 1``;
   an uncommitted ``offsets/b+1`` is re-run as planned, so it must parse. (run)
2. ``offsets/b`` and ``commits/b`` exist and parse (``HDFSMetadataLog.get``: a truncated or
   corrupt entry fails the restart). (not yet run: the conformance matrix will)
3. ``offsets/b-1`` exists when ``b > 0``: the restart reads it as the committed offsets
   (``MicroBatchExecution.validateOffsetLogAndGetPrevOffset``, "batch b-1 doesn't exist"), so
   retention keeps the offsets before every kept batch. (run)
4. ``metadata`` exists and parses: with batches in the logs Spark refuses a checkpoint without
   it (``STREAMING_CHECKPOINT_MISSING_METADATA_FILE``) and fails on one it cannot read
   (``StreamMetadata.read``). (run)
5. Every state store rebuilds version ``b + 1``: the newest snapshot at or below it and every
   delta after it (``HDFSBackedStateStoreProvider.loadMap``; RocksDB's ``<v>.zip`` snapshots
   and ``<v>.changelog`` files the same way). (run for the HDFS-backed provider; RocksDB,
   changelog checkpointing and checkpoint format v2 are not yet run)

Not yet derived from Spark: gaps in the middle of the logs (reported, though a restart reads
only the newest two offsets entries), the file source's own log and its compaction, and async
progress tracking.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nnlite.catalog.layout import (
    FileRef,
    Store,
    batch_number,
    is_temp,
    read_pins,
    ref,
    scan_stores,
    tree_usage,
)

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
        scan_stores(state, f"{base}/state", layout.stores)
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
        # Spark 4 refuses a checkpoint whose logs hold batches but whose metadata is gone
        # (STREAMING_CHECKPOINT_MISSING_METADATA_FILE); it writes a new one only for an empty
        # checkpoint (StreamingQueryCheckpointMetadata).
        out.append(f"{layout.path}/metadata is missing")
    elif layout.metadata.path in bad:
        out.append(f"{layout.metadata.path} is corrupt")
    for section, files in (("offsets", layout.offsets), ("commits", layout.commits)):
        entry = files.get(batch)
        if entry is None:
            out.append(f"{layout.path}/{section}/{batch} is missing")
        elif entry.path in bad:
            out.append(f"{entry.path} is corrupt or truncated")
    if batch > 0:
        before = layout.offsets.get(batch - 1)
        if before is None or before.path in bad:
            out.append(f"{layout.path}/offsets/{batch - 1} is "
                       f"{'missing' if before is None else 'corrupt'}: restarting after batch "
                       f"{batch} reads it as the committed offsets (MicroBatchExecution."
                       f"validateOffsetLogAndGetPrevOffset)")
    for store in layout.stores:
        if store.chain(batch + 1) is None:
            out.append(store.gap(batch + 1))
    return out


def latest_restorable(layout: Layout, bad: frozenset | set = frozenset()) -> int | None:
    for batch in sorted(layout.commits, reverse=True):
        if not problems(layout, batch, bad):
            return batch
    return None


def health(layout: Layout, restorable: int | None) -> str:
    """``writing`` (a file under it is open), ``empty`` (no batch yet), ``ok``,
    ``degraded`` (restores, but not at its last batch: needs a rollback), ``broken`` (nothing
    restores). A recent change alone is not ``writing``: a query writes each log file with
    create-and-rename, so nothing tells a running query from one that stopped a moment ago
    (the UPDATED time says when it last changed; rollback waits for the quiet period)."""
    last = layout.last_committed
    if layout.writing:
        return "writing"
    if last is None:
        return "empty" if layout.metadata is not None else "broken"
    if restorable is None:
        return "broken"
    return "ok" if restorable == last else "degraded"


def summary(layout: Layout) -> dict:
    """One ``ls`` row, from the structure alone."""
    restorable = latest_restorable(layout)
    return {"path": layout.path, "kind": "streaming", "lastBatch": layout.last_committed,
            "restorableBatch": restorable, "stateBytes": layout.state_bytes,
            "bytes": layout.bytes, "files": layout.files, "lastUpdate": layout.newest,
            "health": health(layout, restorable),
            "pinned": sorted(layout.pins)}


def quick_summary(node, path: str) -> dict:
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
        return summary(scan(node, path))
    state = "writing" if writing else ("ok" if last is not None else (
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
        scan_stores(state, "", stores, names_only=True)
    return all(_plain_chain(store.node, batch + 1) for store in stores)


def _plain_chain(directory, version: int) -> bool:
    children = directory.children
    for v in range(version, 0, -1):
        if f"{v}.snapshot" in children or f"{v}.zip" in children:
            return True
        if f"{v}.delta" not in children and f"{v}.changelog" not in children:
            return False
    return True


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


def _natural(name: str):
    return (0, int(name), "") if name.isdigit() else (1, 0, name)
