"""The rows of a peers run as a table, and nnlite against the best peer, row by row.

A row's figures: ops/s over the generator's timed phase, p50/p99 latency as the client saw it,
the server's and the generator's CPU per op (µs), the whole machine's CPU (% of one core),
acknowledged ops per log fsync and the mean time of one (as the server timed it), and the
1-minute load average when the row started and ended.
"""

from __future__ import annotations

PEERS = ("zookeeper", "etcd")
TARGETS = {("write", 32): 1.2, ("read", 8): 1.5}   # nnlite / best peer, the headline rows
HA_TARGETS = {("write", 32): 0.70}                 # nnlite-ha / nnlite (reads: unchanged)
# nnlite-ha's creates at 32, every process on a host of its own: projected ÷ local, at least;
# the active's CPU per create ÷ a local-journal namenode's, at most (issue 33)
HA_PROJECTED_TARGET, HA_ACTIVE_CPU_TARGET = 0.70, 1.3
RPC_TARGETS = {("write", 32): 2.0, ("read", 8): 2.0}   # nnlite-rpc / nnlite (hdfs:// / WebHDFS)
RPC_CPU_TARGETS = {"write": 20.0, "read": 10.0}      # nnlite-rpc's server µs per op, at most
WHAT = {"write": "durable create", "read": "lookup"}
MIN_WIDTHS = (5, 5, 2, 13, 6, 3, 5, 7, 6, 6, 9, 9, 6, 9, 7, 11)   # rows printed one by one align


def number(value, digits: int = 0) -> str:
    if value is None or value != value:
        return "-"
    return f"{value:,.{digits}f}"


def table(rows: list[dict]) -> str:
    head = ("round", "kind", "c", "system", "ops", "err", "secs", "ops/s", "p50 ms", "p99 ms",
            "srv us/op", "cli us/op", "host %", "ops/fsync", "sync ms", "load")
    lines = [head] + [(
        str(r["round"]), r["kind"], str(r["conc"]), r["system"], str(r["ops"]), str(r["errors"]),
        number(r["seconds"], 2), number(r["ops_s"]), number(r["p50_ms"], 2),
        number(r["p99_ms"], 2), number(r["srv_us_per_op"]), number(r["cli_us_per_op"]),
        number(r["host_cpu_pct"]), number(r["ops_per_fsync"], 1), number(r["sync_ms"], 2),
        f"{r['load_start']:.2f}-{r['load_end']:.2f}") for r in rows]
    widths = [max([MIN_WIDTHS[i]] + [len(line[i]) for line in lines]) for i in range(len(head))]
    text = []
    for n, line in enumerate(lines):
        cells = [c.ljust(w) if i in (1, 3) else c.rjust(w)
                 for i, (c, w) in enumerate(zip(line, widths, strict=True))]
        text.append("  ".join(cells))
        if n == 0:
            text.append("  ".join("-" * w for w in widths))
    return "\n".join(text)


def comparisons(rows: list[dict]) -> list[dict]:
    """nnlite against the fastest peer of the same row and round."""
    out = []
    for r in rows:
        if r["system"] != "nnlite" or not r["ops"]:
            continue
        peers = [p for p in rows if p["system"] in PEERS and p["ops"]
                 and (p["round"], p["kind"], p["conc"]) == (r["round"], r["kind"], r["conc"])]
        if not peers:
            continue
        best = max(peers, key=lambda p: p["ops_s"])
        target = TARGETS.get((r["kind"], r["conc"]))
        ratio = r["ops_s"] / best["ops_s"]
        out.append({"round": r["round"], "kind": r["kind"], "conc": r["conc"], "nnlite": r,
                    "best": best, "ratio": ratio, "target": target,
                    "met": None if target is None else ratio >= target and not r["errors"]})
    return out


def comparison_lines(found: list[dict]) -> list[str]:
    lines = [] if found else ["(no row with both nnlite and a peer)"]
    for c in found:
        ours, best = c["nnlite"], c["best"]
        verdict = "" if c["target"] is None else (
            f"  target >= {c['target']}x: {'MET' if c['met'] else 'NOT MET'}")
        lines.append(
            f"round {c['round']} {WHAT[c['kind']]} c={c['conc']}: nnlite {number(ours['ops_s'])} "
            f"ops/s vs {best['system']} {number(best['ops_s'])} -> {c['ratio']:.2f}x; "
            f"server us/op {number(ours['srv_us_per_op'])} vs {number(best['srv_us_per_op'])}; "
            f"load {ours['load_start']:.2f}{verdict}")
    return lines


