"""The offline edits viewer: an edits log as JSON, XML or per-op statistics.

``view`` renders every record with its offset, txid, op name, op code and fields (in the op's
declaration order; values as tools.values writes them), after the header (magic, layout
version, first txid), and ends with what the reader found at the end: record count, txid range,
valid length, and a torn tail or the error that stopped it (offset, txid). The records before a
torn tail or a corruption are all rendered, then the caller is told (``ViewResult``); nothing is
skipped silently. The JSON rendering puts one record per line. The reverse, a rendering back
into an edits file, is tools.oev_binary.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass

from nnlite.formats import edits
from nnlite.formats.errors import FormatError
from nnlite.tools import OEV_PROCESSORS
from nnlite.tools.errors import OptionError
from nnlite.tools.render import open_text_output, xml_attr
from nnlite.tools.values import to_json, to_xml

PROCESSORS = OEV_PROCESSORS


# ----------------------------------------------------------------------------------- reading

@dataclass(frozen=True)
class Header:
    layout_version: int
    first_txid: int


@dataclass
class ViewResult:
    """What the reader found: records read, txid range, valid length, torn tail or error."""
    path: str
    size: int
    header: Header
    records: int = 0
    last_txid: int = 0
    valid_length: int = edits.HEADER_SIZE
    torn_tail: edits.TornTail | None = None
    error: FormatError | None = None

    def summary(self) -> dict:
        tail = self.torn_tail
        return {"records": self.records, "first_txid": self.header.first_txid,
                "last_txid": self.last_txid, "valid_length": self.valid_length,
                "file_size": self.size,
                "torn_tail": None if tail is None else {"offset": tail.offset,
                                                        "length": tail.length,
                                                        "reason": tail.reason},
                "error": None if self.error is None else error_record(self.error)}


def error_record(exc: FormatError) -> dict:
    return {"type": type(exc).__name__, "message": str(exc), "offset": exc.offset,
            "txid": exc.txid}


def scan(reader: edits.EditsReader, sink) -> ViewResult:
    """Feed every record to ``sink`` (begin, record, end); an error after the header ends the
    rendering and is returned in the result."""
    result = ViewResult(reader.path, os.path.getsize(reader.path),
                        Header(edits.LAYOUT_VERSION, reader.first_txid))
    sink.begin(result.header)
    try:
        for txid, op in reader:
            # While a record is yielded, valid_length is still the end of the one before it.
            sink.record(reader.valid_length, txid, op)
    except FormatError as exc:
        result.error = exc
    result.records, result.last_txid = reader.records, reader.last_txid
    result.valid_length, result.torn_tail = reader.valid_length, reader.torn_tail
    sink.end(result)
    return result


def op_name(op: edits.Op) -> str:
    return edits.OpCode(op.OP_CODE).name


# ------------------------------------------------------------------------------------ sinks

class JsonSink:
    """``{"header": ..., "records": [ one per line ], "end": ...}``."""

    def __init__(self, out, secrets: bool = False):
        self.out = out
        self.secrets = secrets
        self._separator = ""

    def begin(self, header: Header) -> None:
        head = {"magic": edits.MAGIC.decode(), "layout_version": header.layout_version,
                "first_txid": header.first_txid}
        self.out.write('{\n"header": ' + json.dumps(head) + ',\n"records": [\n')

    def record(self, offset: int, txid: int, op: edits.Op) -> None:
        hidden = () if self.secrets else edits.SECRET_FIELDS.get(op.CODE, ())
        fields = {name: {"$hidden": _hidden(op, name)} if name in hidden
                  else to_json(getattr(op, name)) for name in op.FIELDS}
        rec = {"offset": offset, "txid": txid, "op": op_name(op), "op_code": int(op.OP_CODE),
               "fields": fields}
        self.out.write(self._separator + json.dumps(rec, ensure_ascii=False))
        self._separator = ",\n"

    def end(self, result: ViewResult) -> None:
        self.out.write(("\n" if self._separator else "") + '],\n"end": '
                       + json.dumps(result.summary(), ensure_ascii=False) + "\n}\n")


def _hidden(op: edits.Op, name: str) -> str:
    """What a viewer shows of a secret field (a delegation master key): its size only, so an
    edits file's rendering can be shared; such a rendering cannot be turned back into edits
    (``oev --show-secrets`` renders the secrets)."""
    return f"{len(getattr(op, name))} bytes"


class XmlSink:
    """``<edits ...><record ...>fields</record>...<end .../></edits>``."""

    def __init__(self, out, secrets: bool = False):
        self.out = out
        self.secrets = secrets

    def begin(self, header: Header) -> None:
        self.out.write(f'<?xml version="1.0" encoding="UTF-8"?>\n<edits magic='
                       f'{xml_attr(edits.MAGIC.decode())} layout_version="{header.layout_version}"'
                       f' first_txid="{header.first_txid}">\n')

    def record(self, offset: int, txid: int, op: edits.Op) -> None:
        hidden = () if self.secrets else edits.SECRET_FIELDS.get(op.CODE, ())
        fields = "".join(f'<{name} t="hidden">{_hidden(op, name)}</{name}>' if name in hidden
                         else to_xml(name, getattr(op, name)) for name in op.FIELDS)
        attrs = f'offset="{offset}" txid="{txid}" op="{op_name(op)}" op_code="{op.OP_CODE:d}"'
        self.out.write(f"<record {attrs}>{fields}</record>\n" if fields
                       else f"<record {attrs}/>\n")

    def end(self, result: ViewResult) -> None:
        summary = result.summary()
        tail, error = summary.pop("torn_tail"), summary.pop("error")
        attrs = " ".join(f'{k}="{v}"' for k, v in summary.items())
        inner = ""
        if tail:
            inner += "<torn_tail " + _attrs(tail) + "/>"
        if error:
            inner += "<error " + _attrs(error) + "/>"
        self.out.write(f"<end {attrs}>{inner}</end>\n" if inner else f"<end {attrs}/>\n")
        self.out.write("</edits>\n")


def _attrs(values: dict) -> str:
    return " ".join(f"{k}={xml_attr(str(v))}" for k, v in values.items() if v is not None)


class StatsSink:
    """Records and bytes per op, by op code, then the reader's summary."""

    def __init__(self, out, secrets: bool = False):
        self.out = out
        self.counts: Counter[int] = Counter()
        self.sizes: Counter[int] = Counter()
        self._last: tuple[int, int] | None = None   # (offset, op code) of the previous record

    def begin(self, header: Header) -> None:
        pass

    def record(self, offset: int, txid: int, op: edits.Op) -> None:
        self._close_last(offset)
        self.counts[int(op.OP_CODE)] += 1
        self._last = (offset, int(op.OP_CODE))

    def _close_last(self, end: int) -> None:
        if self._last is not None:
            self.sizes[self._last[1]] += end - self._last[0]

    def end(self, result: ViewResult) -> None:
        self._close_last(result.valid_length)
        self._last = None
        self.out.write(render_stats(result, self.counts, self.sizes))


