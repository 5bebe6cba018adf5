"""Catalog tests against a real namenode process: building checkpoints over WebHDFS."""

from __future__ import annotations

import json
from contextlib import contextmanager

from nnlite.catalog.client import CatalogClient
from nnlite.client.shell import FsShell
from nnlite.client.webhdfs import WebHdfsClient
from tests.catalog.builder import QUERY_ID, commit_bytes, offsets_bytes

USER = "tester"         # in the supergroup (tests/servers.py, TEST_USERS)


def start(start_namenode, *defines: str, env: dict | None = None,
          name_dirs: list[str] | None = None):
    """A namenode from tests/conftest.py's ``start_namenode`` (or ``start_module_namenode``)
    with these settings (``key=value``); ``name_dirs`` restarts it on the dirs of one before."""
    args = [arg for d in defines for arg in ("-D", d)]
    return start_namenode(*args, env=env, name_dirs=name_dirs)


@contextmanager
def running(start_namenode, *defines: str, user: str = USER):
    """A namenode with these settings, a WebHDFS client and a catalog client; all stopped."""
    nn = start(start_namenode, *defines)
    try:
        with WebHdfsClient(nn.url, user) as hdfs, CatalogClient(nn.url, user) as catalog:
            yield nn, hdfs, catalog
    finally:
        nn.stop()


def share(client: WebHdfsClient, *paths: str, mode: str = "755") -> None:
    """``chmod -R`` the paths: CREATE gives a file's missing parents its mode plus u+wx (744
    for a 644 file, as HDFS's ``createAncestorDirectories``), which others cannot list."""
    FsShell(client).chmod(mode, paths, recursive=True)


def write_checkpoint(client: WebHdfsClient, base: str, batches: int, partitions: int = 2,
                     first: int = 0) -> None:
    """The files Spark leaves for ``batches`` batches of a one-operator stateful query."""
    if first == 0:
        client.create(f"{base}/metadata", json.dumps({"id": QUERY_ID}).encode())
    for b in range(first, first + batches):
        client.create(f"{base}/offsets/{b}", offsets_bytes(b))
        client.create(f"{base}/sources/0/{b}", f'v1\n{{"path":"in/{b}"}}'.encode())
        for p in range(partitions):
            client.create(f"{base}/state/0/{p}/{b + 1}.delta", b"delta")
        client.create(f"{base}/commits/{b}", commit_bytes())
