"""Snapshots through Hadoop's own client and FsShell (PySpark's jars) against a real
namenode, over webhdfs:// and over hdfs:// (each test once per scheme):
``-createSnapshot``/``-renameSnapshot``/``-deleteSnapshot`` print and do what they do on HDFS,
the diff report Hadoop's client builds reads as ``hdfs snapshotDiff`` prints it, the
snapshottable and snapshot listings parse, files read through ``.snapshot`` give what was
there, and what HDFS refuses raises HDFS's exception classes. Users as in tests/servers.py:
tester (supergroup), alice (staff)."""

from __future__ import annotations

import pytest

from tests.namenode.java import java_error, shell

pytestmark = pytest.mark.spark

SNAPSHOT_EXCEPTION = "org.apache.hadoop.hdfs.protocol.SnapshotException"


@pytest.fixture
def d(d, fs, java) -> str:
    """A fresh directory (tests/namenode/conftest.py's), snapshottable."""
    fs.allowSnapshot(java.path(d))
    return d


def write(fs, java, path: str, data: bytes) -> None:
    java.write(fs.create(java.path(path), True), data)


def test_fsshell_snapshot_commands(fs, java, d):
    code, printed = shell(java, "tester", "-createSnapshot", d, "s1")
    assert (code, printed) == (0, f"Created snapshot {d}/.snapshot/s1\n"), printed.err
    assert shell(java, "tester", "-renameSnapshot", d, "s1", "first")[0] == 0
    code, listed = shell(java, "tester", "-ls", f"{d}/.snapshot")
    assert code == 0 and listed.strip().splitlines()[-1].endswith(f"{d}/.snapshot/first"), \
        listed.err
    assert shell(java, "tester", "-deleteSnapshot", d, "first")[0] == 0
    assert shell(java, "tester", "-ls", f"{d}/.snapshot")[1].startswith("") is True
    assert list(fs.listStatus(java.path(f"{d}/.snapshot"))) == []
    assert fs.getFileStatus(java.path(d)).isSnapshotEnabled()


def test_a_snapshot_keeps_what_was_there(fs, java, d):
    write(fs, java, f"{d}/f", b"version one")
    fs.createSnapshot(java.path(d), "s1")
    write(fs, java, f"{d}/f", b"two")                       # overwritten
    fs.delete(java.path(f"{d}/f"), False)
    assert java.read(fs, f"{d}/.snapshot/s1/f") == b"version one"
    status = fs.getFileStatus(java.path(f"{d}/.snapshot/s1/f"))
    assert status.getLen() == 11
    assert not fs.exists(java.path(f"{d}/f"))
    assert java_error(fs.delete, java.path(f"{d}/.snapshot/s1/f"), False) == \
        "org.apache.hadoop.hdfs.protocol.SnapshotAccessControlException"


def test_the_diff_report_reads_as_hdfs_prints_it(fs, java, d):
    for sub in ("keep", "gone", "old"):
        assert fs.mkdirs(java.path(f"{d}/{sub}"))
    write(fs, java, f"{d}/keep/f", b"12345")
    fs.createSnapshot(java.path(d), "a")
    fs.delete(java.path(f"{d}/gone"), True)
    assert fs.rename(java.path(f"{d}/old"), java.path(f"{d}/new"))
    assert fs.mkdirs(java.path(f"{d}/made"))
    fs.createSnapshot(java.path(d), "b")
    report = fs.getSnapshotDiffReport(java.path(d), "a", "b")
    lines = report.toString().strip().splitlines()
    assert lines[0] == f"Difference between snapshot a and snapshot b under directory {d}:"
    assert lines[1] == "M\t."
    assert sorted(lines[2:]) == sorted(["-\t./gone", "R\t./old -> ./new", "+\t./made"])
    current = fs.getSnapshotDiffReport(java.path(d), "b", "")
    assert current.toString().strip().splitlines() == [
        f"Difference between snapshot b and current directory under directory {d}:"]


