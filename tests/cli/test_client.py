"""The client package on its own: the error registry and exit codes, chmod modes, the
``hdfs dfs`` text layouts, path resolution, and ``WebHdfsClient`` against a live namenode
and against a scripted fake one (stale keep-alive connections, redirects, non-WebHDFS answers).
"""

from __future__ import annotations

import json
import socket
import threading
from datetime import timezone

import pytest

from nnlite.client import display, errors
from nnlite.client.modes import parse_mode
from nnlite.client.shell import FsShell, parse_owner, split_stat_args
from nnlite.client.webhdfs import WebHdfsClient
from nnlite.commands.support import exit_code
from tests.cli import closed_port, dfs, failed
from tests.namenode.http.helpers import start_namenode

# ------------------------------------------------------------------------------- errors


def test_every_registered_java_class_maps_back_to_its_class():
    for java_class, cls in errors.REGISTRY.items():
        error = errors.from_remote_exception({"javaClassName": java_class, "message": "m"},
                                        status=403)
        assert type(error) is cls and cls.JAVA_CLASS == java_class
        assert error.exception == java_class.rsplit(".", 1)[-1]
        assert isinstance(error, errors.ClientError)


def test_an_unknown_java_class_keeps_its_name_and_the_path_is_added():
    error = errors.from_remote_exception({"javaClassName": "org.example.OddException",
                                     "message": "odd"}, status=403, path="/p")
    assert type(error) is errors.RemoteError and error.exception == "OddException"
    assert str(error) == "odd (/p)"
    named = errors.from_remote_exception({"javaClassName": "java.io.FileNotFoundException",
                                     "message": "File /p does not exist"}, status=404, path="/p")
    assert str(named) == "File /p does not exist"


@pytest.mark.parametrize("error, code", [
    (errors.PathNotFoundError("x"), 1),
    (errors.AccessControlError("x"), 1),
    (errors.ImpersonationError("x"), 1),
    (errors.SafeModeError("x"), 1),
    (errors.UnknownOperationError("x"), 1),
    (errors.ProtocolError("x"), 1),
    (errors.NamenodeUnreachableError("x", url="http://h:1"), 3),
    (errors.BadArgumentError("x"), 2),
    (errors.IllegalArgumentError("x"), 2),
    (errors.InvalidPathError("x"), 2),
], ids=lambda v: type(v).__name__ if isinstance(v, Exception) else str(v))
def test_exit_codes_are_stable_per_kind(error, code):
    assert exit_code(error) == code


# ------------------------------------------------------------------------------- modes

@pytest.mark.parametrize("text, old, is_dir, new", [
    ("755", 0o000, False, 0o755),
    ("0644", 0o777, True, 0o644),
    ("1777", 0o755, True, 0o1777),
    ("7", 0o755, False, 0o007),
    ("u+x", 0o644, False, 0o744),
    ("go-w", 0o777, False, 0o755),
    ("a=r", 0o1777, True, 0o444),           # = with "a" clears the sticky bit too
    ("+x", 0o644, False, 0o755),
    ("u=rwx,g=rx,o=", 0o000, False, 0o750),
    ("a+X", 0o644, False, 0o644),           # X: a file without any x gains nothing
    ("a+X", 0o744, False, 0o755),
    ("a+X", 0o644, True, 0o755),
    ("+t", 0o777, True, 0o1777),
    ("o-t", 0o1777, True, 0o777),
    ("u+t", 0o777, True, 0o777),            # sticky only for o/a/nobody named
    ("ug+rw,o-rwx", 0o755, False, 0o770),
])
def test_parse_mode(text, old, is_dir, new):
    assert parse_mode(text).apply(old, is_dir) == new


@pytest.mark.parametrize("text", ["", "abc", "888", "17777", "u+q", "u+x,", "x+u", "755x",
                                  "u", "ug"])
def test_bad_modes(text):
    with pytest.raises(errors.BadArgumentError, match="invalid mode"):
        parse_mode(text)


# ------------------------------------------------------------------------------- format

