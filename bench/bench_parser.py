"""The HTTP server's CPU per request, in-process: bytes in, request parsed, answer encoded.

    .venv/bin/python bench/bench_parser.py [--runs 30] [--requests 10000]

One connection of ``HttpServer`` on a transport that only counts what is written, an
application that answers at once; each run feeds one request shape ``--requests`` times, one
request per read (as a client waiting for its answers sends them), and the figure is the
fastest run's time per request, and its first quartile (the machine is shared: the fastest run
is the one least disturbed). The shapes: LeanLoad's GETFILESTATUS and MKDIRS (the JVM client of
``bash bench/peers.sh``: a Host field, and a Content-Length on a PUT) and python-requests'
GETFILESTATUS (five fields). To measure another tree (``before``), put a directory holding it,
named ``nnlite``, first on PYTHONPATH, as for bench_hostile.py.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from nnlite.namenode.http import remote, server
from nnlite.namenode.http.wire import Response

SHAPES = {
    "LeanLoad GETFILESTATUS": b"GET /webhdfs/v1/bench/r/j03/d1234?op=GETFILESTATUS&user.name=bench"
                              b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    "LeanLoad MKDIRS": b"PUT /webhdfs/v1/bench/r/j03/d1234?op=MKDIRS&user.name=bench HTTP/1.1\r\n"
                       b"Host: 127.0.0.1\r\nContent-Length: 0\r\n\r\n",
    "requests GETFILESTATUS": b"GET /webhdfs/v1/?op=GETFILESTATUS&user.name=bench HTTP/1.1\r\n"
                              b"Host: 127.0.0.1:29870\r\nUser-Agent: python-requests/2.32.3\r\n"
                              b"Accept-Encoding: gzip, deflate\r\nAccept: */*\r\n"
                              b"Connection: keep-alive\r\n\r\n",
}
ANSWER = Response(200, b'{"boolean":true}', content_type=None)


class Transport:
    """What the connection needs of an asyncio transport; writes are counted, not sent."""

    def __init__(self):
        self.written = 0

    def get_extra_info(self, name):
        return ("127.0.0.1", 40000) if name == "peername" else None

    def write(self, data: bytes) -> None:
        self.written += len(data)

    def is_closing(self) -> bool:
        return False

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def per_request(http: server.HttpServer, data: bytes, requests: int) -> float:
    """Seconds per request over ``requests`` reads of ``data`` on a fresh connection."""
    conn = server._Connection(http)
    transport = Transport()
    conn.connection_made(transport)
    started = time.perf_counter()
    for _ in range(requests):
        conn.data_received(data)
    took = time.perf_counter() - started
    assert transport.written >= requests * len(ANSWER.body), "a request was not answered"
    return took / requests


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--requests", type=int, default=10_000)
    args = ap.parse_args()
    http = server.HttpServer(lambda request: ANSWER, remote.parse_error_response)
    tree = os.path.dirname(os.path.dirname(os.path.dirname(server.__file__)))
    print(f"# tree {os.path.realpath(tree)}; load average {os.getloadavg()[0]:.1f}")
    print("| request | fastest µs | first quartile µs |")
    print("|---|---|---|")
    for name, data in SHAPES.items():
        runs = sorted(per_request(http, data, args.requests) for _ in range(args.runs))
        print(f"| {name} | {runs[0] * 1e6:.2f} | {runs[len(runs) // 4] * 1e6:.2f} |", flush=True)
    print(f"# load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
