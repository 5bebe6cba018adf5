"""Offline recovery of damaged edits: ``nnlite namenode --recover [--force]`` (as Hadoop's
``namenode -recover``).

Normal startup never skips anything: a bad record in the middle of a log stops it (loader.py).
Recovery is the one explicit way to discard data. It runs in two phases:

1. Read (changes nothing). Load the newest valid image, then replay ``edits`` and ``edits.new``
   from the dir startup would choose, frame by frame. Each *problem* is explained (file,
   offset, txid, what each answer would lose) and put to ``decide``, which answers:

   * CONTINUE: skip the damaged bytes or the record, resync at the next valid record and go on.
     After a bad frame, the scan moves forward byte by byte to the next offset where a frame
     (length + CRC) decodes to a txid at least the one expected there; a later txid is reported
     as lost txids.
   * STOP: keep everything before this point and discard the rest (later segments included).
   * QUIT: raise RecoveryQuit; nothing on disk has changed.

   Problems: a bad header, a bad frame (CRC, length, undecodable payload) with more data after
   it, a txid gap, a txid that repeats or goes backwards, an op that cannot be applied
   (ReplayError at startup). A torn tail (a bad frame with only zeros, or nothing, after it)
   is truncated without asking, exactly as startup does, and reported.
2. Write. Every file about to change (image, sidecars, edits, edits.new) in every dir is kept
   as ``<file>.broken`` (or ``.broken.N``, the first free N), by a hard link (a copy for
   ``fsimage.ckpt``, which is rewritten in place); then a new image
   of the recovered namespace is installed (imagestore.install) and a fresh ``edits`` holding
   only START_LOG_SEGMENT at image txid + 1 is published; ``edits.new`` is removed. The store
   then starts cleanly. A crash during this phase leaves either the old files, or the new image
   beside old edits whose records it already holds (their bad bytes still stop a normal
   startup loudly; recovery can simply be run again).

``Prompter`` is the terminal side: ``--force`` answers CONTINUE to everything without asking;
"always continue" does so from that problem on.
"""

from __future__ import annotations

import enum
import logging
import mmap
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from formats import edits as E
from formats import fsimage as F
from formats.errors import CorruptRecordError, FormatError
from namenode import durable, image, imagestore, loader, storage
from namenode.errors import NameDirError, NamenodeError
from namenode.namespace import Namespace
from namenode.storage import (CKPT, CKPT_MD5, EDITS, EDITS_NEW, IMAGE, IMAGE_MD5, NameDir,
                              copy_file)

log = logging.getLogger(__name__)

BROKEN_SUFFIX = ".broken"
CHANGED_FILES = (IMAGE, IMAGE_MD5, CKPT, CKPT_MD5, EDITS, EDITS_NEW)


class Choice(enum.Enum):
    CONTINUE = "continue"
    STOP = "stop"
    QUIT = "quit"


class RecoveryQuit(NamenodeError):
    """The operator quit recovery; no file was changed."""


@dataclass(frozen=True)
class Problem:
    """One thing recovery cannot get past without losing something."""
    kind: str            # "bad header", "corrupt record", "txid gap", "txid out of order",
    #                      "unappliable op", "undecodable tail"
    path: str
    offset: int
    txid: int | None     # the txid expected (or found) there
    found: str           # what was seen
    if_continue: str     # what CONTINUE loses
    if_stop: str         # what STOP loses

    def describe(self) -> str:
        txid = "" if self.txid is None else f", txid {self.txid}"
        return (f"Problem: {self.kind} in {self.path} at offset {self.offset}{txid}\n"
                f"  found:            {self.found}\n"
                f"  continue loses:   {self.if_continue}\n"
                f"  stop here loses:  {self.if_stop}")


