"""Disk faults with real processes on a real full file system (``small_disk``,
tests/namenode/conftest.py): what the namenode shows, keeps and says when its name directory
fills up."""

from __future__ import annotations

import subprocess
import sys
import threading

import requests

from nnlite.commands.support import EXIT_CORRUPT
from nnlite.namenode.storage.namedir import NameDir
from tests.secondary.test_daemon import start_daemon
from tests.servers import ROOT, wait_for

NO_RESERVE = ("-D", "dfs.namenode.resource.du.reserved=0")


def test_a_journal_that_cannot_sync_stops_the_namenode_and_nothing_unsaved_was_seen(
        small_disk, start_namenode):
    """The only name directory fills while clients write and read: the namenode stops (as
    Hadoop's NameNode terminates when its edit log cannot sync) with one line and the
    storage exit code; every MKDIRS it acknowledged and every directory a reader was shown
    is there after a restart with space freed."""
    name = str(small_disk.path)
    nn = start_namenode(*NO_RESERVE, name_dirs=[name])  # no safe mode before the disk is full
    acked, seen, stop = [], set(), threading.Event()

    def reader():
        with requests.Session() as http:
            while not stop.is_set():
                probe = len(acked)          # the directory being made right now
                try:
                    r = http.get(nn.webhdfs(f"/d{probe}"), params={"op": "GETFILESTATUS"},
                                 timeout=5)
                except requests.RequestException:
                    return
                if r.status_code == 200:
                    seen.add(probe)

    watcher = threading.Thread(target=reader)
    watcher.start()
    try:
        small_disk.fill()
        with requests.Session() as http:
            for i in range(200_000):
                try:
                    r = http.put(nn.webhdfs(f"/d{i}"), params={"op": "MKDIRS",
                                                               "user.name": "root"}, timeout=10)
                except requests.RequestException:
                    break
                if r.status_code != 200:
                    assert "No healthy name directory" in r.text, r.text
                    break
                acked.append(i)
        assert nn.proc.wait(timeout=30) == 3
    finally:
        stop.set()
        watcher.join()
        nn.kill()
    log = nn.log.read_text()
    assert "nnlite: StorageError: No healthy name directory is left" in log, log[-3000:]
    assert "Traceback" not in log
    assert acked, "the disk filled before the first MKDIRS"

    small_disk.free()
    again = start_namenode(*NO_RESERVE, name_dirs=[name])
    with requests.Session() as http:
        def exists(i):
            r = http.get(again.webhdfs(f"/d{i}"), params={"op": "GETFILESTATUS"})
            return r.status_code == 200
        missing = [i for i in acked if not exists(i)]
        unseen = [i for i in sorted(seen) if not exists(i)]
    assert missing == [] and unseen == [], (missing, unseen)
    assert NameDir(name).is_formatted()


def mkdirs(nn, names, user="root") -> list[str]:
    """MKDIRS each name; the ones acknowledged (200)."""
    done = []
    with requests.Session() as http:
        for name in names:
            r = http.put(nn.webhdfs(name), params={"op": "MKDIRS", "user.name": user},
                         timeout=10)
            if r.status_code == 200:
                done.append(name)
    return done


def name_dirs(nn) -> dict[str, bool]:
    r = requests.get(f"{nn.url}/admin", params={"op": "REPORT", "user.name": "root"},
                     timeout=10)
    return {d["path"]: d["healthy"] for d in r.json()["Report"]["nameDirs"]}


def test_a_full_redundant_name_dir_neither_blocks_startup_nor_stays_lost(
        tmp_path, small_disk, start_namenode):
    """Two name dirs, the second on a disk that fills: the running namenode drops it and
    goes on; restarted while it is still full, it starts on the healthy one and reports the
    other failed (no traceback, nothing half-copied left in it); once it has space the next
    edits roll restores it, and it alone then holds every acknowledged op."""
    good, small = str(tmp_path / "good"), str(small_disk.path)
    nn = start_namenode(name_dirs=[good, small])
    acked = mkdirs(nn, [f"/before/{i}" for i in range(20)])
    small_disk.fill()
    acked += mkdirs(nn, [f"/during/{i}" for i in range(400)])  # the full dir drops out
    assert name_dirs(nn) == {good: True, small: False}
    assert "1 of 2 name directories failed" in requests.get(nn.url + "/").text
    assert nn.stop() == 0
    assert len(acked) == 420

    again = start_namenode(name_dirs=[good, small])
    log = again.log.read_text()
    assert f"name directory {small} failed and is dropped: cannot resync it at startup" \
        in log and "Traceback" not in log, log[-3000:]
    assert not list(small_disk.path.glob("current/*.tmp"))
    assert name_dirs(again) == {good: True, small: False}
    acked += mkdirs(again, [f"/after/{i}" for i in range(10)])

    small_disk.free()
    r = requests.put(f"{again.url}/admin", params={"op": "ROLLEDITS", "user.name": "root"},
                     timeout=30)
    assert r.status_code == 200, r.text
    assert name_dirs(again) == {good: True, small: True}
    assert f"name directory {small} restored from {good}" in again.log.read_text()
    acked += mkdirs(again, [f"/restored/{i}" for i in range(10)])
    assert again.stop() == 0
    assert len(acked) == 440

    alone = start_namenode(name_dirs=[small])
    with requests.Session() as http:
        missing = [p for p in acked if http.get(alone.webhdfs(p), params={
            "op": "GETFILESTATUS"}).status_code != 200]
    assert missing == []


