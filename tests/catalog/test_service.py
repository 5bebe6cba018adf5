"""The catalog served by a real namenode: the HTTP API and its errors, the CLI, permissions,
the busy check, concurrent job checkpoints, the background policy, and a rollback that is
all or nothing across SIGKILL."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest
from crc32c import crc32c

from nnlite.catalog.client import CatalogClient, CheckpointBusy, IncompleteCheckpoint, NotRestorable
from nnlite.client import errors as client_errors
from nnlite.client.webhdfs import WebHdfsClient
from tests.catalog.remote import USER, running, share, start, write_checkpoint
from tests.servers import ROOT, wait_for

Q = "/ckpt/q1"


def nnlite(server, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nnlite.cli", "catalog", *args, "--namenode",
                           server.url, "--user", USER], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)


def test_ls_show_latest_validate_over_http(hdfs, catalog):
    write_checkpoint(hdfs, Q, 4)
    hdfs.create(f"{Q}/offsets/4", b'v1\n{"batchWatermarkMs":0,"batchTimestampMs":1}')
    [row] = catalog.ls("/")
    assert (row["path"], row["kind"], row["lastBatch"], row["restorableBatch"]) == (
        Q, "streaming", 3, 3)
    assert row["health"] == "ok" and row["files"] == 1 + 4 * 5 + 1
    doc = catalog.show(Q)
    assert [b["batch"] for b in doc["batches"]] == [0, 1, 2, 3, 4]
    assert doc["batches"][-1]["commit"] is False and doc["operators"][0]["partitions"] == 2
    assert catalog.latest(Q)["latest"] == 3
    report = catalog.validate(Q)
    assert report["restorable"] and [i["code"] for i in report["issues"]] == ["pending-batch"]


def test_cli_prints_tables_and_validate_exit_codes(server, hdfs):
    write_checkpoint(hdfs, Q, 3)
    ls = nnlite(server, "ls", "/")
    assert ls.returncode == 0 and ls.stdout.splitlines()[1].split()[:5] == [
        Q, "streaming", "2", "2", "ok"]
    assert nnlite(server, "latest", Q).stdout.strip() == "2"
    assert nnlite(server, "validate", Q).returncode == 0
    hdfs.create(f"{Q}/commits/2", b"v1\n{\"next", overwrite=True)
    bad = nnlite(server, "validate", Q)
    assert bad.returncode == 1
    assert f"{Q}/commits/2 line 2 is not valid JSON" in bad.stdout
    assert f"nnlite catalog rollback {Q} --to-batch 1" in bad.stdout
    shown = nnlite(server, "show", Q, "--json")
    assert json.loads(shown.stdout)["lastBatch"] == 2


def test_bad_requests_get_one_line_errors(server, hdfs, catalog):
    write_checkpoint(hdfs, Q, 2)
    with pytest.raises(client_errors.IllegalArgumentError, match="not an integer"):
        catalog._call("POST", Q, "ROLLBACK", "Rollback", tobatch="abc")
    with pytest.raises(client_errors.IllegalArgumentError, match="Unknown catalog operation"):
        catalog._call("GET", Q, "FROBNICATE", "x")
    with pytest.raises(client_errors.PathNotFoundError):
        catalog.show("/missing")
    with pytest.raises(NotRestorable, match="batch 9 is not committed"):
        catalog.rollback(Q, 9)
    missing = nnlite(server, "rollback", Q, "--to-batch", "9")
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1
    assert "Traceback" not in missing.stderr


def test_others_cannot_change_a_checkpoint_they_cannot_write(server, hdfs):
    write_checkpoint(hdfs, Q, 3)
    share(hdfs, "/ckpt")
    with CatalogClient(server.url, "alice") as alice:
        assert alice.ls("/")[0]["lastBatch"] == 2         # reading is allowed (755)
        with pytest.raises(client_errors.AccessControlError):
            alice.rollback(Q, 1)
        with pytest.raises(client_errors.AccessControlError):
            alice.retain(Q, 1)


def test_rollback_is_refused_while_the_query_writes(start_namenode):
    with running(start_namenode, "nnlite.catalog.quiet=600") as (_, hdfs, catalog):
        write_checkpoint(hdfs, Q, 3)
        with pytest.raises(CheckpointBusy, match="stop the query"):
            catalog.rollback(Q, 1)
        assert catalog.ls("/")[0]["health"] == "ok"     # nothing open: it may have stopped
        assert catalog.latest(Q)["latest"] == 2


def test_rollback_is_refused_while_a_file_of_the_query_is_open(server, hdfs, catalog):
    from tests.namenode.http.helpers import end_upload, raw_upload_start, send_chunk
    write_checkpoint(hdfs, Q, 3)
    sock = raw_upload_start(server, f"{Q}/state/0/0/4.delta", f"op=CREATE&user.name={USER}")
    send_chunk(sock, b"half a delta")
    wait_for(lambda: catalog.ls("/")[0]["health"] == "writing", 10, "the delta to be open")
    with pytest.raises(CheckpointBusy, match=f"{Q}/state/0/0/4.delta is open"):
        catalog.rollback(Q, 1)
    assert catalog.ls("/")[0]["health"] == "writing"
    send_chunk(sock, b", the rest")
    assert end_upload(sock)[0] == 201
    assert catalog.rollback(Q, 1)["removedBatches"] == [2]


def test_a_rollback_takes_over_a_writer_silent_past_the_soft_limit(tmp_path):
    """A query stopped mid-write leaves a file open. While its writer is within the soft
    limit (60 s) the refusal names the file, its holder, its last progress and the remedy,
    and ``--wait`` says so; past it the rollback takes the lease over, as a new writer may
    (the file closes, the writer's late bytes fail), instead of waiting for the hard limit
    (1200 s). The writer is a raw WebHDFS upload whose only progress is its start."""
    from nnlite.catalog.http import install
    from tests.namenode.http.helpers import end_upload, raw_upload_start, send_chunk
    from tests.servers import NamenodeInThread
    now, delta = [1000.0], f"{Q}/state/0/0/4.delta"     # the lease table's clock, moved
    with NamenodeInThread(str(tmp_path / "name"), "nnlite.catalog.quiet=0",
                          extensions=[install], lease_clock=lambda: now[0]) as nn, \
            WebHdfsClient(nn.url, USER) as hdfs, CatalogClient(nn.url, USER) as catalog:
        write_checkpoint(hdfs, Q, 3)
        sock = raw_upload_start(nn, delta, f"op=CREATE&user.name={USER}")
        wait_for(lambda: catalog.ls("/")[0]["health"] == "writing", 10, "the delta to be open")
        now[0] += 59
        with pytest.raises(CheckpointBusy) as refused:
            catalog.rollback(Q, 1)
        why = str(refused.value)
        assert f"({delta} is open by webhdfs-create-" in why and "59.0 s ago" in why
        assert f"'hdfs debug recoverLease -path {delta}'" in why
        waiting = subprocess.Popen(
            [sys.executable, "-m", "nnlite.cli", "catalog", "rollback", Q, "--to-batch", "1",
             "--wait", "--namenode", nn.url, "--user", USER], cwd=ROOT, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            said = waiting.stderr.readline()
            assert said.startswith("nnlite: waiting: ") and f"{delta} is open by" in said
            now[0] += 2
            out, _ = waiting.communicate(timeout=60)
        finally:
            waiting.kill()
        assert waiting.returncode == 0, out
        assert "rolled back to batch 1" in out and f"took over the lease of {delta}" in out
        send_chunk(sock, b"late")
        status, body = end_upload(sock)
        assert status == 403 and b"LeaseExpiredException" in body
        assert catalog.ls("/")[0]["health"] == "ok" and catalog.latest(Q)["latest"] == 1


def test_a_renewing_dfsclient_refuses_the_rollback_until_recover_lease(tmp_path):
    """Over hdfs://, as Spark's DFSClient writes: a client that keeps renewing its lease (a
    stopped query whose JVM still runs) refuses the rollback however old the file, and the
    refusal's remedy (``hdfs debug recoverLease``, the recoverLease call) ends it; the other
    file, whose client went silent past the soft limit, the rollback takes over itself --
    only once no live writer is left: a refused rollback changes nothing."""
    from nnlite.catalog.http import install
    from nnlite.formats.hadoop import client_namenode as cn
    from nnlite.formats.hadoop.acl import FsPermissionProto
    from tests.namenode.rpc.rawclient import RawClient
    from tests.servers import NamenodeInThread
    now = [1000.0]                  # the lease table's clock, moved: no limit is waited for
    live, gone = f"{Q}/state/0/0/4.delta", f"{Q}/state/0/1/4.delta"

    def create(client: RawClient, path: str, name: str) -> None:
        header, _ = client.call("create", cn.CreateRequestProto(
            src=path, masked=FsPermissionProto(perm=0o644), clientName=name,
            createFlag=cn.CreateFlagProto.CREATE, createParent=True, replication=1,
            blockSize=1 << 20))
        assert not header.exceptionClassName, header.errorMsg
    with NamenodeInThread(str(tmp_path / "name"), "nnlite.catalog.quiet=0",
                          extensions=[install], lease_clock=lambda: now[0]) as nn, \
            WebHdfsClient(nn.url, USER) as hdfs, CatalogClient(nn.url, USER) as catalog, \
            RawClient(nn.service.rpc_port).connect(user=USER) as spark, \
            RawClient(nn.service.rpc_port).connect(user=USER) as admin:
        write_checkpoint(hdfs, Q, 3)
        create(spark, live, "DFSClient_NONMAPREDUCE_spark_1")
        create(spark, gone, "DFSClient_NONMAPREDUCE_gone_1")
        for _ in range(3):                          # 177 s; the renewer's calls every 59 s
            now[0] += 59
            spark.answer("renewLease", cn.RenewLeaseRequestProto(
                clientName="DFSClient_NONMAPREDUCE_spark_1"))
        with pytest.raises(CheckpointBusy) as refused:
            catalog.rollback(Q, 1)
        why = str(refused.value)
        # the lease table's holder (the RPC client's name maps to it in namenode/rpc/)
        assert f"({live} is open by webhdfs-create-" in why and "on 127.0.0.1" in why
        assert "0.0 s ago" in why and f"recoverLease -path {live}'" in why
        assert admin.answer("isFileClosed", cn.IsFileClosedRequestProto(src=gone)).result \
            is False                                # nothing taken over by the refusal
        assert admin.answer("recoverLease", cn.RecoverLeaseRequestProto(
            src=live, clientName="DFSClient_recover")).result
        done = catalog.rollback(Q, 1)
        assert done["removedBatches"] == [2]
        assert [(t["path"], t["silentSeconds"]) for t in done["recoveredLeases"]] == [
            (gone, 177.0)]
        assert catalog.ls("/")[0]["health"] == "ok" and catalog.latest(Q)["latest"] == 1


def test_concurrent_begins_on_one_job_get_distinct_ids(catalog, server):
    ids, failures = [], []

    def worker():
        try:
            with CatalogClient(server.url, USER) as mine:
                for _ in range(5):
                    ids.append(mine.begin("/jobs/etl")["id"])
        except Exception as exc:       # surfaced below
            failures.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not failures
    assert sorted(ids) == list(range(1, 21))


def test_job_lifecycle_over_http(hdfs, catalog):
    first = catalog.begin("/jobs/etl")
    hdfs.create(first["path"] + "/part-00000", b"rows")
    hdfs.create(first["path"] + "/_SUCCESS", b"")
    assert catalog.complete("/jobs/etl", first["id"])["path"] == "/jobs/etl/chk-1"
    second = catalog.begin("/jobs/etl")
    hdfs.create(second["path"] + "/part-00000", b"rows")
    with pytest.raises(IncompleteCheckpoint, match="1 part files, 2 expected"):
        catalog.complete("/jobs/etl", second["id"], 2)
    assert catalog.latest_job("/jobs/etl")["id"] == 1
    catalog.abort("/jobs/etl", second["id"])
    assert not hdfs.exists(second["path"])
    [row] = catalog.ls("/jobs")
    assert (row["kind"], row["lastBatch"], row["inProgress"]) == ("job", 1, [])


def test_gc_removes_old_temp_files_and_abandoned_rdd_checkpoints(start_namenode):
    with running(start_namenode, "nnlite.catalog.quiet=0", "nnlite.catalog.gc.tmp-ttl=0",
                 "nnlite.catalog.gc.rdd-ttl=0") as (_, hdfs, catalog):
        write_checkpoint(hdfs, Q, 2)
        hdfs.create(f"{Q}/offsets/.2.5f0e.tmp", b"v1\n")
        hdfs.create("/rdd/7a1e/rdd-3/part-00000", b"x")
        dry = catalog.gc("/", dry_run=True)
        assert [p["path"] for p in dry["removed"]] == [f"{Q}/offsets/.2.5f0e.tmp", "/rdd/7a1e"]
        assert hdfs.exists("/rdd/7a1e")
        catalog.gc("/")
        assert not hdfs.exists("/rdd/7a1e") and not hdfs.exists(f"{Q}/offsets/.2.5f0e.tmp")
        assert catalog.validate(Q)["restorable"]


def test_gc_says_what_it_kept_and_when_it_will_remove_it(server, hdfs):
    """The temp file validate warns about is younger than nnlite.catalog.gc.tmp-ttl (1 h by
    default): gc keeps it, and says so."""
    write_checkpoint(hdfs, Q, 2)
    hdfs.create(f"{Q}/offsets/.2.5f0e.tmp", b"v1\n")
    warned = nnlite(server, "validate", Q).stdout
    assert f"leftover temporary file {Q}/offsets/.2.5f0e.tmp" in warned
    assert "nnlite catalog gc removes it once unchanged for nnlite.catalog.gc.tmp-ttl" in warned
    done = nnlite(server, "gc", "/ckpt")
    assert done.returncode == 0, done.stderr
    kept, total = done.stdout.splitlines()
    assert kept.startswith(f"kept {Q}/offsets/.2.5f0e.tmp (temporary file, 3 B): last changed ")
    assert "less than nnlite.catalog.gc.tmp-ttl = 1 h ago; gc removes it from " in kept
    assert total == "removed 0 paths, 0 B freed; kept 1 (see above)"
    assert hdfs.exists(f"{Q}/offsets/.2.5f0e.tmp")


def test_the_retention_policy_runs_in_the_background(start_namenode):
    with running(start_namenode, "nnlite.catalog.quiet=0", "nnlite.catalog.retain=/ckpt=2",
                 "nnlite.catalog.policy.interval=0.2") as (nn, hdfs, catalog):
        write_checkpoint(hdfs, Q, 6)
        wait_for(lambda: [b["batch"] for b in catalog.show(Q)["batches"]] == [3, 4, 5], 20,
                 "the policy to keep batches 3-5")
        batches = catalog.show(Q)["batches"]     # offsets 3 stay: restarting after 4 reads them
        assert [(b["batch"], b["commit"]) for b in batches] == [(3, False), (4, True), (5, True)]
        assert catalog.validate(Q)["restorable"]
    assert "catalog policy: /ckpt/q1 keep 2" in nn.log.read_text()


@pytest.mark.crash
def test_rollback_is_all_or_nothing_across_sigkill(start_namenode):
    nn = start(start_namenode, "nnlite.catalog.quiet=0")
    with WebHdfsClient(nn.url, USER) as hdfs:
        write_checkpoint(hdfs, Q, 8)
    nn.stop()
    # The rollback's record is the first write after this start; it is torn halfway.
    nn = start(start_namenode, "nnlite.catalog.quiet=0", name_dirs=nn.name_dirs,
               env={"NNLITE_FAULTS": "journal.partial-write=kill@1"})
    with (CatalogClient(nn.url, USER) as catalog,
          pytest.raises(client_errors.NamenodeUnreachableError)):
        catalog.rollback(Q, 3)
    nn.proc.wait(30)
    nn = start(start_namenode, "nnlite.catalog.quiet=0", name_dirs=nn.name_dirs)
    with CatalogClient(nn.url, USER) as catalog:
        assert catalog.show(Q)["lastBatch"] == 7          # nothing of it applied
        assert catalog.validate(Q)["restorable"]
        catalog.rollback(Q, 3)                           # acknowledged ...
    nn.kill()                                            # ... then a crash
    nn = start(start_namenode, "nnlite.catalog.quiet=0", name_dirs=nn.name_dirs)
    with CatalogClient(nn.url, USER) as catalog:
        doc = catalog.show(Q)
        assert doc["lastBatch"] == 3 and [b["batch"] for b in doc["batches"]] == [0, 1, 2, 3]
        assert catalog.validate(Q)["restorable"]


def test_show_details_every_kind_that_ls_lists(hdfs, catalog):
    write_checkpoint(hdfs, Q, 2)
    job = catalog.begin("/jobs/etl")
    hdfs.create(f"{job['path']}/part-00000", b"rows")
    hdfs.create(f"{job['path']}/_SUCCESS", b"")
    catalog.complete("/jobs/etl", job["id"])
    catalog.begin("/jobs/etl")
    hdfs.create("/rdd/7a1e/rdd-3/part-00000", b"x" * 10)
    hdfs.create("/dstream/app/checkpoint-1700000000000", b"")
    hdfs.create("/dstream/app/checkpoint-1700000000000.bk", b"old")
    hdfs.create("/dstream/app/checkpoint-1700000010000", b"newest")
    listed = {row["path"]: row["kind"] for row in catalog.ls("/")}
    assert listed == {Q: "streaming", "/jobs/etl": "job", "/rdd/7a1e": "rdd",
                      "/dstream/app": "dstream"}
    for path, kind in listed.items():
        assert catalog.show(path)["kind"] == kind
    jobs = catalog.show("/jobs/etl")
    assert [(c["id"], c["complete"], c["parts"]) for c in jobs["checkpoints"]] == [
        (1, True, 1), (2, False, 0)]
    assert jobs["latest"] == 1
    assert [(r["rdd"], r["bytes"]) for r in catalog.show("/rdd/7a1e")["rdds"]] == [(3, 10)]
    times = catalog.show("/dstream/app")["checkpoints"]
    assert [(c["bytes"], c["backupBytes"], c["restorable"]) for c in times] == [
        (0, 3, True), (6, None, True)]


def test_validate_and_latest_agree_with_ls_on_every_kind(server, hdfs, catalog):
    """Whatever ``ls`` lists, ``validate`` judges and ``latest`` answers for, the three
    agreeing: the restorable id is ``latest``'s, and restorable as it is means health ok."""
    write_checkpoint(hdfs, Q, 2)
    job = catalog.begin("/jobs/daily")
    hdfs.create(f"{job['path']}/part-00000", b"rows")
    hdfs.create(f"{job['path']}/_SUCCESS", b"")
    catalog.complete("/jobs/daily", job["id"])
    for part in ("rdd-3/part-00000", "rdd-3/part-00001", "rdd-4/part-00000",
                 "rdd-4/part-00002"):
        hdfs.create(f"/rdd/7a1e/{part}", b"x")
    hdfs.create("/dstream/app/checkpoint-1700000000000", b"older")
    hdfs.create("/dstream/app/checkpoint-1700000010000", b"")
    rows = {row["path"]: row for row in catalog.ls("/")}
    assert {p: r["health"] for p, r in rows.items()} == {
        Q: "ok", "/jobs/daily": "ok", "/rdd/7a1e": "degraded", "/dstream/app": "degraded"}
    for path, row in rows.items():
        doc, latest = catalog.validate(path), catalog.latest(path)["latest"]
        assert (doc["kind"], doc["lastBatch"], doc["restorableBatch"]) == (
            row["kind"], row["lastBatch"], row["restorableBatch"])
        assert (latest if row["kind"] == "streaming" else latest["id"]) == row[
            "restorableBatch"]
        assert doc["restorable"] == (row["health"] == "ok")
    assert "/rdd/7a1e/rdd-4/part-00001 is missing" in catalog.validate("/rdd/7a1e")[
        "issues"][0]["message"]
    assert catalog.latest("/dstream/app")["latest"] == {
        "id": 1700000000000, "path": "/dstream/app/checkpoint-1700000000000"}


