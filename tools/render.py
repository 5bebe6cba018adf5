"""Small helpers shared by the viewers: where output goes, XML text that survives a parser.

XML 1.0 cannot hold some characters even escaped (most C0 controls, U+FFFE, U+FFFF,
surrogates), and a parser turns a raw carriage return into a newline. ``xml_text`` escapes what
can be escaped (``\\r`` as ``&#13;``); ``xml_safe`` says whether a string can be written at all,
so a caller can hex-encode the rare one that cannot.
"""

from __future__ import annotations

import contextlib
import re
import sys

OUTPUT_BUFFER = 1 << 20

_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"})
_ATTR_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
                               "\r": "&#13;", "\n": "&#10;", "\t": "&#9;"})


def xml_safe(text: str) -> bool:
    return _XML_ILLEGAL.search(text) is None


def xml_text(text: str) -> str:
    return text.translate(_TEXT_ESCAPES)


def xml_attr(text: str) -> str:
    """An attribute value with its quotes; characters XML cannot hold become U+FFFD."""
    return '"' + _XML_ILLEGAL.sub("\ufffd", text).translate(_ATTR_ESCAPES) + '"'


@contextlib.contextmanager
def open_text_output(path: str):
    """A UTF-8 text stream on ``path``; ``-`` is standard output (left open afterwards)."""
    if path == "-":
        stream = sys.stdout
        yield stream
        stream.flush()
        return
    with open(path, "w", encoding="utf-8", newline="\n", buffering=OUTPUT_BUFFER) as stream:
        yield stream
