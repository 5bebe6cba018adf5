"""``nnlite catalog watch``: a local Structured Streaming checkpoint directory mirrored into a
real namenode in commit order.

Hand-built checkpoint directories (``write_batch``) keep most tests fast; they follow Spark's
local layout and write order (offsets, source log, state, then the commit, each through a
``.<name>.<uuid>.tmp`` rename, each with its ``.<name>.crc``). One test runs a real stateful
query and restarts it from the mirrored copy. The daemon runs as a real ``nnlite`` process
where killing or signalling it matters, in a thread where a test hooks ``on_change`` to look
at the remote copy after every change.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import signal
import subprocess
import threading
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner
from crc32c import crc32c

from nnlite import cli
from nnlite.catalog.client import CatalogClient
from nnlite.catalog.mirror import TEMP_SUFFIX, scan_remote
from nnlite.catalog.watch import IncompleteMirrorError, LocalDirError, ReconcileProgress, Watcher
from nnlite.client.webhdfs import WebHdfsClient
from tests.servers import ROOT, wait_for
from tests.spark.test_streaming_checkpoint import expected, start_query
from tests.spark.test_streaming_checkpoint import write_batch as publish_input

NNLITE = str(ROOT / ".venv" / "bin" / "nnlite")
PARTITIONS = 2


# ------------------------------------------------------------------ a hand-built checkpoint

def write_file(path: Path, data: bytes) -> None:
    """As Spark's local checkpoint file manager: temp name, rename, and a .crc beside it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.parent / f".{path.name}.{uuid.uuid4()}.tmp"
    temp.write_bytes(data)
    temp.rename(path)
    (path.parent / f".{path.name}.crc").write_bytes(b"crc\0" + data[:4])


def write_batch(root: Path, n: int) -> None:
    """Batch ``n`` in Spark's order: offsets, source log, state version n+1, commit."""
    if not (root / "metadata").exists():
        write_file(root / "metadata", json.dumps({"id": str(uuid.uuid4())}).encode())
        write_file(root / "state/0/_metadata/schema", b"schema v2")
    write_file(root / f"offsets/{n}", f"v1\n{{\"batchId\":{n}}}\n{{\"logOffset\":{n}}}".encode())
    write_file(root / f"sources/0/{n}", f"v1\n{{\"path\":\"file:/in/{n}.json\"}}".encode())
    for p in range(PARTITIONS):
        write_file(root / f"state/0/{p}/{n + 1}.delta", os.urandom(300 + 50 * p))
    write_file(root / f"commits/{n}", b"v1\n{\"nextBatchWatermarkMs\":0}")


def checkpoint(root: Path, batches: int) -> Path:
    for n in range(batches):
        write_batch(root, n)
    return root


