"""How ``nnlite catalog`` prints the catalog's answers for people (``--json`` prints them as
they are). Pure functions from the answers to lines."""

from __future__ import annotations

from datetime import datetime, timezone

from nnlite.catalog.streaming import runs
from nnlite.client.display import size


def _when(ms: int | None) -> str:
    if not ms:
        return "-"
    return datetime.fromtimestamp(ms / 1000, timezone.utc).astimezone().strftime(
        "%Y-%m-%d %H:%M:%S")


def _opt(value) -> str:
    return "-" if value is None else str(value)


def ls_lines(rows: list[dict]) -> list[str]:
    if not rows:
        return ["no checkpoints found"]
    width = max(len(r["path"]) for r in rows)
    head = (f"{'PATH':<{width}}  {'KIND':<9} {'LAST':>6} {'RESTORE':>7} {'HEALTH':<9} "
            f"{'FILES':>7} {'STATE':>9} {'UPDATED':<19} PINNED")
    lines = [head]
    for r in rows:
        lines.append(f"{r['path']:<{width}}  {r['kind']:<9} {_opt(r['lastBatch']):>6} "
                     f"{_opt(r['restorableBatch']):>7} {r['health']:<9} {r['files']:>7} "
                     f"{size(r['stateBytes'], True):>9} {_when(r['lastUpdate']):<19} "
                     f"{','.join(map(str, r['pinned'])) or '-'}")
    return lines


def show_lines(doc: dict) -> list[str]:
    lines = [f"checkpoint {doc['path']}  query {doc['queryId'] or '?'}  last batch "
             f"{_opt(doc['lastBatch'])}",
             f"{'BATCH':>6} {'OFFSETS':<7} {'COMMIT':<6} {'WATERMARK':<19} {'TIMESTAMP':<19} "
             f"{'BYTES':>7} {'STATE v':>7} {'STATE':>9} RESTORE"]
    for b in doc["batches"]:
        lines.append(f"{b['batch']:>6} {'yes' if b['offsets'] else 'NO':<7} "
                     f"{'yes' if b['commit'] else 'no':<6} {_when(b['watermarkMs']):<19} "
                     f"{_when(b['timestampMs']):<19} {b['bytes']:>7} {b['stateVersion']:>7} "
                     f"{size(b['stateBytes'], True):>9} "
                     f"{'yes' if b['restorable'] else 'no'}{'  pinned' if b['pinned'] else ''}")
    for op in doc["operators"]:
        lines.append(f"state operator {op['operator']}: {op['partitions']} partitions, stores "
                     f"{','.join(op['stores'])}, versions {_opt(op['minVersion'])}.."
                     f"{_opt(op['maxVersion'])}, snapshots "
                     f"{','.join(map(str, op['snapshots'])) or 'none'}, "
                     f"{size(op['bytes'], True)}")
    for name, count in doc["sources"].items():
        lines.append(f"source {name}: {count} log entries")
    lines += [f"corrupt: {message}" for message in doc["corrupt"]]
    return lines


def validate_lines(doc: dict) -> list[str]:
    lines = [f"{issue['level'].upper()} [{issue['code']}] {issue['message']}"
             for issue in doc["issues"]]
    verdict = (f"{doc['path']}: restorable at batch {doc['lastBatch']}" if doc["restorable"]
               else f"{doc['path']}: NOT restorable as it is (last committed batch "
                    f"{_opt(doc['lastBatch'])}, newest restorable {_opt(doc['restorableBatch'])})")
    lines.append(verdict)
    if doc.get("advice"):
        lines.append(f"to repair: {doc['advice']}")
    return lines


def change_line(kind: str, doc: dict) -> str:
    if kind == "retain" and "deletedPaths" in doc:
        return (f"{doc['path']}: kept batches {_runs(doc['keptBatches'])}; removed "
                f"{len(doc['removedBatches'])} batches and {doc['removedStateFiles']} state "
                f"files ({doc['deletedPaths']} paths, {size(doc['bytesFreed'], True)})")
    if kind == "retain":
        return f"kept checkpoints {_runs(doc['kept'])}; deleted {doc['deleted']}"
    if kind == "rollback":
        return (f"{doc['path']}: rolled back to batch {doc['lastBatch']}; the query restarts "
                f"from batch {doc['lastBatch'] + 1} (removed batches "
                f"{_runs(doc['removedBatches']) or 'none'}, {doc['removedStateFiles']} state "
                f"files)")
    if kind == "gc":
        verb = "would remove" if doc["dryRun"] else "removed"
        lines = [f"{verb} {p['path']} ({p['reason']}, {size(p['bytes'], True)})"
                 for p in doc["removed"]]
        return "\n".join(lines + [f"{verb} {len(doc['removed'])} paths, "
                                  f"{size(doc['bytesFreed'], True)}"])
    return str(doc)


def _runs(numbers) -> str:
    return runs(sorted(numbers))
