"""File contents on two hosts (namenode/blocks/replication.py): real HA set, real etcd."""

from __future__ import annotations

import http.client
import json
import os

import pytest

from nnlite.namenode.blocks.replication import Replicator
from tests.namenode.ha.haset import USER, request
from tests.servers import wait_for

pytestmark = pytest.mark.crash


def create(url: str, path: str, data: bytes) -> int:
    """WebHDFS's two steps; the status of the second."""
    status, body = request(url, "PUT", f"/webhdfs/v1{path}?op=CREATE&user.name={USER}"
                                       f"&noredirect=true")
    assert status == 200, body
    location = json.loads(body)["Location"]
    target = location.split("/", 3)[3]
    status, body = request(url, "PUT", "/" + target, body=data)
    return status


def read(url: str, path: str) -> bytes:
    status, body = request(url, "GET", f"/webhdfs/v1{path}?op=OPEN&user.name={USER}"
                                       f"&noredirect=true")
    assert status == 200, body
    target = json.loads(body)["Location"].split("/", 3)[3]
    status, data = request(url, "GET", "/" + target)
    assert status == 200, data
    return data


def metric(haset, i: int, name: str) -> int:
    return int(haset.jmx(i)[name])


def test_a_closed_file_reads_back_byte_for_byte_after_the_active_is_killed(haset):
    first = haset.start_all()
    files = {f"/ckpt/f{n}": os.urandom(n * 70_001 + 1) for n in range(6)}
    for path, data in files.items():
        assert create(haset.url(first), path, data) == 201
    assert metric(haset, first, "UnderReplicatedBlocks") == 0
    haset.kill(first)
    second = haset.active(excluding=first)
    for path, data in files.items():
        assert read(haset.url(second), path) == data


def test_without_a_standby_writes_go_on_under_replicated_and_are_copied_when_it_returns(
        haset):
    first = haset.start_all()
    second = 1 - first
    haset.kill(second)
    data = os.urandom(300_000)
    assert create(haset.url(first), "/lonely", data) == 201
    assert metric(haset, first, "UnderReplicatedBlocks") == 1
    haset.start(second)
    wait_for(lambda: metric(haset, first, "UnderReplicatedBlocks") == 0, 60,
             "the resync to copy the block to the returning standby")
    haset.kill(first)
    assert haset.active(excluding=first) == second
    assert read(haset.url(second), "/lonely") == data


def test_a_copy_without_the_secret_or_damaged_in_transit_is_refused(haset):
    first = haset.start_all()
    second = 1 - first
    url = haset.url(second)
    status, body = request(url, "PUT", "/blocks/v1/blk_77?length=3", body=b"abc")
    assert status == 403 and b"shared secret" in body
    status, body = request_with(url, "PUT", "/blocks/v1/blk_77?length=3", b"abc",
                                {"X-Nnlite-Secret": "ha-set-secret",
                                 "X-Block-Digest": "2:" + "0" * 32})
    assert status == 400 and b"damaged in transit" in body
    status, body = request_with(url, "GET", "/blocks/v1?op=REPORT", None,
                                {"X-Nnlite-Secret": "ha-set-secret"})
    assert status == 200 and 77 not in json.loads(body)["blocks"]


def request_with(url: str, method: str, target: str, body: bytes | None,
                 headers: dict[str, str]) -> tuple[int, bytes]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request(method, target, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def test_a_replica_being_written_is_not_counted_under_replicated(store):
    """The last block of a file open over hdfs:// is referenced (recorded at addBlock) and
    sits in rbw/: not a block to copy or count yet (HDFS leaves blocks under construction
    out of its replication queues); a published one with no standby is."""
    being_written = store.allocate()
    store.rbw_path(being_written).write_bytes(b"x" * 10)
    writer = store.writer(block_size=1 << 20)
    writer.write(b"y" * 10)
    published = writer.seal().blocks[0][0]
    writer.close()
    replicator = Replicator(store, lambda: {being_written, published}, list, "secret",
                            lambda: True)
    assert replicator.resync() == 0
    assert replicator.under_replicated == {published}
