"""Child process for the service crash test: concurrent WebHDFS MKDIRS over kept-alive HTTP.

Usage: python -m tests.namenode.service_load PORT ROUND CONNECTIONS [USER]

Prints ``READY`` once every connection is open. Thread t then sends, one after the other,
``PUT /webhdfs/v1/r{ROUND}/t{t}/d{i}?op=MKDIRS`` for i = 0, 1, 2, ... on its own connection
and prints ``ACK <path>`` only after the answer was read in full and was exactly 200
``{"boolean":true}``: a printed path is an acknowledged op. Any other answer is printed as
``ERR <path> <status> <body>`` and stops the thread. A broken connection (the namenode was
killed) stops the thread silently, the request in flight unacknowledged. The process exits
when every thread has stopped, or after DEADLINE seconds at the latest.
"""

from __future__ import annotations

import http.client
import sys
import threading
import time

DEADLINE = 60.0
ACK_BODY = b'{"boolean":true}'

_out = threading.Lock()


def emit(line: str) -> None:
    with _out:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def work(conn: http.client.HTTPConnection, round_no: str, t: int, user: str,
         stop_at: float) -> None:
    i = 0
    while time.monotonic() < stop_at:
        path = f"/r{round_no}/t{t}/d{i}"
        try:
            conn.request("PUT", f"/webhdfs/v1{path}?op=MKDIRS&user.name={user}")
            resp = conn.getresponse()
            body = resp.read()
        except (OSError, http.client.HTTPException):
            return   # the server is gone: this request stays unacknowledged
        if resp.status != 200 or body != ACK_BODY:
            emit(f"ERR {path} {resp.status} {body[:300]!r}")
            return
        emit(f"ACK {path}")
        i += 1


def main() -> None:
    port, round_no, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    user = sys.argv[4] if len(sys.argv) > 4 else "tester"
    conns = [http.client.HTTPConnection("127.0.0.1", port, timeout=20) for _ in range(count)]
    for conn in conns:
        conn.connect()
    stop_at = time.monotonic() + DEADLINE
    threads = [threading.Thread(target=work, args=(c, round_no, t, user, stop_at))
               for t, c in enumerate(conns)]
    emit("READY")
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


if __name__ == "__main__":
    main()
