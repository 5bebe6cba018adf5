"""A block damaged on disk (one byte flipped in its block file, its meta file intact) against a
real namenode process: WebHDFS's OPEN checks every chunk it serves against its stored CRC, as
a DataNode's OPEN reads through a DFSInputStream. Before any byte is sent the reader gets
HDFS's answer when no good replica is left (403, BlockMissingException "Could not obtain
block"); once the body has begun, the connection is cut short of its Content-Length. Ranges
that do not touch the damaged chunk still read. Written over WebHDFS and over hdfs://, read
raw and by Hadoop's WebHdfsFileSystem."""

from __future__ import annotations

import http.client
import itertools
import os
from urllib.parse import urlsplit

import pytest

from tests.namenode.http.helpers import WebHdfs, data_dir, read, request, upload

BLOCK = 1 << 20                                 # dfs.namenode.fs-limits.min-block-size
DATA = os.urandom(5 * BLOCK + 70_001)           # more than the data step reads into memory
CHUNK = 512
_files = itertools.count()


@pytest.fixture(scope="module")
def server(module_namenode):
    return module_namenode


@pytest.fixture(scope="module")
def w(server):
    return WebHdfs(server)


@pytest.fixture
def path(w) -> str:
    return f"/damaged{next(_files)}"


def written(w, path: str, data: bytes = DATA) -> str:
    assert upload(w, path, data, blocksize=BLOCK).status == 201
    return path


def damage(server, w, path: str, offset: int) -> int:
    """Flip the bit 0 of the file's byte at ``offset`` in its block file; returns the start
    of the chunk it is in (as an offset of the file)."""
    located = w.get(path, "GET_BLOCK_LOCATIONS", offset=offset, length=1).json
    block = located["LocatedBlocks"]["locatedBlocks"][0]
    block_id, start = block["block"]["blockId"], block["startOffset"]
    [block_file] = (data_dir(server) / "blocks").rglob(f"blk_{block_id}")
    with open(block_file, "r+b") as handle:
        handle.seek(offset - start)
        byte = handle.read(1)
        handle.seek(offset - start)
        handle.write(bytes([byte[0] ^ 1]))
    return offset - (offset - start) % CHUNK


def refused(w, path: str, **params):
    """The data step's answer to OPEN: a RemoteException, never bytes."""
    first = w.call("GET", path, "OPEN", **params)
    assert first.status == 307, first
    answer = request("GET", first.headers["location"])
    assert answer.status == 403, (answer.status, answer.body[:200])
    assert answer.error == (403, "BlockMissingException")
    assert answer.java_class == "org.apache.hadoop.hdfs.BlockMissingException"
    assert answer.message.startswith("Could not obtain block: blk_")
    assert f"file={path}" in answer.message and "Checksum error" in answer.message
    return answer


def cut_short(w, path: str) -> tuple[int, bytes]:
    """OPEN's data step read raw: (the Content-Length promised, the bytes before the cut)."""
    first = w.call("GET", path, "OPEN")
    assert first.status == 307, first
    url = urlsplit(first.headers["location"])
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        conn.request("GET", f"{url.path}?{url.query}")
        answer = conn.getresponse()
        assert answer.status == 200
        promised = int(answer.getheader("Content-Length"))
        with pytest.raises(http.client.IncompleteRead) as info:
            answer.read()
        return promised, info.value.partial
    finally:
        conn.close()


def test_a_damaged_chunk_is_an_error_before_any_byte(server, w, path):
    written(w, path)
    bad = damage(server, w, path, 5000)
    refused(w, path)
    refused(w, path, offset=4000, length=2000)
    refused(w, path, offset=bad + CHUNK - 1, length=1)
    # the chunks around the damaged one still read
    assert read(w, path, offset=0, length=bad) == DATA[:bad]
    assert read(w, path, offset=bad + CHUNK, length=BLOCK) == \
        DATA[bad + CHUNK:bad + CHUNK + BLOCK]
    assert read(w, path, offset=2 * BLOCK) == DATA[2 * BLOCK:]


def test_damage_found_while_streaming_cuts_the_connection(server, w, path):
    """The first batch read was good, so the answer began: the client reads fewer bytes than
    the Content-Length it was promised, every one of them good, none of the damaged chunk."""
    written(w, path)
    bad = damage(server, w, path, 3 * BLOCK + 12_345)
    promised, got = cut_short(w, path)
    assert promised == len(DATA) and len(got) <= bad and got == DATA[:len(got)]
    refused(w, path, offset=bad - 100, length=BLOCK)
    assert read(w, path, offset=4 * BLOCK) == DATA[4 * BLOCK:]
    assert w.alive()


def test_a_file_written_over_hdfs_is_checked_too(server, w, path):
    hdfs_native = pytest.importorskip("hdfs_native")
    data = DATA[:2 * BLOCK + 70_001]
    client = hdfs_native.Client(server.hdfs)
    with client.create(path, hdfs_native.WriteOptions(block_size=BLOCK)) as stream:
        stream.write(data)
    bad = damage(server, w, path, BLOCK + 700)
    refused(w, path)
    refused(w, path, offset=BLOCK, length=1000)
    assert read(w, path, offset=bad + CHUNK) == data[bad + CHUNK:]


@pytest.mark.parametrize("offset", [5000, 3 * BLOCK + 12_345])
def test_hadoops_webhdfs_client_gets_an_io_exception(server, w, path, spark, offset):
    """WebHdfsFileSystem reads the damaged file: an IOException (BlockMissingException from
    the 403, or its own error at the cut), not the damaged bytes."""
    from tests.namenode.java import Java, java_exception
    java = Java(spark, server, "webhdfs")
    written(w, path)
    damage(server, w, path, offset)
    fs = java.open("tester")
    try:
        exc = java_exception(java.read, fs, path)
        assert java.jvm.java.io.IOException._java_lang_class.isInstance(exc), exc
        assert java.read(fs, path, offset=4 * BLOCK) == DATA[4 * BLOCK:]
    finally:
        fs.close()
