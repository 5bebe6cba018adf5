"""``nnlite analyze`` on a generated image of 100,000 inodes: every figure the Spark job
reports is computed again here, independently, with pyarrow and plain Python (paths by walking
parent ids on the driver, which the job itself never does)."""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict

import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from nnlite import cli
from nnlite.analytics import analyze, report
from nnlite.catalog import layout
from nnlite.commands.support import EXIT_CORRUPT
from nnlite.formats.fsimage.layout import TYPE_DIRECTORY, TYPE_FILE
from nnlite.formats.fsimage.read import read_image
from nnlite.namenode.image.columns import load as load_image
from nnlite.namenode.image.columns import save as save_image
from nnlite.namenode.namespace.tree import Tree
from tests.analytics.imagegen import AS_OF_MS, generate

pytestmark = pytest.mark.spark

INODES = 100_000
TOP = 15
SMALL = 1 << 20


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    path = tmp_path_factory.mktemp("analytics") / "fsimage"
    generate(path, INODES)
    return path


@pytest.fixture(scope="module")
def result(image, spark):
    return analyze.analyze(image, spark=spark, top=TOP, small_bytes=SMALL)


class Expected:
    """The same figures from pyarrow rows and Python dicts."""

    def __init__(self, path):
        table, _ = read_image(path, expected_md5=None, columns=[
            "id", "parent_id", "name", "type", "owner", "replication", "length", "mtime",
            "atime", "client_name"])
        rows = table.to_pylist()
        self.dirs = {r["id"]: r for r in rows if r["type"] == TYPE_DIRECTORY}
        self.files = [r for r in rows if r["type"] == TYPE_FILE]
        self.paths: dict[int, str] = {}
        for inode_id in self.dirs:
            self.path(inode_id)

    def path(self, inode_id: int) -> str:
        if inode_id not in self.paths:
            row = self.dirs[inode_id]
            if row["parent_id"] == 0:
                self.paths[inode_id] = "/"
            else:
                parent = self.path(row["parent_id"])
                self.paths[inode_id] = parent.rstrip("/") + "/" + row["name"]
        return self.paths[inode_id]

    def ancestors(self, inode_id: int):
        while inode_id:
            yield inode_id
            inode_id = self.dirs[inode_id]["parent_id"]


def bucket(value: int, buckets) -> int:
    bounds = [lower for _, lower in buckets[1:]]
    return bisect.bisect_right(bounds, value)


@pytest.fixture(scope="module")
def expected(image):
    return Expected(image)


def rows(table, *columns):
    return [tuple(r[c] for c in columns) for r in table.to_pylist()]


# ------------------------------------------------------------------------------ paths

def test_directory_paths_are_rebuilt_by_spark(image, spark, expected):
    dirs = spark.read.parquet(str(image)).filter("type = 1").select("id", "parent_id", "name")
    got = analyze.dir_paths(dirs).toArrow()
    assert dict(zip(got["id"].to_pylist(), got["path"].to_pylist(), strict=True)) == expected.paths
    depth = {p: 0 if p == "/" else p.count("/") for p in expected.paths.values()}
    assert max(got["depth"].to_pylist()) == max(depth.values()) >= 5


# ------------------------------------------------------------------------------ figures

def test_totals(result, expected):
    files = expected.files
    t = result.totals
    assert t["files"] + t["dirs"] == INODES
    assert t["files"] == len(files) and t["dirs"] == len(expected.dirs)
    assert t["bytes"] == sum(f["length"] for f in files)
    assert t["raw_bytes"] == sum(f["length"] * f["replication"] for f in files)
    assert t["small_files"] == sum(f["length"] < SMALL for f in files)
    assert t["under_construction"] == sum(f["client_name"] is not None for f in files) > 0
    assert result.as_of_ms == AS_OF_MS


