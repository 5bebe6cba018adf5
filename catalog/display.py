"""How ``nnlite catalog`` prints the catalog's answers for people (``--json`` prints them as
they are). Pure functions from the answers to lines."""

from __future__ import annotations

from datetime import UTC, datetime

from nnlite.catalog.streaming import runs
from nnlite.client.display import size


def _when(ms: int | None) -> str:
    if not ms:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).astimezone().strftime(
        "%Y-%m-%d %H:%M:%S")


def _opt(value) -> str:
    return "-" if value is None else str(value)


def nbytes(n: int | None) -> str:
    """A size with its unit: ``312 B``, ``1.5 KiB`` (binary prefixes, one decimal)."""
    if n is None:
        return "-"
    return f"{n} B" if abs(n) < 1024 else size(n, True) + "iB"


def ls_lines(rows: list[dict]) -> list[str]:
    if not rows:
        return ["no checkpoints found"]
    width = max(len(r["path"]) for r in rows)
    head = (f"{'PATH':<{width}}  {'KIND':<9} {'LAST':>6} {'RESTORES':>8} {'HEALTH':<9} "
            f"{'FILES':>7} {'STATE SIZE':>10} {'UPDATED':<19} PINNED")
    lines = [head]
    for r in rows:
        lines.append(f"{r['path']:<{width}}  {r['kind']:<9} {_opt(r['lastBatch']):>6} "
                     f"{_opt(r['restorableBatch']):>8} {r['health']:<9} {_opt(r['files']):>7} "
                     f"{nbytes(r['stateBytes']):>10} {_when(r['lastUpdate']):<19} "
                     f"{','.join(map(str, r['pinned'])) or '-'}")
    return lines


def show_lines(doc: dict) -> list[str]:
    """``show`` for people: a table per kind, each column headed by what it holds."""
    return SHOW[doc.get("kind", "streaming")](doc)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _streaming_lines(doc: dict) -> list[str]:
    lines = [f"{doc['path']}: Structured Streaming checkpoint of query {doc['queryId'] or '?'}, "
             f"last committed batch {_opt(doc['lastBatch'])}"
             f"{' (async progress tracking)' if doc.get('asyncProgressTracking') else ''}",
             f"{'BATCH':>6} {'OFFSETS':<7} {'COMMIT':<6} {'WATERMARK':<19} {'STARTED':<19} "
             f"{'LOG SIZE':>9} {'STATE VERSION':>13} {'STATE SIZE':>10} RESTORES"]
    for b in doc["batches"]:
        lines.append(f"{b['batch']:>6} {_yes(b['offsets']):<7} {_yes(b['commit']):<6} "
                     f"{_when(b['watermarkMs']):<19} {_when(b['timestampMs']):<19} "
                     f"{nbytes(b['bytes']):>9} {b['stateVersion']:>13} "
                     f"{nbytes(b['stateBytes']):>10} "
                     f"{_yes(b['restorable'])}{'  pinned' if b['pinned'] else ''}")
    for op in doc["operators"]:
        lines.append(f"state operator {op['operator']}: {op['partitions']} partitions, stores "
                     f"{','.join(op['stores'])}, versions {_opt(op['minVersion'])}.."
                     f"{_opt(op['maxVersion'])}, snapshots "
                     f"{','.join(map(str, op['snapshots'])) or 'none'}, {nbytes(op['bytes'])}")
    for name, count in doc["sources"].items():
        lines.append(f"source {name}: {count} log entries")
    lines += [f"corrupt: {message}" for message in doc["corrupt"]]
    return lines


def _job_lines(doc: dict) -> list[str]:
    lines = [f"{doc['path']}: job checkpoints, newest restorable {_opt(doc['latest'])}",
             f"{'ID':>6} {'STATE':<11} {'PARTS':>6} {'FILES':>6} {'SIZE':>10} "
             f"{'UPDATED':<19} {'PINNED':<6} RESTORES"]
    for c in doc["checkpoints"]:
        state = "complete" if c["complete"] else ("writing" if c["writing"] else "in progress")
        lines.append(f"{c['id']:>6} {state:<11} {c['parts']:>6} {c['files']:>6} "
                     f"{nbytes(c['bytes']):>10} {_when(c['lastUpdate']):<19} "
                     f"{_yes(c['pinned']):<6} {_yes(c['restorable'])}")
        lines += [f"    {problem}" for problem in c["problems"]]
    return lines


def _rdd_lines(doc: dict) -> list[str]:
    lines = [f"{doc['path']}: RDD checkpoints of one SparkContext",
             f"{'RDD':>6} {'PARTS':>6} {'FILES':>6} {'SIZE':>10} {'UPDATED':<19} {'WRITING':<7} "
             f"READS"]
    for r in doc["rdds"]:
        lines.append(f"{r['rdd']:>6} {r['parts']:>6} {r['files']:>6} {nbytes(r['bytes']):>10} "
                     f"{_when(r['lastUpdate']):<19} {_yes(r['writing']):<7} "
                     f"{_yes(r['restorable'])}")
        lines += [f"    {problem}" for problem in r["problems"]]
    return lines


def _dstream_lines(doc: dict) -> list[str]:
    lines = [f"{doc['path']}: DStream checkpoints (StreamingContext.getOrCreate reads the "
             f"newest that restores)",
             f"{'TIME':<19} {'SIZE':>10} {'BACKUP':>10} RESTORES"]
    for c in doc["checkpoints"]:
        lines.append(f"{_when(c['timeMs']):<19} {nbytes(c['bytes']):>10} "
                     f"{nbytes(c['backupBytes']):>10} {_yes(c['restorable'])}")
    return lines


