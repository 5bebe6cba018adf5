"""tools/oev.py and ``nnlite oev``: renderings of every op, the byte-identical round trip
binary -> JSON/XML -> binary, torn tails and corruption reported precisely, bad renderings.

``golden/all_ops.edits`` holds one record of every op code (plus edge values); ``all_ops.json``
and ``all_ops.xml`` are its renderings. Regenerate them only on purpose:
``NNLITE_REGEN_GOLDEN=1 pytest tests/tools/test_oev.py -k golden``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nnlite.formats import edits
from nnlite.tools import oev, oev_binary
from nnlite.tools.errors import InputError
from tests.formats import corrupt
from tests.tools.conftest import exists, read

GOLDEN = Path(__file__).parent / "golden"
GOLDEN_EDITS, GOLDEN_JSON, GOLDEN_XML = (GOLDEN / f"all_ops.{x}" for x in ("edits", "json", "xml"))
REGEN = os.environ.get("NNLITE_REGEN_GOLDEN") == "1"
FIRST_TXID = 1001
TS = 1_700_000_000_000
CKPT = "/user/spark/ckpt/q1"
BLOCK = (1073741825, 134217728, 1001)

# A delegation token identifier's Writable bytes (owner spark@EXAMPLE.COM, renewer yarn) and
# a master key's secret, for the token ops.
TOKEN_ID = bytes.fromhex("0011737061726b404558414d504c452e434f4d047961726e00"
                         "8a018bcfe568008a018bf3f1ec000107")
MASTER_KEY = hashlib.sha512(b"a master key for the golden file").digest()

# One op per code, in code order. A new op code needs a sample here (test_every_op_code...).
GOLDEN_OPS = {
    edits.OpCode.START_LOG_SEGMENT: edits.StartLogSegmentOp(),
    edits.OpCode.MKDIR: edits.MkdirOp(CKPT, 16386, 0o755, "spark", "supergroup", TS),
    edits.OpCode.ADD_FILE: edits.AddFileOp(f"{CKPT}/offsets/0", 16390, 3, 134217728, 0, 0o644,
                                           "spark", "supergroup", TS, TS, False,
                                           "DFSClient_NONMAPREDUCE_1", "10.0.0.7"),
    edits.OpCode.CLOSE_FILE: edits.CloseFileOp(f"{CKPT}/offsets/0", 16390, 245, TS + 2, TS,
                                       (BLOCK, (1073741826, 117, 1002)),
                                       bytes.fromhex("9e107d9d")),
    edits.OpCode.ADD_BLOCK: edits.AddBlockOp(f"{CKPT}/offsets/1", 16391, BLOCK),
    edits.OpCode.UPDATE_BLOCKS: edits.UpdateBlocksOp(f"{CKPT}/offsets/1", 16391, ()),
    edits.OpCode.DELETE: edits.DeleteOp(f"{CKPT}/offsets/1", TS + 3),
    edits.OpCode.RENAME_OLD: edits.RenameOldOp(f"{CKPT}/tmp", f"{CKPT}/commits", TS + 4),
    edits.OpCode.RENAME: edits.RenameOp(f"{CKPT}/.1.tmp", f"{CKPT}/commits/1", TS + 5, True),
    edits.OpCode.SET_PERMISSIONS: edits.SetPermissionsOp(CKPT, 0o1777),
    edits.OpCode.SET_OWNER: edits.SetOwnerOp(CKPT, None, "hadoop"),
    edits.OpCode.SET_TIMES: edits.SetTimesOp(CKPT, -1, TS + 6),
    edits.OpCode.SET_REPLICATION: edits.SetReplicationOp(f"{CKPT}/offsets/0", 2),
    edits.OpCode.SET_QUOTA: edits.SetQuotaOp(CKPT, -1, 2**40),
    edits.OpCode.SET_XATTR: edits.SetXAttrOp(CKPT, "user.nnlite.batch", b"\x00\xff812", 3),
    edits.OpCode.REMOVE_XATTR: edits.RemoveXAttrOp(CKPT, "user.nnlite.batch"),
    edits.OpCode.CONCAT: edits.ConcatOp(f"{CKPT}/state/0", (f"{CKPT}/s1", f"{CKPT}/s2"), TS + 7),
    edits.OpCode.TRUNCATE: edits.TruncateOp(f"{CKPT}/offsets/0", 0, TS + 8),
    edits.OpCode.APPEND: edits.AppendOp(f"{CKPT}/offsets/0", 16390, "DFSClient_2", "10.0.0.8"),
    edits.OpCode.DELETE_MANY: edits.DeleteManyOp((f"{CKPT}/offsets/7", f"{CKPT}/commits/7"),
                                                 TS + 9),
    edits.OpCode.SET_ACL: edits.SetAclOp(CKPT, ("user::rwx", "user:bob:r-x", "group::r-x",
                                                "mask::r-x", "other::---")),
    edits.OpCode.ALLOW_SNAPSHOT: edits.AllowSnapshotOp(CKPT),
    edits.OpCode.DISALLOW_SNAPSHOT: edits.DisallowSnapshotOp(CKPT),
    edits.OpCode.CREATE_SNAPSHOT: edits.CreateSnapshotOp(CKPT, "s1", TS + 10),
    edits.OpCode.DELETE_SNAPSHOT: edits.DeleteSnapshotOp(CKPT, "s1", TS + 11),
    edits.OpCode.RENAME_SNAPSHOT: edits.RenameSnapshotOp(CKPT, "s1", "s2", TS + 12),
    edits.OpCode.GET_DELEGATION_TOKEN: edits.GetDelegationTokenOp(TOKEN_ID, TS + 86_400_000),
    edits.OpCode.RENEW_DELEGATION_TOKEN: edits.RenewDelegationTokenOp(TOKEN_ID,
                                                                      TS + 172_800_000),
    edits.OpCode.CANCEL_DELEGATION_TOKEN: edits.CancelDelegationTokenOp(TOKEN_ID),
    edits.OpCode.UPDATE_MASTER_KEY: edits.UpdateMasterKeyOp(7, TS + 691_200_000, MASTER_KEY),
    edits.OpCode.END_LOG_SEGMENT: edits.EndLogSegmentOp(),
}

# Values that test the renderings' escaping and typing; they sit before END_LOG_SEGMENT.
EDGE_OPS = [
    edits.SetOwnerOp("/a", None, None),
    edits.SetXAttrOp("/a", "user.x", b"", 1),
    edits.SetXAttrOp("/a", "user.all-bytes", bytes(range(256)), 2),
    edits.UpdateBlocksOp("/f", 2**64 - 1, ((2**64 - 1, 0, -(2**63)), BLOCK)),
    edits.ConcatOp("/t/目标", ("/t/ä", "/t/🙂", ""), TS),
    edits.RenameOp("", "  spaces  ", -1, False),
    edits.MkdirOp("/x/<&>\"'/]]>", 1, 0, "tab\there", "new\nline\r\n", 0),
    edits.DeleteOp("/ctl/\x00\x01\x1f\x7f/\ufffe", 0),
    edits.AddFileOp("/f", 9, 1, 1, 10, 0, "", "", 0, 0, True, "", ""),
]


def golden_records() -> list[edits.Op]:
    ops = list(GOLDEN_OPS.values())
    return ops[:-1] + EDGE_OPS + ops[-1:]


def render(path, processor: str, tmp_path) -> str:
    """A rendering with the master keys' secrets, as a round trip needs them."""
    out = tmp_path / f"rendering.{processor}"
    oev.view(path, str(out), processor, secrets=True)
    return read(out)


