"""failover.py: the retry policy's numbers and decisions (Hadoop's
FailoverOnNetworkExceptionRetry with WebHdfsFileSystem's defaults), what is idempotent, how
``--namenode`` names a nameservice, and WebHdfsClient over two scripted namenodes
(tests/client/fake.py): a refused connection or a StandbyException moves to the next one, a
RetriableException waits and asks the same one again, a lost answer is asked again only for an
idempotent op, and giving up names every namenode and its last answer."""

from __future__ import annotations

import io
import select
import threading
import time

import pytest

from nnlite.client import errors
from nnlite.client.connection import Connection
from nnlite.client.failover import (
    Decision,
    FailoverConnection,
    FailoverPolicy,
    Failure,
    Nameservice,
    is_idempotent,
    resolve,
)
from nnlite.client.webhdfs import WebHdfsClient
from nnlite.commands.support import exit_code
from tests.client.fake import STATUS, FakeNamenode, remote_exception, reply
from tests.servers import closed_port, wait_for

HADOOP = FailoverPolicy()
FAILOVER, RETRY, FAIL = Decision.FAILOVER_AND_RETRY, Decision.RETRY, Decision.FAIL
MIDDLE = 0.5                        # rand() = 0.5: the random factor (rand + 0.5) is 1

# ------------------------------------------------------------------------------- the policy


def test_the_defaults_are_webhdfs_filesystems():
    # HdfsClientConfigKeys.HttpClient: failover.max.attempts 15, retry.max.attempts 10,
    # failover.sleep.base.millis 500, failover.sleep.max.millis 15000
    assert (HADOOP.max_failovers, HADOOP.max_retries) == (15, 10)
    assert (HADOOP.sleep_base, HADOOP.sleep_max) == (0.5, 15.0)


@pytest.mark.parametrize("failure, retries, idempotent, decision, delay", [
    (Failure.NOT_CONNECTED, 0, False, FAILOVER, 0.0),
    (Failure.NOT_CONNECTED, 7, False, FAILOVER, 0.0),    # failovers=0: a failover never waits
    (Failure.STANDBY, 3, False, FAILOVER, 0.0),
    (Failure.RETRIABLE, 0, False, RETRY, 0.0),           # the first retry does not wait
    (Failure.RETRIABLE, 1, False, RETRY, 1.0),           # min(0.5 * 2**n, 15)
    (Failure.RETRIABLE, 2, False, RETRY, 2.0),
    (Failure.RETRIABLE, 4, False, RETRY, 8.0),
    (Failure.RETRIABLE, 5, False, RETRY, 15.0),          # capped at 15 s
    (Failure.RETRIABLE, 10, False, RETRY, 15.0),
    (Failure.LOST, 0, True, FAILOVER, 0.0),
    (Failure.LOST, 3, True, FAILOVER, 4.0),
    (Failure.LOST, 0, False, FAIL, 0.0),
    (Failure.NOT_CONNECTED, 11, False, FAIL, 0.0),       # retries - failovers > 10
    (Failure.RETRIABLE, 11, False, FAIL, 0.0),
    (Failure.STANDBY, 11, True, FAIL, 0.0),
], ids=str)
def test_should_retry_as_failover_on_network_exception_retry(failure, retries, idempotent,
                                                             decision, delay):
    action = HADOOP.should_retry(failure, retries, 0, idempotent, rand=lambda: MIDDLE)
    assert (action.decision, action.delay) == (decision, delay)


def test_the_reasons_to_give_up_are_hadoops():
    assert HADOOP.should_retry(Failure.STANDBY, 11, 0, True).reason == (
        "retries (11) exceeded maximum allowed (10)")
    assert HADOOP.should_retry(Failure.STANDBY, 20, 15, True).reason == (
        "failovers (15) exceeded maximum allowed (15)")
    assert "not idempotent" in HADOOP.should_retry(Failure.LOST, 0, 0, False).reason


@pytest.mark.parametrize("rand, factor", [(0.0, 0.5), (0.999999, 1.499999)])
def test_the_back_off_is_randomised_between_half_and_one_and_a_half(rand, factor):
    assert HADOOP.sleep_time(3, lambda: rand) == pytest.approx(4.0 * factor)


