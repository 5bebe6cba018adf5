"""client/etcd/ against real etcd members (tests/etcd_cluster.py): one member for the API,
three for the client's failover between members and for a cluster without quorum."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator

import pytest

from nnlite.client.errors import (
    BadArgumentError,
    EtcdCompactedError,
    EtcdError,
    EtcdLeaseNotFoundError,
    EtcdRequestError,
    EtcdUnavailableError,
)
from nnlite.client.etcd.client import Etcd, Watch
from nnlite.client.etcd.messages import (
    MAX_REQUEST_BYTES,
    MAX_TXN_OPS,
    Compare,
    KeyValue,
    Op,
    RangeResult,
    WatchEvent,
    prefix_end,
)
from nnlite.commands.support import exit_code
from tests.etcd_cluster import EtcdCluster, free_ports
from tests.servers import wait_for

WAIT = 60.0                 # for conditions on a busy 2-core machine


@pytest.fixture
def etcd(etcd_single: EtcdCluster) -> Iterator[Etcd]:
    client = Etcd(etcd_single.endpoints)
    yield client
    client.close()


def collect(watch: Watch, into: list[WatchEvent], errors: list[BaseException]) -> threading.Thread:
    """Iterate ``watch`` in a thread, appending its events (and what it raised)."""
    def run() -> None:
        try:
            for event in watch:
                into.append(event)
        except BaseException as exc:           # noqa: BLE001 - handed to the test
            errors.append(exc)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


# ------------------------------------------------------------------------------ keys

def test_put_get_and_range_by_prefix_limit_and_revision(etcd: Etcd) -> None:
    first = etcd.put(b"/a/1", b"one")
    etcd.put(b"/a/2", b"two")
    etcd.put(b"/a/3", b"three")
    etcd.put(b"/b/1", b"other")
    changed = etcd.put(b"/a/1", b"uno")

    kv = etcd.get(b"/a/1")
    assert kv == KeyValue(b"/a/1", b"uno", first, changed, 2, 0)
    assert etcd.get(b"/missing") is None

    whole = etcd.range(b"/a/", prefix=True)
    assert [k.key for k in whole.kvs] == [b"/a/1", b"/a/2", b"/a/3"]
    assert (whole.count, whole.more, whole.revision) == (3, False, changed)

    limited = etcd.range(b"/a/", prefix=True, limit=2)
    assert [k.key for k in limited.kvs] == [b"/a/1", b"/a/2"]
    assert (limited.count, limited.more) == (3, True)

    assert [k.key for k in etcd.range(b"/a/2", b"/b/2").kvs] == [b"/a/2", b"/a/3", b"/b/1"]
    assert etcd.range(b"/a/", prefix=True, keys_only=True).kvs[1].value == b""
    assert etcd.range(b"/a/1", revision=first).kvs[0].value == b"one"
    assert etcd.range(b"/a/", prefix=True, serializable=True).count == 3
    assert etcd.range(b"", prefix=True).count == 4            # every key


def test_prefix_end_is_etcds() -> None:
    assert prefix_end(b"/a/") == b"/a0"
    assert prefix_end(b"a\xff") == b"b"
    assert prefix_end(b"\xff\xff") == b"\0"
    assert prefix_end(b"") == b"\0"


def test_delete_a_key_a_range_and_a_prefix(etcd: Etcd) -> None:
    for key in (b"/d/1", b"/d/2", b"/d/3", b"/e"):
        etcd.put(key, b"x")
    assert etcd.delete(b"/d/1") == 1
    assert etcd.delete(b"/d/1") == 0
    assert etcd.delete(b"/d/", prefix=True) == 2
    assert etcd.range(b"", prefix=True).count == 1
    assert etcd.delete(b"/a", b"/z") == 1


def test_bytes_only_and_one_way_to_name_a_range() -> None:
    with pytest.raises(BadArgumentError, match="bytes, not str"):
        Op.put("k", b"v")                                       # type: ignore[arg-type]
    with pytest.raises(BadArgumentError, match="not both"):
        Op.delete(b"k", b"z", prefix=True)
    with pytest.raises(BadArgumentError, match="takes bytes"):
        _ = Compare.value(b"k") == 1
    with pytest.raises(BadArgumentError, match="takes int"):
        _ = Compare.version(b"k") > b"1"
    with pytest.raises(BadArgumentError, match="http://HOST:PORT"):
        Etcd(["127.0.0.1"])


# ------------------------------------------------------------------------------ txn

def test_txn_runs_success_when_every_compare_holds_and_failure_otherwise(etcd: Etcd) -> None:
    created = etcd.txn([Compare.create_revision(b"k") == 0], [Op.put(b"k", b"v1")],
                       [Op.get(b"k")])
    assert created.succeeded and created.responses == (created.revision,)

    again = etcd.txn([Compare.create_revision(b"k") == 0], [Op.put(b"k", b"v2")],
                     [Op.get(b"k"), Op.delete(b"absent")])
    assert not again.succeeded
    got, deleted = again.responses
    assert isinstance(got, RangeResult) and got.kvs[0].value == b"v1" and deleted == 0

    kv = etcd.get(b"k")
    assert kv is not None
    checks = [Compare.value(b"k") == b"v1", Compare.value(b"k") != b"v2",
              Compare.version(b"k") > 0, Compare.version(b"k") < 2,
              Compare.mod_revision(b"k") == kv.mod_revision, Compare.lease(b"k") == 0]
    both = etcd.txn(checks, [Op.put(b"k", b"v3"), Op.get(b"k")])
    assert both.succeeded
    assert isinstance(both.responses[1], RangeResult)
    assert both.responses[1].kvs[0].value == b"v3"
    assert not etcd.txn([Compare.mod_revision(b"k") == kv.mod_revision], [], []).succeeded


def test_a_guarded_put_fails_once_the_leader_keys_lease_is_revoked(etcd: Etcd) -> None:
    """The fencing pattern of the HA journal: each write compares the create revision of the
    writer's leader key, so a writer whose lease went (and a new leader's key with it) can
    no longer write, whatever it believes."""
    lease = etcd.grant_lease(30)
    taken = etcd.txn([Compare.create_revision(b"/leader") == 0],
                     [Op.put(b"/leader", b"nn1", lease=lease.id)])
    assert taken.succeeded
    leader = etcd.get(b"/leader")
    assert leader is not None and leader.lease == lease.id
    guard = Compare.create_revision(b"/leader") == leader.create_revision

    assert etcd.txn([guard], [Op.put(b"/journal/1", b"op1")]).succeeded
    assert etcd.revoke_lease(lease.id)
    assert etcd.get(b"/leader") is None
    assert not etcd.txn([guard], [Op.put(b"/journal/2", b"op2")]).succeeded

    successor = etcd.grant_lease(30)
    etcd.put(b"/leader", b"nn2", lease=successor.id)
    assert not etcd.txn([guard], [Op.put(b"/journal/2", b"op2")]).succeeded
    assert [kv.value for kv in etcd.range(b"/journal/", prefix=True).kvs] == [b"op1"]


def test_many_threads_share_one_client(etcd: Etcd) -> None:
    """Compare-and-set increments from four threads: every one lands once."""
    etcd.put(b"counter", b"0")

    def increment(times: int) -> None:
        for _ in range(times):
            while True:
                kv = etcd.get(b"counter")
                assert kv is not None
                bumped = str(int(kv.value) + 1).encode()
                if etcd.txn([Compare.mod_revision(b"counter") == kv.mod_revision],
                            [Op.put(b"counter", bumped)]).succeeded:
                    break

    threads = [threading.Thread(target=increment, args=(25,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    kv = etcd.get(b"counter")
    assert kv is not None and kv.value == b"100"


# ------------------------------------------------------------------------------ leases

def test_a_lease_lives_while_kept_alive_and_its_keys_go_with_it(etcd: Etcd) -> None:
    lease = etcd.grant_lease(2)
    assert lease.id and lease.ttl >= 2
    etcd.put(b"/owned", b"x", lease=lease.id)
    owned = etcd.get(b"/owned")
    assert owned is not None and owned.lease == lease.id
    assert etcd.keep_alive(lease.id) == lease.ttl
    assert 0 <= etcd.time_to_live(lease.id) <= lease.ttl

    wait_for(lambda: etcd.get(b"/owned") is None, WAIT, "the lease to expire")
    assert etcd.time_to_live(lease.id) == -1
    assert etcd.keep_alive(lease.id) == 0
    assert etcd.revoke_lease(lease.id) is False
    with pytest.raises(EtcdLeaseNotFoundError, match="lease not found"):
        etcd.put(b"/owned", b"y", lease=lease.id)


def test_keep_alive_holds_a_lease_past_its_ttl(etcd: Etcd) -> None:
    lease = etcd.grant_lease(2)
    etcd.put(b"/held", b"x", lease=lease.id)
    deadline = time.monotonic() + 3 * lease.ttl
    while time.monotonic() < deadline:
        assert etcd.keep_alive(lease.id) > 0
        time.sleep(0.3)                         # the renewal period, not a wait for a state
    assert etcd.get(b"/held") is not None


# ------------------------------------------------------------------------------ watch

def test_a_watch_from_a_revision_yields_every_event_in_order(etcd: Etcd) -> None:
    start = etcd.put(b"/w/a", b"1")
    etcd.put(b"/w/b", b"2")
    etcd.put(b"/other", b"-")
    etcd.delete(b"/w/a")
    events: list[WatchEvent] = []
    errors: list[BaseException] = []
    watch = etcd.watch(b"/w/", prefix=True, start_revision=start)
    reader = collect(watch, events, errors)
    etcd.put(b"/w/c", b"3")
    wait_for(lambda: len(events) == 4, WAIT, "four events")

    assert [(e.type, e.kv.key, e.kv.value) for e in events] == [
        ("PUT", b"/w/a", b"1"), ("PUT", b"/w/b", b"2"), ("DELETE", b"/w/a", b""),
        ("PUT", b"/w/c", b"3")]
    revisions = [e.kv.mod_revision for e in events]
    assert revisions == sorted(revisions) and revisions[0] == start

    closed = time.monotonic()
    watch.close()                               # from this thread, the reader blocked
    reader.join(WAIT)
    assert not reader.is_alive() and errors == []
    assert time.monotonic() - closed < 5
    assert list(watch) == []                    # closed stays closed


def test_a_watch_closed_before_iterating_yields_nothing(etcd: Etcd) -> None:
    watch = etcd.watch(b"/quiet")
    watch.close()
    assert list(watch) == []


def test_compaction_refuses_older_revisions_and_a_watch_from_them(etcd: Etcd) -> None:
    old = etcd.put(b"/c", b"1")
    etcd.put(b"/c", b"2")
    compacted = etcd.put(b"/c", b"3")
    etcd.compact(compacted, physical=True)

    with pytest.raises(EtcdCompactedError, match="compacted"):
        etcd.range(b"/c", revision=old)
    assert etcd.range(b"/c", revision=compacted).kvs[0].value == b"3"
    with pytest.raises(EtcdCompactedError):
        etcd.compact(old)
    with pytest.raises(EtcdRequestError, match="future revision"):
        etcd.compact(compacted + 100)

    watch = etcd.watch(b"/c", start_revision=old)
    with pytest.raises(EtcdCompactedError) as caught:
        next(watch)
    assert caught.value.compact_revision == compacted
    assert list(watch) == []


# ------------------------------------------------------------------------------ limits

def test_a_txn_of_more_than_max_txn_ops_is_a_request_error(etcd: Etcd) -> None:
    ops = [Op.put(b"/ops/%03d" % i, b"v") for i in range(MAX_TXN_OPS + 1)]
    assert etcd.txn([], ops[:MAX_TXN_OPS]).succeeded
    with pytest.raises(EtcdRequestError, match="MAX_TXN_OPS") as caught:
        etcd.txn([], ops)
    assert "too many operations" in str(caught.value)
    assert etcd.range(b"/ops/", prefix=True).count == MAX_TXN_OPS


@pytest.mark.parametrize("size", [MAX_REQUEST_BYTES, 3 * MAX_REQUEST_BYTES],
                         ids=["over-etcd-limit", "over-grpc-limit"])
def test_a_request_over_max_request_bytes_is_a_request_error(etcd: Etcd, size: int) -> None:
    with pytest.raises(EtcdRequestError, match="MAX_REQUEST_BYTES"):
        etcd.put(b"/big", b"x" * size)
    assert etcd.get(b"/big") is None
    etcd.put(b"/big", b"x" * (MAX_REQUEST_BYTES - 4096))       # just under: taken


def test_a_malformed_request_is_a_request_error(etcd: Etcd) -> None:
    with pytest.raises(EtcdRequestError, match="key is not provided"):
        etcd.put(b"", b"v")
    with pytest.raises(EtcdRequestError, match="duplicate key"):
        etcd.txn([], [Op.put(b"k", b"1"), Op.put(b"k", b"2")])
    with pytest.raises(EtcdRequestError, match="future revision"):
        etcd.range(b"k", revision=10_000)
    with pytest.raises(EtcdRequestError, match="too large lease TTL") as caught:
        etcd.grant_lease(10**12)
    assert "MAX_REQUEST_BYTES" not in str(caught.value)


# ------------------------------------------------------------------------------ members

def test_status_names_the_member_and_its_leader(etcd_single: EtcdCluster, etcd: Etcd) -> None:
    revision = etcd.put(b"s", b"1")
    status = etcd.status()
    assert status["endpoint"] == etcd_single.endpoints[0]
    assert status["leader"] == status["member_id"] != 0
    assert status["revision"] == revision and status["dbSize"] > 0 and status["raftTerm"] >= 1

    dead = f"http://127.0.0.1:{free_ports(1)[0]}"
    both = Etcd([dead, *etcd_single.endpoints]).member_status()
    assert "connection refused" in str(both[dead])
    assert both[etcd_single.endpoints[0]]["leader"] == status["leader"]  # type: ignore[index]


def test_a_member_back_from_a_kill_answers_the_next_call(etcd_single: EtcdCluster,
                                                         etcd: Etcd) -> None:
    """gRPC's poller runs on the calling thread, so a channel that waits out a reconnect
    backoff makes no progress between calls, and a call on it fails at once: kept, it took
    over 10 s to see the member back, longer than an HA leader's lease. A call that found
    no connection drops the channel, so the next call connects afresh."""
    etcd.put(b"k", b"1")
    etcd_single.kill(0)
    for _ in range(3):
        with pytest.raises(EtcdUnavailableError, match="no etcd member could serve"):
            etcd.get(b"k")
    etcd_single.start_member(0)
    kv = etcd.get(b"k")
    assert kv is not None and kv.value == b"1"


def test_no_member_reachable_is_one_line_naming_the_endpoints() -> None:
    endpoints = [f"http://127.0.0.1:{port}" for port in free_ports(2)]
    started = time.monotonic()
    with pytest.raises(EtcdUnavailableError) as caught:
        Etcd(endpoints).put(b"k", b"v")
    assert time.monotonic() - started < 2
    message = str(caught.value)
    assert "\n" not in message and "connection refused" in message
    assert all(e in message for e in endpoints)
    assert exit_code(caught.value) == 3
    assert exit_code(EtcdRequestError("x")) == exit_code(EtcdError("x")) == 1


class NotEtcd(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.send_response(404)
        self.send_header("Content-Length", "9")
        self.end_headers()
        self.wfile.write(b"<html/>\r\n")

    def log_message(self, *args: object) -> None:
        pass


def test_an_endpoint_that_is_not_etcd_passes_the_call_on(etcd_single: EtcdCluster) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotEtcd)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = Etcd([f"http://127.0.0.1:{server.server_port}", *etcd_single.endpoints])
        assert client.put(b"k", b"v") > 0
        assert client.endpoint == etcd_single.endpoints[0]
    finally:
        server.shutdown()
        server.server_close()


# ------------------------------------------------------------------------------ failover

def ordered(cluster: EtcdCluster, first: int) -> list[str]:
    """The cluster's endpoints, member ``first``'s first."""
    return cluster.endpoints[first:] + cluster.endpoints[:first]


def test_a_killed_member_passes_calls_to_another(etcd_cluster: EtcdCluster) -> None:
    leader = etcd_cluster.wait_healthy()
    follower = (leader + 1) % 3
    client = Etcd(ordered(etcd_cluster, follower))
    client.put(b"k", b"before")
    assert client.endpoint == etcd_cluster.endpoints[follower]

    etcd_cluster.kill(follower)
    assert client.put(b"k", b"after") > 0                      # at once: the leader is up
    assert client.endpoint != etcd_cluster.endpoints[follower]
    kv = client.get(b"k")
    assert kv is not None and kv.value == b"after"


def test_a_watch_broken_by_a_killed_member_resumes_from_another(
        etcd_cluster: EtcdCluster) -> None:
    leader = etcd_cluster.wait_healthy()
    follower = (leader + 1) % 3
    client = Etcd(ordered(etcd_cluster, follower))
    first = client.put(b"/j/1", b"a")
    watch = client.watch(b"/j/", prefix=True, start_revision=first)
    assert watch.endpoint == etcd_cluster.endpoints[follower]
    assert next(watch).kv.value == b"a"

    etcd_cluster.kill(follower)
    with pytest.raises(EtcdUnavailableError, match="watch again"):
        next(watch)
    client.put(b"/j/2", b"b")
    again = client.watch(b"/j/", prefix=True, start_revision=first + 1)
    assert again.endpoint != etcd_cluster.endpoints[follower]
    assert next(again).kv.value == b"b"
    again.close()


def test_a_killed_leader_is_replaced_and_calls_go_on(etcd_cluster: EtcdCluster) -> None:
    leader = etcd_cluster.wait_healthy()
    client = Etcd(ordered(etcd_cluster, leader))
    client.put(b"k", b"1")
    etcd_cluster.kill(leader)

    def put() -> int | None:
        try:
            return client.put(b"k", b"2")
        except EtcdUnavailableError:            # during the election: no leader anywhere
            return None
    wait_for(put, WAIT, "a write after the leader's death")
    assert etcd_cluster.wait_healthy() != leader
    kv = client.get(b"k")
    assert kv is not None and kv.value == b"2"


def test_without_quorum_writes_fail_in_time_and_resume_with_it(
        etcd_cluster: EtcdCluster) -> None:
    client = Etcd(etcd_cluster.endpoints, timeout=2.0)
    written = client.put(b"k", b"1")
    # on the member that stays, after that put: a follower may not have applied it yet, and
    # a watch "from now on" would then see it arrive
    watch = Etcd(ordered(etcd_cluster, 2)).watch(b"k", start_revision=written + 1)
    etcd_cluster.kill(0)
    etcd_cluster.kill(1)

    started = time.monotonic()
    with pytest.raises(EtcdUnavailableError) as caught:
        client.put(b"k", b"2")
    # The dead members refuse at once; the live one says "no leader", or holds the write
    # until the client's timeout while it has not noticed yet. The bound only tells that
    # from a hang: a busy machine may stretch the timeout itself.
    assert time.monotonic() - started < 10 * client.timeout
    assert all(e in str(caught.value) for e in etcd_cluster.endpoints)
    survivor = client.range(b"k", serializable=True)            # no leader needed
    assert survivor.kvs[0].value == b"1"
    with pytest.raises(EtcdUnavailableError, match="no leader.*watch again"):
        next(watch)                             # etcd ends it after 3 election timeouts

    etcd_cluster.start_member(1)

    def put() -> int | None:
        try:
            return client.put(b"k", b"3")
        except EtcdUnavailableError:
            return None
    wait_for(put, WAIT, "a write once two members of three run again")
    kv = client.get(b"k")
    assert kv is not None and kv.value == b"3"
