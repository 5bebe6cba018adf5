"""Experiments on the write path of an HA namenode, for the proposals in BENCHMARKS.md's "High
availability": each one a change measured before anyone writes it into namenode/. Installed as
the namenodes' sitecustomize (``bash bench/peers.sh --nn-sitecustomize
bench/peers/ha_experiments.py``) and chosen by the environment variable
``NNLITE_HA_EXPERIMENT``, a comma-separated list; unset or empty, nothing changes:

``switch=SECONDS``
    ``sys.setswitchinterval(SECONDS)``: how long a thread that wants the GIL back (the sync
    thread, after each socket call to etcd and after its fdatasync) may wait for the busy
    event loop to give it up (Python's default is 5 ms).

The batching changes this file measured first (``linger``, ``overlap``) are in
``namenode/journal/journal.py`` now (issue 33); an experiment here is a measurement, not the
way to build the change.
"""

from __future__ import annotations

import os
import sys


def experiments() -> dict[str, str]:
    chosen = {}
    for item in os.environ.get("NNLITE_HA_EXPERIMENT", "").split(","):
        name, _, value = item.strip().partition("=")
        if name:
            chosen[name] = value
    return chosen


def install() -> None:
    chosen = experiments()
    if "switch" in chosen:
        sys.setswitchinterval(float(chosen["switch"]))
    if chosen:
        print(f"ha_experiments: {chosen}", file=sys.stderr, flush=True)


install()
