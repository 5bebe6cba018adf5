"""Snapshots from the command line with CliRunner against one live namenode: ``dfsadmin
allowSnapshot|disallowSnapshot`` and ``dfs createSnapshot|renameSnapshot|deleteSnapshot``
print HDFS's messages, ``dfs lsSnapshottableDir`` and ``dfs snapshotDiff`` print what ``hdfs
lsSnapshottableDir`` and ``hdfs snapshotDiff`` print (compared with Hadoop's own classes in
test_dfs_fsshell_output.py), and what HDFS refuses is one line. Users: tester (supergroup), alice
(staff), bob (no group); each test has its own ``base``.
"""

from __future__ import annotations

import json
import re
import time

from tests.commands.helpers import dfs, dfsadmin, failed, ok


def local_minute(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000))


def test_allow_create_rename_delete_disallow(server, tester, base):
    assert ok(dfsadmin(server, "allowSnapshot", base)) == [
        f"Allowing snapshot on {base} succeeded"]
    assert ok(dfs(server, "createSnapshot", base, "s1")) == [
        f"Created snapshot {base}/.snapshot/s1"]
    [named] = ok(dfs(server, "createSnapshot", base))
    assert re.fullmatch(rf"Created snapshot {base}/\.snapshot/s\d{{8}}-\d{{6}}\.\d{{3}}", named)
    assert ok(dfs(server, "renameSnapshot", base, "s1", "first")) == []
    listed = [line.rsplit(" ", 1)[1] for line in ok(dfs(server, "ls", f"{base}/.snapshot"))[1:]]
    assert listed == [f"{base}/.snapshot/first", named.rsplit(" ", 1)[1]]
    assert ok(dfs(server, "deleteSnapshot", base, "first")) == []
    ok(dfs(server, "deleteSnapshot", base, named.rsplit("/", 1)[1]))
    assert ok(dfsadmin(server, "disallowSnapshot", base)) == [
        f"Disallowing snapshot on {base} succeeded"]
    assert "snapshotEnabled" not in tester.status(base)


def test_a_relative_directory_is_under_the_home_directory(server, tester):
    tester.mkdirs("/user/tester/snaps")
    assert ok(dfsadmin(server, "allowSnapshot", "snaps")) == [
        "Allowing snapshot on /user/tester/snaps succeeded"]
    assert ok(dfs(server, "createSnapshot", "snaps", "s")) == [
        "Created snapshot /user/tester/snaps/.snapshot/s"]


def test_ls_snapshottable_dir_prints_hdfs_columns(server, tester, base):
    """Only the directories the user owns (alice's two); columns as wide as their values."""
    for name in ("a", "b"):
        tester.mkdirs(f"{base}/{name}")
        tester.allow_snapshot(f"{base}/{name}")
        tester.set_owner(f"{base}/{name}", "alice", "staff")
    for i in range(10):
        tester.create_snapshot(f"{base}/b", f"s{i}")
    assert ok(dfs(server, "lsSnapshottableDir", user="bob")) == [""]
    when = {n: local_minute(tester.status(f"{base}/{n}")["modificationTime"]) for n in "ab"}
    assert ok(dfs(server, "lsSnapshottableDir", user="alice")) == [
        f"drwxr-xr-x 0 alice staff 0 {when['a']}  0 65536 {base}/a",
        f"drwxr-xr-x 0 alice staff 0 {when['b']} 10 65536 {base}/b",
    ]
    docs = [json.loads(line) for line in ok(dfs(server, "lsSnapshottableDir", "--json",
                                                user="alice"))]
    assert [(d["parentFullPath"], d["dirStatus"]["pathSuffix"], d["snapshotNumber"])
            for d in docs] == [(base, "a", 0), (base, "b", 10)]
    assert f"{base}/a" in "\n".join(ok(dfs(server, "lsSnapshottableDir")))   # superuser


