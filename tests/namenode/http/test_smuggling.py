"""Request smuggling: a request whose framing two HTTP/1.1 parsers could read two ways (a proxy
in front and the namenode) gets one 400 and the connection closed, so that nothing sent behind
it is ever read as a request of its own.

Each case is a MKDIRS of /outer that hides a second one, of /smuggled, where a parser reading
the framing the other way finds it: Content-Length beside Transfer-Encoding (RFC 9112 6.3), a
coding on HTTP/1.0 (6.1), malformed chunk sizes and chunk or trailer lines ending in a bare LF
(7.1), a field line folded (5.2) or holding a bare CR, a bare LF or a NUL (RFC 9110 5.5), a
head whose lines end both in CRLF and in a bare LF (2.2), an HTTP/0.9 request line with fields
(llhttp #877). Neither directory may appear.
"""

from __future__ import annotations

import json
import socket
import time

import pytest

from tests.namenode.http.helpers import WebHdfs, parse_replies

SMUGGLED = (b"PUT /webhdfs/v1/smuggled?op=MKDIRS&user.name=tester HTTP/1.1\r\n"
            b"Content-Length: 0\r\n\r\n")
CHUNK = b"%x\r\n%s\r\n" % (len(SMUGGLED), SMUGGLED)     # the smuggled request as chunk data


def put(*fields: bytes, body: bytes = b"", version: bytes = b"HTTP/1.1", eol: bytes = b"\r\n"
        ) -> bytes:
    """The MKDIRS of /outer with ``fields``, each line ended by ``eol``, then ``body``."""
    head = [b"PUT /webhdfs/v1/outer?op=MKDIRS&user.name=tester " + version, *fields, b""]
    return eol.join(head) + eol + body


CASES = {
    # a proxy going by Content-Length forwards one request; a parser going by the chunks, two
    "length, then chunked": put(b"Content-Length: %d" % (5 + len(SMUGGLED)),
                                b"Transfer-Encoding: chunked", body=b"0\r\n\r\n" + SMUGGLED),
    "chunked, then length": put(b"Transfer-Encoding: chunked", b"Content-Length: 4",
                                body=CHUNK + b"0\r\n\r\n"),
    "two lengths": put(b"Content-Length: 0", b"Content-Length: %d" % len(SMUGGLED),
                       body=SMUGGLED),
    "a list of lengths": put(b"Content-Length: 0, %d" % len(SMUGGLED), body=SMUGGLED),
    "chunked twice": put(b"Transfer-Encoding: chunked", b"Transfer-Encoding: chunked",
                         body=b"0\r\n\r\n" + SMUGGLED),
    "chunked, then identity": put(b"Transfer-Encoding: chunked, identity",
                                  body=b"0\r\n\r\n" + SMUGGLED),
    "chunked on HTTP/1.0": put(b"Connection: keep-alive", b"Transfer-Encoding: chunked",
                               body=b"0\r\n\r\n" + SMUGGLED, version=b"HTTP/1.0"),
    "a space before the colon": put(b"Transfer-Encoding : chunked", b"Content-Length: 4",
                                    body=CHUNK + b"0\r\n\r\n"),
    "a folded coding": put(b"Content-Length: 4", b"Transfer-Encoding:", b" chunked",
                           body=CHUNK + b"0\r\n\r\n"),
    "a folded first line": put(b" Content-Length: %d" % len(SMUGGLED), body=SMUGGLED),
    "a bare LF hides a length": put(b"Host: x\nContent-Length: %d" % len(SMUGGLED),
                                    body=SMUGGLED),
    "a bare LF ends one line": put(b"Content-Length: %d" % len(SMUGGLED), b"Host: x",
                                   eol=b"\n").replace(b"x\n\n", b"x\r\n\r\n") + SMUGGLED,
    "a bare LF, then CRLF, ends the head": put(b"Host: x", eol=b"\n")[:-1] + b"\r\n" + SMUGGLED,
    "a bare CR hides a length": put(b"Host: x\rContent-Length: %d" % len(SMUGGLED),
                                    body=SMUGGLED),
    "a NUL in a field": put(b"X-A: a\0b", b"Content-Length: %d" % len(SMUGGLED),
                            body=SMUGGLED),
    "a bare LF ends the request line": put(b"Content-Length: %d" % len(SMUGGLED),
                                           body=SMUGGLED).replace(b"HTTP/1.1\r\n",
                                                                  b"HTTP/1.1\nX: y\r\n", 1),
    "an HTTP/0.9 request line with fields": put(b"Content-Length: %d" % len(SMUGGLED),
                                                body=SMUGGLED).replace(b" HTTP/1.1\r\n", b"\n", 1),
    "a chunk size with a space after it": put(b"Transfer-Encoding: chunked",
                                              body=b"%x \r\n%s\r\n0\r\n\r\n"
                                              % (len(SMUGGLED), SMUGGLED)),
    "a chunk size with a space before it": put(b"Transfer-Encoding: chunked",
                                               body=b" %x\r\n%s\r\n0\r\n\r\n"
                                               % (len(SMUGGLED), SMUGGLED)),
    "a chunk size of 17 digits": put(b"Transfer-Encoding: chunked",
                                     body=b"1" + b"0" * 16 + b"\r\n" + SMUGGLED),
    "a chunk size with an underscore": put(b"Transfer-Encoding: chunked",
                                           body=b"0_0\r\n\r\n" + SMUGGLED),
    "a bare LF after a chunk size": put(b"Transfer-Encoding: chunked",
                                        body=b"0\n\r\n" + SMUGGLED),
    "a bare LF in a chunk extension": put(b"Transfer-Encoding: chunked",
                                          body=b"0;a\n\r\n" + SMUGGLED),
    "a bare LF after chunk data": put(b"Transfer-Encoding: chunked",
                                      body=b"2\r\nab\n0\r\n\r\n" + SMUGGLED),
    "a bare LF ends the trailer": put(b"Transfer-Encoding: chunked", body=b"0\r\n\n" + SMUGGLED),
    "a trailer line that is no field": put(b"Transfer-Encoding: chunked",
                                           body=b"0\r\nno field\r\n\r\n" + SMUGGLED),
}


