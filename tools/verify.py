"""Check an edits file or an fsimage without loading a namespace, and say precisely what is wrong.

``verify_edits``: the header; every record's frame, CRC, payload and txid; the txid range; the
segment markers (START_LOG_SEGMENT first, END_LOG_SEGMENT last once rolled: reported, not
required, as the loader does not require them); a torn tail (offset, length) or the first bad
offset with the txid expected there, and the next readable record after it.

``verify_image``: the MD5 (against ``--md5`` or the ``.md5`` sidecar), the footer (format key,
layout version, namespace id, last txid, inode count against the row count, schema), then every
page of data (page CRCs) and the tree: exactly one root (parent_id 0, a directory named ""),
every other parent id a directory that itself reaches the root, unique ids, inode types,
names (non-empty, no "/"), permission bits.

A ``Report`` is clean when it holds no problem; the CLI exits 0 only then.
"""

from __future__ import annotations

import mmap
import os
import time
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from nnlite.formats import edits
from nnlite.formats.edits import next_frame
from nnlite.formats.errors import FormatError
from nnlite.formats.fsimage.layout import (
    TYPE_DIRECTORY,
    TYPE_FILE,
    ImageMeta,
    schema_for,
)
from nnlite.formats.fsimage.md5 import file_md5
from nnlite.formats.fsimage.read import iter_batches, read_meta
from nnlite.tools.dirindex import BATCH_ROWS, DirectoryIndex, kept_roots
from nnlite.tools.oiv import md5_source
from nnlite.tools.progress import Progress

EXAMPLES = 5


@dataclass
class Report:
    subject: str
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def info(self, text: str) -> None:
        self.lines.append(f"  {text}")

    def problem(self, text: str) -> None:
        self.problems.append(text)
        self.lines.append(f"  PROBLEM {text}")

    def render(self) -> str:
        verdict = "OK" if self.ok else f"{len(self.problems)} problem(s)"
        return "\n".join([self.subject, *self.lines, f"result: {verdict}"]) + "\n"


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


# --------------------------------------------------------------------------------- edits

def verify_edits(path: str, *, max_record: int = edits.DEFAULT_MAX_RECORD) -> Report:
    path = os.fspath(path)
    size = os.path.getsize(path)
    report = Report(f"edits {path}")
    report.info(f"file: {size} bytes")
    try:
        reader = edits.EditsReader(path, max_record=max_record)
    except FormatError as exc:
        report.problem(f"header: {_error(exc)}")
        return report
    report.info(f"header: magic {edits.MAGIC.decode()}, layout version {reader.layout_version}, "
                f"first txid {reader.first_txid}")
    codes, error = _read_records(reader)
    _report_records(report, reader, codes, size)
    if reader.torn_tail is not None:
        tail = reader.torn_tail
        report.problem(f"torn tail: offset {tail.offset}, length {tail.length} ({tail.reason});"
                       f" every record before it is intact, and startup truncates the file "
                       f"to {reader.valid_length} bytes")
    if error is not None:
        report.problem(f"corrupt: first bad offset {error.offset}, txid {error.txid}: "
                       f"{_error(error)}")
        report.info(_resync_hint(path, error, size, max_record))
    return report


def _read_records(reader: edits.EditsReader) -> tuple[tuple[int, int] | None, FormatError | None]:
    """(first op code, last op code) of the records read, and the error that stopped them."""
    first: int | None = None
    last = 0        # read only once first is set, which sets it too
    try:
        for _, op in reader:
            last = int(op.OP_CODE)
            first = last if first is None else first
    except FormatError as exc:
        return (None if first is None else (first, last)), exc
    return (None if first is None else (first, last)), None


