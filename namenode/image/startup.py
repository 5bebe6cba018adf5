"""Startup: the newest valid image, then every later record from ``edits`` and ``edits.new``.

The rule that makes every crash point recoverable (DESIGN.md):

1. Image candidates in every dir: ``fsimage`` checked against ``fsimage.md5`` and
   ``fsimage.ckpt`` checked against ``fsimage.ckpt.md5`` (that sidecar is written only after the
   uploaded image was verified, so a ckpt without it is partial and is discarded). The newest
   valid one (highest txid) wins; if it is a ckpt, its swap is finished first.
2. Replay every record with txid > image txid from ``edits`` and then ``edits.new``, checking
   that txids continue without a gap. A torn tail is reported and truncated; corruption in
   the middle stops startup (formats.errors). If the image covers all of ``edits`` while
   ``edits.new`` exists, a checkpoint swap stopped just before ``edits.new -> edits``: that
   rename is finished.
3. Dirs that lag (older image, shorter or missing edits, never formatted) are resynced from the
   dir that was loaded, so every healthy dir holds the same files afterwards. A dir that
   cannot take them (full) is marked failed and startup goes on with the others.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from nnlite.durability import durable
from nnlite.formats import edits
from nnlite.formats.errors import FormatError, ImageCorruptError, TxidGapError
from nnlite.formats.fsimage.layout import ImageMeta
from nnlite.formats.fsimage.md5 import file_md5, parse_md5_sidecar
from nnlite.formats.fsimage.read import read_meta
from nnlite.namenode.errors import NameDirError, NamenodeError, ReplayError
from nnlite.namenode.image import columns, install
from nnlite.namenode.namespace.tree import Tree
from nnlite.namenode.storage.namedir import (
    CKPT,
    CKPT_MD5,
    EDITS,
    EDITS_NEW,
    IMAGE,
    IMAGE_MD5,
    NameDir,
    copy_file,
)

log = logging.getLogger(__name__)

PROGRESS_EVERY = 200_000


@dataclass
class ImageCandidate:
    dir: NameDir
    name: str                 # IMAGE or CKPT
    md5: str
    meta: ImageMeta


@dataclass
class Loaded:
    """What startup found: the tree, its ids, where appending resumes, what it noticed."""
    tree: Tree
    namespace_id: int
    image_txid: int
    last_txid: int
    segment: str                        # EDITS or EDITS_NEW: the file to append to
    # segment name -> valid length
    valid_lengths: dict[str, int] = field(default_factory=dict)
    torn_tails: list[tuple[str, edits.TornTail]] = field(default_factory=list)
    replayed: int = 0
    seconds: float = 0.0
    image_time: float = 0.0   # when the loaded image was written (seconds since the epoch)
    edits_last_txid: int = -1  # the last txid in ``edits`` (-1: no edits replayed)


def replay(tree: Tree, path: str, after_txid: int, expected: int,
           max_record: int = edits.DEFAULT_MAX_RECORD) -> tuple[edits.EditsReader, int]:
    """Apply every record of ``path`` with txid > ``after_txid``; the first applied one must be
    ``expected``. Returns the finished reader and the number of ops applied.

    Records are applied straight from their decoded payloads (``Tree.appliers`` take the
    payload tuple), so no op object is built (one is, for the message, on failure)."""
    reader = edits.EditsReader(path, max_record=max_record)
    if reader.first_txid > expected:
        raise TxidGapError(f"edits needed from txid {expected} are missing: {path} starts at "
                           f"txid {reader.first_txid}", path=path, txid=expected)
    appliers = tree.appliers
    payloads = reader.payloads()
    skipped = 0
    if reader.first_txid <= after_txid:     # records the image already holds come first
        for items in payloads:
            if items[1] > after_txid:
                _apply(appliers, items, path)
                break
            skipped += 1
    progress = PROGRESS_EVERY
    try:
        for items in payloads:
            appliers[items[0]](items)
            progress -= 1
            if not progress:
                progress = PROGRESS_EVERY
                log.info("replaying %s: %d ops, at txid %d", path, reader.records - skipped + 1,
                         items[1])
    except NamenodeError as exc:
        raise _replay_error(items, path, exc) from exc
    return reader, reader.records - skipped


def _apply(appliers: dict, items: tuple, path: str) -> None:
    try:
        appliers[items[0]](items)
    except NamenodeError as exc:
        raise _replay_error(items, path, exc) from exc


def _replay_error(items: tuple, path: str, exc: NamenodeError) -> ReplayError:
    op = edits.OPS[items[0]](*items[2:])
    return ReplayError(f"cannot apply txid {items[1]} from {path} ({op}): {exc}", path=path)


def load(dirs: list[NameDir]) -> Loaded:
    """Load the namespace from locked name dirs (see the module docstring)."""
    # The cyclic collector would rescan the growing tree again and again while millions of
    # inodes are created (it doubled load time); nothing built here is garbage until it ends.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _load(dirs)
    finally:
        if gc_was_enabled:
            gc.enable()


def _load(dirs: list[NameDir]) -> Loaded:
    start = time.perf_counter()
    formatted = [d for d in dirs if d.is_formatted()]
    if not formatted:
        raise NameDirError("No formatted name directory among " +
                           ", ".join(str(d.root) for d in dirs) + "; run `nnlite format`")
    namespace_id = namespace_id_of(formatted)
    best = _best_image(formatted, namespace_id)
    if best.name == CKPT:
        log.warning("finishing an interrupted image swap in %s", best.dir.current)
        install.finish_swap(best.dir, edits_new_to_edits=True)
    for d in formatted:
        install.discard_ckpt(d)
    tree, meta = columns.load(str(best.dir.file(IMAGE)), best.md5)
    source = edits_source(formatted)
    loaded = _replay_dir(tree, source, meta.last_txid)
    _finish_edits_rename(source, loaded)
    loaded.namespace_id = namespace_id
    loaded.image_time = meta.creation_time / 1000
    _resync(dirs, best.dir, source, loaded)
    loaded.seconds = time.perf_counter() - start
    log.info("namespace loaded: image txid %d, %d ops replayed, last txid %d, %d inodes, "
             "%.2f s", loaded.image_txid, loaded.replayed, loaded.last_txid,
             tree.files + tree.dirs, loaded.seconds)
    return loaded


def namespace_id_of(dirs: list[NameDir]) -> int:
    """The namespace id every dir's VERSION holds; dirs of different namespaces are refused."""
    ids = {d: d.namespace_id() for d in dirs}
    if len(set(ids.values())) > 1:
        raise NameDirError("Name directories belong to different namespaces: " +
                           ", ".join(f"{d.root}={i}" for d, i in ids.items()))
    return next(iter(ids.values()))


