"""Flink's ``_metadata`` read as Flink 2.3 wrote it: two files written by real PyFlink jobs
into nnlite (tests/flink makes more on every run and restores from them), and every way the
bytes can be cut or changed refused with a typed error, never another exception."""

from __future__ import annotations

import contextlib
import struct
from pathlib import Path

import pytest

from nnlite.formats import flink_metadata
from nnlite.formats.errors import BadHeaderError, FormatError, UnsupportedVersionError

DATA = Path(__file__).parent / "data"
SAVEPOINT = DATA / "flink-savepoint-v6.metadata"
INCREMENTAL = DATA / "flink-rocksdb-incremental-chk1-v6.metadata"


def test_a_savepoint_references_its_own_files_relatively():
    meta = flink_metadata.parse(SAVEPOINT.read_bytes())
    assert (meta.version, meta.checkpoint_id, meta.operators) == (6, 5, 5)
    assert {(r.kind, r.path, r.size) for r in meta.files} == {
        ("relative", "b8ffac3f-e540-4e8b-8fd7-296d106a007d", 20999),
        ("relative", "90b8c7bc-80f3-4535-bc04-047a75f85045", 20999),
        ("relative", "2ceac959-9599-4271-bcd2-50e6dcf31c9f", 32421)}
    assert meta.inline_bytes > 0      # the small state sits inside _metadata


def test_an_incremental_checkpoint_references_shared_files_by_uri():
    meta = flink_metadata.parse(INCREMENTAL.read_bytes())
    job = "/flink/ckpt/bca53422186449487288181be5553f68"
    shared = sorted(flink_metadata.resolve(r.path, f"{job}/chk-1") for r in meta.files
                    if r.kind == "file")
    assert shared == [f"{job}/shared/86626c24-a20a-44cd-a210-8cacfb59bdd3",
                      f"{job}/shared/ed0dad1c-25c5-418c-8641-dcd3eacbdb2a"]
    relative = [r for r in meta.files if r.kind == "relative"]
    assert flink_metadata.resolve(relative[0].path, f"{job}/chk-1") == \
        f"{job}/chk-1/{relative[0].path}"
    assert meta.checkpoint_id == 1


def test_resolve_keeps_what_is_not_in_nnlite():
    assert flink_metadata.resolve("file:///tmp/x", "/a") == "file:///tmp/x"
    assert flink_metadata.resolve("hdfs://nn:8020/a/b", "/c") == "/a/b"


def test_other_magics_and_versions_are_refused_by_name():
    data = SAVEPOINT.read_bytes()
    with pytest.raises(BadHeaderError, match="not a Flink checkpoint metadata file"):
        flink_metadata.parse(b"PAR1" + data[4:])
    for version in (1, 2, 7):
        with pytest.raises(UnsupportedVersionError, match=f"version {version}: this catalog "
                                                          f"reads versions 3-6"):
            flink_metadata.parse(data[:4] + struct.pack(">i", version) + data[8:])


@pytest.mark.parametrize("path", [SAVEPOINT, INCREMENTAL])
def test_every_cut_is_a_format_error(path):
    data = path.read_bytes()
    body_end = len(data) - len(data.split(b"\xac\xed\x00\x05")[-1]) - 4
    for cut in list(range(0, 400)) + list(range(400, body_end, 97)):
        with pytest.raises(FormatError):
            flink_metadata.parse(data[:cut])


@pytest.mark.parametrize("path", [SAVEPOINT, INCREMENTAL])
def test_changed_bytes_never_raise_anything_but_a_format_error(path):
    data = bytearray(path.read_bytes())
    for offset in range(8, 2000, 7):
        for value in (0x00, 0x7F, 0xFF):
            changed = bytes(data[:offset]) + bytes([value]) + bytes(data[offset + 1:])
            with contextlib.suppress(FormatError):
                flink_metadata.parse(changed)