@dataclass
class Outcome:
    """What recovery did; ``summary()`` is the text the CLI prints."""
    namespace_id: int = 0
    image_txid: int = 0          # txid of the image recovery started from
    last_txid: int = 0           # txid of the new image (every txid kept or deliberately lost)
    applied: int = 0
    decisions: list = field(default_factory=list)     # (Problem, Choice)
    torn_tails: list = field(default_factory=list)    # (path, offset, bytes)
    truncated: tuple | None = None                    # (path, offset) where STOP cut the log
    backups: list = field(default_factory=list)       # Paths of the .broken copies
    dirs: list = field(default_factory=list)

    def summary(self) -> str:
        lines = [f"Recovery finished: image txid {self.image_txid} + {self.applied} ops "
                 f"replayed -> new image at txid {self.last_txid}, fresh edits from txid "
                 f"{self.last_txid + 1}, in {', '.join(self.dirs)}"]
        if not self.decisions and not self.torn_tails:
            lines.append("  no problem found in the edits")
        for problem, choice in self.decisions:
            lost = problem.if_continue if choice is Choice.CONTINUE else problem.if_stop
            lines.append(f"  {problem.kind} at {problem.path}:{problem.offset}: "
                         f"{choice.value}; lost {lost}")
        for path, offset, length in self.torn_tails:
            lines.append(f"  torn tail in {path} at offset {offset} ({length} bytes) truncated")
        lines += [f"  kept a copy: {p}" for p in self.backups]
        return "\n".join(lines)


Decide = Callable[[Problem], Choice]


# ------------------------------------------------------------------------------ frames

@dataclass(frozen=True, slots=True)
class _Frame:
    offset: int
    end: int
    txid: int
    op: E.Op


def _frame_at(buf, off: int, size: int, max_record: int) -> _Frame | str:
    """The record at ``off`` if its frame is valid and its payload decodes, else why not."""
    if size - off < E.RECORD_HEADER_SIZE:
        return "partial record header"
    length, crc = E.RECORD_HEADER.unpack_from(buf, off)
    end = off + E.RECORD_HEADER_SIZE + length
    if length == 0 or length > max_record:
        return f"impossible record length {length}"
    if end > size:
        return f"record of {length} bytes runs past the end of the file"
    payload = buf[off + E.RECORD_HEADER_SIZE:end]
    if zlib.crc32(payload, zlib.crc32(buf[off:off + 4])) != crc:
        return "record CRC mismatch"
    try:
        txid, op = E.decode_payload(payload)
    except CorruptRecordError as exc:
        return f"undecodable payload ({exc})"
    return _Frame(off, end, txid, op)


def next_frame(buf, start: int, size: int, min_txid: int, max_record: int) -> _Frame | None:
    """Resync: the first offset from ``start`` holding a valid frame with txid >= min_txid."""
    for off in range(start, size - E.RECORD_HEADER_SIZE):
        length = E.LENGTH.unpack_from(buf, off)[0]
        if 0 < length <= max_record and off + E.RECORD_HEADER_SIZE + length <= size:
            found = _frame_at(buf, off, size, max_record)
            if isinstance(found, _Frame) and found.txid >= min_txid:
                return found
    return None


def _zeros(buf, start: int, stop: int) -> bool:
    return buf[start:stop].count(0) == stop - start


def _claimed_end(buf, off: int, size: int) -> int:
    if size - off < E.RECORD_HEADER_SIZE:
        return size
    return off + E.RECORD_HEADER_SIZE + E.LENGTH.unpack_from(buf, off)[0]


# ------------------------------------------------------------------------------ replay

