"""``oev -p binary``: turn a JSON or XML rendering of an edits file back into the file.

The rendering is sniffed from its first byte (``{`` or ``<``). oev's own JSON layout puts one
record per line, so a rendering whose layout is unchanged is read line by line in bounded
memory (any other valid JSON is parsed whole); XML is always read incrementally. Each record is
checked (op name and code, exactly the op's fields, txids running on from ``first_txid``) and
encoded with encode_record; the file is written with EditsWriter to a temp name, fsynced and
published atomically, so a failure leaves no partial file. For any file nnlite wrote,
binary -> JSON/XML -> binary is byte-identical (tools.values keeps every msgpack type).
"""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from nnlite.durability import durable
from nnlite.formats import edits
from nnlite.tools.errors import InputError
from nnlite.tools.oev import Header
from nnlite.tools.values import from_json, from_xml

WRITE_BUFFER = 1 << 20
_INT = re.compile(r"-?[0-9]+")


@dataclass(frozen=True)
class Parsed:
    """One record read back from a rendering."""
    txid: int
    op: edits.Op


def make_op(name, code, fields, where: str) -> edits.Op:
    """The op a rendering describes, after checking name, code and field names."""
    opcode = edits.OpCode.__members__.get(name) if isinstance(name, str) else None
    if opcode is None:
        raise InputError(f"unknown op {name!r}", where=where)
    if type(code) is not int or code != int(opcode):
        raise InputError(f"op {name} has code {int(opcode)}, not {code!r}", where=where)
    cls = edits.OPS[int(opcode)]
    if set(fields) != set(cls.FIELDS):
        raise InputError(f"op {name} takes fields {list(cls.FIELDS)}, not {list(fields)}",
                         where=where)
    return cls(**fields)


def _json_record(rec, where: str) -> Parsed:
    if not isinstance(rec, dict) or not {"txid", "op", "op_code", "fields"} <= set(rec):
        raise InputError("a record needs txid, op, op_code and fields", where=where)
    if not isinstance(rec["fields"], dict) or type(rec["txid"]) is not int:
        raise InputError("fields must be an object and txid an integer", where=where)
    fields = {k: from_json(v, f"{where}, field {k}") for k, v in rec["fields"].items()}
    return Parsed(rec["txid"], make_op(rec["op"], rec["op_code"], fields, where))


def _json_header(head, where: str) -> Header:
    if not isinstance(head, dict) or not all(type(head.get(k)) is int
                                             for k in ("layout_version", "first_txid")):
        raise InputError("header needs integer layout_version and first_txid", where=where)
    if head.get("magic", edits.MAGIC.decode()) != edits.MAGIC.decode():
        raise InputError(f"header magic {head.get('magic')!r} is not {edits.MAGIC.decode()}",
                         where=where)
    return Header(head["layout_version"], head["first_txid"])


def read_json(path: str) -> tuple[Header, Iterator[Parsed], dict]:
    """Header, records and the ``end`` object of a JSON rendering (``end`` is filled in once
    the records are consumed)."""
    end: dict = {}
    with open(path, encoding="utf-8") as f:
        lines = [f.readline(), f.readline()]
    if lines[0] == "{\n" and lines[1].startswith('"header": ') and lines[1].endswith(",\n"):
        head = _loads(lines[1][len('"header": '):-2], path, "line 2")
        return _json_header(head, "header"), _json_lines(path, end), end
    with open(path, encoding="utf-8") as f:
        doc = _loads(f.read(), path, "document")
    if not isinstance(doc, dict) or not isinstance(doc.get("records"), list):
        raise InputError("not an oev JSON rendering (no records array)", path=path)
    end.update(doc.get("end") or {})
    records = (_json_record(rec, f"record {i}") for i, rec in enumerate(doc["records"]))
    return _json_header(doc.get("header"), "header"), records, end


def _json_lines(path: str, end: dict) -> Iterator[Parsed]:
    """Records of a rendering in oev's own layout: line 3 opens the array, one per line."""
    with open(path, encoding="utf-8") as f:
        for _ in range(2):
            f.readline()
        if f.readline() != '"records": [\n':
            raise InputError('line 3 must be "records": [', path=path)
        for number, line in enumerate(f, start=4):
            if line.startswith("]"):
                rest = (line[1:] + f.read()).strip().removeprefix(",")
                tail = _loads("{" + rest, path, f"line {number}")
                end.update(tail.get("end") or {})
                return
            text = line.rstrip("\n").removesuffix(",")
            yield _json_record(_loads(text, path, f"line {number}"), f"line {number}")
    raise InputError("the records array is not closed", path=path)


def _loads(text: str, path: str, where: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc}", path=path, where=where) from exc


