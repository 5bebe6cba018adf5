"""The namenode's status page: ``GET /`` (and ``/index.html``), one self-contained HTML page.

What a person checking on the service wants at a glance: health, safe mode, the txids, the
checkpoint (how old, whether one is pending), every name dir and the data dir with its health,
the edits size per dir, the namespace counts, uptime and version. No external assets (inline
CSS, no script); the page reloads itself every ``REFRESH`` seconds. While the namespace loads,
a short page (503) says so and reloads sooner.

Health: *OK*; *degraded* when a name dir failed but another one still takes every write;
*refusing writes* when the journal has no healthy name dir left (or failed).

In an HA set the page says the namenode's state, and a standby's links to the active's page;
a standby shows no catalog (it serves no read: the active does).

The facts are gathered in a worker thread (``FSNamesystem.report`` takes the namesystem lock,
which a SAVENAMESPACE holds for as long as it writes the image), then rendered; every value
goes through ``html.escape``. The block count is the namespace's live one (the blocks its files
refer to, as HDFS's "blocks total"), taken in the same report as the file count.
"""

from __future__ import annotations

import asyncio
import configparser
import html
import importlib.metadata
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nnlite.namenode.http.wire import Request, Response
from nnlite.namenode.storage.namedir import EDITS_NEW

REFRESH = 10              # seconds between reloads of the status page
LOADING_REFRESH = 2       # ... of the loading page
CONTENT_TYPE = "text/html; charset=utf-8"
HEADERS = (("Cache-Control", "no-store"),)


def version() -> str:
    """``nnlite-<version>`` (as /jmx's SoftwareVersion): the installed distribution's, else
    (running from a source checkout) the one in setup.cfg."""
    try:
        return "nnlite-" + importlib.metadata.version("nnlite")
    except importlib.metadata.PackageNotFoundError:
        setup = configparser.ConfigParser()
        setup.read(Path(__file__).resolve().parents[2] / "setup.cfg")
        return "nnlite-" + setup.get("metadata", "version", fallback="unknown")


# ---------------------------------------------------------------------- the facts

@dataclass
class DataDir:
    """The block store's directory, as the page shows it."""
    path: str
    healthy: bool
    problem: str | None = None


@dataclass
class Snapshot:
    report: dict                        # FSNamesystem.report()
    uptime: float                       # seconds since the process started serving
    now: float
    writable: bool = True               # the journal still has a healthy name dir
    checkpoints: int | None = None      # checkpoints completed since start (None: unknown)
    data_dirs: list[DataDir] = field(default_factory=list)
    catalog: list[dict] | None = None   # the catalog's world-readable rows (None: no catalog)
    hidden_checkpoints: int = 0         # ... and how many more it holds
    ha: dict | None = None              # HAController.report() and the active's address
    rpc_address: str | None = None      # host:port of Hadoop IPC (hdfs://), when served


def collect(app: Any) -> Snapshot:
    """Everything the page shows (blocking: run it in a worker thread)."""
    snap = Snapshot(report=app.fs.report(), uptime=time.time() - app.started, now=time.time(),
                    writable=app.fs.journal_writable,
                    rpc_address=getattr(app, "rpc_address", None))
    if getattr(app, "transfer", None) is not None:
        snap.checkpoints = app.fs.image.metrics.checkpoints
    store = _block_store(app)
    if store is not None:       # the hook: a namenode without a data path shows name dirs only
        snap.data_dirs.append(_data_dir(store.root))
    ha = getattr(app, "ha", None)
    if ha is not None:          # in an HA set: a standby serves no read, the catalog's neither
        snap.ha = {**ha.report(), "activeHttp": (ha.state.active or {}).get("http"),
                   "scheme": ha.scheme}
    catalog = getattr(app, "catalog", None)
    if catalog is not None and (snap.ha is None or snap.ha["state"] == "active"):
        snap.catalog, snap.hidden_checkpoints = catalog.overview()
    return snap


def _block_store(app: Any) -> Any:
    return getattr(getattr(app, "data", None), "store", None)


def _data_dir(root: Path) -> DataDir:
    if not root.is_dir():
        return DataDir(str(root), False, "missing")
    if not os.access(root, os.W_OK | os.X_OK):
        return DataDir(str(root), False, "not writable")
    return DataDir(str(root), True)


