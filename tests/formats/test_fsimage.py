"""formats.fsimage: round trips, footer metadata, digests, damage of every kind, Spark."""

from __future__ import annotations

import array
import contextlib
import dataclasses
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nnlite.formats.errors import FormatError, ImageCorruptError, UnsupportedVersionError
from nnlite.formats.fsimage.layout import (
    COLUMNS,
    IMAGE_NAME,
    LAYOUT_VERSION,
    NO_QUOTA,
    SCHEMA,
    TYPE_DIRECTORY,
    TYPE_FILE,
    ImageMeta,
    schema_for,
)
from nnlite.formats.fsimage.md5 import file_md5, md5_sidecar_text, parse_md5_sidecar
from nnlite.formats.fsimage.read import iter_batches, read_image, read_meta
from nnlite.formats.fsimage.write import ImageInfo, write_image

ROOT_ID = 16385
# Every example overwrites the same file in tmp_path, so sharing the fixture is harmless.
TMP_PATH_IS_FINE = [HealthCheck.function_scoped_fixture]


def make_rows(n_files: int) -> list[dict]:
    """A root directory, a sub-directory and ``n_files`` files in it, some with every option."""
    rows = [_dir_row(ROOT_ID, 0, ""), _dir_row(ROOT_ID + 1, ROOT_ID, "ckpt")]
    for i in range(n_files):
        rows.append(_file_row(ROOT_ID + 2 + i, ROOT_ID + 1, i))
    return rows


def _dir_row(inode_id: int, parent_id: int, name: str) -> dict:
    return dict(id=inode_id, parent_id=parent_id, name=name, type=TYPE_DIRECTORY,
                permission=0o1777, owner="hdfs", group="supergroup", mtime=1_700_000_000_000,
                atime=0, replication=0, block_size=0, length=0, blocks=[], checksum=None,
                xattrs=None, ns_quota=1000, ss_quota=NO_QUOTA, client_name=None,
                client_machine=None,
                acl=["group::r-x", "default:user::rwx", "default:group::r-x",
                     "default:other::---"] if inode_id % 2 else None,
                snapshot='{"root":{"quota":65536,"snapshots":[]}}' if inode_id % 3 else None)


def _file_row(inode_id: int, parent_id: int, i: int) -> dict:
    building = i % 5 == 4
    return dict(id=inode_id, parent_id=parent_id, name=f"{i}.delta", type=TYPE_FILE,
                permission=0o644, owner="spark", group="spark", mtime=1_700_000_000_000 + i,
                atime=1_700_000_000_000 + i, replication=3, block_size=128 << 20,
                length=100 * i, blocks=[((1 << 30) + i, 100 * i, 1000 + i)],
                checksum=None if building else bytes([i % 256]) * 16,
                xattrs={"user.batch": str(i).encode()} if i % 3 == 0 else None,
                acl=["user:bob:rw-", "group::r--"] if i % 4 == 0 else None, snapshot=None,
                ns_quota=NO_QUOTA, ss_quota=NO_QUOTA,
                client_name=f"DFSClient_{i}" if building else None,
                client_machine="10.0.0.7" if building else None)


def columns_of(rows: list[dict]) -> dict[str, list]:
    return {name: [row[name] for row in rows] for name in COLUMNS}


def rows_of(table: pa.Table) -> list[dict]:
    """Rows as the writer took them: blocks as tuples, xattrs as a dict."""
    rows = table.to_pylist()
    for row in rows:
        row["blocks"] = [(b["block_id"], b["num_bytes"], b["genstamp"]) for b in row["blocks"]]
        row["xattrs"] = None if row["xattrs"] is None else dict(row["xattrs"])
    return rows


def meta_for(n_rows: int, **changes) -> ImageMeta:
    meta = ImageMeta(layout_version=LAYOUT_VERSION, namespace_id=463_011_597,
                       last_txid=812, inode_count=n_rows, creation_time=1_700_000_123_456,
                       extra={"last_inode_id": ROOT_ID + n_rows, "last_block_id": 1 << 30})
    return dataclasses.replace(meta, **changes)


def write(tmp_path, rows=None, **kw) -> tuple[str, ImageInfo]:
    rows = make_rows(20) if rows is None else rows
    path = str(tmp_path / IMAGE_NAME)
    return path, write_image(path, columns_of(rows), meta_for(len(rows)), **kw)


# ------------------------------------------------------------------------------- corruption

