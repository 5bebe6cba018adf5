"""formats/edits.py, tested the way etcd tests its WAL: tables of raw bytes with readable ids,
one way of damaging a log per case (``corrupt``), then reopen, append and read everything back.

``golden/edits_v3.bin`` pins the byte layout of SAMPLE_OPS. Regenerate it only on purpose:
``NNLITE_REGEN_GOLDEN=1 pytest tests/formats/test_edits.py -k golden``. ``golden/edits_v1.bin``
and ``edits_v2.bin`` are a version-1 file (the ops up to DELETE_MANY) and a version-2 file (up
to RENAME_SNAPSHOT), kept as written then: they must still read.
"""

from __future__ import annotations

import bisect
import dataclasses
import os
import struct
import tempfile
import tracemalloc
import zlib
from pathlib import Path

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nnlite.formats import edits, errors
from nnlite.formats.edits import (
    DEFAULT_MAX_RECORD,
    HEADER_SIZE,
    MAGIC,
    OPS,
    AddBlockOp,
    AddFileOp,
    AllowSnapshotOp,
    AppendOp,
    CancelDelegationTokenOp,
    CloseFileOp,
    ConcatOp,
    CreateSnapshotOp,
    DeleteManyOp,
    DeleteOp,
    DeleteSnapshotOp,
    DisallowSnapshotOp,
    EditsReader,
    EditsWriter,
    EndLogSegmentOp,
    GetDelegationTokenOp,
    MkdirOp,
    OpCode,
    RemoveXAttrOp,
    RenameOldOp,
    RenameOp,
    RenameSnapshotOp,
    RenewDelegationTokenOp,
    SetAclOp,
    SetOwnerOp,
    SetPermissionsOp,
    SetQuotaOp,
    SetReplicationOp,
    SetTimesOp,
    SetXAttrOp,
    StartLogSegmentOp,
    TruncateOp,
    UpdateBlocksOp,
    UpdateMasterKeyOp,
    decode_payload,
    encode_header,
    encode_payload,
    encode_record,
    frame,
    pack_untimed,
    read_all,
    record_at,
)
from tests.formats import corrupt

GOLDEN = Path(__file__).parent / "golden" / "edits_v3.bin"
GOLDEN_V1 = Path(__file__).parent / "golden" / "edits_v1.bin"
GOLDEN_V2 = Path(__file__).parent / "golden" / "edits_v2.bin"
# a delegation token identifier's Writable bytes (spark@EXAMPLE.COM, renewer yarn)
TOKEN_ID = bytes.fromhex("0011737061726b404558414d504c452e434f4d047961726e00"
                         "8a018bcfe568008a018bf3f1ec000107")
TS = 1_700_000_000_000
CKPT = "/user/spark/ckpt/q1"
BLOCK = (1073741825, 134217728, 1001)

