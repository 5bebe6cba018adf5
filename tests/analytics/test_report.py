"""The report's units (a chart's axis is in the unit its data reaches) and names (each
checkpoint kind is called what it is)."""

from __future__ import annotations

from types import SimpleNamespace

import pyarrow as pa

from nnlite.analytics.analyze import Analysis
from nnlite.analytics.report import TITLES, header_lines, in_unit, summary, text_table


def test_the_axis_unit_follows_the_data():
    assert in_unit([0, 300, 900]) == ([0, 300, 900], "B")
    assert in_unit([2048, 512]) == ([2.0, 0.5], "KiB")
    assert in_unit([3 << 30, 1 << 29]) == ([3.0, 0.5], "GiB")
    assert in_unit([]) == ([], "B")
    assert in_unit([5 << 50])[1] == "TiB"


def checkpoints_analysis() -> Analysis:
    table = pa.table({"path": ["/flink/ckpt/job", "/flink/sp/savepoint-1", "/spark/q", "/r"],
                      "kind": ["flink", "savepoint", "streaming", "flink"],
                      "files": [3, 1, 9, 2], "bytes": [300, 10, 90, 20],
                      "raw_bytes": [900, 30, 270, 60], "last_modified": [1, 1, 1, 1]})
    totals = {"files": 15, "dirs": 5, "max_depth": 3, "bytes": 420, "raw_bytes": 1260,
              "small_files": 15, "small_bytes": 420, "under_construction": 0,
              "checkpoints": 4, "checkpoint_bytes": 420}
    meta = SimpleNamespace(namespace_id=1, last_txid=9, inode_count=20)
    return Analysis("fsimage", meta, 0, 1 << 20, 10, totals, {"checkpoints": table})


def test_each_checkpoint_kind_is_named_for_what_it_is():
    a = checkpoints_analysis()
    assert header_lines(a)[-1] == ("4 checkpoints holding 420 B (2 Flink job, 1 Flink "
                                   "savepoint, 1 Spark Structured Streaming)")
    assert TITLES["checkpoints"] == ("Spark and Flink checkpoints (as nnlite catalog ls lists "
                                     "them)")
    rows = text_table(a.tables["checkpoints"]).splitlines()[2:]
    for row, name in zip(rows, ("Flink job", "Flink savepoint", "Spark Structured Streaming",
                                "Flink job"), strict=True):
        assert f"  {name}  " in row
    assert "Spark checkpoint" not in summary(a)
