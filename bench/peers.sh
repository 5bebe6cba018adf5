#!/usr/bin/env bash
# nnlite side by side with its durable-metadata peers (etcd 3.4, ZooKeeper 3.8, the raw fsync
# floor), using the shared harness ../shared/peers/peer_bench.py.
#
#   bash bench/peers_setup.sh     # once per machine: apt + /tmp/peervenv + etcd3 stubs
#   bash bench/peers.sh [extra peer_bench.py options]
#
# What it does:
#   1. formats a fresh name dir ($NN_DIR, default /tmp/peers/nnlite);
#   2. starts the namenode on 127.0.0.1:$PORT with the repo's venv (.venv/bin/python, else
#      /tmp/nnvenv/bin/python) and stops it by its PID on exit (trap);
#   3. makes / world-writable with the sticky bit (SETPERMISSION 1777, done as the namenode's
#      superuser: the OS user that runs it), so the harness user "bench" can create
#      /bench/... without being a superuser, and checks that bench is refused SETOWNER;
#   4. runs peer_bench.py for fsync,etcd-http,zk,webhdfs with the Python clients (c = 1, 8, 32
#      writes, c = 8 reads) and the JVM client LeanLoad (MKDIRS at c = 32, GETFILESTATUS at c = 8);
#   5. prints the comparison lines: nnlite / best peer for the two java rows against the
#      targets (>= 1.2x writes at c = 32, >= 1.5x reads at c = 8), and srv us/op for each system.
# Output: bench/out/peers-<run id>.{log,json} (bench/out/ is gitignored).
#
# Env overrides: PORT (29870), NN_DIR, SYSTEMS (fsync,etcd-http,zk,webhdfs), RUN_ID, PEERVENV
# (/tmp/peervenv), HARNESS (peer_bench.py), NN_PYTHON, BUDGET (900 s).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PORT=${PORT:-29870}
NN_DIR=${NN_DIR:-/tmp/peers/nnlite}
SYSTEMS=${SYSTEMS:-fsync,etcd-http,zk,webhdfs}
RUN_ID=${RUN_ID:-peers-$(date -u +%Y%m%d-%H%M%S)}
PEERVENV=${PEERVENV:-/tmp/peervenv}
BUDGET=${BUDGET:-900}
OUT_DIR="$ROOT/bench/out"
URL="http://127.0.0.1:$PORT"

if [ -z "${HARNESS:-}" ]; then
    for h in "$ROOT/../shared/peers/peer_bench.py" /work/shared/peers/peer_bench.py; do
        if [ -f "$h" ]; then HARNESS=$h; break; fi
    done
fi
[ -n "${HARNESS:-}" ] && [ -f "$HARNESS" ] || { echo "peers.sh: peer_bench.py not found (set HARNESS)" >&2; exit 2; }

if [ -z "${NN_PYTHON:-}" ]; then
    if [ -x "$ROOT/.venv/bin/python" ]; then NN_PYTHON="$ROOT/.venv/bin/python"; else NN_PYTHON=/tmp/nnvenv/bin/python; fi
fi
[ -x "$NN_PYTHON" ] || { echo "peers.sh: no namenode python ($NN_PYTHON): run 'make venv'" >&2; exit 2; }
"$PEERVENV/bin/python" -c 'import etcd3, kazoo' 2>/dev/null \
    || { echo "peers.sh: $PEERVENV is not set up: run bash bench/peers_setup.sh" >&2; exit 2; }

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "$PORT" 23790 23800 21810; do
    if port_busy "$p"; then echo "peers.sh: port $p is already in use; not starting" >&2; exit 2; fi
done

mkdir -p "$OUT_DIR" "$(dirname "$NN_DIR")"
LOG="$OUT_DIR/$RUN_ID.log"
JSON="$OUT_DIR/$RUN_ID.json"
NN_LOG="$OUT_DIR/$RUN_ID.namenode.log"

