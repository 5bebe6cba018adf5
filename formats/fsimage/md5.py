"""The fsimage's digests: the MD5 of a whole image file and its ``fsimage.md5`` sidecar.

Sidecar layout: one line, ``"<32 lowercase hex digits> *<image name>\\n"``, as md5sum writes in
binary mode; a reader also accepts md5sum's text mode (two spaces) and uppercase hex, and always
returns lowercase. The MD5 is of every byte of the image file, so it is the same whether the
writer hashed the bytes on their way to disk or a reader hashes the file afterwards.
"""

from __future__ import annotations

import hashlib
import os
import re

from nnlite.formats.errors import ImageCorruptError
from nnlite.formats.fsimage.layout import IMAGE_NAME

_SIDECAR = re.compile(r"([0-9a-fA-F]{32}) [ *]([^\n]+)\n?")


def new_md5():
    # MD5 is an integrity digest here, as in Hadoop; say so, so FIPS builds allow it.
    return hashlib.md5(usedforsecurity=False)


def file_md5(path) -> str:
    """The MD5 of a whole file, read in large chunks."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, new_md5).hexdigest()


def verify_md5(path, expected_md5: str) -> None:
    """Raise ImageCorruptError unless the file's MD5 is ``expected_md5``."""
    actual = file_md5(path)
    if actual != expected_md5.lower():
        raise ImageCorruptError(f"MD5 mismatch: expected {expected_md5}, actual {actual}",
                                path=os.fspath(path))


def md5_sidecar_text(md5_hex: str, image_name: str = IMAGE_NAME) -> str:
    """The text of an ``.md5`` sidecar: ``"<hex> *<image_name>\\n"``."""
    if not re.fullmatch(r"[0-9a-f]{32}", md5_hex):
        raise ValueError(f"not a lowercase MD5 hex digest: {md5_hex!r}")
    if not image_name or "\n" in image_name:
        raise ValueError(f"bad image name {image_name!r}")
    return f"{md5_hex} *{image_name}\n"


def parse_md5_sidecar(text: str | bytes, *, path=None) -> str:
    """The lowercase hex digest in a sidecar's text; ImageCorruptError when malformed.

    Accepts md5sum's text mode (two spaces) as well as binary mode (``" *"``).
    """
    if isinstance(text, bytes):
        text = text.decode("ascii", errors="replace")
    match = _SIDECAR.fullmatch(text)
    if match is None:
        where = None if path is None else os.fspath(path)
        raise ImageCorruptError(f"malformed MD5 sidecar {text[:80]!r}", path=where)
    return match.group(1).lower()
