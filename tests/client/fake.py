"""A scripted fake namenode for the client's tests: ``FakeNamenode(script)`` answers each
request with the next ``(raw reply, close after it)``, to play stale keep-alive connections,
redirects, older namenodes and peers that are not namenodes at all."""

from __future__ import annotations

import json
import socket
import threading


def reply(status: int, body: bytes = b"", headers: str = "") -> bytes:
    return (f"HTTP/1.1 {status} X\r\nContent-Length: {len(body)}\r\n{headers}\r\n").encode() \
        + body


class FakeNamenode:
    """Answers each request with the next scripted ``(raw reply, close after it)``; a close
    is silent (no ``Connection: close``), as an idle timeout on the server side is."""

    def __init__(self, script: list[tuple[bytes, bool]]):
        self.script = list(script)
        self.requests: list[bytes] = []
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:             # closed: the test is over
                return
            self.connections += 1
            with conn:
                while self.script and self._answer(conn):
                    pass

    def _answer(self, conn) -> bool:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return False
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        while len(body) < length:
            body += conn.recv(65536)
        self.requests.append(head.split(b"\r\n")[0] + b" " + body)
        raw, close = self.script.pop(0)
        conn.sendall(raw)
        return not close

    def close(self) -> None:
        self.sock.close()


STATUS = b'{"FileStatus":{"type":"DIRECTORY","pathSuffix":""}}'


def remote_exception(status: int, java_class: str, message: str) -> bytes:
    body = json.dumps({"RemoteException": {"exception": java_class.rsplit(".", 1)[-1],
                                           "javaClassName": java_class, "message": message}})
    return reply(status, body.encode())


UNKNOWN_CREATE = remote_exception(
    400, "java.lang.IllegalArgumentException", 'Invalid value for webhdfs parameter "op": No '
    "enum constant org.apache.hadoop.hdfs.web.resources.PutOpParam.Op.CREATE")