SAMPLE_OPS = {
    OpCode.START_LOG_SEGMENT: StartLogSegmentOp(),
    OpCode.END_LOG_SEGMENT: EndLogSegmentOp(),
    OpCode.MKDIR: MkdirOp(CKPT, 16386, 0o755, "spark", "supergroup", TS),
    OpCode.ADD_FILE: AddFileOp(f"{CKPT}/offsets/0", 16390, 3, 134217728, 0, 0o644, "spark",
                               "supergroup", TS, TS, False, "DFSClient_NONMAPREDUCE_1", "10.0.0.7"),
    OpCode.CLOSE_FILE: CloseFileOp(f"{CKPT}/offsets/0", 16390, 245, TS + 2, TS,
                                   (BLOCK, (1073741826, 117, 1002)), bytes.fromhex("9e107d9d")),
    OpCode.ADD_BLOCK: AddBlockOp(f"{CKPT}/offsets/1", 16391, BLOCK),
    OpCode.UPDATE_BLOCKS: UpdateBlocksOp(f"{CKPT}/offsets/1", 16391, ()),
    OpCode.DELETE: DeleteOp(f"{CKPT}/offsets/1", TS + 3),
    OpCode.RENAME_OLD: RenameOldOp(f"{CKPT}/tmp", f"{CKPT}/commits", TS + 4),
    OpCode.RENAME: RenameOp(f"{CKPT}/.1.tmp", f"{CKPT}/commits/1", TS + 5, True),
    OpCode.SET_PERMISSIONS: SetPermissionsOp(CKPT, 0o1777),
    OpCode.SET_OWNER: SetOwnerOp(CKPT, None, "hadoop"),
    OpCode.SET_TIMES: SetTimesOp(CKPT, -1, TS + 6),
    OpCode.SET_REPLICATION: SetReplicationOp(f"{CKPT}/offsets/0", 2),
    OpCode.SET_QUOTA: SetQuotaOp(CKPT, -1, 2**40),
    OpCode.SET_XATTR: SetXAttrOp(CKPT, "user.nnlite.batch", b"\x00\xff812", 3),
    OpCode.REMOVE_XATTR: RemoveXAttrOp(CKPT, "user.nnlite.batch"),
    OpCode.CONCAT: ConcatOp(f"{CKPT}/state/0", (f"{CKPT}/s1", f"{CKPT}/s2"), TS + 7),
    OpCode.TRUNCATE: TruncateOp(f"{CKPT}/offsets/0", 0, TS + 8),
    OpCode.APPEND: AppendOp(f"{CKPT}/offsets/0", 16390, "webhdfs-append-1", "127.0.0.1"),
    OpCode.DELETE_MANY: DeleteManyOp((f"{CKPT}/offsets/7", f"{CKPT}/state/0/0/8.delta"), TS + 9),
    OpCode.SET_ACL: SetAclOp(CKPT, ("user::rwx", "user:bob:r-x", "group::r-x", "mask::r-x",
                                    "other::---", "default:user::rwx", "default:group::r-x",
                                    "default:other::---")),
    OpCode.ALLOW_SNAPSHOT: AllowSnapshotOp(CKPT),
    OpCode.DISALLOW_SNAPSHOT: DisallowSnapshotOp(CKPT),
    OpCode.CREATE_SNAPSHOT: CreateSnapshotOp(CKPT, "s20261125-061530.123", TS + 10),
    OpCode.DELETE_SNAPSHOT: DeleteSnapshotOp(CKPT, "before-rollback", TS + 11),
    OpCode.RENAME_SNAPSHOT: RenameSnapshotOp(CKPT, "s1", "nightly", TS + 12),
    OpCode.GET_DELEGATION_TOKEN: GetDelegationTokenOp(TOKEN_ID, TS + 86_400_000),
    OpCode.RENEW_DELEGATION_TOKEN: RenewDelegationTokenOp(TOKEN_ID, TS + 172_800_000),
    OpCode.CANCEL_DELEGATION_TOKEN: CancelDelegationTokenOp(TOKEN_ID),
    OpCode.UPDATE_MASTER_KEY: UpdateMasterKeyOp(7, TS + 691_200_000, bytes(range(64))),
}

EDGE_OPS = {
    "owner-and-group-none": SetOwnerOp("/a", None, None),
    "group-none": SetOwnerOp("/a", "spark", None),
    "xattr-empty-bytes": SetXAttrOp("/a", "user.x", b"", 1),
    "xattr-not-utf8-bytes": SetXAttrOp("/a", "user.x", bytes(range(256)), 2),
    "close-no-blocks": CloseFileOp("/f", 1, 0, 0, 0, (), b""),
    "blocks-at-int-limits": UpdateBlocksOp("/f", 2**64 - 1, ((2**64 - 1, 0, -(2**63)), BLOCK)),
    "unicode-paths": ConcatOp("/t/目标", ("/t/ä", "/t/🙂"), TS),
    "empty-strings": RenameOp("", "", -1, False),
    "complete-file-overwrite": AddFileOp("/f", 9, 1, 1, 10, 0, "", "", 0, 0, True, "", ""),
}

# Every damage test uses this log: its last record is the longest.
LOG = corrupt.build([StartLogSegmentOp(), SAMPLE_OPS[OpCode.MKDIR], SAMPLE_OPS[OpCode.DELETE],
                     SAMPLE_OPS[OpCode.CLOSE_FILE]])


