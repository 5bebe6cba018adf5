"""What Spark leaves in a checkpoint directory, read from namespace inodes.

Recognised kinds (a directory is classified by its children; discovery does not descend into
a classified directory):

* ``streaming`` -- a Structured Streaming checkpoint location::

      metadata                              {"id": "<query uuid>"}
      offsets/<batch>                       "v1\\n" + batch metadata JSON + one line per source
      commits/<batch>                       "v1\\n" + {"nextBatchWatermarkMs": ...}
      sources/<source>/<batch>[.compact]    the source's own log
      state/<operator>/<partition>/<version>.delta|.snapshot        (HDFS-backed store)
      state/<operator>/<partition>/<version>[_<uuid>].zip|.changelog  (RocksDB store)
      state/<operator>/<partition>/<store name>/<version>...        (several stores, joins)
      state/<operator>/_metadata/...        operator metadata (not versioned state)

  Batch ``b`` commits state version ``b + 1``; restarting after batch ``b`` loads it.
* ``rdd`` -- one ``setCheckpointDir`` run: ``<uuid>/rdd-<id>/part-<n>``.
* ``dstream`` -- ``checkpoint-<ms>`` files (and their ``.bk`` copies).
* ``job`` -- batch-job checkpoints kept by ``catalog.jobs``: ``chk-<id>`` directories.

Everything here reads inodes (anything with ``children``/``length``/``mtime``/``blocks``) and
must be called under the namesystem lock; it keeps only plain values (``FileRef``), so the
analysis that follows runs outside the lock. No I/O.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import NamedTuple

STREAMING, RDD, DSTREAM, JOB = "streaming", "rdd", "dstream", "job"
FLINK, SAVEPOINT = "flink", "savepoint"
# Each kind as people call it (reports; the answers themselves carry the kind as above).
KIND_NAMES = {STREAMING: "Spark Structured Streaming", JOB: "Spark job", RDD: "Spark RDD",
              DSTREAM: "Spark DStream", FLINK: "Flink job", SAVEPOINT: "Flink savepoint"}
SNAPSHOT, DELTA = "snapshot", "delta"
STATE_SUFFIXES = {"snapshot": SNAPSHOT, "zip": SNAPSHOT, "delta": DELTA, "changelog": DELTA}
PINS_XATTR = "user.nnlite.catalog.pins"
# Set (to "true") on a streaming checkpoint whose query runs with Spark's
# asyncProgressTrackingEnabled: its offsets log skips batches by design (catalog/streaming.py).
ASYNC_PROGRESS_XATTR = "user.nnlite.catalog.asyncProgressTracking"
JOB_PREFIX = "chk-"
IN_PROGRESS = ".inprogress"


class FileRef(NamedTuple):
    """A file as it was when scanned: enough to read it later (published blocks never
    change) and to report on it. (A tuple: a scan makes one per file.)"""
    path: str
    length: int
    mtime: int
    blocks: tuple = ()


def ref(node, path: str) -> FileRef:
    return FileRef(path, node.length, node.mtime, node.blocks)


def is_temp(name: str) -> bool:
    """Spark's checkpoint file manager writes ``.<name>.<uuid>.tmp`` and renames it."""
    return name.endswith(".tmp") or name.startswith("_temporary")


def batch_number(name: str) -> int | None:
    return int(name) if name.isdigit() else None


def source_batch(name: str) -> int | None:
    """The batch of a source-log entry: ``7`` and ``9.compact``; None for anything else."""
    stem = name[:-len(".compact")] if name.endswith(".compact") else name
    return int(stem) if stem.isdigit() else None


# The only child names that classify a directory; ``nnlite analyze`` filters an image's rows
# with this (Java regex syntax too) before handing them to ``classify``.
MARKER_PATTERN = (r"^(offsets|metadata|commits|chk-[0-9]+(\.inprogress)?|rdd-[0-9]+"
                  r"|checkpoint-[0-9]+(\.bk)?|shared|taskowned|_metadata)$")
_MARKER = re.compile(MARKER_PATTERN)