@pytest.fixture(scope="module")
def nn(module_namenode):
    return module_namenode


def until_closed(port: int, data: bytes, timeout: float = 5) -> tuple[bytes, bool]:
    """Send ``data``; what comes back, and whether the server closed (not our time-out)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        out, deadline = b"", time.monotonic() + timeout
        try:
            while chunk := sock.recv(65536):
                out += chunk
                if time.monotonic() > deadline:
                    return out, False
        except TimeoutError:
            return out, False
        except ConnectionResetError:
            pass
        return out, True


@pytest.mark.parametrize("case", range(len(CASES)), ids=CASES.keys())
def test_a_request_framed_two_ways_gets_one_400_and_the_connection_closed(nn, case):
    outer, smuggled = f"o{case:04d}".encode(), f"smug{case:04d}".encode()   # as long as before
    data = list(CASES.values())[case].replace(b"/outer?", b"/" + outer + b"?")
    out, closed = until_closed(nn.port, data.replace(b"/smuggled?", b"/" + smuggled + b"?"))
    [(status, body)] = parse_replies(out)
    assert status == 400 and "RemoteException" in json.loads(body), out
    assert b"\r\nConnection: close\r\n" in out.split(b"\r\n\r\n")[0] + b"\r\n"
    assert closed
    w = WebHdfs(nn)
    assert w.alive()
    assert not {outer.decode(), smuggled.decode()} & set(w.names("/"))


UPLOAD_TRAILERS = {"a bare LF ends the trailer": b"0\r\n\n" + SMUGGLED,
                   "a trailer line that is no field": b"0\r\nno field\r\n\r\n" + SMUGGLED}


@pytest.mark.parametrize("case", range(len(UPLOAD_TRAILERS)), ids=UPLOAD_TRAILERS.keys())
def test_a_streamed_upload_whose_trailer_hides_a_request_gets_one_400(nn, case):
    """The data path reads a chunked body as it streams (stream.BodyStream), not through
    wire.read_chunked: its trailer lines are checked the same way."""
    trailer = list(UPLOAD_TRAILERS.values())[case]
    out, closed = until_closed(nn.port, b"PUT /data/v1/up%d?op=CREATE&user.name=" % case +
                               b"tester HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                               b"5\r\nhello\r\n" + trailer)
    [(status, body)] = parse_replies(out)
    assert status == 400 and "RemoteException" in json.loads(body), out
    assert closed
    assert "smuggled" not in WebHdfs(nn).names("/")
