"""``nnlite dfs setfacl|getfacl`` and the ``+`` of ``dfs ls`` with CliRunner against one live
namenode: getfacl prints what FsShell's ``-getfacl`` prints (the same output is compared with
FsShell's own in test_dfs_fsshell_output.py), setfacl's flags and specs are checked as
SetfaclCommand checks them, and what the namenode refuses is one line. Users: tester
(supergroup), alice (staff), bob (no group); each test has its own ``base`` (tester's, 755).
"""

from __future__ import annotations

import json

import pytest

from tests.commands.helpers import dfs, failed, ok


def header(path: str, owner: str = "tester", group: str = "supergroup") -> list[str]:
    return [f"# file: {path}", f"# owner: {owner}", f"# group: {group}"]


def test_without_an_acl_getfacl_prints_the_permission_bits(server, base):
    assert ok(dfs(server, "getfacl", base)) == header(base) + [
        "user::rwx", "group::r-x", "other::r-x", ""]
    assert ok(dfs(server, "ls", "-d", base))[0].startswith("drwxr-xr-x   - ")


def test_setfacl_m_then_getfacl_and_the_plus_of_ls(server, tester, base):
    assert ok(dfs(server, "setfacl", "-m", "user:alice:r-x", base)) == []
    assert ok(dfs(server, "getfacl", base)) == header(base) + [
        "user::rwx", "user:alice:r-x", "group::r-x", "mask::r-x", "other::r-x", ""]
    assert ok(dfs(server, "ls", "-d", base))[0].startswith("drwxr-xr-x+  - tester ")
    tester.create(f"{base}/f", b"x")
    lines = ok(dfs(server, "ls", f"{base}/.."))
    assert any(line.startswith("drwxr-xr-x+ ") and line.endswith(base) for line in lines)


def test_getfacl_shows_what_the_mask_takes_away(server, base):
    ok(dfs(server, "setfacl", "-m", "user:alice:rwx,group::rwx", base))
    ok(dfs(server, "chmod", "740", base))                       # the mask is now r--
    assert ok(dfs(server, "getfacl", base))[3:] == [
        "user::rwx", "user:alice:rwx\t#effective:r--", "group::rwx\t#effective:r--",
        "mask::r--", "other::---", ""]


def test_default_entries_the_default_mask_and_the_sticky_flag(server, base):
    ok(dfs(server, "setfacl", "-m", "default:user:alice:rwx,default:mask::r-x", base))
    ok(dfs(server, "chmod", "1755", base))
    assert ok(dfs(server, "getfacl", base)) == header(base) + [
        "# flags: --t", "user::rwx", "group::r-x", "other::r-x", "default:user::rwx",
        "default:user:alice:rwx\t#effective:r-x", "default:group::r-x", "default:mask::r-x",
        "default:other::r-x", ""]
    ok(dfs(server, "chmod", "1754", base))
    assert ok(dfs(server, "getfacl", base))[3] == "# flags: --T"


def test_setfacl_x_set_k_b(server, base):
    ok(dfs(server, "setfacl", "--set", "user::rwx,group::r-x,other::---,user:bob:r--,"
           "default:user::rwx,default:group::---,default:other::---", base))
    assert ok(dfs(server, "getfacl", base))[3:] == [
        "user::rwx", "user:bob:r--", "group::r-x", "mask::r-x", "other::---",
        "default:user::rwx", "default:group::---", "default:other::---", ""]
    ok(dfs(server, "setfacl", "-x", "user:bob", base))
    assert "user:bob:r--" not in ok(dfs(server, "getfacl", base))
    ok(dfs(server, "setfacl", "-k", base))
    assert not [line for line in ok(dfs(server, "getfacl", base)) if "default" in line]
    ok(dfs(server, "setfacl", "-m", "user:alice:r--", base))
    ok(dfs(server, "setfacl", "-b", base))
    assert ok(dfs(server, "getfacl", base))[3:] == ["user::rwx", "group::r-x", "other::---", ""]
    assert ok(dfs(server, "ls", "-d", base))[0].startswith("drwxr-x---   - ")


