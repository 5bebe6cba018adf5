"""LISTSTATUS of a large directory, streamed a page at a time (webhdfs.py): the answer every
client reads is the whole listing, and clients that ask for it and never read cannot make
the namenode hold it for them."""

from __future__ import annotations

import getpass
import socket
import time

import requests

from nnlite.namenode.fsnamesystem import FSNamesystem, format_dirs
from nnlite.namenode.storage.namedir import NameDir

WIDE = "/wide"


def wide_directory(name_dir: str, children: int) -> None:
    """A formatted name dir whose image holds ``WIDE`` with ``children`` subdirectories."""
    format_dirs([NameDir(name_dir)])
    with FSNamesystem.open([name_dir]) as fs:
        for i in range(children):
            logged = fs.mkdirs(f"{WIDE}/c{i:06d}", 0o755, getpass.getuser())
        fs.durable(logged)
        fs.set_safe_mode(True)
        fs.save_namespace()


def never_reading_listers(port: int, clients: int = 20, each: int = 5) -> list:
    """``clients`` connections, each with ``each`` LISTSTATUS of WIDE pipelined and a small
    receive buffer, none of which will ever read an answer. The caller closes them."""
    request = f"GET /webhdfs/v1{WIDE}?op=LISTSTATUS HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    sockets = []
    for _ in range(clients):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", port))
        s.sendall(request * each)
        sockets.append(s)
    return sockets


def test_a_listing_larger_than_a_page_is_streamed_whole(tmp_path, start_namenode):
    name = str(tmp_path / "name")
    wide_directory(name, 2500)
    nn = start_namenode("-D", "dfs.ls.limit=1000", name_dirs=[name])
    with requests.Session() as http:
        r = http.get(nn.webhdfs(WIDE), params={"op": "LISTSTATUS"})
        assert r.status_code == 200 and r.headers["Transfer-Encoding"] == "chunked"
        names = [s["pathSuffix"] for s in r.json()["FileStatuses"]["FileStatus"]]
        assert names == [f"c{i:06d}" for i in range(2500)]
        # the connection stays usable after a chunked answer
        assert http.get(nn.webhdfs(WIDE), params={"op": "GETFILESTATUS"}).json()[
            "FileStatus"]["childrenNum"] == 2500
        small = http.get(nn.webhdfs(f"{WIDE}/c000001"), params={"op": "LISTSTATUS"})
        assert "Content-Length" in small.headers          # one page: answered at once


def test_clients_that_never_read_their_listings_cannot_grow_the_namenode(tmp_path,
                                                                         start_namenode):
    """20 connections each pipeline 5 LISTSTATUS of a 100,000-child directory (about 24 MB
    of JSON each) and read nothing: the namenode produces a page only when the one before
    was taken, so it holds a page per connection, not 100 listings; another client is
    answered meanwhile."""
    name = str(tmp_path / "name")
    wide_directory(name, 100_000)
    nn = start_namenode(name_dirs=[name])
    sockets = []
    try:
        with requests.Session() as http:
            assert http.get(nn.webhdfs(WIDE), params={"op": "GETFILESTATUS"}).ok
        before = nn.rss()
        sockets = never_reading_listers(nn.port)
        time.sleep(3)       # the listers' time to pile up pages: the claim is a bound, no state
        with requests.Session() as http:
            r = http.get(nn.webhdfs(f"{WIDE}/c000042"), params={"op": "GETFILESTATUS"},
                         timeout=10)
            assert r.status_code == 200
        grown = nn.rss() - before
        assert grown < 80 << 20, f"the namenode grew by {grown >> 20} MiB"
    finally:
        for s in sockets:
            s.close()
