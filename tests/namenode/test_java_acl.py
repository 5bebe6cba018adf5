"""ACLs through Hadoop's own client and FsShell (PySpark's jars) against a real namenode, over
webhdfs:// and over hdfs:// (each test once per scheme):
``-setfacl``/``-getfacl``/``-ls`` print what they print on HDFS (FsShell builds its output
from the AclStatus entries, the FileStatus ``aclBit`` and the permission, so a wrong field
shows), the FileSystem ACL calls round-trip, the checker enforces the entries, new children
inherit a default ACL with the client's unmasked mode, and bad ACLs raise Hadoop's
AclException. Users as in tests/servers.py: tester (supergroup), alice (staff),
bob (no group)."""

from __future__ import annotations

import pytest

from tests.namenode.java import java_error, shell

pytestmark = pytest.mark.spark

ACE = "org.apache.hadoop.security.AccessControlException"


@pytest.fixture
def d(d, fs, java) -> str:
    """A fresh directory (tests/namenode/conftest.py's), 0750, owned by tester."""
    fs.setPermission(java.path(d), java.permission("750"))
    return d


def acl_spec(java, text: str):
    return java.jvm.org.apache.hadoop.fs.permission.AclEntry.parseAclSpec(text, True)


def entries(fs, java, path: str) -> list[str]:
    return [e.toStringStable() for e in fs.getAclStatus(java.path(path)).getEntries()]


def as_user(java, user: str):
    return java.open(user)


def test_setfacl_then_getfacl_prints_the_acl_as_on_hdfs(fs, java, d):
    assert shell(java, "tester", "-setfacl", "-m", "user:alice:r-x", d)[0] == 0
    group = fs.getFileStatus(java.path(d)).getGroup()
    code, printed = shell(java, "tester", "-getfacl", d)
    assert code == 0
    assert printed == (f"# file: {d}\n# owner: tester\n# group: {group}\n"
                       "user::rwx\nuser:alice:r-x\ngroup::r-x\nmask::r-x\nother::---\n\n")
    code, listed = shell(java, "tester", "-ls", "-d", d)
    assert code == 0 and listed.split()[0] == "drwxr-x---+"
    status = fs.getFileStatus(java.path(d))
    assert status.hasAcl() and status.getPermission().toString() == "rwxr-x---"


def test_getfacl_shows_what_the_mask_takes_away(fs, java, d):
    assert shell(java, "tester", "-setfacl", "-m", "user:alice:rwx", d)[0] == 0
    assert shell(java, "tester", "-chmod", "750", d)[0] == 0      # chmod sets the mask
    printed = shell(java, "tester", "-getfacl", d)[1]
    assert "user:alice:rwx\t#effective:r-x\n" in printed
    assert "mask::r-x\n" in printed


def test_default_entries_print_after_the_access_ones(java, d):
    assert shell(java, "tester", "-setfacl", "-m", "default:user:alice:rwx", d)[0] == 0
    printed = shell(java, "tester", "-getfacl", d)[1]
    assert printed.strip().splitlines()[3:] == [
        "user::rwx", "group::r-x", "other::---", "default:user::rwx",
        "default:user:alice:rwx", "default:group::r-x", "default:mask::rwx",
        "default:other::---"]


def test_the_checker_enforces_named_entries(fs, java, d):
    alice, bob = as_user(java, "alice"), as_user(java, "bob")
    try:
        assert java_error(alice.listStatus, java.path(d)) == ACE
        fs.modifyAclEntries(java.path(d), acl_spec(java, "user:alice:r-x"))
        assert len(alice.listStatus(java.path(d))) == 0
        assert java_error(bob.listStatus, java.path(d)) == ACE
        assert shell(java, "alice", "-test", "-r", d)[0] == 0
        assert shell(java, "alice", "-test", "-w", d)[0] == 1
    finally:
        alice.close()
        bob.close()