def _best_image(dirs: list[NameDir], namespace_id: int) -> ImageCandidate:
    found = [c for d in dirs for c in _candidates(d, namespace_id)]
    if not found:
        raise NameDirError("No valid fsimage in any name directory (" +
                           ", ".join(str(d.root) for d in dirs) + "); see the log for why "
                           "each was refused; `nnlite namenode --import-checkpoint` can rebuild "
                           "one from the secondary's last checkpoint")
    return max(found, key=lambda c: (c.meta.last_txid, c.name == IMAGE))


def _candidates(d: NameDir, namespace_id: int) -> Iterator[ImageCandidate]:
    for name, sidecar in ((IMAGE, IMAGE_MD5), (CKPT, CKPT_MD5)):
        path = d.file(name)
        if not path.exists():
            continue
        try:
            md5 = _verified_md5(d, name, sidecar)
            meta = read_meta(str(path))
        except (FormatError, OSError) as exc:
            log.warning("ignoring %s: %s", path, exc)
            continue
        if meta.namespace_id != namespace_id:
            log.warning("ignoring %s: namespace id %d, the directory's is %d", path,
                        meta.namespace_id, namespace_id)
            continue
        yield ImageCandidate(d, name, md5, meta)


def _verified_md5(d: NameDir, name: str, sidecar: str) -> str:
    """The image's digest, checked against its sidecar; finishes a half-renamed sidecar."""
    actual = file_md5(str(d.file(name)))
    for side in (sidecar, CKPT_MD5) if name == IMAGE else (sidecar,):
        path = d.file(side)
        if path.exists() and parse_md5_sidecar(path.read_text(), path=str(path)) == actual:
            if side != sidecar:
                # Crashed between steps 3 and 4 of ``install.py``'s sequence: finish it.
                log.warning("finishing an interrupted image swap in %s", d.current)
                install.finish_swap(d, edits_new_to_edits=True)
            return actual
    raise ImageCorruptError(f"digest {actual} matches no sidecar", path=str(d.file(name)))


def edits_source(dirs: list[NameDir]) -> NameDir:
    """The dir whose edits reach furthest: the one holding the newest segment (highest first
    txid), then the longest copy of it. Sizes alone would prefer a dir dropped before a
    checkpoint, whose old segment is long but ends before the acknowledged ops of the others."""
    return max(dirs, key=_reach)


def _reach(d: NameDir) -> tuple[int, int]:
    """(first txid, size) of the newest segment in ``d``; (-1, -1) if it has none readable."""
    for name in (EDITS_NEW, EDITS):
        path = d.file(name)
        if path.exists():
            try:
                with open(path, "rb") as f:
                    first_txid = edits.decode_header(f.read(edits.HEADER_SIZE), path=str(path))
                return first_txid, path.stat().st_size
            except (FormatError, OSError) as exc:
                log.warning("not replaying %s: %s", path, exc)
                return -1, -1
    return -1, -1