def health(report: dict, writable: bool, ha: dict | None = None) -> tuple[str, str, str]:
    """``(css class, headline, explanation)``; an HA namenode that says it is unhealthy
    (``HAController.health``: it cannot apply the shared journal, or lags past the bound) is
    shown in red, as a failed name dir set is."""
    failed = [d for d in report["nameDirs"] if not d["healthy"]]
    if ha is not None and ha.get("healthy") is False:
        return ("bad", "unhealthy", str(ha.get("health")))
    if not writable:
        return ("bad", "refusing writes",
                "No healthy name directory is left: nothing can be made durable. Fix the "
                "disks and restart the namenode.")
    if report.get("resourcesLow"):
        return ("warn", "low on disk space",
                f"Safe mode: writes are refused while {report['resourcesLow']}. It ends by "
                "itself once there is space again.")
    if failed:
        return ("warn", "degraded",
                f"{len(failed)} of {len(report['nameDirs'])} name directories failed; writes "
                "go to the others.")
    return ("ok", "OK", "Every name directory is healthy.")


# ---------------------------------------------------------------------- the handler

async def page(app: Any, req: Request) -> Response:
    """The route: GET and HEAD only."""
    if req.method not in ("GET", "HEAD"):
        return Response(405, f"{req.method} is not allowed here; use GET\n".encode(),
                        "text/plain; charset=utf-8", (("Allow", "GET, HEAD"),))
    if app.fs is None:
        return Response(503, loading_page().encode(), CONTENT_TYPE,
                        (*HEADERS, ("Retry-After", str(LOADING_REFRESH))))
    snap = await asyncio.get_running_loop().run_in_executor(None, collect, app)
    return Response(200, render(snap).encode(), CONTENT_TYPE, HEADERS)


# ---------------------------------------------------------------------- rendering

# Cards must never overflow, whatever the width: each dt/dd pair is its own wrapping flex line,
# so a value too wide for the card moves under its label and then wraps inside itself. (A
# shared two-column grid sized every row by the widest label plus the widest value: the
# checkpoint card overflowed at 1200 px.) ``min(250px, 100%)`` lets one column shrink below
# 250 px on a phone. tests/namenode/http/test_status_page.py measures this in Chromium.
CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
  margin:0;background:#f3f5f8;color:#1d2430}
header{background:#1f3a5f;color:#fff;padding:14px max(28px,calc((100% - 1160px) / 2));
  display:flex;flex-wrap:wrap;
  align-items:center;gap:6px 18px}
header h1{font-size:20px;margin:0;font-weight:600}
header .meta{margin-left:auto;font-size:13px;opacity:.85}
main{padding:20px 28px;max-width:1160px;margin:0 auto}
.badge{display:inline-block;padding:3px 12px;border-radius:12px;font-weight:700;font-size:14px}
.ok{background:#d7f2df;color:#13582a}.warn{background:#fff0c2;color:#7a5200}
.bad{background:#fbd5d5;color:#8b1111}.off{background:#e6e9ee;color:#3c4656}
.banner{padding:10px 16px;border-radius:6px;margin-bottom:18px}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(250px,100%),1fr));gap:16px}
section{background:#fff;border:1px solid #dde2ea;border-radius:8px;padding:12px 16px;
  min-width:0}
