"""File contents through unmodified Python clients: HdfsCLI (``hdfs`` on PyPI) and fsspec's
``webhdfs`` (which writes a file as an empty CREATE and then one APPEND per buffer). The
server uses 1 KiB blocks, so every file of a few KiB spans several blocks."""

from __future__ import annotations

import filecmp
import itertools

import pytest

hdfs = pytest.importorskip("hdfs")
fsspec = pytest.importorskip("fsspec")

from hdfs.util import HdfsError  # noqa: E402

from tests.namenode.blocks.helpers import cut, reference_checksum  # noqa: E402
from tests.namenode.http.helpers import BLOCK  # noqa: E402

DATA = bytes(range(256)) * 20 + b"!"                  # 5121 bytes: 6 blocks
_ids = itertools.count()


@pytest.fixture(scope="module")
def nn(start_module_namenode):
    return start_module_namenode("-D", f"dfs.blocksize={BLOCK}")


@pytest.fixture(scope="module")
def client(nn):
    return hdfs.InsecureClient(nn.url, user="tester")


@pytest.fixture(scope="module")
def fs(nn):
    return fsspec.filesystem("webhdfs", host="127.0.0.1", port=nn.port, user="tester",
                             skip_instance_cache=True)


@pytest.fixture
def d(client) -> str:
    path = f"/t/d{next(_ids)}"
    client.makedirs(path)
    return path


# --------------------------------------------------------------------------- HdfsCLI

def test_hdfscli_write_and_read(client, d):
    client.write(d + "/f", data=DATA)
    client.write(d + "/g", data=(DATA[i:i + 100] for i in range(0, len(DATA), 100)))
    with client.read(d + "/f") as reader:
        assert reader.read() == DATA
    with client.read(d + "/g", offset=1000, length=2000) as reader:
        assert reader.read() == DATA[1000:3000]
    assert client.status(d + "/f")["length"] == len(DATA)
    assert client.checksum(d + "/f") == client.checksum(d + "/g") == {
        "algorithm": "MD5-of-2MD5-of-512CRC32C", "length": 28,
        "bytes": reference_checksum(cut(DATA, BLOCK)).hex()}


def test_hdfscli_overwrite_and_append(client, d):
    client.write(d + "/f", data=b"one")
    with pytest.raises(HdfsError, match="already exists"):
        client.write(d + "/f", data=b"two")
    client.write(d + "/f", data=b"three", overwrite=True)
    client.write(d + "/f", data=b" and more", append=True)
    with client.read(d + "/f") as reader:
        assert reader.read() == b"three and more"
    with client.write(d + "/w", encoding="utf-8") as writer:   # the context-manager writer
        writer.write("written through a pipe")
    with client.read(d + "/w", encoding="utf-8") as reader:
        assert reader.read() == "written through a pipe"


def test_hdfscli_upload_and_download_a_directory(client, d, tmp_path):
    local = tmp_path / "up"
    (local / "sub" / "deeper").mkdir(parents=True)
    (local / "a.bin").write_bytes(DATA)
    (local / "sub" / "b.txt").write_bytes(b"small")
    (local / "sub" / "deeper" / "c.bin").write_bytes(DATA * 3)
    (local / "sub" / "empty").write_bytes(b"")
    client.upload(d + "/up", str(local))
    assert sorted(p for p, _, _ in client.walk(d + "/up")) == \
        [d + "/up", d + "/up/sub", d + "/up/sub/deeper"]
    back = tmp_path / "back"
    client.download(d + "/up", str(back))
    compared = filecmp.dircmp(local, back)
    assert not compared.left_only and not compared.right_only and not compared.diff_files
    for name in ("sub/b.txt", "sub/deeper/c.bin", "sub/empty"):
        assert (back / name).read_bytes() == (local / name).read_bytes()


# --------------------------------------------------------------------------- fsspec

def test_fsspec_writes_in_several_appends_and_reads(fs, d):
    with fs.open(d + "/f", "wb", block_size=700) as f:     # CREATE, then 8 APPENDs
        for piece in cut(DATA, 300):
            f.write(piece)
    assert fs.info(d + "/f")["size"] == len(DATA)
    assert fs.cat(d + "/f") == DATA
    assert fs.cat_file(d + "/f", start=1000, end=3500) == DATA[1000:3500]
    with fs.open(d + "/f", "rb", block_size=512) as f:
        f.seek(2047)
        assert f.read(10) == DATA[2047:2057]
        f.seek(-5, 2)
        assert f.read() == DATA[-5:]
    fs.pipe_file(d + "/g", DATA)
    assert fs.ukey(d + "/f") == fs.ukey(d + "/g")


def test_fsspec_put_and_get(fs, d, tmp_path):
    local = tmp_path / "local.bin"
    local.write_bytes(DATA)
    fs.put_file(str(local), d + "/p")
    fs.get_file(d + "/p", str(tmp_path / "got.bin"))
    assert (tmp_path / "got.bin").read_bytes() == DATA
    # (fsspec's "ab" mode cannot work with any server: it never keeps the APPEND Location)
    with fs.open(d + "/empty", "wb"):
        pass
    assert fs.cat(d + "/empty") == b""