def render_stats(result: ViewResult, counts: Counter, sizes: Counter) -> str:
    first = result.header.first_txid
    txids = f"txids {first}..{result.last_txid}" if result.records else "no records"
    lines = [f"edits file: {result.path} ({result.size} bytes)",
             f"layout version {result.header.layout_version}, first txid {first}",
             f"records: {result.records}, {txids}, valid length {result.valid_length}",
             "", f"{'op':<20} {'code':>4} {'records':>10} {'bytes':>12}"]
    for code in sorted(counts):
        name = edits.OpCode(code).name
        lines.append(f"{name:<20} {code:>4} {counts[code]:>10} {sizes[code]:>12}")
    lines.append(f"{'total':<20} {'':>4} {sum(counts.values()):>10} {sum(sizes.values()):>12}")
    if result.torn_tail:
        t = result.torn_tail
        lines.append(f"torn tail: offset {t.offset}, length {t.length} ({t.reason})")
    if result.error:
        lines.append(f"stopped by {type(result.error).__name__}: {result.error}")
    return "\n".join(lines) + "\n"


SINKS = {"JSON": JsonSink, "XML": XmlSink, "stats": StatsSink}


def view(path: str, output: str, processor: str, *, max_record: int = edits.DEFAULT_MAX_RECORD,
         secrets: bool = False) -> ViewResult:
    """Render ``path`` into the file ``output`` (``-``: standard output). A bad header raises
    before the output is created. The delegation master keys' secrets show as their size
    only, unless ``secrets`` (what a rendering needs to turn back into the same edits)."""
    if processor not in SINKS:
        raise OptionError(f"unknown processor {processor!r}; one of {tuple(SINKS)}")
    reader = edits.EditsReader(os.fspath(path), max_record=max_record)
    with open_text_output(output) as out:
        return scan(reader, SINKS[processor](out, secrets))


# ----------------------------------------------------------------------------- one-liners

def reader_options(max_record: int | None) -> dict:
    return {} if max_record is None else {"max_record": max_record}


def describe_view(result: ViewResult) -> str:
    """One line for the person at the terminal: what was rendered and how the file ends."""
    txids = (f"txids {result.header.first_txid}..{result.last_txid}" if result.records
             else "no records")
    text = f"oev: {result.records} records, {txids}, {result.valid_length} of {result.size} bytes"
    if result.torn_tail is not None:
        tail = result.torn_tail
        text += (f"; torn tail at offset {tail.offset}, {tail.length} bytes ({tail.reason}): "
                 f"txid {result.last_txid + 1} was never completed")
    if result.error is not None:
        text += f"; stopped at offset {result.error.offset}, txid {result.error.txid}"
    return text