def regenerate(tmp_path) -> None:
    GOLDEN.mkdir(exist_ok=True)
    GOLDEN_EDITS.write_bytes(corrupt.build(golden_records(), FIRST_TXID).data)
    GOLDEN_JSON.write_text(render(GOLDEN_EDITS, "JSON", tmp_path), encoding="utf-8")
    GOLDEN_XML.write_text(render(GOLDEN_EDITS, "XML", tmp_path), encoding="utf-8")


# ----------------------------------------------------------------------------------- golden

def test_golden_files_match_the_ops_and_the_renderers(tmp_path):
    if REGEN:
        regenerate(tmp_path)
    missing = [p.name for p in (GOLDEN_EDITS, GOLDEN_JSON, GOLDEN_XML) if not p.exists()]
    assert not missing, f"golden files {missing} missing: run with NNLITE_REGEN_GOLDEN=1"
    assert GOLDEN_EDITS.read_bytes() == corrupt.build(golden_records(), FIRST_TXID).data, \
        "GOLDEN_OPS changed or the edits encoding changed: regenerate on purpose"
    assert render(GOLDEN_EDITS, "JSON", tmp_path) == GOLDEN_JSON.read_text(encoding="utf-8")
    assert render(GOLDEN_EDITS, "XML", tmp_path) == GOLDEN_XML.read_text(encoding="utf-8")


