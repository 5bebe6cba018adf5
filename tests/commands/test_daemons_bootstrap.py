"""``nnlite namenode --bootstrap-standby`` (commands/daemons.py) on a real HA set: an empty
name dir gets the active's image over the checkpoint transfer -- an image a standby's
checkpoint put at txid R > 0, so the new namenode must follow the shared journal from R + 1 --
and, started, that namenode is a standby that holds every acknowledged change, and takes over
with all of them when the others are killed. Its edits open with a record of its own only
where the shared journal lacks that txid (``opens_own_edits``, against a journal written into
a real etcd). A formatted dir, a set without this namenode's id or without the secret are
refused before anything is downloaded."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from nnlite.client.etcd.client import Etcd
from nnlite.client.webhdfs import WebHdfsClient
from nnlite.commands.daemons import opens_own_edits
from nnlite.commands.support import EXIT_STORAGE, EXIT_USAGE
from nnlite.formats import edits
from nnlite.namenode.config import Config
from nnlite.namenode.ha.quorum_journal import Layout
from tests.commands.helpers import failed, nnlite, ok
from tests.namenode.ha.haset import USER, HASet
from tests.servers import wait_for

pytestmark = pytest.mark.crash


@pytest.fixture
def three(tmp_path, etcd_cluster):
    """HA set ns1 of three namenodes whose standbys checkpoint every 5 transactions; nn3's
    name dir is left empty for the bootstrap."""
    ha = HASet(tmp_path, etcd_cluster, count=3,
               settings={"checkpoint.txns": "5", "checkpoint.period": "1"})
    ha.dirs[2] = str(tmp_path / "nn3-bootstrapped")
    try:
        yield ha
    finally:
        ha.close()


def bootstrap(ha: HASet, name_dir: str, *defines: str):
    return nnlite(None, "namenode", "--bootstrap-standby", "--name-dir", name_dir,
                  "--conf", str(ha.conf), *[a for d in defines for a in ("-D", d)])


def checkpoint_txid(url: str) -> int:
    with WebHdfsClient(url, USER) as client:
        return int(client.report()["lastCheckpointTxid"])


def test_the_bootstrapped_namenode_follows_from_the_image_and_takes_over(three):
    ha = three
    ha.start(0)
    ha.start(1)
    active = ha.active()
    with WebHdfsClient(ha.url(active), USER) as client:
        for i in range(12):
            assert client.mkdirs(f"/boot/d{i}")
    image_txid = wait_for(lambda: checkpoint_txid(ha.url(active)), 60, "a standby checkpoint")
    (line,) = ok(bootstrap(ha, ha.dirs[2], "dfs.ha.namenode.id=nn3"))
    assert line.startswith(f"Bootstrapped {ha.dirs[2]} from nn{active + 1}'s image ")
    txid = int(re.search(r"txid (\d+),", line).group(1))
    assert txid >= image_txid > 0                                       # or a later one
    # The journal holds txid + 1 (the roll's START_LOG_SEGMENT): no record of nn3's own.
    edits_file = Path(ha.dirs[2]) / "current" / "edits"
    assert edits_file.read_bytes() == edits.encode_header(txid + 1)
    with WebHdfsClient(ha.url(active), USER) as client:
        for i in range(12, 15):
            assert client.mkdirs(f"/boot/d{i}")
    ha.start(2)
    wait_for(lambda: ha.synced_txid(2) == ha.synced_txid(active), 60, "nn3 caught up")
    assert not ha.is_active(2)
    for i in (0, 1):
        ha.kill(i)
    assert ha.active() == 2
    with WebHdfsClient(ha.url(2), USER) as client:
        assert {s["pathSuffix"] for s in client.list("/boot")} == {f"d{i}" for i in range(15)}


def test_what_it_refuses_before_any_download(three, tmp_path):
    ha = three                      # not started: a refusal must not need it
    fresh = str(tmp_path / "fresh")
    message = failed(bootstrap(ha, ha.dirs[1], "dfs.ha.namenode.id=nn2"), "NameDirError",
                     EXIT_STORAGE)
    assert "already holds an image" in message and "--bootstrap-standby" in message
    message = failed(bootstrap(ha, fresh), "UsageError", EXIT_USAGE)
    assert "dfs.ha.namenode.id" in message and "nn1, nn2, nn3" in message
    message = failed(bootstrap(ha, fresh, "dfs.ha.namenode.id=nn3",
                               "nnlite.checkpoint.secret="), "UsageError", EXIT_USAGE)
    assert "nnlite.checkpoint.secret" in message
    message = failed(bootstrap(ha, fresh, "dfs.nameservices="), "UsageError", EXIT_USAGE)
    assert "needs an HA set" in message
    assert not (tmp_path / "fresh").exists()


def chunk(first: int, last: int) -> bytes:
    return b"".join(edits.encode_record(t, edits.StartLogSegmentOp())
                    for t in range(first, last + 1))


def test_the_bootstrapped_edits_open_with_a_record_of_their_own_only_where_etcd_lacks_it(
        etcd_single):
    config = Config({"dfs.nameservices": "ns1",
                     "nnlite.ha.etcd.endpoints": ",".join(etcd_single.endpoints)})
    layout = Layout.of("/nnlite", "ns1")
    with Etcd(etcd_single.endpoints) as etcd:
        assert opens_own_edits(config, 0)           # no active yet: as format opens them
        etcd.put(layout.committed, b"1")            # nn1, formatted, active at its txid 1
        assert opens_own_edits(config, 0)           # txid 1 is nn1's opening record
        etcd.put(layout.txn_key(4), chunk(2, 4))
        etcd.put(layout.committed, b"4")
        assert opens_own_edits(config, 0)
        assert not any(opens_own_edits(config, txid) for txid in (1, 3, 4))
        etcd.put(layout.committed, b"9")            # as if the first active's edits held 2-9
        etcd.delete(layout.txn_key(4))
        etcd.put(layout.txn_key(12), chunk(10, 12))
        etcd.put(layout.committed, b"12")
        with pytest.raises(click.ClickException, match="txids 1-9 are only in the active's"):
            opens_own_edits(config, 0)
        assert opens_own_edits(config, 8) and not opens_own_edits(config, 9)