class _Replay:
    """Phase 1: replays the segments into ``ns``, asking ``decide`` about each problem."""

    def __init__(self, ns: Namespace, image_txid: int, decide: Decide, max_record: int,
                 outcome: Outcome):
        self.ns = ns
        self.decide = decide
        self.max_record = max_record
        self.out = outcome
        self.done = image_txid        # highest txid applied, in the image, or given up
        self.stopped = False
        self.later = ""               # what follows the current segment, for messages

    # --------------------------------------------------------------- asking

    def ask(self, problem: Problem) -> Choice:
        choice = self.decide(problem)
        if choice is Choice.QUIT:
            raise RecoveryQuit(f"recovery quit at {problem.path} offset {problem.offset}; "
                               "nothing was changed", path=problem.path)
        self.out.decisions.append((problem, choice))
        return choice

    def lost_txids(self, first: int, last: int) -> str:
        """Text for the txids first..last, minus those the image or replay already holds."""
        first = max(first, self.done + 1)
        if first > last:
            return "nothing (those txids are already in the image or were replayed)"
        count = last - first + 1
        return f"txid {first}" if count == 1 else f"txids {first}..{last} ({count} ops)"

    def rest(self, size: int, off: int, txid: int) -> str:
        return (f"every op from txid {max(txid, self.done + 1)} on: {size - off} bytes of this "
                f"file{self.later}")

    def stop(self, path: str, off: int) -> int:
        self.stopped = True
        self.out.truncated = (path, off)
        return -1

    # --------------------------------------------------------------- segments

    def segments(self, paths: list[Path]) -> None:
        for i, path in enumerate(paths):
            if self.stopped:
                break
            rest = [p.name for p in paths[i + 1:]]
            self.later = f", and all of {', '.join(rest)}" if rest else ""
            self.segment(str(path))

    def segment(self, path: str) -> None:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < E.HEADER_SIZE:
                log.warning("%s is shorter than an edits header (%d bytes): a segment torn at "
                            "creation, dropped", path, size)
                self.out.torn_tails.append((path, 0, size))
                return
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                self._records(path, buf, size)

    def _records(self, path: str, buf, size: int) -> None:
        off, expected = self._header(path, buf, size)
        while 0 <= off < size:
            found = _frame_at(buf, off, size, self.max_record)
            if isinstance(found, str):
                off, expected = self._bad_frame(path, buf, off, size, expected, found)
            elif found.txid != expected:
                off, expected = self._out_of_order(path, size, found, expected)
            else:
                off, expected = self._apply(path, size, found)

    def _header(self, path: str, buf, size: int) -> tuple[int, int]:
        try:
            first = E.decode_header(buf[:E.HEADER_SIZE], path=path)
        except FormatError as exc:
            problem = Problem("bad header", path, 0, self.done + 1, str(exc),
                              "nothing by itself: its records are read as if the header "
                              "continued the log", self.rest(size, 0, self.done + 1))
            if self.ask(problem) is Choice.STOP:
                return self.stop(path, 0), 0
            return E.HEADER_SIZE, self.done + 1
        if first > self.done + 1:
            problem = Problem("txid gap", path, 0, first,
                              f"the segment starts at txid {first}, txid {self.done + 1} is "
                              "needed next", self.lost_txids(self.done + 1, first - 1),
                              self.rest(size, 0, self.done + 1))
            if self.ask(problem) is Choice.STOP:
                return self.stop(path, 0), 0
            self.done = first - 1
        return E.HEADER_SIZE, first

    def _bad_frame(self, path: str, buf, off: int, size: int, expected: int,
                   reason: str) -> tuple[int, int]:
        nxt = next_frame(buf, off + 1, size, expected, self.max_record)
        if nxt is None and (_claimed_end(buf, off, size) >= size
                            or _zeros(buf, _claimed_end(buf, off, size), size)):
            log.warning("torn tail in %s at offset %d (%d bytes: %s): truncating it", path, off,
                        size - off, reason)
            self.out.torn_tails.append((path, off, size - off))
            return -1, expected
        if nxt is None:
            problem = Problem("undecodable tail", path, off, expected,
                              f"{reason}; no valid record follows in the {size - off} bytes "
                              "to the end of the file",
                              f"these {size - off} bytes (unknown ops from txid "
                              f"{expected} on)", self.rest(size, off, expected))
            if self.ask(problem) is Choice.STOP:
                return self.stop(path, off), expected
            return -1, expected
        problem = Problem("corrupt record", path, off, expected,
                          f"{reason}; the next valid record is txid {nxt.txid} at offset "
                          f"{nxt.offset} ({nxt.offset - off} bytes skipped)",
                          self.lost_txids(expected, nxt.txid - 1),
                          self.rest(size, off, expected))
        if self.ask(problem) is Choice.STOP:
            return self.stop(path, off), expected
        self.done = max(self.done, nxt.txid - 1)
        return nxt.offset, nxt.txid

    def _out_of_order(self, path: str, size: int, frame: _Frame,
                      expected: int) -> tuple[int, int]:
        if frame.txid > expected:
            problem = Problem("txid gap", path, frame.offset, frame.txid,
                              f"txid {frame.txid} where txid {expected} was expected",
                              self.lost_txids(expected, frame.txid - 1),
                              self.rest(size, frame.offset, expected))
            if self.ask(problem) is Choice.STOP:
                return self.stop(path, frame.offset), expected
            self.done = max(self.done, frame.txid - 1)
            return frame.offset, frame.txid   # applied on the next turn
        problem = Problem("txid out of order", path, frame.offset, frame.txid,
                          f"txid {frame.txid} ({_op_text(frame.op)}) repeats or goes "
                          f"backwards: txid {expected} was expected",
                          f"this record (its txid {frame.txid} is already taken)",
                          self.rest(size, frame.offset, expected))
        if self.ask(problem) is Choice.STOP:
            return self.stop(path, frame.offset), expected
        return frame.end, expected

    def _apply(self, path: str, size: int, frame: _Frame) -> tuple[int, int]:
        if frame.txid > self.done:
            try:
                self.ns.apply(frame.op)
                self.out.applied += 1
            except NamenodeError as exc:
                problem = Problem("unappliable op", path, frame.offset, frame.txid,
                                  f"{_op_text(frame.op)} cannot be applied: {exc}",
                                  f"this op (txid {frame.txid})",
                                  self.rest(size, frame.offset, frame.txid))
                if self.ask(problem) is Choice.STOP:
                    return self.stop(path, frame.offset), frame.txid
            self.done = frame.txid
        return frame.end, frame.txid + 1


