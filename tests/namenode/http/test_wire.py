"""wire.py: header fields as sent -> the parsed dict, and the cache of parsed header blocks."""

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
