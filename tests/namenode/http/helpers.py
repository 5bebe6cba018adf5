"""Helpers for the HTTP tests: a WebHDFS client on ``http.client`` (it sends the path exactly
as given: nothing is normalised or re-encoded), raw socket exchanges for requests no client
library would send, and for the data path the two WebHDFS steps over ``http.client`` and a look
at the server's data directory.

The namenodes come from the fixtures of tests/conftest.py (``start_module_namenode(...,
files=...)`` seeds files with blocks into the name dir offline, before the service starts).
Users, as there: "tester" is in the supergroup, "alice" in "staff", everyone else ("bob") is a
plain user.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode, urlsplit

from tests import servers
from tests.servers import NamenodeProcess

BLOCK = 1024        # the data tests' block size: a few KiB make a multi-block file
FILE_STATUS_KEYS = {"accessTime", "blockSize", "childrenNum", "fileId", "group", "length",
                    "modificationTime", "owner", "pathSuffix", "permission", "replication",
                    "storagePolicy", "type"}


# ------------------------------------------------------------------------------- requests

@dataclass
class Reply:
    status: int
    headers: dict
    body: bytes

    @property
    def json(self):
        return json.loads(self.body)

    @property
    def error(self) -> tuple[int, str]:
        """(status, exception name) of a RemoteException, checking its exact shape."""
        remote = self.json["RemoteException"]
        assert set(remote) == {"exception", "javaClassName", "message"}, remote
        assert remote["javaClassName"].rsplit(".", 1)[-1] == remote["exception"]
        return self.status, remote["exception"]

    @property
    def java_class(self) -> str:
        return self.json["RemoteException"]["javaClassName"]

    @property
    def message(self) -> str:
        return self.json["RemoteException"]["message"]


def send(host: str, port: int, method: str, target: str, body: bytes | None = None,
         headers=None, *, timeout: float) -> Reply:
    """One request on a connection of its own, the target sent exactly as given."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request(method, target, body=body, headers=headers or {})
        resp = conn.getresponse()
        return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


class WebHdfs:
    """``call("PUT", "/a", "MKDIRS", permission="700")``; ``user=None`` sends no user.name.
    A list value repeats the parameter. ``query`` (raw text) replaces the encoded params."""

    def __init__(self, server: NamenodeProcess):
        self.port = server.port

    def call(self, method: str, path: str, op: str | None = None, *, user: str | None = "tester",
             query: str | None = None, body: bytes | None = None, headers=None,
             **params) -> Reply:
        if query is None:
            items = ([("op", op)] if op else []) + ([("user.name", user)] if user else [])
            items += [(k.replace("_", "."), v) for k, v in params.items()]
            query = urlencode(items, doseq=True)
        return self.raw(method, "/webhdfs/v1" + quote(path, safe="/") + "?" + query, body,
                        headers)

    def raw(self, method: str, target: str, body: bytes | None = None, headers=None) -> Reply:
        return send("127.0.0.1", self.port, method, target, body, headers, timeout=10)

    def get(self, path: str, op: str, **kw) -> Reply:
        return self.call("GET", path, op, **kw)

    def put(self, path: str, op: str, **kw) -> Reply:
        return self.call("PUT", path, op, **kw)

    def delete(self, path: str, **kw) -> Reply:
        return self.call("DELETE", path, "DELETE", **kw)

    def status(self, path: str, **kw) -> dict:
        reply = self.get(path, "GETFILESTATUS", **kw)
        assert reply.status == 200, reply
        return reply.json["FileStatus"]

    def names(self, path: str) -> list[str]:
        reply = self.get(path, "LISTSTATUS")
        assert reply.status == 200, reply
        return [s["pathSuffix"] for s in reply.json["FileStatuses"]["FileStatus"]]

    def mkdirs(self, path: str, **kw) -> None:
        reply = self.put(path, "MKDIRS", **kw)
        assert (reply.status, reply.json) == (200, {"boolean": True}), reply

    def alive(self) -> bool:
        """The service still answers a plain request correctly."""
        reply = self.get("/", "GETFILESTATUS")
        return reply.status == 200 and reply.json["FileStatus"]["type"] == "DIRECTORY"


def exchange(port: int, data: bytes, *, timeout: float = 5, shut: bool = False) -> bytes:
    """Send raw bytes, read until the server closes (or ``timeout``); ``shut`` half-closes
    our side after sending. A reset after the server's answer is not an error here."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(data)
        if shut:
            sock.shutdown(socket.SHUT_WR)
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except (TimeoutError, ConnectionResetError):
            pass
        return out


def parse_replies(data: bytes) -> list[tuple[int, bytes]]:
    """Split raw HTTP/1.1 answers (Content-Length framed) into (status, body) pairs."""
    replies = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        assert sep, data[:200]
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        length = next(int(v) for k, _, v in (ln.partition(": ") for ln in lines[1:])
                      if k.lower() == "content-length")
        replies.append((status, rest[:length]))
        data = rest[length:]
    return replies


# ------------------------------------------------------------------------------- the data path

def request(method: str, url: str, body=None, headers=None) -> Reply:
    """One request to an absolute URL (a Location), the target sent exactly as given."""
    parts = urlsplit(url)
    target = parts.path + ("?" + parts.query if parts.query else "")
    return send(parts.hostname, parts.port, method, target, body, headers, timeout=20)


def upload(w, path: str, data, *, op: str = "CREATE", headers=None, **params) -> Reply:
    """Step 1 (must redirect), then the body to the Location; returns step 2's reply."""
    method = "PUT" if op == "CREATE" else "POST"
    first = w.call(method, path, op, **params)
    assert first.status == 307, first
    return request(method, first.headers["location"], data, headers)


def read(w, path: str, **params) -> bytes:
    first = w.call("GET", path, "OPEN", **params)
    assert first.status == 307, first
    second = request("GET", first.headers["location"])
    assert second.status == 200, second
    return second.body


def raw_upload_start(server, path: str, query: str) -> socket.socket:
    """Start a chunked data-step PUT by hand and leave it open."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    sock.sendall(f"PUT /data/v1{path}?{query} HTTP/1.1\r\nHost: x\r\n"
                 "Transfer-Encoding: chunked\r\n\r\n".encode())
    return sock


def send_chunk(sock: socket.socket, data: bytes) -> None:
    sock.sendall(b"%x\r\n" % len(data) + data + b"\r\n")


def end_upload(sock: socket.socket) -> tuple[int, bytes]:
    sock.sendall(b"0\r\n\r\n")
    reply = b""
    while b"\r\n\r\n" not in reply:
        reply += sock.recv(65536)
    head, _, body = reply.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length")))
    while len(body) < length:
        body += sock.recv(65536)
    sock.close()
    return int(head.split(b" ")[1]), body


def data_dir(server) -> Path:
    return Path(server.name_dirs[0] + "-data")


def block_files(server) -> set[str]:
    return {p.name for p in (data_dir(server) / "blocks").rglob("blk_*")}


def tmp_files(server) -> list[str]:
    return [p.name for p in (data_dir(server) / "tmp").iterdir()]


def wait_for(predicate, timeout: float = 5.0, what: str = "condition"):
    """tests/servers.py's wait_for with the data tests' defaults: 5 s, polled every 50 ms."""
    return servers.wait_for(predicate, timeout, what, interval=0.05)
