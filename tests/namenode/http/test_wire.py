"""wire.py: header fields as sent -> the parsed dict, and the cache of parsed header blocks;
where a head ends; chunk sizes."""

import pytest

from nnlite.namenode.http import wire
from nnlite.namenode.http.wire import BadRequest, parse_header_block, parse_headers

FIELDS = [
    # (field lines as sent, CRLF-separated, after the request line) -> headers
    ("", {}),
    ("Host: 127.0.0.1", {"host": "127.0.0.1"}),
    ("Host: a\r\nContent-Length: 0", {"host": "a", "content-length": "0"}),
    ("X-A:  padded  ", {"x-a": "padded"}),
    ("Accept: a\r\nACCEPT: b", {"accept": "a, b"}),
    ("Content-Length: 5\r\ncontent-length: 5", {"content-length": "5"}),
    ("Empty:", {"empty": ""}),
]

REFUSED = [
    ("no colon here", "Malformed header line"),
    (" Host: leading space", "Malformed header line"),
    (": no name", "Malformed header line"),
    ("Content-Length: 5\r\nContent-Length: 6", "Conflicting Content-Length"),
    ("X-A: a\nContent-Length: 5", "Malformed header line"),                # a bare LF
    ("X-A: a\rContent-Length: 5", "Malformed header line"),                # a bare CR
    ("X-A: a\0b", "Malformed header line"),
]


@pytest.mark.parametrize("text, expected", FIELDS)
def test_a_header_block_parses_as_its_lines_do(text, expected):
    assert parse_header_block(text) == expected
    assert parse_header_block(text) == expected                 # again, from the cache
    assert parse_headers(["GET / HTTP/1.1", *text.split("\r\n")] if text else ["GET / HTTP/1.1"]) \
        == expected


@pytest.mark.parametrize("text, message", REFUSED)
def test_a_malformed_block_is_refused_every_time(text, message):
    for _ in range(2):                                          # nothing cached on failure
        with pytest.raises(BadRequest, match=message) as caught:
            parse_header_block(text)
        assert caught.value.status == 400
    assert text not in wire._HEADS


def test_each_request_gets_its_own_copy_of_a_cached_block():
    text = "Host: copy-test\r\nContent-Length: 0"
    first = parse_header_block(text)
    first["host"] = "changed by a handler"
    assert parse_header_block(text) == {"host": "copy-test", "content-length": "0"}


def test_only_short_blocks_are_kept():
    long_block = "X-Long: " + "v" * wire.HEAD_CACHE_KEY
    assert parse_header_block(long_block) == {"x-long": "v" * wire.HEAD_CACHE_KEY}
    assert long_block not in wire._HEADS
    assert len(wire._HEADS) <= wire.HEAD_CACHE


HEADS = [
    # (bytes at the start of the buffer) -> find_head: (end of the last line, body start, bare LF)
    (b"GET / HTTP/1.1\r\nHost: a\r\n\r\nbody", (23, 27, False)),
    (b"GET / HTTP/1.1\r\n\r\n", (14, 18, False)),
    (b"GET / HTTP/1.1\nHost: a\n\nbody", (22, 24, True)),
    (b"GET / HTTP/1.1\n\nGET / HTTP/1.1\r\n\r\n", (14, 16, True)),
    (b"GET / HTTP/1.1\r\nHost: a\r\n", (-1, 0, False)),
]

MIXED_HEADS = [
    b"GET / HTTP/1.1\r\nHost: a\n\n",        # CRLF, then bare LFs
    b"GET / HTTP/1.1\nHost: a\n\r\n",        # a bare LF, then an empty line in CRLF
    b"GET / HTTP/1.1\nX: a\rb\n\n",           # a bare CR in a head of bare LFs
]

REQUEST_LINES = [
    ("GET /a HTTP/1.1", ("GET", "/a", "HTTP/1.1")),
    ("GET /a HTTP/1.0", ("GET", "/a", "HTTP/1.0")),
    ("GET  /a HTTP/1.1", None),
    ("GET /a HTTP/2.0", None),
    ("GET /a HTTP/1.10", None),
    ("GET /a HTTP/1.1\nX:y", None),                # a bare LF in a head of CRLFs
    ("GET /a\nX:y HTTP/1.1", None),
    ("GET /a\rb HTTP/1.1", None),                  # a bare CR
    ("GET /a", None),
]


@pytest.mark.parametrize("data, expected", HEADS)
def test_a_head_ends_at_its_first_empty_line(data, expected):
    assert wire.find_head(bytearray(data)) == expected


@pytest.mark.parametrize("line, expected", REQUEST_LINES)
def test_request_lines(line, expected):
    if expected is not None:
        assert wire.parse_request_line(line) == expected
        return
    with pytest.raises(BadRequest, match="Malformed request line"):
        wire.parse_request_line(line)


@pytest.mark.parametrize("data", MIXED_HEADS)
def test_a_head_ending_its_lines_two_ways_is_refused(data):
    with pytest.raises(BadRequest, match="both in CRLF and in a bare LF"):
        wire.find_head(bytearray(data))


@pytest.mark.parametrize("line, size", [(b"0", 0), (b"1a", 26), (b"5;ext=1", 5), (b"5 ;e", 5),
                                        (b"F" * 16, (1 << 64) - 1)])
def test_chunk_sizes(line, size):
    assert wire.parse_chunk_size(line) == size


@pytest.mark.parametrize("line", [b"", b"+5", b"0x5", b"5_0", b"5 ", b" 5", b"1" * 17, b"5\n",
                                  b"5;a\nb", b"5;a\rb", b"5;\0", b";5"])
def test_malformed_chunk_sizes_are_refused(line):
    with pytest.raises(BadRequest, match="Malformed chunk size"):
        wire.parse_chunk_size(line)