def test_validate_of_a_job_checkpoint_exits_0_only_while_it_reads_as_it_completed(server,
                                                                                 hdfs,
                                                                                 catalog):
    for _ in range(2):
        job = catalog.begin("/jobs/daily")
        hdfs.create(f"{job['path']}/part-00000", b"rows")
        catalog.complete("/jobs/daily", job["id"], 1)
    done = nnlite(server, "validate", "/jobs/daily")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "/jobs/daily: restorable at checkpoint 2"
    hdfs.delete("/jobs/daily/chk-2/part-00000")
    done = nnlite(server, "validate", "/jobs/daily")
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        "ERROR [unrestorable-checkpoint] /jobs/daily/chk-2/part-00000 is missing (4 bytes when "
        "the checkpoint completed)",
        "/jobs/daily: NOT restorable as it is (last complete checkpoint 2, newest restorable 1)",
        "to repair: catalog latest (and read_latest) answers /jobs/daily/chk-1, the newest that "
        "restores; /jobs/daily/chk-2 is newer: write a new checkpoint, or remove it (nnlite dfs "
        "rm -r /jobs/daily/chk-2)"]
    assert nnlite(server, "latest", "/jobs/daily").stdout.strip() == "1"


def test_relative_paths_are_under_the_users_home(server, hdfs):
    write_checkpoint(hdfs, f"/user/{USER}/ckpt/q1", 2)
    listed = nnlite(server, "ls", "ckpt")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[1].split()[0] == f"/user/{USER}/ckpt/q1"
    assert nnlite(server, "latest", "ckpt/q1").stdout.strip() == "1"


