"""Caches keyed by what clients send are bounded in bytes: thousands of distinct, long
``user.name`` values leave the namenode's memory where it was."""

from __future__ import annotations

import requests


def test_distinct_long_user_names_do_not_grow_the_namenode(start_namenode):
    nn = start_namenode()
    with requests.Session() as http:
        for i in range(200):                          # warm up allocator and caches
            http.get(nn.webhdfs("/"), params={"op": "GETFILESTATUS", "user.name": f"u{i}"})
        before = nn.rss()
        for i in range(3000):
            name = f"u{i:05d}" + "x" * 60_000         # a valid, 60 KiB user name
            r = http.get(nn.webhdfs("/"), params={"op": "GETFILESTATUS",
                                                   "user.name": name})
            assert r.status_code == 200
        grown = nn.rss() - before
    assert grown < 40 << 20, f"the namenode grew by {grown >> 20} MiB"     # 3000 x 60 KiB = 176
