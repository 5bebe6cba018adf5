"""Listening on a port, for every service of the namenode (HTTP, RPC): the one wording of a
port that cannot be bound."""

from __future__ import annotations

import os

from nnlite.namenode.errors import AddressError


def address_error(host: str, port: int, exc: OSError) -> AddressError:
    """The error for a failed bind of ``host:port``."""
    reason = os.strerror(exc.errno).lower() if exc.errno else str(exc)
    return AddressError(f"cannot listen on {host}:{port}: {reason} (is another nnlite "
                        "running there? choose another port)")
