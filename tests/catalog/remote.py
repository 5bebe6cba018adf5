"""Catalog tests against a real namenode process: building checkpoints over WebHDFS."""

from __future__ import annotations

import json
from contextlib import contextmanager

from nnlite.catalog.client import CatalogClient
from nnlite.client.shell import FsShell
from nnlite.client.webhdfs import WebHdfsClient
from tests.catalog.builder import QUERY_ID, commit_bytes, offsets_bytes
from tests.servers import NamenodeProcess

USER = "tester"         # in the supergroup (see start())


def start(tmp_path, *defines: str, env: dict | None = None, name: str = "name"):
    args = ["-D", "hadoop.user.group.static.mapping.overrides=tester=supergroup;alice=staff"]
    for d in defines:
        args += ["-D", d]
    return NamenodeProcess.start([str(tmp_path / name)], *args, env=env)


@contextmanager
def running(tmp_path, *defines: str, user: str = USER):
    """A namenode with these settings, a WebHDFS client and a catalog client; all stopped."""
    nn = start(tmp_path, *defines)
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