def diffed(tester, base: str) -> None:
    """Snapshot a, then: gone deleted, old renamed to new, made created, snapshot b."""
    tester.allow_snapshot(base)
    for sub in ("keep", "gone", "old"):
        tester.mkdirs(f"{base}/{sub}")
    tester.create_snapshot(base, "a")
    tester.delete(f"{base}/gone", True)
    tester.rename(f"{base}/old", f"{base}/new")
    tester.mkdirs(f"{base}/made")
    tester.create_snapshot(base, "b")


def test_snapshot_diff_prints_the_hdfs_report(server, tester, base):
    diffed(tester, base)
    printed = ok(dfs(server, "snapshotDiff", base, "a", "b"))
    assert printed[:2] == [f"Difference between snapshot a and snapshot b under directory "
                           f"{base}:", "M\t."]
    assert sorted(printed[2:-1]) == ["+\t./made", "-\t./gone", "R\t./old -> ./new"]
    assert printed[-1] == ""
    assert ok(dfs(server, "snapshotDiff", base, ".snapshot/b", ".")) == [
        f"Difference between snapshot b and current directory under directory {base}:", ""]
    tester.mkdirs(f"{base}/later")
    assert ok(dfs(server, "snapshotDiff", base, ".", "/.snapshot/b")) == [
        f"Difference between current directory and snapshot b under directory {base}:",
        "M\t.", "-\t./later", ""]
    doc = json.loads(*ok(dfs(server, "snapshotDiff", "--json", base, "b", ".")))
    assert (doc["snapshotRoot"], doc["fromSnapshot"], doc["toSnapshot"]) == (base, "b", "")
    assert {"type": "CREATE", "sourcePath": "later"} in doc["diffList"]


def test_what_hdfs_refuses(server, tester, base):
    tester.create(f"{base}/f", b"x")
    assert "not a snapshottable directory" in failed(
        dfs(server, "createSnapshot", base, "s"), "SnapshotError", 1)
    assert failed(dfs(server, "createSnapshot", f"{base}/f"), "PathIsNotDirectoryError", 1) \
        == f"`{base}/f': Is not a directory"
    assert failed(dfs(server, "createSnapshot", f"{base}/none"), "PathNotFoundError", 1) == \
        f"`{base}/none': No such file or directory"
    assert "Superuser privilege is required" in failed(
        dfsadmin(server, "allowSnapshot", base, user="alice"), "AccessControlError", 1)
    ok(dfsadmin(server, "allowSnapshot", base))
    assert "user=bob" in failed(dfs(server, "createSnapshot", base, "s", user="bob"),
                                "AccessControlError", 1)
    ok(dfs(server, "createSnapshot", base, "s"))
    assert "already a snapshot with the same name" in failed(
        dfs(server, "createSnapshot", base, "s"), "SnapshotError", 1)
    assert "has snapshot(s)" in failed(dfsadmin(server, "disallowSnapshot", base),
                                       "SnapshotError", 1)
    assert "does not exist" in failed(dfs(server, "deleteSnapshot", base, "nope"),
                                      "SnapshotError", 1)
    failed(dfs(server, "renameSnapshot", base, "nope", "other"), "SnapshotError", 1)
    failed(dfs(server, "snapshotDiff", base, "s", "nope"), "SnapshotError", 1)
    failed(dfs(server, "rm", f"{base}/.snapshot/s/f"), "SnapshotAccessControlError", 1)


def test_usage_mistakes(server, base):
    assert "Missing argument" in failed(dfs(server, "createSnapshot"), "UsageError", 2)
    assert "Missing argument" in failed(dfs(server, "deleteSnapshot", base), "UsageError", 2)
    assert "Missing argument" in failed(dfs(server, "renameSnapshot", base, "a"),
                                        "UsageError", 2)
    assert "Missing argument" in failed(dfs(server, "snapshotDiff", base, "a"), "UsageError", 2)
    assert "unexpected extra argument" in failed(dfs(server, "lsSnapshottableDir", base),
                                                 "UsageError", 2)
    assert "Missing argument" in failed(dfsadmin(server, "allowSnapshot"), "UsageError", 2)