def classify(entries, pinned: bool = False) -> str | None:
    """The checkpoint kind of a directory from its children, ``(name, is_dir)`` pairs (names
    that do not match ``MARKER_PATTERN`` may be left out), and whether it carries the catalog's
    pins. The one definition the catalog and ``nnlite analyze`` both use; first match wins:

    * streaming: ``offsets`` and (``metadata`` or ``commits`` or the pins);
    * flink: ``shared`` and ``taskowned`` directories (a Flink job's checkpoint directory,
      ``<checkpoint dir>/<job id>``, as ``FsCheckpointStorageAccess`` creates it);
    * savepoint: a ``_metadata`` file (a Flink savepoint, or a checkpoint copied on its own);
    * job: a ``chk-<n>`` or ``chk-<n>.inprogress`` directory;
    * rdd: an ``rdd-<n>`` directory;
    * dstream: a ``checkpoint-<ms>`` or ``checkpoint-<ms>.bk`` file.
    """
    seen = set()
    for name, is_dir in entries:
        if name in ("offsets", "metadata", "commits"):
            seen.add(name)
        elif name in ("shared", "taskowned"):
            if is_dir:
                seen.add(name)
        elif name == "_metadata":
            if not is_dir:
                seen.add(SAVEPOINT)
        elif _MARKER.match(name):
            kind = DSTREAM if name.startswith("checkpoint-") else (
                JOB if name.startswith(JOB_PREFIX) else RDD)
            if is_dir != (kind == DSTREAM):
                seen.add(kind)
    if "offsets" in seen and ("metadata" in seen or "commits" in seen or pinned):
        return STREAMING
    if "shared" in seen and "taskowned" in seen:
        return FLINK
    for kind in (SAVEPOINT, JOB, RDD, DSTREAM):
        if kind in seen:
            return kind
    return None


def kind_of(node) -> str | None:
    """The checkpoint kind a directory inode holds, or None (``classify``)."""
    return classify(((n, c.is_dir) for n, c in node.children.items()),
                    bool(node.xattrs and PINS_XATTR in node.xattrs))


def discover(node, path: str, can_list=lambda node: True,
             limit: int = 100_000) -> list[tuple[str, str, object]]:
    """``(path, kind, inode)`` of every checkpoint at or under ``node``, sorted by path.
    Only directories ``can_list`` allows are classified or descended into: the catalog passes
    the caller's LISTSTATUS right (READ_EXECUTE on the directory), so it finds what the
    caller could find with ``hdfs dfs -ls -R``."""
    found: list[tuple[str, str, object]] = []
    stack = [(path, node)]
    while stack and len(found) < limit:
        where, current = stack.pop()
        if not can_list(current):
            continue
        kind = kind_of(current)
        if kind is not None:
            found.append((where, kind, current))
            continue
        prefix = where.rstrip("/") + "/"
        stack.extend((prefix + name, child) for name, child in current.children.items()
                     if child.is_dir)
    return sorted(found, key=lambda item: item[0])


def denied_row(path: str, kind: str) -> dict:
    """An ``ls`` row for a checkpoint the caller may list but not summarise: its path and kind
    (the caller sees both in the parent's listing), no figures."""
    return {"path": path, "kind": kind, "lastBatch": None, "restorableBatch": None,
            "stateBytes": None, "bytes": None, "files": None, "lastUpdate": None,
            "health": "denied", "pinned": []}


def tree_usage(node) -> tuple[int, int, int, bool]:
    """(files, bytes, newest mtime, any file under construction) of a subtree."""
    files = total = 0
    newest = node.mtime
    writing = False
    stack = [node]
    while stack:
        for child in stack.pop().children.values():
            if child.mtime > newest:
                newest = child.mtime
            if child.is_dir:
                stack.append(child)
            else:
                files += 1
                total += child.length
                writing = writing or child.client_name is not None
    return files, total, newest, writing


def walk_files(node, base: str):
    """``(path, inode)`` of every file below ``node``: its path relative to ``node``, after
    ``base`` and a slash (``base`` "": the relative path itself)."""
    stack = [(base, node)]
    while stack:
        where, current = stack.pop()
        for name, child in current.children.items():
            path = f"{where}/{name}" if where else name
            if child.is_dir:
                stack.append((path, child))
            else:
                yield path, child


def read_pins(node) -> frozenset[int]:
    raw = (node.xattrs or {}).get(PINS_XATTR)
    if not raw:
        return frozenset()
    try:
        return frozenset(int(b) for b in json.loads(raw))
    except (ValueError, TypeError):
        return frozenset()


