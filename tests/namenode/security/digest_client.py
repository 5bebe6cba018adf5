"""Forged DIGEST-MD5 responses for the refusal tests: ``forge(response, **directives)`` is a
client's response (``digest_md5.DigestMD5Client.respond``) with some directives replaced,
each given as it goes on the wire (quoted or not)."""

from __future__ import annotations

from nnlite.namenode.security.digest_md5 import parse_directives

UNQUOTED = {"nc", "qop", "response", "charset", "maxbuf", "cipher"}   # RFC 2831's tokens


def forge(original: bytes, /, **override: str) -> bytes:
    fields = {name: value if name in UNQUOTED else f'"{value}"'
              for name, value in parse_directives(original).items()}
    fields.update(override)
    return ",".join(f"{name}={value}" for name, value in fields.items()).encode()
