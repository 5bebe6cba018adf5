"""A TCP relay in front of a real namenode that damages response bodies, one way per proxy:
``cut_after=N`` closes the connection after N bytes of the body; ``flip_at=N`` inverts the
body byte at offset N. Requests pass through untouched."""

from __future__ import annotations

import contextlib
import socket
import threading


class DamagingProxy:
    def __init__(self, port: int, *, cut_after: int | None = None,
                 flip_at: int | None = None):
        self.target = ("127.0.0.1", port)
        self.cut_after = cut_after
        self.flip_at = flip_at
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.05)
        self.closed = False
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.threads: list[threading.Thread] = []
        self._spawn(self._accept)

    def _spawn(self, fn, *args) -> None:
        thread = threading.Thread(target=fn, args=args, daemon=True)
        thread.start()
        self.threads.append(thread)

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.settimeout(None)
            upstream = socket.create_connection(self.target)
            self._spawn(_pump, client, upstream)
            self._spawn(self._answer, upstream, client)

    def _answer(self, upstream: socket.socket, client: socket.socket) -> None:
        """Relay one response, damaging its body; then close both sides."""
        head, body_seen = b"", None
        try:
            while data := upstream.recv(65536):
                if body_seen is None:
                    head += data
                    end = head.find(b"\r\n\r\n")
                    if end < 0:
                        continue
                    data, body_seen = head[end + 4:], 0
                    client.sendall(head[:end + 4])
                data = bytearray(data)
                if self.flip_at is not None and body_seen <= self.flip_at < body_seen + len(data):
                    data[self.flip_at - body_seen] ^= 0xFF
                if self.cut_after is not None and body_seen + len(data) >= self.cut_after:
                    client.sendall(data[:self.cut_after - body_seen])
                    return
                client.sendall(data)
                body_seen += len(data)
        except OSError:
            pass
        finally:
            for sock in (client, upstream):     # shutdown wakes the other relay thread
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()

    def close(self) -> None:
        self.closed = True
        self.listener.close()
        for thread in self.threads:
            thread.join(5)


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
        dst.shutdown(socket.SHUT_WR)      # the client is done: let the namenode close
    except OSError:
        pass
