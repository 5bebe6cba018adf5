"""catalog/changelog.py: the lineage at the head of a format version 2 changelog, through
lz4-java's block frames, and the chains ``layout.Store.restore`` builds from it."""

from __future__ import annotations

import json
import struct

import pytest

from nnlite.catalog import changelog, streaming
from tests.catalog.builder import BASE, Checkpoint, unique_id


def literals(data: bytes) -> bytes:
    """An LZ4 block of one literal run."""
    n = len(data)
    if n < 15:
        return bytes([n << 4]) + data
    rest, extra = n - 15, b""
    while rest >= 255:
        extra, rest = extra + b"\xff", rest - 255
    return bytes([0xF0]) + extra + bytes([rest]) + data


def frame(block: bytes, size: int, method: int = 0x20) -> bytes:
    """One LZ4BlockOutputStream frame (level 5; checksum not checked)."""
    return b"LZ4Block" + struct.pack("<Bii", method | 5, len(block), size) + bytes(4) + block


def utf(text: str) -> bytes:
    return len(text).to_bytes(2, "big") + text.encode()


def head(items, version: str = "v3") -> bytes:
    lineage = json.dumps([{"version": v, "checkpointUniqueId": u} for v, u in items])
    payload = utf(version) + utf(lineage) + b"\x00\x00\x00\x05records"
    return frame(literals(payload), len(payload))


def test_the_lineage_of_a_v3_and_a_v4_changelog():
    items = [(2, "a"), (3, "b")]
    assert changelog.lineage(head(items), "f") == items
    assert changelog.lineage(head([], "v4"), "f") == []


def test_a_lineage_split_across_frames_and_a_raw_frame():
    payload = utf("v3") + utf(json.dumps([{"version": 1, "checkpointUniqueId": "x" * 40}]))
    cut = 10
    data = (frame(literals(payload[:cut]), cut) +
            frame(payload[cut:], len(payload) - cut, method=0x10))
    assert changelog.lineage(data, "f") == [(1, "x" * 40)]


def test_the_head_of_a_frame_longer_than_the_bytes_read_decodes():
    """A lineage near writeUTF's 65535-byte cap in a frame larger than ``HEAD`` (a larger
    spark.io.compression.lz4.blockSize): the part of the frame read decodes far enough."""
    items = [(v, f"{v:036d}") for v in range(1, 800)]
    payload = _payload(items)
    assert 60_000 < len(payload) <= 65535 + 6         # writeUTF's cap, and the version
    big = frame(literals(payload + bytes(1 << 20)), len(payload) + (1 << 20))
    assert len(big) > changelog.HEAD
    assert changelog.lineage(big[:changelog.HEAD], "f") == items


def _payload(items) -> bytes:
    lineage = json.dumps([{"version": v, "checkpointUniqueId": u} for v, u in items])
    return utf("v3") + utf(lineage)


def test_back_references_are_copied_overlapping():
    block = bytes([0x32]) + b"abc" + b"\x03\x00"      # "abc", then 6 bytes from 3 back
    assert changelog.decompress(block, 9) == b"abcabcabc"


@pytest.mark.parametrize("data, error, words", [
    (b"BZh91AY&SY bzip2", changelog.UnknownCodec, "not an lz4, snappy or zstd stream"),
    (b"\x28\xb5\x2f\xfd cut", changelog.CutShort, "cut short"),      # a zstd frame, cut
    (head([], "v2"), changelog.ChangelogError, "records no lineage"),
    (head([(1, "a")])[:30], changelog.CutShort, "cut short"),
    (frame(literals(b"\x00\x02v3\x00\x40[{"), 8), changelog.ChangelogError, "cut short"),
    (frame(bytes([0x12]) + b"a\x05\x00", 6), changelog.ChangelogError,
     "back-reference past its start"),
])
def test_heads_spark_could_not_read(data, error, words):
    with pytest.raises(error, match=words):
        changelog.lineage(data, "f")


# ------------------------------------------------------- chains by a changelog's lineage

def lineages(ckpt: Checkpoint, table: dict):
    """A ``lineage`` reader over ``{(version, partition): items}``."""
    def lineage(ref):
        name = ref.path.rsplit("/", 1)[1]
        version = int(name.split("_")[0])
        partition = int(ref.path.rsplit("/", 2)[1])
        return table.get((version, partition))
    return lineage