def local_tree(root: Path) -> dict[str, bytes]:
    """What must be mirrored: every file but checksums and temps."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and not p.name.startswith(".")}


def remote_tree(client: WebHdfsClient, root: str) -> dict[str, bytes]:
    files, _ = scan_remote(client, root)
    return {rel: b"".join(client.read(f"{root}/{rel}")) for rel in files}


def remote_names(client: WebHdfsClient, root: str) -> set[str]:
    return set(scan_remote(client, root)[0])


def restorable(names: set[str], local: dict[str, bytes] | None = None) -> list[str]:
    """Problems of a remote copy: a commit without its offsets, source entry or state files
    (those of version N+1 that the local directory has)."""
    problems = []
    for name in names:
        m = re.fullmatch(r"commits/(\d+)", name)
        if not m:
            continue
        n = int(m.group(1))
        needed = {"metadata", f"offsets/{n}", f"sources/0/{n}"}
        needed |= {rel for rel in (local or {}) if re.fullmatch(rf"state/.*/{n + 1}\.\w+", rel)}
        problems += [f"{name} without {rel}" for rel in sorted(needed - names)]
    return problems


@pytest.fixture
def client(namenode):
    with WebHdfsClient(namenode.url, "tester") as c:
        yield c


class DaemonThread:
    """A ``Watcher`` running in a thread of the test process, stopped at the end."""

    def __init__(self, url: str, local: Path, into: str, **kw):
        self.client = WebHdfsClient(url, "tester", timeout=5)
        self.watcher = Watcher(self.client, str(local), into, **kw)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        try:
            self.watcher.run()
        except BaseException as exc:        # reported by stop()
            self.error = exc

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.watcher.stop()
        self.thread.join(30)
        self.client.close()
        assert not self.thread.is_alive(), "the watcher did not stop"
        assert self.error is None, self.error


# ------------------------------------------------------------------ one pass

def test_once_mirrors_every_file_but_checksums_and_temps_and_keeps_mtimes(client, tmp_path):
    local = checkpoint(tmp_path / "ckpt", 3)
    result = Watcher(client, str(local), "/mirror/q").once()

    assert result.complete and result.last_commit == 2
    assert result.uploaded == len(local_tree(local)) == 2 + 3 * (3 + PARTITIONS)
    assert remote_tree(client, "/mirror/q") == local_tree(local)
    for st in client.list("/mirror/q/offsets"):
        mtime_ms = (local / "offsets" / st["pathSuffix"]).stat().st_mtime_ns // 1_000_000
        assert st["modificationTime"] == mtime_ms

    again = Watcher(client, str(local), "/mirror/q").once()
    assert (again.uploaded, again.already) == (0, result.uploaded)


def test_commit_is_published_only_after_its_offsets_sources_and_state(client, namenode,
                                                                       tmp_path):
    """After every remote change the copy is restorable at its last commit, even though a
    naive walk meets commits/ first, and while new batches appear in the middle of a pass."""
    local = checkpoint(tmp_path / "ckpt", 4)
    seen, problems = [], []

    with WebHdfsClient(namenode.url, "tester") as observer:
        def check(action, rel, size):
            seen.append(rel)
            problems.extend(restorable(remote_names(observer, "/mirror/q"), local_tree(local)))
            if rel == "commits/1":
                write_batch(local, 4)   # a batch lands while the first pass copies
                write_batch(local, 5)

        with DaemonThread(namenode.url, local, "/mirror/q", interval=0.5, on_change=check):
            wait_for(lambda: remote_names(client, "/mirror/q") == set(local_tree(local)), 30,
                     "the new batches to be mirrored")
    assert not problems, problems[:5]
    commits = [rel for rel in seen if rel.startswith("commits/")]
    assert commits == [f"commits/{n}" for n in range(6)]
    assert seen.index("commits/0") > seen.index("state/0/1/1.delta")
    assert remote_tree(client, "/mirror/q") == local_tree(local)


def write_v2_batch(root: Path, n: int) -> dict[int, str]:
    """Batch ``n`` of a checkpoint of format version 2, in Spark's order: offsets, source
    log, each partition's ``<n+1>_<id>.changelog`` and its ``.crc`` sidecar (as
    ChecksumCheckpointFileManager writes it, with the local file system's ``.<name>.crc``
    beside both), then the commit naming the ids."""
    if not (root / "metadata").exists():
        write_file(root / "metadata", json.dumps({"id": str(uuid.uuid4())}).encode())
    write_file(root / f"offsets/{n}", (
        f'v1\n{{"batchWatermarkMs":0,"batchTimestampMs":{n + 1}}}\n'
        f'{{"logOffset":{n}}}').encode())
    write_file(root / f"sources/0/{n}", f"v1\n{{\"path\":\"file:/in/{n}.json\"}}".encode())
    ids = {}
    for p in range(PARTITIONS):
        ids[p] = str(uuid.uuid4())
        data = os.urandom(700 + 50 * p)
        name = f"state/0/{p}/{n + 1}_{ids[p]}.changelog"
        write_file(root / name, data)
        crc = crc32c(data)
        write_file(root / f"{name}.crc", json.dumps({
            "algorithm": "CRC32C", "value": crc - (1 << 32) if crc >= 1 << 31 else crc,
            "mainFileSize": len(data), "timestampMs": 1,
            "creator": {"executorId": "driver", "taskInfo": ""}}).encode())
    meta = {"nextBatchWatermarkMs": 0, "stateUniqueIds": {"0": [[ids[p]] for p in ids]}}
    write_file(root / f"commits/{n}", f"v2\n{json.dumps(meta)}".encode())
    return ids


def test_format_v2_checksum_sidecars_are_mirrored_before_their_commit(client, namenode,
                                                                       tmp_path):
    """Spark's ``<file>.crc`` sidecars (not the local file system's ``.<file>.crc``) are
    part of the checkpoint: mirrored, each before the commit of its version, and the copy
    validates with every sidecar checked against the mirrored file."""
    local = tmp_path / "ckpt"
    for n in range(3):
        write_v2_batch(local, n)
    seen = []
    result = Watcher(client, str(local), "/mirror/v2",
                     on_change=lambda action, rel, size: seen.append(rel)).once()
    assert result.complete and remote_tree(client, "/mirror/v2") == local_tree(local)
    sidecars = [rel for rel in seen if rel.endswith(".changelog.crc")]
    assert len(sidecars) == 3 * PARTITIONS
    for rel in sidecars:
        version = int(rel.rsplit("/", 1)[1].split("_")[0])
        assert seen.index(rel) < seen.index(f"commits/{version - 1}")
    with CatalogClient(namenode.url, "tester") as catalog:
        report = catalog.validate("/mirror/v2")
    assert report["restorable"] and report["issues"] == [], report


class Terminal:
    """A stream that says it is a terminal, as stderr is when a person runs the command."""

    def __init__(self):
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


def test_initial_reconciliation_counts_files_and_bytes_on_a_terminal(client, tmp_path):
    local = checkpoint(tmp_path / "ckpt", 2)
    terminal = Terminal()
    Watcher(client, str(local), "/mirror/q", progress=lambda: ReconcileProgress(terminal)).once()
    size = sum(len(b) for b in local_tree(local).values())
    assert terminal.text.endswith(f"12/12 files, {size}/{size} bytes\n")
    quiet = io.StringIO()
    Watcher(client, str(local), "/mirror/q", progress=lambda: ReconcileProgress(quiet)).once()
    assert quiet.getvalue() == ""


# ------------------------------------------------------------------ deletions

def test_retention_is_mirrored_once_the_newer_batches_are_there(client, tmp_path):
    local = checkpoint(tmp_path / "ckpt", 5)
    Watcher(client, str(local), "/mirror/q").once()
    # Spark's retention: newer batches first, then the old ones go (keep the last 3 batches)
    for n in (5, 6):
        write_batch(local, n)
    for p in [p for p in local.rglob("*") if p.is_file()]:
        if re.fullmatch(r"\.?[0-3](\.delta)?(\.crc)?", p.name):
            p.unlink()

    result = Watcher(client, str(local), "/mirror/q").once()
    assert result.complete and result.deleted == 4 * (3 + PARTITIONS) - PARTITIONS
    assert remote_tree(client, "/mirror/q") == local_tree(local)
    assert restorable(remote_names(client, "/mirror/q")) == []


def test_an_emptied_local_directory_never_empties_the_remote_copy(client, tmp_path):
    local = checkpoint(tmp_path / "ckpt", 3)
    Watcher(client, str(local), "/mirror/q").once()
    before = remote_tree(client, "/mirror/q")
    for p in sorted(local.rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()

    with pytest.raises(IncompleteMirrorError, match=r"no longer has.*batch 2"):
        Watcher(client, str(local), "/mirror/q").once()
    assert remote_tree(client, "/mirror/q") == before


# ------------------------------------------------------------------ failures

def test_namenode_killed_mid_mirror_is_logged_and_retried_until_it_is_back(tmp_path, caplog,
                                                                           start_namenode):
    server = start_namenode()
    local = checkpoint(tmp_path / "ckpt", 4)
    caplog.set_level(logging.INFO, logger="nnlite.catalog")      # the watcher and mirror.py

    def crash(action, rel, size):
        if rel == "commits/1":
            server.kill()           # SIGKILL, between two uploads of the same pass

    try:
        with DaemonThread(server.url, local, "/mirror/q", interval=0.5, on_change=crash):
            wait_for(lambda: "connection refused" in caplog.text, 10, "a logged failure")
            server = start_namenode("--port", str(server.port), name_dirs=server.name_dirs)
            with WebHdfsClient(server.url, "tester") as c:
                wait_for(lambda: remote_names(c, "/mirror/q") == set(local_tree(local)), 60,
                         "the mirror after the namenode came back")
                assert remote_tree(c, "/mirror/q") == local_tree(local)
    finally:
        server.stop()
    assert re.search(r"mirroring .* failed: cannot reach the namenode at .*connection refused"
                     r".*retrying in [\d.]+ s", caplog.text)
    assert [int(n) for n in re.findall(r"batch (\d+) mirrored", caplog.text)] == [0, 1, 2, 3]


def test_cli_once_exit_codes(namenode, tmp_path):
    runner = CliRunner()
    local = checkpoint(tmp_path / "ckpt", 1)
    args = ["catalog", "watch", str(local), "--into", "/mirror/q", "--once", "--user", "tester"]
    done = runner.invoke(cli.main, [*args, "--namenode", namenode.url])
    assert done.exit_code == 0, done.output
    down = runner.invoke(cli.main, [*args, "--namenode", "http://127.0.0.1:1"])
    assert down.exit_code == 3 and "connection refused" in down.output
    missing = runner.invoke(cli.main, ["catalog", "watch", str(tmp_path / "nope"), "--into",
                                       "/m", "--once", "--namenode", namenode.url])
    assert missing.exit_code == 1 and "nope does not exist: --once mirrors" in missing.output


# ------------------------------------------------------------------ a directory not there yet

def test_watch_started_before_the_query_waits_for_its_directory(client, namenode, tmp_path):
    """The query creates ``<tmp>/jobs/q1/ckpt`` (and its parents) after the watcher started:
    the watcher says once on stderr that it waits, then mirrors it."""
    local = tmp_path / "jobs" / "q1" / "ckpt"
    log = tmp_path / "watch.log"
    proc = start_watch(namenode, local, log)
    try:
        wait_for(lambda: "does not exist yet" in log.read_text(), 30, "the waiting notice")
        checkpoint(local, 2)
        wait_for(lambda: remote_names(client, "/mirror/q") == set(local_tree(local)), 30,
                 "the checkpoint to be mirrored once it appeared")
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, log.read_text()
    assert log.read_text().count(f"{local} does not exist yet: waiting for it to appear "
                                 f"(watching {tmp_path})") == 1
    assert remote_tree(client, "/mirror/q") == local_tree(local)


def test_a_directory_that_can_never_appear_fails_at_once(client, tmp_path, monkeypatch):
    (tmp_path / "file").write_bytes(b"not a directory")
    with pytest.raises(LocalDirError, match=f"{tmp_path}/file is not a directory, so "
                                            f"{tmp_path}/file/ckpt can never appear under it"):
        Watcher(client, str(tmp_path / "file" / "ckpt"), "/mirror/q")
    with pytest.raises(LocalDirError, match=f"{tmp_path}/file is not a directory: give"):
        Watcher(client, str(tmp_path / "file"), "/mirror/q")
    closed = tmp_path / "closed"
    closed.mkdir()
    listdir = os.listdir

    def refuse(path):       # as for a user without r-x on it (the tests run as root)
        if str(path) == str(closed):
            raise PermissionError(13, "Permission denied", str(path))
        return listdir(path)
    monkeypatch.setattr("nnlite.catalog.watch.os.listdir", refuse)
    with pytest.raises(LocalDirError, match=f"cannot list {closed} \\(Permission denied\\), "
                                            f"so {closed}/ckpt cannot be seen appearing in it"):
        Watcher(client, str(closed / "ckpt"), "/mirror/q")
    with pytest.raises(LocalDirError, match=f"cannot list {closed} \\(Permission denied\\): "
                                            f"its files cannot be mirrored"):
        Watcher(client, str(closed), "/mirror/q")


# ------------------------------------------------------------------ kill -9 and restart

def start_watch(namenode, local: Path, log: Path, *extra: str, faults: str = ""):
    env = {**os.environ, "NNLITE_FAULTS": faults, "HADOOP_USER_NAME": "tester"}
    with open(log, "ab") as out:
        return subprocess.Popen([NNLITE, "catalog", "watch", str(local), "--into", "/mirror/q",
                                 "--namenode", namenode.url, *extra],
                                cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env)


@pytest.mark.crash
def test_kill_9_mid_mirror_then_restart_loses_nothing_and_recopies_nothing(client, namenode,
                                                                           tmp_path):
    local = checkpoint(tmp_path / "ckpt", 30)
    total = len(local_tree(local))
    log = tmp_path / "watch.log"
    # slow each publish down between upload and rename, so the kill lands mid-mirror
    proc = start_watch(namenode, local, log, faults="watch.before-rename=sleep:0.03")
    try:
        wait_for(lambda: len([n for n in remote_names(client, "/mirror/q")
                              if not n.endswith(TEMP_SUFFIX)]) >= total // 3, 60,
                 "a third of the files to be mirrored")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)

    after_kill = _statuses(client, "/mirror/q")
    finals = {rel for rel in after_kill if not rel.endswith(TEMP_SUFFIX)}
    assert total // 3 <= len(finals) < total
    remote = remote_tree(client, "/mirror/q")
    assert all(remote[rel] == local_tree(local)[rel] for rel in finals)   # none half-written
    assert restorable(finals, local_tree(local)) == []

    proc = start_watch(namenode, local, log, "--once")
    assert proc.wait(60) == 0, log.read_text()
    summary = re.findall(r"uploaded (\d+) files \(\d+ bytes\), (\d+) already mirrored",
                         log.read_text())[-1]
    assert (int(summary[0]), int(summary[1])) == (total - len(finals), len(finals))
    now = _statuses(client, "/mirror/q")
    assert all(now[rel]["fileId"] == after_kill[rel]["fileId"] for rel in finals)
    assert remote_tree(client, "/mirror/q") == local_tree(local)   # and no temp is left


def _statuses(client: WebHdfsClient, root: str) -> dict[str, dict]:
    out, pending = {}, [""]
    while pending:
        rel = pending.pop()
        for st in client.list(f"{root}/{rel}" if rel else root):
            child = f"{rel}/{st['pathSuffix']}" if rel else st["pathSuffix"]
            if st["type"] == "DIRECTORY":
                pending.append(child)
            else:
                out[child] = st
    return out


# ------------------------------------------------------------------ a real Spark query

@pytest.mark.spark
def test_live_query_is_mirrored_and_restarts_from_the_copy(spark, client, namenode, tmp_path):
    src, local = tmp_path / "in", tmp_path / "ckpt"
    src.mkdir()
    local.mkdir()
    batches = [[("a", 1), ("b", 2)], [("b", 10), ("c", 20)], [("a", 100), ("d", 300)]]
    log = tmp_path / "watch.log"
    proc = start_watch(namenode, local, log, "--interval", "1")
    try:
        query = start_query(spark, src, str(local), "watch_live")
        try:
            for i, rows in enumerate(batches):
                publish_input(src, f"{i}.json", rows)
                query.processAllAvailable()
        finally:
            query.stop()
        assert query.lastProgress["batchId"] == 2
        wait_for(lambda: remote_names(client, "/mirror/q") == set(local_tree(local)), 60,
                 "the watcher to catch up")
        assert remote_tree(client, "/mirror/q") == local_tree(local)
        assert any(rel.endswith(".delta") for rel in local_tree(local))
        assert not [n for n in remote_names(client, "/mirror/q")
                    if n.rsplit("/", 1)[-1].startswith(".") or n.endswith(".crc")]
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(30)
    assert code == 0, log.read_text()
    text = log.read_text()
    assert re.search(r"batch 2 mirrored: \d+ files, \d+ bytes", text), text
    assert "stopped watching" in text

    more = [("a", 1000), ("e", 5)]
    publish_input(src, "3.json", more)
    copy = f"webhdfs://127.0.0.1:{namenode.port}/mirror/q"
    query = start_query(spark, src, copy, "watch_restored")
    try:
        query.processAllAvailable()
        assert query.lastProgress["batchId"] == 3        # resumed after the mirrored batch 2
        rows = {r["key"]: (r["n"], r["total"]) for r in spark.table("watch_restored").collect()}
        assert rows == expected(*batches, more)
    finally:
        query.stop()
    assert query.exception() is None


@pytest.mark.spark
def test_live_query_commits_reach_nnlite_only_after_their_files(spark, client, namenode,
                                                               tmp_path):
    """The ordering check of the hand-built test, on what a real query writes."""
    src, local = tmp_path / "in", tmp_path / "ckpt"
    src.mkdir()
    local.mkdir()
    problems, commits = [], []
    with WebHdfsClient(namenode.url, "tester") as observer:
        def check(action, rel, size):
            commits.extend([rel] if rel.startswith("commits/") else [])
            problems.extend(restorable(remote_names(observer, "/mirror/q"), local_tree(local)))

        with DaemonThread(namenode.url, local, "/mirror/q", interval=0.5, on_change=check):
            query = start_query(spark, src, str(local), "watch_order")
            try:
                for i in range(3):
                    publish_input(src, f"{i}.json", [("k", i)])
                    query.processAllAvailable()
            finally:
                query.stop()
            wait_for(lambda: remote_names(client, "/mirror/q") == set(local_tree(local)), 60,
                     "the watcher to catch up")
    assert not problems, problems[:5]
    assert commits == ["commits/0", "commits/1", "commits/2"]
