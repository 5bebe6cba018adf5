"""Phase 1 of recovery, which changes nothing: replay ``edits`` and ``edits.new`` onto the
namespace of the starting image, frame by frame, and put every problem to ``decide``.

Frames are the edits records of ``formats/edits.py``, found with its ``frame_at`` and
``next_frame``. Invariants: ``Replay.done`` is the highest txid
applied, held by the image, or deliberately given up, so no txid at or below it is applied
again; after a bad frame the scan resyncs at the first later offset whose frame is valid and
decodes to a txid at least the one expected there; a torn tail (a bad frame followed by nothing
or only zeros, and torn by ``edits.is_torn``) is truncated without asking, exactly as startup
does, while a complete last record that is damaged is put to ``decide``; once STOP is chosen no
further byte of any segment is read.
"""

from __future__ import annotations

import logging
import mmap
import os
from pathlib import Path

from nnlite.formats import edits
from nnlite.formats.edits import (
    Frame,
    claimed_end,
    frame_at,
    is_torn,
    next_frame,
    only_zeros,
)
from nnlite.formats.errors import FormatError
from nnlite.namenode.errors import NamenodeError
from nnlite.namenode.namespace.tree import Tree
from nnlite.namenode.recovery.dialog import Choice, Decide, Outcome, Problem, RecoveryQuit

log = logging.getLogger(__name__)

# ------------------------------------------------------------------------------ replay

class Replay:
    """Phase 1: replays the segments into ``tree``, asking ``decide`` about each problem."""

    def __init__(self, tree: Tree, image_txid: int, decide: Decide, max_record: int,
                 outcome: Outcome):
        self.tree = tree
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
            if size < edits.HEADER_SIZE:
                log.warning("%s is shorter than an edits header (%d bytes): a segment torn at "
                            "creation, dropped", path, size)
                self.out.torn_tails.append((path, 0, size))
                return
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                self._records(path, buf, size)

    def _records(self, path: str, buf, size: int) -> None:
        off, expected = self._header(path, buf, size)
        while 0 <= off < size:
            found = frame_at(buf, off, size, self.max_record)
            if isinstance(found, str):
                off, expected = self._bad_frame(path, buf, off, size, expected, found)
            elif found.txid != expected:
                off, expected = self._out_of_order(path, size, found, expected)
            else:
                off, expected = self._apply(path, size, found)

    def _header(self, path: str, buf, size: int) -> tuple[int, int]:
        try:
            first = edits.decode_header(buf[:edits.HEADER_SIZE], path=path)
        except FormatError as exc:
            problem = Problem("bad header", path, 0, self.done + 1, str(exc),
                              "nothing by itself: its records are read as if the header "
                              "continued the log", self.rest(size, 0, self.done + 1))
            if self.ask(problem) is Choice.STOP:
                return self.stop(path, 0), 0
            return edits.HEADER_SIZE, self.done + 1
        if first > self.done + 1:
            problem = Problem("txid gap", path, 0, first,
                              f"the segment starts at txid {first}, txid {self.done + 1} is "
                              "needed next", self.lost_txids(self.done + 1, first - 1),
                              self.rest(size, 0, self.done + 1))
            if self.ask(problem) is Choice.STOP:
                return self.stop(path, 0), 0
            self.done = first - 1
        return edits.HEADER_SIZE, first

    def _bad_frame(self, path: str, buf, off: int, size: int, expected: int,
                   reason: str) -> tuple[int, int]:
        nxt = next_frame(buf, off + 1, size, expected, self.max_record)
        if nxt is None and (claimed_end(buf, off, size) >= size
                            or only_zeros(buf, claimed_end(buf, off, size), size)) \
                and is_torn(buf, off, size):
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

    def _out_of_order(self, path: str, size: int, frame: Frame,
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

    def _apply(self, path: str, size: int, frame: Frame) -> tuple[int, int]:
        if frame.txid > self.done:
            try:
                self.tree.apply(frame.op)
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


def _op_text(op: edits.Op) -> str:
    text = repr(op)
    return text if len(text) <= 200 else text[:197] + "..."
