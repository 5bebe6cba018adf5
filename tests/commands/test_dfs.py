"""``nnlite dfs ...`` with CliRunner against one live namenode per module.

Files come from the seed (written offline before the namenode starts, tests/servers.py), so
only ``touchz`` depends on WebHDFS CREATE; a test that changes a file has its own.
Directories are made per test under ``/t/<test name>``. Users: "tester" is a superuser,
"bob" a plain user.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from nnlite.commands import dfs as cli_dfs
from tests.client.fake import STATUS, UNKNOWN_CREATE, FakeNamenode, remote_exception, reply
from tests.commands.helpers import dfs, failed, ok
from tests.servers import closed_port

SEED = {
    "/seed/a.txt": 1536,
    "/seed/empty": 0,
    "/seed/sub/b.bin": 3 << 20,
    "/work/rm/f": 10,
    "/work/mv/f": 10,
    "/work/mv/g": 20,
    "/work/setrep/f": 100,
    "/work/setrep/d/g": 200,
    "/work/touchz/full": 5,
    "/work/chmod/f": 1,
}
DATE = r"\d{4}-\d\d-\d\d \d\d:\d\d"


@pytest.fixture(scope="module")
def server(start_module_namenode):
    return start_module_namenode(files=SEED)


def local_minute(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000))


# ------------------------------------------------------------------------------------ ls

def test_ls_directory(server, tester):
    lines = ok(dfs(server, "ls", "/seed"))
    when = local_minute(tester.status("/seed/a.txt")["modificationTime"])
    sub = local_minute(tester.status("/seed/sub")["modificationTime"])
    assert lines == [
        "Found 3 items",
        f"-rw-r--r--   1 tester supergroup       1536 {when} /seed/a.txt",
        f"-rw-r--r--   1 tester supergroup          0 {when} /seed/empty",
        f"drwxr-xr-x   - tester supergroup          0 {sub} /seed/sub",
    ]


def test_ls_file_directory_flag_and_recursion(server):
    assert re.fullmatch(rf"-rw-r--r--   1 tester supergroup       1536 {DATE} /seed/a\.txt",
                        *ok(dfs(server, "ls", "/seed/a.txt")))
    assert re.fullmatch(rf"drwxr-xr-x   - tester supergroup          0 {DATE} /seed",
                        *ok(dfs(server, "ls", "-d", "/seed")))
    recursive = [line.rsplit(" ", 1)[1] for line in ok(dfs(server, "ls", "-R", "/seed"))]
    assert recursive == ["/seed/a.txt", "/seed/empty", "/seed/sub", "/seed/sub/b.bin"]


def test_ls_widens_columns_and_human_sizes(server):
    lines = ok(dfs(server, "ls", "-R", "-h", "/seed"))
    assert lines[0].startswith("-rw-r--r--   1 tester supergroup      1.5 K ")
    assert " 3 M " in lines[-1]
    wide = ok(dfs(server, "ls", "/seed/sub"))[1]
    assert wide.startswith("-rw-r--r--   1 tester supergroup    3145728 ")


def test_ls_empty_directory_prints_nothing(server, base):
    assert ok(dfs(server, "ls", base)) == []


def test_ls_relative_path_is_under_the_home_directory(server, tester):
    tester.mkdirs("/user/tester/rel/inner")
    assert ok(dfs(server, "ls", "rel"))[1].endswith(" /user/tester/rel/inner")
    assert ok(dfs(server, "ls"))[1].endswith(" /user/tester/rel")


def test_ls_json_gives_the_file_statuses(server, tester):
    lines = ok(dfs(server, "ls", "--json", "/seed"))
    docs = [json.loads(line) for line in lines]
    assert [d["path"] for d in docs] == ["/seed/a.txt", "/seed/empty", "/seed/sub"]
    assert docs[0] == {**tester.status("/seed/a.txt"), "pathSuffix": "a.txt",
                       "path": "/seed/a.txt"}


def test_ls_missing_path(server):
    assert failed(dfs(server, "ls", "/no/such"), "PathNotFoundError", 1) == \
        "`/no/such': No such file or directory"


def test_ls_permission_denied(server, tester, base):
    tester.set_permission(base, 0o700)
    message = failed(dfs(server, "ls", base, user="bob"), "AccessControlError", 1)
    assert "user=bob" in message and base in message


def test_unreachable_namenode(server):
    url = f"http://127.0.0.1:{closed_port()}"
    message = failed(dfs(server, "ls", "--namenode", url, "/"),
                     "NamenodeUnreachableError", 3)
    assert url in message and "refused" in message
    failed(dfs(None, "mkdir", "--namenode", url, "/x"), "NamenodeUnreachableError", 3)


def test_bad_namenode_url_is_a_usage_error(server):
    failed(dfs(server, "ls", "--namenode", "ftp://host/", "/"), "BadArgumentError", 2)


def test_usage_mistakes_are_one_line(server):
    assert "Missing argument" in failed(dfs(server, "mkdir"), "UsageError", 2)
    assert "No such option" in failed(dfs(server, "ls", "--bogus"), "UsageError", 2)
    assert "No such command" in failed(dfs(server, "frobnicate"), "UsageError", 2)


def test_an_unexpected_failure_is_one_line_not_a_traceback(server, monkeypatch):
    from nnlite.client.webhdfs import WebHdfsClient as Client
    monkeypatch.setattr(Client, "list", lambda self, path: [{"no": "pathSuffix"}])
    message = failed(dfs(server, "ls", "/seed"), "InternalError", 1)
    assert message.startswith("KeyError: 'pathSuffix'")


def test_user_and_namenode_defaults(server):
    import getpass
    assert failed(dfs(server, "ls", "rel/x", user="eve"), "PathNotFoundError", 1) == \
        "`/user/eve/rel/x': No such file or directory"          # HADOOP_USER_NAME
    assert failed(dfs(server, "ls", "rel/x", user=None), "PathNotFoundError", 1) == \
        f"`/user/{getpass.getuser()}/rel/x': No such file or directory"   # the OS user
    option = next(p for p in cli_dfs.dfs_ls.params if p.name == "namenode_url")
    assert (option.envvar, option.default) == ("NNLITE_NAMENODE", "http://127.0.0.1:9870")


# ------------------------------------------------------------------------------------ stat

def test_stat_default_format_is_utc_modification_time(server, tester):
    mtime = tester.status("/seed/a.txt")["modificationTime"]
    expected = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(mtime / 1000))
    assert ok(dfs(server, "stat", "/seed/a.txt")) == [expected]


def test_stat_format_letters(server, tester):
    st = tester.status("/seed/a.txt")
    fmt = "%n|%b|%o|%r|%u|%g|%Y|%X|%F|%a|%A|%%|%q"
    assert ok(dfs(server, "stat", fmt, "/seed/a.txt", "/seed")) == [
        f"a.txt|1536|134217728|1|tester|supergroup|{st['modificationTime']}|"
        f"{st['accessTime']}|regular file|644|rw-r--r--|%|q",
        f"seed|0|0|0|tester|supergroup|{tester.status('/seed')['modificationTime']}|0|"
        "directory|755|rwxr-xr-x|%|q",
    ]


def test_stat_json_and_missing(server):
    doc = json.loads(*ok(dfs(server, "stat", "--json", "/seed/empty")))
    assert (doc["path"], doc["type"], doc["length"]) == ("/seed/empty", "FILE", 0)
    failed(dfs(server, "stat", "%n", "/seed/none"), "PathNotFoundError", 1)
    failed(dfs(server, "stat", "%n"), "BadArgumentError", 2)


# --------------------------------------------------------------------------------- du, count

def test_du_lists_each_child(server):
    assert ok(dfs(server, "du", "/seed")) == [
        "1536     1536     /seed/a.txt",
        "0        0        /seed/empty",
        "3145728  3145728  /seed/sub",
    ]


def test_du_summary_human_with_header(server):
    assert ok(dfs(server, "du", "-s", "-h", "-v", "/seed")) == [
        "SIZE   DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS  FULL_PATH_NAME",
        "3.0 M  3.0 M                                  /seed",
    ]


def test_du_json_and_missing(server):
    doc = json.loads(*ok(dfs(server, "du", "-s", "--json", "/seed")))
    assert (doc["path"], doc["length"], doc["fileCount"]) == ("/seed", 1536 + (3 << 20), 3)
    failed(dfs(server, "du", "/seed/none"), "PathNotFoundError", 1)


def test_count(server):
    assert ok(dfs(server, "count", "/seed", "/seed/a.txt")) == [
        "           2            3            3147264 /seed",
        "           0            1               1536 /seed/a.txt",
    ]


def test_count_quota_with_header(server, tester, base):
    tester.set_quota(base, 10, 1 << 20)
    assert ok(dfs(server, "count", "-q", "-v", base)) == [
        "       QUOTA       REM_QUOTA     SPACE_QUOTA REM_SPACE_QUOTA "
        "   DIR_COUNT   FILE_COUNT       CONTENT_SIZE PATHNAME",
        f"          10               9         1048576         1048576 "
        f"           1            0                  0 {base}",
    ]
    assert ok(dfs(server, "count", "-q", "-h", "/seed"))[0].startswith(
        "        none             inf            none             inf ")


def test_count_json_and_missing(server):
    doc = json.loads(*ok(dfs(server, "count", "--json", "/seed")))
    assert (doc["directoryCount"], doc["fileCount"], doc["path"]) == (2, 3, "/seed")
    failed(dfs(server, "count", "/seed/none"), "PathNotFoundError", 1)


def test_du_and_count_leave_out_what_only_snapshots_keep_with_x(server, tester, base):
    """As FsShell's -du -x and -count -x: the ContentSummary less its snapshot* fields."""
    tester.create(base + "/keep", b"k" * 10)
    tester.create(base + "/gone", b"g" * 30)
    tester.allow_snapshot(base)
    tester.create_snapshot(base, "s1")
    assert tester.delete(base + "/gone")
    try:
        assert ok(dfs(server, "du", "-s", base)) == [f"40  40  {base}"]
        assert ok(dfs(server, "du", "-s", "-x", base)) == [f"10  10  {base}"]
        assert ok(dfs(server, "count", base))[0].split() == ["1", "2", "40", base]
        assert ok(dfs(server, "count", "-x", base))[0].split() == ["1", "1", "10", base]
    finally:
        tester.delete_snapshot(base, "s1")
        tester.disallow_snapshot(base)