def test_every_op_code_has_a_record_in_the_golden_file():
    codes = {int(op.OP_CODE) for _, op in edits.read_all(str(GOLDEN_EDITS))[0]}
    missing = [c.name for c in edits.OpCode if c not in codes]
    assert not missing, (f"op codes {missing} have no record in {GOLDEN_EDITS.name}: add a "
                         f"sample to GOLDEN_OPS and regenerate with NNLITE_REGEN_GOLDEN=1")


def test_every_op_code_has_a_sample():
    assert list(GOLDEN_OPS) == [edits.OpCode.START_LOG_SEGMENT] + [
        c for c in edits.OpCode
        if c not in (edits.OpCode.START_LOG_SEGMENT, edits.OpCode.END_LOG_SEGMENT)
    ] + [edits.OpCode.END_LOG_SEGMENT]
    assert all(code == op.OP_CODE for code, op in GOLDEN_OPS.items())


@pytest.mark.parametrize("rendering", [GOLDEN_JSON, GOLDEN_XML], ids=["json", "xml"])
def test_golden_rendering_turns_back_into_identical_bytes(rendering, tmp_path, nnlite):
    out = tmp_path / "edits"
    result = nnlite("oev", "-i", rendering, "-o", out, "-p", "binary")
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == GOLDEN_EDITS.read_bytes()
    assert f"wrote {len(golden_records())} records" in result.stderr


def test_golden_rendering_holds_the_header_and_every_field():
    doc = json.loads(GOLDEN_JSON.read_text(encoding="utf-8"))
    assert doc["header"] == {"magic": "NNLEDITS", "layout_version": edits.LAYOUT_VERSION,
                             "first_txid": FIRST_TXID}
    first = doc["records"][0]
    assert first == {"offset": edits.HEADER_SIZE, "txid": FIRST_TXID, "op": "START_LOG_SEGMENT",
                     "op_code": 1, "fields": {}}
    close = next(r for r in doc["records"] if r["op"] == "CLOSE_FILE")
    assert close["fields"]["checksum"] == {"$bytes": "9e107d9d"}
    assert close["fields"]["blocks"] == [list(BLOCK), [1073741826, 117, 1002]]
    assert doc["end"]["records"] == len(golden_records())
    assert doc["end"]["torn_tail"] is None and doc["end"]["error"] is None


def test_xml_rendering_parses_and_types_every_value():
    root = ET.parse(GOLDEN_XML).getroot()
    assert (root.tag, root.get("first_txid"), root.get("layout_version")) == (
        "edits", str(FIRST_TXID), str(edits.LAYOUT_VERSION))
    records = root.findall("record")
    assert len(records) == len(golden_records())
    mkdir = next(r for r in records if r.get("op") == "MKDIR")
    assert mkdir.find("inode_id").get("t") == "int"
    hexed = next(r for r in records if r.get("op") == "DELETE" and r.find("path").get("t"))
    assert hexed.find("path").get("t") == "str-hex"


# -------------------------------------------------------------------------------- property