def assert_appendable(path, reader, kept):
    """Reopen at ``valid_length``, append two records and read everything back, in order."""
    more = [(reader.last_txid + 1, SAMPLE_OPS[OpCode.SET_TIMES]),
            (reader.last_txid + 2, EndLogSegmentOp())]
    writer = EditsWriter.open_append(path, reader.valid_length)
    for txid, op in more:
        writer.write(encode_record(txid, op))
    writer.fsync()
    writer.close()
    records, again = read_all(path)
    assert records == kept + more and again.torn_tail is None


def assert_torn_at(reader, offset, size, reason=""):
    torn = reader.torn_tail
    assert torn is not None and (torn.offset, torn.offset + torn.length) == (offset, size)
    assert reason in torn.reason and reader.valid_length == offset


# ------------------------------------------------------------------------ ops and layout

def test_every_op_code_has_a_class_and_a_sample():
    assert sorted(OPS) == sorted(OpCode)
    missing = [code.name for code in OpCode if code not in SAMPLE_OPS]
    assert not missing, f"add SAMPLE_OPS entries for {missing}"
    assert all(type(op) is OPS[code] for code, op in SAMPLE_OPS.items())


def assert_round_trip(op, txid=7):
    back_txid, back = decode_payload(encode_payload(txid, op))
    assert (back_txid, back) == (txid, op) and type(back) is type(op)
    assert [type(v) for v in back.to_list()] == [type(v) for v in op.to_list()]
    hash(back)  # tuples stay tuples, so a decoded op is still hashable


@pytest.mark.parametrize("code", list(OpCode), ids=lambda code: code.name)
def test_round_trip_of_every_op(code):
    assert_round_trip(SAMPLE_OPS[code])


@pytest.mark.parametrize("op", EDGE_OPS.values(), ids=EDGE_OPS.keys())
def test_round_trip_of_edge_values(op):
    assert_round_trip(op, txid=2**64 - 1)


@given(op=st.sampled_from([*SAMPLE_OPS.values(), *EDGE_OPS.values()]),
       txid=st.one_of(st.sampled_from([0, 1, 127, 128, 255, 256, 2**16, 2**32, 2**64 - 1]),
                      st.integers(0, 2**64 - 1)))
def test_a_record_framed_from_the_untimed_payload_is_the_encoded_record(op, txid):
    """The journal frames the bytes the namespace packed to check an op's size (txid 0)
    instead of packing the op again: the result must be the same record, byte for byte,
    whatever width the txid's msgpack encoding takes."""
    assert record_at(txid, pack_untimed(op)) == encode_record(txid, op)
    assert pack_untimed(op) == encode_payload(0, op)


@pytest.mark.parametrize("fields, code", [(14, 100), (1, 128)], ids=["14 fields", "code 128"])
def test_an_op_class_that_breaks_the_untimed_layout_is_refused_at_registration(fields, code):
    """record_at needs every payload to be a msgpack fixarray (<= 15 items) whose op code
    is a one-byte fixint (< 128): a class that breaks either is refused, not registered."""
    from nnlite.formats.edits import Op, _op

    namespace = {"__annotations__": {f"f{i}": int for i in range(fields)}, "OP_CODE": code}
    with pytest.raises(RuntimeError, match="at most 13 fields and an op code below 128"):
        _op(type("Wide", (Op,), namespace))
    assert code not in OPS


def test_writer_output_reads_back(tmp_path):
    log = corrupt.build([*SAMPLE_OPS.values(), *EDGE_OPS.values()], first_txid=100)
    writer = EditsWriter.create(tmp_path / "edits", 100)
    for txid, op in log.records:
        writer.write(encode_record(txid, op))
    writer.close()
    assert (tmp_path / "edits").read_bytes() == log.data
    records, reader = read_all(tmp_path / "edits")
    assert records == log.records and reader.torn_tail is None
    assert (reader.valid_length, reader.last_txid) == (len(log.data), log.records[-1][0])


def test_layout_matches_the_spec():
    head = encode_header(42)
    assert head == MAGIC + struct.pack("<IQ", 3, 42) + struct.pack("<I", zlib.crc32(head[:20]))
    payload = msgpack.packb([3, 42, "/d", 5, 0o755, "u", "g", TS])
    crc = zlib.crc32(struct.pack("<I", len(payload)) + payload)
    expected = struct.pack("<II", len(payload), crc) + payload
    assert encode_record(42, MkdirOp("/d", 5, 0o755, "u", "g", TS)) == expected