# ------------------------------------------------------------------------------------ mkdir

def test_mkdir(server, tester, base):
    ok(dfs(server, "mkdir", f"{base}/a", f"{base}/b"))
    assert [s["pathSuffix"] for s in tester.list(base)] == ["a", "b"]
    assert "File exists" in failed(dfs(server, "mkdir", f"{base}/a"),
                                   "FileAlreadyExistsError", 1)
    message = failed(dfs(server, "mkdir", f"{base}/x/y"), "PathNotFoundError", 1)
    assert f"the parent {base}/x does not exist" in message
    assert not tester.exists(f"{base}/x")


def test_mkdir_parents(server, tester, base):
    ok(dfs(server, "mkdir", "-p", f"{base}/x/y/z", f"{base}/x"))
    assert tester.status(f"{base}/x/y/z")["type"] == "DIRECTORY"
    failed(dfs(server, "mkdir", "-p", "/seed/a.txt/sub"), "ParentNotDirectoryError", 1)


def test_mkdir_permission_denied(server, base):
    message = failed(dfs(server, "mkdir", f"{base}/bobs", user="bob"), "AccessControlError", 1)
    assert "user=bob" in message


# ------------------------------------------------------------------------------------ rm

def test_rm_file_and_directory(server, tester, base):
    assert ok(dfs(server, "rm", "/work/rm/f")) == ["Deleted /work/rm/f"]
    assert not tester.exists("/work/rm/f")
    tester.mkdirs(f"{base}/d/e")
    message = failed(dfs(server, "rm", f"{base}/d"), "PathIsDirectoryError", 1)
    assert "Is a directory" in message and tester.exists(f"{base}/d/e")
    assert ok(dfs(server, "rm", "-r", f"{base}/d")) == [f"Deleted {base}/d"]
    assert not tester.exists(f"{base}/d")


