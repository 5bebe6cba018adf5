"""Text output of ``nnlite dfs`` and ``dfsadmin``, laid out as Hadoop's ``hdfs dfs`` prints it.

* ``ls``: ``drwxr-xr-x   - owner group          0 2026-11-22 14:00 /path`` (Ls.java): the
  replication, owner, group and length columns widen to the widest value seen so far
  (replication at least 3, length at least 10 wide); times are local, to the minute; a ``+``
  after the mode marks an ACL (the FileStatus's ``aclBit``). A directory's listing starts
  with ``Found N items`` (not with ``-R``, not when empty).
* ``stat``: Stat.java's format letters (``%n %b %o %r %u %g %y %Y %x %X %F %a %A``; any
  other character after ``%`` is itself, so ``%%`` is ``%``); ``%y``/``%x`` are UTC, to the
  second; the default format is ``%y``.
* ``du``: columns size, space consumed (with all replicas), path; each as wide as its widest
  value, two spaces apart (FsUsage's TableBuilder).
* ``count``: ContentSummary/QuotaUsage's fixed widths (``%12s %12s %18s`` and, with ``-q``,
  ``%12s %15s %15s %15s`` before them); a quota that is not set shows ``none``/``inf``.
* ``-h`` sizes: Hadoop's TraditionalBinaryPrefix with one decimal (``1.5 K``, ``2 M``, ``0``).
* ``getfacl``, ``lsSnapshottableDir``, ``snapshotDiff``: what GetfaclCommand,
  SnapshottableDirectoryStatus.print and SnapshotDiffReport.toString print, each ending with
  the empty line Hadoop's tools print after it.
* ``--json``: one compact JSON object per line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from decimal import ROUND_HALF_UP, Decimal

from nnlite.client import acls
from nnlite.client.modes import permission_bits
from nnlite.formats.mode import STICKY, mode_string

PREFIXES = "KMGTPE"
LS_MIN_REPL, LS_MIN_LEN = 3, 10
STAT_DEFAULT = "%y"
COUNT_HEADER = f"{'DIR_COUNT':>12} {'FILE_COUNT':>12} {'CONTENT_SIZE':>18} "
QUOTA_HEADER = f"{'QUOTA':>12} {'REM_QUOTA':>15} {'SPACE_QUOTA':>15} {'REM_SPACE_QUOTA':>15} "
DU_HEADER = ("SIZE", "DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS", "FULL_PATH_NAME")


def size(n: int, human: bool = False) -> str:
    """Hadoop's ``long2String(n, "", 1)`` with ``-h``, else the plain number."""
    if not human or abs(n) < 1024:
        return str(n)
    sign, n = ("-", -n) if n < 0 else ("", n)
    i = 0
    while i + 1 < len(PREFIXES) and n >= 1 << (10 * (i + 2)):
        i += 1
    shift = 10 * (i + 1)
    if n & ((1 << shift) - 1) == 0:
        return f"{sign}{n >> shift} {PREFIXES[i]}"
    text = _one_decimal(n / (1 << shift))
    if text.startswith("1024") and i + 1 < len(PREFIXES):
        i, shift = i + 1, shift + 10
        text = _one_decimal(n / (1 << shift))
    return f"{sign}{text} {PREFIXES[i]}"


def _one_decimal(x: float) -> str:
    """Java's ``%.1f``: the shortest decimal of ``x`` rounded half up (2.25 is "2.3")."""
    return str(Decimal(repr(x)).quantize(Decimal("0.1"), ROUND_HALF_UP))


def to_json(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), sort_keys=True)


def _time(ms: int, pattern: str, tz: tzinfo | None) -> str:
    moment = datetime.fromtimestamp(ms / 1000, tz or UTC)
    if tz is None:
        moment = moment.astimezone()          # local time, as the JVM's default zone
    return moment.strftime(pattern)


def is_dir(status: dict) -> bool:
    return status.get("type") == "DIRECTORY"


@dataclass(frozen=True, slots=True)
class Entry:
    """One inode to print: its absolute path and FileStatus."""
    path: str
    status: dict


