"""display.py: the ``hdfs dfs`` text layouts (sizes, ``ls``, ``stat``, ``du``, ``count``,
xattrs)."""

from __future__ import annotations

from datetime import UTC

import pytest

from nnlite.client import display


@pytest.mark.parametrize("n, text", [
    (0, "0"), (1023, "1023"), (1024, "1 K"), (1536, "1.5 K"), (10 << 20, "10 M"),
    ((1 << 20) - 1, "1.0 M"), (3 << 30, "3 G"), (int(2.25 * (1 << 40)), "2.3 T"),
    (-2048, "-2 K"),
])
def test_human_sizes(n, text):
    assert display.size(n, human=True) == text
    assert display.size(n) == str(n)


def status(**kw) -> dict:
    base = {"type": "FILE", "permission": "644", "replication": 3, "owner": "alice",
            "group": "staff", "length": 1536, "modificationTime": 1_795_000_000_000,
            "accessTime": 1_794_000_000_000, "blockSize": 134217728, "pathSuffix": ""}
    return {**base, **kw}


def test_ls_layout():
    events = [display.Listed((status(), status(type="DIRECTORY", owner="hdfs-admin", length=0,
                                          replication=0, permission="1777")), True),
              display.Entry("/d/f", status()),
              display.Entry("/d/tmp", status(type="DIRECTORY", owner="hdfs-admin", length=0,
                                       replication=0, permission="1777")),
              display.Listed((status(length=12345678901, replication=12),), False),
              display.Entry("/big", status(length=12345678901, replication=12))]
    assert list(display.ls_lines(events, tz=UTC)) == [
        "Found 2 items",
        "-rw-r--r--   3 alice      staff       1536 2026-11-18 11:06 /d/f",
        "drwxrwxrwt   - hdfs-admin staff          0 2026-11-18 11:06 /d/tmp",
        "-rw-r--r--  12 alice      staff 12345678901 2026-11-18 11:06 /big",
    ]


def test_stat_line():
    st = status()
    assert display.stat_line("%y", "/d/f", st) == "2026-11-18 11:06:40"
    assert display.stat_line("%n %b %o %r %u %g %Y %X %F %a %A %x", "/d/f", st) == (
        "f 1536 134217728 3 alice staff 1795000000000 1794000000000 regular file 644 "
        "rw-r--r-- 2026-11-06 21:20:00")
    assert display.stat_line("%F:%n:%%:%z:%", "/", status(type="DIRECTORY")) == "directory::%:z:"


def test_du_and_count_layouts():
    rows = [("/a", {"length": 5, "spaceConsumed": 15}),
            ("/bb", {"length": 123456, "spaceConsumed": 370368})]
    assert display.du_lines(rows) == ["5       15      /a", "123456  370368  /bb"]
    assert display.du_lines([]) == [] and display.du_lines([], header=True) == []
    summary = {"directoryCount": 3, "fileCount": 7, "length": 2048, "quota": 100,
               "spaceQuota": 4096, "spaceConsumed": 1024}
    assert display.count_line("/q", summary) == \
        "           3            7               2048 /q"
    assert display.count_line("/q", summary, quota=True, human=True) == (
        "         100              90             4 K             3 K "
        "           3            7                2 K /q")
    assert display.count_header(False) == "   DIR_COUNT   FILE_COUNT       CONTENT_SIZE PATHNAME"


def test_xattr_lines():
    assert list(display.xattr_lines("/p", [{"name": "user.a", "value": '"x"'},
                                     {"name": "user.b", "value": None}])) == [
        "# file: /p", 'user.a="x"', "user.b"]