def test_below_the_reserved_space_the_namenode_is_in_safe_mode_until_space_returns(
        small_disk, start_namenode):
    """NameNodeResourceChecker: below dfs.namenode.resource.du.reserved free space writes
    get SafeModeException (reads are served), also right from a start on a nearly full disk,
    and the namenode leaves safe mode by itself once the space is back."""
    name = str(small_disk.path)
    settings = ("-D", "dfs.namenode.resource.du.reserved=2097152",
                "-D", "dfs.namenode.resource.check.interval=100")
    nn = start_namenode(*settings, name_dirs=[name])
    assert mkdirs(nn, ["/a"]) == ["/a"]
    small_disk.fill(leave=1 << 20)                    # 1 MiB free, 2 MiB reserved
    wait_for(lambda: safe_mode(nn), 10, "safe mode", 0.05)
    r = requests.put(nn.webhdfs("/b"), params={"op": "MKDIRS", "user.name": "root"})
    assert r.status_code == 403, r.text
    remote = r.json()["RemoteException"]
    assert remote["exception"] == "SafeModeException"
    assert "Name node is in safe mode. Resources are low on NN" in remote["message"]
    assert requests.get(nn.webhdfs("/a"), params={"op": "GETFILESTATUS"}).status_code == 200
    page = requests.get(nn.url + "/").text
    assert "low on disk space" in page and "ON (disk space low" in page
    assert nn.stop() == 0

    low = start_namenode(*settings, name_dirs=[name])  # starts on the nearly full disk
    assert safe_mode(low)
    assert "NameNode low on available disk space" in low.log.read_text()
    small_disk.free()
    wait_for(lambda: not safe_mode(low), 10, "safe mode to end", 0.05)
    assert mkdirs(low, ["/b"]) == ["/b"]


def safe_mode(nn) -> bool:
    r = requests.get(f"{nn.url}/admin", params={"op": "SAFEMODE", "action": "get",
                                                "user.name": "root"}, timeout=10)
    return r.json()["SafeMode"]


def test_a_checkpoint_upload_into_a_full_name_dir_is_refused_typed_and_retried(
        tmp_path, small_disk, start_namenode):
    """The image does not fit in the name dir: the upload is answered 507 with the reason
    (not a 500), the partial image is gone at once, the secondary logs it and retries at its
    next check, and the checkpoint goes through once the space is back."""
    name = str(small_disk.path)
    nn = start_namenode(*NO_RESERVE, name_dirs=[name])
    assert len(mkdirs(nn, [f"/some/rather/long/directory/name/{i:05d}"
                           for i in range(1500)])) == 1500
    small_disk.fill(leave=8192)        # room for edits, not for an image
    log = tmp_path / "secondary.log"
    daemon, _ = start_daemon(nn, tmp_path / "ckpt", log, "checkpoint.txns=1",
                             "checkpoint.check.period=0.5", "nnlite.secondary.nice=0")
    try:
        wait_for(lambda: "checkpoint failed; retrying at the next check" in
                 log.read_text(), 60, "the secondary's failure", 0.05)
        text = log.read_text()
        assert "507" in text and "No space left on device" in text, text[-2000:]
        assert "checkpoint transfer refused (507)" in nn.log.read_text()
        assert not list((small_disk.path / "current").glob("fsimage.ckpt*"))
        small_disk.free()
        wait_for(lambda: "checkpoint installed" in nn.log.read_text(), 60,
                 "the checkpoint after space returned", 0.05)
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
    assert "Traceback" not in nn.log.read_text() + log.read_text()


def test_a_bit_flip_in_the_last_synced_record_is_corruption_for_recovery_not_a_torn_tail(
        start_namenode):
    """The last record was written whole and synced, so it holds an acknowledged op: the
    namenode refuses to start, naming its txid, instead of dropping it as a torn tail;
    ``--recover`` puts it to the operator."""
    nn = start_namenode()
    name = nn.name_dirs[0]
    assert mkdirs(nn, ["/a", "/b", "/c"]) == ["/a", "/b", "/c"]
    assert nn.stop() == 0
    edits_file = NameDir(name).file("edits")
    data = bytearray(edits_file.read_bytes())
    data[-3] ^= 0x10                                  # inside the last record's payload
    edits_file.write_bytes(bytes(data))
    start = subprocess.run([sys.executable, "-m", "nnlite.cli", "namenode", "--name-dir", name,
                            "--port", "0"], cwd=ROOT, capture_output=True, text=True,
                           timeout=60)
    assert start.returncode == EXIT_CORRUPT, start.stderr[-2000:]
    line = start.stderr.strip().splitlines()[-1]
    assert line.startswith("nnlite: CorruptRecordError: the last edits record is complete but "
                           "damaged") and "txid 4" in line and "--recover" in line, line
    assert "torn tail" not in start.stderr
    recover = subprocess.run([sys.executable, "-m", "nnlite.cli", "namenode", "--name-dir", name,
                              "--recover", "--force"], cwd=ROOT, capture_output=True, text=True,
                             timeout=60)
    assert recover.returncode == 0, recover.stdout + recover.stderr
    assert "txid 4" in recover.stdout
