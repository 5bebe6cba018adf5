#!/usr/bin/env bash
# nnlite against ZooKeeper and etcd on this machine, from this repository alone: the harness is
# bench/peers/ (run.py's docstring says what it measures), the peers Debian's packages.
#
#   bash bench/peers_setup.sh                  # once per machine, as root
#   bash bench/peers.sh                        # every row, about 3 minutes
#   bash bench/peers.sh --headline --rounds 3  # creates at 32 and lookups at 8, three times
#   bash bench/peers.sh --nn-tree OTHER_TREE   # another checkout's namenode, for an A/B
#   bash bench/peers.sh --systems nnlite,nnlite-rpc,zookeeper,etcd --headline
#                                              # hdfs:// (DistributedFileSystem) vs WebHDFS
#   bash bench/peers.sh --help                 # every option
#
# Env: NN_PYTHON, the Python running the harness (stdlib only; default the repo's .venv).
# Output: bench/out/peers-<UTC time>/ (report.txt, results.json, the servers' logs).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=${NN_PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=$(command -v python3)
exec "$PY" "$ROOT/bench/peers/run.py" "$@"
