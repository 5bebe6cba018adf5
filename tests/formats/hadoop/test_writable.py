"""Hadoop's Writable primitives (formats/hadoop/writable.py): WritableUtils' variable-length
integers byte for byte, Text, and the offset of a truncated field."""

import pytest

from nnlite.formats.hadoop import writable
from nnlite.formats.hadoop.writable import Reader, WritableError

VLONGS = [  # value, WritableUtils.writeVLong's bytes
    pytest.param(0, "00", id="zero"),
    pytest.param(127, "7f", id="largest-one-byte"),
    pytest.param(-112, "90", id="smallest-one-byte"),
    pytest.param(128, "8f80", id="one-byte-follows"),
    pytest.param(-113, "8770", id="negative-one-byte-follows"),
    pytest.param(255, "8fff", id="255"),
    pytest.param(256, "8e0100", id="two-bytes"),
    pytest.param(1_700_000_000_000, "8a018bcfe56800", id="a-date-in-ms"),
    pytest.param((1 << 63) - 1, "887fffffffffffffff", id="long-max"),
    pytest.param(-(1 << 63), "807fffffffffffffff", id="long-min"),
]


@pytest.mark.parametrize("value, raw", VLONGS)
def test_vlong_is_writable_utils_layout_both_ways(value, raw):
    assert writable.vlong(value).hex() == raw
    reader = Reader(bytes.fromhex(raw))
    assert reader.vlong() == value and reader.at_end()


def test_vint_refuses_what_a_java_int_cannot_hold():
    with pytest.raises(WritableError):
        writable.vint(1 << 31)
    with pytest.raises(WritableError, match="out of range"):
        Reader(writable.vlong(1 << 40)).vint()


def test_text_is_a_vint_length_and_utf8():
    assert writable.text("hé") == b"\x03h\xc3\xa9"
    assert Reader(b"\x03h\xc3\xa9").text() == "hé"


@pytest.mark.parametrize("raw, offset", [
    pytest.param(b"\x05abc", 1, id="text-cut-short"),
    pytest.param(b"\x8e\x01", 1, id="vlong-cut-short"),
    pytest.param(b"", 0, id="nothing"),
])
def test_a_truncated_field_names_its_offset(raw, offset):
    with pytest.raises(WritableError, match=f"offset {offset}"):
        Reader(raw).text()


def test_bad_utf8_is_a_writable_error():
    with pytest.raises(WritableError, match="UTF-8"):
        Reader(b"\x01\xff").text()