def test_a_rollback_under_a_snapshottable_directory_can_be_undone(server, hdfs):
    """The rollback takes a snapshot first and names it; the removed batches are there."""
    write_checkpoint(hdfs, Q, 4)
    hdfs.allow_snapshot("/ckpt")
    done = nnlite(server, "rollback", Q, "--to-batch", "1")
    assert done.returncode == 0, done.stderr
    taken = done.stdout.strip().rsplit("snapshot ", 1)[1].split()[0]
    assert taken.startswith("/ckpt/.snapshot/rollback-1-")
    assert not hdfs.exists(f"{Q}/commits/3")
    assert hdfs.exists(f"{taken}/q1/commits/3")
    assert b"".join(hdfs.read(f"{taken}/q1/offsets/3")).startswith(b"v1")
    entries = hdfs.snapshot_diff("/ckpt", taken.rsplit("/", 1)[1])
    assert {"type": "DELETE", "sourcePath": "q1/commits/3"} in entries


def test_gc_does_not_count_what_a_snapshot_keeps_as_freed(start_namenode):
    with running(start_namenode, "nnlite.catalog.quiet=0", "nnlite.catalog.gc.rdd-ttl=0") as (
            _, hdfs, catalog):
        hdfs.create("/rdd/7a1e/rdd-3/part-00000", b"12345")
        hdfs.allow_snapshot("/rdd")
        hdfs.create_snapshot("/rdd", "keep")
        hdfs.create("/rdd/9b2f/rdd-1/part-00000", b"123")
        done = catalog.gc("/")
        assert sorted(p["path"] for p in done["removed"]) == ["/rdd/7a1e", "/rdd/9b2f"]
        assert (done["bytesFreed"], done["bytesKeptBySnapshots"]) == (3, 5)
        assert b"".join(hdfs.read("/rdd/.snapshot/keep/7a1e/rdd-3/part-00000")) == b"12345"