def _values(field_: dataclasses.Field):
    text = st.text(max_size=12)
    big = st.integers(-(2**63), 2**64 - 1)
    if field_.name in ("blocks",):
        return st.lists(st.tuples(big, big, big), max_size=3).map(tuple)
    if field_.name == "block":
        return st.tuples(big, big, big)
    if field_.name in ("srcs", "paths", "entries"):
        return st.lists(text, max_size=3).map(tuple)
    return {"str": text, "int": big, "bool": st.booleans(), "bytes": st.binary(max_size=12),
            "str | None": st.none() | text,
            "bytes | None": st.none() | st.binary(max_size=12)}[field_.type]


OP_STRATEGY = st.one_of(*[
    st.builds(cls, **{f.name: _values(f) for f in dataclasses.fields(cls)})
    for cls in edits.OPS.values()])


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(ops=st.lists(OP_STRATEGY, max_size=6), first=st.integers(1, 2**40))
def test_any_ops_round_trip_byte_identical_through_json_and_xml(tmp_path, ops, first):
    log = corrupt.build(ops, first)
    source = tmp_path / "source"
    source.write_bytes(log.data)
    for processor in ("JSON", "XML"):
        rendering, back = tmp_path / f"r.{processor}", tmp_path / f"back.{processor}"
        oev.view(source, str(rendering), processor, secrets=True)
        oev_binary.to_binary(str(rendering), str(back))
        assert back.read_bytes() == log.data, processor


# ------------------------------------------------------------------------ reformatted input

def test_json_reformatted_by_hand_still_round_trips(tmp_path):
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(json.loads(GOLDEN_JSON.read_text(encoding="utf-8")), indent=2))
    oev_binary.to_binary(str(pretty), str(tmp_path / "out"))
    assert (tmp_path / "out").read_bytes() == GOLDEN_EDITS.read_bytes()


def test_xml_indented_by_hand_still_round_trips(tmp_path):
    # Whitespace between elements (text holds no "><": "<" and ">" are escaped in it).
    pretty = tmp_path / "pretty.xml"
    pretty.write_text(GOLDEN_XML.read_text(encoding="utf-8").replace("><", ">\n    <"),
                      encoding="utf-8")
    oev_binary.to_binary(str(pretty), str(tmp_path / "out"))
    assert (tmp_path / "out").read_bytes() == GOLDEN_EDITS.read_bytes()


def test_json_with_reordered_fields_is_accepted(tmp_path):
    doc = json.loads(GOLDEN_JSON.read_text(encoding="utf-8"))
    for rec in doc["records"]:
        rec["fields"] = dict(reversed(list(rec["fields"].items())))
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    oev_binary.to_binary(str(edited), str(tmp_path / "out"))
    assert (tmp_path / "out").read_bytes() == GOLDEN_EDITS.read_bytes()


def test_an_empty_log_round_trips(tmp_path):
    empty = tmp_path / "empty"
    empty.write_bytes(edits.encode_header(7))
    for processor in ("JSON", "XML"):
        rendering = tmp_path / f"r.{processor}"
        oev.view(empty, str(rendering), processor)
        result = oev_binary.to_binary(str(rendering), str(tmp_path / "back"))
        assert (tmp_path / "back").read_bytes() == empty.read_bytes()
        assert result.records == 0


# -------------------------------------------------------------------------- bad renderings

def edited_json(tmp_path, edit) -> Path:
    doc = json.loads(GOLDEN_JSON.read_text(encoding="utf-8"))
    edit(doc)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc))
    return path


def _set(path_in_doc, value):
    def edit(doc):
        target = doc
        for key in path_in_doc[:-1]:
            target = target[key]
        target[path_in_doc[-1]] = value
    return edit


BAD_EDITS = {
    "txid-gap": (_set(["records", 3, "txid"], FIRST_TXID + 9), "txid 1010 where 1004"),
    "unknown-op": (_set(["records", 1, "op"], "FORMAT_DISK"), "unknown op 'FORMAT_DISK'"),
    "code-mismatch": (_set(["records", 1, "op_code"], 4), "op MKDIR has code 3"),
    "missing-field": (lambda d: d["records"][1]["fields"].pop("owner"), "takes fields"),
    "extra-field": (_set(["records", 1, "fields", "color"], "red"), "takes fields"),
    "bad-hex": (_set(["records", 3, "fields", "checksum"], {"$bytes": "zz"}), "bad hex"),
    "unknown-marker": (_set(["records", 3, "fields", "checksum"], {"$b64": "AA=="}),
                       "must be {\"$bytes\": hex}"),
    "float": (_set(["records", 1, "fields", "mtime"], 1.5), "unsupported value 1.5"),
    "layout-version": (_set(["header", "layout_version"], 4), "layout version 4"),
    "too-big-int": (_set(["records", 1, "fields", "mtime"], 2**70), "cannot encode txid"),
    "no-records": (lambda d: d.pop("records"), "no records array"),
}


