"""WebHdfsClient (webhdfs.py, over connection.py) against a live namenode and against a
scripted fake one (tests/client/fake.py: stale keep-alive connections, redirects, non-WebHDFS
answers, an older namenode)."""

from __future__ import annotations

import pytest

from nnlite.client import errors
from nnlite.client.webhdfs import WebHdfsClient
from nnlite.commands.support import exit_code
from tests.client.fake import STATUS, UNKNOWN_CREATE, FakeNamenode, reply
from tests.servers import closed_port

# ------------------------------------------------------------------------------- live client

@pytest.fixture(scope="module")
def server(start_module_namenode):
    return start_module_namenode("-D", "dfs.ls.limit=2")


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
        with (WebHdfsClient(fake.url, "tester") as client,
              pytest.raises(error, match=match) as caught):
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


def test_an_op_unknown_to_an_older_namenode():
    fake = FakeNamenode([(UNKNOWN_CREATE, False)])
    try:
        with (WebHdfsClient(fake.url, "tester") as client,
              pytest.raises(errors.UnknownOperationError) as exc):
            client.create("/f")
        assert str(exc.value) == f"the namenode at {fake.url} does not support op=CREATE yet"
        assert exit_code(exc.value) == 1
    finally:
        fake.close()