def test_rm_missing(server, base):
    failed(dfs(server, "rm", f"{base}/none"), "PathNotFoundError", 1)
    assert ok(dfs(server, "rm", "-f", f"{base}/none")) == []


def test_rm_permission_denied(server, tester, base):
    tester.mkdirs(f"{base}/keep")
    failed(dfs(server, "rm", "-r", f"{base}/keep", user="bob"), "AccessControlError", 1)
    assert tester.exists(f"{base}/keep")


# ------------------------------------------------------------------------------------ mv

def test_mv_renames_and_moves_into_a_directory(server, tester, base):
    tester.mkdirs(f"{base}/a")
    tester.mkdirs(f"{base}/into")
    ok(dfs(server, "mv", f"{base}/a", f"{base}/b"))
    assert not tester.exists(f"{base}/a") and tester.exists(f"{base}/b")
    ok(dfs(server, "mv", f"{base}/b", "/work/mv/f", f"{base}/into"))
    assert sorted(s["pathSuffix"] for s in tester.list(f"{base}/into")) == ["b", "f"]
    assert tester.status(f"{base}/into/f")["length"] == 10


def test_mv_refusals(server, tester, base):
    tester.mkdirs(f"{base}/a/inner")
    failed(dfs(server, "mv", f"{base}/none", f"{base}/x"), "PathNotFoundError", 1)
    failed(dfs(server, "mv", "/work/mv/g", "/seed/a.txt"), "FileAlreadyExistsError", 1)
    failed(dfs(server, "mv", f"{base}/a", f"{base}/a/inner/x"), "BadArgumentError", 2)
    failed(dfs(server, "mv", f"{base}/a", f"{base}/no/parent"), "PathNotFoundError", 1)
    failed(dfs(server, "mv", f"{base}/a", "/work/mv/g", f"{base}/new"),
           "PathIsNotDirectoryError", 1)
    assert tester.exists(f"{base}/a/inner") and tester.exists("/work/mv/g")