def test_a_snapshot_keeps_a_renamed_file_under_its_old_name(fs, java, d):
    """Issue 22, item 7: after a rename, LISTSTATUS and LISTSTATUS_BATCH (listStatusIterator)
    of the snapshot's directory list the old name, which OPEN reads, the new name is not
    there, a change after the rename stays out, and the report has the rename."""
    assert fs.mkdirs(java.path(f"{d}/w"))
    write(fs, java, f"{d}/w/g", b"as it was")
    fs.createSnapshot(java.path(d), "s2")
    permission = fs.getFileStatus(java.path(f"{d}/w/g")).getPermission().toString()
    assert fs.rename(java.path(f"{d}/w/g"), java.path(f"{d}/w/g2"))
    fs.setPermission(java.path(f"{d}/w/g2"), java.permission("600"))
    held = f"{d}/.snapshot/s2/w"
    assert [s.getPath().getName() for s in fs.listStatus(java.path(held))] == ["g"]
    batch, names = fs.listStatusIterator(java.path(held)), []
    while batch.hasNext():
        names.append(batch.next().getPath().getName())
    assert names == ["g"]
    assert java.read(fs, f"{held}/g") == b"as it was"
    assert fs.getFileStatus(java.path(f"{held}/g")).getPermission().toString() == permission
    assert java_error(fs.getFileStatus, java.path(f"{held}/g2")) == \
        "java.io.FileNotFoundException"
    assert java_error(java.read, fs, f"{held}/g2") == "java.io.FileNotFoundException"
    lines = fs.getSnapshotDiffReport(java.path(d), "s2", "").toString().strip().splitlines()
    assert set(lines[1:]) - {"M\t."} == {"M\t./w", "R\t./w/g -> ./w/g2", "M\t./w/g"}


def test_listings_of_snapshottable_directories_and_snapshots(fs, java, d):
    fs.createSnapshot(java.path(d), "s1")
    fs.createSnapshot(java.path(d), "s2")
    dirs = {s.getFullPath().toString(): s for s in java.snapshottable_dirs(fs)}
    assert dirs[d].getSnapshotNumber() == 2 and dirs[d].getSnapshotQuota() == 65536
    snaps = fs.getSnapshotListing(java.path(d))
    assert [s.getDirStatus().getLocalName() for s in snaps] == ["s1", "s2"]
    assert snaps[0].getSnapshotID() < snaps[1].getSnapshotID()


def test_what_hdfs_refuses(fs, java, d):
    alice = java.open("alice")
    try:
        assert java_error(alice.allowSnapshot, java.path(d)) == \
            "org.apache.hadoop.security.AccessControlException"
        assert java_error(alice.createSnapshot, java.path(d), "x") == \
            "org.apache.hadoop.security.AccessControlException"
    finally:
        alice.close()
    fs.createSnapshot(java.path(d), "s1")
    assert java_error(fs.createSnapshot, java.path(d), "s1") == SNAPSHOT_EXCEPTION
    assert java_error(fs.delete, java.path(d), True) == SNAPSHOT_EXCEPTION
    assert java_error(fs.disallowSnapshot, java.path(d)) == SNAPSHOT_EXCEPTION
    assert java_error(fs.deleteSnapshot, java.path(d), "nope") == SNAPSHOT_EXCEPTION
    assert fs.mkdirs(java.path(f"{d}/sub"))
    assert java_error(fs.allowSnapshot, java.path(f"{d}/sub")) == SNAPSHOT_EXCEPTION
    fs.deleteSnapshot(java.path(d), "s1")
    fs.disallowSnapshot(java.path(d))
    assert fs.delete(java.path(d), True)


def test_du_and_count_leave_out_what_only_snapshots_keep(fs, java, d):
    """FsShell's -du -x and -count -x subtract the snapshot* fields of the ContentSummary
    Hadoop's client reads from GETCONTENTSUMMARY; without -x, what a snapshot keeps counts."""
    write(fs, java, f"{d}/keep", b"k" * 10)
    write(fs, java, f"{d}/gone", b"g" * 30)
    fs.createSnapshot(java.path(d), "s1")
    assert fs.delete(java.path(f"{d}/gone"), False)
    summary = fs.getContentSummary(java.path(d))
    assert (summary.getLength(), summary.getSnapshotLength(), summary.getFileCount(),
            summary.getSnapshotFileCount()) == (40, 30, 2, 1)
    du = {flags: shell(java, "tester", "-du", *flags, d) for flags in (("-s",), ("-s", "-x"))}
    assert [du[f][0] for f in du] == [0, 0], [du[f][1].err for f in du]
    assert du[("-s",)][1].split() == ["40", "120", d]           # replication 3
    assert du[("-s", "-x")][1].split() == ["10", "30", d]
    count = {flags: shell(java, "tester", "-count", *flags, d)[1].split()
             for flags in ((), ("-x",))}
    assert count[()] == ["1", "2", "40", d]
    assert count[("-x",)] == ["1", "1", "10", d]
