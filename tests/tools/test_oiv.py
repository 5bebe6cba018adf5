"""tools/oiv.py and ``nnlite oiv``: Delimited lines as Hadoop prints them, JSON and XML with every
column, FileDistribution as Hadoop counts it, paths rebuilt in any row order, orphans reported,
MD5 checks, the snapshots of a namenode's image and what they keep, and an image of 120,000
inodes streamed in bounded memory."""

from __future__ import annotations

import calendar
import json
import math
import sys
import tracemalloc
import xml.etree.ElementTree as ET

import pytest

from nnlite.formats import edits
from nnlite.formats.fsimage.layout import COLUMNS, LAYOUT_VERSION, TYPE_DIRECTORY, TYPE_FILE
from nnlite.formats.fsimage.md5 import file_md5
from nnlite.namenode.image import columns
from nnlite.namenode.namespace import delete, snapshot_ops
from nnlite.namenode.security.tokens import DelegationTokenIdentifier
from nnlite.tools import oiv, oiv_writers
from nnlite.tools.distribution import DEFAULT_MAX, DEFAULT_STEP, FileDistribution, human
from tests.namenode.helpers import SUPER, new_ns, write_file
from tests.tools import images
from tests.tools.conftest import exists, read
from tests.tools.images import BLOCK_SIZE, TS, inode

DIR, FILE = TYPE_DIRECTORY, TYPE_FILE
T1, T2 = TS + 3_600_000, TS + 86_400_000       # 2023-11-14 23:13 and 2023-11-15 22:13 UTC

ROWS = [
    inode(1, 0, ""),
    inode(2, 1, "user", permission=0o1777, ns_quota=1000, ss_quota=2**40),
    inode(3, 2, "spark", permission=0o750, owner="spark"),
    inode(10, 3, "part-0", FILE, length=245, mtime=T1, atime=T2, owner="spark",
          blocks=[(1073741825, 200, 1001), (1073741826, 45, 1002)],
          checksum=bytes.fromhex("9e107d9d"), xattrs={"user.a": b"\x00\xff"},
          acl=["user:bob:r--", "group::r--"]),
    inode(11, 3, "open", FILE, permission=0o1776, replication=2, client_name="DFSClient_1",
          client_machine="10.0.0.1"),
    inode(12, 2, "目标 ä", FILE, length=BLOCK_SIZE + 1, blocks=[(7, BLOCK_SIZE, 1), (8, 1, 1)]),
    inode(13, 1, "ctl\x01<&>", FILE),
]

DELIMITED = [
    "Path\tReplication\tModificationTime\tAccessTime\tPreferredBlockSize\tBlocksCount\t"
    "FileSize\tNSQUOTA\tDSQUOTA\tPermission\tUserName\tGroupName",
    "/\t0\t2023-11-14 22:13\t1970-01-01 00:00\t0\t0\t0\t-1\t-1\tdrwxr-xr-x\thdfs\tsupergroup",
    "/user\t0\t2023-11-14 22:13\t1970-01-01 00:00\t0\t0\t0\t1000\t1099511627776\tdrwxrwxrwt\t"
    "hdfs\tsupergroup",
    "/user/spark\t0\t2023-11-14 22:13\t1970-01-01 00:00\t0\t0\t0\t-1\t-1\tdrwxr-x---\tspark\t"
    "supergroup",
    "/user/spark/part-0\t3\t2023-11-14 23:13\t2023-11-15 22:13\t134217728\t2\t245\t0\t0\t"
    "-rw-r--r--\tspark\tsupergroup",
    "/user/spark/open\t2\t2023-11-14 22:13\t1970-01-01 00:00\t134217728\t0\t0\t0\t0\t"
    "-rwxrwxrwT\thdfs\tsupergroup",
    "/user/目标 ä\t3\t2023-11-14 22:13\t1970-01-01 00:00\t134217728\t2\t134217729\t0\t0\t"
    "-rw-r--r--\thdfs\tsupergroup",
    "/ctl\x01<&>\t3\t2023-11-14 22:13\t1970-01-01 00:00\t134217728\t0\t0\t0\t0\t-rw-r--r--\t"
    "hdfs\tsupergroup",
]


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "fsimage"
    images.write_rows(path, ROWS)
    return path


# -------------------------------------------------------------------------------- Delimited