@dataclass(frozen=True, slots=True)
class Listed:
    """A batch of siblings about to be printed (``header``: say "Found N items" first)."""
    statuses: tuple
    header: bool


def with_path(path: str, obj: dict) -> str:
    """``--json``: the namenode's object with the absolute ``path`` it is about."""
    return to_json({**obj, "path": path})


def entries_json(events: Iterable[Entry | Listed]) -> Iterator[str]:
    return (with_path(e.path, e.status) for e in events if isinstance(e, Entry))


# ------------------------------------------------------------------------------------ ls

class LsFormatter:
    """Ls.java's columns. ``group(statuses)`` widens them for a batch of siblings before
    their ``line``s, as Ls.adjustColumnWidths does; widths never shrink within a command."""

    def __init__(self, *, human: bool = False, tz: tzinfo | None = None):
        self.human = human
        self.tz = tz
        self.repl, self.length, self.owner, self.group_width = LS_MIN_REPL, LS_MIN_LEN, 0, 0

    def group(self, statuses: Iterable[dict]) -> None:
        for st in statuses:
            self.repl = max(self.repl, len(str(st.get("replication", 0))))
            self.length = max(self.length, len(str(st.get("length", 0))))
            self.owner = max(self.owner, len(st.get("owner", "")))
            self.group_width = max(self.group_width, len(st.get("group", "")))

    def line(self, path: str, st: dict) -> str:
        kind = "d" if is_dir(st) else "-"
        perm = mode_string(permission_bits(st)) + ("+" if st.get("aclBit") else " ")
        repl = "-" if is_dir(st) else str(st.get("replication", 0))
        owner = _left(st.get("owner", ""), self.owner)
        group = _left(st.get("group", ""), self.group_width)
        length = size(int(st.get("length", 0)), self.human)
        when = _time(int(st.get("modificationTime", 0)), "%Y-%m-%d %H:%M", self.tz)
        return f"{kind}{perm}{repl:>{self.repl}} {owner}{group}{length:>{self.length}} " \
               f"{when} {path}"


def _left(text: str, width: int) -> str:
    """Java's ``%-<width>s `` for a column seen with a value, else ``%s`` (Ls.java and
    SnapshottableDirectoryStatus.print leave an owner or group column of empty ones out)."""
    return f"{text:<{width}} " if width else text


def ls_lines(events: Iterable[Entry | Listed], *, human: bool = False,
             tz: tzinfo | None = None) -> Iterator[str]:
    columns = LsFormatter(human=human, tz=tz)
    for event in events:
        if isinstance(event, Listed):
            columns.group(event.statuses)
            if event.header:
                yield f"Found {len(event.statuses)} items"
        else:
            yield columns.line(event.path, event.status)


# ------------------------------------------------------------------------------------ stat

def stat_line(fmt: str, path: str, st: dict) -> str:
    """One line of ``-stat FORMAT`` for ``path`` (Stat.java's letters)."""
    out = []
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch != "%" or i + 1 == len(fmt):
            if ch != "%":
                out.append(ch)
            i += 1
            continue
        out.append(_stat_field(fmt[i + 1], path, st))
        i += 2
    return "".join(out)


def _stat_field(letter: str, path: str, st: dict) -> str:
    bits = permission_bits(st)
    fields = {
        "a": lambda: format(bits, "o"),
        "A": lambda: mode_string(bits),
        "b": lambda: str(st.get("length", 0)),
        "F": lambda: "directory" if is_dir(st) else (
            "regular file" if st.get("type") == "FILE" else "symlink"),
        "g": lambda: st.get("group", ""),
        "n": lambda: path.rstrip("/").rsplit("/", 1)[-1],
        "o": lambda: str(st.get("blockSize", 0)),
        "r": lambda: str(st.get("replication", 0)),
        "u": lambda: st.get("owner", ""),
        "x": lambda: _time(int(st.get("accessTime", 0)), "%Y-%m-%d %H:%M:%S", UTC),
        "X": lambda: str(st.get("accessTime", 0)),
        "y": lambda: _time(int(st.get("modificationTime", 0)), "%Y-%m-%d %H:%M:%S",
                           UTC),
        "Y": lambda: str(st.get("modificationTime", 0)),
    }
    render = fields.get(letter)
    return render() if render else letter


