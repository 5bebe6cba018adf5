"""An HA namenode's name dirs are ordinary ones: the offline tools read them, recovery mends
them, and a mended standby catches up from the shared journal."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.namenode.ha.test_controller import exists, mkdirs
from tests.servers import ROOT, wait_for

pytestmark = pytest.mark.crash


def nnlite(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nnlite.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, input="")


def test_offline_tools_and_recovery_on_a_standbys_name_dir(haset):
    first = haset.start_all()
    second = 1 - first
    for n in range(30):
        assert mkdirs(haset.url(first), f"/d{n}")[0] == 200
    wait_for(lambda: haset.synced_txid(second) >= haset.synced_txid(first), 30,
             "the standby to catch up")
    haset.nodes[second].stop()
    standby_dir = haset.root / f"{haset.ids[second]}-name" / "current"
    # oev and oiv read a standby's files as any namenode's
    shown = nnlite("oev", "-i", str(standby_dir / "edits"), "-p", "json")
    assert shown.returncode == 0, shown.stderr
    ops = [r["op"] for r in json.loads(shown.stdout)["records"]]
    assert ops.count("MKDIR") == 30
    image = nnlite("oiv", "-i", str(standby_dir / "fsimage"))
    assert image.returncode == 0, image.stderr
    # damage the middle of its edits: recovery keeps what came before and stops there (an HA
    # namenode never skips a record), and back in the set it gets the rest again from etcd
    edits = standby_dir / "edits"
    data = bytearray(edits.read_bytes())
    data[len(data) // 2] ^= 0xFF
    edits.write_bytes(bytes(data))
    recovered = nnlite("namenode", "--name-dir", str(haset.root / f"{haset.ids[second]}-name"),
                       "--recover", "--force", "--conf", str(haset.conf))
    assert recovered.returncode == 0, recovered.stdout + recovered.stderr
    assert "stop here (an HA namenode" in recovered.stdout
    haset.start(second)
    assert mkdirs(haset.url(first), "/after")[0] == 200
    wait_for(lambda: haset.synced_txid(second) >= haset.synced_txid(first), 30,
             "the mended standby to catch up from the shared journal")
    haset.kill(first)
    assert haset.active(excluding=first) == second
    assert all(exists(haset.url(second), f"/d{n}") for n in range(30))
    assert exists(haset.url(second), "/after")


def test_a_standby_saving_its_namespace_stays_a_prefix_of_the_journal(haset):
    from tests.namenode.ha.test_controller import admin
    first = haset.start_all()
    second = 1 - first
    for n in range(10):
        assert mkdirs(haset.url(first), f"/a{n}")[0] == 200
    wait_for(lambda: haset.synced_txid(second) >= haset.synced_txid(first), 30,
             "the standby to catch up")
    url = haset.url(second)
    assert admin(url, "SAFEMODE", action="enter")[0] == 200
    assert admin(url, "SAVENAMESPACE")[0] == 200
    assert admin(url, "SAFEMODE", action="leave")[0] == 200
    for n in range(10):
        assert mkdirs(haset.url(first), f"/b{n}")[0] == 200
    wait_for(lambda: haset.synced_txid(second) >= haset.synced_txid(first), 30,
             "the standby to follow after its save")
    haset.nodes[second].stop()                   # restart it from the image it saved
    haset.start(second)
    haset.kill(first)
    assert haset.active(excluding=first) == second
    assert all(exists(url, f"/{p}{n}") for p in "ab" for n in range(10))
