"""Listening on a port, for every service of the namenode and the secondary (HTTP, RPC): the
one wording of a port that cannot be bound, the check that a port is free before work a
failed bind would waste (``check_free``), and the bound port told to a supervising parent
(``announce_port``)."""

from __future__ import annotations

import os
import socket
import sys

from nnlite.namenode.errors import AddressError


def address_error(host: str, port: int, exc: OSError) -> AddressError:
    """The error for a failed bind of ``host:port``."""
    reason = os.strerror(exc.errno).lower() if exc.errno else str(exc)
    return AddressError(f"cannot listen on {host}:{port}: {reason} (is another nnlite "
                        "running there? choose another port)")


def check_free(host: str, port: int) -> None:
    """Raise ``AddressError`` now if ``host:port`` cannot be listened on (a check before work
    that a failed bind would waste; the bind itself can still fail later). The probe binds as
    the server does, with SO_REUSEADDR: the sockets a killed namenode leaves in TIME_WAIT must
    not keep its successor off the port for a minute, while a live listener still refuses."""
    if port == 0:
        return
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise address_error(host, port, exc) from exc


ANNOUNCE_ENV = "NNLITE_ANNOUNCE_PORTS"


def announce_port(key: str, port: int) -> None:
    """Tell a supervising parent (``nnlite run``, the tests) the bound port, as the line
    ``<key>=<port>`` on stderr; only when it asked by setting ``NNLITE_ANNOUNCE_PORTS``, so the
    line never reaches a user's terminal."""
    if os.environ.get(ANNOUNCE_ENV):
        print(f"{key}={port}", file=sys.stderr, flush=True)
