"""Presenting an ``Analysis``: a terminal summary, Parquet + CSV tables, PNG charts and one
self-contained HTML report.

``write(analysis, out)`` creates ``out`` and writes, for each table of the analysis and for
``totals`` (one row): ``<name>.parquet`` and ``<name>.csv``; the charts as ``charts/<name>.png``;
and ``report.html``, which embeds the same PNGs as data URIs and every table, so the page needs
no other file (and no network). Charts use matplotlib's Agg canvas directly (no pyplot state).
"""

from __future__ import annotations

import base64
import html
import io
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from nnlite.analytics.analyze import Analysis
from nnlite.catalog.layout import KIND_NAMES

BYTE_COLUMNS = {"bytes", "raw_bytes", "small_bytes", "length", "checkpoint_bytes"}
TIME_COLUMNS = {"mtime", "atime", "last_touched", "last_modified"}
TITLES = {
    "size_distribution": "File size distribution",
    "small_files_by_dir": "Directories with the most small files",
    "usage_by_owner": "Space and files per owner",
    "usage_by_top_dir": "Space and files per top-level directory",
    "replication": "Replication histogram",
    "untouched_age": "Data by time since last access or modification",
    "oldest_files": "Oldest untouched files",
    "checkpoints": "Spark and Flink checkpoints (as nnlite catalog ls lists them)",
}
SUMMARY_ROWS = 10


# ------------------------------------------------------------------------------ formatting

UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def human_bytes(n: int | None) -> str:
    if n is None:
        return ""
    value = float(n)
    for unit in UNITS:
        if abs(value) < 1024 or unit == UNITS[-1]:
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def in_unit(values: list[int]) -> tuple[list[float], str]:
    """``values`` (bytes) in the largest binary unit the largest of them reaches, and that
    unit: a chart of kilobytes reads KiB, not a fraction of a GiB."""
    top = max((abs(v) for v in values), default=0)
    power = 0
    while power + 1 < len(UNITS) and top >= 1024 ** (power + 1):
        power += 1
    return [v / 1024 ** power for v in values], UNITS[power]


def utc(ms: int | None) -> str:
    if ms is None:
        return ""
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(ms / 1000))


def cell(column: str, value) -> str:
    if value is None:
        return ""
    if column in BYTE_COLUMNS:
        return human_bytes(value)
    if column in TIME_COLUMNS:
        return utc(value) if value > 0 else "-"      # atime 0: never recorded
    if column == "kind":
        return KIND_NAMES.get(value, value)
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def shown_columns(table: pa.Table) -> list[str]:
    return [c for c in table.column_names if c != "bucket"]


def text_table(table: pa.Table, limit: int = SUMMARY_ROWS) -> str:
    columns = shown_columns(table)
    rows = [[cell(c, v) for c, v in zip(columns, (r[c] for c in columns), strict=True)]
            for r in table.slice(0, limit).to_pylist()]
    widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(columns)]
    numeric = [not pa.types.is_string(table.schema.field(c).type) for c in columns]
    fmt = lambda vals: "  ".join(v.rjust(w) if n else v.ljust(w)  # noqa: E731
                                 for v, w, n in zip(vals, widths, numeric, strict=True)).rstrip()
    lines = [fmt(columns), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]
    if table.num_rows > limit:
        lines.append(f"... {table.num_rows - limit} more rows")
    return "\n".join("  " + line for line in lines)


def totals_table(a: Analysis) -> pa.Table:
    return pa.table({k: [v] for k, v in a.totals.items()})


def header_lines(a: Analysis) -> list[str]:
    t = a.totals
    return [
        f"fsimage {a.image}: namespace {a.meta.namespace_id}, txid {a.meta.last_txid}, "
        f"{a.meta.inode_count:,} inodes, analysed in {a.seconds:.1f} s",
        f"as of {utc(a.as_of_ms)} UTC; small files are < {human_bytes(a.small_bytes)}",
        f"{t['files']:,} files, {t['dirs']:,} directories (max depth {t['max_depth']}), "
        f"{human_bytes(t['bytes'])} ({human_bytes(t['raw_bytes'])} with replication)",
        f"{t['small_files']:,} small files holding {human_bytes(t['small_bytes'])}; "
        f"{t['under_construction']:,} files under construction",
        f"{t['checkpoints']:,} checkpoints holding {human_bytes(t['checkpoint_bytes'])}"
        f"{_kinds(a.tables.get('checkpoints'))}",
    ]


def _kinds(table: pa.Table | None) -> str:
    """`` (3 Spark Structured Streaming, 1 Flink job)``: how many of each kind, most first."""
    counts = Counter(table["kind"].to_pylist()) if table is not None else Counter()
    return f" ({', '.join(f'{n:,} {KIND_NAMES.get(k, k)}' for k, n in counts.most_common())})" \
        if counts else ""


def summary(a: Analysis) -> str:
    parts = ["\n".join(header_lines(a))]
    for name, table in a.tables.items():
        parts.append(f"{TITLES[name]}:\n{text_table(table)}")
    return "\n\n".join(parts)


# ------------------------------------------------------------------------------ charts