def test_mv_permission_denied(server, tester, base):
    tester.mkdirs(f"{base}/a")
    failed(dfs(server, "mv", f"{base}/a", f"{base}/b", user="bob"), "AccessControlError", 1)


# ------------------------------------------------------------------------------------ chmod

def mode(tester, path: str) -> str:
    return tester.status(path)["permission"]


def test_chmod_octal_and_sticky(server, tester, base):
    ok(dfs(server, "chmod", "700", base))
    assert mode(tester, base) == "700"
    ok(dfs(server, "chmod", "1777", base))
    assert ok(dfs(server, "ls", "-d", base))[0].startswith("drwxrwxrwt ")


def test_chmod_symbolic_and_recursive(server, tester, base):
    tester.mkdirs(f"{base}/d/e")
    ok(dfs(server, "chmod", "-R", "go-rx,u=rwx", f"{base}/d"))
    assert (mode(tester, f"{base}/d"), mode(tester, f"{base}/d/e")) == ("700", "700")
    ok(dfs(server, "chmod", "a+X", "/work/chmod/f"))
    assert mode(tester, "/work/chmod/f") == "644"        # X: not for a file without x
    ok(dfs(server, "chmod", "--", "-w", "/work/chmod/f"))
    assert mode(tester, "/work/chmod/f") == "444"