def read_xml(path: str) -> tuple[Header, Iterator[Parsed], dict]:
    end: dict = {}
    events = ET.iterparse(path, events=("start", "end"))
    try:
        _, root = next(events)
    except ET.ParseError as exc:
        raise InputError(f"invalid XML: {exc}", path=path) from exc
    if root.tag != "edits":
        raise InputError(f"root element is <{root.tag}>, expected <edits>", path=path)
    head = {k: _xml_int(root.get(k), k, path) for k in ("layout_version", "first_txid")}
    if root.get("magic", edits.MAGIC.decode()) != edits.MAGIC.decode():
        raise InputError(f"magic {root.get('magic')!r} is not {edits.MAGIC.decode()}", path=path)
    return Header(**head), _xml_records(path, events, root, end), end


def _xml_records(path: str, events, root: ET.Element, end: dict) -> Iterator[Parsed]:
    depth, index = 1, 0
    try:
        for event, elem in events:
            depth += 1 if event == "start" else -1
            if event != "end" or depth != 1:
                continue
            if elem.tag == "record":
                yield _xml_record(elem, path, index)
                index += 1
            elif elem.tag == "end":
                end.update(elem.attrib)
                end.update({child.tag: dict(child.attrib) for child in elem})
            root.clear()
    except ET.ParseError as exc:
        raise InputError(f"invalid XML: {exc}", path=path) from exc


def _xml_record(elem: ET.Element, path: str, index: int) -> Parsed:
    where = f"record {index}"
    txid = _xml_int(elem.get("txid"), "txid", path, where)
    code = _xml_int(elem.get("op_code"), "op_code", path, where)
    fields: dict = {}
    for child in elem:
        if child.tag in fields:
            raise InputError(f"field {child.tag} given twice", path=path, where=where)
        fields[child.tag] = from_xml(child, f"{where}, field {child.tag}")
    return Parsed(txid, make_op(elem.get("op"), code, fields, where))


def _xml_int(text: str | None, name: str, path: str, where: str | None = None) -> int:
    if text is None or not _INT.fullmatch(text):
        raise InputError(f"attribute {name} must be an integer, not {text!r}", path=path,
                         where=where)
    return int(text)


def read_rendering(path: str) -> tuple[Header, Iterator[Parsed], dict]:
    """Sniff JSON (``{``) or XML (``<``) from the first non-blank byte."""
    with open(path, "rb") as f:
        head = f.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"{"):
        return read_json(path)
    if head.startswith(b"<"):
        return read_xml(path)
    raise InputError("not a JSON or XML rendering of an edits file", path=path)


@dataclass(frozen=True)
class BinaryResult:
    path: str
    records: int
    first_txid: int
    last_txid: int
    size: int
    source_end: dict


def to_binary(source: str, target: str) -> BinaryResult:
    """Write the edits file a rendering describes; txids must run on from first_txid. It is written
    in the current layout version (a rendering of an older file too: every version adds ops, none
    changes one). The file is published atomically (temp, fsync, rename), so a failure leaves no
    partial file."""
    header, records, end = read_rendering(os.fspath(source))
    if header.layout_version not in edits.READABLE_VERSIONS:
        raise InputError(f"layout version {header.layout_version}; this build reads and "
                         f"writes versions {', '.join(map(str, edits.READABLE_VERSIONS))}",
                         path=source, where="header")
    final = Path(target)
    tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
    try:
        count, size = _write_records(str(tmp), header.first_txid, records, source)
        durable.publish(tmp, final, synced=True)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return BinaryResult(str(final), count, header.first_txid, header.first_txid + count - 1,
                        size, end)


def _write_records(tmp: str, first_txid: int, records: Iterator[Parsed],
                   source: str) -> tuple[int, int]:
    writer = edits.EditsWriter.create(tmp, first_txid)
    try:
        buffer, count = bytearray(), 0
        for parsed in records:
            expected = first_txid + count
            if parsed.txid != expected:
                raise InputError(f"txid {parsed.txid} where {expected} must come (txids run "
                                 f"on from first_txid without gaps)", path=source,
                                 where=f"record {count}")
            buffer += _encode(parsed, source, count)
            count += 1
            if len(buffer) >= WRITE_BUFFER:
                writer.write(buffer)
                buffer = bytearray()
        writer.write(buffer)
        writer.fsync()
        return count, writer.size
    finally:
        writer.close()


def _encode(parsed: Parsed, source: str, index: int) -> bytes:
    try:
        return edits.encode_record(parsed.txid, parsed.op)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"cannot encode txid {parsed.txid}: {exc}", path=source,
                         where=f"record {index}") from exc


def describe_binary(result: BinaryResult) -> str:
    txids = (f"txids {result.first_txid}..{result.last_txid}" if result.records
             else "no records")
    text = f"oev: wrote {result.records} records, {txids}, {result.size} bytes to {result.path}"
    stopped = [k for k in ("torn_tail", "error") if result.source_end.get(k)]
    if stopped:
        text += (f"; note: the rendering records a {' and an '.join(stopped)} after its last "
                 f"record, which the new file does not hold")
    return text