def flip_byte(path: str, offset: int) -> None:
    """Invert every bit of one byte; a negative offset counts from the end."""
    with open(path, "r+b") as f:
        f.seek(offset, os.SEEK_SET if offset >= 0 else os.SEEK_END)
        where = f.tell()
        byte = f.read(1)
        f.seek(where)
        f.write(bytes([byte[0] ^ 0xFF]))


def truncate_to(path: str, size: int) -> None:
    with open(path, "r+b") as f:
        f.truncate(size)


def data_page_end(path: str, column: str) -> int:
    """Offset of the last byte of a column chunk in row group 0: inside page data, not a header."""
    chunk = pq.read_metadata(path).row_group(0).column(COLUMNS.index(column))
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    return start + chunk.total_compressed_size - 1


def rewrite_footer(path: str, *, table_change=None, **pairs) -> None:
    """Rewrite an image with changed footer pairs (value None removes the key) or columns."""
    table = pq.read_table(path)
    metadata = dict(table.schema.metadata)
    for key, value in pairs.items():
        metadata.pop(key.encode(), None)
        if value is not None:
            metadata[key.encode()] = value
    table = table if table_change is None else table_change(table)
    pq.write_table(table.replace_schema_metadata(metadata), path)


CORRUPTIONS = {
    "flip-first-byte": lambda p: flip_byte(p, 0),
    "flip-last-byte": lambda p: flip_byte(p, -1),
    "flip-footer-length": lambda p: flip_byte(p, -6),
    "flip-name-page": lambda p: flip_byte(p, data_page_end(p, "name")),
    "flip-checksum-page": lambda p: flip_byte(p, data_page_end(p, "checksum")),
    "flip-blocks-page": lambda p: flip_byte(p, data_page_end(p, "blocks")),
    "truncate-half": lambda p: truncate_to(p, os.path.getsize(p) // 2),
    "truncate-last-byte": lambda p: truncate_to(p, os.path.getsize(p) - 1),
    "truncate-empty": lambda p: truncate_to(p, 0),
}


# -------------------------------------------------------------------------------- round trip

def test_round_trip_columns_to_table(tmp_path):
    rows = make_rows(20)
    path, _ = write(tmp_path, rows)
    table, _ = read_image(path, expected_md5=None)
    assert table.schema == SCHEMA
    assert table.schema.metadata is None
    assert rows_of(table) == rows
    assert table.equals(pa.Table.from_pylist(rows, schema=SCHEMA))


def test_accepts_table_arrays_and_array_array(tmp_path):
    rows = make_rows(10)
    cols = columns_of(rows)
    cols["id"] = array.array("q", cols["id"])
    cols["permission"] = array.array("h", cols["permission"])
    cols["type"] = pa.array(cols["type"], pa.int32())
    fields = ("block_id", "num_bytes", "genstamp")
    cols["blocks"] = [[dict(zip(fields, b, strict=True)) for b in blocks]
                      for blocks in cols["blocks"]]  # the namenode passes dicts
    path = str(tmp_path / "a")
    write_image(path, cols, meta_for(len(rows)))
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    table = table.set_column(4, "permission", table.column("permission").cast(pa.int64()))
    write_image(str(tmp_path / "b"), table, meta_for(len(rows)))
    assert rows_of(read_image(path, expected_md5=None)[0]) == rows
    assert rows_of(read_image(tmp_path / "b", expected_md5=None)[0]) == rows


def test_empty_image_round_trips(tmp_path):
    path, _ = write(tmp_path, rows=[])
    table, meta = read_image(path, expected_md5=None)
    assert table.num_rows == 0 and meta.inode_count == 0


def test_metadata_round_trip(tmp_path):
    path, _ = write(tmp_path)
    expected = meta_for(22)
    assert read_meta(path) == expected
    assert read_image(path, expected_md5=None)[1] == expected
    footer = pq.read_metadata(path).metadata
    assert footer[b"nnlite.format"] == b"fsimage"
    assert footer[b"nnlite.last_txid"] == b"812"
    assert footer[b"nnlite.extra.last_block_id"] == str(1 << 30).encode()


def test_plain_pyarrow_reads_the_file(tmp_path):
    path, _ = write(tmp_path)
    assert pq.read_table(path).num_rows == 22


def test_row_groups_and_columns(tmp_path):
    path, _ = write(tmp_path, make_rows(98), row_group_size=25)
    assert pq.ParquetFile(path).num_row_groups == 4
    table, _ = read_image(path, expected_md5=None, columns=["id", "name"])
    assert table.column_names == ["id", "name"]
    assert table.column("name")[2].as_py() == "0.delta"


def test_iter_batches_streams_the_whole_image(tmp_path):
    path, info = write(tmp_path, make_rows(98), row_group_size=25)
    batches = list(iter_batches(path, batch_size=10, expected_md5=info.md5_hex))
    assert max(b.num_rows for b in batches) <= 10
    whole, _ = read_image(path, expected_md5=None)
    assert pa.Table.from_batches(batches).replace_schema_metadata(None).equals(whole)
    ids = [b.column(0) for b in iter_batches(path, columns=["id"])]
    assert sum(len(c) for c in ids) == 100


def test_unknown_read_column_is_refused(tmp_path):
    path, _ = write(tmp_path)
    with pytest.raises(ValueError, match="nope"):
        read_image(path, expected_md5=None, columns=["id", "nope"])


@st.composite
def random_rows(draw) -> list[dict]:
    int64 = st.integers(-(1 << 63), (1 << 63) - 1)
    text = st.text(max_size=12)
    row = st.fixed_dictionaries(dict(
        id=int64, parent_id=int64, name=text, type=st.sampled_from([1, 2]),
        permission=st.integers(0, 0o7777), owner=text, group=text, mtime=int64, atime=int64,
        replication=st.integers(-(1 << 15), (1 << 15) - 1), block_size=int64, length=int64,
        blocks=st.lists(st.tuples(int64, int64, int64), max_size=3),
        checksum=st.none() | st.binary(max_size=32),
        xattrs=st.none() | st.dictionaries(text, st.binary(max_size=8), max_size=3),
        ns_quota=int64, ss_quota=int64,
        client_name=st.none() | text, client_machine=st.none() | text,
        acl=st.none() | st.lists(text, max_size=3), snapshot=st.none() | text))
    return draw(st.lists(row, max_size=30))


@settings(max_examples=60, deadline=None, suppress_health_check=TMP_PATH_IS_FINE)
@given(rows=random_rows(), row_group_size=st.integers(1, 40))
def test_random_rows_round_trip(tmp_path, rows, row_group_size):
    path = str(tmp_path / "prop")
    info = write_image(path, columns_of(rows), meta_for(len(rows)),
                         row_group_size=row_group_size)
    table, meta = read_image(path, expected_md5=info.md5_hex)
    assert rows_of(table) == rows
    assert meta == meta_for(len(rows))


# ----------------------------------------------------------------------------------- digests

def test_info_is_digest_and_size_of_the_file(tmp_path):
    path, info = write(tmp_path)
    assert info == ImageInfo(file_md5(path), os.path.getsize(path))


def test_sidecar_text():
    digest = "0123456789abcdef0123456789abcdef"
    assert md5_sidecar_text(digest) == f"{digest} *fsimage\n"
    assert md5_sidecar_text(digest, "fsimage.ckpt") == f"{digest} *fsimage.ckpt\n"
    assert parse_md5_sidecar(md5_sidecar_text(digest)) == digest
    assert parse_md5_sidecar(f"{digest.upper()}  fsimage") == digest  # md5sum text mode
    with pytest.raises(ValueError):
        md5_sidecar_text("xyz")


@pytest.mark.parametrize("text", [
    "", "\n", "0123 *fsimage\n", "0123456789abcdef0123456789abcdeg *fsimage\n",
    "0123456789abcdef0123456789abcdef *\n", "0123456789abcdef0123456789abcdef fsimage\n",
    "0123456789abcdef0123456789abcdef *fsimage\nextra\n",
    "0123456789abcdef0123456789abcdef0 *fsimage\n",
])
def test_malformed_sidecar_is_corrupt(text):
    with pytest.raises(ImageCorruptError, match="fsimage.md5"):
        parse_md5_sidecar(text, path="/n/current/fsimage.md5")


def test_flipped_byte_fails_digest_before_parsing(tmp_path, monkeypatch):
    path, info = write(tmp_path)
    flip_byte(path, data_page_end(path, "name"))
    monkeypatch.setattr(pq, "ParquetFile", _must_not_parse)
    with pytest.raises(ImageCorruptError) as caught:
        read_image(path, expected_md5=info.md5_hex)
    message = str(caught.value)
    assert path in message and info.md5_hex in message and file_md5(path) in message
    with pytest.raises(ImageCorruptError):
        iter_batches(path, expected_md5=info.md5_hex)


def _must_not_parse(*args, **kw):
    raise AssertionError("parsed before the digest was checked")


# ------------------------------------------------------------------------------------ damage

@pytest.mark.parametrize("damage", sorted(CORRUPTIONS))
def test_damaged_image_is_corrupt_without_digest(tmp_path, damage):
    path, _ = write(tmp_path)
    CORRUPTIONS[damage](path)
    with pytest.raises(ImageCorruptError, match=IMAGE_NAME):
        read_image(path, expected_md5=None)
    with pytest.raises(ImageCorruptError, match=IMAGE_NAME):
        list(iter_batches(path))


@pytest.mark.parametrize("damage", ["flip-first-byte", "truncate-half", "truncate-empty"])
def test_damaged_footer_fails_read_meta(tmp_path, damage):
    path, _ = write(tmp_path)
    CORRUPTIONS[damage](path)
    with pytest.raises(ImageCorruptError):
        read_meta(path)


def test_non_parquet_file_is_corrupt(tmp_path):
    path = tmp_path / "fsimage"
    path.write_bytes(b"NNLEDITS" + bytes(200))
    with pytest.raises(ImageCorruptError, match="not a readable Parquet file"):
        read_meta(path)
    with pytest.raises(ImageCorruptError):
        read_image(path, expected_md5=None)


def test_foreign_parquet_file_is_not_an_image(tmp_path):
    path = str(tmp_path / "other.parquet")
    pq.write_table(pa.table({"id": [1, 2]}), path)
    with pytest.raises(ImageCorruptError, match="not an nnlite fsimage"):
        read_meta(path)


def test_missing_file_is_not_disguised_as_corruption(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_meta(tmp_path / "absent")
    with pytest.raises(FileNotFoundError):
        read_image(tmp_path / "absent", expected_md5="0" * 32)


@pytest.mark.parametrize("version", [b"0", b"4"])
def test_other_layout_version_is_unsupported(tmp_path, version):
    path, _ = write(tmp_path)
    rewrite_footer(path, **{"nnlite.layout_version": version})
    with pytest.raises(UnsupportedVersionError, match=f"version {version.decode()}"):
        read_meta(path)
    with pytest.raises(UnsupportedVersionError):
        read_image(path, expected_md5=None)


@pytest.mark.parametrize("pairs, message", [
    ({"nnlite.last_txid": None}, "nnlite.last_txid missing"),
    ({"nnlite.inode_count": b"22x"}, "not an integer"),
    ({"nnlite.inode_count": b"21"}, "22 rows but inode_count 21"),
    ({"nnlite.format": b"edits"}, "not an nnlite fsimage"),
    ({"nnlite.extra.last_inode_id": b""}, "not an integer"),
])
def test_bad_footer_metadata_is_corrupt(tmp_path, pairs, message):
    path, _ = write(tmp_path)
    rewrite_footer(path, **pairs)
    with pytest.raises(ImageCorruptError, match=message):
        read_meta(path)


def test_changed_column_type_is_corrupt(tmp_path):
    path, _ = write(tmp_path)

    def widen(t):
        return t.set_column(4, "permission", t.column("permission").cast(pa.int32()))

    rewrite_footer(path, table_change=widen)
    with pytest.raises(ImageCorruptError, match="column permission"):
        read_image(path, expected_md5=None)


@settings(max_examples=150, deadline=None, suppress_health_check=TMP_PATH_IS_FINE)
@given(data=st.data())
def test_any_damage_is_a_format_error_or_a_table(tmp_path, data):
    """A flipped byte or a cut anywhere never escapes as a raw pyarrow or OS error."""
    path, info = write(tmp_path, make_rows(5))
    size = os.path.getsize(path)
    if data.draw(st.booleans(), label="truncate"):
        truncate_to(path, data.draw(st.integers(0, size - 1), label="size"))
    else:
        flip_byte(path, data.draw(st.integers(0, size - 1), label="offset"))
    with pytest.raises(ImageCorruptError):
        read_image(path, expected_md5=info.md5_hex)
    with contextlib.suppress(FormatError):
        read_image(path, expected_md5=None)


# ---------------------------------------------------------------------------- writer checks

def _without(name):
    return lambda cols: {k: v for k, v in cols.items() if k != name}


def _setting(name, index, value):
    def change(cols):
        cols[name][index] = value
        return cols
    return change


@pytest.mark.parametrize("change, message", [
    (_without("owner"), "missing \\['owner'\\]"),
    (lambda cols: {**cols, "color": [1] * 22}, "unknown \\['color'\\]"),
    (lambda cols: {**cols, "name": cols["name"][:-1]}, "differ in length"),
    (_setting("owner", 3, None), "owner is not nullable"),
    (_setting("blocks", 3, [None]), r"blocks\[\] is not nullable"),
    (_setting("blocks", 3, [(1, None, 3)]), r"blocks\[\]\.num_bytes is not nullable"),
    (_setting("type", 3, 7), "column type holds values"),
    (_setting("permission", 3, 1 << 20), "column permission"),
    (_setting("name", 3, 42), "column name"),
], ids=["missing", "unknown", "length", "null", "null-block", "null-field", "type", "overflow",
        "wrong-type"])
def test_writer_refuses_bad_columns(tmp_path, change, message):
    cols = change(columns_of(make_rows(20)))
    with pytest.raises(ValueError, match=message):
        write_image(str(tmp_path / "x"), cols, meta_for(22))


@pytest.mark.parametrize("changes, message", [
    (dict(inode_count=21), "inode_count 21 != 22 rows"),
    (dict(layout_version=1), "writes layout version 3 only"),
    (dict(extra={"bad name": 1}), "extra metadata name"),
    (dict(extra={"flag": True}), "must be an int"),
    (dict(last_txid="812"), "must be an int"),
])
def test_writer_refuses_bad_meta(tmp_path, changes, message):
    with pytest.raises(ValueError, match=message):
        write_image(str(tmp_path / "x"), columns_of(make_rows(20)), meta_for(22, **changes))


def test_a_version_1_image_reads_with_null_acls(tmp_path):
    """An image written before the ``acl`` column (layout version 1) still loads."""
    rows = make_rows(20)
    path = str(tmp_path / IMAGE_NAME)
    write_image(path, columns_of(rows), meta_for(len(rows)))
    table = pq.read_table(path)
    footer = dict(table.schema.metadata)
    footer[b"nnlite.layout_version"] = b"1"
    table = table.drop_columns(["acl", "snapshot"]).replace_schema_metadata(footer)
    assert table.schema.remove_metadata() == schema_for(1)
    pq.write_table(table, path)
    whole, meta = read_image(path, expected_md5=None)
    assert meta.layout_version == 1
    assert whole.schema.names == list(COLUMNS)
    assert rows_of(whole) == [dict(r, acl=None, snapshot=None) for r in rows]
    some, _ = read_image(path, expected_md5=None, columns=["acl", "id"])
    assert some.column_names == ["acl", "id"] and some.column("acl").null_count == len(rows)
    batches = list(iter_batches(path, batch_size=7))
    assert sum(b.num_rows for b in batches) == len(rows)
    assert all(b.schema.names == list(COLUMNS) for b in batches)


# ------------------------------------------------------------------------------------- spark

@pytest.mark.spark
def test_spark_reads_the_image(spark, tmp_path):
    path, _ = write(tmp_path, make_rows(40))
    frame = spark.read.parquet(path)
    assert frame.count() == 42
    assert dict(frame.dtypes)["type"] == "tinyint"
    assert dict(frame.dtypes)["xattrs"] == "map<string,binary>"
    row = frame.where(f"id = {ROOT_ID + 2 + 3}").collect()[0]
    assert (row["name"], row["group"], row["permission"]) == ("3.delta", "spark", 0o644)
    assert row["blocks"][0]["block_id"] == (1 << 30) + 3
    assert bytes(row["xattrs"]["user.batch"]) == b"3"
    assert bytes(row["checksum"]) == bytes([3]) * 16
    root = frame.where("parent_id = 0").collect()[0]
    assert (root["name"], root["permission"], root["checksum"]) == ("", 0o1777, None)


def test_sections_round_trip_in_the_footer_as_base64(tmp_path):
    rows = make_rows(3)
    path = str(tmp_path / IMAGE_NAME)
    meta = dataclasses.replace(meta_for(len(rows)), sections={"secret_manager": b"\x00\xffkeys"})
    write_image(path, columns_of(rows), meta)
    assert read_meta(path).sections == {"secret_manager": b"\x00\xffkeys"}
    rewrite_footer(path, **{"nnlite.section.secret_manager": b"not base64!"})
    with pytest.raises(ImageCorruptError, match="is not base64"):
        read_meta(path)
