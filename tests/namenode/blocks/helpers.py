"""Helpers of the block tests: file contents, HDFS's file checksum computed the slow, obvious
way to compare with (``reference_checksum``, used by the data-path tests of
tests/namenode/http too), and writing through a store's writer."""

from __future__ import annotations

import hashlib

from crc32c import crc32c

CONTENT = bytes(range(256)) * 40 + b"tail!"          # 10245 bytes: 20 chunks and a bit


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


def reference(data: bytes, block_size: int) -> bytes:
    return reference_checksum(cut(data, block_size))


def written(store, data: bytes, block_size: int, pieces=(1, 700, 3000), tail=None):
    """Feed ``data`` to a writer in pieces of the given sizes (cycling), seal, close."""
    writer = store.writer(block_size, tail)
    pos, i = 0, 0
    while pos < len(data):
        step = pieces[i % len(pieces)]
        writer.write(data[pos:pos + step])
        pos, i = pos + step, i + 1
    sealed = writer.seal()
    writer.close()
    return sealed


def content(store, blocks) -> bytes:
    return b"".join(store.data_path(b[0]).read_bytes()[:b[1]] for b in blocks)


def files_in(store) -> list[str]:
    return sorted(p.name for p in store.root.rglob("blk_*"))