h2{font-size:13px;text-transform:uppercase;letter-spacing:.06em;color:#5a6678;margin:0 0 8px}
dl{margin:0}
dl>div{display:flex;flex-wrap:wrap;justify-content:space-between;column-gap:14px;
  padding:2px 0}
dt{color:#5a6678}
dd{margin:0 0 0 auto;min-width:0;font-weight:600;font-variant-numeric:tabular-nums;
  text-align:right;overflow-wrap:anywhere}
table{width:100%;border-collapse:collapse;font-size:14px}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #e8ecf1}
td .badge{overflow-wrap:anywhere}th{color:#5a6678;font-weight:600;white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.path{font-family:ui-monospace,"DejaVu Sans Mono",monospace;word-break:break-all}
.wide{margin-top:16px}footer{color:#6b7686;font-size:12px;margin-top:16px}
a{color:#1f5fa8}
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _document(title: str, refresh: int, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="refresh" content="{refresh}">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_e(title)}</title><style>{CSS}</style></head>\n<body>{body}</body>"
            "</html>\n")


def loading_page() -> str:
    return _document("nnlite namenode: loading", LOADING_REFRESH,
                     "<header><h1>nnlite NameNode</h1></header><main>"
                     '<p class="banner warn" id="loading"><strong>The namespace is loading.'
                     "</strong> The namenode is reading its image and edits and refuses "
                     "requests (safe mode) until it is done. This page reloads by itself."
                     "</p></main>")


def render(snap: Snapshot) -> str:
    r = snap.report
    css, headline, why = health(r, snap.writable, snap.ha)
    header = (f"<header><h1>nnlite NameNode</h1>"
              f'<span class="badge {css}" id="health">{_e(headline)}</span>'
              f'<span class="meta">{_e(version())} &middot; up {_e(duration(snap.uptime))}'
              "</span></header>")
    banner = f'<p class="banner {css}" id="health-detail">{_e(why)}</p>'
    cards = "".join((_overview(snap, headline), _ha(snap), _transactions(r), _checkpoint(snap),
                     _namespace(snap)))
    footer = (f"<footer>Generated {_e(_clock(snap.now))} &middot; reloads every {REFRESH} s"
              ' &middot; <a href="/jmx">/jmx</a> &middot; <a href="/metrics">/metrics</a>'
              "</footer>")
    body = (f'{header}<main>{banner}<div class="grid">{cards}</div>'
            f"{_storage(snap)}{_catalog(snap)}{footer}</main>")
    return _document(f"nnlite namenode: {headline}", REFRESH, body)


def _card(title: str, rows: list[tuple[str, str, object]]) -> str:
    """A titled list of ``(id, label, value)`` rows."""
    items = "".join(f'<div><dt>{_e(label)}</dt><dd id="{_e(ident)}">{_e(value)}</dd></div>'
                    for ident, label, value in rows)
    return f"<section><h2>{_e(title)}</h2><dl>{items}</dl></section>"


def _overview(snap: Snapshot, headline: str) -> str:
    r = snap.report
    safe = ("ON (disk space low: writes refused)" if r.get("resourcesLow") else
            "ON (writes refused)" if r["safeMode"] else "off")
    return _card("Overview", [
        ("health-text", "Health", headline), ("safe-mode", "Safe mode", safe),
        ("uptime", "Uptime", duration(snap.uptime)), ("version", "Version", version()),
        ("namespace-id", "Namespace id", r["namespaceId"]),
        ("rpc-address", "hdfs://", snap.rpc_address or "not served")])


def _ha(snap: Snapshot) -> str:
    """An HA namenode's state, and a link to the active one's page from a standby (whose
    page shows no catalog: the active serves it)."""
    ha = snap.ha
    if ha is None:
        return ""
    active, where = ha.get("active"), ha.get("activeHttp")
    if ha["state"] == "active":
        leader = "this namenode"
    elif active and where:
        scheme = ha.get("scheme", "http")       # https in an HTTPS_ONLY set
        leader = (f'<a id="ha-active-link" href="{scheme}://{_e(where)}/">{_e(active)} '
                  f"({_e(where)})</a>")
    else:
        leader = "none now (a failover is under way)"
    rows = (("ha-state", "State", _e(ha["state"])), ("ha-id", "Namenode id",
                                                      _e(ha.get("namenodeId"))),
            ("ha-active", "Active namenode", leader), ("ha-epoch", "Epoch", _e(ha["epoch"])),
            ("ha-health", "Health", _e("healthy" if ha.get("healthy", True)
                                       else ha.get("health"))))
    items = "".join(f'<div><dt>{_e(label)}</dt><dd id="{ident}">{value}</dd></div>'
                    for ident, label, value in rows)
    return f"<section><h2>High availability</h2><dl>{items}</dl></section>"


def _transactions(r: dict) -> str:
    return _card("Transactions", [
        ("txid-written", "Last written txid", r["lastWrittenTxid"]),
        ("txid-synced", "Last synced txid", r["lastSyncedTxid"]),
        ("txid-checkpoint", "Last checkpoint txid", r["lastCheckpointTxid"]),
        ("txns-since-checkpoint", "Since checkpoint", r["transactionsSinceLastCheckpoint"]),
        ("segment", "Open segment", r["segment"])])


def _checkpoint(snap: Snapshot) -> str:
    r = snap.report
    when = r["lastCheckpointTime"] / 1000
    pending = "yes (edits rolled to edits.new)" if r["segment"] == EDITS_NEW else "no"
    done = "n/a" if snap.checkpoints is None else snap.checkpoints
    return _card("Checkpoint", [
        ("checkpoint-age", "Last checkpoint", ago(snap.now - when)),
        ("checkpoint-time", "At", _clock(when, zone=False)),
        ("checkpoint-pending", "Pending", pending),
        ("checkpoints-done", "Done since start", done)])


def _namespace(snap: Snapshot) -> str:
    r = snap.report
    return _card("Namespace", [
        ("files", "Files", f"{r['files']:,}"), ("directories", "Directories",
                                                f"{r['directories']:,}"),
        ("blocks", "Blocks", f"{r['blocks']:,}")])


def _storage(snap: Snapshot) -> str:
    edits = snap.report["editsSize"]
    rows = []
    for d in snap.report["nameDirs"]:
        size = edits.get(d["path"])
        state = ("ok", "healthy") if d["healthy"] else ("bad", f"failed: {d['failure']}")
        rows.append(_dir_row("name (image + edits)", d["path"], state,
                             "—" if size is None else size_text(size)))
    for d in snap.data_dirs:
        state = ("ok", "healthy") if d.healthy else ("bad", d.problem or "failed")
        rows.append(_dir_row("data (blocks)", d.path, state, ""))
    head = ("<tr><th>Kind</th><th>Directory</th><th>Status</th>"
            '<th style="text-align:right">Edits size</th></tr>')
    return (f'<section class="wide"><h2>Storage directories</h2><table id="dirs">{head}'
            f'{"".join(rows)}</table></section>')


CATALOG_ROWS = 50
HEALTH_CSS = {"ok": "ok", "writing": "ok", "empty": "warn", "degraded": "warn",
              "abandoned": "warn", "broken": "bad"}


def _catalog(snap: Snapshot) -> str:
    """The Spark and Flink checkpoints the catalog finds that anyone may read (the page has no
    identity): the unhealthy first, at most CATALOG_ROWS; the others only counted."""
    if snap.catalog is None:
        if snap.ha is not None and snap.ha["state"] != "active":
            return ('<section class="wide"><h2>Checkpoints</h2><p class="meta" '
                    'id="catalog-on-active">The active namenode serves the catalog.</p>'
                    "</section>")
        return ""
    rows = sorted(snap.catalog, key=lambda r: (HEALTH_CSS.get(r["health"], "bad") == "ok",
                                               r["path"]))
    shown = "".join(_checkpoint_row(r) for r in rows[:CATALOG_ROWS])
    more = len(rows) - CATALOG_ROWS
    note = (f'<p class="meta">{more:,} more: <code>nnlite catalog ls</code> lists them all</p>'
            if more > 0 else "")
    if snap.hidden_checkpoints:
        note += (f'<p class="meta" id="catalog-hidden">{snap.hidden_checkpoints:,} more that '
                 f"only their owners may read: <code>nnlite catalog ls</code> as them</p>")
    if not rows:
        shown = ('<tr><td colspan="7">No checkpoint that everyone may read.</td></tr>'
                 if snap.hidden_checkpoints else
                 '<tr><td colspan="7">No checkpoints yet.</td></tr>')
    head = ("<tr><th>Checkpoint</th><th>Kind</th><th>Last batch</th><th>Health</th>"
            '<th style="text-align:right">Files</th><th style="text-align:right">Size</th>'
            "<th>Updated</th></tr>")
    return (f'<section class="wide"><h2>Checkpoints ({len(rows):,})</h2>'
            f'<table id="catalog">{head}{shown}</table>{note}</section>')


def _checkpoint_row(r: dict) -> str:
    last = "—" if r["lastBatch"] is None else r["lastBatch"]
    if r["restorableBatch"] is not None and r["restorableBatch"] != r["lastBatch"]:
        last = f"{last} (restores {r['restorableBatch']})"
    css = HEALTH_CSS.get(r["health"], "bad")
    return (f'<tr class="checkpoint"><td class="path">{_e(r["path"])}</td><td>{_e(r["kind"])}'
            f'</td><td>{_e(last)}</td><td><span class="badge {css}">{_e(r["health"])}</span>'
            f'</td><td class="num">{r["files"]:,}</td><td class="num">'
            f'{_e(size_text(r["bytes"]))}</td><td>{_e(_clock(r["lastUpdate"] / 1000, zone=False))}'
            "</td></tr>")


def _dir_row(kind: str, path: str, state: tuple[str, str], size: str) -> str:
    css, text = state
    return (f'<tr class="dir"><td>{_e(kind)}</td><td class="path">{_e(path)}</td>'
            f'<td><span class="badge {css}">{_e(text)}</span></td>'
            f'<td class="num">{_e(size)}</td></tr>')


# ---------------------------------------------------------------------- human units

def duration(seconds: float) -> str:
    """``42 s``, ``3 min``, ``2 h 5 min``, ``4 d 3 h``."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min"
    if s < 86400:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 86400} d {s % 86400 // 3600} h"


def ago(seconds: float) -> str:
    return "just now" if seconds < 1 else f"{duration(seconds)} ago"


def size_text(size: int) -> str:
    """``512 B``, ``1.5 KiB``, ``3.2 MiB`` ..."""
    if size < 1024:
        return f"{size} B"
    value, unit = size / 1024, "KiB"
    for bigger in ("MiB", "GiB", "TiB"):
        if value < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{value:.1f} {unit}"


def _clock(epoch: float, zone: bool = True) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S" + (" %Z" if zone else ""), time.localtime(epoch))
