"""How an op's field values are written in JSON and XML so that they turn back into exactly the
same msgpack (used by ``oev`` both ways).

    JSON: str, int, bool, null as themselves; bytes as {"$bytes": "<hex>"}; arrays as lists.
    XML:  <field>text</field> is a str; otherwise t="int" | "bool" | "nil" | "bytes" (hex) |
          "list" (<item> children) | "str-hex" (UTF-8 hex, for a str XML cannot hold).

A value of any other type (a file written by something else) is rendered as {"$repr": ...} or
t="repr" and cannot be turned back.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from nnlite.tools.errors import InputError
from nnlite.tools.render import xml_safe, xml_text

_INT = re.compile(r"-?[0-9]+")


def to_json(value):
    if isinstance(value, (bytes, bytearray)):
        return {"$bytes": bytes(value).hex()}
    if isinstance(value, (tuple, list)):
        return [to_json(v) for v in value]
    if value is None or isinstance(value, (str, int)):
        return value
    return {"$repr": repr(value)}


def from_json(value, where: str):
    if isinstance(value, list):
        return tuple(from_json(v, where) for v in value)
    if isinstance(value, dict):
        if set(value) == {"$bytes"} and isinstance(value["$bytes"], str):
            return _unhex(value["$bytes"], where)
        raise InputError(f"an object here must be {{\"$bytes\": hex}}, not {value!r:.80}",
                         where=where)
    if value is None or isinstance(value, (str, int)):
        return value
    raise InputError(f"unsupported value {value!r:.80} (a float?)", where=where)


def _unhex(text: str, where: str) -> bytes:
    try:
        return bytes.fromhex(text)
    except ValueError as exc:
        raise InputError(f"bad hex {text[:40]!r}", where=where) from exc


def to_xml(tag: str, value) -> str:
    if isinstance(value, str):
        if xml_safe(value):
            return f"<{tag}>{xml_text(value)}</{tag}>" if value else f"<{tag}/>"
        return f'<{tag} t="str-hex">{value.encode("utf-8", "surrogatepass").hex()}</{tag}>'
    if isinstance(value, bool):
        return f'<{tag} t="bool">{"true" if value else "false"}</{tag}>'
    if isinstance(value, int):
        return f'<{tag} t="int">{value}</{tag}>'
    if value is None:
        return f'<{tag} t="nil"/>'
    if isinstance(value, (bytes, bytearray)):
        return f'<{tag} t="bytes">{bytes(value).hex()}</{tag}>'
    if isinstance(value, (tuple, list)):
        return f'<{tag} t="list">{"".join(to_xml("item", v) for v in value)}</{tag}>'
    return f'<{tag} t="repr">{xml_text(ascii(value))}</{tag}>'


def from_xml(elem: ET.Element, where: str):
    kind, text = elem.get("t", "str"), elem.text or ""
    if kind == "list":
        return tuple(from_xml(child, where) for child in elem)
    if len(elem):
        raise InputError(f"<{elem.tag} t={kind!r}> cannot have child elements", where=where)
    if kind == "str":
        return text
    if kind == "int" and _INT.fullmatch(text):
        return int(text)
    if kind == "bool" and text in ("true", "false"):
        return text == "true"
    if kind == "nil" and not text:
        return None
    if kind == "bytes":
        return _unhex(text, where)
    if kind == "str-hex":
        try:
            return _unhex(text, where).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError("str-hex is not UTF-8", where=where) from exc
    raise InputError(f"<{elem.tag} t={kind!r}> with text {text[:40]!r} is not a value",
                     where=where)
