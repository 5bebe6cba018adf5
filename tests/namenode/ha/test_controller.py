"""The HA set end to end: real etcd members, real namenode processes, SIGKILL and SIGSTOP."""

from __future__ import annotations

import http.client
import json
import threading
import time

import pytest

from nnlite.client.etcd.client import Etcd
from nnlite.namenode.ha.quorum_journal import Layout
from tests.namenode.ha.haset import (
    NAMESERVICE,
    USER,
    HASet,
    Writers,
    diverged,
    local_records,
    request,
    shared_records,
)
from tests.servers import wait_for

pytestmark = pytest.mark.crash


def mkdirs(url: str, path: str, timeout: float = 30) -> tuple[int, dict]:
    status, body = request(url, "PUT", f"/webhdfs/v1{path}?op=MKDIRS&user.name={USER}",
                           timeout=timeout)
    return status, json.loads(body)


def exists(url: str, path: str) -> bool:
    """GETFILESTATUS as Hadoop's client reads: a RetriableException is asked again after a
    pause (the namenode is dropping a batch etcd refused), up to its retry count."""
    for attempt in range(10):
        status, body = request(url, "GET",
                               f"/webhdfs/v1{path}?op=GETFILESTATUS&user.name={USER}")
        if b"RetriableException" not in body:
            break
        time.sleep(0.1 * 2 ** attempt)     # the client's back-off between retries
    assert status in (200, 404), body
    return status == 200


def found(url: str, path: str) -> bool:
    """GETFILESTATUS asked once: found or not, and never an error."""
    status, body = request(url, "GET", f"/webhdfs/v1{path}?op=GETFILESTATUS&user.name={USER}",
                           timeout=120)
    assert status in (200, 404), body
    return status == 200


def exception(answer: dict) -> str | None:
    return answer.get("RemoteException", {}).get("exception")


def test_a_standby_follows_the_active_and_refuses_ops_as_hadoops_does(haset):
    active = haset.start_all()
    standby = 1 - active
    assert mkdirs(haset.url(active), "/a/b") == (200, {"boolean": True})
    wait_for(lambda: haset.synced_txid(standby) >= haset.synced_txid(active), 30,
             "the standby to apply the active's edits")
    status, answer = mkdirs(haset.url(standby), "/c")
    assert status == 403
    assert answer["RemoteException"]["javaClassName"] == "org.apache.hadoop.ipc.StandbyException"
    assert answer["RemoteException"]["message"].startswith(
        "Operation category WRITE is not supported in state standby")
    status, body = request(haset.url(standby), "GET",
                           f"/webhdfs/v1/a?op=GETFILESTATUS&user.name={USER}")
    assert status == 403 and b"StandbyException" in body
    # the active reports its standby's position and lag (/jmx, /metrics)
    def caught_up() -> bool:
        bean = next(b for b in haset.jmx_beans(active)
                    if b["name"] == "Hadoop:service=NameNode,name=NameNodeStatus")
        standbys = json.loads(bean["HAStandbys"])
        return standbys.get(haset.ids[standby], {}).get("lagTxns") == 0
    wait_for(caught_up, 30, "the active to see its standby caught up")
    # the standby's own edits hold the active's records, byte for byte
    mine = (haset.root / "nn1-name/current/edits").read_bytes()
    theirs = (haset.root / "nn2-name/current/edits").read_bytes()
    assert mine == theirs


def test_twenty_kills_of_the_active_under_32_writers_lose_no_acknowledged_op(haset):
    haset.start_all()
    with Writers(haset, 32, file_every=4) as writers:
        for _ in range(20):
            writers.wait_progress(200)
            old = haset.active()
            haset.kill(old)
            new = haset.active(excluding=old)
            writers.wait_progress(100)          # the new active serves the writers
            haset.start(old)                    # the killed one rejoins as a standby
            assert not haset.is_active(old)
        writers.wait_progress(100)
    final = haset.active()
    assert writers.total() > 20 * 300
    assert writers.missing(haset.url(final)) == []
    assert len(writers.files) > 20 * 50
    assert writers.unreadable(haset.url(final)) == []
    assert writers.errors == []
    # the last killed one caught up as a standby: the same edits up to the active's txid
    other = 1 - final
    wait_for(lambda: haset.synced_txid(other) >= haset.synced_txid(final), 60,
             "the standby to catch up")
    assert new in (0, 1)