@pytest.mark.parametrize("n, text", [
    (0, "0"), (1023, "1023"), (1024, "1 K"), (1536, "1.5 K"), (10 << 20, "10 M"),
    ((1 << 20) - 1, "1.0 M"), (3 << 30, "3 G"), (int(2.25 * (1 << 40)), "2.3 T"),
    (-2048, "-2 K"),
])
def test_human_sizes(n, text):
    assert display.size(n, human=True) == text
    assert display.size(n) == str(n)


def status(**kw) -> dict:
    base = {"type": "FILE", "permission": "644", "replication": 3, "owner": "alice",
            "group": "staff", "length": 1536, "modificationTime": 1_795_000_000_000,
            "accessTime": 1_794_000_000_000, "blockSize": 134217728, "pathSuffix": ""}
    return {**base, **kw}


def test_ls_layout():
    events = [display.Listed((status(), status(type="DIRECTORY", owner="hdfs-admin", length=0,
                                          replication=0, permission="1777")), True),
              display.Entry("/d/f", status()),
              display.Entry("/d/tmp", status(type="DIRECTORY", owner="hdfs-admin", length=0,
                                       replication=0, permission="1777")),
              display.Listed((status(length=12345678901, replication=12),), False),
              display.Entry("/big", status(length=12345678901, replication=12))]
    assert list(display.ls_lines(events, tz=timezone.utc)) == [
        "Found 2 items",
        "-rw-r--r--   3 alice      staff       1536 2026-11-18 11:06 /d/f",
        "drwxrwxrwt   - hdfs-admin staff          0 2026-11-18 11:06 /d/tmp",
        "-rw-r--r--  12 alice      staff 12345678901 2026-11-18 11:06 /big",
    ]


def test_stat_line():
    st = status()
    assert display.stat_line("%y", "/d/f", st) == "2026-11-18 11:06:40"
    assert display.stat_line("%n %b %o %r %u %g %Y %X %F %a %A %x", "/d/f", st) == (
        "f 1536 134217728 3 alice staff 1795000000000 1794000000000 regular file 644 "
        "rw-r--r-- 2026-11-06 21:20:00")
    assert display.stat_line("%F:%n:%%:%z:%", "/", status(type="DIRECTORY")) == "directory::%:z:"


def test_du_and_count_layouts():
    rows = [("/a", {"length": 5, "spaceConsumed": 15}),
            ("/bb", {"length": 123456, "spaceConsumed": 370368})]
    assert display.du_lines(rows) == ["5       15      /a", "123456  370368  /bb"]
    assert display.du_lines([]) == [] and display.du_lines([], header=True) == []
    summary = {"directoryCount": 3, "fileCount": 7, "length": 2048, "quota": 100,
               "spaceQuota": 4096, "spaceConsumed": 1024}
    assert display.count_line("/q", summary) == \
        "           3            7               2048 /q"
    assert display.count_line("/q", summary, quota=True, human=True) == (
        "         100              90             4 K             3 K "
        "           3            7                2 K /q")
    assert display.count_header(False) == "   DIR_COUNT   FILE_COUNT       CONTENT_SIZE PATHNAME"


def test_xattr_lines():
    assert list(display.xattr_lines("/p", [{"name": "user.a", "value": '"x"'},
                                     {"name": "user.b", "value": None}])) == [
        "# file: /p", 'user.a="x"', "user.b"]


# ------------------------------------------------------------------------------- shell args

class _User:
    user = "carol"


@pytest.mark.parametrize("path, absolute", [
    ("/a/b", "/a/b"), ("/a//b/", "/a/b"), ("/", "/"), ("x", "/user/carol/x"),
    (".", "/user/carol"), ("../dave/y", "/user/dave/y"), ("/a/./b/../c", "/a/c"),
    ("/..", "/"),
])
def test_resolve(path, absolute):
    assert FsShell(_User()).resolve(path) == absolute