def test_delimited_prints_hadoop_lines(small, tmp_path, utc, nnlite):
    result = nnlite("oiv", "-i", small, "-o", tmp_path / "out.tsv")
    assert result.exit_code == 0, result.output
    assert read(tmp_path / "out.tsv").split("\n") == DELIMITED + [""]
    assert f"MD5 verified against {small}.md5; 7 of 7 inodes rendered (image txid 7)" \
        in result.stderr


def test_delimited_options_and_standard_output(small, utc, nnlite):
    result = nnlite("oiv", "-i", small, "-p", "delimited", "--delimiter", ",", "--no-header")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [line.replace("\t", ",") for line in DELIMITED[1:]]


def test_a_typed_backslash_t_is_a_tab(small, utc, nnlite):
    result = nnlite("oiv", "-i", small, "--delimiter", "\\t")
    assert result.stdout.splitlines() == DELIMITED


def test_rows_in_any_order_give_the_same_lines(tmp_path, utc):
    shuffled = [ROWS[i] for i in (5, 3, 6, 2, 0, 4, 1)]
    images.write_rows(tmp_path / "fsimage", shuffled)
    oiv.run(str(tmp_path / "fsimage"), str(tmp_path / "out"), oiv.OivOptions())
    lines = read(tmp_path / "out").splitlines()
    assert lines[0] == DELIMITED[0]
    assert sorted(lines[1:]) == sorted(DELIMITED[1:])


@pytest.mark.parametrize("mode, text", [
    (0o755, "rwxr-xr-x"), (0o644, "rw-r--r--"), (0, "---------"), (0o777, "rwxrwxrwx"),
    (0o1777, "rwxrwxrwt"), (0o1776, "rwxrwxrwT"), (0o4755, "rwxr-xr-x"), (0o2750, "rwxr-x---"),
])
def test_permissions_read_as_hadoop_fspermission(mode, text):
    assert oiv_writers.symbolic(mode) == text == oiv_writers.PERMISSIONS[mode]


def utc_ms(*fields) -> int:
    return calendar.timegm(fields + (0,) * (6 - len(fields))) * 1000


@pytest.mark.parametrize("zone_name, ms, text", [
    ("UTC", 0, "1970-01-01 00:00"),
    ("UTC", -1, "1969-12-31 23:59"),
    ("UTC", 2**63 - 1, "292278994-08-17 07:12"),                   # as Java prints it
    ("Asia/Kolkata", 0, "1970-01-01 05:30"),
    ("America/New_York", utc_ms(2023, 11, 5, 5, 59), "2023-11-05 01:59"),  # EDT
    ("America/New_York", utc_ms(2023, 11, 5, 6, 59), "2023-11-05 01:59"),  # EST, again 01:59
])
def test_times_are_local_like_simpledateformat(zone, zone_name, ms, text):
    zone(zone_name)
    assert oiv_writers.TimeFormat()(ms) == text


def test_time_cache_is_right_where_the_offset_has_seconds(zone):
    zone("Europe/Amsterdam")          # +00:19:32 in 1930: one UTC minute spans two local ones
    fmt = oiv_writers.TimeFormat()
    start = utc_ms(1930, 1, 1)
    assert [fmt(start), fmt(start + 30_000), fmt(start)] == [
        "1930-01-01 00:19", "1930-01-01 00:20", "1930-01-01 00:19"]


# ------------------------------------------------------------------------------ JSON and XML