def test_a_chain_follows_the_lineage_its_changelog_records():
    """The lineage, not the commits, names the versions a restore replays: a changelog
    whose lineage names an id whose file is gone does not restore, though the version has a
    file of another id (the commit naming it was retained away)."""
    ckpt = Checkpoint(5, unique_ids=True)          # versions 1-5, changelogs only
    for v in range(1, 4):
        ckpt.remove(f"commits/{v - 1}")             # as retention leaves it
    ckpt.put(ckpt.state_name(3, 0, "delta", attempt=1), b"attempt 1")
    ckpt.remove(ckpt.state_name(3, 0, "delta"))
    found = streaming.scan(ckpt.node(), BASE)
    store = next(s for s in found.stores if s.partition == "0")
    assert store.chain(5) is not None               # by the one id version 3 has left
    table = {(5, 0): [(v, unique_id(v, 0)) for v in range(1, 5)]}
    chain, why = store.restore(5, lineage=lineages(ckpt, table))
    assert chain is None and f"no 3_{unique_id(3, 0)}.changelog" in why


def test_a_lineage_whose_snapshots_are_gone_is_rebuilt_from_an_older_one():
    """RocksDB.loadWithCheckpointId: the newest snapshot of the lineage, else the empty
    store when the lineage starts at version 1; with none of its snapshots left, Spark
    4.3's auto snapshot repair (on by default) rebuilds from an older snapshot or from
    version 1 through the committed changelogs, and only where those are gone too does
    the load fail (cannotFindBaseSnapshotCheckpoint)."""
    ckpt = Checkpoint(6, snapshot_every=3, unique_ids=True)
    found = streaming.scan(ckpt.node(), BASE)
    store = next(s for s in found.stores if s.partition == "1")
    table = {(5, 1): [(3, unique_id(3, 1)), (4, unique_id(4, 1))]}
    chain, _ = store.restore(5, lineage=lineages(ckpt, table))
    assert [f.path.rsplit("/", 1)[1].split("_")[0] + "." + f.path.rsplit(".", 1)[1]
            for f in chain] == ["5.changelog", "4.changelog", "3.zip"]
    ckpt.remove(ckpt.state_name(3, 1, "snapshot"))
    found = streaming.scan(ckpt.node(), BASE)
    store = next(s for s in found.stores if s.partition == "1")
    walked = store.chain(5)                         # the commits' walk reaches version 1
    assert store.restore(5, lineage=lineages(ckpt, table))[0] is None  # 3's lineage unread
    table[(3, 1)] = [(1, unique_id(1, 1)), (2, unique_id(2, 1))]       # getFullLineage
    assert walked is not None and store.restore(5, lineage=lineages(ckpt, table)) == (
        walked, "")
    ckpt.remove(ckpt.state_name(1, 1, "delta"))
    found = streaming.scan(ckpt.node(), BASE)
    store = next(s for s in found.stores if s.partition == "1")
    chain, why = store.restore(5, lineage=lineages(ckpt, table))
    assert chain is None and "lineage starts at version 3" in why
    assert "cannotFindBaseSnapshotCheckpoint" in why and "nor can the auto snapshot repair" in why
    unreadable = store.restore(5, lineage=lambda ref: "it is cut short")
    assert unreadable == (None, f"{store.path}: it is cut short")


@pytest.mark.parametrize("data,seed,want", [
    (b"", 0, 0x02CC5D05),
    (b"a", 0, 0x550D7456),
    (b"abc", 0, 0x32D153FF),
    (b"Nobody inspects the spammish repetition", 0, 0xE2293B2F),
])
def test_xxhash32_is_the_reference_s(data, seed, want):
    assert changelog.xxhash32(data, seed) == want


def checked(block: bytes, size: int, data: bytes, method: int = 0x20) -> bytes:
    """A frame whose checksum is lz4-java's: XXHash32 of ``data`` masked to 28 bits."""
    check = changelog.xxhash32(data, changelog.XXHASH_SEED) & 0xFFFFFFF
    return frame(block, size, method)[:-len(block) - 4] + struct.pack("<I", check) + block


END = frame(b"", 0, 0x10)                   # close()'s empty raw frame


def test_a_whole_changelog_is_read_as_lz4_block_input_stream_reads_it():
    """Every frame decodes to its length and checksum, then the end mark; a changed byte,
    a cut tail or a frame whose checksum differs is what Spark's read fails on, and another
    codec is not judged."""
    data = b"\x00\x02v3" + b"record " * 40
    good = checked(literals(data), len(data), data) + checked(b"raw!", 4, b"raw!", 0x10) + END
    changelog.verify(good, "c")
    damaged = bytearray(good)
    damaged[40] ^= 0x01
    with pytest.raises(changelog.ChangelogError, match="corrupted"):
        changelog.verify(bytes(damaged), "c")
    with pytest.raises(changelog.ChangelogError, match="without lz4's end mark"):
        changelog.verify(good[:-len(END)], "c")
    with pytest.raises(changelog.ChangelogError, match="corrupted"):
        changelog.verify(frame(literals(data), len(data)) + END, "c")     # checksum 0
    with pytest.raises(changelog.UnknownCodec):
        changelog.verify(b"BZh9" + bytes(20), "c")


# ------------------------------------------------- snappy and zstd: decoded, records read