def _op_text(op: E.Op) -> str:
    text = repr(op)
    return text if len(text) <= 200 else text[:197] + "..."


# ------------------------------------------------------------------------------ images

def _best_image(dirs: list[NameDir], namespace_id: int) -> tuple[Path, str, F.ImageMeta]:
    """The newest verified image, as startup picks it, but without finishing any swap."""
    found = []
    for d in dirs:
        for name, sidecars in ((IMAGE, (IMAGE_MD5, CKPT_MD5)), (CKPT, (CKPT_MD5,))):
            path = d.file(name)
            if not path.exists():
                continue
            try:
                md5 = F.file_md5(str(path))
                if not any(d.file(s).exists() and F.parse_md5_sidecar(
                        d.file(s).read_text(), path=str(d.file(s))) == md5 for s in sidecars):
                    raise F.ImageCorruptError(f"digest {md5} matches no sidecar", path=str(path))
                meta = F.read_meta(str(path))
            except (FormatError, OSError) as exc:
                log.warning("recovery ignores %s: %s", path, exc)
                continue
            if meta.namespace_id == namespace_id:
                found.append((meta.last_txid, name == IMAGE, path, md5, meta))
    if not found:
        raise NameDirError("No valid fsimage in any name directory: recovery replays edits "
                           "onto an image; `nnlite namenode --import-checkpoint` can rebuild "
                           "one from the secondary's last checkpoint")
    best = max(found, key=lambda c: c[:2])
    return best[2], best[3], best[4]


# ------------------------------------------------------------------------------ writing

def broken_name(path: Path) -> Path:
    """``<file>.broken``, or ``<file>.broken.N`` with the first N not taken."""
    candidate = path.with_name(path.name + BROKEN_SUFFIX)
    n = 0
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}{BROKEN_SUFFIX}.{n}")
    return candidate


def keep_copy(path: Path) -> Path:
    """Keep the current content of ``path`` beside it. A hard link where the name is only
    ever replaced by a rename afterwards; a real copy for ``fsimage.ckpt``, which
    imagestore.stage writes in place (through a link it would overwrite the copy too)."""
    target = broken_name(path)
    if path.name == CKPT:
        copy_file(path, target)
        return target
    try:
        os.link(path, target)
    except OSError:
        copy_file(path, target)
    durable.sync_dir(path.parent)
    return target


