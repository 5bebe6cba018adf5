"""The one wording of a port that cannot be listened on (namenode/listen.py)."""

from __future__ import annotations

import errno
import socket

from nnlite.namenode.errors import AddressError
from nnlite.namenode.listen import address_error


def test_a_taken_port_is_named_with_the_reason_and_what_to_do():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with socket.socket() as second:
            try:
                second.bind(("127.0.0.1", port))
            except OSError as exc:
                error = address_error("127.0.0.1", port, exc)
    assert isinstance(error, AddressError)
    assert str(error) == (f"cannot listen on 127.0.0.1:{port}: address already in use (is "
                          "another nnlite running there? choose another port)")


def test_an_error_without_errno_keeps_its_text():
    error = address_error("example.invalid", 9870, OSError("no such host"))
    assert str(error).startswith("cannot listen on example.invalid:9870: no such host (")
    assert address_error("h", 1, OSError(errno.EACCES, "x")).args[0].startswith(
        "cannot listen on h:1: permission denied")