@pytest.mark.parametrize("name", BAD_EDITS)
def test_bad_json_rendering_fails_with_one_line_and_no_file(name, tmp_path, nnlite):
    edit, message = BAD_EDITS[name]
    out = tmp_path / "out.edits"
    result = nnlite("oev", "-i", edited_json(tmp_path, edit), "-o", out, "-p", "binary")
    assert result.exit_code == 1, result.output
    assert message in result.stderr
    assert result.stderr.startswith("nnlite: InputError: ")
    assert sorted(os.listdir(tmp_path)) == ["edited.json"]   # no output, no temp file


@pytest.mark.parametrize("text, message", [
    ("{\n\"header\": {\"layout_version\": 1, \"first_txid\": 1},\n\"records\": [\n{nope},\n",
     "invalid JSON"),
    ("<edits layout_version='1' first_txid='1'><record txid='1' op='MKDIR' op_code='3'>",
     "invalid XML"),
    ("<edits layout_version='x' first_txid='1'/>", "layout_version must be an integer"),
    ("<fsimage/>", "expected <edits>"),
    ("<edits layout_version='1' first_txid='1'><record txid='1' op='SET_PERMISSIONS' "
     "op_code='11'><path>/a</path><permission t='int'>0x1</permission></record></edits>",
     "is not a value"),
    ("<edits layout_version='1' first_txid='1'><record txid='1' op='SET_PERMISSIONS' "
     "op_code='11'><path>/a</path><path>/b</path><permission t='int'>1</permission>"
     "</record></edits>", "given twice"),
    ("hello", "not a JSON or XML rendering"),
], ids=["json-syntax", "xml-unclosed", "xml-header", "xml-root", "xml-int", "xml-dup", "text"])
def test_bad_renderings_are_input_errors(text, message, tmp_path):
    source = tmp_path / "bad"
    source.write_text(text)
    with pytest.raises(InputError, match=message):
        oev_binary.to_binary(str(source), str(tmp_path / "out"))
    assert not exists(tmp_path / "out")


def test_binary_needs_an_output_file(nnlite):
    result = nnlite("oev", "-i", GOLDEN_JSON, "-p", "binary")
    assert result.exit_code == 2
    assert "give -o FILE" in result.stderr


# ---------------------------------------------------------------- torn tails and corruption

def golden_log() -> corrupt.Log:
    return corrupt.build(golden_records(), FIRST_TXID)