def markdown(rows: list[dict]) -> str:
    """The rows as a Markdown table, to paste into BENCHMARKS.md."""
    out = ["| round | workload | c | system | ops/s | p50 ms | p99 ms | server µs/op | "
           "client µs/op | ops/fsync | sync ms | load |", "|" + "---|" * 12]
    for r in rows:
        out.append(f"| {r['round']} | {r['kind']} | {r['conc']} | {r['system']} | "
                   f"{number(r['ops_s'])} | {number(r['p50_ms'], 2)} | {number(r['p99_ms'], 2)} | "
                   f"{number(r['srv_us_per_op'])} | {number(r['cli_us_per_op'])} | "
                   f"{number(r['ops_per_fsync'], 1)} | {number(r['sync_ms'], 2)} | "
                   f"{r['load_start']:.2f} |")
    return "\n".join(out)


def ha_lines(rows: list[dict]) -> list[str]:
    """nnlite-ha against nnlite (the local journal) of the same row and round: the ratio,
    where a batch's time went, and whose CPU an op took."""
    lines = []
    for r in rows:
        if r["system"] != "nnlite-ha" or not r["ops"]:
            continue
        local = next((p for p in rows if p["system"] == "nnlite" and p["ops"] and
                      (p["round"], p["kind"], p["conc"]) == (r["round"], r["kind"], r["conc"])),
                     None)
        head = f"round {r['round']} {WHAT[r['kind']]} c={r['conc']}: nnlite-ha {number(r['ops_s'])}"
        if local is not None:
            target = HA_TARGETS.get((r["kind"], r["conc"]))
            ratio = r["ops_s"] / local["ops_s"]
            verdict = ("  target: unchanged" if r["kind"] == "read" else "") if target is None \
                else f"  target >= {target:.2f}: {'MET' if ratio >= target else 'NOT MET'}"
            head += (f" vs nnlite {number(local['ops_s'])} ops/s -> {ratio:.2f} of local; server "
                     f"us/op {number(r['srv_us_per_op'])} vs {number(local['srv_us_per_op'])}; "
                     f"load {r['load_start']:.2f}{verdict}")
        lines.append(head)
        if r.get("shared_ms") is not None and r.get("sync_ms") is not None:
            lines.append(f"    a batch: {number(r['ops_per_fsync'], 1)} ops, "
                         f"{r['sync_ms']:.2f} ms = etcd txn {r['shared_ms']:.2f} ms + local "
                         f"write and fdatasync {r['sync_ms'] - r['shared_ms']:.2f} ms"
                         + (f"; nnlite's: {number(local['ops_per_fsync'], 1)} ops, "
                            f"{local['sync_ms']:.2f} ms" if local and local.get("sync_ms")
                            else ""))
        if r.get("srv_us_by_part"):
            lines.append("    server us/op by process: " + ", ".join(
                f"{label} {number(us)}" for label, us in r["srv_us_by_part"].items()))
        if r["kind"] == "write" and local is not None:
            lines += ha_projection(r, local)
    return (["", "== nnlite-ha / nnlite (local journal), each row =="] + lines) if lines else []


def host_bounds(row: dict) -> dict[str, float]:
    """What each process of a create row would allow on a host of its own: one core-second
    over its CPU per op (a namenode is one core's worth: its event loop and sync thread share
    the GIL), and the clients over the commit latency (the mean group-commit batch, as the
    server timed it: with the HA set the etcd transaction plus the local write and
    fdatasync), the rate if every client's op made the next batch."""
    parts = row.get("srv_us_by_part") or {row["system"]: row["srv_us_per_op"]}
    bounds = {label: 1e6 / us for label, us in parts.items() if us}
    if row.get("sync_ms"):
        bounds["clients / commit latency"] = row["conc"] / (row["sync_ms"] / 1000)
    return bounds