def test_json_holds_every_column_of_every_inode(small, tmp_path, nnlite):
    result = nnlite("oiv", "-i", small, "-o", tmp_path / "out.json", "-p", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(read(tmp_path / "out.json"))
    assert doc["meta"] == {"layout_version": LAYOUT_VERSION, "namespace_id": 99, "last_txid": 7,
                           "inode_count": 7, "creation_time": TS, "extra": {}}
    assert [r["path"] for r in doc["inodes"]] == [line.split("\t")[0] for line in DELIMITED[1:]]
    part = doc["inodes"][3]
    assert list(part) == ["path", *COLUMNS]
    assert part == {
        "path": "/user/spark/part-0", "id": 10, "parent_id": 3, "name": "part-0", "type": "FILE",
        "permission": "0644", "owner": "spark", "group": "supergroup", "mtime": T1, "atime": T2,
        "replication": 3, "block_size": BLOCK_SIZE, "length": 245,
        "blocks": [{"block_id": 1073741825, "num_bytes": 200, "genstamp": 1001},
                   {"block_id": 1073741826, "num_bytes": 45, "genstamp": 1002}],
        "checksum": "9e107d9d", "xattrs": {"user.a": "00ff"}, "ns_quota": -1, "ss_quota": -1,
        "client_name": None, "client_machine": None, "acl": ["user:bob:r--", "group::r--"],
        "snapshot": None}
    assert doc["inodes"][4]["client_name"] == "DFSClient_1"
    assert doc["inodes"][1]["permission"] == "1777"


def test_xml_holds_every_column_and_survives_a_parser(small, tmp_path, nnlite):
    result = nnlite("oiv", "-i", small, "-o", tmp_path / "out.xml", "-p", "XML")
    assert result.exit_code == 0, result.output
    root = ET.parse(tmp_path / "out.xml").getroot()
    assert root.find("meta").get("last_txid") == "7"
    nodes = root.findall("inodes/inode")
    assert [n.findtext("path") for n in nodes][:6] == [
        line.split("\t")[0] for line in DELIMITED[1:7]]
    part = nodes[3]
    assert [b.findtext("num_bytes") for b in part.findall("blocks/block")] == ["200", "45"]
    assert part.find("xattrs/xattr/name").text == "user.a"
    assert part.find("xattrs/xattr/value").text == "00ff"
    assert part.find("client_name") is None                   # null: left out
    assert [e.text for e in part.findall("acl/entry")] == ["user:bob:r--", "group::r--"]
    weird = nodes[6].find("path")
    assert weird.get("encoding") == "hex"
    assert bytes.fromhex(weird.text).decode() == "/ctl\x01<&>"


def test_oiv_shows_the_snapshots_and_what_they_keep(tmp_path):
    from click.testing import CliRunner

    from nnlite.cli import main
    ns = new_ns()
    ns.mkdirs("/s", 0o755, SUPER)
    write_file(ns, "/s/f", sizes=(3,))
    snapshot_ops.allow_snapshot(ns, "/s", SUPER)
    snapshot_ops.create_snapshot(ns, "/s", "one", SUPER)
    delete.delete(ns, "/s/f", False, SUPER)
    info = columns.save(ns.tree, str(tmp_path / "fsimage"), 42, 9)
    (tmp_path / "fsimage.md5").write_text(f"{info.md5_hex} *fsimage\n")
    result = CliRunner().invoke(main, ["oiv", "-i", str(tmp_path / "fsimage"), "-o",
                                       str(tmp_path / "out.json"), "-p", "JSON"])
    assert result.exit_code == 0, result.output
    inodes = {r["path"]: r for r in json.loads((tmp_path / "out.json").read_text())["inodes"]}
    root = inodes["/s"]["snapshot"]
    assert [s[1] for s in root["root"]["snapshots"]] == ["one"]
    [(snap, _, created, deleted)] = root["diffs"]
    assert created is None and list(deleted) == ["f"]
    assert "1 kept only by snapshots left out" in result.output
    verified = CliRunner().invoke(main, ["fsimage", "verify", str(tmp_path / "fsimage")])
    assert verified.exit_code == 0, verified.output


# ---------------------------------------------------------------------------------- orphans

def test_inodes_whose_parent_does_not_resolve_are_left_out_and_fail_the_run(tmp_path, utc,
                                                                            nnlite):
    rows = ROWS + [inode(20, 99, "lost", FILE), inode(30, 31, "loop-a"),
                   inode(31, 30, "loop-b"), inode(32, 30, "in-loop", FILE),
                   inode(33, 0, "second-root")]
    images.write_rows(tmp_path / "fsimage", rows)
    result = nnlite("oiv", "-i", tmp_path / "fsimage", "-o", tmp_path / "out")
    assert result.exit_code == 4
    assert read(tmp_path / "out").split("\n") == DELIMITED + [""]
    assert "7 of 12 inodes rendered" in result.stderr
    assert result.stderr.splitlines()[-1].startswith(
        "nnlite: ImageCorruptError: 5 inodes left out: their parent does not resolve to a "
        "directory under the root (first: id 20 parent_id 99 name 'lost', id 30 parent_id 31")


# -------------------------------------------------------------------------------------- md5

def test_no_sidecar_says_not_verified(tmp_path, nnlite):
    images.write_rows(tmp_path / "fsimage", ROWS, sidecar=False)
    result = nnlite("oiv", "-i", tmp_path / "fsimage", "-o", tmp_path / "out")
    assert result.exit_code == 0
    assert f"MD5 not verified: no {tmp_path / 'fsimage'}.md5 and no --md5" in result.stderr


def test_a_sidecar_that_does_not_match_stops_before_any_output(small, tmp_path, nnlite):
    (tmp_path / "fsimage.md5").write_text("0" * 32 + " *fsimage\n")
    result = nnlite("oiv", "-i", small, "-o", tmp_path / "out")
    assert result.exit_code == 4
    assert "ImageCorruptError: MD5 mismatch: expected 00000000" in result.stderr
    assert not exists(tmp_path / "out")


def test_md5_option_overrides_the_sidecar(small, tmp_path, nnlite):
    (tmp_path / "fsimage.md5").write_text("0" * 32 + " *fsimage\n")
    digest = file_md5(small)
    result = nnlite("oiv", "-i", small, "-o", tmp_path / "out", "--md5", digest.upper())
    assert result.exit_code == 0
    assert "MD5 verified against --md5" in result.stderr
    result = nnlite("oiv", "-i", small, "-o", tmp_path / "out", "--md5", "abc")
    assert result.exit_code == 2
    assert "--md5 must be 32 hex digits" in result.stderr


@pytest.mark.parametrize("args, message", [
    (["-p", "JSON", "--no-header"], "apply to -p Delimited only"),
    (["-p", "XML", "--delimiter", ","], "apply to -p Delimited only"),
    (["--step", "10"], "apply to -p FileDistribution only"),
    (["--plot", "x.png"], "apply to -p FileDistribution only"),
    (["--delimiter", ""], "must not be empty"),
    (["-p", "FileDistribution", "--step", "0"], "--step must be between 1"),
    (["-p", "FileDistribution", "--step", "10", "--max", "5"], "--max must be between --step"),
    (["-p", "Web"], "'Web' is not one of"),
])
def test_options_that_do_not_fit_are_usage_errors(args, message, small, tmp_path, nnlite):
    result = nnlite("oiv", "-i", small, "-o", tmp_path / "out", *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert not exists(tmp_path / "out")


def test_a_missing_image_is_a_usage_error(tmp_path, nnlite):
    result = nnlite("oiv", "-i", tmp_path / "nope", "-o", tmp_path / "out")
    assert result.exit_code == 2
    assert "does not exist" in result.stderr


def test_an_unwritable_output_is_one_line(small, tmp_path, nnlite):
    result = nnlite("oiv", "-i", small, "-o", tmp_path / "no-such-dir" / "out")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith("nnlite: FileNotFoundError: ")


# ------------------------------------------------------------------ 120,000 inodes, streamed

BIG_INODES = 120_000


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "fsimage"
    return images.build(path, BIG_INODES, row_group_size=16_384)


def expected_dir_path(k: int) -> str:
    names = []
    while k:
        names.append(f"d{k}")
        k = images.dir_parent(k)
    return "/" + "/".join(reversed(names))


def test_big_image_streams_every_inode_with_its_path(big, tmp_path, utc):
    out = tmp_path / "out.tsv"
    result = oiv.run(big.path, str(out), oiv.OivOptions(batch_size=4096))
    assert (result.inodes, result.written, result.orphans) == (BIG_INODES, BIG_INODES, 0)
    lines = read(out).splitlines()
    assert len(lines) == BIG_INODES + 1
    per_dir = -(-big.files // big.dirs)
    for j in (0, 1, 4095, 4096, 77_777, big.files - 1):
        fields = lines[1 + big.dirs + j].split("\t")
        length = big.lengths[j]
        assert fields[0] == f"{expected_dir_path(j // per_dir)}/part-{j:06d}".replace("//", "/")
        assert fields[5:7] == [str(math.ceil(length / BLOCK_SIZE)), str(length)]
    assert lines[1 + big.dirs - 1].split("\t")[0] == expected_dir_path(big.dirs - 1)


def test_big_image_memory_does_not_grow_with_the_inodes(big, tmp_path):
    """Python's peak allocation stays near one batch: the 14 MB of output never sit in memory,
    and neither do the 117,600 file rows (only the 2,400 directories are indexed)."""
    out = tmp_path / "out.tsv"
    tracemalloc.start()
    try:
        oiv.run(big.path, str(out), oiv.OivOptions(batch_size=4096))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = out.stat().st_size
    assert size > 12_000_000
    assert peak < 8_000_000, f"peak {peak:,} bytes for {size:,} bytes of output"


# ------------------------------------------------------------------------- FileDistribution

def hadoop_histogram(lengths, step, max_size) -> dict[int, int]:
    """FileDistributionCalculator's rule, written out plainly."""
    last, counts = max_size // step, {}
    for length in lengths:
        bucket = last if length > max_size else min(-(-length // step), last)
        counts[bucket * step] = counts.get(bucket * step, 0) + 1
    return counts


@pytest.mark.parametrize("step, max_size", [(None, None), (1 << 20, 1 << 30), (1000, 999_999)])
def test_file_distribution_counts_as_hadoop_does(big, tmp_path, nnlite, step, max_size):
    args = [] if step is None else ["--step", step, "--max", max_size]
    out = tmp_path / "dist.txt"
    result = nnlite("oiv", "-i", big.path, "-o", out, "-p", "FileDistribution", *args)
    assert result.exit_code == 0, result.output
    lines = read(out).splitlines()
    assert lines[:2] == [f"Processed {BIG_INODES} inodes.", "Size\tNumFiles"]
    table = {int(a): int(b) for a, b in (line.split("\t") for line in lines[2:-5])}
    expected = hadoop_histogram(big.lengths, step or DEFAULT_STEP, max_size or DEFAULT_MAX)
    assert table == expected
    assert lines[-5:] == [
        f"totalFiles = {big.files}", f"totalDirectories = {big.dirs}",
        f"totalBlocks = {sum(-(-n // BLOCK_SIZE) for n in big.lengths)}",
        f"totalSpace = {3 * sum(big.lengths)}", f"maxFileSize = {max(big.lengths)}"]


def test_file_distribution_plots_a_png(small, tmp_path, nnlite):
    pytest.importorskip("matplotlib")
    png = tmp_path / "sizes.png"
    result = nnlite("oiv", "-i", small, "-o", tmp_path / "d.txt", "-p", "FileDistribution",
                    "--plot", png)
    assert result.exit_code == 0, result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_fails_before_the_scan(small, tmp_path, nnlite, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    result = nnlite("oiv", "-i", small, "-o", tmp_path / "d.txt", "-p", "FileDistribution",
                    "--plot", tmp_path / "sizes.png")
    assert result.exit_code == 1
    assert "--plot needs matplotlib" in result.stderr
    assert not exists(tmp_path / "d.txt")


def test_distribution_labels_and_units():
    dist = FileDistribution(step=2 << 20, max_size=8 << 20,
                            counts={0: 1, 1: 2, 4: 3})
    assert dist.rows() == [(0, 1), (2 << 20, 2), (8 << 20, 3)]
    assert dist.labels() == ["0", "<= 2 MiB", "> 6 MiB"]
    assert [human(n) for n in (0, 1023, 1536, 128 << 30)] == ["0 B", "1023 B", "1.5 KiB",
                                                             "128 GiB"]


def test_delegation_keys_and_tokens_show_without_the_secrets(tmp_path, nnlite):
    tree = new_ns().tree
    secret = b"\x5a" * 64
    ident = DelegationTokenIdentifier("alice@EXAMPLE.COM", "yarn", "", TS, TS + 7, 1, 1)
    tree.apply(edits.UpdateMasterKeyOp(1, TS + 9, secret))
    tree.apply(edits.GetDelegationTokenOp(ident.encode(), TS + 5))
    image = tmp_path / "fsimage"
    columns.save(tree, str(image), 99, 2)
    result = nnlite("oiv", "-i", image, "-o", tmp_path / "out.json", "-p", "JSON")
    assert result.exit_code == 0, result.output
    section = json.loads(read(tmp_path / "out.json"))["meta"]["secret_manager"]
    assert section["keys"] == [{"id": 1, "expiry_date": TS + 9}]
    assert section["tokens"][0]["owner"] == "alice@EXAMPLE.COM"
    assert section["tokens"][0]["expiry"] == TS + 5
    assert nnlite("oiv", "-i", image, "-o", tmp_path / "out.xml", "-p", "XML").exit_code == 0
    xml = read(tmp_path / "out.xml")
    element = ET.fromstring(xml).find("meta/secret_manager")
    assert element is not None and element.find("token").get("renewer") == "yarn"
    for text in (read(tmp_path / "out.json"), xml):
        assert secret.hex() not in text and "5a5a5a" not in text.lower()