def test_each_setfacl_form_maps_to_its_operation(fs, java, d):
    assert shell(java, "tester", "-setfacl", "--set",
                 "user::rwx,user:alice:r--,group::r-x,other::---,default:user:bob:r-x", d)[0] == 0
    assert entries(fs, java, d) == [
        "user:alice:r--", "group::r-x", "default:user::rwx", "default:user:bob:r-x",
        "default:group::r-x", "default:mask::r-x", "default:other::---"]
    assert shell(java, "tester", "-setfacl", "-x", "user:alice", d)[0] == 0
    assert entries(fs, java, d)[:1] == ["group::r-x"]
    assert shell(java, "tester", "-setfacl", "-k", d)[0] == 0      # REMOVEDEFAULTACL
    assert entries(fs, java, d) == ["group::r-x"]
    assert shell(java, "tester", "-setfacl", "-b", d)[0] == 0      # REMOVEACL
    assert entries(fs, java, d) == []
    assert not fs.getFileStatus(java.path(d)).hasAcl()


def test_the_java_calls_round_trip(fs, java, d):
    p = java.path(d)
    fs.setAcl(p, acl_spec(java, "user::rwx,group::r-x,other::---,group:staff:rwx"))
    assert entries(fs, java, d) == ["group::r-x", "group:staff:rwx"]
    assert fs.getFileStatus(p).getPermission().toString() == "rwxrwx---"   # the mask
    fs.removeAclEntries(p, java.jvm.org.apache.hadoop.fs.permission.AclEntry.parseAclSpec(
        "group:staff", False))
    assert entries(fs, java, d) == ["group::r-x"]                   # the mask stays
    fs.removeAcl(p)
    status = fs.getAclStatus(p)
    assert status.getOwner() == "tester" and not status.isStickyBit()
    assert fs.getFileStatus(p).getPermission().toString() == "rwxr-x---"


def test_new_children_inherit_the_default_acl(fs, java, d):
    fs.modifyAclEntries(java.path(d), acl_spec(java, "user:alice:--x,default:user:alice:rwx"))
    assert fs.mkdirs(java.path(d + "/sub"))          # 777 under umask 022, both sent
    sub = fs.getFileStatus(java.path(d + "/sub"))
    assert sub.hasAcl() and sub.getPermission().toString() == "rwxrwx---"
    assert entries(fs, java, d + "/sub")[:2] == ["user:alice:rwx", "group::r-x"]
    out = fs.create(java.path(d + "/sub/f"), True)
    out.close()
    f = fs.getFileStatus(java.path(d + "/sub/f"))
    assert f.getPermission().toString() == "rw-rw----"
    assert entries(fs, java, d + "/sub/f") == ["user:alice:rwx", "group::r-x"]
    alice = as_user(java, "alice")
    try:
        assert fs.getFileStatus(java.path(d + "/sub/f")).getLen() == 0
        alice.append(java.path(d + "/sub/f")).close()           # rwx masked by rw-
    finally:
        alice.close()


def test_bad_acls_and_other_owners_get_hadoops_exceptions(fs, java, d):
    out = fs.create(java.path(d + "/f"), True)
    out.close()
    assert java_error(fs.modifyAclEntries, java.path(d + "/f"),
                      acl_spec(java, "default:user:alice:rwx")) == \
        "org.apache.hadoop.hdfs.protocol.AclException"
    assert java_error(fs.setAcl, java.path(d), acl_spec(java, "user::rwx,group::r-x")) == \
        "org.apache.hadoop.hdfs.protocol.AclException"
    alice = as_user(java, "alice")
    try:
        fs.setPermission(java.path(d), java.permission("755"))
        assert java_error(alice.modifyAclEntries, java.path(d),
                          acl_spec(java, "user:alice:rwx")) == ACE
    finally:
        alice.close()
    code, _ = shell(java, "tester", "-setfacl", "-m", "user:alice", d)
    assert code != 0
