"""The catalog inside the namenode: reads under the lock, changes as logged namespace requests.

Reads (``ls``, ``show``, ``latest``, ``validate``) run in a worker thread. Each checkpoint is
captured by one ``FSNamesystem.read`` on its own (under the namesystem lock; ``layout.scan``:
plain values, milliseconds), so writers wait at most that long; the log files ``show`` and
``validate`` need are read from the block store outside the lock (published blocks never
change). ``ls`` reads no file.

Changes (``retain``, ``rollback``, ``pin``, ``gc`` and the job lifecycle) are requests run by
``FSNamesystem.write`` on the event loop: the plan is made and applied under the lock it
holds, so nothing can change between planning and applying, and the ops are logged and
synced (group commit) before the answer. Rollback and retention of a streaming checkpoint
are one DELETE_MANY op; ``complete`` is one RENAME.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable
from typing import NamedTuple

from nnlite.catalog import (
    changelog,
    checksums,
    flink,
    jobs,
    layout,
    others,
    report,
    retention,
    snapshot_zip,
    streaming,
)
from nnlite.catalog.errors import (
    CheckpointBusyError,
    CheckpointNotFoundError,
    InvalidRequestError,
    NotACheckpointError,
)
from nnlite.namenode.blocks.store import BlockStore
from nnlite.namenode.errors import (
    AccessControlError,
    NamenodeError,
    PathNotFoundError,
    SnapshotAccessControlError,
)
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.journal.committer import AsyncCommitter
from nnlite.namenode.namespace import paths, permission, snapshot
from nnlite.namenode.namespace.catalog_view import CatalogView
from nnlite.namenode.namespace.leases import LeaseManager
from nnlite.namenode.namespace.tree import XATTR_CREATE, XATTR_REPLACE

log = logging.getLogger(__name__)

LIST = permission.READ | permission.EXECUTE       # LISTSTATUS of a directory
ANONYMOUS = "dr.who"          # hadoop.http.staticuser.user: who an anonymous web page is

MAX_LOG_FILE = 64 << 20
LINEAGE_FIRST_READ = 4 << 10    # bytes of a changelog read first for its lineage


def parse_policy(text: str) -> dict[str, int]:
    """``"/ckpt=20, /jobs=5"`` -> ``{"/ckpt": 20, "/jobs": 5}``."""
    policy = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        root, sep, keep = item.rpartition("=")
        if not sep or not keep.strip().isdigit() or int(keep) < 1:
            raise InvalidRequestError(f"nnlite.catalog.retain: {item!r} is not <root>=<keep> "
                                      f"with keep >= 1")
        policy[paths.normalize(root.strip())] = int(keep)
    return policy


class CatalogService:
    def __init__(self, fs: FSNamesystem, committer: AsyncCommitter, store: BlockStore,
                 lease_manager: LeaseManager, *, quiet: float = 30.0,
                 tmp_ttl: float = 3600.0, rdd_ttl: float = 7 * 86400.0, roots=("/",),
                 clock=time.time):
        self.fs = fs
        self.committer = committer
        self.store = store
        self.leases = lease_manager
        self.quiet_ms = int(quiet * 1000)
        self.tmp_ttl_ms = int(tmp_ttl * 1000)
        self.rdd_ttl_ms = int(rdd_ttl * 1000)
        self.roots = tuple(roots)
        self.clock = clock
        self.requests = 0         # ls/show/latest/validate answered (for /metrics)
        self.files_read = 0       # log files read from the block store by them
        self._overview: tuple[float, tuple[list[dict], int]] | None = None

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    # ------------------------------------------------------------------ snapshots

    def _node(self, ns: CatalogView, path: str, user: str, *, change: bool = False):
        """The directory at ``path`` in ``ns`` (the namespace a read or a write of the
        namesystem runs on), after the caller's listing checks. A path inside a snapshot
        (``<dir>/.snapshot/<name>/...``) resolves as WebHDFS resolves it (the snapshot's
        inodes, the traverse checked on the way); for a ``change`` it is refused as HDFS
        refuses every change there (SnapshotAccessControlException)."""
        caller = self.fs.caller(user)
        if change:
            _check_not_in_snapshot(ns, path)
        node = ns.status(path, caller)
        if not node.is_dir:
            raise NotACheckpointError(f"{path} is a file, not a checkpoint directory",
                                      path=path)
        permission.check(caller, node, LIST, path)
        return node

    def _streaming(self, path: str, user: str) -> streaming.Layout:
        """A streaming checkpoint scanned for ``show``, ``validate`` and ``latest``, which read
        its log files: READ_EXECUTE on every directory of it and READ on each log file, as
        listing it and opening them through WebHDFS would need."""
        path = paths.normalize(path)
        return self.fs.read(lambda ns: self._scan_for_reading(ns, path, user))

    def _scan_for_reading(self, ns: CatalogView, path: str, user: str) -> streaming.Layout:
        caller = self.fs.caller(user)
        node = self._node(ns, path, user)
        kind = layout.kind_of(node)
        if kind != layout.STREAMING:
            raise NotACheckpointError(
                f"{path} is not a Structured Streaming checkpoint (no offsets/ and "
                f"metadata){f'; it holds a {kind} checkpoint' if kind else ''}", path=path)
        found = self._scan_streaming(node, path, caller)
        check_read(caller, node, path, streaming.log_files(found) + [
            f for pair in checksums.sidecars(found.stores) for f in pair] + [
            f for store in found.stores for _, kind, f in store.files()
            if kind == layout.DELTA and store.unique])
        found.lineage = self._lineage_reader()
        return found

    def read_file(self, ref: layout.FileRef) -> bytes:
        if ref.length > MAX_LOG_FILE:
            raise InvalidRequestError(f"{ref.path} is {ref.length} bytes, too large for a "
                                      f"metadata log file")
        chunks = []
        self.files_read += 1
        for block_id, num_bytes, _ in ref.blocks:
            with self.store.open_block(block_id, num_bytes) as handle:
                chunks.append(handle.read(num_bytes))
        return b"".join(chunks)

    def _contents(self, found: streaming.Layout) -> dict:
        return {ref.path: self._read_or_error(ref) for ref in streaming.log_files(found)}

    def _lineage_reader(self):
        """``layout.Store.restore``'s ``lineage``: a format version 2 changelog's lineage
        from the head of the file (``changelog.lineage``), each file read once; why it
        cannot be read, when Spark could not either; None for another codec."""
        cache: dict[str, object] = {}

        def lineage(ref: layout.FileRef):
            if ref.path not in cache:
                try:
                    cache[ref.path] = self._read_lineage(ref)
                except changelog.UnknownCodec:
                    cache[ref.path] = None
                except changelog.ChangelogError as exc:
                    cache[ref.path] = str(exc)
                except Exception as exc:    # a missing block is reported, not raised
                    cache[ref.path] = f"{ref.path} could not be read: {exc}"
            return cache[ref.path]
        return lineage

    def _read_lineage(self, ref: layout.FileRef) -> list[tuple[int, str]]:
        """A short head first (a lineage since the last snapshot is a few items), the
        whole of ``changelog.HEAD`` only when the lineage runs past it, and the whole file
        (up to ``MAX_LOG_FILE``) when even that does not hold it (a zstd frame decodes
        only whole)."""
        for limit in (LINEAGE_FIRST_READ, changelog.HEAD, MAX_LOG_FILE):
            try:
                return changelog.lineage(self._head(ref, limit), ref.path)
            except changelog.CutShort:
                if ref.length <= limit:
                    raise
        raise changelog.CutShort(f"{ref.path}: its lineage is not within {MAX_LOG_FILE} "
                                 f"bytes")

    def _head(self, ref: layout.FileRef, limit: int) -> bytes:
        """The first ``limit`` bytes of a file (a changelog's head)."""
        self.files_read += 1
        chunks, left = [], min(limit, ref.length)
        for block_id, num_bytes, _ in ref.blocks:
            if left <= 0:
                break
            with self.store.open_block(block_id, num_bytes) as handle:
                chunks.append(handle.read(min(left, num_bytes)))
            left -= len(chunks[-1])
        return b"".join(chunks)

    def _checksums(self, found: streaming.Layout, only: set[str] | None = None
                   ) -> dict[str, str]:
        """State files (those in ``only``, when given) that fail their ``.crc`` sidecar:
        path -> why (``checksums.verify``: their CRC32C composed from the store's chunk
        CRCs, the sidecars read)."""
        pairs = checksums.sidecars(found.stores, only)
        self.files_read += len(pairs)
        bad = checksums.verify(pairs, self.read_file, self.store.read_crcs, self._block_bytes)
        return {**bad, **self._decoded(found, only)}

    def _decoded(self, found: streaming.Layout, only: set[str] | None) -> dict[str, str]:
        """Format version 2 state files (those in ``only``, when given) without a ``.crc``
        sidecar (file checksums off, or the sidecar lost: Spark only warns), read whole as
        Spark's restore reads them -- changelogs decoded (``changelog.verify``: lz4,
        snappy, zstd), snapshots unzipped (``snapshot_zip.verify``): path -> why. Unlike
        the sidecar check this reads the data; another codec is not judged."""
        out = {}
        for store in found.stores:
            for _, kind, f in store.files() if store.unique else ():
                if f.path in store.sidecars or f.length > MAX_LOG_FILE or \
                        (only is not None and f.path not in only):
                    continue
                try:
                    if kind == layout.DELTA:
                        changelog.verify(self.read_file(f), f.path)
                    else:
                        snapshot_zip.verify(self.read_file(f), f.path)
                except changelog.UnknownCodec:
                    continue
                except (changelog.ChangelogError, snapshot_zip.SnapshotZipError) as exc:
                    out[f.path] = str(exc)
                except Exception as exc:    # a missing block is reported, not raised
                    out[f.path] = f"{f.path} could not be read: {exc}"
        return out

    def _block_bytes(self, block_id: int, num_bytes: int) -> bytes:
        with self.store.open_block(block_id, num_bytes) as handle:
            return handle.read(num_bytes)

    # ------------------------------------------------------------------ reads

    def ls(self, root: str, user: str) -> list[dict]:
        """One row per checkpoint under ``root`` that the caller can find by listing (READ_
        EXECUTE on each directory on the way, as LISTSTATUS needs), each captured under the
        lock on its own. A row's figures summarise the whole checkpoint, so they need what
        GETCONTENTSUMMARY needs (READ_EXECUTE on every directory of it,
        ``FSDirStatAndListingOp.getContentSummary``); without it the row says ``denied``."""
        root = paths.normalize(root)
        caller = self.fs.caller(user)
        can_list = functools.partial(permission.allowed, caller, access=LIST)
        found = self.fs.read(lambda ns: [(p, k) for p, k, _ in layout.discover(
            self._node(ns, root, user), root, can_list)])
        rows = []
        for path, kind in found:
            got = self.fs.read(functools.partial(self._row, path=path, kind=kind, caller=caller))
            if got is None:
                continue                     # deleted meanwhile
            row, readable = got
            if readable and self.leases.held_under(path):    # an open upload holds a lease
                row["health"] = "writing"
            rows.append(row)
        self.requests += 1
        return rows

    def _row(self, ns: CatalogView, path: str, kind: str, caller) -> tuple[dict, bool] | None:
        """The ``ls`` row of the checkpoint at ``path`` now (in a read of its own) and whether
        the caller may read all of it (else the row says ``denied``); None when it is gone or
        the caller can no longer reach it."""
        node = self._current(ns, path, caller)
        if node is None or not node.is_dir:
            return None
        if not _may(permission.check_subtree, caller, node, LIST, path=path):
            return layout.denied_row(path, kind), False
        return self._summary(node, path, kind), True

    @staticmethod
    def _current(ns: CatalogView, path: str, caller):
        """The inode at ``path`` now, or None when it is gone or the caller can no longer
        reach it; resolved as ``status`` does, so a path found inside a snapshot resolves
        through it."""
        try:
            return ns.status(path, caller)
        except (PathNotFoundError, AccessControlError):
            return None

    def _summary(self, node, path: str, kind: str) -> dict:
        if kind in FLINK_KINDS:
            return flink.summary(flink.scan(node, path, kind))
        if kind == layout.STREAMING:
            return streaming.quick_summary(node, path, self._resolve_for_ls)
        if kind == layout.JOB:
            files, total, newest, _ = layout.tree_usage(node)
            return jobs.summary(node, path, files, total, newest)
        if kind == layout.RDD:
            return others.rdd_summary(node, path, self.now_ms(), self.rdd_ttl_ms)
        return others.dstream_summary(node, path)

    def overview(self, ttl: float = 15.0) -> tuple[list[dict], int]:
        """The status page's rows: every checkpoint under the configured roots that anyone
        may read (the page is anonymous: ``ANONYMOUS``, in no group, as Hadoop's web UI's
        static user), and how many others exist. Reused for ``ttl`` seconds (an ``ls``
        walks every checkpoint)."""
        now = time.monotonic()
        if self._overview is None or now - self._overview[0] >= ttl:
            public, total = [], 0
            for root in self.roots:
                if self.fs.read(functools.partial(CatalogView.lookup, path=root)) is None:
                    continue
                total += len(self.ls(root, self.fs.identity.superuser))
                with contextlib.suppress(AccessControlError):  # root not world-readable
                    public += [r for r in self.ls(root, ANONYMOUS) if r["health"] != "denied"]
            self._overview = (now, (public, total - len(public)))
        return self._overview[1]

    def metrics(self) -> dict:
        return {"CatalogRequests": self.requests, "CatalogFilesRead": self.files_read}

    # ------------------------------------------------------------------ Flink

    def _flink(self, path: str, user: str, *, below: bool = False) -> list[flink.Job]:
        """The Flink job or savepoint at ``path`` (``below``: also every one under it),
        scanned under the lock: the caller needs READ_EXECUTE on all of it and READ on each
        ``_metadata``, as listing it and opening them through WebHDFS would."""
        return self.fs.read(lambda ns: self._flink_in(ns, path, user, below))

    def _flink_in(self, ns: CatalogView, path: str, user: str,
                  below: bool = False) -> list[flink.Job]:
        caller = self.fs.caller(user)
        node = self._node(ns, path, user)
        kind = layout.kind_of(node)
        if kind in FLINK_KINDS:
            found = [(path, kind, node)]
        elif below:
            can_list = functools.partial(permission.allowed, caller, access=LIST)
            found = [f for f in layout.discover(node, path, can_list) if f[1] in FLINK_KINDS]
        else:
            found = []
        if not found:
            raise NotACheckpointError(f"{path} is not a checkpoint and holds no Flink "
                                      f"checkpoint or savepoint", path=path)
        out = []
        for where, kind, inode in found:
            permission.check_subtree(caller, inode, LIST, path=where)
            job = flink.scan(inode, where, kind)
            check_read(caller, inode, where, flink.metadata_files(job))
            out.append(job)
        return out

    def _judged(self, job: flink.Job) -> list[flink.Verdict]:
        contents: dict[str, bytes | Exception] = {}
        for ref in flink.metadata_files(job):
            try:
                contents[ref.path] = self.read_file(ref)
            except Exception as exc:     # a missing block is reported, not raised
                contents[ref.path] = exc
        return flink.verdicts(job, contents)

    def _flink_latest(self, path: str, user: str) -> dict:
        """The newest restorable checkpoint or savepoint at or under ``path``, by when its
        metadata was written: a restored job checkpoints under a new job id, so the newest
        may sit in another job's directory."""
        best = None
        for job in self._flink(path, user, below=True):
            for v in self._judged(job):
                if not v.restorable:
                    continue
                chk = next(c for c in flink.all_checkpoints(job) if c.path == v.path)
                if chk.metadata is None:    # never: a restorable checkpoint has its metadata
                    continue
                if best is None or chk.metadata.mtime > best[0]:
                    best = (chk.metadata.mtime, v)
        self.requests += 1
        return {"path": path, "kind": layout.FLINK,
                "latest": None if best is None else {"id": best[1].id, "path": best[1].path}}

    # ------------------------------------------------------------------ reads (2)

    def show(self, path: str, user: str) -> dict:
        """Per batch (streaming), per checkpoint (job, DStream, Flink) or per RDD: whatever
        ``ls`` lists, ``show`` details."""
        path = paths.normalize(path)
        kind, answer = self._read_other(path, user, "show")
        if answer is not None:
            return answer
        if kind in FLINK_KINDS:
            [job] = self._flink(path, user)
            self.requests += 1
            return flink.show(job, self._judged(job))
        found = self._streaming(path, user)
        self.requests += 1
        return {"kind": layout.STREAMING, **report.show(found, self._contents(found),
                                                         self._checksums(found))}

    def validate(self, path: str, user: str) -> dict:
        """Whatever ``ls`` lists, ``validate`` checks by its kind's rules."""
        path = paths.normalize(path)
        kind, answer = self._read_other(path, user, "validate")
        if answer is not None:
            return answer
        if kind in FLINK_KINDS:
            [job] = self._flink(path, user)
            self.requests += 1
            return flink.validate(job, self._judged(job))
        found = self._streaming(path, user)
        self.requests += 1
        return {"kind": layout.STREAMING, **report.validate(found, self._contents(found),
                                                             self._checksums(found))}

    def latest(self, path: str, user: str) -> dict:
        """The last fully restorable batch of a streaming checkpoint (log files parsed), or
        the newest checkpoint (job, RDD, DStream time, Flink) that restores."""
        path = paths.normalize(path)
        kind, answer = self._read_other(path, user, "latest")
        if answer is not None:
            return answer
        if kind in FLINK_KINDS or kind is None:
            return self._flink_latest(path, user)
        found = self._streaming(path, user)
        _, bad = report.parse_all(found, self._contents(found))
        batch = streaming.latest_restorable(found, set(bad) | set(self._checksums(found)))
        self.requests += 1
        return {"path": found.path, "kind": "streaming", "lastBatch": found.last_committed,
                "latest": batch}

    def _read_other(self, path: str, user: str, read: str) -> tuple[str | None, dict | None]:
        """``(kind, answer)``: ``read`` ("show", "latest" or "validate") of the job, RDD or
        DStream checkpoint at ``path``, judged from the namespace alone under the lock, with
        READ_EXECUTE on all of it (as GETCONTENTSUMMARY, for the figures of every file);
        ``(kind, None)`` for another kind, which reads files."""
        def judge(ns: CatalogView) -> tuple[str | None, dict | None]:
            node = self._node(ns, path, user)
            kind = layout.kind_of(node) or (layout.JOB if path_is_job(node) else None)
            if kind not in OTHER_KINDS:
                return kind, None
            permission.check_subtree(self.fs.caller(user), node, LIST, path=path)
            self.requests += 1
            return kind, getattr(OTHER_KINDS[kind], read)(node, path)
        return self.fs.read(judge)

    # ------------------------------------------------------------------ changes

    async def _change(self, request, *args):
        """Run one request on the loop (``request(ns, *args) -> (result, ops)``): applied
        and logged by the namesystem under its lock, then synced."""
        result = await self.committer.wait(self.fs.write(lambda ns: request(ns, *args)))
        if isinstance(result, jobs.Partial):
            raise result.error
        return result

    async def retain(self, path: str, keep: int, user: str) -> dict:
        return await self._change(self._retain, paths.normalize(path), keep, user)

    def _retain(self, ns: CatalogView, path: str, keep: int, user: str):
        caller = self.fs.caller(user)
        node = self._node(ns, path, user, change=True)
        if layout.kind_of(node) == layout.JOB:
            return jobs.retain(ns, path, keep, caller)
        if layout.kind_of(node) == layout.FLINK:
            # The metadata files are read here, under the lock: a few small blocks, and the
            # plan must see exactly the checkpoints it deletes among.
            [job] = self._flink_in(ns, path, user)
            doomed, kept = flink.plan_retain(job, self._judged(job), keep)
            count, ops = ns.delete_many(doomed, caller) if doomed else (0, [])
            return {"path": path, "kept": kept, "deleted": count,
                    **flink.removal(job, doomed)}, ops
        found = self._scan_streaming(node, path, caller)
        self._read_unique_ids(found)
        found.lineage = self._lineage_reader()
        plan = retention.retain(found, keep)
        # Retention need not be one op (every kept batch stays restorable whichever of its
        # deletes happened), so a large plan is split to keep each record well under the
        # edits record limit; all of them are logged and synced together.
        result, ops = jobs.steps(*(
            (lambda chunk=chunk: ns.delete_many(chunk, caller))
            for chunk in retention.chunks(plan.paths, ns.max_record // 2)))
        if isinstance(result, jobs.Partial):
            return result, ops
        return {"path": path, **plan.to_json()}, ops

    def _read_unique_ids(self, found: streaming.Layout, below: int | None = None) -> None:
        """Checkpoint format version 2 (state files named ``<version>_<uniqueId>``): which
        id of each state version a restore reads is in the commits (``stateUniqueIds``), so
        retention and rollback read them (those up to ``below``), under the lock, to keep
        exactly the committed chains (``layout.Store.at``) and to tell leftovers."""
        if any(store.unique for store in found.stores):
            report.parse_all(found, {ref.path: self._read_or_error(ref)
                                     for batch, ref in found.commits.items()
                                     if below is None or batch <= below})

    def _resolve_for_ls(self, found: streaming.Layout) -> None:
        """For ``ls`` of a checkpoint of format version 2: the few commits that tell a state
        version's committed unique id from a leftover's (``streaming.ambiguous_commits``),
        read under the lock (a checkpoint without leftovers reads none), and the lineage of
        the changelogs its restores start from (the head of one changelog a store, for a
        checkpoint whose last batch restores), so that its health is the restart's, which
        follows the lineage (``RocksDB.loadWithCheckpointId``)."""
        refs = streaming.ambiguous_commits(found)
        report.parse_all(found, {ref.path: self._read_or_error(ref) for ref in refs})
        found.lineage = self._lineage_reader()

    def _scan_streaming(self, node, path: str, caller) -> streaming.Layout:
        """Planning reads the whole checkpoint: READ_EXECUTE on every directory of it."""
        if layout.kind_of(node) != layout.STREAMING:
            raise NotACheckpointError(f"{path} is not a Structured Streaming checkpoint",
                                      path=path)
        permission.check_subtree(caller, node, LIST, path=path)
        return streaming.scan(node, path)

    async def rollback(self, path: str, to_batch: int, user: str) -> dict:
        path = paths.normalize(path)
        recovered = self._take_over_abandoned(path, user)
        result = await self._change(self._rollback, path, to_batch, user)
        return {**result, "recoveredLeases": recovered} if recovered else result

    def _take_over_abandoned(self, path: str, user: str) -> list[dict]:
        """The files of the checkpoint whose writers went silent past the soft limit
        (``nnlite.lease.soft-limit``) are abandoned: the rollback takes their leases over,
        as a new writer may (``LeaseManager``'s soft-limit takeover, HDFS's
        ``FSNamesystem.recoverLeaseInternal``), so each closes with what it had and its
        writer's later bytes fail with LeaseExpiredException; the rollback then judges them
        as closed files. Only when every open file is abandoned (a live writer refuses the
        rollback, which then changes nothing) and the caller may write each (HDFS's
        ``recoverLease`` checks WRITE). Runs on the loop before the rollback's request:
        revoking closes the file with a request of its own, and ``_check_quiet`` still
        decides under the lock."""
        found = self.fs.read(lambda ns: self._scan_streaming(
            self._node(ns, path, user, change=True), path, self.fs.caller(user)))
        held = [(file, self.leases.holder(file)) for file in found.writing]
        abandoned = [(file, lease) for file, lease in held
                     if lease is not None and self.leases.expired(lease)]
        if len(abandoned) < len(held):
            return []           # a live writer: refused as it is, nothing taken over
        for file, _ in abandoned:
            self.fs.check_target(file, user, permission.WRITE)
        recovered = []
        for file, lease in abandoned:
            silent = self.leases.clock() - lease.renewed
            self.leases.revoke(lease, f"Lease of {file} held by {lease.holder} taken over by "
                                      f"the catalog's rollback after {silent:.1f} s without "
                                      f"progress (soft limit {self.leases.soft_limit:g} s)")
            log.warning("catalog: rollback of %s recovered the lease of %s (held by %s, "
                        "silent %.1f s)", path, file, lease.holder, silent)
            recovered.append({"path": file, "holder": lease.holder,
                              "silentSeconds": round(silent, 1)})
        return recovered

    def _rollback(self, ns: CatalogView, path: str, to_batch: int, user: str):
        caller = self.fs.caller(user)
        found = self._scan_streaming(self._node(ns, path, user, change=True), path, caller)
        self._check_quiet(found)
        plan = retention.rollback(found, to_batch, self._restart_files(found, to_batch))
        ops, taken = self._undo_snapshot(ns, path, to_batch, caller) if plan.paths \
            else ([], None)
        _, more = ns.delete_many(plan.paths, caller)
        log.info("catalog: rolled %s back to batch %d (%d paths, %d bytes)%s", path, to_batch,
                 len(plan.paths), plan.bytes, f"; snapshot {taken}" if taken else "")
        return {"path": path, "lastBatch": to_batch, **plan.to_json(),
                **({"snapshot": taken} if taken else {})}, ops + more

    def _undo_snapshot(self, ns: CatalogView, path: str, batch: int,
                       caller) -> tuple[list, str | None]:
        """Under a snapshottable directory a rollback first takes a snapshot of it, so the
        removed batches can be copied back from ``<dir>/.snapshot/<name>``. Who may not
        take one there may not roll back there: the rollback would not be undoable."""
        where = ns.snapshottable_above(path)
        if where is None:
            return [], None
        now = self.now_ms()
        name = time.strftime(f"rollback-{batch}-%Y%m%d-%H%M%S", time.gmtime(now / 1000)) + \
            f".{now % 1000:03d}"
        try:
            taken, ops = ns.create_snapshot(where, name, caller)
        except NamenodeError as exc:
            raise type(exc)(
                f"{path} is under the snapshottable directory {where}, and the rollback "
                f"takes a snapshot of it first so that it can be undone; that failed: {exc}",
                path=path) from exc
        return list(ops), taken

    def _restart_files(self, found: streaming.Layout, batch: int) -> set[str]:
        """Read and parse what a restart after ``batch`` reads (metadata, its offsets and
        commit, the offsets before it, then each file source's log entries): the paths that
        are corrupt. A few small files, under the lock: the rollback must judge exactly what
        it deletes among."""
        before = streaming.restart_reads(found, batch)
        self._read_unique_ids(found, below=batch)
        wanted = [found.metadata, found.offsets.get(batch), found.commits.get(batch),
                  found.offsets.get(before) if before is not None else None]
        contents = {ref.path: self._read_or_error(ref) for ref in wanted if ref is not None}
        _, bad = report.parse_all(found, contents)
        found.lineage = self._lineage_reader()
        chains = {f.path for store in found.stores
                  for f in store.chain(batch + 1, found.unique_ids, found.lineage) or ()}
        bad.update(self._checksums(found, chains))
        sources = {}
        for name, offset in found.log_offsets.get(batch, {}).items():
            for entry in streaming.source_entries(found, name, offset):
                ref = found.sources.get(name, {}).get(entry)
                if ref is not None:
                    sources[ref.path] = self._read_or_error(ref)
        return set(bad) | set(report.parse_all(found, sources)[1])

    def _read_or_error(self, ref: layout.FileRef):
        try:
            return self.read_file(ref)
        except Exception as exc:     # a missing block is reported, not raised
            return exc

    def _check_quiet(self, found: streaming.Layout) -> None:
        held = [lease.path for lease in self.leases.held_under(found.path)]
        if held or found.writing:
            raise CheckpointBusyError(self._open_file(found.path, (held or found.writing)[0]),
                                      path=found.path)
        idle = self.now_ms() - found.newest
        if idle < self.quiet_ms:
            raise CheckpointBusyError(
                f"{found.path} was written {idle / 1000:.1f} s ago (less than "
                f"nnlite.catalog.quiet = {self.quiet_ms / 1000:g} s): stop the query and "
                f"retry once it is quiet", path=found.path)

    def _open_file(self, path: str, file: str) -> str:
        """Why a rollback of ``path`` waits for ``file``: who holds it open, since when, and
        what ends it -- stopping the query, HDFS's ``recoverLease`` (a stopped query's JVM
        whose DFSClient still renews the lease), or the soft limit, past which the rollback
        takes the lease over itself."""
        lease = self.leases.holder(file)
        soft = self.leases.soft_limit
        if lease is None:
            holder = "with no lease (a writer a restart or failover cut off)"
        else:
            age = self.leases.clock() - lease.renewed
            holder = (f"by {lease.holder} on {lease.machine or 'unknown'} (last progress "
                      f"{age:.1f} s ago)")
        return (f"{path} is being written ({file} is open {holder}): stop the query before "
                f"rolling it back. A file a stopped query left open is released by "
                f"'hdfs debug recoverLease -path {file}'; a rollback takes over a writer "
                f"silent for {soft:g} s (nnlite.lease.soft-limit)")

    async def pin(self, path: str, batch: int, on: bool, user: str) -> dict:
        return await self._change(self._pin, paths.normalize(path), batch, on, user)

    def _pin(self, ns: CatalogView, path: str, batch: int, on: bool, user: str):
        caller = self.fs.caller(user)
        node = self._node(ns, path, user, change=True)
        found: flink.Job | streaming.Layout
        if layout.kind_of(node) == layout.JOB:
            return jobs.set_pin(ns, path, batch, on, caller)
        if layout.kind_of(node) == layout.FLINK:
            permission.check_subtree(caller, node, LIST, path=path)
            found = flink.scan(node, path, layout.FLINK)
            if on and batch not in found.complete():
                raise CheckpointNotFoundError(f"{path}: checkpoint {batch} is not complete, so "
                                              f"there is nothing to pin", path=path)
        else:
            found = self._scan_streaming(node, path, caller)
            if on and batch not in found.commits:
                raise CheckpointNotFoundError(f"{path}: batch {batch} is not committed, so "
                                              f"there is nothing to pin", path=path)
        # A pin is a user.* xattr: changing one needs WRITE on the inode (as Hadoop's
        # FSDirXAttrOp.checkXAttrChangeAccess), also when this one changes nothing.
        permission.check(caller, node, permission.WRITE, path)
        pins = set(found.pins) | {batch} if on else set(found.pins) - {batch}
        if pins == set(found.pins):
            return {"path": path, "pinned": sorted(pins)}, []
        if pins:
            _, ops = ns.set_xattr(path, layout.PINS_XATTR, layout.encode_pins(pins),
                                  XATTR_CREATE | XATTR_REPLACE, caller)
        else:
            _, ops = ns.remove_xattr(path, layout.PINS_XATTR, caller)
        return {"path": path, "pinned": sorted(pins)}, ops

    async def gc(self, root: str, user: str, dry_run: bool = False) -> dict:
        return await self._change(self._gc, paths.normalize(root), user, dry_run)

    def _gc(self, ns: CatalogView, root: str, user: str, dry_run: bool):
        caller = self.fs.caller(user)
        plan, stay = others.plan_gc(
            self._node(ns, root, user, change=True), root, self.now_ms(), self.tmp_ttl_ms,
            self.rdd_ttl_ms, can_list=functools.partial(permission.allowed, caller, access=LIST),
            can_delete=lambda where: _may(ns.check_delete, paths.split(where), caller))
        # What a snapshot holds stays on disk until the snapshot goes (the block sweep keeps
        # it): counted apart, not as freed.
        kept = sum(p["bytes"] for p in plan if ns.kept_by_snapshot(p["path"]))
        ops = [] if dry_run else ns.delete_many([p["path"] for p in plan], caller)[1]
        return {"root": root, "dryRun": dry_run, "removed": plan, "kept": stay,
                "bytesFreed": sum(p["bytes"] for p in plan) - kept,
                "bytesKeptBySnapshots": kept}, ops

    # ------------------------------------------------------------------ jobs

    async def begin(self, job: str, user: str) -> dict:
        return await self._job_change(jobs.begin, job, user)

    async def complete(self, job: str, chk_id: int, expected: int | None, user: str) -> dict:
        return await self._job_change(jobs.complete, job, user, chk_id, expected)

    async def abort(self, job: str, chk_id: int, user: str) -> dict:
        return await self._job_change(jobs.abort, job, user, chk_id)

    async def _job_change(self, request, job: str, user: str, *args) -> dict:
        """One request of the job lifecycle (``jobs.begin`` ...) on ``job``, never inside
        a snapshot."""
        def run(ns: CatalogView):
            _check_not_in_snapshot(ns, job)
            return request(ns, job, *args, self.fs.caller(user))
        return await self._change(run)

    # ------------------------------------------------------------------ policy

    async def apply_policy(self, policy: dict[str, int], user: str) -> list[dict]:
        """Retain every checkpoint under each root; one failure is logged, not fatal."""
        loop = asyncio.get_running_loop()
        done = []
        for root, keep in policy.items():
            try:
                rows = await loop.run_in_executor(None, self.ls, root, user)
            except Exception as exc:
                log.warning("catalog policy: cannot list %s: %s", root, exc)
                continue
            for row in rows:
                if row["kind"] not in (layout.STREAMING, layout.JOB):
                    continue
                try:
                    result = await self.retain(row["path"], keep, user)
                except Exception as exc:
                    log.warning("catalog policy: retain %s failed: %s", row["path"], exc)
                    continue
                done.append(result)
                if result.get("deletedPaths") or result.get("deleted"):
                    log.info("catalog policy: %s keep %d: %s", row["path"], keep, result)
        return done


FLINK_KINDS = (layout.FLINK, layout.SAVEPOINT)


class Reads(NamedTuple):
    """``show``, ``latest`` and ``validate`` of a kind judged from the namespace alone, each
    ``(node, path) -> answer``."""
    show: Callable
    latest: Callable
    validate: Callable


def _latest(kind: str, newest: Callable) -> Callable:
    return lambda node, path: {"path": path, "kind": kind, "latest": newest(node, path)}


OTHER_KINDS = {
    layout.JOB: Reads(jobs.show, _latest(layout.JOB, jobs.latest), jobs.validate),
    layout.RDD: Reads(others.rdd_show, _latest(layout.RDD, others.rdd_latest),
                      others.rdd_validate),
    layout.DSTREAM: Reads(others.dstream_show, _latest(layout.DSTREAM, others.dstream_latest),
                          others.dstream_validate),
}


def _may(check, *args, **kw) -> bool:
    """Whether a permission check passes (it raises AccessControlError when it does not)."""
    try:
        check(*args, **kw)
    except AccessControlError:
        return False
    return True


def path_is_job(node) -> bool:
    return bool(node.xattrs and jobs.LAST_ID_XATTR in node.xattrs)


def check_read(caller, node, base: str, refs) -> None:
    """READ on each file of ``refs`` (all below ``node``, the directory at ``base``), as
    OPEN checks it: resolved from ``node`` down, so a checkpoint seen through a snapshot is
    checked on the inodes as the snapshot holds them (FSPermissionChecker on a snapshot
    path), each directory's children read once."""
    prefix = base.rstrip("/") + "/"
    listed = {"": node.children}

    def children(rel: str) -> dict:
        if rel not in listed:
            parent, _, name = rel.rpartition("/")
            listed[rel] = children(parent)[name].children
        return listed[rel]

    for ref in refs:
        rel, _, name = ref.path[len(prefix):].rpartition("/")
        permission.check(caller, children(rel)[name], permission.READ, ref.path)


def _check_not_in_snapshot(ns, path: str) -> None:
    """A path through ``<dir>/.snapshot`` names a read-only snapshot: refused as HDFS
    refuses any change there, naming the live path the change was probably meant for."""
    if snapshot.DOT_SNAPSHOT not in path:
        return
    parts = paths.split(path)
    try:
        ns.check_writable(parts, path)
    except SnapshotAccessControlError as exc:
        at = parts.index(snapshot.DOT_SNAPSHOT)
        live = paths.join(parts[:at] + parts[at + 2:])
        raise SnapshotAccessControlError(
            f"{exc}: {path} is in snapshot {'/'.join(parts[at + 1:at + 2]) or '(none)'} of "
            f"{paths.join(parts[:at])}; outside the snapshot it is {live}", path=path) from exc
