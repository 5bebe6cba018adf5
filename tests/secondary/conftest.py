"""Fixtures of the secondary's tests: a real namenode process (tests/conftest.py's), its
secret, a checkpointer."""

from __future__ import annotations

import getpass
from pathlib import Path

import pytest
import requests

from nnlite.durability import faults
from nnlite.secondary.checkpointer import Checkpointer, TriggerPolicy
from nnlite.secondary.client import TransferClient
from tests.servers import NamenodeProcess


def secret_of(server: NamenodeProcess) -> str:
    """The namenode's transfer secret: its token file, <first name dir>/checkpoint.token."""
    return (Path(server.name_dirs[0]) / "checkpoint.token").read_text().strip()


def mkdirs(server: NamenodeProcess, *paths: str) -> None:
    """MKDIRS over WebHDFS, as the namenode's owner (the root belongs to it)."""
    for path in paths:
        resp = requests.put(server.webhdfs(path), params={"op": "MKDIRS",
                                                          "user.name": getpass.getuser()})
        assert resp.json() == {"boolean": True}, resp.text


def listing(server: NamenodeProcess, path: str) -> list[str]:
    resp = requests.get(server.webhdfs(path), params={"op": "LISTSTATUS"})
    resp.raise_for_status()
    return sorted(s["pathSuffix"] for s in resp.json()["FileStatuses"]["FileStatus"])


@pytest.fixture
def nn(namenode):
    """The test's own namenode (tests/conftest.py), its name dir ``tmp_path / "name"``."""
    return namenode


@pytest.fixture(scope="module")
def shared_nn(module_namenode):
    """One namenode for a module's tests that neither roll nor write."""
    return module_namenode


@pytest.fixture
def client(nn) -> TransferClient:
    return TransferClient(nn.url, secret_of(nn), timeout=10)


def new_checkpointer(server: NamenodeProcess, ckpt_dir: Path, **kw) -> Checkpointer:
    kw.setdefault("policy", TriggerPolicy(txns=1_000_000, period=3600))
    return Checkpointer(TransferClient(server.url, secret_of(server), timeout=10), ckpt_dir,
                        **kw)


@pytest.fixture
def checkpointer(nn, tmp_path):
    with new_checkpointer(nn, tmp_path / "ckpt") as cp:
        yield cp


@pytest.fixture(autouse=True)
def no_faults():
    """Fault points configured in-process by a test are turned off after it."""
    yield
    faults.configure("")