def v4_records(*records: tuple[int, bytes, bytes | None]) -> bytes:
    """A changelog of version 4 (StateStoreChangelogWriterV4): the version, an empty
    lineage, typed records, the end record."""
    out = utf("v4") + utf("[]")
    for kind, key, value in records:
        out += bytes([kind]) + struct.pack(">i", len(key)) + key
        out += struct.pack(">i", -1 if value is None else len(value)) + (value or b"")
    return out + b"\x00"


def v3_records(*records: tuple[bytes, bytes | None]) -> bytes:
    """Version 3 (StateStoreChangelogWriterV3): untyped records, keySize -1 at the end."""
    out = utf("v3") + utf('[{"version":1,"checkpointUniqueId":"a"}]')
    for key, value in records:
        out += struct.pack(">i", len(key)) + key
        out += struct.pack(">i", -1 if value is None else len(value)) + (value or b"")
    return out + struct.pack(">i", -1)


def snappy_stream(plain: bytes, chunk: int = 64) -> bytes:
    """snappy-java's SnappyOutputStream: MAGIC_HEADER, version 1, compatible 1, chunks."""
    import pyarrow as pa
    out = changelog.SNAPPY_MAGIC + struct.pack(">ii", 1, 1)
    for at in range(0, len(plain), chunk):
        block = pa.Codec("snappy").compress(plain[at:at + chunk]).to_pybytes()
        out += struct.pack(">i", len(block)) + block
    return out


def zstd_stream(plain: bytes) -> bytes:
    import pyarrow as pa
    return pa.Codec("zstd").compress(plain).to_pybytes()


RECORDS = v4_records((0x01, b"k1", b"v" * 30), (0x10, b"k2", None), (0x11, b"k3", b"x"))


@pytest.mark.parametrize("encode", [snappy_stream, zstd_stream])
def test_a_snappy_or_zstd_changelog_is_decoded_and_its_records_read(encode):
    changelog.verify(encode(RECORDS), "c")
    changelog.verify(encode(v3_records((b"k", b"value"), (b"gone", None))), "c")
    assert changelog.check_records(RECORDS, "c") == 3
    with pytest.raises(changelog.ChangelogError, match="the stream ends"):
        changelog.verify(encode(RECORDS[:-1]), "c")              # no end record
    data = encode(RECORDS)
    with pytest.raises(changelog.ChangelogError):
        changelog.verify(data[:len(data) - 3], "c")              # the stream cut


@pytest.mark.parametrize("encode", [snappy_stream, zstd_stream])
def test_the_lineage_of_a_snappy_or_zstd_changelog(encode):
    """What the lineage reader makes of a head: snappy's chunks decode one by one (a head
    of whole chunks holds the lineage), a zstd frame only whole."""
    plain = v3_records((b"k", bytes(range(256)) * 4))     # incompressible past the head
    data = encode(plain)
    assert changelog.lineage(data, "c") == [(1, "a")]
    if encode is snappy_stream:
        assert changelog.lineage(data[:len(data) // 2], "c") == [(1, "a")]
    else:
        with pytest.raises(changelog.CutShort):
            changelog.lineage(data[:len(data) // 2], "c")


@pytest.mark.parametrize("plain, words", [
    (RECORDS.replace(b"\x01\x00\x00\x00\x02k1", b"\x07\x00\x00\x00\x02k1"),
     "record type 0x7"),
    (RECORDS.replace(b"k2\xff\xff\xff\xff", b"k2\x00\x00\x00\x01"), "delete record"),
    (RECORDS.replace(b"\x00\x00\x00\x1ev", b"\x00\x00\x10\x00v"), "does not fit"),
    (v3_records((b"k", b"v")).replace(b"\x00\x00\x00\x01k", b"\xff\xff\xff\xf0k"),
     "key size of -16"),
    (utf("v4") + utf("[{"), "not \\[\\{version"),
])
def test_records_spark_s_readers_could_not_read(plain, words):
    with pytest.raises(changelog.ChangelogError, match=words):
        changelog.check_records(plain, "c")


def test_a_snappy_chunk_that_does_not_decode_or_is_cut():
    data = bytearray(snappy_stream(RECORDS, chunk=1 << 10))
    header = len(changelog.SNAPPY_MAGIC) + 8
    data[header + 4] ^= 0x7F                 # the block's length preamble
    with pytest.raises(changelog.ChangelogError, match="failed to uncompress"):
        changelog.verify(bytes(data), "c")
    whole = snappy_stream(RECORDS, chunk=16)
    plain, stopped = changelog.decoded(whole[:-2], "c")
    assert "failed to read chunk" in stopped and RECORDS.startswith(plain)
    twice = snappy_stream(RECORDS[:20]) + snappy_stream(RECORDS[20:])   # concatenated
    assert changelog.decoded(twice, "c") == (RECORDS, "")
