"""Request bodies are held within a budget across all connections, and every request has a
deadline: clients that send almost a whole body and stop, or trickle bytes, cannot take the
namenode's memory or hold its connections for long."""

from __future__ import annotations

import contextlib
import socket
import time

import requests

from tests.servers import wait_for

ALMOST = 1_000_000          # of a 1,048,576-byte body (nnlite.http.max-body)


def answer(s: socket.socket, timeout: float = 10) -> bytes:
    s.settimeout(timeout)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return data


def test_almost_complete_bodies_are_held_within_the_budget(start_namenode):
    nn = start_namenode("-D", "nnlite.http.body-budget=16777216")     # 16 MiB
    held, refused = [], []
    try:
        before = nn.rss()
        head = (b"PUT /webhdfs/v1/x?op=MKDIRS&user.name=root HTTP/1.1\r\nHost: h\r\n"
                b"Content-Length: 1048576\r\n\r\n")
        for _ in range(200):
            s = socket.create_connection(("127.0.0.1", nn.port))
            with contextlib.suppress(OSError):
                s.sendall(head + b"\0" * ALMOST)
            held.append(s)
        for s in held:
            s.setblocking(False)

        def answered_503() -> bool:
            """Read what has come on each connection not refused yet; enough refused?"""
            for s in held:
                if s in refused:
                    continue
                try:
                    if s.recv(65536).startswith(b"HTTP/1.1 503"):
                        refused.append(s)
                except (BlockingIOError, ConnectionResetError):
                    pass
            return len(refused) >= 150                     # ~16 fit in the budget
        wait_for(answered_503, 60, "the connections past the budget to be answered 503")
        grown = nn.rss() - before
        r = requests.get(nn.webhdfs("/"), params={"op": "GETFILESTATUS"}, timeout=10)
        assert r.status_code == 200
    finally:
        for s in held:
            s.close()
    assert grown < 60 << 20, f"the namenode grew by {grown >> 20} MiB"   # 200 MB unbounded


def test_a_request_that_trickles_in_is_answered_408_at_its_deadline(start_namenode):
    nn = start_namenode("-D", "nnlite.http.request-timeout=2")
    s = socket.create_connection(("127.0.0.1", nn.port))
    started = time.monotonic()
    request = b"GET /webhdfs/v1/?op=GETFILESTATUS HTTP/1.1\r\nHost: h\r\nX-Slow: "
    s.settimeout(0.3)
    reply = b""
    for i in range(200):                        # one byte every 0.1 s: never idle
        try:
            s.send(request[i % len(request):i % len(request) + 1])
        except OSError:
            break
        try:
            reply = s.recv(65536)
            if reply:
                break
        except TimeoutError:
            pass
    took = time.monotonic() - started
    s.close()
    assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
    assert b"nnlite.http.request-timeout" in reply
    assert took < 10