@pytest.mark.parametrize("method, target, expected", [
    ("GET", "/webhdfs/v1/a?op=GETFILESTATUS", True),
    ("GET", "/data/v1/a?op=OPEN", True),
    ("PUT", "/webhdfs/v1/a?op=MKDIRS", True),              # ClientProtocol: @Idempotent
    ("PUT", "/webhdfs/v1/a?op=SETPERMISSION&permission=755", True),
    ("PUT", "/webhdfs/v1/a?op=SETACL", True),
    ("PUT", "/webhdfs/v1/a?op=CREATE&overwrite=false", True),   # the first step redirects
    ("POST", "/webhdfs/v1/a?op=APPEND", True),
    ("PUT", "/data/v1/a?op=CREATE", False),               # the data step: never twice
    ("POST", "/data/v1/a?op=APPEND", False),
    ("PUT", "/webhdfs/v1/a?op=RENAME&destination=/b", False),    # @AtMostOnce
    ("DELETE", "/webhdfs/v1/a?op=DELETE", False),
    ("PUT", "/webhdfs/v1/a?op=CREATESNAPSHOT", False),
    ("PUT", "/webhdfs/v1/a?op=SETXATTR", False),
    ("PUT", "/admin?op=SAVENAMESPACE", False),
    ("PUT", "/admin?op=SAFEMODE&action=enter", True),
    ("POST", "/catalog/v1/j?op=BEGIN", False),
])
def test_what_is_asked_again_after_a_lost_answer(method, target, expected):
    assert is_idempotent(method, target) is expected


# ------------------------------------------------------------------------------- --namenode

NS = {"ns1": {"nn1": "http://h1:1", "nn2": "http://h2:2"}}


@pytest.mark.parametrize("given", ["ns1", "webhdfs://ns1", "hdfs://ns1", "webhdfs://ns1/"])
def test_a_nameservice_is_named_as_hadoop_names_it(given):
    assert resolve(given, NS) == Nameservice("ns1", NS["ns1"])


@pytest.mark.parametrize("given, url", [
    ("http://h:9870", "http://h:9870"), ("h:9870", "h:9870"),
    ("webhdfs://h:9870", "http://h:9870"), ("swebhdfs://h:9871", "https://h:9871"),
])
def test_one_namenode_is_still_a_url(given, url):
    assert resolve(given, NS) == url


@pytest.mark.parametrize("given, match", [
    ("ns2", "neither a namenode address .* nor a nameservice .*dfs.nameservices: ns1"),
    ("hdfs://h:8020", "not a nameservice .*Hadoop RPC"),
    ("webhdfs://ns1/a/b", "without a path"),
])
def test_what_names_nothing_is_a_usage_error(given, match):
    with pytest.raises(errors.BadArgumentError, match=match) as refused:
        resolve(given, NS)
    assert exit_code(refused.value) == 2


def test_without_a_configuration_the_hint_says_so():
    with pytest.raises(errors.BadArgumentError, match="give --conf with dfs.nameservices"):
        resolve("ns1", {})


# ------------------------------------------------------------------------------- scripted

OK_STATUS = reply(200, STATUS)
STANDBY = remote_exception(403, "org.apache.hadoop.ipc.StandbyException",
                           "Operation category READ is not supported in state standby")
RETRIABLE = remote_exception(403, "org.apache.hadoop.ipc.RetriableException",
                             "No namenode of the HA set is active now")
LOST = b""                  # read the request, answer nothing, close: the answer is lost


@pytest.fixture
def fakes():
    started: list[FakeNamenode] = []

    def start(*scripts: list[tuple[bytes, bool]]) -> list[FakeNamenode]:
        started.extend(FakeNamenode(script) for script in scripts)
        return started[-len(scripts):]
    yield start
    for fake in started:
        fake.close()


def client_of(urls: list[str], **policy) -> tuple[WebHdfsClient, list[float]]:
    slept: list[float] = []
    client = WebHdfsClient(Nameservice("ns1", {f"nn{i + 1}": u for i, u in enumerate(urls)}),
                           "tester", policy=FailoverPolicy(**policy))
    assert isinstance(client.connection, FailoverConnection)
    client.connection._sleep = slept.append
    return client, slept


def test_one_url_keeps_the_plain_connection():
    assert type(WebHdfsClient("http://127.0.0.1:1").connection) is Connection
    assert type(WebHdfsClient(["http://127.0.0.1:1"]).connection) is Connection


def test_find_active_asks_each_namenode_with_the_one_probe_on_its_kept_connection(fakes):
    """find_active is peer.py's probe_active: a 503 and a refused port are passed over, the
    namenode that answers 200 becomes the current one, and its kept connection is reused."""
    standby, active = fakes([(reply(503), False)], [(reply(200), False), (reply(200), False)])
    conn = FailoverConnection(Nameservice("ns1", {"nn0": f"127.0.0.1:{closed_port()}",
                                                  "nn1": standby.url, "nn2": active.url}))
    conn.find_active()
    assert conn.url == active.url
    conn.find_active()
    assert conn.url == active.url
    assert standby.requests[0].startswith(b"GET /isActive ")
    assert active.connections == 1 and len(active.requests) == 2
    conn.close()


