"""Helpers shared by the data-path tests: their block size, a reference HDFS checksum, the two
WebHDFS steps over ``http.client``, and a look at the server's data directory."""

from __future__ import annotations

import hashlib
import http.client
import time
from pathlib import Path
from urllib.parse import urlsplit

from crc32c import crc32c

from tests.namenode.http.helpers import Reply

BLOCK = 1024        # the data tests' block size: a few KiB make a multi-block file


def reference_checksum(blocks: list[bytes], crc=crc32c) -> bytes:
    """HDFS's MD5-of-MD5-of-CRC (CRC32C by default, HDFS's dfs.checksum.type) of a file made
    of ``blocks``, its 28 serialised bytes written out the slow, obvious way: a CRC per 512
    bytes, MD5 per block, MD5 of the block MD5s zero-padded to the capacity of Hadoop's
    DataOutputBuffer (32 bytes, doubling)."""
    if not blocks:
        return bytes(12) + hashlib.md5(bytes(32)).digest()
    md5s = b""
    for block in blocks:
        crcs = b"".join(crc(block[i:i + 512]).to_bytes(4, "big")
                        for i in range(0, len(block), 512))
        md5s += hashlib.md5(crcs).digest()
    capacity = 32
    while capacity < len(md5s):
        capacity *= 2
    crc_per_block = -(-len(blocks[0]) // 512) if len(blocks) > 1 else 0
    return ((512).to_bytes(4, "big") + crc_per_block.to_bytes(8, "big")
            + hashlib.md5(md5s.ljust(capacity, b"\0")).digest())


def cut(data: bytes, block_size: int) -> list[bytes]:
    return [data[i:i + block_size] for i in range(0, len(data), block_size)]


def request(method: str, url: str, body=None, headers=None) -> Reply:
    """One request to an absolute URL (a Location), the target sent exactly as given."""
    parts = urlsplit(url)
    target = parts.path + ("?" + parts.query if parts.query else "")
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    try:
        conn.request(method, target, body=body, headers=headers or {})
        resp = conn.getresponse()
        return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


def upload(w, path: str, data, *, op: str = "CREATE", headers=None, **params) -> Reply:
    """Step 1 (must redirect), then the body to the Location; returns step 2's reply."""
    method = "PUT" if op == "CREATE" else "POST"
    first = w.call(method, path, op, **params)
    assert first.status == 307, first
    return request(method, first.headers["location"], data, headers)


def read(w, path: str, **params) -> bytes:
    first = w.call("GET", path, "OPEN", **params)
    assert first.status == 307, first
    second = request("GET", first.headers["location"])
    assert second.status == 200, second
    return second.body


def data_dir(server) -> Path:
    return Path(server.name_dirs[0] + "-data")


def block_files(server) -> set[str]:
    return {p.name for p in (data_dir(server) / "blocks").rglob("blk_*")}


def tmp_files(server) -> list[str]:
    return [p.name for p in (data_dir(server) / "tmp").iterdir()]


def wait_for(predicate, timeout: float = 5.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
