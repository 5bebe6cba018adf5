"""nnlite's ``dfs getfacl``, ``dfs ls``, ``dfs snapshotDiff`` and ``dfs lsSnapshottableDir``
print what Hadoop's own code prints on the same namespace: FsShell's ``-getfacl`` and ``-ls``,
SnapshotDiffReport.toString as ``hdfs snapshotDiff`` prints it, SnapshottableDirectoryStatus.print
as ``hdfs lsSnapshottableDir`` does (PySpark's Hadoop jars, tests/namenode/java.py), with
Hadoop's client on the namenode over webhdfs:// and over hdfs://."""

from __future__ import annotations

import pytest

from tests.commands.helpers import dfs, ok
from tests.namenode.java import SCHEMES, Java, shell

pytestmark = pytest.mark.spark


def printed(result) -> str:
    return "".join(line + "\n" for line in ok(result))


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_output_is_hadoops(spark, server, tester, base, scheme):
    java = Java(spark, server, scheme)
    tester.mkdirs(f"{base}/d")
    tester.create(f"{base}/d/f", b"x")
    ok(dfs(server, "setfacl", "-R", "-m", "user:alice:rwx,default:group:staff:r-x", base))
    ok(dfs(server, "setfacl", "-m", "default:mask::r--", f"{base}/d"))
    ok(dfs(server, "chmod", "1750", base))
    code, getfacl = shell(java, "tester", "-getfacl", "-R", base)
    assert code == 0, getfacl.err
    assert printed(dfs(server, "getfacl", "-R", base)) == getfacl
    code, listed = shell(java, "tester", "-ls", base)
    assert code == 0, listed.err
    assert printed(dfs(server, "ls", base)) == listed

    tester.allow_snapshot(base)
    tester.create_snapshot(base, "a")
    tester.delete(f"{base}/d/f")
    tester.rename(f"{base}/d", f"{base}/e")
    tester.mkdirs(f"{base}/made")
    tester.create_snapshot(base, "b")
    fs = java.open("tester")
    try:
        for older, newer in (("a", "b"), ("b", "a"), ("a", "")):
            report = fs.getSnapshotDiffReport(java.path(base), older, newer)
            assert printed(dfs(server, "snapshotDiff", base, older, newer or ".")) == \
                report.toString() + "\n"                 # SnapshotDiff's println
        out = java.jvm.java.io.ByteArrayOutputStream()
        java.jvm.org.apache.hadoop.hdfs.protocol.SnapshottableDirectoryStatus.print(
            java.snapshottable_dirs(fs), java.jvm.java.io.PrintStream(out, True))
        assert printed(dfs(server, "lsSnapshottableDir")) == out.toString()
    finally:
        fs.close()
