"""tools/verify.py and ``nnlite edits verify`` / ``nnlite fsimage verify``: a clean file exits 0
with its facts; each kind of damage exits 4 and is named precisely (offset, txid, row)."""

from __future__ import annotations

import os
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nnlite.formats import edits
from nnlite.formats.fsimage.layout import (
    COLUMNS,
    LAYOUT_VERSION,
    SCHEMA,
    TYPE_DIRECTORY,
    TYPE_FILE,
)
from nnlite.formats.fsimage.md5 import file_md5
from nnlite.namenode.fsnamesystem import FSNamesystem, Identity, format_dirs
from nnlite.namenode.storage.namedir import EDITS, IMAGE, NameDir
from tests.formats import corrupt
from tests.namenode.helpers import acked
from tests.tools import images
from tests.tools.images import inode
from tests.tools.test_oev import FIRST_TXID, golden_log
from tests.tools.test_oiv import ROWS

DIR, FILE = TYPE_DIRECTORY, TYPE_FILE


def write(tmp_path, data: bytes, name: str = "edits"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


# ------------------------------------------------------------------------------------ edits

def test_clean_edits_exit_0_with_the_facts(tmp_path, nnlite):
    log = golden_log()
    path = write(tmp_path, log.data)
    result = nnlite("edits", "verify", path)
    assert result.exit_code == 0, result.output
    last = FIRST_TXID + len(log.records) - 1
    assert result.stdout == (
        f"edits {path}\n"
        f"  file: {len(log.data)} bytes\n"
        f"  header: magic NNLEDITS, layout version {edits.LAYOUT_VERSION},"
        f" first txid {FIRST_TXID}\n"
        f"  records: {len(log.records)}, txids {FIRST_TXID}..{last}\n"
        f"  valid length: {len(log.data)} of {len(log.data)} bytes\n"
        f"  segment: starts with START_LOG_SEGMENT; finalized (ends with END_LOG_SEGMENT)\n"
        f"result: OK\n")


def test_a_header_only_log_is_clean(tmp_path, nnlite):
    result = nnlite("edits", "verify", write(tmp_path, edits.encode_header(5)))
    assert result.exit_code == 0
    assert "records: none" in result.stdout


def test_an_open_segment_and_a_missing_start_are_reported_not_failed(tmp_path, nnlite):
    log = corrupt.build([edits.DeleteOp("/a", 1)], 3)
    result = nnlite("edits", "verify", write(tmp_path, log.data))
    assert result.exit_code == 0
    assert ("segment: note: starts with DELETE, not START_LOG_SEGMENT; in progress "
            "(no END_LOG_SEGMENT yet)") in result.stdout


def last_start(log) -> int:
    return log.start(len(log.spans) - 1)


DAMAGE = {
    # name: (damage the golden log, expected PROBLEM line as a regex)
    "torn-partial-header": (
        lambda log: log.data[:last_start(log) + 5],
        lambda log: rf"torn tail: offset {last_start(log)}, length 5 \(partial record header\); "
                    rf"every record before it is intact, and startup truncates the file to "
                    rf"{last_start(log)} bytes"),
    "torn-short-record": (
        lambda log: log.data[:-1],
        lambda log: rf"torn tail: offset {last_start(log)}, length "
                    rf"{len(log.data) - 1 - last_start(log)} \(record of \d+ bytes runs past "
                    rf"the end\)"),
    "zero-filled-tail": (
        lambda log: log.data + bytes(4096),
        lambda log: rf"torn tail: offset {len(log.data)}, length 4096 \(zero-filled tail\)"),
    "crc-in-the-middle": (
        lambda log: corrupt.flip_bit(log.data, log.field(7, "payload")[2], 0),
        lambda log: rf"corrupt: first bad offset {log.start(7)}, txid {FIRST_TXID + 7}: "
                    rf"CorruptRecordError: edits record CRC mismatch"),
    "txid-gap": (
        lambda log: corrupt.build([op for _, op in log.records], FIRST_TXID,
                                  txids=[*range(FIRST_TXID, FIRST_TXID + 4),
                                         *range(FIRST_TXID + 5, FIRST_TXID + 5
                                                + len(log.records) - 4)]).data,
        lambda log: rf"corrupt: first bad offset {log.start(4)}, txid {FIRST_TXID + 5}: "
                    rf"TxidGapError: expected txid {FIRST_TXID + 4}, found {FIRST_TXID + 5}"),
    "length-too-large": (
        lambda log: corrupt.put_u32(log.data, log.start(2), edits.DEFAULT_MAX_RECORD + 1),
        lambda log: rf"corrupt: first bad offset {log.start(2)}, txid {FIRST_TXID + 2}: "
                    rf"RecordTooLargeError"),
    "bad-magic": (
        lambda log: b"XXXXXXXX" + log.data[8:],
        lambda log: r"header: BadHeaderError: not an edits file \(magic b'XXXXXXXX'\)"),
    "newer-version": (
        lambda log: corrupt.header(version=4) + log.data[edits.HEADER_SIZE:],
        lambda log: r"header: UnsupportedVersionError: edits layout version 4"),
}


@pytest.mark.parametrize("name", DAMAGE)
def test_damaged_edits_exit_4_and_say_where(name, tmp_path, nnlite):
    damage, expected = DAMAGE[name]
    log = golden_log()
    result = nnlite("edits", "verify", write(tmp_path, damage(log)))
    assert result.exit_code == 4, result.output
    problems = [line for line in result.stdout.splitlines() if "PROBLEM" in line]
    assert len(problems) == 1, result.stdout
    assert re.search(expected(log), problems[0]), problems[0]
    assert result.stdout.endswith("result: 1 problem(s)\n")


def test_corruption_says_where_the_next_readable_record_is(tmp_path, nnlite):
    log = golden_log()
    damaged = corrupt.flip_bit(log.data, log.field(7, "payload")[2], 0)
    result = nnlite("edits", "verify", write(tmp_path, damaged))
    assert (f"after the damage: next readable record at offset {log.start(8)}, txid "
            f"{FIRST_TXID + 8}; 'nnlite namenode --recover' can skip to it") in result.stdout
    records_line = next(line for line in result.stdout.splitlines() if "records:" in line)
    assert records_line.strip() == f"records: 7, txids {FIRST_TXID}..{FIRST_TXID + 6}"


def test_max_record_option_is_passed_to_the_reader(tmp_path, nnlite):
    path = write(tmp_path, golden_log().data)
    result = nnlite("edits", "verify", "--max-record", 40, path)
    assert result.exit_code == 4
    assert "RecordTooLargeError: record claims" in result.stdout


# ---------------------------------------------------------------------------------- fsimage

@pytest.fixture
def image(tmp_path):
    path = tmp_path / "fsimage"
    images.write_rows(path, ROWS)
    return path


def problems(result) -> list[str]:
    return [line.strip().removeprefix("PROBLEM ") for line in result.stdout.splitlines()
            if "PROBLEM" in line]


def test_clean_image_exits_0_with_the_facts(image, nnlite):
    result = nnlite("fsimage", "verify", image)
    assert result.exit_code == 0, result.output
    digest = file_md5(image)
    assert result.stdout == (
        f"fsimage {image}\n"
        f"  file: {os.path.getsize(image)} bytes\n"
        f"  md5: {digest}, matches {image}.md5\n"
        f"  meta: layout version 3, namespace id 99, last txid 7, inode count 7, "
        f"created 2023-11-14T22:13:20Z\n"
        f"  schema: 21 columns as layout version 3 defines; footer rows = inode count\n"
        f"  rows: 7 read (3 directories, 4 files, 1 under construction)\n"
        f"  root: row 0, id 1\n"
        f"  ids: 7 distinct\n"
        f"  parents: every parent id resolves to a directory under the root\n"
        f"result: OK\n")


def test_without_a_sidecar_the_md5_is_not_verified_but_the_rest_is(tmp_path, nnlite):
    images.write_rows(tmp_path / "fsimage", ROWS, sidecar=False)
    result = nnlite("fsimage", "verify", tmp_path / "fsimage")
    assert result.exit_code == 0
    assert (f"md5: not verified (no {tmp_path / 'fsimage'}.md5, no --md5); page checksums "
            f"still are") in result.stdout


def test_md5_mismatch_and_malformed_sidecar(image, nnlite):
    (image.parent / "fsimage.md5").write_text("f" * 32 + " *fsimage\n")
    result = nnlite("fsimage", "verify", image)
    assert result.exit_code == 4
    assert problems(result) == [f"md5: the file's is {file_md5(image)}, but "
                                f"{image}.md5 says {'f' * 32}"]
    assert nnlite("fsimage", "verify", "--md5", file_md5(image), image).exit_code == 0
    (image.parent / "fsimage.md5").write_text("not a digest\n")
    result = nnlite("fsimage", "verify", image)
    assert result.exit_code == 4
    assert problems(result)[0].startswith("md5: ImageCorruptError: malformed MD5 sidecar")


def test_damaged_pages_are_found_even_without_a_sidecar(image, nnlite):
    os.remove(str(image) + ".md5")
    data = bytearray(image.read_bytes())
    chunk = pq.ParquetFile(image).metadata.row_group(0).column(COLUMNS.index("name"))
    data[chunk.data_page_offset + chunk.total_compressed_size // 2] ^= 0x40   # in a page
    image.write_bytes(bytes(data))
    result = nnlite("fsimage", "verify", image)
    assert result.exit_code == 4
    found = problems(result)
    assert len(found) == 1 and (found[0].startswith("data: ImageCorruptError")
                                or found[0].startswith("footer: ImageCorruptError")), found


def test_a_truncated_image_is_a_footer_problem(image, nnlite):
    image.write_bytes(image.read_bytes()[:-100])
    os.remove(str(image) + ".md5")
    result = nnlite("fsimage", "verify", image)
    assert result.exit_code == 4
    assert problems(result)[0].startswith("footer: ImageCorruptError: not a readable Parquet")


def write_raw(path, rows, metadata: dict, schema: pa.Schema = SCHEMA) -> None:
    """A Parquet file that bypasses write_image's checks (what a buggy writer could leave)."""
    table = pa.Table.from_pylist(
        [dict(r, blocks=[dict(zip(("block_id", "num_bytes", "genstamp"), b, strict=True))
                         for b in r["blocks"]],
              xattrs=None if r["xattrs"] is None else list(r["xattrs"].items())) for r in rows],
        schema=SCHEMA)
    if schema is not SCHEMA:
        table = table.append_column("color", pa.array(["red"] * len(rows)))
    pq.write_table(table.replace_schema_metadata(metadata), path)


def footer(**overrides) -> dict:
    values = {"layout_version": LAYOUT_VERSION, "namespace_id": 99, "last_txid": 7,
              "inode_count": 7, "creation_time": 0, **overrides}
    return {b"nnlite.format": b"fsimage",
            **{f"nnlite.{k}".encode(): str(v).encode() for k, v in values.items()}}


@pytest.mark.parametrize("meta, schema, message", [
    (footer(inode_count=9), SCHEMA, "footer: ImageCorruptError: 7 rows but inode_count 9"),
    (footer(layout_version=4), SCHEMA,
     "footer: UnsupportedVersionError: fsimage layout version 4"),
    (footer(), pa.schema([*SCHEMA, pa.field("color", pa.string())]),
     "footer: ImageCorruptError: columns ["),
    ({b"nnlite.format": b"other"}, SCHEMA, "footer: ImageCorruptError: not an nnlite fsimage"),
], ids=["row-count", "version", "schema", "format-key"])
def test_footer_problems(meta, schema, message, tmp_path, nnlite):
    write_raw(tmp_path / "fsimage", ROWS, meta, schema)
    result = nnlite("fsimage", "verify", tmp_path / "fsimage")
    assert result.exit_code == 4
    assert problems(result)[0].startswith(message), problems(result)


TREE_DAMAGE = {
    "orphan-file": ([inode(20, 99, "lost", FILE)],
                    ["parents: 1 rows whose parent id does not resolve to a directory under the "
                     "root; first: row 7: id 20, parent_id 99, type 2, name 'lost', "
                     "permission 644"]),
    "cycle": ([inode(30, 31, "a"), inode(31, 30, "b"), inode(32, 31, "f", FILE)],
              ["parents: 3 rows whose parent id does not resolve to a directory under the root;"
               " first: row 7: id 30, parent_id 31"]),
    "parent-is-a-file": ([inode(21, 10, "under-a-file", FILE)],
                         ["parents: 1 rows whose parent id does not resolve"]),
    "two-roots": ([inode(40, 0, "")],
                  ["root: expected one directory with parent_id 0 and name \"\", found 2: "
                   "row 0: id 1, type 1, name ''; row 7: id 40, type 1, name ''"]),
    "duplicate-id": ([inode(10, 1, "again", FILE)],
                     ["ids: 1 duplicate rows; repeated: 10 (2 times)"]),
    "bad-names": ([inode(22, 1, "", FILE), inode(23, 1, "a/b", FILE)],
                  ["names: 2 rows other than the root whose name is empty or holds '/'; "
                   "first: row 7: id 22"]),
    "bad-permission": ([inode(24, 1, "p", FILE, permission=0o17777)],
                       ["permissions: 1 rows whose permission is outside 0..7777 (octal)"]),
}


@pytest.mark.parametrize("name", TREE_DAMAGE)
def test_tree_problems_name_the_rows(name, tmp_path, nnlite):
    extra, expected = TREE_DAMAGE[name]
    images.write_rows(tmp_path / "fsimage", ROWS + extra)
    result = nnlite("fsimage", "verify", tmp_path / "fsimage")
    assert result.exit_code == 4, result.output
    found = problems(result)
    assert len(found) == len(expected), found
    for line, prefix in zip(found, expected, strict=True):
        assert line.startswith(prefix), line


def test_a_bad_type_is_named(tmp_path, nnlite):
    rows = ROWS + [inode(25, 1, "odd", FILE)]
    write_raw(tmp_path / "fsimage", rows, footer(inode_count=8))
    table = pq.read_table(tmp_path / "fsimage")
    types = pa.array([r["type"] for r in ROWS] + [3], pa.int8())
    table = table.set_column(table.schema.get_field_index("type"), SCHEMA.field("type"), types)
    pq.write_table(table, tmp_path / "fsimage")
    result = nnlite("fsimage", "verify", tmp_path / "fsimage")
    assert result.exit_code == 4
    assert any(p.startswith("types: 1 rows whose type is neither 1 nor 2; first: row 7: id 25")
               for p in problems(result)), problems(result)


def test_the_namenodes_own_files_verify_clean(tmp_path, nnlite):
    name = tmp_path / "name"
    format_dirs([NameDir(name)], namespace_id=1234)
    user = "hdfs"
    with FSNamesystem.open([str(name)], Identity(superuser=user)) as fs:
        acked(fs).mkdirs("/data/in", 0o755, user)
        acked(fs).create("/data/in/part-0", user, replication=2)
        acked(fs).set_xattr("/data", "user.owner", b"etl", 1, user)
        fs.set_safe_mode(True)
        fs.save_namespace()
        fs.set_safe_mode(False)
        acked(fs).mkdirs("/data/out", 0o700, user)
    current = name / "current"
    for kind, file in (("fsimage", IMAGE), ("edits", EDITS)):
        result = nnlite(kind, "verify", current / file)
        assert result.exit_code == 0, result.output
    result = nnlite("fsimage", "verify", current / IMAGE)
    assert "md5: " in result.stdout and "matches" in result.stdout
    assert "rows: 4 read (3 directories, 1 files, " in result.stdout