# ------------------------------------------------------------------------------- du, count

def du_lines(rows: Iterable[tuple[str, dict]], *, human: bool = False,
             header: bool = False) -> list[str]:
    """``rows`` are (path, ContentSummary); the table is laid out once all are known."""
    table = [DU_HEADER] if header else []
    table += [(size(int(s.get("length", 0)), human), size(int(s.get("spaceConsumed", 0)),
                                                           human), path)
              for path, s in rows]
    if len(table) == (1 if header else 0):
        return []
    widths = [max(len(row[i]) for row in table) for i in (0, 1)]
    return [f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c}" for a, b, c in table]


def count_header(quota: bool) -> str:
    return (QUOTA_HEADER if quota else "") + COUNT_HEADER + "PATHNAME"


def count_line(path: str, summary: dict, *, quota: bool = False, human: bool = False) -> str:
    dirs, files = int(summary.get("directoryCount", 0)), int(summary.get("fileCount", 0))
    text = (f"{size(dirs, human):>12} {size(files, human):>12} "
            f"{size(int(summary.get('length', 0)), human):>18} ")
    if quota:
        text = _quota_columns(summary, dirs + files, human) + text
    return text + path


def _quota_columns(summary: dict, used: int, human: bool) -> str:
    ns_quota, ss_quota = int(summary.get("quota", -1)), int(summary.get("spaceQuota", -1))
    ns, ns_rem, ss, ss_rem = "none", "inf", "none", "inf"
    if ns_quota > 0:
        ns, ns_rem = size(ns_quota, human), size(ns_quota - used, human)
    if ss_quota >= 0:
        consumed = int(summary.get("spaceConsumed", 0))
        ss, ss_rem = size(ss_quota, human), size(ss_quota - consumed, human)
    return f"{ns:>12} {ns_rem:>15} {ss:>15} {ss_rem:>15} "


# ------------------------------------------------------------------------------- xattrs

def xattr_lines(path: str, xattrs: Iterable[dict]) -> Iterator[str]:
    """GetfattrCommand: ``# file: PATH``, then ``name=value`` (``name`` alone if empty)."""
    yield f"# file: {path}"
    for attr in xattrs:
        value = attr.get("value")
        yield attr["name"] if value in (None, "") else f"{attr['name']}={value}"


# ------------------------------------------------------------------------------- ACLs

def getfacl_lines(path: str, acl: dict) -> list[str]:
    """GetfaclCommand for one path and its AclStatus: ``# file``/``# owner``/``# group``
    (``# flags: --t`` for the sticky bit), the access entries, the default ones, each where
    the mask limits it followed by a tab and ``#effective:``, then an empty line."""
    bits = permission_bits(acl)
    lines = [f"# file: {path}", f"# owner: {acl.get('owner', '')}",
             f"# group: {acl.get('group', '')}"]
    if bits & STICKY:
        lines.append(f"# flags: --{'t' if bits & 1 else 'T'}")
    entries = [acls.parse_entry(text) for text in acl.get("entries", [])]
    for scope in acls.scopes(bits, entries):
        lines += [f"{entry}\t#effective:{left}" if left else str(entry)
                  for entry, left in acls.effective(scope)]
    return lines + [""]


# ------------------------------------------------------------------------------- snapshots

DIFF_LABELS = {"CREATE": "+", "MODIFY": "M", "DELETE": "-", "RENAME": "R"}


def snapshottable_lines(listing: list[dict], *, tz: tzinfo | None = None) -> list[str]:
    """SnapshottableDirectoryStatus.print: ``drwxr-xr-x 0 owner group 0 <local minute>
    <snapshots> <snapshot quota> <path>``, columns as wide as their widest value; an empty
    listing is one empty line."""
    if not listing:
        return [""]
    rows = [(d["dirStatus"], str(d["dirStatus"].get("replication", 0)),
             str(d["dirStatus"].get("length", 0)), str(d.get("snapshotNumber", 0)),
             str(d.get("snapshotQuota", 0))) for d in listing]
    widths = [max(len(row[i]) for row in rows) for i in range(1, 5)]
    owner = max(len(st.get("owner", "")) for st, *_ in rows)
    group = max(len(st.get("group", "")) for st, *_ in rows)
    return [f"d{mode_string(permission_bits(st))} {repl:>{widths[0]}} "
            f"{_left(st.get('owner', ''), owner)}{_left(st.get('group', ''), group)}"
            f"{length:>{widths[1]}} "
            f"{_time(int(st.get('modificationTime', 0)), '%Y-%m-%d %H:%M', tz)} "
            f"{number:>{widths[2]}} {quota:>{widths[3]}} {snapshottable_path(d)}"
            for d, (st, repl, length, number, quota) in zip(listing, rows, strict=True)]