def test_a_standby_opens_the_election_when_the_active_s_port_refuses(tmp_path, etcd_cluster):
    """A SIGKILLed active's port refuses connections at once: the standby deletes its leader
    key and takes over without waiting out the lease's TTL -- here 600 s, so nothing else can
    make it active within the wait -- and nothing acknowledged is lost."""
    ha = HASet(tmp_path, etcd_cluster, settings={"nnlite.ha.lease.ttl": "600"})
    try:
        first = ha.start_all()
        second = 1 - first
        wait_for(lambda: ha.synced_txid(second) >= ha.synced_txid(first), 60,
                 "the standby to catch up")
        assert mkdirs(ha.url(first), "/acknowledged")[0] == 200
        ha.kill(first)
        assert ha.active(timeout=120, excluding=first) == second
        assert exists(ha.url(second), "/acknowledged")
        assert mkdirs(ha.url(second), "/after")[0] == 200
        ha.start(first)             # back as a standby: the new active's lease is its own
        wait_for(lambda: ha.synced_txid(first) >= ha.synced_txid(second), 60,
                 "the restarted namenode to follow")
        assert ha.is_active(second) and not ha.is_active(first)
    finally:
        ha.close()


def test_a_namenode_that_becomes_active_is_no_longer_named_as_a_standby(haset, etcd_cluster):
    """Its position goes when it takes over: once it dies, the next active must not name its
    datanode in pipelines and block locations while that position would still look fresh."""
    first = haset.start_all()
    second = 1 - first
    layout = Layout.of("/nnlite", NAMESERVICE)

    def position(i: int) -> bool:
        return etcd.get(layout.standbys + haset.ids[i].encode()) is not None

    def standbys_seen_by(i: int) -> dict:
        bean = next(b for b in haset.jmx_beans(i)
                    if b["name"] == "Hadoop:service=NameNode,name=NameNodeStatus")
        return json.loads(bean["HAStandbys"])

    with Etcd(etcd_cluster.endpoints) as etcd:
        wait_for(lambda: position(second), 30, "the standby's position")
        haset.kill(first)
        assert haset.active(excluding=first) == second
        assert not position(second)
        haset.start(first)
        wait_for(lambda: haset.ids[first] in standbys_seen_by(second), 30,
                 "the active to see the restarted namenode as its standby")
        haset.kill(second)
        assert haset.active(excluding=second) == first
        assert not position(first)
        assert haset.ids[second] not in standbys_seen_by(first)


def test_an_active_paused_past_its_lease_acknowledges_nothing_and_steps_down(haset):
    first = haset.start_all()
    second = 1 - first
    assert mkdirs(haset.url(first), "/before")[0] == 200
    haset.pause(first)
    answers: list = []
    # a request that reaches the paused active: it must never be acknowledged
    late = threading.Thread(target=lambda: answers.append(
        mkdirs(haset.url(first), "/sent-to-the-paused-one", timeout=120)))
    late.start()
    assert haset.active(excluding=first) == second
    assert mkdirs(haset.url(second), "/after")[0] == 200
    haset.resume(first)
    late.join(timeout=120)
    assert answers, "the paused namenode never answered"
    status, answer = answers[0]
    assert status == 403, answer
    assert exception(answer) in ("StandbyException", "RetriableException")
    wait_for(lambda: not haset.is_active(first), 30, "the woken namenode to step down")
    assert haset.is_active(second)
    assert not exists(haset.url(second), "/sent-to-the-paused-one")
    assert exists(haset.url(second), "/before") and exists(haset.url(second), "/after")
    # and it follows the new active again
    assert mkdirs(haset.url(second), "/later")[0] == 200
    wait_for(lambda: haset.synced_txid(first) >= haset.synced_txid(second), 30,
             "the woken namenode to follow the new active")


def test_an_active_killed_with_a_batch_in_its_edits_not_in_etcd_cuts_it_at_restart(
        haset, etcd_cluster):
    """journal.py's overlap: the active's local write runs while etcd takes the batch, so a
    kill -9 between the two (fault point ``journal.before-shared``) leaves a batch durable in
    its edits that etcd never took. It was never acknowledged; the other namenode takes over
    and writes its own ops at those txids; restarted, the killed one cuts its edits back to
    the journal before it follows (``EditLogTailer.reconcile``)."""
    haset.start(0, faults="journal.before-shared=kill")
    assert haset.active() == 0
    try:
        answer: tuple | None = mkdirs(haset.url(0), "/killed")
    except (OSError, http.client.HTTPException):
        answer = None                               # the connection died with the process
    assert answer is None, answer
    wait_for(lambda: not haset.running(0), 30, "the fault point to kill nn1")
    assert diverged(local_records(haset.dirs[0]), shared_records(etcd_cluster.endpoints)), \
        "nn1's edits do not run past etcd's journal: the fault hit no batch in flight"
    haset.start(1)
    assert haset.active() == 1
    assert mkdirs(haset.url(1), "/after")[0] == 200    # at the txid nn1 holds "/killed" at
    haset.start(0)
    # Loaded, nn1 stands at its own txid 2 until the reconcile cuts it: wait for the cut too.
    wait_for(lambda: haset.synced_txid(0) >= haset.synced_txid(1) and not diverged(
        local_records(haset.dirs[0]), shared_records(etcd_cluster.endpoints)), 60,
        "the restarted nn1 to cut its edits and follow nn2")
    assert exists(haset.url(1), "/after") and not exists(haset.url(1), "/killed")


