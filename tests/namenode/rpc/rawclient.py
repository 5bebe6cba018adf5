"""A Hadoop IPC client on a plain socket, speaking ``formats/hadoop/ipc.py``: for the tests
that send what no real client sends (bad preambles, cut frames, unknown methods)."""

from __future__ import annotations

import socket
import uuid

from nnlite.formats.hadoop import client_namenode, ipc
from nnlite.formats.hadoop.proto import parse_delimited

CLIENT_ID = uuid.uuid4().bytes


class RawClient:
    def __init__(self, port: int, timeout: float = 10) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.call_id = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def connect(self, user: str = "tester", real_user: str | None = None,
                protocol: str = client_namenode.PROTOCOL) -> RawClient:
        self.send(ipc.Preamble(ipc.VERSION, 0, ipc.AUTH_NONE).to_bytes())
        self.send(ipc.connection_context(CLIENT_ID, protocol, user, real_user))
        return self

    def call(self, method: str, message, protocol: str = client_namenode.PROTOCOL):
        """(response header, the rest of the response payload)."""
        self.call_id += 1
        self.send(ipc.request(self.call_id, CLIENT_ID, method, protocol, message))
        return self.response()

    def response(self):
        """The next response frame: (header, payload after it); None once closed."""
        prefix = self._read(4)
        if prefix is None:
            return None
        length = int.from_bytes(prefix, "big")
        payload = self._read(length)
        assert payload is not None, "the server closed the connection mid-response"
        return ipc.parse_response(payload)

    def answer(self, method: str, message):
        """The response message of a successful call."""
        header, rest = self.call(method, message)
        assert header.status == ipc.RpcResponseHeaderRpcStatusProto.SUCCESS, header
        return parse_delimited(client_namenode.METHODS[method][1], rest)[0]

    def closed(self) -> bool:
        """Whether the server closed the connection (EOF) after what was read."""
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def _read(self, n: int) -> bytes | None:
        out = bytearray()
        while len(out) < n:
            try:
                chunk = self.sock.recv(n - len(out))
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                return None if not out else bytes(out)
            out += chunk
        return bytes(out)
