"""File contents on two hosts (namenode/blocks/replication.py): real HA set, real etcd."""

from __future__ import annotations

import http.client
import http.server
import json
import os
import socket
import threading
import time

import pytest

from nnlite.namenode.blocks.replication import Replicator
from tests.namenode.ha.haset import USER, HASet, request
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


BOUND = 2.0       # nnlite.ha.replication.timeout of the paused-standby test, s


def test_a_paused_standby_holds_no_close_past_the_bound_and_is_copied_to_after(
        tmp_path, etcd_cluster):
    """A standby SIGSTOPped while the active closes files (issue 34: every close waited out
    the pause). Each close ends within the bound; the first close meets the pause and
    leaves the standby out, later ones do not try it (excluded until a resync reaches it,
    then stale by its position); every block counts under-replicated. After SIGCONT the
    resync copies them all, and the standby, made active, reads every file back."""
    haset = HASet(tmp_path, etcd_cluster,
                  settings={"nnlite.ha.replication.timeout": str(BOUND)})
    try:
        first = haset.start_all()
        second = 1 - first
        assert create(haset.url(first), "/before", b"x" * 1000) == 201
        wait_for(lambda: int(haset.jmx(first)["HAStandbyLagMs"]) >= 0
                 and metric(haset, first, "UnderReplicatedBlocks") == 0, 30,
                 "the standby's copy of /before")
        files = {}
        haset.pause(second)
        try:
            paused = time.monotonic()
            slowest = 0.0
            # past the standby's STALE_POSITION (5 s): closes that meet it stale, too
            while time.monotonic() - paused < 8 or len(files) < 5:
                path, data = f"/paused/f{len(files)}", os.urandom(100_000 + len(files))
                start = time.monotonic()
                assert create(haset.url(first), path, data) == 201
                slowest = max(slowest, time.monotonic() - start)
                files[path] = data
            assert slowest < BOUND + 2.0, slowest
            assert metric(haset, first, "UnderReplicatedBlocks") == len(files)
        finally:
            haset.resume(second)
        wait_for(lambda: metric(haset, first, "UnderReplicatedBlocks") == 0, 90,
                 "the resync to copy the blocks to the resumed standby")
        haset.kill(first)
        assert haset.active(excluding=first) == second
        for path, data in files.items():
            assert read(haset.url(second), path) == data
    finally:
        haset.close()


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


def connections(listener: socket.socket) -> int:
    """How many connections wait on ``listener``'s backlog (each accepted and closed)."""
    count = 0
    while True:
        try:
            conn, _ = listener.accept()
        except BlockingIOError:
            return count
        conn.close()
        count += 1


def test_a_close_gives_up_on_a_silent_standby_at_the_bound_then_leaves_it_out(store):
    """A standby that takes the connection and never answers (a SIGSTOPped process: its
    kernel still accepts) holds a close for ``close_timeout`` at most; later closes do not
    try it (excluded) until a resync reaches it, nor while its position is stale."""
    writer = store.writer(block_size=64 << 20)
    writer.write(b"z" * (32 << 20))     # more than the socket buffers take: the body waits
    block = writer.seal().blocks[0]
    writer.close()
    stale: set[str] = set()
    with socket.create_server(("127.0.0.1", 0)) as silent:
        silent.setblocking(False)
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        replicator = Replicator(store, lambda: {block[0]}, lambda: [address], "secret",
                                lambda: True, close_timeout=0.5, stale=lambda: stale)
        start = time.monotonic()
        assert replicator.replicate([block]) is False
        assert 0.4 < time.monotonic() - start < 1.5
        assert replicator.under_replicated == {block[0]} and address in replicator.excluded
        assert connections(silent) == 1
        start = time.monotonic()
        assert replicator.replicate([block]) is False          # excluded: not tried
        assert time.monotonic() - start < 0.3 and connections(silent) == 0
        replicator.excluded.clear()
        stale.add(address)
        assert replicator.replicate([block]) is False          # stale: not tried
        assert time.monotonic() - start < 0.3 and connections(silent) == 0
        assert replicator.resync() == 0                        # nor by the resync
        assert connections(silent) == 0
        assert replicator.metrics()["ClosesWithoutStandbyCopy"] == 3


class FirstPutOnly(http.server.BaseHTTPRequestHandler):
    """A standby that takes the first block it is sent (200) and never answers the next
    (until the test ends: ``server.done``)."""
    protocol_version = "HTTP/1.1"

    def do_PUT(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        if self.server.answered:
            self.server.done.wait(30)
            return
        self.server.answered = True
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def test_a_standby_that_took_some_blocks_stays_in_though_the_rest_were_late(store):
    """A large file's blocks, slower than the bound: the ones taken count replicated, the
    rest under-replicated, and the standby is not left out of the next closes."""
    blocks = []
    for fill in (b"a", b"b"):
        writer = store.writer(block_size=1 << 20)
        writer.write(fill * 100_000)
        blocks.append(writer.seal().blocks[0])
        writer.close()
    standby = http.server.HTTPServer(("127.0.0.1", 0), FirstPutOnly)
    standby.answered, standby.done = False, threading.Event()
    thread = threading.Thread(target=standby.serve_forever)
    thread.start()
    try:
        address = f"127.0.0.1:{standby.server_address[1]}"
        replicator = Replicator(store, lambda: {b[0] for b in blocks}, lambda: [address],
                                "secret", lambda: True, close_timeout=1.0)
        start = time.monotonic()
        assert replicator.replicate(blocks) is False
        assert time.monotonic() - start < 2.5
    finally:
        standby.done.set()
        standby.shutdown()
        thread.join()
        standby.server_close()
    assert replicator.under_replicated == {blocks[1][0]}
    assert replicator.excluded == set() and replicator.pushed == 1