def test_golden_file():
    log = corrupt.build(list(SAMPLE_OPS.values()))
    if os.environ.get("NNLITE_REGEN_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_bytes(log.data)
    assert GOLDEN.read_bytes() == log.data, "the byte layout changed; see the module docstring"
    assert read_all(GOLDEN)[0] == log.records


def test_a_version_1_file_still_reads():
    v1 = [op for code, op in SAMPLE_OPS.items() if code <= OpCode.DELETE_MANY]
    records, _ = read_all(GOLDEN_V1)
    assert GOLDEN_V1.read_bytes()[8:12] == struct.pack("<I", 1)
    assert [op for _, op in records] == v1


def test_a_version_2_file_still_reads():
    v2 = [op for code, op in SAMPLE_OPS.items() if code <= OpCode.RENAME_SNAPSHOT]
    records, _ = read_all(GOLDEN_V2)
    assert GOLDEN_V2.read_bytes()[8:12] == struct.pack("<I", 2)
    assert [op for _, op in records] == v2


# ------------------------------------------------------------------------ header

HEADER_CASES = {
    "empty-file": (b"", errors.BadHeaderError),
    "magic-only": (MAGIC, errors.BadHeaderError),
    "one-byte-short": (corrupt.header()[:-1], errors.BadHeaderError),
    "wrong-magic": (corrupt.header(magic=b"NNLIMAGE"), errors.BadHeaderError),
    "bad-header-crc": (corrupt.header(crc=0), errors.BadHeaderError),
    "first-txid-flipped": (corrupt.flip_bit(corrupt.header(), 12, 0), errors.BadHeaderError),
    "version-4": (corrupt.header(version=4), errors.UnsupportedVersionError),
    "version-0": (corrupt.header(version=0), errors.UnsupportedVersionError),
}


@pytest.mark.parametrize("data, error", HEADER_CASES.values(), ids=HEADER_CASES.keys())
def test_bad_header(tmp_path, data, error):
    path = corrupt.write(tmp_path / "edits", data)
    with pytest.raises(error) as exc:
        EditsReader(path)
    assert type(exc.value) is error and (exc.value.path, exc.value.offset) == (path, 0)
    with pytest.raises(error):
        EditsWriter.open_append(path, HEADER_SIZE)
    assert Path(path).read_bytes() == data, "a refused file must not be truncated"


def test_any_flipped_header_bit_is_a_bad_header(tmp_path):
    for offset in range(HEADER_SIZE):
        for bit in range(8):
            path = corrupt.write(tmp_path / "edits", corrupt.flip_bit(LOG.data, offset, bit))
            with pytest.raises(errors.BadHeaderError):
                EditsReader(path)


def test_header_only_log_is_empty(tmp_path):
    records, reader = read_all(corrupt.write(tmp_path / "edits", encode_header(9)))
    assert records == [] and reader.torn_tail is None
    assert (reader.valid_length, reader.last_txid, reader.records) == (HEADER_SIZE, 8, 0)


# ------------------------------------------------------------------------ torn tails

def test_truncated_at_every_byte_of_the_last_record(tmp_path):
    path, last = tmp_path / "edits", LOG.start(-1)
    for cut in range(last + 1, len(LOG.data)):
        corrupt.write(path, corrupt.truncate(LOG.data, cut))
        records, reader = read_all(path)
        assert records == LOG.records[:-1], f"cut at {cut}"
        assert_torn_at(reader, last, cut)
        assert reader.last_txid == LOG.records[-2][0]
        assert_appendable(path, reader, LOG.records[:-1])


def test_truncated_at_a_record_boundary_is_clean(tmp_path):
    for index, (_, end) in enumerate(LOG.spans):
        records, reader = read_all(corrupt.write(tmp_path / "edits", LOG.data[:end]))
        assert records == LOG.records[:index + 1] and reader.torn_tail is None


@pytest.mark.parametrize("part", ["length", "crc", "payload"])
def test_flipped_bit_before_the_last_record_is_an_error_naming_it(tmp_path, part):
    path = str(tmp_path / "edits")
    for index in range(len(LOG.records) - 1):
        for offset in LOG.field(index, part):
            for bit in range(8):
                damaged = corrupt.flip_bit(LOG.data, offset, bit)
                corrupt.write(path, damaged)
                with pytest.raises(errors.CorruptRecordError) as exc:
                    read_all(path)
                length = struct.unpack_from("<I", damaged, LOG.start(index))[0]
                too_large = isinstance(exc.value, errors.RecordTooLargeError)
                assert too_large == (length > DEFAULT_MAX_RECORD)
                where = (exc.value.path, exc.value.offset, exc.value.txid)
                assert where == (path, LOG.start(index), LOG.records[index][0])


@pytest.mark.parametrize("part", ["crc", "payload"])
def test_flipped_bit_in_the_last_record_is_corruption_not_a_torn_tail(tmp_path, part):
    """The record was written whole, so it may have been synced and acknowledged: dropping
    it as torn could lose an acknowledged op. It is reported with its txid instead."""
    path = tmp_path / "edits"
    for offset in LOG.field(-1, part):
        for bit in range(8):
            corrupt.write(path, corrupt.flip_bit(LOG.data, offset, bit))
            with pytest.raises(errors.CorruptRecordError, match="complete but damaged") as exc:
                read_all(path)
            assert (exc.value.offset, exc.value.txid) == (LOG.start(-1), LOG.records[-1][0])


@pytest.mark.parametrize("zeros_from", [0, 1, 5])
def test_a_last_record_whose_sectors_never_reached_the_disk_is_a_torn_tail(tmp_path,
                                                                           zeros_from):
    """A crash between write and fdatasync can leave the file at its new size with zeros
    where its last sectors should be: from a sector boundary inside the last record (the
    first, second or sixth it crosses) to the end of the file."""
    unit = edits.DISK_UNIT
    log = corrupt.build([StartLogSegmentOp(), SAMPLE_OPS[OpCode.MKDIR],
                         SetXAttrOp("/a", "user.x", b"\x01" * (8 * unit), 2)])
    start = log.start(-1)
    boundary = (start // unit + 1 + zeros_from) * unit
    data = log.data[:boundary] + bytes(len(log.data) - boundary)
    records, reader = read_all(corrupt.write(tmp_path / "edits", data))
    assert records == log.records[:-1]
    assert_torn_at(reader, start, len(data), "bad CRC")
    assert_appendable(tmp_path / "edits", reader, log.records[:-1])
    # zeros only after the last sector boundary's start: damage, not a torn write
    cut = len(log.data) - (len(log.data) % unit) + 1
    assert cut < len(log.data)
    damaged = log.data[:cut] + bytes(len(log.data) - cut)
    with pytest.raises(errors.CorruptRecordError, match="complete but damaged"):
        read_all(corrupt.write(tmp_path / "edits", damaged))


def test_flipped_length_bit_in_the_last_record_is_torn_or_an_error(tmp_path):
    path = tmp_path / "edits"
    for offset in LOG.field(-1, "length"):
        for bit in range(8):
            corrupt.write(path, corrupt.flip_bit(LOG.data, offset, bit))
            try:
                records, reader = read_all(path)
            except errors.CorruptRecordError as err:  # a shorter length leaves data after it
                assert err.offset == LOG.start(-1)
                continue
            assert records == LOG.records[:-1]
            assert_torn_at(reader, LOG.start(-1), len(LOG.data))


# ------------------------------------------------------------------------ trailing bytes

NEXT = encode_record(5, SAMPLE_OPS[OpCode.ADD_FILE])
TAIL_CASES = {  # bytes after LOG -> the torn-tail reason, or the error
    "zeros-8": (bytes(8), "zero-filled tail"),
    "zeros-preallocated-64k": (bytes(1 << 16), "zero-filled tail"),
    "zeros-5": (bytes(5), "partial record header"),
    "junk-3": (b"\xde\xad\xbe", "partial record header"),
    "record-header-only": (NEXT[:8], "runs past the end"),
    "half-a-record": (NEXT[:40], "runs past the end"),
    # nnlite never preallocates: zeros from mid-sector inside a whole record are damage
    "record-into-zeros-mid-sector": (NEXT[:40] + bytes(4096), errors.CorruptRecordError),
    "record-with-zero-crc": (corrupt.put_u32(NEXT, 4, 0), errors.CorruptRecordError),
    "ff-garbage": (b"\xff" * 100, errors.RecordTooLargeError),
    "claims-2gib": (struct.pack("<II", 2**31, 0) + b"tiny", errors.RecordTooLargeError),
    "bad-crc-then-more-records": (corrupt.put_u32(NEXT, 4, 0) + NEXT, errors.CorruptRecordError),
    "garbage-frame-then-junk": (struct.pack("<II", 10, 0) + b"x" * 40, errors.CorruptRecordError),
    "bad-record-zeros-then-junk": (NEXT[:40] + bytes(4096) + b"junk", errors.CorruptRecordError),
    "zero-length-then-junk": (bytes(8) + b"junk", errors.CorruptRecordError),
}


@pytest.mark.parametrize("tail, outcome", TAIL_CASES.values(), ids=TAIL_CASES.keys())
def test_bytes_after_a_valid_log(tmp_path, tail, outcome):
    path = corrupt.write(tmp_path / "edits", corrupt.append(LOG.data, tail))
    if isinstance(outcome, str):
        records, reader = read_all(path)
        assert records == LOG.records
        assert_torn_at(reader, len(LOG.data), len(LOG.data) + len(tail), outcome)
        assert_appendable(path, reader, LOG.records)
        return
    with pytest.raises(outcome) as exc:
        read_all(path)
    assert type(exc.value) is outcome
    assert (exc.value.path, exc.value.offset, exc.value.txid) == (path, len(LOG.data), 5)


# ------------------------------------------------------------------------ txids and sizes

TXID_CASES = {  # header first_txid, record txids, index of the first bad record
    "gap": (1, [1, 2, 4], 2),
    "duplicate": (1, [1, 2, 2], 2),
    "backwards": (1, [1, 2, 3, 1], 3),
    "first-record-before-header-txid": (5, [4, 5, 6], 0),
    "first-record-after-header-txid": (5, [6, 7, 8], 0),
}


@pytest.mark.parametrize("first, txids, bad", TXID_CASES.values(), ids=TXID_CASES.keys())
def test_txid_gap(tmp_path, first, txids, bad):
    log = corrupt.build([DeleteOp("/x", i) for i in range(len(txids))], first, txids)
    reader, seen = EditsReader(corrupt.write(tmp_path / "edits", log.data)), []
    with pytest.raises(errors.TxidGapError) as exc:
        seen.extend(reader)
    assert seen == log.records[:bad]
    assert (exc.value.offset, exc.value.txid) == (log.start(bad), txids[bad])


def test_max_record_is_inclusive_and_configurable(tmp_path):
    path = corrupt.write(tmp_path / "edits", LOG.data)
    biggest = max(end - start - 8 for start, end in LOG.spans)
    assert read_all(path, max_record=biggest)[0] == LOG.records
    with pytest.raises(errors.RecordTooLargeError) as exc:
        read_all(path, max_record=biggest - 1)
    assert exc.value.offset == LOG.start(-1)


@pytest.mark.parametrize("claim", [DEFAULT_MAX_RECORD + 1, 2**31, 2**32 - 1])
def test_huge_length_is_refused_before_reading(tmp_path, claim):
    path = corrupt.write(tmp_path / "edits", corrupt.header() + struct.pack("<II", claim, 7))
    with pytest.raises(errors.RecordTooLargeError) as exc:
        read_all(path)
    assert (exc.value.offset, exc.value.txid) == (HEADER_SIZE, 1)


def test_huge_length_within_max_record_allocates_nothing(tmp_path):
    path = corrupt.write(tmp_path / "edits", corrupt.header() + struct.pack("<II", 2**31, 7))
    tracemalloc.start()
    try:
        records, reader = read_all(path, max_record=2**32)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert records == [] and "runs past the end" in reader.torn_tail.reason
    assert peak < 1 << 20


# ------------------------------------------------------------------------ payloads that are not ops

NOT_AN_OP = {
    "unknown-op-code": msgpack.packb([99, 2]),
    "op-code-zero": msgpack.packb([0, 2]),
    "too-few-fields": msgpack.packb([int(OpCode.MKDIR), 2, "/a"]),
    "too-many-fields": msgpack.packb([int(OpCode.DELETE), 2, "/a", 1, 2]),
    "no-txid": msgpack.packb([1]),
    "empty-array": msgpack.packb([]),
    "map": msgpack.packb({"op": 1, "txid": 2}),
    "map-with-int-keys": msgpack.packb({0: 1, 1: 2}),
    "string": msgpack.packb("START_LOG_SEGMENT"),
    "integer": msgpack.packb(1),
    "nil": msgpack.packb(None),
    "bool-op-code": msgpack.packb([True, 2]),
    "float-op-code": msgpack.packb([1.0, 2]),
    "string-op-code": msgpack.packb(["1", 2]),
    "string-txid": msgpack.packb([1, "2"]),
    "bool-txid": msgpack.packb([1, True]),
    "ext-type": msgpack.packb(msgpack.ExtType(1, b"x")),
    "truncated-array": b"\x92\x01",
    "extra-data": msgpack.packb([1, 2]) + b"\x00",
    "reserved-byte": b"\xc1",
    "invalid-utf8": b"\x92\xa1\xff\x02",
    "deep-nesting": b"\x91" * 5000 + b"\xc0",
    "bin-longer-than-payload": b"\xc6\xff\xff\xff\xff",
    "bad-timestamp": b"\xd4\xff\x00",
}


@pytest.mark.parametrize("payload", NOT_AN_OP.values(), ids=NOT_AN_OP.keys())
def test_undecodable_payload_in_the_middle_is_an_error(tmp_path, payload):
    data = LOG.data[:LOG.start(1)] + frame(payload) + LOG.data[LOG.start(2):]
    path = corrupt.write(tmp_path / "edits", data)
    with pytest.raises(errors.CorruptRecordError) as exc:
        read_all(path)
    assert type(exc.value) is errors.CorruptRecordError and exc.value.__cause__ is not None
    assert (exc.value.path, exc.value.offset, exc.value.txid) == (path, LOG.start(1), 2)


@pytest.mark.parametrize("payload", NOT_AN_OP.values(), ids=NOT_AN_OP.keys())
def test_an_undecodable_last_payload_with_a_good_crc_is_corruption(tmp_path, payload):
    """A torn write cannot leave a record whose CRC matches: this one was written whole."""
    path = corrupt.write(tmp_path / "edits", LOG.data + frame(payload))
    with pytest.raises(errors.CorruptRecordError, match="complete but damaged") as exc:
        read_all(path)
    assert (exc.value.offset, exc.value.txid) == (len(LOG.data), len(LOG.records) + 1)


# ------------------------------------------------------------------------ reader lifecycle

def test_reading_twice_gives_the_same_state(tmp_path):
    reader = EditsReader(corrupt.write(tmp_path / "edits", LOG.data[:-1]))
    assert list(reader) == list(reader) == LOG.records[:-1]
    assert reader.records == len(LOG.records) - 1 and reader.torn_tail is not None


def test_payloads_are_the_records_fields_in_order(tmp_path):
    log = corrupt.build(list(SAMPLE_OPS.values()))
    reader = EditsReader(corrupt.write(tmp_path / "edits", log.data))
    payloads = list(reader.payloads())
    assert payloads == [(int(op.OP_CODE), txid, *op.values()) for txid, op in log.records]
    assert [OPS[p[0]](*p[2:]) for p in payloads] == [op for _, op in log.records]
    assert reader.records == len(log.records) and reader.valid_length == len(log.data)


@pytest.mark.parametrize("size", [4096 - 60, 4096, 70_000])
def test_records_longer_than_the_length_crc_table_are_checked(tmp_path, size):
    big = SetXAttrOp(CKPT, "user.big", b"v" * size, 3)
    log = corrupt.build([StartLogSegmentOp(), big, SAMPLE_OPS[OpCode.DELETE]])
    path = corrupt.write(tmp_path / "edits", log.data)
    assert read_all(path)[0] == log.records
    flipped = corrupt.write(tmp_path / "flipped", corrupt.flip_bit(log.data, log.start(1) + 100, 3))
    with pytest.raises(errors.CorruptRecordError):
        read_all(flipped)


def test_abandoned_iteration_releases_the_file(tmp_path):
    path = corrupt.write(tmp_path / "edits", LOG.data)
    records = iter(EditsReader(path))
    assert next(records) == LOG.records[0]
    records.close()
    assert read_all(path)[0] == LOG.records


# ------------------------------------------------------------------------ properties

INT = st.integers(-(2**63), 2**64 - 1)
TEXT = st.text(max_size=8)
BLOCKS = st.tuples(INT, INT, INT)
BY_NAME = {"block": BLOCKS, "blocks": st.lists(BLOCKS, max_size=3).map(tuple),
           "srcs": st.lists(TEXT, max_size=3).map(tuple),
           "paths": st.lists(TEXT, max_size=3).map(tuple),
           "entries": st.lists(TEXT, max_size=3).map(tuple)}
BY_TYPE = {"str": TEXT, "int": INT, "bool": st.booleans(), "bytes": st.binary(max_size=8),
           "str | None": st.none() | TEXT, "bytes | None": st.none() | st.binary(max_size=8)}


def op_strategy(cls):
    """Instances of an op class, from its fields (a field of a new kind fails loudly here)."""
    fields = dataclasses.fields(cls)
    return st.builds(cls, *[BY_NAME[f.name] if f.name in BY_NAME else BY_TYPE[f.type]
                            for f in fields])


ANY_OP = st.one_of([op_strategy(OPS[code]) for code in sorted(OPS)])
FIRST_TXID = st.integers(0, 2**63)
LOGS = st.builds(corrupt.build, st.lists(ANY_OP, min_size=1, max_size=6), FIRST_TXID)
FILES = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("cls", OPS.values(), ids=lambda cls: cls.__name__)
@given(data=st.data())
def test_property_any_op_round_trips(cls, data):
    assert_round_trip(data.draw(op_strategy(cls)), data.draw(st.integers(0, 2**64 - 1)))


@FILES
@given(ops=st.lists(ANY_OP, max_size=12), first=FIRST_TXID)
def test_property_written_ops_read_back_exactly(ops, first):
    with tempfile.TemporaryDirectory() as tmp:
        writer = EditsWriter.create(os.path.join(tmp, "edits"), first)
        for txid, op in enumerate(ops, first):
            writer.write(encode_record(txid, op))
        writer.close()
        records, reader = read_all(writer.path)
    assert records == list(enumerate(ops, first)) and reader.torn_tail is None
    assert (reader.valid_length, reader.last_txid) == (writer.size, first + len(ops) - 1)


@FILES
@given(log=LOGS)
def test_property_every_prefix_is_a_prefix_of_the_records(log):
    ends = [end for _, end in log.spans]
    with tempfile.TemporaryDirectory() as tmp:
        path = corrupt.write(os.path.join(tmp, "edits"), log.data)
        for cut in range(len(log.data), HEADER_SIZE - 1, -1):
            os.truncate(path, cut)
            records, reader = read_all(path)
            whole = bisect.bisect_right(ends, cut)
            assert records == log.records[:whole]
            boundary = ends[whole - 1] if whole else HEADER_SIZE
            assert reader.valid_length == boundary
            assert (reader.torn_tail is None) == (cut == boundary)


@FILES
@given(log=LOGS, data=st.data())
def test_property_single_byte_damage_is_never_silent(log, data):
    pos = data.draw(st.integers(HEADER_SIZE, len(log.data) - 1), label="pos")
    damaged = corrupt.xor_byte(log.data, pos, data.draw(st.integers(1, 255), label="mask"))
    hit = bisect.bisect_right([start for start, _ in log.spans], pos) - 1
    try:
        records, reader = corrupt.read_bytes(damaged)
    except errors.CorruptRecordError as err:
        assert err.offset == log.start(hit) and err.txid == log.records[hit][0]
        return
    assert hit == len(log.records) - 1, "damage before the last record must be an error"
    assert records == log.records[:-1] and reader.torn_tail.offset == log.start(-1)
