"""catalog/checksums.py: a file's CRC32C composed from its blocks' chunk CRCs equals the
CRC32C of its bytes (and Hadoop's CrcUtil's compositions), and Spark's ``.crc`` sidecars
are read as json4s reads them."""

from __future__ import annotations

import itertools
import json

import pytest
from crc32c import crc32c

from nnlite.catalog import checksums
from nnlite.namenode.blocks.checksum import CRC32, CRC32C, chunk_crcs
from tests.namenode.blocks.helpers import CONTENT


def blocks_of(data: bytes, cuts: list[int]):
    """``data`` cut into blocks at ``cuts``: their ``(id, length, genstamp)`` and bytes."""
    bounds = [0, *cuts, len(data)]
    parts = {i: data[a:b] for i, (a, b) in enumerate(itertools.pairwise(bounds))}
    return [(i, len(p), 1) for i, p in parts.items()], parts


RUN = checksums.RUN_CHUNKS * 512
DATA = (CONTENT * (3 * RUN // len(CONTENT) + 1))[:3 * RUN]


@pytest.mark.parametrize("size, cuts", [
    (0, []), (1, []), (511, []), (512, []), (513, []), (1024, []), (5000, [1024]),
    (5000, [1000, 3001]), (len(CONTENT), [len(CONTENT) // 3]), (RUN, []), (RUN + 1, []),
    (2 * RUN + 512, [RUN - 512]), (3 * RUN, [RUN + 7, 2 * RUN])])
@pytest.mark.parametrize("kinds", ["crc32c", "crc32-first"])
def test_a_file_s_crc32c_composed_from_its_chunk_crcs(size, cuts, kinds):
    """Blocks of whole and partial chunks, runs of RUN_CHUNKS chunks (``_fold``) and not."""
    data = DATA[:size]
    blocks, parts = blocks_of(data, cuts)
    types = {i: CRC32 if kinds == "crc32-first" and i == 0 else CRC32C for i in parts}
    read = []

    def read_bytes(block_id, length):
        read.append(block_id)
        return parts[block_id]

    got = checksums.file_crc(blocks, lambda b, n: (chunk_crcs(parts[b], types[b]), types[b]),
                             read_bytes)
    assert got == crc32c(data)
    # only a block whose chunk CRCs are CRC32 is read; CRC32C ones compose
    assert read == ([0] if kinds == "crc32-first" and blocks else [])


@pytest.mark.spark
def test_composition_is_hadoop_s_crc_composer(spark):
    """Parts of various lengths composed here and by org.apache.hadoop.util.CrcComposer in
    Spark's JVM (its ints signed), as a COMPOSITE_CRC file checksum composes them."""
    util = spark.sparkContext._jvm.org.apache.hadoop.util
    parts = [(0x12345678, 512), (0x9ABCDEF0, 512), (0xFFFFFFFF, 1), (7, 300),
             (0xDEADBEEF, 512), (0xCAFEBABE, 77)]
    composer = util.CrcComposer.newCrcComposer(util.DataChecksum.Type.CRC32C, 512)
    crc = 0
    for value, length in parts:
        composer.update(value - (1 << 32) if value >= 1 << 31 else value, length)
        crc = checksums.compose(crc, value, length)
    assert crc.to_bytes(4, "big") == bytes(b & 0xFF for b in composer.digest())


def sidecar(**fields) -> bytes:
    doc = {"algorithm": "CRC32C", "value": -1620262583, "mainFileSize": 238,
           "timestampMs": 1796216603587, "creator": {"executorId": "driver", "taskInfo": ""}}
    doc.update(fields)
    return json.dumps({k: v for k, v in doc.items() if v is not None}).encode()


def test_a_sidecar_as_spark_writes_it():
    parsed = checksums.parse_sidecar(sidecar(), "f.crc")
    assert parsed == checksums.Sidecar(-1620262583 & 0xFFFFFFFF, 238)


@pytest.mark.parametrize("data, words", [
    (b'{"algorithm":"CRC32C","value":', "not a JSON checksum"),
    (sidecar(mainFileSize=None), "lacks one of"),
    (sidecar(value=1 << 31), "not a 32-bit int"),
    (sidecar(value="1"), "not a 32-bit int"),
    (b"\xff", "not a JSON checksum"),
])
def test_sidecars_spark_could_not_read(data, words):
    with pytest.raises(ValueError, match=words):
        checksums.parse_sidecar(data, "f.crc")


def test_a_mismatch_names_both_sides_as_spark_does():
    good = checksums.Sidecar(crc32c(b"abc"), 3)
    assert checksums.mismatch("/f", 3, crc32c(b"abc"), good) == ""
    assert checksums.mismatch("/f", 4, crc32c(b"abc"), good).startswith(
        "/f does not match its checksum file: 4 bytes with CRC32C")
    assert "CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED" in checksums.mismatch(
        "/f", 3, crc32c(b"abd"), good)
