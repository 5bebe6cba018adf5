"""``oiv -p FileDistribution``: a histogram of file sizes, as Hadoop's FileDistributionCalculator.

The range ``[0, max_size]`` is cut into buckets of ``step`` bytes. Bucket 0 counts empty files;
bucket ``i >= 1`` counts files with ``(i-1)*step < size <= i*step``; the last bucket
(``max_size // step``) also counts every file above ``max_size``. The table prints each non-empty
bucket as its upper bound ``i*step`` and its number of files, then Hadoop's totals (``totalSpace``
is the sum of size times replication).

Each record batch is reduced with pyarrow compute (no Python loop per file), so memory holds one
batch and one count per non-empty bucket.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from nnlite.formats.fsimage.layout import TYPE_DIRECTORY, TYPE_FILE
from nnlite.tools.errors import MissingDependencyError, OptionError

DEFAULT_STEP = 2 << 20          # 2 MiB
DEFAULT_MAX = 128 << 30         # 128 GiB
LIMIT = 1 << 62                 # keeps ``size + step`` inside int64
COLUMNS = ("type", "length", "replication", "blocks")
_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


@dataclass
class FileDistribution:
    step: int = DEFAULT_STEP
    max_size: int = DEFAULT_MAX
    counts: dict[int, int] = field(default_factory=dict)
    inodes: int = 0
    files: int = 0
    directories: int = 0
    blocks: int = 0
    space: int = 0
    max_file_size: int = 0

    def __post_init__(self) -> None:
        if not 0 < self.step <= LIMIT:
            raise OptionError(f"--step must be between 1 and {LIMIT}, not {self.step}")
        if not self.step <= self.max_size <= LIMIT:
            raise OptionError(f"--max must be between --step ({self.step}) and {LIMIT}, "
                              f"not {self.max_size}")

    @property
    def last_bucket(self) -> int:
        return self.max_size // self.step

    def add(self, batch: pa.RecordBatch) -> None:
        types = batch.column("type")
        self.inodes += batch.num_rows
        self.directories += pc.sum(pc.equal(types, TYPE_DIRECTORY)).as_py() or 0
        files = batch.filter(pc.equal(types, TYPE_FILE))
        if files.num_rows:
            self._add_files(files)

    def _add_files(self, files: pa.RecordBatch) -> None:
        lengths = files.column("length")
        replication = pc.cast(files.column("replication"), pa.int64())
        self.files += files.num_rows
        self.max_file_size = max(self.max_file_size, pc.max(lengths).as_py())
        self.blocks += pc.sum(pc.list_value_length(files.column("blocks"))).as_py()
        self.space += pc.sum(pc.multiply_checked(lengths, replication)).as_py()
        clamped = pc.min_element_wise(pc.max_element_wise(lengths, 0), self.max_size + 1)
        ceil = pc.divide(pc.add(clamped, self.step - 1), self.step)
        buckets = pc.min_element_wise(ceil, self.last_bucket)
        for pair in pc.value_counts(buckets).to_pylist():
            bucket = pair["values"]
            self.counts[bucket] = self.counts.get(bucket, 0) + pair["counts"]

    def rows(self) -> list[tuple[int, int]]:
        """``(upper bound in bytes, files)`` for every non-empty bucket, smallest first."""
        return [(bucket * self.step, self.counts[bucket]) for bucket in sorted(self.counts)]

    def render(self) -> str:
        lines = [f"Processed {self.inodes} inodes.", "Size\tNumFiles"]
        lines += [f"{size}\t{count}" for size, count in self.rows()]
        lines += [f"totalFiles = {self.files}", f"totalDirectories = {self.directories}",
                  f"totalBlocks = {self.blocks}", f"totalSpace = {self.space}",
                  f"maxFileSize = {self.max_file_size}"]
        return "\n".join(lines) + "\n"

    def labels(self) -> list[str]:
        """Human-readable bucket labels for a chart: ``0``, ``<= 2 MiB``, ..., ``> 128 GiB``."""
        out = []
        for bucket in sorted(self.counts):
            if bucket == 0:
                out.append("0")
            elif bucket == self.last_bucket:
                out.append(f"> {human(self.step * (bucket - 1))}")
            else:
                out.append(f"<= {human(self.step * bucket)}")
        return out


def human(size: int) -> str:
    value, unit = float(size), 0
    while value >= 1024 and unit < len(_UNITS) - 1:
        value /= 1024
        unit += 1
    text = f"{value:.1f}".rstrip("0").rstrip(".")
    return f"{text} {_UNITS[unit]}"


def load_pyplot():
    """matplotlib's pyplot on the file-only Agg back-end, imported lazily (only ``--plot`` needs
    it). Called before the scan, so a missing package costs no time."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError as exc:
        raise MissingDependencyError(
            "--plot needs matplotlib, in nnlite's plot extra: pip install 'nnlite[plot]'") from exc
    return pyplot


def plot(distribution: FileDistribution, path: str, title: str) -> None:
    """Draw the histogram as a PNG bar chart: one bar per non-empty bucket."""
    pyplot = load_pyplot()
    labels = distribution.labels()
    counts = [count for _, count in distribution.rows()]
    figure, axes = pyplot.subplots(figsize=(max(6.0, 0.35 * len(labels) + 2), 4.5))
    try:
        axes.bar(range(len(counts)), counts, color="#4878a8")
        axes.set_xticks(range(len(labels)), labels, rotation=60, ha="right", fontsize=8)
        axes.set_xlabel(f"file size (buckets of {human(distribution.step)})")
        axes.set_ylabel("files")
        axes.set_title(title)
        figure.tight_layout()
        figure.savefig(path, format="png", dpi=100)
    finally:
        pyplot.close(figure)