def async_progress(node) -> bool:
    """Whether the checkpoint at ``node`` is marked as written with async progress tracking."""
    raw = (node.xattrs or {}).get(ASYNC_PROGRESS_XATTR, b"")
    return raw.strip().strip(b'"').lower() == b"true"


def encode_pins(pins) -> bytes:
    return json.dumps(sorted(pins)).encode()


# ------------------------------------------------------------------------ state stores

# A state file's checksum sidecar (ChecksumCheckpointFileManager, with
# spark.sql.streaming.checkpoint.fileChecksum.enabled): ``<file>.crc`` beside ``<file>``.
CHECKSUM_SUFFIX = ".crc"
# spark.sql.streaming.stateStore.autoSnapshotRepair.maxChangeFileReplay's default (Spark 4.3)
MAX_CHANGE_FILE_REPLAY = 500


class StateName(NamedTuple):
    version: int
    unique_id: str | None       # checkpoint format version 2's ``<version>_<uniqueId>``
    kind: str                   # SNAPSHOT or DELTA


@dataclass
class Store:
    """One state store of one partition: ``versions[v]`` maps SNAPSHOT/DELTA to a file
    named by its version alone; ``unique[v][id]`` the same for checkpoint format version 2's
    ``<v>_<uniqueId>`` files (several ids of one version: a task attempt's leftovers beside
    the one a commit names). ``sidecars`` maps a state file's path to its ``.crc``."""
    path: str
    operator: str
    partition: str
    name: str
    versions: dict[int, dict[str, FileRef]] = field(default_factory=dict)
    unique: dict[int, dict[str, dict[str, FileRef]]] = field(default_factory=dict)
    sidecars: dict[str, FileRef] = field(default_factory=dict)
    node: object = None         # the directory inode (set for ``names_only`` scans)

    def files(self):
        """``(version, SNAPSHOT|DELTA, file)`` of every state file, with or without a unique
        id."""
        for v, kinds in self.versions.items():
            for kind, f in kinds.items():
                yield v, kind, f
        for v, ids in self.unique.items():
            for kinds in ids.values():
                for kind, f in kinds.items():
                    yield v, kind, f

    def at(self, version: int, committed: dict | None = None) -> tuple[dict | None, str]:
        """The files (kind -> file) a restore reads as ``version``, or None and why not.
        Named by version alone: those. With unique ids (checkpoint format version 2) the
        restore reads the id the commit of batch ``version - 1`` records for this store's
        partition (``CommitMetadataV2.stateUniqueIds``, MicroBatchExecution hands it to the
        store: ``RocksDB.load(version, stateStoreCkptId)``); ``committed`` is
        ``Layout.unique_ids``. Where that commit is gone or unread, only a version with
        files of a single id can be told."""
        if not self.unique:
            files = self.versions.get(version)
            return (files, "") if files else (None, f"no {version}.delta and no "
                                                    f"{version}.snapshot")
        present = self.unique.get(version, {})
        listed = (committed or {}).get(version - 1, {}).get((self.operator, self.partition))
        if listed is not None:
            mine = [u for u in listed if u in present]
            if len(mine) == 1:
                return present[mine[0]], ""
            return None, (f"no file of unique id {' or '.join(listed)}, which commits/"
                          f"{version - 1} records for it")
        if len(present) == 1:
            return next(iter(present.values())), ""
        if not present:
            return None, f"no {version}_<uniqueId> file"
        return None, (f"files of unique ids {', '.join(sorted(present))} and commits/"
                      f"{version - 1}, which names the one a restore reads, is gone or "
                      f"unreadable")

    def chain(self, version: int, committed: dict | None = None, lineage=None
              ) -> list[FileRef] | None:
        """The files a restore of ``version`` reads: the newest snapshot at or below it and
        every delta after that (all deltas down to 1 when there is no snapshot); None when
        one is missing. Version 0 is the empty store. With unique ids each version is the
        one its commit names (``at``): ``RocksDB.loadWithCheckpointId`` takes
        ``<v>_<id>.zip`` when it exists, else replays ``<v>_<id>.changelog`` onto the newest
        snapshot of the lineage that changelog records, which is the chain of committed ids
        below it (each batch's task loads the version the previous commit named). The
        lineage itself, inside the compressed changelog (StateStoreChangelogReaderV3/V4), is
        not read here; ``lineage(changelog)``, when given, reads it (``restore``)."""
        return self.restore(version, committed, lineage)[0]

    def gap(self, version: int, committed: dict | None = None, lineage=None) -> str:
        """Why ``version`` cannot be restored, in words."""
        return self.restore(version, committed, lineage)[1]

    def restore(self, version: int, committed: dict | None = None, lineage=None
                ) -> tuple[list[FileRef] | None, str]:
        """``(chain, "")``, or ``(None, why)`` when a file of the chain is missing.
        ``lineage(changelog)``: the ``(version, id)`` items a format version 2 changelog
        records (``changelog.lineage``), a string saying why it cannot be read (Spark
        cannot either), or None when it is not known (another codec): the chain is then
        the lineage's, as ``RocksDB.loadWithCheckpointId`` takes it, else the committed
        ids'."""
        top, why = self.at(version, committed)
        if self.unique and lineage is not None and top and SNAPSHOT not in top \
                and DELTA in top:
            items = lineage(top[DELTA])
            if isinstance(items, str):
                return None, f"{self.path}: {items}"
            if items is not None:
                return self._replay(version, top[DELTA], items, lineage)
        return self._walk(version, committed)

    def _replay(self, version: int, top: FileRef, items, lineage
                ) -> tuple[list[FileRef] | None, str]:
        """The chain of ``top`` (version ``version``'s changelog) by the lineage it records:
        the newest snapshot of the lineage and every changelog after it, or every changelog
        when the lineage starts at version 1 (``RocksDB.loadWithCheckpointId``,
        ``RocksDBFileManager.getLatestSnapshotVersionAndUniqueIdFromLineage``); when no
        snapshot of the lineage is left, Spark's auto snapshot repair (``_repair``)."""
        named = state_name(top.path.rsplit("/", 1)[-1])
        top_id = named.unique_id if named is not None else None
        full = sorted(set(items) | {(version, top_id)})
        base = next((v for v, u in reversed(full)
                     if SNAPSHOT in self.unique.get(v, {}).get(u, {})), None)
        if base is None and full[0][0] != 1:
            return self._repair(version, full, lineage, (
                f"{self.path}: state version {version} has no base: its changelog's "
                f"lineage starts at version {full[0][0]} and no snapshot of it is left "
                f"(cannotFindBaseSnapshotCheckpoint)"))
        needed = []
        for v, u in reversed(full):
            files = self.unique.get(v, {}).get(u, {})
            if v == base:
                needed.append(files[SNAPSHOT])
                break
            if DELTA not in files:
                return None, (f"{self.path}: state version {v} is missing: no {v}_{u}"
                              f".changelog, which the lineage of {top.path} names (needed "
                              f"to rebuild version {version})")
            needed.append(files[DELTA])
        return needed, ""

    def _repair(self, version: int, full: list, lineage, why: str
                ) -> tuple[list[FileRef] | None, str]:
        """Spark 4.3's auto snapshot repair (``spark.sql.streaming.stateStore.
        autoSnapshotRepair.enabled``, on by default, for RocksDB with changelog
        checkpointing: ``AutoSnapshotLoader``), when no snapshot of the lineage is left:
        the lineage is first extended back to version 1 by reading the lineage of the
        changelog at each one's start (``getFullLineage``; a changelog missing on the way
        leaves only the lineage there was), then the newest snapshot of it that is left,
        or the empty store, is loaded and the changelogs after it replayed, at most
        ``maxChangeFileReplay`` of them (500 by default). The chain holds the changelogs
        read for their lineage too: a restore reads them. Where nothing rebuilds the
        version, the restore fails for ``why``."""
        read: list[FileRef] = []
        while full[0][0] > 1:
            v, u = full[0]
            head = self.unique.get(v, {}).get(u, {}).get(DELTA)
            items = lineage(head) if head is not None else None
            if head is None or not isinstance(items, list) or not set(items) - set(full):
                return None, (f"{why}; nor can the auto snapshot repair find an older "
                              f"snapshot: it reads the lineage before version {v} from "
                              f"{v}_{u}.changelog, which is "
                              f"{'missing' if head is None else 'unreadable'}")
            read.append(head)
            full = sorted(set(items) | set(full))
        for base in [v for v, u in reversed(full) if SNAPSHOT in self.unique.get(v, {})
                     .get(u, {})] + [0]:
            replay = [self.unique.get(v, {}).get(u, {}).get(DELTA) for v, u in full
                      if v > base]
            if None in replay or len(replay) > MAX_CHANGE_FILE_REPLAY:
                continue
            chain = [f for f in reversed(replay) if f is not None]
            if base:
                chain.append(next(self.unique[base][u][SNAPSHOT] for v, u in full
                                  if v == base))
            return chain + [f for f in read if f not in chain], ""
        return None, (f"{why}; nor can the auto snapshot repair rebuild it from an older "
                      f"snapshot or from version 1 (a changelog after each is missing, or "
                      f"more than maxChangeFileReplay = {MAX_CHANGE_FILE_REPLAY} to replay)")

    def _walk(self, version: int, committed) -> tuple[list[FileRef] | None, str]:
        needed = []
        for v in range(version, 0, -1):
            files, why = self.at(v, committed)
            if files and SNAPSHOT in files:
                needed.append(files[SNAPSHOT])
                return needed, ""
            if not files or DELTA not in files:
                below = "" if v == version else f" (needed to rebuild version {version})"
                why = why or (f"no {v}.delta or .changelog and no snapshot of the unique id "
                              f"it has")
                return None, f"{self.path}: state version {v} is missing: {why}{below}"
            needed.append(files[DELTA])
        return needed, ""


