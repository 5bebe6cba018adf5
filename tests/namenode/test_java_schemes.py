"""What Hadoop's clients get over ``webhdfs://`` and over ``hdfs://`` is the same, the
filesystem's URI aside, on one namespace (files, a file of another owner, xattrs, an ACL, a
quota, a storage policy, set times, a snapshot that keeps a deleted directory):

- FsShell: every command below exits with the same code and prints the same lines on stdout
  and on stderr. FsShell builds its output from the FileStatus, ContentSummary, AclStatus,
  xattrs and the exceptions each client hands it (``Ls``, ``Count``, ``Stat``, ``Display``,
  ``AclCommands``, ``XAttrCommands``, ``Command.displayError``), so a field or an exception
  that one door answers differently shows here.
- The FileSystem calls: FileStatus (``toString`` names every field), listings,
  ContentSummary, QuotaUsage, AclStatus, xattrs, storage policies, block locations, server
  defaults, the snapshot diff report and the file checksum.

What each answer is against Hadoop's own reference is checked per scheme in test_java_client,
test_java_acl, test_java_snapshot, test_java_data and tests/commands/test_dfs_fsshell_output.py;
where the two clients' own code answers differently (a class name, a client-side message),
those modules say so."""

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
    fs, p = web.open("tester"), web.path
    try:
        for path in ("/p/a/b", "/q/a/b", "/q/c"):
            assert fs.mkdirs(p(path))
        for path, size in (("/p/a/f", 3000), ("/p/a/g", 10), ("/q/a/f", 3000)):
            web.write(fs.create(p(path), False), b"x" * size)
        fs.setXAttr(p("/p/a"), "user.k", b"v")
        fs.setXAttr(p("/q/a"), "user.k", b"v")
        fs.setOwner(p("/p/a/g"), "alice", "staff")
        fs.setOwner(p("/q/a/f"), "alice", "staff")
        fs.modifyAclEntries(p("/q/a/b"), web.jvm.org.apache.hadoop.fs.permission.AclEntry
                            .parseAclSpec("user:bob:rwx,default:user:bob:r-x", True))
        fs.setQuota(p("/q/a"), 100, 1 << 30)
        fs.setStoragePolicy(p("/q/a"), "COLD")
        fs.setTimes(p("/q/a/f"), 1_600_000_000_000, 1_600_000_000_001)
        for root in ("/p", "/q"):
            fs.allowSnapshot(p(root))
            fs.createSnapshot(p(root), "s0")
        assert fs.delete(p("/q/a/b"), True)
    finally:
        fs.close()


# FileSystem calls on a path, each answer as text (the URI replaced by <fs>)
PATH_CALLS = {
    "getFileStatus": lambda fs, p: fs.getFileStatus(p).toString(),
    "listStatus": lambda fs, p: [s.toString() for s in fs.listStatus(p)],
    "getContentSummary": lambda fs, p: fs.getContentSummary(p).toString(True, True),
    "getQuotaUsage": lambda fs, p: fs.getQuotaUsage(p).toString(True),
    "getAclStatus": lambda fs, p: fs.getAclStatus(p).toString(),
    "getXAttrs": lambda fs, p: sorted((k, bytes(v)) for k, v in fs.getXAttrs(p).items()),
    "getStoragePolicy": lambda fs, p: fs.getStoragePolicy(p).toString(),
}
PATHS = ("/", "/q", "/q/a", "/q/a/f", "/q/c", "/q/.snapshot", "/q/.snapshot/s0",
         "/q/.snapshot/s0/a/b")
# FileSystem calls of their own
CALLS = {
    "getFileBlockLocations": lambda fs, p: [
        b.toString() for b in fs.getFileBlockLocations(p("/q/a/f"), 0, 3000)],
    "getServerDefaults": lambda fs, p: (lambda d: (
        d.getBlockSize(), d.getBytesPerChecksum(), d.getWritePacketSize(), d.getReplication(),
        d.getFileBufferSize(), d.getEncryptDataTransfer(), d.getTrashInterval(),
        str(d.getChecksumType()), d.getKeyProviderUri(), d.getDefaultStoragePolicyId()))(
        fs.getServerDefaults(p("/"))),
    "getSnapshotDiffReport": lambda fs, p: fs.getSnapshotDiffReport(p("/q"), "s0", "")
    .toString(),
    "getSnapshotListing": lambda fs, p: [
        (s.getSnapshotID(), s.getDirStatus().toString()) for s in fs.getSnapshotListing(p("/q"))],
    "getFileChecksum": lambda fs, p: fs.getFileChecksum(p("/q/a/f")).toString(),
    "getAllStoragePolicies": lambda fs, p: [x.toString() for x in fs.getAllStoragePolicies()],
    "getHomeDirectory": lambda fs, p: fs.getHomeDirectory().toString(),
    "getTrashRoot": lambda fs, p: fs.getTrashRoot(p("/q/a/f")).toString(),
}


def answers(javas, call) -> dict[str, str]:
    """``call(fs, path)``'s answer over each scheme, as text with the URI replaced."""
    got = {}
    for scheme, java in javas.items():
        fs = java.open("tester")
        try:
            got[scheme] = str(call(fs, java.path)).replace(java.uri, "<fs>")
        finally:
            fs.close()
    return got


@pytest.mark.parametrize("name", PATH_CALLS)
@pytest.mark.parametrize("path", PATHS)
def test_the_answers_on_a_path_are_the_same_over_both_schemes(javas, namespace, name, path):
    got = answers(javas, lambda fs, p: PATH_CALLS[name](fs, p(path)))
    assert got["hdfs"] == got["webhdfs"]


@pytest.mark.parametrize("name", CALLS)
def test_the_answers_are_the_same_over_both_schemes(javas, namespace, name):
    got = answers(javas, CALLS[name])
    assert got["hdfs"] == got["webhdfs"]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_fsshell_prints_the_same_over_both_schemes(javas, namespace, command):
    printed = {}
    for scheme, java in javas.items():
        code, out = shell(java, "tester", *command)
        printed[scheme] = (code, out.replace(java.uri, "<fs>"), out.err.replace(java.uri, "<fs>"))
    assert printed["hdfs"] == printed["webhdfs"]
