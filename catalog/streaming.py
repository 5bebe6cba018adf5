"""Structured Streaming checkpoints: which batches exist, which one restores, what is wrong.

``scan`` captures a checkpoint directory's structure from inodes (under the namesystem lock);
everything else here is pure. ``summary`` and ``quick_summary`` make ``ls``'s row and read no
file; ``report.py`` builds ``validate`` and ``show`` on top, with the contents of the small log
files that ``log_files`` names (parsing them fills ``Layout.log_offsets``).

Restorable batch ``b`` -- Spark (4.3, as installed) restarts after it, as it is or once a
rollback has removed everything after ``b`` -- when each rule holds. The class each rule comes
from is named; "(run)" marks the rules a test proves by restarting real Spark
(tests/catalog/test_spark_catalog.py, and the conformance matrix of
tests/catalog/conformance.py over aggregation, dropDuplicates(WithinWatermark), a
stream-stream join, applyInPandasWithState and transformWithState on the HDFS-backed and the
RocksDB stores, with changelog checkpointing, checkpoint format version 2 with changelogs
and with a snapshot per version, and the offset log's version 2):

1. The newest offsets entry is where Spark resumes (``MicroBatchExecution.populateStartOffsets``
   via ``OffsetSeqLog.getLatest``): with ``commits/b`` the newest commit it plans ``b + 1``.
   (run)
2. ``offsets/b`` and ``commits/b`` exist and parse: ``HDFSMetadataLog.get`` fails the restart
   on a truncated or corrupt entry (the offsets through ``OffsetSeqLog.deserialize``, the
   commit through ``CommitLog.deserialize``), and on a log version newer than it reads
   (offsets v2, commits v3: ``MetadataVersionUtil.validateVersion``). An offsets entry is v1
   (one line per source, in order) or v2 (``spark.sql.streaming.offsetLog.formatVersion=2``,
   OffsetMap: ``<sourceId>:<offset>`` lines); ``report.parse_offsets`` reads both. (run,
   both versions)
3. The offsets entry before ``b`` exists and parses when ``b > 0``: the restart reads it as the
   committed offsets. Without async progress tracking that is ``offsets/b-1``
   (``MicroBatchExecution.validateOffsetLogAndGetPrevOffset``, "batch b-1 doesn't exist"); with
   it (``AsyncProgressTrackingMicroBatchExecution``, which writes offsets and commits only every
   ``asyncProgressTrackingCheckpointIntervalMs``) it is the newest entry below ``b``, if any.
   Nothing in the files says which mode the query runs in, so the catalog applies the first
   unless the checkpoint carries the ``user.nnlite.catalog.asyncProgressTracking=true`` xattr.
   Retention keeps the entry before every kept batch. (run, both modes)
4. ``metadata`` exists and parses: with batches in the logs Spark refuses a checkpoint without
   it (``STREAMING_CHECKPOINT_MISSING_METADATA_FILE``) and fails on one it cannot read
   (``StreamMetadata.read``). (run)
5. Every state store rebuilds version ``b + 1``: the newest snapshot at or below it and every
   delta after it (``HDFSBackedStateStoreProvider.loadMap``; ``RocksDBFileManager`` the same
   with ``<v>.zip`` snapshots and ``<v>.changelog`` files). With checkpoint format version 2
   (``<v>_<uniqueId>`` names) version ``b + 1`` is the unique id ``commits/b`` records
   (stateUniqueIds; ``RocksDB.loadWithCheckpointId``): the zip of that id, else its
   changelog replayed onto the newest snapshot of the lineage the changelog records, or
   onto nothing when the lineage starts at version 1; with none of its snapshots left,
   Spark 4.3's auto snapshot repair (on by default) extends the lineage back to version 1
   through the changelogs at its starts and rebuilds from an older snapshot, at most 500
   changelogs replayed (``layout.Store._repair``). ``changelog.py`` reads the lineage;
   ``validate``, ``ls`` (for format version 2) and retention follow it. Files of other
   ids are an uncommitted attempt's leftovers, never read (``layout.Store.at``). (run,
   every store of the matrix, and with a leftover, a committed file failing its .crc, one
   swapped for another id, and the snapshots a lineage starts at lost, before and after
   retention)
6. Each file source's log holds what the restart rebuilds its seen files from: ``offsets/b``
   records the source's ``logOffset`` N (``FileStreamSourceOffset``), and
   ``CompactibleFileStreamLog.allFiles`` reads entry N and every entry back to the compaction
   before it (``getAllValidBatches``; the interval is derived from the ``.compact`` files left,
   as ``compactInterval`` does). A missing one fails the restart ("... doesn't exist"). Source
   log ids are the source's own, not batch ids, so a rollback removes the entries after N, not
   after ``b``; logs of other sources (Kafka's and the rate source's initial offsets) stay.
   (run)
7. Every state file the restore of rule 5 reads matches its ``.crc`` sidecar, where it has
   one (``ChecksumCheckpointFileManager``: ``ChecksumFSDataInputStream.verifyChecksum``
   fails the read on a different size or CRC32C, CHECKPOINT_FILE_CHECKSUM_VERIFICATION_
   FAILED); ``checksums.py`` composes each file's CRC32C from the block store's chunk CRCs
   and passes the failing files in as ``bad``. (run)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from nnlite.catalog.layout import (
    FileRef,
    Store,
    async_progress,
    batch_number,
    is_temp,
    read_pins,
    ref,
    scan_stores,
    source_batch,
    tree_usage,
)

ERROR, WARNING = "error", "warning"
# spark.sql.streaming.fileSource.log.compactInterval's default (SQLConf)
FILE_SOURCE_COMPACT_INTERVAL = 10
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
    async_progress: bool = False
    # batch -> {source name: file-source log offset}, from offsets/<batch> once it is read
    log_offsets: dict[int, dict[str, int]] = field(default_factory=dict)
    # batch -> {(operator, partition): the state stores' unique ids}, from commits/<batch>
    # (checkpoint format version 2) once it is read: the ids of state version batch + 1
    unique_ids: dict[int, dict[tuple[str, str], list[str]]] = field(default_factory=dict)
    # changelog -> its lineage (layout.Store.restore), set by a reader that may read files
    lineage: Callable | None = None
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
    layout = Layout(path.rstrip("/") or "/", pins=read_pins(node),
                    async_progress=async_progress(node))
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
        layout.empty_state = [f for store in layout.stores for _, _, f in store.files()
                              if f.length == 0]
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
        out += _previous_offsets(layout, batch, bad)
    for store in layout.stores:
        chain, why = store.restore(batch + 1, layout.unique_ids, layout.lineage)
        if why:
            out.append(why)
            continue
        out += [_unreadable(store, f, batch) for f in chain or () if f.path in bad]
    for name, offset in sorted(layout.log_offsets.get(batch, {}).items()):
        for logged in source_entries(layout, name, offset):
            where = f"{layout.path}/sources/{name}/{logged}"
            if logged not in layout.sources.get(name, {}) or where in bad:
                out.append(f"{where} is {'missing' if where not in bad else 'corrupt'}: "
                           f"restarting after batch {batch} rebuilds file source {name}'s "
                           f"seen files from its log up to entry {offset} "
                           f"(CompactibleFileStreamLog.allFiles)")
    return out


def _unreadable(store, f: FileRef, batch: int) -> str:
    """Why a state file of a restore's chain fails Spark's read: its ``.crc`` sidecar, or,
    without one, its read (a format version 2 changelog decoded: lz4's frame checksums;
    snappy and zstd, which have none, as far as they decode and their records parse; a
    snapshot unzipped as ZipInputStream unzips it)."""
    if f.path in store.sidecars:
        return (f"{f.path} does not match its checksum file (.crc) and a restore after "
                f"batch {batch} reads it (ChecksumFSDataInputStream.verifyChecksum: "
                f"CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED)")
    if f.path.endswith(".zip"):
        return (f"{f.path} is damaged (it has no .crc sidecar, and Spark's unzip of it fails) "
                f"and a restore after batch {batch} reads it (ZipInputStream: "
                f"CANNOT_LOAD_STATE_STORE)")
    return (f"{f.path} is damaged (it has no .crc sidecar, and it does not decode or its "
            f"records do not parse) and a restore after batch {batch} reads it "
            f"(StateStoreChangelogReader: CANNOT_LOAD_STATE_STORE)")


def leftovers(layout: Layout) -> list[tuple[FileRef, int, list[str]]]:
    """State files of a unique id that the commit of their version does not record
    (checkpoint format version 2): ``(file, version, the ids the commit names)``. A task
    attempt whose batch was not committed with it left them; a restore never reads them
    (``RocksDB.load`` takes the committed id)."""
    out = []
    for store in layout.stores:
        for version, ids in store.unique.items():
            named = layout.unique_ids.get(version - 1, {}).get((store.operator,
                                                                store.partition))
            if named is None:
                continue
            out += [(f, version, named) for uid, files in ids.items() if uid not in named
                    for f in files.values()]
    return out


def restart_reads(layout: Layout, batch: int) -> int | None:
    """The offsets entry a restart after ``batch`` reads as the committed offsets (rule 3):
    ``batch - 1``, or with async progress tracking the newest entry below ``batch``."""
    if batch == 0:
        return None
    if layout.async_progress:
        return max((b for b in layout.offsets if b < batch), default=None)
    return batch - 1


def _previous_offsets(layout: Layout, batch: int, bad) -> list[str]:
    before = restart_reads(layout, batch)
    entry = layout.offsets.get(before) if before is not None else None
    if layout.async_progress:
        if entry is not None and entry.path in bad:
            return [f"{entry.path} is corrupt: restarting after batch {batch} reads it as the "
                    f"committed offsets (AsyncProgressTrackingMicroBatchExecution."
                    f"validateOffsetLogAndGetPrevOffset)"]
        return []
    if entry is not None and entry.path not in bad:
        return []
    message = (f"{layout.path}/offsets/{batch - 1} is {'missing' if entry is None else 'corrupt'}"
               f": restarting after batch {batch} reads it as the committed offsets "
               f"(MicroBatchExecution.validateOffsetLogAndGetPrevOffset)")
    earlier = [b for b in layout.offsets if b < batch - 1]
    if entry is None and earlier:
        message += (f"; a query with asyncProgressTrackingEnabled reads offsets/{max(earlier)} "
                    f"instead: mark such a checkpoint with the xattr "
                    f"user.nnlite.catalog.asyncProgressTracking=true")
    return [message]


def source_log_offsets(sources: dict[str, object]) -> dict[str, int]:
    """The file-source log offset of each source of an offsets entry (``report.parse_offsets``:
    source id -> offset): ``{"logOffset":N}`` for a file source (``FileStreamSourceOffset``);
    other sources' offsets are other JSON, and a source without an offset yet is None."""
    return {name: doc["logOffset"] for name, doc in sources.items()
            if isinstance(doc, dict) and isinstance(doc.get("logOffset"), int)
            and len(doc) == 1}


