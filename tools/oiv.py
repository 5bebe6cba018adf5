"""The offline image viewer: an fsimage as text, streamed, one inode per line or record.

Processors (``-p``):

* ``Delimited``: one line per inode, like ``hdfs oiv -p Delimited``: Path, Replication,
  ModificationTime, AccessTime, PreferredBlockSize, BlocksCount, FileSize, NSQUOTA, DSQUOTA,
  Permission, UserName, GroupName. Times are ``yyyy-MM-dd HH:mm`` in the local time zone (as
  Hadoop's SimpleDateFormat); permissions ``drwxr-xr-x`` (sticky bit as ``t``/``T``, as Hadoop's
  FsPermission). As in Hadoop, directories show 0 for replication, block size, blocks and size,
  and files show 0 for both quotas. Fields are not quoted: a name holding the delimiter or a
  newline shows as it is.
* ``JSON``: one document ``{"meta": {...}, "inodes": [...]}`` with one inode per line and every
  column: ``type`` as DIRECTORY/FILE, ``permission`` as four octal digits, ``checksum`` and xattr
  values as lowercase hex, null where the image has null.
* ``XML``: ``<fsimage><meta/><inodes><inode>...</inode></inodes></fsimage>``, the same fields as
  JSON, null fields omitted; a string XML cannot hold is written as ``encoding="hex"`` UTF-8.
* ``FileDistribution``: a size histogram (tools.distribution).

The first three are written by ``oiv_writers``; paths come from ``dirindex``. The image's
MD5 is checked first, against ``--md5`` or the ``.md5`` sidecar beside it when there is one.

Memory: two passes over the file. The first reads only id, parent_id, name and type and keeps
one ``(parent_id, name)`` pair per directory (DirectoryIndex); the second streams every inode
batch by batch and rebuilds each path from that index. Files are never held, so memory grows
with the number of directories, not of inodes. Two passes, because the format gives row order
no meaning (the namenode writes directories first, but a reader must not depend on it), just as
Hadoop's oiv loads the directory section before it prints inodes. The second pass costs a few
percent: the first reads four columns and formats nothing.

An inode whose parent does not resolve to a directory reachable from the root is left out and
counted; ``OivResult.check()`` raises ImageCorruptError once the output is complete.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from nnlite.formats.errors import ImageCorruptError
from nnlite.formats.fsimage.layout import MD5_SUFFIX, ImageMeta
from nnlite.formats.fsimage.md5 import parse_md5_sidecar
from nnlite.formats.fsimage.read import iter_batches, read_meta
from nnlite.tools import OIV_PROCESSORS
from nnlite.tools.dirindex import BATCH_ROWS, KEPT, DirectoryIndex
from nnlite.tools.distribution import COLUMNS as DISTRIBUTION_COLUMNS
from nnlite.tools.distribution import DEFAULT_MAX, DEFAULT_STEP, FileDistribution, load_pyplot, plot
from nnlite.tools.errors import OptionError
from nnlite.tools.oiv_writers import WRITERS
from nnlite.tools.progress import Progress
from nnlite.tools.render import open_text_output

log = logging.getLogger(__name__)

PROCESSORS = OIV_PROCESSORS
ORPHAN_EXAMPLES = 5
_MD5_HEX = re.compile(r"[0-9a-fA-F]{32}")


# ------------------------------------------------------------------------------------ options

@dataclass(frozen=True)
class OivOptions:
    """What to render; None means the processor's default. ``check`` refuses an option that
    the chosen processor would ignore."""

    processor: str = "Delimited"
    delimiter: str | None = None
    header: bool = True
    step: int | None = None
    max_size: int | None = None
    plot: str | None = None
    md5: str | None = None
    batch_size: int = BATCH_ROWS

    def check(self) -> None:
        if self.processor not in PROCESSORS:
            raise OptionError(f"unknown processor {self.processor!r}; one of {PROCESSORS}")
        if self.processor != "Delimited" and (self.delimiter is not None or not self.header):
            raise OptionError("--delimiter and --no-header apply to -p Delimited only")
        if self.processor != "FileDistribution" and (
                self.step is not None or self.max_size is not None or self.plot is not None):
            raise OptionError("--step, --max and --plot apply to -p FileDistribution only")
        if self.delimiter == "":
            raise OptionError("--delimiter must not be empty")

    @property
    def separator(self) -> str:
        """The Delimited field separator; ``\\t`` as typed in a shell means a tab."""
        if self.delimiter is None or self.delimiter == "\\t":
            return "\t"
        return self.delimiter


def md5_source(image: str, md5_hex: str | None) -> tuple[str | None, str]:
    """The digest to check the image against (``--md5``, else the ``.md5`` sidecar if there is
    one, else None) and where it comes from (the sidecar path when there is none)."""
    if md5_hex is not None:
        if not _MD5_HEX.fullmatch(md5_hex):
            raise OptionError(f"--md5 must be 32 hex digits, not {md5_hex!r}")
        return md5_hex.lower(), "--md5"
    sidecar = Path(image + MD5_SUFFIX)
    if sidecar.is_file():
        return parse_md5_sidecar(sidecar.read_bytes(), path=sidecar), str(sidecar)
    return None, str(sidecar)


def expected_md5(image: str, md5_hex: str | None) -> tuple[str | None, str]:
    """The digest to check the image against and a sentence saying where it came from."""
    digest, source = md5_source(image, md5_hex)
    if digest is None:
        return None, f"MD5 not verified: no {source} and no --md5"
    return digest, f"MD5 verified against {source}"


# ------------------------------------------------------------------------------------- driver

@dataclass
class OivResult:
    image: str
    meta: ImageMeta
    md5_note: str
    inodes: int = 0
    written: int = 0
    orphans: int = 0
    kept: int = 0                 # inodes only snapshots keep: in no live directory
    orphan_examples: list[tuple[int, int, str]] = field(default_factory=list)
    distribution: FileDistribution | None = None

    def count(self, batch: pa.RecordBatch, paths: list[str | None]) -> None:
        self.inodes += batch.num_rows
        missing = [i for i, p in enumerate(paths) if p is None]
        kept = sum(1 for p in paths if p == KEPT)
        self.written += batch.num_rows - len(missing) - kept
        self.orphans += len(missing)
        self.kept += kept
        for i in missing[:ORPHAN_EXAMPLES - len(self.orphan_examples)]:
            self.orphan_examples.append((batch.column("id")[i].as_py(),
                                         batch.column("parent_id")[i].as_py(),
                                         batch.column("name")[i].as_py()))

    def check(self) -> None:
        """Raise ImageCorruptError if inodes were left out because their parent is unknown."""
        if self.orphans:
            first = ", ".join(f"id {i} parent_id {p} name {n!r}"
                              for i, p, n in self.orphan_examples)
            raise ImageCorruptError(
                f"{self.orphans} inodes left out: their parent does not resolve to a directory "
                f"under the root (first: {first}); run 'nnlite fsimage verify'", path=self.image)


def run(image: str, output: str, options: OivOptions) -> OivResult:
    """Render ``image`` into the file ``output`` (``-``: standard output). The footer and the
    digest are checked before the output is created."""
    image = os.fspath(image)
    options.check()
    digest, note = expected_md5(image, options.md5)
    meta = read_meta(image)
    result = OivResult(image, meta, note)
    if options.processor == "FileDistribution":
        _distribution(image, output, options, digest, result)
        return result
    index = DirectoryIndex.scan(image, batch_size=options.batch_size, expected_md5=digest)
    log.info("indexed %d directories of %d inodes", len(index), meta.inode_count)
    with open_text_output(output) as out:
        _render(image, WRITERS[options.processor](out, options), index, options, result)
    return result


def _render(image: str, writer, index: DirectoryIndex, options: OivOptions,
            result: OivResult) -> None:
    writer.begin(result.meta)
    batches = iter_batches(image, batch_size=options.batch_size, columns=writer.columns)
    with Progress(result.meta.inode_count, what="inodes",
                  label=f"oiv {options.processor}") as bar:
        for batch in batches:
            paths = index.paths(batch)
            result.count(batch, paths)
            writer.write(batch, paths)
            bar.advance(batch.num_rows)
    writer.end()


def _distribution(image: str, output: str, options: OivOptions, digest: str | None,
                  result: OivResult) -> None:
    if options.plot:
        load_pyplot()
    histogram = FileDistribution(
        step=DEFAULT_STEP if options.step is None else options.step,
        max_size=DEFAULT_MAX if options.max_size is None else options.max_size)
    batches = iter_batches(image, batch_size=options.batch_size, columns=DISTRIBUTION_COLUMNS,
                             expected_md5=digest)
    with Progress(result.meta.inode_count, what="inodes", label="oiv FileDistribution") as bar:
        for batch in batches:
            histogram.add(batch)
            bar.advance(batch.num_rows)
    with open_text_output(output) as out:
        out.write(histogram.render())
    result.inodes = result.written = histogram.inodes
    result.distribution = histogram
    if options.plot:
        plot(histogram, options.plot, f"File sizes in {os.path.basename(image)} "
                                      f"(txid {result.meta.last_txid})")