def test_chmod_bad_mode_changes_nothing(server, tester, base):
    for bad in ("abc", "888", "u+q", "17777", "u+x,"):
        assert "invalid mode" in failed(dfs(server, "chmod", bad, base), "BadArgumentError", 2)
    assert mode(tester, base) == "755"


def test_chmod_missing_and_denied(server, base):
    failed(dfs(server, "chmod", "755", f"{base}/none"), "PathNotFoundError", 1)
    failed(dfs(server, "chmod", "777", base, user="bob"), "AccessControlError", 1)


# ------------------------------------------------------------------------------------ chown

def test_chown(server, tester, base):
    tester.mkdirs(f"{base}/d/e")
    ok(dfs(server, "chown", "-R", "alice:staff", f"{base}/d"))
    for path in (f"{base}/d", f"{base}/d/e"):
        st = tester.status(path)
        assert (st["owner"], st["group"]) == ("alice", "staff")
    ok(dfs(server, "chown", ":other", f"{base}/d"))
    st = tester.status(f"{base}/d")
    assert (st["owner"], st["group"]) == ("alice", "other")


def test_chown_refusals(server, base):
    failed(dfs(server, "chown", "a b", base), "BadArgumentError", 2)
    failed(dfs(server, "chown", ":", base), "BadArgumentError", 2)
    message = failed(dfs(server, "chown", "bob", base, user="bob"), "AccessControlError", 1)
    assert "Superuser" in message or "Permission denied" in message
    failed(dfs(server, "chown", "bob", f"{base}/none"), "PathNotFoundError", 1)


# ------------------------------------------------------------------------------------ setrep

def test_setrep_file_and_directory(server, tester):
    assert ok(dfs(server, "setrep", "3", "/work/setrep/f")) == [
        "Replication 3 set: /work/setrep/f"]
    assert ok(dfs(server, "setrep", "2", "/work/setrep")) == [
        "Replication 2 set: /work/setrep/d/g", "Replication 2 set: /work/setrep/f"]
    assert tester.status("/work/setrep/f")["replication"] == 2
    assert ok(dfs(server, "ls", "/work/setrep/f"))[0].startswith("-rw-r--r--   2 ")


def test_setrep_refusals(server, tester):
    failed(dfs(server, "setrep", "0", "/work/setrep/f"), "BadArgumentError", 2)
    assert "not a valid integer" in failed(dfs(server, "setrep", "x", "/work/setrep/f"),
                                           "UsageError", 2)
    assert "32767" in failed(dfs(server, "setrep", "40000", "/work/setrep/f"),
                             "IllegalArgumentError", 2)
    failed(dfs(server, "setrep", "2", "/work/setrep/none"), "PathNotFoundError", 1)
    failed(dfs(server, "setrep", "5", "/work/setrep/f", user="bob"), "AccessControlError", 1)
    assert tester.status("/work/setrep/f")["replication"] != 5


# ------------------------------------------------------------------------------------ touchz

def test_touchz(server, tester, base):
    """An empty file; a namenode without CREATE gets the clear one-line error (the error
    itself is pinned against a scripted namenode below)."""
    result = dfs(server, "touchz", f"{base}/new")
    if result.exit_code == 0:
        st = tester.status(f"{base}/new")
        assert (st["type"], st["length"]) == ("FILE", 0)
    else:
        message = failed(result, "UnknownOperationError", 1)
        assert message == (f"touchz needs file creation (WebHDFS CREATE), which the namenode "
                           f"at {server.url} does not support yet")


def test_touchz_refusals(server, base):
    failed(dfs(server, "touchz", base), "PathIsDirectoryError", 1)
    assert "Not a zero-length file" in failed(dfs(server, "touchz", "/work/touchz/full"),
                                              "FileAlreadyExistsError", 1)
    failed(dfs(server, "touchz", f"{base}/no/parent"), "PathNotFoundError", 1)