def _report_records(report: Report, reader: edits.EditsReader, codes, size: int) -> None:
    if not reader.records:
        report.info("records: none")
    else:
        report.info(f"records: {reader.records}, txids {reader.first_txid}..{reader.last_txid}")
    report.info(f"valid length: {reader.valid_length} of {size} bytes")
    if codes is None:
        return
    first, last = (edits.OpCode(c).name for c in codes)
    opening = ("starts with START_LOG_SEGMENT" if first == "START_LOG_SEGMENT"
               else f"note: starts with {first}, not START_LOG_SEGMENT")
    closing = ("finalized (ends with END_LOG_SEGMENT)" if last == "END_LOG_SEGMENT"
               else "in progress (no END_LOG_SEGMENT yet)")
    report.info(f"segment: {opening}; {closing}")


def _resync_hint(path: str, error: FormatError, size: int, max_record: int) -> str:
    """Where the next readable record after a corruption is, for someone deciding on
    ``nnlite namenode --recover``."""
    if error.offset is None or error.offset + 1 >= size:
        return "after the damage: nothing readable"
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        found = next_frame(buf, error.offset + 1, size, error.txid or 0, max_record)
        if found is None:
            return "after the damage: no readable record up to the end of the file"
        return (f"after the damage: next readable record at offset {found.offset}, "
                f"txid {found.txid}; 'nnlite namenode --recover' can skip to it")


# -------------------------------------------------------------------------------- fsimage

def verify_image(path: str, *, md5: str | None = None, batch_size: int = BATCH_ROWS) -> Report:
    path = os.fspath(path)
    report = Report(f"fsimage {path}")
    report.info(f"file: {os.path.getsize(path)} bytes")
    _check_md5(report, path, md5)
    try:
        meta = read_meta(path)
    except FormatError as exc:
        report.problem(f"footer: {_error(exc)}")
        return report
    _report_meta(report, meta)
    try:
        TreeCheck(report, meta).run(path, batch_size)
    except FormatError as exc:
        report.problem(f"data: {_error(exc)}")
    return report


def _check_md5(report: Report, path: str, md5_hex: str | None) -> None:
    try:
        expected, source = md5_source(path, md5_hex)
    except FormatError as exc:
        report.problem(f"md5: {_error(exc)}")
        return
    if expected is None:
        report.info(f"md5: not verified (no {source}, no --md5); page checksums still are")
        return
    actual = file_md5(path)
    if actual == expected:
        report.info(f"md5: {actual}, matches {source}")
    else:
        report.problem(f"md5: the file's is {actual}, but {source} says {expected}")


def _report_meta(report: Report, meta: ImageMeta) -> None:
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(meta.creation_time / 1000))
    report.info(f"meta: layout version {meta.layout_version}, namespace id "
                f"{meta.namespace_id}, last txid {meta.last_txid}, inode count "
                f"{meta.inode_count}, created {created}")
    if meta.extra:
        report.info("meta extra: " + ", ".join(f"{k}={v}" for k, v in sorted(meta.extra.items())))
    report.info(f"schema: {len(schema_for(meta.layout_version))} columns as layout version "
                f"{meta.layout_version} defines; footer rows = inode count")