def test_a_standby_sends_the_client_to_the_next_namenode_at_once(fakes):
    standby, active = fakes([(STANDBY, False)], [(OK_STATUS, False), (OK_STATUS, False)])
    client, slept = client_of([standby.url, active.url])
    with client:
        assert client.status("/")["type"] == "DIRECTORY"
        assert client.url == active.url
        client.status("/")                          # stays with the active
    assert (len(standby.requests), len(active.requests), slept) == (1, 2, [])


def test_a_refused_connection_fails_over_at_once(fakes):
    (active,) = fakes([(OK_STATUS, False)])
    client, slept = client_of([f"http://127.0.0.1:{closed_port()}", active.url])
    with client:
        assert client.status("/")["type"] == "DIRECTORY"
    assert slept == []


def test_a_retriable_exception_backs_off_on_the_same_namenode(fakes):
    other, busy = fakes([], [(RETRIABLE, False), (RETRIABLE, False), (RETRIABLE, False),
                             (OK_STATUS, False)])
    client, slept = client_of([busy.url, other.url])
    with client:
        assert client.status("/")["type"] == "DIRECTORY"
    assert len(busy.requests) == 4 and other.requests == []
    assert slept[0] == pytest.approx(1.0, rel=0.5)      # retry 0 does not wait; then 1 s
    assert slept[1] == pytest.approx(2.0, rel=0.5)      # 2 s, each times [0.5, 1.5)
    assert len(slept) == 2


def test_a_lost_answer_of_an_idempotent_op_is_asked_again_elsewhere(fakes):
    dying, active = fakes([(LOST, True)], [(reply(200, b'{"boolean":true}'), False)])
    client, _ = client_of([dying.url, active.url])
    with client:
        assert client.mkdirs("/a") is True
    assert [r.split(b" ")[0] for r in dying.requests + active.requests] == [b"PUT", b"PUT"]


def test_a_lost_answer_of_a_delete_is_not_sent_again(fakes):
    dying, other = fakes([(LOST, True)], [])
    client, _ = client_of([dying.url, other.url])
    with client, pytest.raises(errors.NamenodeUnreachableError) as lost:
        client.delete("/a")
    message = str(lost.value)
    assert "DELETE /a: the answer of " in message and "was not sent again" in message
    assert "check whether it was applied" in message and other.requests == []
    assert exit_code(lost.value) == 3


def test_a_lost_answer_on_a_kept_alive_connection_is_not_taken_for_a_stale_one(fakes):
    dying, other = fakes([(OK_STATUS, False), (LOST, True)], [])
    client, _ = client_of([dying.url, other.url])
    with client:
        client.status("/")
        with pytest.raises(errors.NamenodeUnreachableError, match="was not sent again"):
            client.delete("/a")
    assert (dying.connections, len(dying.requests), other.requests) == (1, 2, [])


def test_a_kept_alive_connection_the_namenode_closed_is_dropped_first(fakes):
    idle, other = fakes([(OK_STATUS, True), (reply(200, b'{"boolean":true}'), False)], [])
    client, _ = client_of([idle.url, other.url])
    with client:
        client.status("/")
        kept = client.connection.connections[0]._conn
        assert kept is not None and select.select([kept.sock], [], [], 5)[0]   # closed
        assert client.delete("/a") is True       # on a fresh connection, sent once
    assert (idle.connections, len(idle.requests), other.requests) == (2, 2, [])


def test_a_data_step_refused_by_a_standby_goes_to_the_next_namenode(fakes):
    first, second = fakes(
        [(reply(307, headers="Location: {}/data/v1/f?op=CREATE\r\n"), False),
         (STANDBY, False)],
        [(reply(201), False)])
    first.script[0] = (reply(307, headers=f"Location: {first.url}/data/v1/f?op=CREATE&"
                                          "user.name=tester\r\n"), False)
    client, _ = client_of([first.url, second.url])
    with client:
        client.create("/f", b"abc")
    assert second.requests[0].startswith(b"PUT /data/v1/f?op=CREATE")
    assert second.requests[0].endswith(b" abc")


def test_a_body_that_cannot_be_sent_again_is_not(fakes, tmp_path):
    first, second = fakes(
        [(reply(307, headers="Location: x\r\n"), False), (STANDBY, False)], [])
    first.script[0] = (reply(307, headers=f"Location: {first.url}/data/v1/f?op=CREATE\r\n"),
                       False)
    client, _ = client_of([first.url, second.url])
    (tmp_path / "f").write_bytes(b"abc")
    with client, Unseekable(tmp_path / "f") as body, pytest.raises(
            errors.NoActiveNamenodeError, match="cannot be sent again"):
        client.create("/f", body)
    assert second.requests == []


class Unseekable(io.FileIO):
    """A body read once, as from a pipe (with a known size, which the fake needs)."""

    def seekable(self) -> bool:
        return False