def write_fresh_edits(d: NameDir, first_txid: int) -> None:
    """Publish an ``edits`` holding only START_LOG_SEGMENT at ``first_txid``; drop edits.new."""
    tmp = d.file(EDITS + ".tmp")
    writer = E.EditsWriter.create(str(tmp), first_txid)
    try:
        writer.write(E.encode_record(first_txid, E.StartLogSegmentOp()))
        writer.fsync()
    finally:
        writer.close()
    durable.publish(tmp, d.file(EDITS), synced=True)
    durable.remove_durably(d.file(EDITS_NEW))


def _rewrite(dirs: list[NameDir], source: NameDir, ns: Namespace, out: Outcome) -> None:
    """Phase 2 (see the module docstring)."""
    for d in dirs:
        d.current.mkdir(parents=True, exist_ok=True)
        out.backups += [keep_copy(d.file(n)) for n in CHANGED_FILES if d.file(n).exists()]
    imagestore.install(dirs, lambda p: image.save(ns, p, out.namespace_id, out.last_txid))
    for d in dirs:
        write_fresh_edits(d, out.last_txid + 1)
        if not d.is_formatted():
            copy_file(source.file("VERSION"), d.file("VERSION"))


# ------------------------------------------------------------------------------ entry

def recover(paths: list[str], decide: Decide, *,
            max_record: int = E.DEFAULT_MAX_RECORD) -> Outcome:
    """Recover the name dirs at ``paths`` (locked for the duration); see the module docs."""
    dirs = [NameDir(p) for p in paths]
    with storage.locked(dirs):
        return _recover(dirs, decide, max_record)


def _recover(dirs: list[NameDir], decide: Decide, max_record: int) -> Outcome:
    formatted = [d for d in dirs if d.is_formatted()]
    if not formatted:
        raise NameDirError("No formatted name directory among " +
                           ", ".join(str(d.root) for d in dirs))
    out = Outcome(dirs=[str(d.root) for d in dirs])
    out.namespace_id = loader._namespace_id(formatted)          # the checks startup makes
    image_path, md5, meta = _best_image(formatted, out.namespace_id)
    ns, _ = image.load(str(image_path), md5)
    out.image_txid = meta.last_txid
    source = loader._edits_source(formatted)                    # the dir startup replays
    segments = [source.file(n) for n in (EDITS, EDITS_NEW) if source.file(n).exists()]
    replay = _Replay(ns, meta.last_txid, decide, max_record, out)
    replay.segments(segments)
    out.last_txid = replay.done
    _rewrite(dirs, source, ns, out)
    log.info("recovery done: new image at txid %d in %s", out.last_txid, ", ".join(out.dirs))
    return out


# ------------------------------------------------------------------------------ terminal

PROMPT = "[c]ontinue (skip it) / [s]top here (keep what came before) / [q]uit (change " \
         "nothing) / [a]lways continue"
ANSWERS = {"c": Choice.CONTINUE, "s": Choice.STOP, "q": Choice.QUIT, "a": Choice.CONTINUE}


class Prompter:
    """Explains each problem through ``say`` and asks through ``ask`` (which returns one of
    ANSWERS' keys); with ``force``, or after "always", it continues without asking."""

    def __init__(self, ask: Callable[[str], str], say: Callable[[str], None],
                 force: bool = False):
        self.ask = ask
        self.say = say
        self.always = force
        self.reason = "--force" if force else ""

    def __call__(self, problem: Problem) -> Choice:
        self.say(problem.describe())
        if self.always:
            self.say(f"  -> continue ({self.reason})")
            return Choice.CONTINUE
        answer = self.ask(PROMPT).strip().lower()[:1]
        if answer == "a":
            self.always, self.reason = True, "always continue"
        return ANSWERS[answer]
