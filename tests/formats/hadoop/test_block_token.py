"""formats/hadoop/block_token.py: BlockTokenIdentifier's legacy Writable bytes, field by field
(a byte table written from Hadoop's writeLegacy), its protobuf form, and the damage a reader
must refuse with the offset. Hadoop's own readFields reads these bytes in
tests/namenode/datanode/test_java_transfer.py."""

from __future__ import annotations

import pytest

from nnlite.formats.hadoop.block_token import BlockTokenIdentifier
from nnlite.formats.hadoop.hdfs import BlockTokenSecretProto
from nnlite.formats.hadoop.writable import WritableError

WRITE_TOKEN = BlockTokenIdentifier(
    expiry_date=1_700_000_000_000, key_id=5, user_id="alice", block_pool_id="BP-7-nnlite-0",
    block_id=(1 << 30) + 1, modes=frozenset({"WRITE"}))

LEGACY = bytes.fromhex(
    "8a018bcfe56800"                    # vlong expiryDate: -118 = six bytes follow
    "05"                                # vint keyId
    "00000005") + b"alice" + bytes.fromhex(   # WritableUtils.writeString: int32 length
    "0000000d") + b"BP-7-nnlite-0" + bytes.fromhex(
    "8c40000001"                        # vlong blockId: four bytes
    "01") + b"\x05WRITE" + bytes.fromhex(   # one mode, writeEnum = Text of its name
    "00"                                # no storage types
    "00")                               # no storage ids


def test_the_legacy_layout_field_by_field():
    assert WRITE_TOKEN.encode() == LEGACY
    decoded = BlockTokenIdentifier.decode(LEGACY)
    assert decoded == WRITE_TOKEN
    assert decoded.raw == LEGACY


def test_modes_are_written_in_their_ordinal_order():
    both = BlockTokenIdentifier(1 << 40, 2, "", "BP", 3, frozenset({"WRITE", "READ"}))
    assert b"\x02\x04READ\x05WRITE" in both.encode()
    assert BlockTokenIdentifier.decode(both.encode()).modes == {"READ", "WRITE"}


def test_storage_fields_and_a_handshake_secret_read_back():
    full = BlockTokenIdentifier(-1, 0, "", "BP", 9, frozenset({"READ"}), ("DISK", "SSD"),
                                ("DS-1",), b"auth-conf")
    assert BlockTokenIdentifier.decode(full.encode()) == full


def test_a_decoded_identifier_keeps_its_own_bytes():
    """A password is an HMAC of the bytes the token carries (Hadoop's cache)."""
    with_trailing_zero = LEGACY + b"\x00"          # an empty handshake secret's vint
    decoded = BlockTokenIdentifier.decode(with_trailing_zero)
    assert decoded == WRITE_TOKEN
    assert decoded.encode() == with_trailing_zero


def test_the_protobuf_form_is_told_apart_by_its_first_byte():
    proto = BlockTokenSecretProto(expiryDate=1_700_000_000_000, keyId=5, userId="alice",
                                  blockPoolId="BP-7-nnlite-0", blockId=(1 << 30) + 1,
                                  modes=[2]).SerializeToString()
    assert proto[0] == 0x08                       # field 1, varint
    assert BlockTokenIdentifier.decode(proto) == WRITE_TOKEN


def test_the_text_hadoop_s_refusals_quote():
    assert str(WRITE_TOKEN) == (
        "block_token_identifier (expiryDate=1700000000000, keyId=5, userId=alice, "
        "blockPoolId=BP-7-nnlite-0, blockId=1073741825, access modes=[WRITE], "
        "storageTypes= [], storageIds= [])")


@pytest.mark.parametrize("damaged, offset", [
    pytest.param(b"", 0, id="empty"),
    pytest.param(LEGACY[:3], 1, id="expiry-cut"),
    pytest.param(LEGACY[:10], 8, id="user-length-cut"),
    pytest.param(LEGACY[:-1], len(LEGACY) - 1, id="storage-ids-missing"),
    pytest.param(LEGACY[:-9] + b"\x05" + LEGACY[-8:], len(LEGACY) - 9, id="five-modes"),
    pytest.param(LEGACY[:-8] + b"\x05WRITX" + LEGACY[-2:], len(LEGACY) - 8, id="unknown-mode"),
    pytest.param(LEGACY + b"\x01", len(LEGACY) + 1, id="secret-cut"),
    pytest.param(LEGACY + b"\x00\x00", len(LEGACY) + 1, id="bytes-after"),
])
def test_damaged_identifiers_are_refused_with_their_offset(damaged, offset):
    with pytest.raises(WritableError) as refused:
        BlockTokenIdentifier.decode(damaged)
    assert refused.value.offset == offset


def test_a_protobuf_that_does_not_parse_is_refused():
    with pytest.raises(WritableError):
        BlockTokenIdentifier.decode(b"\x08\xff")