def _replay_dir(tree: Tree, d: NameDir, image_txid: int) -> Loaded:
    loaded = Loaded(tree, 0, image_txid, image_txid, EDITS)
    expected = image_txid + 1
    for name in (EDITS, EDITS_NEW):
        path = d.file(name)
        if not path.exists():
            continue
        reader, count = replay(tree, str(path), image_txid, expected)
        loaded.replayed += count
        loaded.segment = name
        loaded.valid_lengths[name] = reader.valid_length
        if reader.torn_tail is not None:
            log.warning("torn tail in %s at offset %d (%d bytes: %s): truncating it; it holds "
                        "no acknowledged op", path, reader.torn_tail.offset,
                        reader.torn_tail.length, reader.torn_tail.reason)
            loaded.torn_tails.append((str(path), reader.torn_tail))
        expected = max(expected, reader.last_txid + 1)
        if name == EDITS:
            loaded.edits_last_txid = reader.last_txid
    loaded.last_txid = expected - 1
    return loaded


def _finish_edits_rename(d: NameDir, loaded: Loaded) -> None:
    """``edits.new`` beside an ``edits`` that the loaded image covers entirely: a checkpoint
    swap stopped after its image was installed and before ``edits.new -> edits`` (``install.py``
    step 5, whose ckpt sidecar is already gone). Finish it, or the namenode would resume a
    checkpoint whose every upload is refused as already in place, and never roll again."""
    if EDITS_NEW not in loaded.valid_lengths or loaded.edits_last_txid > loaded.image_txid:
        return
    log.warning("finishing an interrupted checkpoint swap in %s: the image (txid %d) covers "
                "all of %s; %s -> %s", d.current, loaded.image_txid, EDITS, EDITS_NEW, EDITS)
    _truncate(d.file(EDITS_NEW), loaded.valid_lengths[EDITS_NEW])
    durable.rename_durably(d.file(EDITS_NEW), d.file(EDITS))
    loaded.valid_lengths = {EDITS: loaded.valid_lengths[EDITS_NEW]}
    loaded.segment = EDITS


def _resync(dirs: list[NameDir], image_dir: NameDir, edits_dir: NameDir,
            loaded: Loaded) -> None:
    """Give every dir the loaded image and the edits replayed (truncated to their valid
    part). A dir that cannot take them (a full disk) is marked failed, as Hadoop marks a
    storage directory it cannot write, and startup goes on with the others; the journal
    leaves it out until it is restored (``NameDir.restore_from`` at an edits roll)."""
    for name in (EDITS, EDITS_NEW):
        if name in loaded.valid_lengths:
            _truncate(edits_dir.file(name), loaded.valid_lengths[name])
    for d in dirs:
        try:
            _resync_dir(d, image_dir, edits_dir, loaded)
        except OSError as exc:
            d.fail(f"cannot resync it at startup: {exc}")
    if not any(d.healthy for d in dirs):
        raise NameDirError("No name directory could be brought up to date: " +
                           "; ".join(f"{d.root}: {d.failure}" for d in dirs))


def _resync_dir(d: NameDir, image_dir: NameDir, edits_dir: NameDir, loaded: Loaded) -> None:
    if d is not image_dir:
        _sync_file(image_dir, d, IMAGE)
        _sync_file(image_dir, d, IMAGE_MD5)
    if d is not edits_dir:
        # Stale segments go first: a crash between copying the source's edits and removing
        # an old edits.new would leave two overlapping segments that no startup can replay.
        for name in (EDITS_NEW, EDITS):
            if name not in loaded.valid_lengths:
                durable.remove_durably(d.file(name))
        for name in (EDITS, EDITS_NEW):
            if name in loaded.valid_lengths:
                _sync_file(edits_dir, d, name)
    if not d.is_formatted():
        log.warning("restoring unformatted name directory %s from %s", d.root,
                    image_dir.root)
        copy_file(image_dir.file("VERSION"), d.file("VERSION"))


def truncate_segments(d: NameDir, last_txid: int) -> None:
    """Cut the edits of ``d`` after record ``last_txid``, durably: ``edits.new`` goes if it
    starts after it, else it is cut; ``edits`` is cut. What startup then loads ends at
    ``last_txid`` (an HA namenode cut back to the shared journal)."""
    new = d.file(EDITS_NEW)
    if new.exists():
        with open(new, "rb") as f:
            first = edits.decode_header(f.read(edits.HEADER_SIZE), path=str(new))
        if first > last_txid:
            durable.remove_durably(new)
        else:
            _truncate(new, edits.record_end(str(new), last_txid))
            return
    path = d.file(EDITS)
    _truncate(path, edits.record_end(str(path), last_txid))


def _truncate(path: Path, length: int) -> None:
    if path.stat().st_size != length:
        with open(path, "r+b") as f:
            f.truncate(length)
            durable.sync_fd(f.fileno(), str(path))


def _sync_file(src_dir: NameDir, dst_dir: NameDir, name: str) -> None:
    src, dst = src_dir.file(name), dst_dir.file(name)
    if dst.exists() and dst.stat().st_size == src.stat().st_size and \
            file_md5(str(dst)) == file_md5(str(src)):
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    log.warning("resyncing %s from %s", dst, src)
    copy_file(src, dst)