def _figure(width: float = 7.5, height: float = 3.6):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _short(label: str, width: int = 48) -> str:
    return label if len(label) <= width else "..." + label[-(width - 3):]


def _bars(labels, values, title: str, ylabel: str, horizontal: bool = False) -> bytes:
    labels = [_short(str(label)) for label in labels]
    fig = _figure(7.5, max(3.6, 0.32 * len(labels) + 1) if horizontal else 3.6)
    ax = fig.add_subplot(1, 1, 1)
    if horizontal:
        ax.barh(range(len(labels)), values, color="#4c72b0")
        ax.set_yticks(range(len(labels)), labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(ylabel)
        ax.ticklabel_format(axis="x", style="plain", useOffset=False)
    else:
        ax.bar(range(len(labels)), values, color="#4c72b0")
        ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel(ylabel)
        ax.ticklabel_format(axis="y", style="plain", useOffset=False)
    ax.set_title(title)
    return _png(fig)


def _size_chart(table: pa.Table) -> bytes:
    fig = _figure()
    labels = table["label"].to_pylist()
    for i, column in enumerate(("files", "bytes")):
        ax = fig.add_subplot(1, 2, i + 1)
        values, unit = table[column].to_pylist(), "files"
        if column == "bytes":
            values, unit = in_unit(values)
        ax.bar(range(len(labels)), values, color="#4c72b0" if i == 0 else "#dd8452")
        ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right", fontsize=7)
        ax.set_title(f"{column} per size bucket", fontsize=10)
        ax.set_ylabel(unit)
        ax.ticklabel_format(axis="y", style="plain", useOffset=False)
    return _png(fig)


def _space_bars(table: pa.Table, labels: str, title: str, **kw) -> bytes:
    values, unit = in_unit(table["bytes"].to_pylist())
    return _bars(table[labels].to_pylist(), values, title, unit, **kw)


def charts(a: Analysis) -> dict[str, bytes]:
    """PNG bytes per chart name."""
    t = a.tables
    out = {"size_distribution": _size_chart(t["size_distribution"])}
    owners = t["usage_by_owner"].slice(0, a.top)
    out["usage_by_owner"] = _space_bars(owners, "owner", "Space per owner", horizontal=True)
    tops = t["usage_by_top_dir"].slice(0, a.top)
    out["usage_by_top_dir"] = _space_bars(tops, "top_dir", "Space per top-level directory",
                                          horizontal=True)
    rep = t["replication"]
    out["replication"] = _bars([str(r) for r in rep["replication"].to_pylist()],
                               rep["files"].to_pylist(), "Files per replication factor",
                               "files")
    age = t["untouched_age"]
    out["untouched_age"] = _space_bars(age, "label", "Data by time since last touched")
    small = t["small_files_by_dir"]
    if small.num_rows:
        out["small_files_by_dir"] = _bars(small["path"].to_pylist(),
                                          small["small_files"].to_pylist(),
                                          "Small files per directory", "files",
                                          horizontal=True)
    ckpt = t["checkpoints"].slice(0, a.top)
    if ckpt.num_rows:
        out["checkpoints"] = _space_bars(ckpt, "path", "Space per checkpoint (Spark and Flink)",
                                         horizontal=True)
    return out


# ------------------------------------------------------------------------------ files

def write_tables(a: Analysis, out: Path) -> list[Path]:
    written = []
    for name, table in {"totals": totals_table(a), **a.tables}.items():
        pq.write_table(table, out / f"{name}.parquet")
        pcsv.write_csv(table, out / f"{name}.csv")
        written += [out / f"{name}.parquet", out / f"{name}.csv"]
    return written


def _html_table(table: pa.Table) -> str:
    columns = shown_columns(table)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell(c, row[c]))}</td>" for c in columns) + "</tr>"
        for row in table.to_pylist())
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


STYLE = """body{font-family:sans-serif;margin:2em;color:#222;max-width:1100px}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
img{max-width:100%;display:block;margin:.5em 0}ul{line-height:1.5}"""


def html_report(a: Analysis, pngs: dict[str, bytes]) -> str:
    items = "".join(f"<li>{html.escape(line)}</li>" for line in header_lines(a))
    sections = []
    for name, table in a.tables.items():
        img = ""
        if name in pngs:
            data = base64.b64encode(pngs[name]).decode()
            img = f'<img alt="{html.escape(TITLES[name])}" src="data:image/png;base64,{data}">'
        sections.append(f"<h2>{html.escape(TITLES[name])}</h2>{img}{_html_table(table)}")
    return (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>nnlite fsimage report"
            f"</title><style>{STYLE}</style></head><body><h1>nnlite fsimage report</h1>"
            f"<ul>{items}</ul>{''.join(sections)}</body></html>\n")


def write(a: Analysis, out: str | Path) -> list[Path]:
    """Write every table, chart and the HTML report into ``out``; returns the paths."""
    out = Path(out)
    (out / "charts").mkdir(parents=True, exist_ok=True)
    written = write_tables(a, out)
    pngs = charts(a)
    for name, data in pngs.items():
        (out / "charts" / f"{name}.png").write_bytes(data)
        written.append(out / "charts" / f"{name}.png")
    (out / "report.html").write_text(html_report(a, pngs))
    written.append(out / "report.html")
    return written
