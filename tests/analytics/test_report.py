"""The report's units: a chart's axis is in the unit its data reaches."""

from __future__ import annotations

from nnlite.analytics.report import in_unit


def test_the_axis_unit_follows_the_data():
    assert in_unit([0, 300, 900]) == ([0, 300, 900], "B")
    assert in_unit([2048, 512]) == ([2.0, 0.5], "KiB")
    assert in_unit([3 << 30, 1 << 29]) == ([3.0, 0.5], "GiB")
    assert in_unit([]) == ([], "B")
    assert in_unit([5 << 50])[1] == "TiB"
