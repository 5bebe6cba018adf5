"""Which files retention and rollback remove from a streaming checkpoint. Pure planning.

``retain(keep=N)``: the kept batches are the last N committed ones, every pinned batch and
the newest; offsets and commits of other batches below the newest are removed (but the
offsets of the batch before each kept one, which a restart after it reads), and a state
file is removed only when no kept batch's restore chain (snapshot + deltas of version b + 1)
reads it. Nothing at or above the newest committed batch is touched (an in-flight batch's
offsets and state stay), and neither are the source logs (sources purge their own). With
checkpoint format version 2 the chains are those of the unique ids the commits record
(``layout.Store.at``), so files of other ids at those versions (a failed attempt's
leftovers) go too, and where the caller set ``Layout.lineage`` a changelog's chain is the
lineage it records (``layout.Store.restore``), as Spark's restore takes it: a snapshot or
changelog that lineage names is never removed while its batch is kept, and a kept batch
whose lineage is broken keeps what is there. A state file's ``.crc`` sidecar goes with it.

``rollback(to=N)``: the query restarts from batch N + 1 as if later batches never ran:
offsets, commits and source-log entries of batches above N and state versions above N + 1
are removed, with their ``.crc`` sidecars. Batch N must be restorable now.

Both return the paths for one DELETE_MANY op, so the change is all or nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from nnlite.catalog import streaming
from nnlite.catalog.errors import InvalidRequestError, NotRestorableError
from nnlite.catalog.layout import FileRef, source_batch, state_name


@dataclass(frozen=True)
class Plan:
    paths: tuple[str, ...]
    kept: tuple[int, ...]          # batches that stay restorable (retain) / the new last batch
    removed_batches: tuple[int, ...]
    removed_state_files: int
    bytes: int

    def to_json(self) -> dict:
        return {"deletedPaths": len(self.paths), "keptBatches": list(self.kept),
                "removedBatches": list(self.removed_batches),
                "removedStateFiles": self.removed_state_files, "bytesFreed": self.bytes}


def retain(layout: streaming.Layout, keep: int) -> Plan:
    if keep < 1:
        raise InvalidRequestError(f"keep must be at least 1, not {keep}", path=layout.path)
    last = layout.last_committed
    if last is None:
        return Plan((), (), (), 0, 0)
    committed = sorted(layout.commits)
    kept = set(committed[-keep:]) | (layout.pins & set(committed)) | {last}
    # A restart after kept batch k reads the offsets before it too (streaming.py, rule 3).
    needed_offsets = kept | {streaming.restart_reads(layout, b) for b in kept}
    doomed = [f for b, f in layout.offsets.items() if b < last and b not in needed_offsets]
    doomed += [f for b, f in layout.commits.items() if b < last and b not in kept]
    needed: set[str] = set()
    broken: dict[str, int] = {}     # store path -> the highest version kept as evidence
    for store in layout.stores:
        for batch in kept:
            chain = store.chain(batch + 1, layout.unique_ids, layout.lineage)
            if chain is None:       # broken already: keep what is there, as evidence
                chain = [f for v, _, f in store.files() if v <= batch + 1]
                broken[store.path] = max(broken.get(store.path, 0), batch + 1)
            needed.update(f.path for f in chain)
    state = [f for store in layout.stores for v, _, f in store.files()
             if v <= last + 1 and f.path not in needed]
    doomed += _sidecars(layout, lambda v, main: v <= last + 1 and main not in needed and
                        v > broken.get(main.rsplit("/", 1)[0], 0))
    removed = sorted({b for b in set(layout.offsets) | set(layout.commits)
                      if b < last and b not in kept})
    return _plan(doomed, state, tuple(sorted(kept)), removed)


def rollback(layout: streaming.Layout, to_batch: int, bad: frozenset | set = frozenset()
             ) -> Plan:
    """Remove every batch after ``to_batch``: later offsets and commits, state versions above
    ``to_batch + 1``, and each file source's log entries after the log offset ``offsets/
    to_batch`` records (``layout.log_offsets``, read by the caller; streaming.py, rule 6).
    ``bad``: paths of the log files the caller found corrupt."""
    if to_batch < 0:
        raise InvalidRequestError(f"--to-batch must be 0 or more, not {to_batch}",
                                  path=layout.path)
    if to_batch not in layout.commits:
        committed = sorted(layout.commits)
        raise NotRestorableError(
            f"{layout.path}: batch {to_batch} is not committed (committed batches: "
            f"{streaming.runs(committed) or 'none'}){_nearest(layout, to_batch)}",
            path=layout.path)
    why = streaming.problems(layout, to_batch, bad)
    if why:
        raise NotRestorableError(f"{layout.path}: batch {to_batch} cannot be restored, so "
                                 f"the query could not restart from it: {'; '.join(why)}"
                                 f"{_nearest(layout, to_batch)}", path=layout.path)
    doomed = [f for b, f in _batch_files(layout) if b > to_batch]
    for source, offset in layout.log_offsets.get(to_batch, {}).items():
        doomed += [f for name, f in layout.sources.get(source, {}).items()
                   if (b := source_batch(name)) is not None and b > offset]
    state = [f for store in layout.stores for v, _, f in store.files() if v > to_batch + 1]
    doomed += _sidecars(layout, lambda v, main: v > to_batch + 1)
    removed = sorted(b for b in set(layout.offsets) | set(layout.commits) if b > to_batch)
    return _plan(doomed, state, (to_batch,), removed)


def _nearest(layout: streaming.Layout, to_batch: int) -> str:
    """``; the nearest batch that restores: N`` (the lower one on a tie), or nothing."""
    good = [b for b in layout.commits if not streaming.problems(layout, b)]
    if not good:
        return "; no batch of it restores"
    best = min(good, key=lambda b: (abs(b - to_batch), b))
    return f"; the nearest batch that restores is {best} (--to-batch {best})"


def chunks(paths_: tuple[str, ...], budget: int) -> list[tuple[str, ...]]:
    """``paths_`` in order, cut into runs whose encoded size stays under ``budget`` bytes
    (a path costs its UTF-8 length plus a few bytes of msgpack framing)."""
    out: list[tuple[str, ...]] = []
    current: list[str] = []
    size = 0
    for path in paths_:
        cost = len(path.encode("utf-8", "surrogatepass")) + 5
        if current and size + cost > budget:
            out.append(tuple(current))
            current, size = [], 0
        current.append(path)
        size += cost
    if current:
        out.append(tuple(current))
    return out


def _sidecars(layout: streaming.Layout, doomed) -> list[FileRef]:
    """The ``.crc`` sidecars (ChecksumCheckpointFileManager) of the state files ``doomed(
    version, path)`` removes, and of removed state files (orphans: Spark's own delete may
    leave one, ChecksumCheckpointFileManager.delete with allowConcurrentDelete), as
    ChecksumCheckpointFileManager.delete removes a file's sidecar with it. Retention keeps
    the orphans of a store whose kept chain is broken, with its files, as evidence."""
    out = []
    for store in layout.stores:
        for main, sidecar in store.sidecars.items():
            name = state_name(main.rsplit("/", 1)[-1])
            if name is not None and doomed(name.version, main):
                out.append(sidecar)
    return out


def _batch_files(layout: streaming.Layout):
    for section in (layout.offsets, layout.commits):
        yield from section.items()


def _plan(doomed: list[FileRef], state: list[FileRef], kept: tuple, removed) -> Plan:
    files = doomed + state
    return Plan(tuple(sorted(f.path for f in files)), kept, tuple(removed), len(state),
                sum(f.length for f in files))