def test_recursive_setfacl_gives_files_only_the_access_entries(server, tester, base):
    tester.mkdirs(f"{base}/d")
    tester.create(f"{base}/d/f", b"x")
    ok(dfs(server, "setfacl", "-R", "-m", "user:alice:r-x,default:user:alice:r-x", base))
    printed = ok(dfs(server, "getfacl", "-R", base))
    files = [line[len("# file: "):] for line in printed if line.startswith("# file: ")]
    assert files == [base, f"{base}/d", f"{base}/d/f"]
    assert printed[printed.index(f"# file: {base}/d/f"):] == header(f"{base}/d/f") + [
        "user::rw-", "user:alice:r-x", "group::r--", "mask::r-x", "other::r--", ""]
    assert printed.count("default:user:alice:r-x") == 2
    ok(dfs(server, "setfacl", "-R", "-m", "default:user:bob:r--", base))   # files: no call
    ok(dfs(server, "setfacl", "-R", "-b", base))
    assert "user:alice:r-x" not in ok(dfs(server, "getfacl", "-R", base))


def test_getfacl_json_is_the_acl_status(server, base):
    ok(dfs(server, "setfacl", "-m", "user:alice:r-x", base))
    doc = json.loads(*ok(dfs(server, "getfacl", "--json", base)))
    assert doc == {"path": base, "AclStatus": {
        "entries": ["user:alice:r-x", "group::r-x"], "group": "supergroup",
        "owner": "tester", "permission": "755", "stickyBit": False}}


@pytest.mark.parametrize("args, message", [
    (["-m", "user:alice"], "setfacl: Invalid <aclSpec> : user:alice"),
    (["-m", "nobody:alice:rwx"], "setfacl: Invalid type of acl in <aclSpec> :nobody:alice:rwx"),
    (["-m", "user:alice:rwz"], "setfacl: Invalid permission in <aclSpec> : user:alice:rwz"),
    (["-m", "user:alice:rwx:more"], "setfacl: Invalid <aclSpec> : user:alice:rwx:more"),
    (["-x", "user:alice:rwx"], "setfacl: Invalid <aclSpec> : user:alice:rwx"),
    (["-m", ","], "setfacl: Missing <acl_spec> entry"),
    (["-m", "user:alice:rwx", "-b"], "setfacl: Specified flags contains both remove and "
                                     "modify flags"),
    (["-b", "-k"], "setfacl: Specified flags contains both remove and modify flags"),
    (["--set", "user::rwx", "-x", "user:bob"], "setfacl: Specified flags contains both "
                                               "remove and modify flags"),
    ([], "setfacl: Expected one of -b, -k, -m, -x or --set options"),
])
def test_setfacl_refuses_a_bad_spec_or_flags_before_sending(server, tester, base, args,
                                                            message):
    assert failed(dfs(server, "setfacl", *args, base), "BadArgumentError", 2) == message
    assert "aclBit" not in tester.status(base)


def test_what_the_namenode_refuses(server, tester, base):
    tester.create(f"{base}/f", b"x")
    assert "the user, group and other entries are required" in failed(
        dfs(server, "setfacl", "--set", "user:alice:rwx", base), "AclError", 2)
    assert "only directories may have a default ACL" in failed(
        dfs(server, "setfacl", "-m", "default:user:alice:rwx", f"{base}/f"), "AclError", 2)
    assert failed(dfs(server, "setfacl", "-b", f"{base}/none"), "PathNotFoundError", 1) == \
        f"`{base}/none': No such file or directory"
    failed(dfs(server, "getfacl", f"{base}/none"), "PathNotFoundError", 1)
    assert "user=bob" in failed(dfs(server, "setfacl", "-m", "user:bob:rwx", base, user="bob"),
                                "AccessControlError", 1)
    tester.set_permission(base, 0o700)
    failed(dfs(server, "getfacl", f"{base}/f", user="bob"), "AccessControlError", 1)
    assert "Missing argument" in failed(dfs(server, "getfacl"), "UsageError", 2)
    assert "requires an argument" in failed(dfs(server, "setfacl", base, "-m"), "UsageError", 2)


def test_a_named_entry_lets_its_user_in(server, tester, base):
    tester.set_permission(base, 0o700)
    failed(dfs(server, "ls", base, user="alice"), "AccessControlError", 1)
    ok(dfs(server, "setfacl", "-m", "user:alice:r-x", base))
    assert ok(dfs(server, "ls", base, user="alice")) == []
