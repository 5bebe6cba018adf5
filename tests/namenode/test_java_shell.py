"""Hadoop's FsShell prints the same over ``webhdfs://`` and over ``hdfs://``: on one namespace
(files, a file of another owner, an xattr, a snapshot), every command below exits with the
same code and prints the same lines on stdout and on stderr over both schemes, the
filesystem's URI aside. FsShell builds its output from the FileStatus, ContentSummary,
AclStatus, xattrs and the exceptions each client hands it (``Ls``, ``Count``, ``Stat``,
``Display``, ``AclCommands``, ``XAttrCommands``, ``Command.displayError``), so a field or an
exception class that one door answers differently shows here. What each command prints
against Hadoop's own reference is checked per scheme in test_java_acl, test_java_snapshot,
test_java_data and tests/commands/test_dfs_fsshell_output.py."""

from __future__ import annotations

import pytest

from tests.namenode.java import shell

pytestmark = pytest.mark.spark

COMMANDS = [
    # listings, sizes, counts, status
    ("-ls", "-R", "/p"), ("-ls", "-d", "/p"), ("-ls", "-h", "/p/a"), ("-ls", "-q", "/p"),
    ("-ls", "-C", "/p"), ("-ls", "-u", "-t", "/p/a"), ("-ls", "-S", "-r", "/p/a"),
    ("-ls", "-e", "/p/a"), ("-du", "/p"), ("-du", "-s", "-h", "/p"), ("-du", "-v", "-x", "/p"),
    ("-count", "-q", "-h", "/p"), ("-count", "-v", "-u", "/p"), ("-count", "-e", "/p"),
    ("-stat", "%b %F %g %n %o %r %u %y %Y %a %A", "/p/a/f"), ("-stat", "%F %r %o", "/p/a"),
    ("-getfattr", "-d", "-R", "/p"), ("-getfacl", "-R", "/p"), ("-find", "/p", "-name", "f"),
    ("-ls", "/p/.snapshot"), ("-ls", "/p/.snapshot/s0"), ("-test", "-z", "/p/a/f"),
    # contents
    ("-checksum", "/p/a/f"), ("-head", "/p/a/f"), ("-tail", "/p/a/f"), ("-text", "/p/a/f"),
    # changes that leave the namespace as it was
    ("-touch", "-m", "-t", "20200101:000000", "/p/a/f"), ("-chown", "bob", "/p/a/f"),
    ("-expunge",),
    # refusals: the exception each client hands FsShell
    ("-cat", "/p/missing"), ("-ls", "/nope"), ("-mkdir", "/p/a/f/x"), ("-rm", "/p/a"),
    ("-rmdir", "/p/a"), ("-mv", "/p/missing", "/p/x"), ("-cp", "/p/a/f", "/p/a/f"),
    ("-getfacl", "/p/missing"), ("-setfacl", "-m", "user:bob:rwx", "/p/missing"),
    ("-chmod", "-R", "700", "/p/missing"), ("-truncate", "1", "/p/a/b"),
    ("-concat", "/p/a/f", "/p/a/b"), ("-createSnapshot", "/p/a"),
    ("-deleteSnapshot", "/p", "nope"), ("-renameSnapshot", "/p", "nope", "x"),
]


@pytest.fixture(scope="module")
def java_block_size() -> int:
    return 1024


@pytest.fixture(scope="module")
def namespace(javas):
    web = javas["webhdfs"]
    fs = web.open("tester")
    try:
        assert fs.mkdirs(web.path("/p/a/b"))
        web.write(fs.create(web.path("/p/a/f"), False), b"x" * 3000)
        web.write(fs.create(web.path("/p/a/g"), False), b"y" * 10)
        fs.setXAttr(web.path("/p/a"), "user.k", b"v")
        fs.setOwner(web.path("/p/a/g"), "alice", "staff")
        fs.allowSnapshot(web.path("/p"))
        fs.createSnapshot(web.path("/p"), "s0")
    finally:
        fs.close()


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_fsshell_prints_the_same_over_both_schemes(javas, namespace, command):
    printed = {}
    for scheme, java in javas.items():
        code, out = shell(java, "tester", *command)
        printed[scheme] = (code, out.replace(java.uri, "<fs>"), out.err.replace(java.uri, "<fs>"))
    assert printed["hdfs"] == printed["webhdfs"]