def sidecar(data: bytes, *, size: int | None = None, flip: int = 0) -> bytes:
    """A ``.crc`` as ChecksumCheckpointFileManager writes it for ``data`` (``flip`` XORed
    into its CRC32C, ``size`` instead of the real one)."""
    crc = crc32c(data) ^ flip
    return json.dumps({"algorithm": "CRC32C", "value": crc - (1 << 32) if crc >= 1 << 31
                       else crc, "mainFileSize": len(data) if size is None else size,
                       "timestampMs": 1, "creator": {"executorId": "driver",
                                                     "taskInfo": ""}}).encode()


def test_state_files_are_checked_against_their_checksum_files(server, hdfs, catalog):
    """Each state file with a ``.crc`` is checked with a CRC32C composed from the store's
    chunk CRCs (a file written in 4 KiB blocks, of 20 chunks, included): a mismatch the
    last batch's restore reads is an error, one nothing reads a warning."""
    write_checkpoint(hdfs, Q, 3)                        # state versions 1..3
    big = bytes(range(256)) * 40                        # 10240 bytes: 3 blocks
    hdfs.create(f"{Q}/state/0/0/3.delta", big, overwrite=True, block_size=4096)
    for p in range(2):
        for v in range(1, 4):
            path = f"{Q}/state/0/{p}/{v}.delta"
            hdfs.create(f"{path}.crc", sidecar(b"".join(hdfs.read(path))))
    assert catalog.validate(Q)["issues"] == []
    hdfs.create(f"{Q}/state/0/0/3.delta.crc", sidecar(big, flip=1), overwrite=True)
    hdfs.create(f"{Q}/state/0/1/4.delta", b"in flight")
    hdfs.create(f"{Q}/state/0/1/4.delta.crc", sidecar(b"in flight", size=3))
    report = catalog.validate(Q)
    assert not report["restorable"] and report["restorableBatch"] == 1
    assert [(i["level"], i["code"], i["path"]) for i in report["issues"]
            if i["code"] == "checksum-mismatch"] == [
        ("error", "checksum-mismatch", f"{Q}/state/0/0/3.delta"),
        ("warning", "checksum-mismatch", f"{Q}/state/0/1/4.delta")]
    assert any("9 bytes with CRC32C" in i["message"] and "the .crc says 3 bytes" in
               i["message"] for i in report["issues"])
    assert catalog.latest(Q)["latest"] == 1