def test_etcd_losing_one_member_serves_losing_two_refuses_writes_and_serves_reads(
        haset, etcd_cluster):
    active = haset.start_all()
    url = haset.url(active)
    assert mkdirs(url, "/one")[0] == 200
    etcd_cluster.kill(0)
    assert mkdirs(url, "/two")[0] == 200
    etcd_cluster.kill(1)
    answers: list[tuple[int, dict]] = []
    writer = threading.Thread(target=lambda: answers.append(mkdirs(url, "/three",
                                                                   timeout=120)))
    writer.start()
    # reads go on while the write waits on etcd (a read held behind it is answered again
    # once the namenode has dropped it), never showing it, and nothing acknowledged is lost
    reads = 0
    while writer.is_alive() or reads == 0:
        assert found(url, "/one") and found(url, "/two")
        assert not found(url, "/three")
        reads += 1
    writer.join()
    status, answer = answers[0]
    assert status == 403
    assert exception(answer) == "RetriableException"
    assert "etcd" in answer["RemoteException"]["message"]
    etcd_cluster.start_member(1)
    wait_for(lambda: mkdirs(url, "/four", timeout=60)[0] == 200, 120,
             "writes to resume once etcd has a quorum again", interval=0.5)
    assert exists(url, "/one") and exists(url, "/two") and exists(url, "/four")


def admin(url: str, op: str, **params: str) -> tuple[int, dict]:
    query = "&".join(f"{k}={v}" for k, v in {"op": op, "user.name": USER, **params}.items())
    status, body = request(url, "POST" if op != "GETSERVICESTATE" else "GET",
                           f"/admin?{query}", timeout=60)
    return status, json.loads(body)


def test_a_graceful_failover_moves_the_active_role_and_manual_transitions_need_force(haset):
    first = haset.start_all()
    second = 1 - first
    assert mkdirs(haset.url(first), "/x")[0] == 200
    assert admin(haset.url(first), "GETSERVICESTATE")[1]["state"] == "active"
    assert admin(haset.url(second), "GETSERVICESTATE")[1]["state"] == "standby"
    # automatic failover is on: HDFS's haadmin refuses manual transitions unless forced
    status, answer = admin(haset.url(first), "TRANSITIONTOSTANDBY")
    assert status == 403 and "automatic failover is enabled" in answer["RemoteException"][
        "message"]
    started = time.monotonic()
    assert admin(haset.url(second), "FAILOVER") == (200, {"state": "active"})
    took = time.monotonic() - started
    assert haset.is_active(second) and not haset.is_active(first)
    assert exists(haset.url(second), "/x")
    assert mkdirs(haset.url(second), "/y")[0] == 200
    # the old active gave way rather than waiting for a lease to expire
    assert took < 4, took
    assert admin(haset.url(first), "TRANSITIONTOACTIVE", force="true")[0] == 403  # nn2 is active
    assert admin(haset.url(second), "TRANSITIONTOSTANDBY", force="true") == (
        200, {"state": "standby"})
    assert haset.active() == first      # the other took over by itself


