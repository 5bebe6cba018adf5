"""A namenode under continuous MKDIRS load from another process, checkpointed again and again by
a secondary daemon process, then SIGKILLed and restarted.

The load is tests/namenode/service_load.py (16 kept-alive connections, a path printed only once
its 200 arrived); the daemon checkpoints every 300 txns, checking 5 times a second. After a few
checkpoints the load and the daemon stop and the namenode is killed: restarted, it must hold
exactly what it held before (every acknowledged dir, plus at most the one a connection had in
flight when the load stopped), loaded from the last checkpoint's image; ``edits`` holds only
what followed that image, and ``previous.checkpoint/`` only the retained images.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
import requests

from nnlite.formats.fsimage.md5 import file_md5, parse_md5_sidecar
from nnlite.namenode.storage.namedir import EDITS, EDITS_NEW, NameDir
from tests.namenode.namedirs import consistent
from tests.namenode.test_service_crash import (
    CONNECTIONS,
    Load,
    acknowledged,
    check_all_present,
)
from tests.secondary.test_daemon import get_json, start_daemon
from tests.servers import NamenodeProcess, wait_for

pytestmark = pytest.mark.crash

CHECKPOINTS = 4
RETAINED = 2                                  # checkpoints.retained (the default)
ROUND = 0


def namenode_bean(server: NamenodeProcess) -> dict:
    return requests.get(server.url + "/jmx", timeout=5).json()["beans"][0]


def namespace(server: NamenodeProcess) -> dict[str, list[str]]:
    """Every directory the load can have made: thread dir -> its children."""
    out = {}
    for t in range(CONNECTIONS):
        resp = requests.get(server.webhdfs(f"/r{ROUND}/t{t}"), params={"op": "LISTSTATUS"})
        statuses = resp.json()["FileStatuses"]["FileStatus"] if resp.status_code == 200 else []
        out[f"t{t}"] = sorted(s["pathSuffix"] for s in statuses)
    top = requests.get(server.webhdfs("/"), params={"op": "LISTSTATUS"}).json()
    out["/"] = [s["pathSuffix"] for s in top["FileStatuses"]["FileStatus"]]
    return out


def check_retained(root: Path, last_image_txid: int) -> None:
    """previous.checkpoint/: at most RETAINED images (each matching its sidecar), older than
    the current one, and only edits segments that roll the oldest kept image forward."""
    area = root / "previous.checkpoint"
    images = sorted(int(p.name.split("_")[1]) for p in area.glob("fsimage_*")
                    if not p.name.endswith(".md5"))
    assert 0 < len(images) <= RETAINED and images[-1] < last_image_txid, images
    for txid in images:
        sidecar = (area / f"fsimage_{txid}.md5").read_text()
        assert file_md5(str(area / f"fsimage_{txid}")) == parse_md5_sidecar(sidecar)
    for p in area.glob("edits_*"):
        assert int(p.name.split("-")[1]) > images[0], (p.name, images)


def test_checkpoints_under_load_then_sigkill_and_restart(tmp_path, start_namenode):
    server = start_namenode()
    name_dir = server.name_dirs[0]
    daemon = load = None
    try:
        daemon, status_url = start_daemon(server, tmp_path / "ckpt", tmp_path / "secondary.log",
                                          "checkpoint.txns=300", "checkpoint.check.period=0.2")
        load = Load(server.port, ROUND, tmp_path / "load.err")
        load.wait_for(lambda: "READY" in load.lines, "READY")
        wait_for(lambda: namenode_bean(server)["Checkpoints"] >= CHECKPOINTS, timeout=40)
        load.close()                    # SIGKILL: the requests in flight stay unacknowledged
        counters = get_json(status_url + "/status")["counters"]
        assert counters["checkpoints"] >= CHECKPOINTS and counters["failures"] == 0, counters
        daemon.send_signal(signal.SIGTERM)  # a checkpoint in progress is finished first
        assert daemon.wait(20) == 0, (tmp_path / "secondary.log").read_text()

        lines = load.lines
        assert not [line for line in lines if line.startswith("ERR ")], lines[-5:]
        counts = acknowledged(lines, ROUND)
        assert all(counts.values()), counts
        bean = namenode_bean(server)
        written, checkpoints = bean["EditsBytesWritten"], bean["Checkpoints"]
        last_ckpt_txid = bean["LastWrittenTransactionId"] - \
            bean["TransactionsSinceLastCheckpoint"]
        before = namespace(server)
        check_all_present(server, {ROUND: counts}, "before the kill")

        server.kill()
        root = NameDir(name_dir)
        state = consistent(name_dir)
        assert state.image_txid == last_ckpt_txid and checkpoints >= CHECKPOINTS
        edits = sum(root.file(n).stat().st_size for n in (EDITS, EDITS_NEW)
                    if root.file(n).exists())
        assert edits < written / 3, (edits, written)       # only what followed the image
        check_retained(root.root, state.image_txid)

        server = start_namenode(name_dirs=[name_dir])
        assert namespace(server) == before
        check_all_present(server, {ROUND: counts}, "after the restart")
        after = namenode_bean(server)
        assert after["LastWrittenTransactionId"] - after["TransactionsSinceLastCheckpoint"] \
            == last_ckpt_txid
    finally:
        if load is not None:
            load.close()
        if daemon is not None and daemon.poll() is None:
            daemon.kill()
            daemon.wait()


def test_acls_and_snapshots_ride_a_checkpoint_and_a_sigkill(tmp_path, start_namenode):
    """An ACL, a snapshot and a file only that snapshot keeps go through the secondary's
    checkpoint into the image; killed and restarted from that image, the namenode answers
    for them as before."""
    from tests.namenode.http.helpers import WebHdfs, read, upload
    server = start_namenode()
    name_dir = server.name_dirs[0]
    daemon = None
    try:
        w = WebHdfs(server)
        w.mkdirs("/s/d")
        assert upload(w, "/s/d/f", b"kept by a snapshot").status == 201
        assert w.put("/s", "SETACL", aclspec="user::rwx,user:alice:r-x,group::r-x,"
                                             "other::---,default:user:alice:rwx").status == 200
        assert w.put("/s", "ALLOWSNAPSHOT").status == 200
        assert w.put("/s", "CREATESNAPSHOT", snapshotname="before").status == 200
        assert w.delete("/s/d/f")
        daemon, _ = start_daemon(server, tmp_path / "ckpt", tmp_path / "secondary.log",
                                 "checkpoint.txns=1", "checkpoint.check.period=0.2")
        wait_for(lambda: namenode_bean(server)["Checkpoints"] >= 1, timeout=30)
        acl = w.get("/s", "GETACLSTATUS").json["AclStatus"]
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(20) == 0
        daemon = None
        server.kill()
        state = consistent(name_dir)
        assert state.image_txid >= 8            # every op above is in the image, not replayed
        server = start_namenode(name_dirs=[name_dir])
        w = WebHdfs(server)
        assert w.get("/s", "GETACLSTATUS").json["AclStatus"] == acl
        assert acl["entries"][:1] == ["user:alice:r-x"]
        assert read(w, "/s/.snapshot/before/d/f") == b"kept by a snapshot"
        assert w.get("/s/d/f", "GETFILESTATUS").status == 404
        assert w.status("/s").get("snapshotEnabled") is True
        assert "aclBit" in w.status("/s")
    finally:
        if daemon is not None:
            daemon.kill()
            daemon.wait()
