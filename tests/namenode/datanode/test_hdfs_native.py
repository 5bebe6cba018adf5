"""hdfs:// end to end with the Rust client hdfs-native (PyPI ``hdfs-native``) against a real
namenode process: its namenode calls go to the RPC port, its blocks to the built-in
datanode. A file written over hdfs:// reads back over hdfs:// and over WebHDFS with the same
bytes, and its WebHDFS checksum is HDFS's for those bytes; a file written over WebHDFS reads
back over hdfs://."""

from __future__ import annotations

import os

import pytest

from nnlite.client.webhdfs import WebHdfsClient
from tests.namenode.blocks.helpers import cut, reference_checksum

hdfs_native = pytest.importorskip("hdfs_native")

BLOCK = 1 << 20                     # dfs.namenode.fs-limits.min-block-size
DATA = os.urandom(2 * BLOCK + 70_001)


@pytest.fixture
def clients(namenode):
    webhdfs = WebHdfsClient(namenode.url, user="tester")
    try:
        yield hdfs_native.Client(namenode.hdfs), webhdfs
    finally:
        webhdfs.close()


def write(client, path: str, data: bytes, piece: int = 100_000) -> None:
    options = hdfs_native.WriteOptions(block_size=BLOCK)
    with client.create(path, options) as stream:
        for start in range(0, len(data), piece):
            stream.write(data[start:start + piece])


def read(client, path: str) -> bytes:
    with client.read(path) as stream:
        return stream.read()


def webhdfs_read(webhdfs, path: str) -> bytes:
    return b"".join(webhdfs.read(path))


def webhdfs_checksum(webhdfs, path: str) -> bytes:
    answer = webhdfs._call("GET", path, "GETFILECHECKSUM")["FileChecksum"]
    return bytes.fromhex(answer["bytes"])


def test_a_file_written_over_hdfs_reads_back_over_both_schemes(clients):
    client, webhdfs = clients
    write(client, "/d/f", DATA)
    status = client.get_file_info("/d/f")
    assert (status.length, status.blocksize) == (len(DATA), BLOCK)
    assert read(client, "/d/f") == DATA
    assert webhdfs_read(webhdfs, "/d/f") == DATA
    assert webhdfs_checksum(webhdfs, "/d/f") == reference_checksum(cut(DATA, BLOCK))[:28]
    with client.read("/d/f") as stream:
        stream.seek(BLOCK - 10)
        assert stream.read(20) == DATA[BLOCK - 10:BLOCK + 10]


def test_a_file_written_over_webhdfs_reads_back_over_hdfs(clients):
    client, webhdfs = clients
    webhdfs.create("/w", DATA)
    assert read(client, "/w") == DATA


def test_empty_and_small_files(clients):
    client, webhdfs = clients
    write(client, "/empty", b"")
    write(client, "/small", b"x" * 700)
    assert read(client, "/empty") == b"" and webhdfs_read(webhdfs, "/empty") == b""
    assert read(client, "/small") == webhdfs_read(webhdfs, "/small") == b"x" * 700
    assert webhdfs_checksum(webhdfs, "/small") == reference_checksum([b"x" * 700])[:28]


def test_an_append_over_hdfs(clients):
    client, webhdfs = clients
    write(client, "/a", DATA[:5000])
    with client.append("/a") as stream:
        stream.write(DATA[5000:9000])
    assert read(client, "/a") == webhdfs_read(webhdfs, "/a") == DATA[:9000]
    assert client.get_file_info("/a").length == 9000


def test_hsync_in_the_middle_of_a_block(clients):
    client, webhdfs = clients
    with client.create("/s", hdfs_native.WriteOptions(block_size=BLOCK)) as stream:
        stream.write(DATA[:1000])
        stream.hsync()
        stream.write(DATA[1000:200_000])
        stream.hsync()
        stream.write(DATA[200_000:BLOCK + 5])
    assert read(client, "/s") == webhdfs_read(webhdfs, "/s") == DATA[:BLOCK + 5]
    assert webhdfs_checksum(webhdfs, "/s") == \
        reference_checksum(cut(DATA[:BLOCK + 5], BLOCK))[:28]