def _flink_lines(doc: dict) -> list[str]:
    what = "Flink savepoint" if doc["kind"] == "savepoint" else "Flink job checkpoints"
    lines = [f"{doc['path']}: {what}, newest restorable {_opt(doc['latest'])}; shared "
             f"{doc['sharedFiles']} files, {nbytes(doc['sharedBytes'])}",
             f"{'ID':>6} {'COMPLETE':<8} {'FILES':>6} {'STATE SIZE':>10} {'INLINE':>9} "
             f"{'UPDATED':<19} RESTORES"]
    for c in doc["checkpoints"]:
        lines.append(f"{_opt(c['id']):>6} {_yes(c['complete']):<8} {c['files']:>6} "
                     f"{nbytes(c['bytes']):>10} {nbytes(c['inlineBytes']):>9} "
                     f"{_when(c['lastUpdate']):<19} {_yes(c['restorable'])}"
                     f"{'  pinned' if c['pinned'] else ''}")
        lines += [f"    {problem}" for problem in c["problems"]]
    return lines


SHOW = {"streaming": _streaming_lines, "job": _job_lines, "rdd": _rdd_lines,
        "dstream": _dstream_lines, "flink": _flink_lines, "savepoint": _flink_lines}


def validate_lines(doc: dict) -> list[str]:
    lines = [f"{issue['level'].upper()} [{issue['code']}] {issue['message']}"
             for issue in doc["issues"]]
    unit = UNITS.get(doc.get("kind", ""), "batch")
    verdict = (f"{doc['path']}: restorable at {unit} {doc['lastBatch']}" if doc["restorable"]
               else f"{doc['path']}: NOT restorable as it is (last complete {unit} "
                    f"{_opt(doc['lastBatch'])}, newest restorable {_opt(doc['restorableBatch'])})")
    lines.append(verdict)
    if doc.get("advice"):
        lines.append(f"to repair: {doc['advice']}")
    return lines


# What validate's lastBatch and restorableBatch count, per kind.
UNITS = {"flink": "checkpoint", "savepoint": "checkpoint", "job": "checkpoint", "rdd": "RDD",
         "dstream": "checkpoint time"}


def change_line(kind: str, doc: dict) -> str:
    if kind == "retain" and "deletedPaths" in doc:
        return (f"{doc['path']}: kept batches {_runs(doc['keptBatches'])}; removed "
                f"{len(doc['removedBatches'])} batches and {doc['removedStateFiles']} state "
                f"files ({doc['deletedPaths']} paths, {nbytes(doc['bytesFreed'])})")
    if kind == "retain":
        return (f"{doc['path']}: kept checkpoints {_runs(doc['kept'])}; removed "
                f"{_removed(doc)} ({doc['deleted']} paths, {doc['files']} files, "
                f"{nbytes(doc['bytesFreed'])})")
    if kind == "rollback":
        undo = (f"; snapshot {doc['snapshot']} holds what was removed"
                if doc.get("snapshot") else "")
        taken = "".join(f"; took over the lease of {lease['path']} from {lease['holder']} "
                        f"(silent {lease['silentSeconds']:g} s)"
                        for lease in doc.get("recoveredLeases", ()))
        return (f"{doc['path']}: rolled back to batch {doc['lastBatch']}; the query restarts "
                f"from batch {doc['lastBatch'] + 1} (removed batches "
                f"{_runs(doc['removedBatches']) or 'none'}, {doc['removedStateFiles']} state "
                f"files){undo}{taken}")
    if kind == "gc":
        return "\n".join(_gc_lines(doc))
    return str(doc)


def _removed(doc: dict) -> str:
    """``7 checkpoints, 1 unfinished checkpoint and 4 shared files``: what a job's or a
    Flink job's retention removed."""
    parts = [_counted(len(doc["removedCheckpoints"]), "checkpoint")]
    if doc.get("removedUnfinished"):
        parts.append(_counted(len(doc["removedUnfinished"]), "unfinished checkpoint"))
    if doc.get("removedSharedFiles"):
        parts.append(_counted(doc["removedSharedFiles"], "shared file"))
    return " and ".join([", ".join(parts[:-1]), parts[-1]]) if len(parts) > 1 else parts[0]


def _counted(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _gc_lines(doc: dict) -> list[str]:
    """What gc removed, then what it kept and why, then the totals."""
    verb = "would remove" if doc["dryRun"] else "removed"
    lines = [f"{verb} {p['path']} ({p['reason']}, {nbytes(p['bytes'])})"
             for p in doc["removed"]]
    lines += [f"kept {p['path']} ({p['reason']}, {nbytes(p['bytes'])}): {_kept_because(p)}"
              for p in doc.get("kept", [])]
    kept = doc.get("bytesKeptBySnapshots", 0)
    held = f" ({nbytes(kept)} more stay until the snapshots holding them are deleted)" \
        if kept else ""
    also = f"; kept {len(doc['kept'])} (see above)" if doc.get("kept") else ""
    return lines + [f"{verb} {len(doc['removed'])} paths, {nbytes(doc['bytesFreed'])} freed"
                    f"{held}{also}"]


def _kept_because(item: dict) -> str:
    if item["why"] == "young":
        return (f"last changed {_when(item['lastChange'])}, less than {item['setting']} = "
                f"{duration(item['ttlMs'])} ago; gc removes it from "
                f"{_when(item['removableAt'])}")
    if item["why"] == "writing":
        return "still being written"
    return "you may not delete it"


def duration(ms: int) -> str:
    """``90 s``, ``30 min``, ``1 h``, ``7 d``, ``1.5 h``: the largest unit it reaches."""
    for unit, span in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000)):
        if ms >= span:
            return f"{round(ms / span, 1):g} {unit}"
    return f"{round(ms / 1000, 1):g} s"


def _runs(numbers) -> str:
    return runs(sorted(numbers))