def scan_stores(state, path: str, out: list[Store], *,
                names_only: bool = False) -> None:
    """Every store under ``state/``. ``names_only``: the stores' directories without their
    files (``Store.node``), for a check by name."""
    for op_name, op_node in state.children.items():
        if not op_node.is_dir:
            continue
        for part_name, part in op_node.children.items():
            if not part.is_dir or part_name.startswith("_"):
                continue
            where = f"{path}/{op_name}/{part_name}"
            _scan_store(part, where, op_name, part_name, "default", out, names_only)
            for sub_name, sub in part.children.items():
                if _is_store_dir(sub_name, sub):
                    _scan_store(sub, f"{where}/{sub_name}", op_name, part_name, sub_name, out,
                                names_only)


def _is_store_dir(name: str, node) -> bool:
    return node.is_dir and not name.startswith("_") and name != "SSTs"


def _scan_store(node, path: str, operator: str, partition: str, name: str,
                out: list[Store], names_only: bool) -> None:
    """A partition's default store is kept unless the partition holds only named stores
    (joins); a named store when it has files (any, for a ``names_only`` check)."""
    store = Store(path, operator, partition, name, node=node)
    if not names_only:
        for child_name, child in node.children.items():
            if not child.is_dir:
                _add_file(store, child_name, ref(child, f"{path}/{child_name}"))
    named = name == "default" and any(_is_store_dir(n, c) for n, c in node.children.items())
    if store.versions or store.unique or not named and (name == "default" or names_only):
        out.append(store)