# --- 1. fresh name dir ---------------------------------------------------------------------
case "$NN_DIR" in /tmp/*) rm -rf "$NN_DIR" ;; *) echo "peers.sh: NN_DIR must be under /tmp" >&2; exit 2 ;; esac
"$NN_PYTHON" "$ROOT/cli.py" format --name-dir "$NN_DIR" >/dev/null 2>&1

# --- 2. the namenode, stopped by its PID on any exit ----------------------------------------
NN_PID=""
BENCH_PID=""
cleanup() {
    if [ -n "$BENCH_PID" ] && kill -0 "$BENCH_PID" 2>/dev/null; then
        kill -TERM "$BENCH_PID" 2>/dev/null || true   # the harness stops its own servers by PID
        wait "$BENCH_PID" 2>/dev/null || true
    fi
    stop_namenode
}
stop_namenode() {
    [ -n "$NN_PID" ] || return 0
    if kill -0 "$NN_PID" 2>/dev/null; then
        kill -TERM "$NN_PID" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$NN_PID" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$NN_PID" 2>/dev/null; then
            echo "peers.sh: namenode $NN_PID did not stop in 10 s; SIGKILL" >&2
            kill -KILL "$NN_PID" 2>/dev/null || true
        fi
    fi
    wait "$NN_PID" 2>/dev/null || true
    NN_PID=""
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cd "$ROOT"
"$NN_PYTHON" "$ROOT/cli.py" namenode --name-dir "$NN_DIR" --host 127.0.0.1 --port "$PORT" \
    >"$NN_LOG" 2>&1 </dev/null &
NN_PID=$!
for _ in $(seq 1 300); do
    kill -0 "$NN_PID" 2>/dev/null || { echo "peers.sh: namenode exited; see $NN_LOG" >&2; tail -5 "$NN_LOG" >&2; exit 1; }
    # the port answers while the namespace loads (safe mode): wait for "Loading":0
    curl -sf "$URL/metrics.json" 2>/dev/null | grep -q '"Loading":0' && break
    sleep 0.2
done
curl -sf "$URL/metrics.json" | grep -q '"Loading":0' \
    || { echo "peers.sh: namenode not ready after 60 s" >&2; exit 1; }

# --- 3. / writable for "bench", which stays an ordinary user ----------------------------------
SUPER=$(id -un)   # the namenode's superuser: the OS user running it (nnlite.superuser unset)
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT \
    "$URL/webhdfs/v1/?op=SETPERMISSION&permission=1777&user.name=$SUPER")
[ "$code" = 200 ] || { echo "peers.sh: SETPERMISSION as $SUPER returned $code" >&2; exit 1; }
perm=$(curl -s "$URL/webhdfs/v1/?op=GETFILESTATUS&user.name=bench" \
    | "$PEERVENV/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["FileStatus"]["permission"])')
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$URL/webhdfs/v1/?op=SETOWNER&owner=bench&user.name=bench")
[ "$perm" = 1777 ] && [ "$code" = 403 ] \
    || { echo "peers.sh: expected / at 1777 and bench refused SETOWNER (got $perm, $code)" >&2; exit 1; }

{
    echo "# peers.sh run $RUN_ID at $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname): $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# namenode pid $NN_PID: $NN_PYTHON $ROOT/cli.py namenode --name-dir $NN_DIR --host 127.0.0.1 --port $PORT"
    echo "# / is 1777 (set by $SUPER); bench is not a superuser (SETOWNER -> 403); git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet 2>/dev/null || echo '+dirty')"
    echo "# namenode event loop: $("$NN_PYTHON" -c 'import uvloop; print("uvloop", uvloop.__version__)' 2>/dev/null || echo 'asyncio (uvloop not installed)')"
} | tee "$LOG"

# --- 4. the harness ---------------------------------------------------------------------------
BENCH=("$PEERVENV/bin/python" "$HARNESS" --systems "$SYSTEMS" --run-id "$RUN_ID"
    --write-conc 1,8,32 --read-conc 8 --lean-write-conc 32 --lean-read-conc 8 --budget "$BUDGET"
    --webhdfs-url "$URL" --webhdfs-pid "$NN_PID" --webhdfs-metrics "$URL/metrics.json"
    --json "$JSON" "$@")
echo "+ ${BENCH[*]}" | tee -a "$LOG"
# In the background and waited for, so that a signal to this script runs the trap at once.
"${BENCH[@]}" > >(tee -a "$LOG") 2>&1 </dev/null &
BENCH_PID=$!
rc=0; wait "$BENCH_PID" || rc=$?
BENCH_PID=""
[ "$rc" = 0 ] || { echo "peers.sh: peer_bench.py exited with $rc" | tee -a "$LOG" >&2; exit "$rc"; }
kill -0 "$NN_PID" 2>/dev/null || { echo "peers.sh: the namenode died during the run; see $NN_LOG" | tee -a "$LOG" >&2; exit 1; }

# --- 5. the comparison ------------------------------------------------------------------------
"$PEERVENV/bin/python" - "$JSON" <<'PYEOF' | tee -a "$LOG"
import json, sys

rows = json.load(open(sys.argv[1]))["rows"]
PEERS = ("etcd-http", "etcd-grpc", "zk")   # servers with a durable log; fsync/sqlite are no peers

def per_op(r, key):
    v, ops_s = r.get(key), r.get("ops_s")
    return v / 100.0 / ops_s * 1e6 if v == v and v is not None and ops_s else float("nan")

def row(system, client, kind, conc):
    for r in rows:
        if (r["system"], r.get("client"), r["workload"], r["conc"]) == (system, client, kind, conc):
            return r
    return None

print()
print("== comparison: nnlite (webhdfs) vs the best peer ==")
ok = True
for client, kind, conc, target, what in (("java", "write", 32, 1.2, "durable MKDIRS"),
                                          ("java", "read", 8, 1.5, "GETFILESTATUS")):
    ours = row("webhdfs", client, kind, conc)
    peers = [r for r in (row(p, client, kind, conc) for p in PEERS) if r and r.get("ops")]
    if not ours or not ours.get("ops") or not peers:
        print(f"{client} {kind} c={conc}: missing rows (nnlite {'ok' if ours else 'none'}, "
              f"{len(peers)} peers)")
        ok = False
        continue
    best = max(peers, key=lambda r: r["ops_s"])
    ratio = ours["ops_s"] / best["ops_s"]
    met = ratio >= target and not ours.get("errors")
    ok &= met
    print(f"{client} {kind} c={conc} ({what}): nnlite {ours['ops_s']:.0f} ops/s "
          f"(errors {ours['errors']}), best peer {best['system']} {best['ops_s']:.0f} ops/s -> "
          f"{ratio:.2f}x, target >= {target}x: {'MET' if met else 'NOT MET'}")
    for r in [ours] + sorted(peers, key=lambda r: -r["ops_s"]):
        opf = (f"{r['ops'] / r['fsyncs']:.2f}" if kind == "write" and r.get("fsyncs") else "-")
        print(f"    {r['system']:10s} {r['ops_s']:7.0f} ops/s  p50 {r['p50_ms']:6.2f} ms  "
              f"p99 {r['p99_ms']:6.2f} ms  srv {per_op(r, 'srv_cpu'):5.0f} us/op  "
              f"cli {per_op(r, 'cli_cpu'):5.0f} us/op  host {r['host_cpu']:4.0f}%  ops/fsync {opf}")
print()
print("== srv us/op (server CPU per op), every row ==")
systems = [s for s in ("webhdfs",) + PEERS if any(r["system"] == s for r in rows)]
keys = sorted({(r.get("client"), r["workload"], r["conc"]) for r in rows if r["system"] in systems},
              key=lambda k: (k[0] != "py-procs", k[1] != "write", k[2]))
print(f"{'client':8s} {'workload':8s} {'conc':>4s} " + " ".join(f"{s:>10s}" for s in systems))
for k in keys:
    cells = []
    for s in systems:
        r = row(s, *k)
        cells.append(f"{per_op(r, 'srv_cpu'):10.0f}" if r and r.get("ops") else f"{'-':>10s}")
    print(f"{k[0]:8s} {k[1]:8s} {k[2]:4d} " + " ".join(cells))
errs = [r for r in rows if r.get("errors") or r.get("first_error")]
for r in errs:
    print(f"errors: {r['system']} {r.get('client')} {r['workload']} c={r['conc']}: "
          f"{r.get('errors')} ({r.get('first_error')})")
print()
print("targets:", "all MET" if ok else "NOT all met",
      "(one run on a shared 2-core VM: compare within the run, repeat before concluding)")
PYEOF
echo "peers.sh: log $LOG, json $JSON, namenode log $NN_LOG"