def test_size_distribution(result, expected):
    want = Counter(), Counter()
    for f in expected.files:
        b = bucket(f["length"], analyze.SIZE_BUCKETS)
        want[0][b] += 1
        want[1][b] += f["length"]
    got = result.tables["size_distribution"]
    assert got["label"].to_pylist() == [label for label, _ in analyze.SIZE_BUCKETS]
    assert rows(got, "files", "bytes") == [(want[0][i], want[1][i])
                                           for i in range(len(analyze.SIZE_BUCKETS))]


def test_small_files_per_directory(result, expected):
    per_dir = defaultdict(lambda: [0, 0, 0, 0])
    for f in expected.files:
        d = per_dir[expected.paths[f["parent_id"]]]
        d[2] += 1
        d[3] += f["length"]
        if f["length"] < SMALL:
            d[0] += 1
            d[1] += f["length"]
    ranked = sorted(((p, *v) for p, v in per_dir.items() if v[0]),
                    key=lambda r: (-r[1], r[0]))[:TOP]
    got = rows(result.tables["small_files_by_dir"], "path", "small_files", "small_bytes",
               "files", "bytes")
    assert got == ranked


def test_usage_per_owner(result, expected):
    want = defaultdict(lambda: [0, 0, 0, 0])
    for f in expected.files:
        w = want[f["owner"]]
        w[0] += 1
        w[2] += f["length"]
        w[3] += f["length"] * f["replication"]
    for d in expected.dirs.values():
        want[d["owner"]][1] += 1
    got = {r[0]: list(r[1:]) for r in rows(result.tables["usage_by_owner"], "owner", "files",
                                           "dirs", "bytes", "raw_bytes")}
    assert got == dict(want)
    assert result.tables["usage_by_owner"]["bytes"].to_pylist() == \
        sorted(result.tables["usage_by_owner"]["bytes"].to_pylist(), reverse=True)


def top_dir(path: str) -> str:
    return "/" if path == "/" else "/" + path.split("/")[1]


def test_usage_per_top_level_directory(result, expected):
    want = defaultdict(lambda: [0, 0, 0, 0, 0])
    for f in expected.files:
        w = want[top_dir(expected.paths[f["parent_id"]])]
        w[0] += 1
        w[2] += f["length"]
        w[3] += f["length"] * f["replication"]
        w[4] += f["length"] < SMALL
    for path in expected.paths.values():
        want[top_dir(path)][1] += path != "/"
    got = {r[0]: list(r[1:]) for r in rows(result.tables["usage_by_top_dir"], "top_dir",
                                           "files", "dirs", "bytes", "raw_bytes",
                                           "small_files")}
    assert got == dict(want)
    assert set(got) == {"/", "/user", "/data", "/tmp", "/spark", "/flink", "/warehouse"}


def test_replication_histogram(result, expected):
    want = defaultdict(lambda: [0, 0, 0])
    for f in expected.files:
        w = want[f["replication"]]
        w[0] += 1
        w[1] += f["length"]
        w[2] += f["length"] * f["replication"]
    got = rows(result.tables["replication"], "replication", "files", "bytes", "raw_bytes")
    assert got == [(k, *want[k]) for k in sorted(want)]


def test_untouched_age(result, expected):
    files, size = Counter(), Counter()
    for f in expected.files:
        b = bucket(AS_OF_MS - max(f["atime"], f["mtime"]), analyze.AGE_BUCKETS)
        files[b] += 1
        size[b] += f["length"]
    got = rows(result.tables["untouched_age"], "files", "bytes")
    assert got == [(files[i], size[i]) for i in range(len(analyze.AGE_BUCKETS))]
    assert all(got[i][0] for i in range(len(analyze.AGE_BUCKETS)))