def test_giving_up_names_every_namenode_and_its_last_answer(fakes):
    (standby,) = fakes([(STANDBY, False)] * 12)
    down = f"http://127.0.0.1:{closed_port()}"
    client, slept = client_of([down, standby.url])
    with client, pytest.raises(errors.NoActiveNamenodeError) as gave_up:
        client.status("/")
    message = str(gave_up.value)
    assert message.startswith("no namenode of ns1 served GETFILESTATUS / after 12 attempts "
                              "(retries (11) exceeded maximum allowed (10)): ")
    assert f"nn1 ({down}): connection refused" in message
    assert f"nn2 ({standby.url}): StandbyException: Operation category READ" in message
    assert len(standby.requests) == 6 and slept == []       # 12 attempts, half each, no wait
    assert exit_code(gave_up.value) == 3 and "\n" not in message


def test_retriable_exceptions_until_the_retries_run_out(fakes):
    (busy,) = fakes([(RETRIABLE, False)] * 5)
    client, slept = client_of([busy.url, f"http://127.0.0.1:{closed_port()}"], max_retries=3,
                              sleep_base=0.01)
    with client, pytest.raises(errors.NoActiveNamenodeError, match="RetriableException"):
        client.status("/")
    assert len(busy.requests) == 5                  # retries 1, 2 and 3 waited
    assert [s / 0.01 for s in slept] == [pytest.approx(2 * n, rel=0.5) for n in (1, 2, 4)]


def test_other_answers_are_the_callers(fakes):
    missing = remote_exception(404, "java.io.FileNotFoundException", "File /x does not exist")
    first, second = fakes([(missing, False)], [])
    client, _ = client_of([first.url, second.url])
    with client, pytest.raises(errors.PathNotFoundError):
        client.status("/x")
    assert second.requests == []


# ------------------------------------------------------------------------------- a real HA set


def ha_client(haset, first: int = 0) -> tuple[WebHdfsClient, list[float]]:
    """A client of ns1 that meets namenode ``first`` first, sleeping as told and recording
    it; the back-off's random factor is 1 (``rand`` 0.5)."""
    order = [first, 1 - first]
    slept: list[float] = []
    client = WebHdfsClient(Nameservice("ns1", {haset.ids[i]: haset.url(i) for i in order}),
                           "tester", policy=FailoverPolicy(rand=lambda: MIDDLE))
    assert isinstance(client.connection, FailoverConnection)

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        time.sleep(seconds)     # the policy's back-off, really slept, as a client would
    client.connection._sleep = sleep
    return client, slept


def sees_the_active(haset, standby: int) -> bool:
    """Whether the standby sees a live active (then it answers StandbyException; before, a
    RetriableException)."""
    with WebHdfsClient(haset.url(standby)) as client:
        return client.service_state()["activeAlive"]


@pytest.mark.crash
def test_a_real_standby_sends_the_client_to_the_active(haset):
    active = haset.start_all()
    wait_for(lambda: sees_the_active(haset, 1 - active), 30, "the standby to see the active")
    client, slept = ha_client(haset, first=1 - active)
    with client:
        assert client.mkdirs("/s/a")
        assert client.url == haset.url(active) and slept == []
        assert [s["pathSuffix"] for s in client.list("/s")] == ["a"]


@pytest.mark.crash
def test_across_a_kill_of_the_active_the_client_backs_off_then_succeeds(haset):
    active = haset.start_all()
    client, slept = ha_client(haset, first=active)
    with client:
        assert client.mkdirs("/k/before")
        haset.kill(active)
        assert client.mkdirs("/k/after")      # refused, then the standby's RetriableExceptions
        assert client.url == haset.url(1 - active)
        assert client.exists("/k/before")
    # the refused connection failed over at once (retry 0); then each RetriableException
    # waited min(0.5 * 2**retry, 15) s, retry 1 first
    assert slept and slept == sorted(set(slept)), slept
    assert set(slept) <= {1.0, 2.0, 4.0, 8.0, 15.0}, slept


@pytest.mark.crash
def test_without_an_etcd_quorum_the_client_waits_on_the_active(haset, etcd_cluster):
    active = haset.start_all()
    client, slept = ha_client(haset, first=active)
    with client:
        assert client.mkdirs("/q/one")
        etcd_cluster.kill(0)
        etcd_cluster.kill(1)
        done: list[bool] = []
        writer = threading.Thread(target=lambda: done.append(client.mkdirs("/q/two")))
        writer.start()
        wait_for(lambda: slept, 120, "the active to refuse the write with RetriableException")
        with WebHdfsClient(haset.url(active), "tester") as reader:
            assert reader.exists("/q/one")      # reads go on meanwhile
        etcd_cluster.start_member(1)
        writer.join(timeout=300)
        assert done == [True] and client.url == haset.url(active)
        assert client.exists("/q/two")