def snapshottable_path(listed: dict) -> str:
    """SnapshottableDirectoryStatus.getFullPath: the parent's path and the local name."""
    parent, name = listed.get("parentFullPath") or "", listed["dirStatus"].get("pathSuffix", "")
    if not name:
        return parent or "/"
    return f"{parent.rstrip('/')}/{name}"


def snapshot_diff_lines(report: dict) -> list[str]:
    """``hdfs snapshotDiff``: SnapshotDiffReport.toString (``Difference between snapshot A
    and current directory under directory D:``, a line per entry as ``M\t./a``,
    ``R\t./old -> ./new``), then the empty line its println adds."""
    def side(name: str | None) -> str:
        return f"snapshot {name}" if name else "current directory"

    def where(relative: str | None) -> str:
        return f"./{relative}" if relative else "."

    lines = [f"Difference between {side(report.get('fromSnapshot'))} and "
             f"{side(report.get('toSnapshot'))} under directory {report.get('snapshotRoot')}:"]
    for entry in report.get("diffList", []):
        line = f"{DIFF_LABELS.get(entry['type'], entry['type'])}\t{where(entry['sourcePath'])}"
        if entry["type"] == "RENAME":
            line += f" -> {where(entry.get('targetPath'))}"
        lines.append(line)
    return lines + [""]


# ------------------------------------------------------------------------------- dfsadmin

def safe_mode_line(on: bool) -> str:
    return f"Safe mode is {'ON' if on else 'OFF'}"


def report_lines(report: dict, *, tz: tzinfo | None = None) -> list[str]:
    """``dfsadmin report``: the namenode's txids, edits, name dirs and counts."""
    checkpoint_ms = int(report.get("lastCheckpointTime", 0))
    lines = [
        f"Namespace ID: {report.get('namespaceId')}",
        safe_mode_line(bool(report.get("safeMode"))),
        "",
        "Transactions:",
        f"  last written txid:  {report.get('lastWrittenTxid')}",
        f"  last synced txid:   {report.get('lastSyncedTxid')}",
        f"  last checkpoint:    txid {report.get('lastCheckpointTxid')} at "
        f"{_time(checkpoint_ms, '%Y-%m-%d %H:%M:%S', tz) if checkpoint_ms else 'never'}",
        f"  since checkpoint:   {report.get('transactionsSinceLastCheckpoint')}",
        f"  syncs:              {_syncs(report)}",
        "",
        f"Edits segment: {report.get('segment')}",
    ]
    lines += [f"  {where}: {n} bytes" for where, n in sorted((report.get("editsSize")
                                                               or {}).items())]
    dirs = report.get("nameDirs") or []
    healthy = sum(1 for d in dirs if d.get("healthy"))
    lines += ["", f"Name directories: {healthy} healthy, {len(dirs) - healthy} failed"]
    lines += [f"  {d.get('path')}: " + ("healthy" if d.get("healthy")
                                        else f"FAILED ({d.get('failure') or 'no reason'})")
              for d in dirs]
    lines += ["", f"Namespace: {report.get('files')} files, "
                  f"{report.get('directories')} directories"]
    return lines


def _syncs(report: dict) -> str:
    syncs = int(report.get("syncs", 0))
    if not syncs:
        return "0"
    avg_ms = float(report.get("syncSeconds", 0.0)) / syncs * 1000
    return (f"{syncs} (average {avg_ms:.2f} ms, {report.get('txnsBatched', 0)} transactions "
            "batched)")