def test_oldest_files(result, expected):
    ranked = sorted(expected.files, key=lambda f: (max(f["atime"], f["mtime"]), f["id"]))[:TOP]
    want = [(expected.paths[f["parent_id"]].rstrip("/") + "/" + f["name"], f["length"],
             max(f["atime"], f["mtime"])) for f in ranked]
    got = result.tables["oldest_files"]
    assert rows(got, "path", "length", "last_touched") == want
    assert got["age_days"].to_pylist()[0] == pytest.approx(
        (AS_OF_MS - want[0][2]) / analyze.DAY_MS)


def test_checkpoints_are_the_ones_the_catalog_lists(result, image):
    """The catalog's own discovery over the same image, loaded into a namespace, is the
    oracle: the same checkpoints, kinds and bytes as ``nnlite catalog ls /`` sees."""
    ns, _ = load_image(str(image), None)
    want = []
    for path, kind, node in layout.discover(ns.root, "/"):
        files, total, _, _ = layout.tree_usage(node)
        raw, stack = 0, [node]
        while stack:
            for child in stack.pop().children.values():
                if child.is_dir:
                    stack.append(child)
                else:
                    raw += child.length * child.replication
        want.append((path, kind, files, total, raw))
    want.sort(key=lambda r: (-r[3], r[0]))
    got = rows(result.tables["checkpoints"], "path", "kind", "files", "bytes",
               "raw_bytes")
    assert got == want
    kinds = Counter(r[1] for r in got)
    assert kinds == {"streaming": INODES // 20_000 + 2, "rdd": INODES // 20_000, "job": 2,
                     "dstream": 1, "flink": 1, "savepoint": 1}
    assert not any(p.startswith("/data") or "/nested" in p for p, *_ in got)
    assert result.totals["checkpoints"] == len(got)
    assert result.totals["checkpoint_bytes"] == sum(r[3] for r in got)


# ------------------------------------------------------------------------------ outputs

def test_report_files(result, tmp_path):
    written = report.write(result, tmp_path)
    assert len(written) == len(set(written))
    for name, table in result.tables.items():
        assert pq.read_table(tmp_path / f"{name}.parquet").equals(table)
        csv = pcsv.read_csv(tmp_path / f"{name}.csv")
        assert csv.num_rows == table.num_rows and csv.column_names == table.column_names
    page = (tmp_path / "report.html").read_text()
    assert page.count("data:image/png;base64,") == len(list((tmp_path / "charts").iterdir()))
    assert "http://" not in page and "https://" not in page and "<script" not in page
    for png in (tmp_path / "charts").iterdir():
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "/spark/streaming/query0" in page


def test_summary_text(result):
    text = report.summary(result)
    assert f"{INODES:,} inodes" in text
    for title in report.TITLES.values():
        assert title in text


def test_cli_reuses_the_active_session(spark, tmp_path):
    (tmp_path / "name" / "current").mkdir(parents=True)
    generate(tmp_path / "name" / "current" / "fsimage", 3_000)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli.main, ["analyze", str(tmp_path / "name"), "--top", "5",
                                           "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert report.TITLES["checkpoints"] in result.output
    assert (out / "report.html").exists()
    assert spark.range(3).count() == 3            # the shared session is still running


def test_an_image_of_the_root_alone(spark, tmp_path):
    save_image(Tree(mtime=AS_OF_MS), str(tmp_path / "fsimage"), 1, 0)
    result = analyze.analyze(tmp_path / "fsimage", spark=spark)
    assert result.totals["files"] == 0 and result.totals["dirs"] == 1
    assert result.tables["checkpoints"].num_rows == 0
    assert rows(result.tables["usage_by_top_dir"], "top_dir", "files", "dirs") == [("/", 0, 0)]
    report.write(result, tmp_path / "out")
    assert "nnlite fsimage report" in (tmp_path / "out" / "report.html").read_text()


def test_cli_refuses_a_damaged_image(tmp_path):
    bad = tmp_path / "fsimage"
    bad.write_bytes(b"PAR1 not really")
    result = CliRunner().invoke(cli.main, ["analyze", str(bad)])
    assert result.exit_code == EXIT_CORRUPT, result.output