def test_torn_tail_renders_every_record_before_it_and_says_where(tmp_path, nnlite):
    log = golden_log()
    cut = log.start(len(log.spans) - 1) + 5
    torn = tmp_path / "torn"
    torn.write_bytes(log.data[:cut])
    result = nnlite("oev", "-i", torn, "-o", tmp_path / "out.json", "-p", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(read(tmp_path / "out.json"))
    assert len(doc["records"]) == len(log.records) - 1
    start = log.start(len(log.spans) - 1)
    assert doc["end"]["torn_tail"] == {"offset": start, "length": 5,
                                       "reason": "partial record header"}
    assert doc["end"]["valid_length"] == start
    last_txid = log.records[-2][0]
    assert (f"torn tail at offset {start}, 5 bytes (partial record header): txid "
            f"{last_txid + 1} was never completed") in result.stderr


def test_corruption_renders_the_records_before_it_and_exits_4(tmp_path, nnlite):
    log = golden_log()
    bad = tmp_path / "bad"
    bad.write_bytes(corrupt.flip_bit(log.data, log.field(5, "payload")[3], 2))
    out = tmp_path / "out.xml"
    result = nnlite("oev", "-i", bad, "-o", out, "-p", "xml")
    assert result.exit_code == 4
    offset, txid = log.start(5), FIRST_TXID + 5
    assert result.stderr.splitlines()[-1] == (
        f"nnlite: CorruptRecordError: edits record CRC mismatch (file {bad}, offset {offset}, "
        f"txid {txid})")
    root = ET.parse(out).getroot()
    assert len(root.findall("record")) == 5
    error = root.find("end/error")
    assert (error.get("type"), error.get("offset"), error.get("txid")) == (
        "CorruptRecordError", str(offset), str(txid))


def test_a_bad_header_creates_no_output(tmp_path, nnlite):
    bad = tmp_path / "bad"
    bad.write_bytes(b"NOTEDITS" + golden_log().data[8:])
    result = nnlite("oev", "-i", bad, "-o", tmp_path / "out.json", "-p", "json")
    assert result.exit_code == 4
    assert "BadHeaderError: not an edits file" in result.stderr
    assert not exists(tmp_path / "out.json")


def test_a_rendering_of_a_torn_file_says_the_new_file_lacks_the_tail(tmp_path, nnlite):
    log = golden_log()
    torn = tmp_path / "torn"
    torn.write_bytes(log.data[:-3])
    oev.view(torn, str(tmp_path / "r.xml"), "XML", secrets=True)
    result = nnlite("oev", "-i", tmp_path / "r.xml", "-o", tmp_path / "back", "-p", "binary")
    assert result.exit_code == 0
    assert "records a torn_tail after its last record" in result.stderr
    assert (tmp_path / "back").read_bytes() == log.data[:log.start(len(log.spans) - 1)]


# ------------------------------------------------------------------------------------ stats

def test_stats_count_every_op_and_its_bytes(nnlite):
    result = nnlite("oev", "-i", GOLDEN_EDITS, "-o", "-", "-p", "stats")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    expected = {}
    for op in golden_records():
        name = edits.OpCode(op.OP_CODE).name
        expected[name] = expected.get(name, 0) + 1
    rows = {line.split()[0]: line.split()[1:] for line in lines if line.split()
            and line.split()[0] in expected}
    assert {name: int(cols[1]) for name, cols in rows.items()} == expected
    mkdir_bytes = sum(len(edits.encode_record(txid, op)) for txid, op in golden_log().records
                      if op.OP_CODE == edits.OpCode.MKDIR)
    assert int(rows["MKDIR"][2]) == mkdir_bytes
    total = next(line for line in lines if line.startswith("total")).split()
    body_bytes = len(golden_log().data) - edits.HEADER_SIZE
    assert total[1:] == [str(len(golden_records())), str(body_bytes)]
    assert f"records: {len(golden_records())}, txids {FIRST_TXID}.." in result.stdout


def test_json_goes_to_standard_output_by_default_when_asked(nnlite):
    result = nnlite("oev", "-i", GOLDEN_EDITS, "-p", "JSON", "--show-secrets")
    assert result.exit_code == 0
    assert result.stdout == GOLDEN_JSON.read_text(encoding="utf-8")


# ------------------------------------------------------------------------------ secrets

@pytest.mark.parametrize("processor", ["JSON", "XML"])
def test_a_master_keys_secret_shows_as_its_size_only_and_cannot_round_trip(
        processor, tmp_path, nnlite):
    out = tmp_path / f"plain.{processor}"
    result = nnlite("oev", "-i", GOLDEN_EDITS, "-o", out, "-p", processor)
    assert result.exit_code == 0, result.output
    text = read(out)
    assert MASTER_KEY.hex() not in text and "64 bytes" in text
    assert TOKEN_ID.hex() in text                   # an identifier holds no secret
    back = nnlite("oev", "-i", out, "-o", tmp_path / "back", "-p", "binary")
    assert back.exit_code != 0 and not exists(tmp_path / "back")
    shown = nnlite("oev", "-i", GOLDEN_EDITS, "-o", tmp_path / "all", "-p", processor,
                   "--show-secrets")
    assert shown.exit_code == 0 and MASTER_KEY.hex() in read(tmp_path / "all")