def derive_compact_interval(default: int, compact: int) -> int:
    """``CompactibleFileStreamLog.deriveCompactInterval``: the interval Spark settles on when
    one ``.compact`` file (``compact``) is left."""
    if compact + 1 <= default or default >= (compact + 1) // 2:
        return compact + 1
    return next((i for i in range(default, (compact + 1) // 2 + 1) if (compact + 1) % i == 0),
                compact + 1)


def source_entries(layout: Layout, name: str, offset: int) -> list[str]:
    """The entries of file source ``name``'s log that a restart at log offset ``offset``
    reads (``CompactibleFileStreamLog.getAllValidBatches``), by file name."""
    if offset < 0:
        return []
    # (a stray "<not a number>.compact" is no batch of the log: skipped, as other strays are)
    compacts = sorted((b for n in layout.sources.get(name, {})
                       if n.endswith(".compact") and (b := source_batch(n)) is not None
                       and b <= offset), reverse=True)
    if len(compacts) >= 2:
        interval = compacts[0] - compacts[1]
    elif compacts:
        interval = derive_compact_interval(FILE_SOURCE_COMPACT_INTERVAL, compacts[0])
    else:           # never compacted up to here, so the query's interval is larger: all
        interval = offset + 2
    start = max(0, (offset + 1) // interval * interval - 1)
    return [f"{i}.compact" if (i + 1) % interval == 0 else str(i)
            for i in range(start, offset + 1)]


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


def ambiguous_commits(layout: Layout) -> list[FileRef]:
    """The commits that tell which unique id a restore reads where a state version has files
    of several ids (checkpoint format version 2: a failed attempt's leftovers, ``layout.
    Store.at``), for ``ls``, which otherwise reads no file."""
    batches = {v - 1 for store in layout.stores for v, ids in store.unique.items()
               if len(ids) > 1}
    return [layout.commits[b] for b in sorted(batches) if b in layout.commits]


def quick_summary(node, path: str, resolve=None) -> dict:
    """The same row as ``summary(scan(node))`` without capturing every file: counts come
    from one walk, and the newest committed batch is checked by looking its files up by
    name. Only a checkpoint that check cannot vouch for (damaged, or state files with
    unusual names) is scanned in full; ``resolve(layout)``, when given, then reads what a
    checkpoint of format version 2 needs read (its ``ambiguous_commits`` into
    ``unique_ids``, and its changelogs' lineage). Under the lock, like ``scan``."""
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
        found = scan(node, path)
        if resolve is not None and any(store.unique for store in found.stores):
            resolve(found)
        return summary(found)
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
    if batch > 0 and str(batch - 1) not in offsets.children and not async_progress(node):
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
