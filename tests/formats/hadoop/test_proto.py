"""Message classes from field tables, and varint-delimited framing (formats/hadoop/proto.py)."""

import pytest

from nnlite.formats.hadoop.proto import (
    ProtoError,
    Schema,
    delimited,
    parse_delimited,
    read_varint,
    varint,
)

S = Schema("nnlite.tests.proto")
KIND = S.enum("KindProto", BUILTIN=0, WRITABLE=1, PROTOCOL_BUFFER=2)
STATUS = S.enum("StatusProto", SUCCESS=0, ERROR=1)
S.message("HeaderProto",
          "optional KindProto kind = 1",
          "required sint32 callId = 3",
          "optional sint32 retryCount = 5 [default = -1]",
          "optional StatusProto status = 6 [default = ERROR]",
          "repeated bool cached = 7 [packed=true]",
          "optional InnerProto inner = 8")
S.message("InnerProto", "required bytes clientId = 4")
Header = S.build()["HeaderProto"]


def test_fields_defaults_and_forward_references():
    h = Header(kind=KIND.PROTOCOL_BUFFER, callId=-3)
    assert (h.retryCount, h.status) == (-1, STATUS.ERROR)
    h.inner.clientId = b"ab"
    h.cached.extend([True, False])
    back, end = parse_delimited(Header, delimited(h) + b"rest")
    assert back == h and end == len(delimited(h))


def test_the_wire_bytes_are_protobuf_s():
    # field 1 varint 2, field 3 zigzag(-3) = 5: what Java's writeDelimitedTo sends
    assert delimited(Header(kind=2, callId=-3)) == bytes([4, 0x08, 2, 0x18, 5])


@pytest.mark.parametrize("n", [0, 1, 127, 128, 300, 2 ** 32, 2 ** 63])
def test_varints_round_trip(n):
    assert read_varint(varint(n) + b"x") == (n, len(varint(n)))


@pytest.mark.parametrize("data,says", [
    (b"\x02\x08\x02", "required callId missing"),
    (b"\x05\x08", "cut short"),
    (b"\x02\xff\xff", "malformed HeaderProto"),
    (b"\xff" * 11, "varint"),
])
def test_bad_bytes_are_one_clear_error(data, says):
    with pytest.raises(ProtoError, match=says):
        parse_delimited(Header, data)