def test_parse_owner_and_stat_args():
    assert parse_owner("alice") == ("alice", None)
    assert parse_owner("alice:staff") == ("alice", "staff")
    assert parse_owner(":staff") == (None, "staff")
    assert parse_owner("alice:") == ("alice", None)
    for bad in ("", ":", "a b", "a:b:c", "a;b"):
        with pytest.raises(errors.BadArgumentError):
            parse_owner(bad)
    assert split_stat_args(["/a"]) == ("%y", ["/a"])
    assert split_stat_args(["%n", "/a", "/b"]) == ("%n", ["/a", "/b"])
    with pytest.raises(errors.BadArgumentError):
        split_stat_args(["%n"])


# ------------------------------------------------------------------------------- live client

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    nn = start_namenode(tmp_path_factory, "-D", "dfs.ls.limit=2")
    try:
        yield nn
    finally:
        nn.stop()


@pytest.fixture
def client(server):
    with WebHdfsClient(server.url, "tester") as c:
        yield c


def test_listing_pages_through_batches(client):
    names = [f"c{i}" for i in range(5)]
    for name in names:
        assert client.mkdirs(f"/paged/{name}")
    assert [s["pathSuffix"] for s in client.list("/paged")] == names
    assert client.list("/paged/c0") == []


def test_one_kept_alive_connection(client):
    client.status("/")
    sock = client.connection._conn.sock
    client.list("/")
    client.content_summary("/")
    assert client.connection._conn.sock is sock


def test_paths_are_encoded(client):
    path = "/enc/a b/ü%3F?#x"
    assert client.mkdirs(path)
    assert client.status(path)["type"] == "DIRECTORY"
    assert [s["pathSuffix"] for s in client.list("/enc/a b")] == ["ü%3F?#x"]


def test_remote_exceptions_are_typed(server, client):
    with pytest.raises(errors.PathNotFoundError) as missing:
        client.status("/nowhere")
    assert (missing.value.status, missing.value.exception) == (404, "FileNotFoundException")
    client.mkdirs("/private", 0o700)
    with WebHdfsClient(server.url, "bob") as bob:
        with pytest.raises(errors.AccessControlError, match="user=bob"):
            bob.list("/private")
        with pytest.raises(errors.AccessControlError, match="Superuser"):
            bob.report()
    with pytest.raises(errors.IllegalArgumentError, match="replication"):
        client.set_replication("/private", 0)
    assert client.rename("/private", "/private/inside") is False


def test_create_makes_an_empty_file(client):
    client.create("/created")
    assert client.status("/created")["length"] == 0


def test_admin_calls(client):
    assert client.safe_mode("get") is False
    assert client.safe_mode("enter") is True
    try:
        assert client.save_namespace() == client.report()["lastCheckpointTxid"]
    finally:
        assert client.safe_mode("leave") is False
    assert client.roll_edits() > 0


def test_unreachable_and_bad_settings():
    url = f"http://127.0.0.1:{closed_port()}"
    with pytest.raises(errors.NamenodeUnreachableError, match="connection refused") as exc:
        WebHdfsClient(url, "tester").status("/")
    assert exc.value.url == url
    with pytest.raises(errors.BadArgumentError):
        WebHdfsClient("ftp://host/", "tester")
    with pytest.raises(errors.BadArgumentError):
        WebHdfsClient("http://host:notaport", "tester")
    with pytest.raises(errors.BadArgumentError, match="HADOOP_USER_NAME"):
        WebHdfsClient("http://127.0.0.1:9870", "")


# ------------------------------------------------------------------------------- fake server

def reply(status: int, body: bytes = b"", headers: str = "") -> bytes:
    return (f"HTTP/1.1 {status} X\r\nContent-Length: {len(body)}\r\n{headers}\r\n").encode() \
        + body


