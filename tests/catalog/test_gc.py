"""What ``catalog gc`` removes and what it keeps, and why (``others.plan_gc``), on an
in-memory namespace whose every file was written at ``CLOCK_MS``; and how it is printed."""

from __future__ import annotations

from nnlite.catalog import display, others
from tests.namenode.helpers import CLIENT, CLOCK_MS, SUPER, new_ns, write_file

HOUR, WEEK = 3_600_000, 7 * 86_400_000
TEMP = "/ckpt/q1/offsets/.3.1f2e.tmp"


def namespace():
    ns = new_ns()
    write_file(ns, "/ckpt/q1/offsets/0", sizes=(10,))
    write_file(ns, TEMP, sizes=(22,))
    ns.create("/ckpt/q1/offsets/.4.9a0b.tmp", SUPER, client_name=CLIENT)     # still open
    write_file(ns, "/rdd/7a1e/rdd-3/part-00000", sizes=(5,))
    return ns


def plan(ns, now_ms: int, **kw):
    return others.plan_gc(ns.tree.root, "/", now_ms, HOUR, WEEK, **kw)


def test_what_is_younger_than_its_ttl_is_kept_with_the_time_it_becomes_removable():
    removed, kept = plan(namespace(), CLOCK_MS + 60_000)
    assert removed == []
    assert [(k["path"], k["reason"], k["why"], k.get("removableAt")) for k in kept] == [
        ("/ckpt/q1/offsets/.3.1f2e.tmp", "temporary file", "young", CLOCK_MS + HOUR),
        ("/ckpt/q1/offsets/.4.9a0b.tmp", "temporary file", "writing", None),
        ("/rdd/7a1e", "RDD checkpoint", "young", CLOCK_MS + WEEK)]
    assert kept[0]["setting"] == "nnlite.catalog.gc.tmp-ttl" and kept[0]["bytes"] == 22


def test_past_its_ttl_it_is_removed_and_an_open_file_still_stays():
    removed, kept = plan(namespace(), CLOCK_MS + WEEK)
    assert [(r["path"], r["reason"], r["bytes"]) for r in removed] == [
        (TEMP, "orphan temporary file", 22), ("/rdd/7a1e", "abandoned RDD checkpoint", 5)]
    assert [(k["path"], k["why"]) for k in kept] == [("/ckpt/q1/offsets/.4.9a0b.tmp",
                                                      "writing")]


def test_what_the_caller_may_not_delete_is_kept_and_said_so():
    removed, kept = plan(namespace(), CLOCK_MS + WEEK, can_delete=lambda p: p != TEMP)
    assert [r["path"] for r in removed] == ["/rdd/7a1e"]
    assert (kept[0]["path"], kept[0]["why"]) == (TEMP, "denied")


def test_gc_prints_what_it_kept_and_until_when():
    _, kept = plan(namespace(), CLOCK_MS + 60_000)
    doc = {"root": "/", "dryRun": False, "removed": [], "kept": kept, "bytesFreed": 0,
           "bytesKeptBySnapshots": 0}
    lines = display.change_line("gc", doc).splitlines()
    assert lines[0] == (f"kept {TEMP} (temporary file, 22 B): last changed "
                        f"{display._when(CLOCK_MS)}, less than nnlite.catalog.gc.tmp-ttl = 1 h "
                        f"ago; gc removes it from {display._when(CLOCK_MS + HOUR)}")
    assert lines[1].endswith("(temporary file, 0 B): still being written")
    assert "nnlite.catalog.gc.rdd-ttl = 7 d" in lines[2]
    assert lines[-1] == "removed 0 paths, 0 B freed; kept 3 (see above)"