class TreeCheck:
    """Two passes: the directory index, then every row (all columns, so every page is read)."""

    def __init__(self, report: Report, meta: ImageMeta):
        self.report = report
        self.meta = meta
        self.rows = 0
        self.kinds = {TYPE_DIRECTORY: 0, TYPE_FILE: 0}
        self.under_construction = 0
        self.ids: list[pa.Array] = []
        self.roots: list[tuple[int, int, int, str]] = []
        self.findings: dict[str, tuple[int, list[str]]] = {}

    def run(self, path: str, batch_size: int) -> None:
        index = DirectoryIndex.scan(path, batch_size=batch_size)
        good = pa.array([d for d in index.parents if index.path_of(d) is not None], pa.int64())
        with Progress(self.meta.inode_count, what="inodes", label="verify") as bar:
            for batch in iter_batches(path, batch_size=batch_size):
                self._check_batch(batch, good)
                self.rows += batch.num_rows
                bar.advance(batch.num_rows)
        self._report()

    def _check_batch(self, batch: pa.RecordBatch, good: pa.Array) -> None:
        parents, names, types = (batch.column(n) for n in ("parent_id", "name", "type"))
        is_root = pc.and_(pc.equal(parents, 0), pc.invert(kept_roots(batch)))
        self.ids.append(batch.column("id"))
        for i in pc.indices_nonzero(is_root).to_pylist():
            self.roots.append((self.rows + i, batch.column("id")[i].as_py(),
                               types[i].as_py(), names[i].as_py()))
        for kind in self.kinds:
            self.kinds[kind] += pc.sum(pc.equal(types, kind)).as_py() or 0
        self.under_construction += pc.sum(pc.is_valid(batch.column("client_name"))).as_py() or 0
        permission = batch.column("permission")
        self._find("parents", batch, pc.invert(pc.or_(pc.equal(parents, 0),
                                                      pc.is_in(parents, value_set=good))))
        self._find("names", batch, pc.and_(pc.invert(pc.equal(parents, 0)), pc.or_(
            pc.equal(names, ""), pc.match_substring(names, "/"))))
        self._find("types", batch, pc.invert(pc.is_in(types, value_set=pa.array(
            list(self.kinds), pa.int8()))))
        self._find("permissions", batch, pc.or_(pc.less(permission, 0),
                                                pc.greater(permission, 0o7777)))

    def _find(self, what: str, batch: pa.RecordBatch, mask: pa.Array) -> None:
        rows = pc.indices_nonzero(mask).to_pylist()
        if not rows:
            return
        count, examples = self.findings.get(what, (0, []))
        for i in rows[:EXAMPLES - len(examples)]:
            examples.append(f"row {self.rows + i}: id {batch.column('id')[i]}, parent_id "
                            f"{batch.column('parent_id')[i]}, type {batch.column('type')[i]}, "
                            f"name {batch.column('name')[i].as_py()!r}, permission "
                            f"{batch.column('permission')[i].as_py():o}")
        self.findings[what] = (count + len(rows), examples)

    def _report(self) -> None:
        report, dirs, files = self.report, self.kinds[TYPE_DIRECTORY], self.kinds[TYPE_FILE]
        report.info(f"rows: {self.rows} read ({dirs} directories, {files} files, "
                    f"{self.under_construction} under construction)")
        if self.rows != self.meta.inode_count:
            report.problem(f"rows: {self.rows} read, but inode_count is {self.meta.inode_count}")
        self._report_root()
        self._report_ids()
        messages = {
            "parents": "rows whose parent id does not resolve to a directory under the root",
            "names": "rows other than the root whose name is empty or holds '/'",
            "types": f"rows whose type is neither {TYPE_DIRECTORY} nor {TYPE_FILE}",
            "permissions": "rows whose permission is outside 0..7777 (octal)"}
        for what, message in messages.items():
            if what in self.findings:
                count, examples = self.findings[what]
                report.problem(f"{what}: {count} {message}; first: " + "; ".join(examples))
        if "parents" not in self.findings:
            report.info("parents: every parent id resolves to a directory under the root")

    def _report_root(self) -> None:
        roots = self.roots
        if len(roots) == 1 and roots[0][2] == TYPE_DIRECTORY and roots[0][3] == "":
            self.report.info(f"root: row {roots[0][0]}, id {roots[0][1]}")
            return
        found = "; ".join(f"row {r}: id {i}, type {t}, name {n!r}" for r, i, t, n in
                          roots[:EXAMPLES]) or "none"
        self.report.problem(f"root: expected one directory with parent_id 0 and name \"\", "
                            f"found {len(roots)}: {found}")

    def _report_ids(self) -> None:
        ids = pa.chunked_array(self.ids, pa.int64())
        distinct = pc.count_distinct(ids).as_py() if len(ids) else 0
        if distinct == self.rows:
            self.report.info(f"ids: {distinct} distinct")
            return
        counts = pc.value_counts(ids)
        repeated = counts.filter(pc.greater(counts.field("counts"), 1)).to_pylist()
        shown = ", ".join(f"{c['values']} ({c['counts']} times)" for c in repeated[:EXAMPLES])
        self.report.problem(f"ids: {self.rows - distinct} duplicate rows; repeated: {shown}")