def test_snapshots_acls_and_files_written_before_a_failover_are_there_after(haset):
    first = haset.start_all()
    url = haset.url(first)

    def call(url: str, method: str, path: str, op: str, **params: str) -> tuple[int, bytes]:
        query = "&".join(f"{k}={v}" for k, v in {"op": op, "user.name": USER,
                                                 **params}.items())
        return request(url, method, f"/webhdfs/v1{path}?{query}")

    assert mkdirs(url, "/ckpt/q1")[0] == 200
    assert call(url, "PUT", "/ckpt", "ALLOWSNAPSHOT")[0] == 200
    assert call(url, "PUT", "/ckpt", "CREATESNAPSHOT", snapshotname="s1")[0] == 200
    assert call(url, "PUT", "/ckpt/q1", "MODIFYACLENTRIES",
                aclspec="user:alice:r-x")[0] == 200
    assert call(url, "PUT", "/ckpt/q1", "RENAME", destination="/ckpt/q2")[0] == 200
    haset.kill(first)
    second = haset.active(excluding=first)
    url = haset.url(second)
    status, body = call(url, "GET", "/ckpt/.snapshot/s1/q1", "GETFILESTATUS")
    assert status == 200, body                 # the snapshot is frozen before the rename
    assert exists(url, "/ckpt/q2") and not exists(url, "/ckpt/q1")
    status, body = call(url, "GET", "/ckpt/q2", "GETACLSTATUS")
    assert status == 200 and "user:alice:r-x" in json.loads(body)["AclStatus"]["entries"]
    status, body = call(url, "GET", "/", "GETSNAPSHOTTABLEDIRECTORYLIST")
    listed = json.loads(body)["SnapshottableDirectoryList"]
    assert status == 200 and [(d["parentFullPath"], d["dirStatus"]["pathSuffix"],
                               d["snapshotNumber"]) for d in listed] == [("/", "ckpt", 1)]


def test_a_standby_the_journal_left_behind_is_unhealthy_until_it_starts_from_the_active_s_image(
        tmp_path, etcd_cluster):
    """A namenode down while the others checkpointed and purged etcd finds the txids it lacks
    gone. It says so once and is unhealthy (/jmx, ``haadmin checkHealth``), stays a standby
    while no active can give it an image, and starts again from the active's image as soon as
    one can (``-bootstrapStandby`` without a restart), then follows and can take over.
    Before, it failed on every try, reloading its namespace each time, for ever."""
    from tests.commands.helpers import failed, nnlite, ok
    haset = HASet(tmp_path, etcd_cluster, count=3, settings={
        "checkpoint.txns": "50", "checkpoint.period": "3600", "checkpoint.check.period": "1",
        "nnlite.ha.edits.retained": "0"})
    try:
        first = haset.start_all()
        late = next(i for i in range(3) if i != first)
        for n in range(5):
            assert mkdirs(haset.url(first), f"/early{n}")[0] == 200
        wait_for(lambda: haset.synced_txid(late) >= haset.synced_txid(first), 30,
                 "the standby to catch up")
        left_at = haset.synced_txid(late)
        haset.nodes[late].stop()
        for n in range(150):
            assert mkdirs(haset.url(first), f"/d{n}")[0] == 200
        etcd = Etcd(etcd_cluster.endpoints)
        layout = Layout.of("/nnlite", NAMESERVICE)

        def purged_past_it() -> bool:
            keys = etcd.range(layout.txns, layout.txns + b"\xff", keys_only=True).kvs
            return bool(keys) and min(layout.txid_of(k.key) for k in keys) > left_at + 60
        wait_for(purged_past_it, 120, "a checkpoint and a purge past the stopped standby")
        for i in range(3):
            if i != late:
                haset.kill(i)
        haset.start(late)

        def health() -> tuple[bool, str]:
            bean = haset.jmx_beans(late)[1]          # NameNodeStatus: the HA report
            return bean["HAHealthy"], bean.get("HAHealth") or ""
        wait_for(lambda: health()[0] is False, 60, "the standby to say it is unhealthy")
        assert "shared journal" in health()[1]
        message = failed(nnlite(None, "haadmin", "checkHealth", haset.ids[late], "--conf",
                                str(haset.conf), user=USER), "HealthCheckFailedException", 1)
        assert message.startswith(f"{haset.ids[late]} is unhealthy: cannot apply the shared")
        status, body = request(haset.url(late), "GET", "/")       # the status page, in red
        assert status == 200 and '<span class="badge bad" id="health">unhealthy' in body.decode()
        assert haset.jmx(late)["tag.HAState"] == "standby"
        haset.start(first)
        wait_for(lambda: haset.synced_txid(late) >= haset.synced_txid(first) > left_at + 150,
                 120, "the unhealthy standby to start again from the active's image")
        assert health()[0] is True and int(haset.jmx_beans(late)[1]["HARecoveries"]) >= 1
        assert ok(nnlite(None, "haadmin", "checkHealth", haset.ids[late], "--conf",
                         str(haset.conf), user=USER)) == []
        assert admin(haset.url(late), "FAILOVER")[0] == 200
        assert all(exists(haset.url(late), f"/d{n}") for n in range(0, 150, 7))
        assert exists(haset.url(late), "/early4")
    finally:
        haset.close()