def ha_projection(ha: dict, local: dict) -> list[str]:
    """The HA set with each process on a host of its own, against one namenode with its local
    journal on its own host: each bound, the lowest of each side, their ratio, and the
    active's CPU per create against the local namenode's (``HA_PROJECTED_TARGET``,
    ``HA_ACTIVE_CPU_TARGET``). Measured on this machine, so the CPU per op includes what
    sharing the cores costs (the figures are an upper bound on the CPU, so a lower bound on
    the rates)."""
    ha_bounds, local_bounds = host_bounds(ha), host_bounds(local)
    if not ha_bounds or not local_bounds:
        return []
    ha_low = min(ha_bounds, key=ha_bounds.__getitem__)
    local_low = min(local_bounds, key=local_bounds.__getitem__)
    ratio = ha_bounds[ha_low] / local_bounds[local_low]
    lines = [
        "    on hosts of their own, ops/s: " + ", ".join(
            f"{label} {number(v)}" for label, v in ha_bounds.items()),
        "      local-journal namenode: " + ", ".join(
            f"{label} {number(v)}" for label, v in local_bounds.items()),
        f"      projected HA / local = {number(ha_bounds[ha_low])} ({ha_low}) / "
        f"{number(local_bounds[local_low])} ({local_low}) = {ratio:.2f}  target >= "
        f"{HA_PROJECTED_TARGET:.2f}: {'MET' if ratio >= HA_PROJECTED_TARGET else 'NOT MET'}"]
    active = next((us for label, us in (ha.get("srv_us_by_part") or {}).items()
                   if "(active)" in label), None)
    if active is not None and local["srv_us_per_op"]:
        cpu = active / local["srv_us_per_op"]
        lines.append(f"      the active's CPU per create {number(active)} us vs local "
                     f"{number(local['srv_us_per_op'])} = {cpu:.2f}x  target <= "
                     f"{HA_ACTIVE_CPU_TARGET:.1f}x: "
                     f"{'MET' if cpu <= HA_ACTIVE_CPU_TARGET else 'NOT MET'}")
    return lines


def same_row(rows: list[dict], system: str, r: dict) -> dict | None:
    """``system``'s row of the same round, kind and clients as ``r`` (with ops), if any."""
    return next((p for p in rows if p["system"] == system and p["ops"] and
                 (p["round"], p["kind"], p["conc"]) == (r["round"], r["kind"], r["conc"])), None)


def split(row: dict) -> str:
    """A row's server µs per op, and its user and system parts when known."""
    total, system = row["srv_us_per_op"], row.get("srv_sys_us_per_op")
    if total is None or system is None:
        return number(total)
    return f"{number(total)} (user {number(total - system)} + sys {number(system)})"


def rpc_lines(rows: list[dict]) -> list[str]:
    """nnlite-rpc (hdfs://, DistributedFileSystem) against nnlite (WebHDFS, PeerLoad's lean
    client) of the same row and round, one namenode process: the ratio and the server's CPU per
    op, with their targets; against nnlite-webhdfs-fs (WebHDFS through Hadoop's
    WebHdfsFileSystem) when it ran; and the best peer of the row."""
    lines = []
    for r in rows:
        if r["system"] != "nnlite-rpc" or not r["ops"]:
            continue
        key, us = (r["kind"], r["conc"]), r["srv_us_per_op"]
        head = f"round {r['round']} {WHAT[r['kind']]} c={r['conc']}: hdfs:// {number(r['ops_s'])}"
        web = same_row(rows, "nnlite", r)
        if web is not None:
            ratio = r["ops_s"] / web["ops_s"]
            head += f" vs WebHDFS {number(web['ops_s'])} ops/s -> {ratio:.2f}x"
            if key in RPC_TARGETS:
                met = ratio >= RPC_TARGETS[key] and not r["errors"]
                head += f" (target >= {RPC_TARGETS[key]:.1f}x: {'MET' if met else 'NOT MET'})"
        hadoop_web = same_row(rows, "nnlite-webhdfs-fs", r)
        if hadoop_web is not None and hadoop_web["ops_s"]:
            head += (f"; vs WebHdfsFileSystem {number(hadoop_web['ops_s'])} ops/s -> "
                     f"{r['ops_s'] / hadoop_web['ops_s']:.2f}x (client us/op "
                     f"{number(hadoop_web['cli_us_per_op'])}, server {split(hadoop_web)})")
        cpu = RPC_CPU_TARGETS[r["kind"]]
        head += (f"; server us/op {split(r)}"
                 + (f" vs {split(web)}" if web is not None else "")
                 + ("" if key not in RPC_TARGETS or us is None else
                    f" (target <= {cpu:.0f}: {'MET' if us <= cpu else 'NOT MET'})")
                 + f"; client us/op {number(r['cli_us_per_op'])}"
                 + (f" vs {number(web['cli_us_per_op'])}" if web is not None else "")
                 + f"; load {r['load_start']:.2f}")
        lines.append(head)
        peers = [p for p in (same_row(rows, name, r) for name in PEERS) if p is not None]
        if peers:
            best = max(peers, key=lambda p: p["ops_s"])
            lines.append(f"    vs the best peer, {best['system']} {number(best['ops_s'])} ops/s: "
                         f"{r['ops_s'] / best['ops_s']:.2f}x")
    return (["", "== nnlite-rpc (hdfs://) / nnlite (WebHDFS), one namenode, each row =="]
            + lines) if lines else []