class FakeNamenode:
    """Answers each request with the next scripted ``(raw reply, close after it)``; a close
    is silent (no ``Connection: close``), as an idle timeout on the server side is."""

    def __init__(self, script: list[tuple[bytes, bool]]):
        self.script = list(script)
        self.requests: list[bytes] = []
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:             # closed: the test is over
                return
            self.connections += 1
            with conn:
                while self.script and self._answer(conn):
                    pass

    def _answer(self, conn) -> bool:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return False
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        while len(body) < length:
            body += conn.recv(65536)
        self.requests.append(head.split(b"\r\n")[0] + b" " + body)
        raw, close = self.script.pop(0)
        conn.sendall(raw)
        return not close

    def close(self) -> None:
        self.sock.close()


STATUS = b'{"FileStatus":{"type":"DIRECTORY","pathSuffix":""}}'


def test_a_connection_closed_while_idle_is_reopened_once():
    fake = FakeNamenode([(reply(200, STATUS), True), (reply(200, STATUS), False)])
    try:
        with WebHdfsClient(fake.url, "tester") as client:
            assert client.status("/a")["type"] == "DIRECTORY"
            assert client.status("/b")["type"] == "DIRECTORY"
        assert fake.connections == 2 and len(fake.requests) == 2
    finally:
        fake.close()


def test_create_follows_the_redirect_with_the_data():
    fake = FakeNamenode([])
    fake.script += [(reply(307, headers=f"Location: {fake.url}/data/f?token=1\r\n"), False),
                    (reply(201), False)]
    try:
        with WebHdfsClient(fake.url, "tester") as client:
            client.create("/f", b"hello", overwrite=True)
        first, second = fake.requests
        assert first.startswith(b"PUT /webhdfs/v1/f?op=CREATE&user.name=tester&overwrite=true ")
        assert second == b"PUT /data/f?token=1 HTTP/1.1 hello"
    finally:
        fake.close()


@pytest.mark.parametrize("raw, error, match", [
    (reply(200, b"<html>hi</html>"), errors.NotANamenodeError, "got HTTP 200 .no content type"),
    (reply(200, b"[1, 2]"), errors.ProtocolError, "expected a JSON object"),
    (reply(200, b'{"Other":{}}'), errors.ProtocolError, "missing FileStatus"),
    (reply(502, b"<html>bad gateway</html>"), errors.NotANamenodeError, "got HTTP 502"),
    (b"\x00\x01garbage\xff\r\n\r\n", errors.NamenodeUnreachableError, "does not speak HTTP"),
])
def test_answers_that_are_not_webhdfs(raw, error, match):
    """Not a namenode: said in words, never with the peer's raw bytes."""
    fake = FakeNamenode([(raw, False)])
    try:
        with WebHdfsClient(fake.url, "tester") as client:
            with pytest.raises(error, match=match) as caught:
                client.status("/a")
        assert "<html>" not in str(caught.value) and "garbage" not in str(caught.value)
    finally:
        fake.close()


def test_a_dropped_answer_on_a_fresh_connection_is_unreachable():
    fake = FakeNamenode([(b"", True)])
    try:
        with pytest.raises(errors.NamenodeUnreachableError, match="closed before an answer"):
            WebHdfsClient(fake.url, "tester").status("/a")
    finally:
        fake.close()


def remote_exception(status: int, java_class: str, message: str) -> bytes:
    body = json.dumps({"RemoteException": {"exception": java_class.rsplit(".", 1)[-1],
                                           "javaClassName": java_class, "message": message}})
    return reply(status, body.encode())


UNKNOWN_CREATE = remote_exception(
    400, "java.lang.IllegalArgumentException", 'Invalid value for webhdfs parameter "op": No '
    "enum constant org.apache.hadoop.hdfs.web.resources.PutOpParam.Op.CREATE")


def test_an_op_unknown_to_an_older_namenode():
    fake = FakeNamenode([(UNKNOWN_CREATE, False)])
    try:
        with WebHdfsClient(fake.url, "tester") as client:
            with pytest.raises(errors.UnknownOperationError) as exc:
                client.create("/f")
        assert str(exc.value) == f"the namenode at {fake.url} does not support op=CREATE yet"
        assert exit_code(exc.value) == 1
    finally:
        fake.close()


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
