"""The one rule that says what kind of checkpoint a directory holds (``layout.classify``),
which both the catalog and ``nnlite analyze`` apply."""

from __future__ import annotations

import re

import pytest

from nnlite.catalog import layout


@pytest.mark.parametrize("entries, pinned, kind", [
    ([("offsets", True), ("commits", True)], False, "streaming"),
    ([("offsets", True), ("metadata", False)], False, "streaming"),     # nothing committed yet
    ([("offsets", True)], True, "streaming"),                          # known by its pins
    ([("offsets", True)], False, None),
    ([("chk-3.inprogress", True)], False, "job"),
    ([("chk-3", False)], False, None),                                 # a file is not one
    ([("rdd-12", True), ("rdd-old", True)], False, "rdd"),
    ([("checkpoint-1700000000000.bk", False)], False, "dstream"),
    ([("checkpoint-1700000000000", True)], False, None),
    ([("offsets", True), ("commits", True), ("rdd-1", True)], False, "streaming"),
    ([("shared", True), ("taskowned", True)], False, "flink"),            # before any chk-<n>
    ([("shared", True), ("taskowned", True), ("chk-7", True)], False, "flink"),
    ([("shared", True), ("chk-7", True)], False, "job"),
    ([("_metadata", False), ("2ceac959", False)], False, "savepoint"),
    ([("_metadata", True)], False, None),
])
def test_classify(entries, pinned, kind):
    assert layout.classify(entries, pinned) == kind


def test_names_outside_the_marker_pattern_never_classify():
    names = ["offsets", "metadata", "commits", "chk-1", "chk-1.inprogress", "rdd-1",
             "checkpoint-1", "checkpoint-1.bk", "shared", "taskowned", "_metadata"]
    assert all(re.match(layout.MARKER_PATTERN, n) for n in names)
    for other in ("offsets.tmp", "chk-", "rdd-x", "checkpoint-1.tmp", "state"):
        assert not re.match(layout.MARKER_PATTERN, other)
        assert layout.classify([(other, True), (other, False)]) is None