def test_touchz_on_an_older_namenode_is_one_clear_line():
    missing = remote_exception(404, "java.io.FileNotFoundException", "File does not exist: /f")
    fake = FakeNamenode([(missing, False), (reply(200, STATUS), False),
                         (UNKNOWN_CREATE, False)])
    try:
        message = failed(dfs(None, "touchz", "--namenode", fake.url, "/f"),
                         "UnknownOperationError", 1)
        assert message == (f"touchz needs file creation (WebHDFS CREATE), which the namenode "
                           f"at {fake.url} does not support yet")
    finally:
        fake.close()


# ------------------------------------------------------------------------------- xattrs

def test_setfattr_and_getfattr(server, tester, base):
    ok(dfs(server, "setfattr", "-n", "user.text", "-v", "hello", base))
    ok(dfs(server, "setfattr", "-n", "user.hex", "-v", "0x0aff", base))
    ok(dfs(server, "setfattr", "-n", "user.empty", base))
    assert ok(dfs(server, "getfattr", "-d", "-e", "hex", base)) == [
        f"# file: {base}", "user.text=0x68656c6c6f", "user.hex=0x0aff", "user.empty"]
    assert ok(dfs(server, "getfattr", "-n", "user.text", "-e", "base64", base)) == [
        f"# file: {base}", "user.text=0saGVsbG8="]
    doc = json.loads(*ok(dfs(server, "getfattr", "-n", "user.text", "--json", base)))
    assert doc == {"path": base, "XAttrs": [{"name": "user.text", "value": '"hello"'}]}
    ok(dfs(server, "setfattr", "-x", "user.text", base))
    assert 'user.text="hello"' not in ok(dfs(server, "getfattr", "-d", base))


def test_getfattr_recursive(server, tester, base):
    tester.mkdirs(f"{base}/d")
    tester.set_xattr(f"{base}/d", "user.k", "v")
    assert ok(dfs(server, "getfattr", "-R", "-d", base)) == [
        f"# file: {base}", f"# file: {base}/d", 'user.k="v"']


def test_xattr_refusals(server, tester, base):
    failed(dfs(server, "getfattr", base), "BadArgumentError", 2)
    failed(dfs(server, "getfattr", "-n", "user.a", "-d", base), "BadArgumentError", 2)
    assert base in failed(dfs(server, "getfattr", "-n", "user.none", base), "RemoteIOError", 1)
    failed(dfs(server, "setfattr", base), "BadArgumentError", 2)
    failed(dfs(server, "setfattr", "-x", "user.a", "-v", "1", base), "BadArgumentError", 2)
    failed(dfs(server, "setfattr", "-n", "nonamespace", "-v", "1", base),
           "IllegalArgumentError", 2)
    failed(dfs(server, "getfattr", "-d", f"{base}/none"), "PathNotFoundError", 1)
    tester.set_permission(base, 0o700)
    failed(dfs(server, "setfattr", "-n", "user.a", "-v", "1", base, user="bob"),
           "AccessControlError", 1)
    failed(dfs(server, "getfattr", "-d", base, user="bob"), "AccessControlError", 1)


def test_a_web_server_that_is_not_a_namenode_is_one_clear_line(tmp_path):
    """``--namenode`` pointed at an ordinary web server (Python's own, serving HTML): the user
    reads that it is not a namenode, in words and not the page's bytes, and exit 3."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):       # its log would land in the captured stderr
            pass
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        for args in (["ls", "/"], ["mkdir", "/x"]):
            message = failed(dfs(None, *args, "--namenode", url), "NotANamenodeError", 3)
            assert message.startswith(f"{url} is not a WebHDFS namenode") and "<" not in message
    finally:
        server.shutdown()
        server.server_close()
