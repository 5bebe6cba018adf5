"""``nnlite catalog watch --namenode ns1`` (catalog/watch.py over the failover client) on a real
HA set: the mirror follows the active namenode across a SIGKILL of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nnlite.client.webhdfs import WebHdfsClient
from tests.commands.helpers import nnlite, ok

pytestmark = pytest.mark.crash


def write_batch(root: Path, n: int) -> None:
    """A Structured Streaming batch as the query leaves it: offsets, then the commit."""
    for rel, text in (("metadata", json.dumps({"id": "q"})),
                      (f"offsets/{n}", f'v1\n{{"batchId":{n}}}\n{{"logOffset":{n}}}'),
                      (f"commits/{n}", 'v1\n{"nextBatchWatermarkMs":0}')):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_watcher_follows_the_active(haset, tmp_path):
    active = haset.start_all()
    local = tmp_path / "ckpt"
    watch = ["catalog", "watch", str(local), "--into", "/mirror/q", "--once",
             "--namenode", "ns1", "--conf", str(haset.conf)]
    write_batch(local, 0)
    ok(nnlite(None, *watch))
    haset.kill(active)
    write_batch(local, 1)
    ok(nnlite(None, *watch))
    with WebHdfsClient(haset.url(haset.active()), "tester") as client:
        assert [s["pathSuffix"] for s in client.list("/mirror/q/commits")] == ["0", "1"]