def _add_file(store: Store, name: str, file: FileRef) -> None:
    if name.endswith(CHECKSUM_SUFFIX) and state_name(name[:-len(CHECKSUM_SUFFIX)]):
        store.sidecars[file.path[:-len(CHECKSUM_SUFFIX)]] = file
        return
    parsed = state_name(name)
    if parsed is None:
        return
    if parsed.unique_id is None:
        store.versions.setdefault(parsed.version, {})[parsed.kind] = file
    else:
        store.unique.setdefault(parsed.version, {}).setdefault(
            parsed.unique_id, {})[parsed.kind] = file


def state_name(name: str) -> StateName | None:
    """``12.delta``, ``12.snapshot``, ``12.zip``, ``12.changelog`` and checkpoint format
    version 2's ``12_<uniqueId>.zip|.changelog`` (RocksDBFileManager's names); None for
    anything else."""
    stem, dot, suffix = name.rpartition(".")
    kind = STATE_SUFFIXES.get(suffix) if dot else None
    if kind is None:
        return None
    number, underscore, unique_id = stem.partition("_")
    if not number.isdigit() or underscore and not unique_id:
        return None
    return StateName(int(number), unique_id or None, kind)


def state_file(name: str) -> tuple[int, str] | None:
    """``(version, SNAPSHOT|DELTA)`` of a state file's name (``state_name``)."""
    parsed = state_name(name)
    return None if parsed is None else (parsed.version, parsed.kind)
