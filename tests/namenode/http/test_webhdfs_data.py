"""The WebHDFS data path over raw HTTP against a real namenode process: the 307 step, the data
step (Content-Length and chunked bodies), reads at offsets, overwrite rules, cut-off uploads,
leases, checksums, truncate, concat, the sweep and the recovery of torn uploads.

One server serves the module, with 1 KiB blocks (multi-block files stay small), a 1 s lease
soft limit and a fast sweep (0.2 s interval, 1 s grace); each test works in its own directory.
"""

from __future__ import annotations

import itertools
import json
import socket
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.namenode.blocks.helpers import cut, reference_checksum
from tests.namenode.http.helpers import (
    BLOCK,
    WebHdfs,
    block_files,
    data_dir,
    end_upload,
    raw_upload_start,
    read,
    request,
    send_chunk,
    tmp_files,
    upload,
    wait_for,
)
from tests.servers import NamenodeInThread

DATA = bytes(range(256)) * 14 + b"the end"        # 3591 bytes: 3 full blocks and a bit
_dirs = itertools.count()


@pytest.fixture(scope="module")
def server(start_module_namenode):
    return start_module_namenode("-D", f"dfs.blocksize={BLOCK}",
                                 "-D", "nnlite.lease.soft-limit=1",
                                 "-D", "nnlite.blocks.sweep.interval=0.2",
                                 "-D", "nnlite.blocks.sweep.grace=1")


@pytest.fixture(scope="module")
def w(server):
    return WebHdfs(server)


@pytest.fixture
def d(w) -> str:
    path = f"/t{next(_dirs)}"
    w.mkdirs(path)
    return path


def checksum_of(w, path: str, **kw) -> dict:
    reply = w.get(path, "GETFILECHECKSUM", **kw)
    assert reply.status == 200, reply
    return reply.json["FileChecksum"]


def hex_of(blocks: list[bytes]) -> str:
    return reference_checksum(blocks).hex()


def lengths(w, path: str, **params) -> list[tuple[int, int]]:
    reply = w.get(path, "GETFILEBLOCKLOCATIONS", **params)
    assert reply.status == 200, reply
    return [(b["offset"], b["length"]) for b in reply.json["BlockLocations"]["BlockLocation"]]


# --------------------------------------------------------------------------- the two steps

def test_create_redirects_with_every_parameter(w, server, d):
    reply = w.put(d + "/f", "CREATE", overwrite="false", permission="600", replication="1",
                  blocksize="2048", buffersize="4096")
    assert (reply.status, reply.body) == (307, b"")
    location = urlsplit(reply.headers["location"])
    assert (location.scheme, location.hostname, location.port, location.path) == \
        ("http", "127.0.0.1", server.port, "/data/v1" + d + "/f")
    assert dict(parse_qsl(location.query)) == {
        "op": "CREATE", "user.name": "tester", "overwrite": "false", "permission": "600",
        "replication": "1", "blocksize": "2048", "buffersize": "4096"}
    assert upload(w, d + "/g", b"g").status == 201
    anonymous = urlsplit(w.get(d + "/g", "OPEN", user=None).headers["location"])
    assert ("user.name", "dr.who") in parse_qsl(anonymous.query)
    assert request("GET", anonymous.geturl()).body == b"g"
    plain = w.put(d + "/f", "CREATE", noredirect="true")
    assert plain.status == 200 and set(plain.json) == {"Location"}
    assert "noredirect" not in plain.json["Location"]


def test_create_write_and_read_back(w, server, d):
    reply = upload(w, d + "/f", DATA, permission="600")
    assert (reply.status, reply.body) == (201, b"")
    assert reply.headers["location"] == f"webhdfs://127.0.0.1:{server.port}{d}/f"
    status = w.status(d + "/f")
    assert (status["length"], status["blockSize"], status["permission"]) == \
        (len(DATA), BLOCK, "600")
    assert read(w, d + "/f") == DATA
    assert lengths(w, d + "/f") == [(0, 1024), (1024, 1024), (2048, 1024), (3072, 519)]


def test_chunked_upload_of_a_multi_block_file(w, d):
    data = DATA * 3
    pieces = (data[i:i + 777] for i in range(0, len(data), 777))   # http.client: chunked
    assert upload(w, d + "/f", pieces).status == 201
    assert read(w, d + "/f") == data
    locations = w.get(d + "/f", "GETFILEBLOCKLOCATIONS", offset="1500", length="1000")
    block = locations.json["BlockLocations"]["BlockLocation"][0]
    assert set(block) == {"offset", "length", "hosts", "names", "topologyPaths",
                          "cachedHosts", "corrupt", "storageTypes"}
    assert (block["hosts"], block["storageTypes"], block["corrupt"]) == \
        (["127.0.0.1"], ["DISK"], False)
    assert lengths(w, d + "/f", offset="1500", length="1000") == [(1024, 1024), (2048, 1024)]


def test_open_at_offsets_with_one_location(w, d):
    upload(w, d + "/f", DATA)
    first = w.get(d + "/f", "OPEN", offset="10", buffersize="4096")
    location = first.headers["location"]
    assert ("offset", "10") in parse_qsl(urlsplit(location).query)
    assert request("GET", location).body == DATA[10:]
    # Hadoop's reader: drop the offset, append its own, as often as it seeks
    base = "&".join(p for p in location.split("?", 1)[1].split("&")
                    if not p.startswith("offset="))
    base = location.split("?", 1)[0] + "?" + base
    for offset in (0, 1023, 1024, 2500, len(DATA) - 1, len(DATA)):
        assert request("GET", f"{base}&offset={offset}").body == DATA[offset:]
    assert request("GET", f"{base}&offset=1000&length=100").body == DATA[1000:1100]
    assert read(w, d + "/f", offset="3000", length="10000") == DATA[3000:]
    beyond = request("GET", f"{base}&offset={len(DATA) + 1}")
    assert beyond.error == (403, "EOFException")
    assert w.get(d + "/f", "OPEN", offset="-1").status == 400
    assert w.get(d, "OPEN").error == (404, "FileNotFoundException")


def test_a_large_read_is_streamed_from_the_block_files(start_namenode):
    nn = start_namenode()                               # default 128 MiB blocks
    w = WebHdfs(nn)
    data = bytes(range(251)) * 40000                   # 10 MB: above the memory limit
    assert upload(w, "/big", data).status == 201
    assert read(w, "/big") == data
    assert read(w, "/big", offset="12345") == data[12345:]


def test_overwrite_false_is_checked_at_both_steps_and_true_replaces(w, server, d):
    early = w.put(d + "/f", "CREATE").headers["location"]   # before the file exists
    assert upload(w, d + "/f", b"first").status == 201
    assert w.put(d + "/f", "CREATE").error == (403, "FileAlreadyExistsException")
    before = block_files(server)
    late = request("PUT", early, b"second")
    assert late.error == (403, "FileAlreadyExistsException")
    assert block_files(server) <= before and tmp_files(server) == []
    assert read(w, d + "/f") == b"first"
    assert upload(w, d + "/f", b"third", overwrite="true").status == 201
    assert read(w, d + "/f") == b"third"
    assert w.put(d, "CREATE", overwrite="true").error == (403, "FileAlreadyExistsException")


def test_create_parent_and_permissions(w, d):
    assert upload(w, d + "/a/b/f", b"x").status == 201
    assert w.status(d + "/a/b")["type"] == "DIRECTORY"
    assert w.put(d + "/no/f", "CREATE", createparent="false").error == \
        (404, "FileNotFoundException")
    assert w.put(d + "/f", "CREATE", user="bob").error == (403, "AccessControlException")
    upload(w, d + "/secret", b"s", permission="600")
    assert w.get(d + "/secret", "OPEN", user="bob").error == (403, "AccessControlException")
    forged = w.get(d + "/secret", "OPEN").headers["location"].replace("tester", "bob")
    assert request("GET", forged).error == (403, "AccessControlException")
    assert w.put(d + "/f", "CREATE", blocksize="1000").status == 400
    assert w.put(d + "/f", "CREATE", createflag="CREATE,APPEND").status == 400


def test_empty_creates_and_appends_to_one_location(w, d):
    """fsspec's way: CREATE with no body, then every chunk POSTed to one APPEND Location."""
    assert upload(w, d + "/f", None).status == 201
    assert read(w, d + "/f") == b""
    assert checksum_of(w, d + "/f")["algorithm"] == "MD5-of-0MD5-of-0CRC32"
    location = w.call("POST", d + "/f", "APPEND").headers["location"]
    for piece in cut(DATA, 700):
        assert request("POST", location, piece).status == 200
    assert read(w, d + "/f") == DATA
    assert lengths(w, d + "/f") == [(0, 1024), (1024, 1024), (2048, 1024), (3072, 519)]
    assert checksum_of(w, d + "/f")["bytes"] == hex_of(cut(DATA, BLOCK))


def test_append_continues_the_last_block(w, d):
    upload(w, d + "/f", DATA[:1500])
    assert upload(w, d + "/f", DATA[1500:], op="APPEND").status == 200
    assert read(w, d + "/f") == DATA
    assert lengths(w, d + "/f") == [(0, 1024), (1024, 1024), (2048, 1024), (3072, 519)]
    assert checksum_of(w, d + "/f")["bytes"] == hex_of(cut(DATA, BLOCK))
    assert w.call("POST", d + "/none", "APPEND").error == (404, "FileNotFoundException")


# --------------------------------------------------------------------------- failures

def test_an_upload_cut_off_keeps_what_arrived(w, server, d):
    """As HDFS's DataNode closes the stream of a WebHDFS client that goes away
    (WebHdfsHandler), the file completes with the bytes that arrived."""
    for name, framing in (("f1", "Content-Length: 100000"), ("f2", "Transfer-Encoding: chunked")):
        location = urlsplit(w.put(f"{d}/{name}", "CREATE").headers["location"])
        body = DATA * 10
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(f"PUT {location.path}?{location.query} HTTP/1.1\r\nHost: x\r\n"
                         f"{framing}\r\n\r\n".encode())
            sock.sendall(b"%x\r\n" % len(body) + body + b"\r\n" if "chunked" in framing
                         else body)
            full = len(body) // BLOCK * BLOCK        # the last, partial block is in memory
            wait_for(lambda full=full: sum(p.stat().st_size
                                           for p in (data_dir(server) / "tmp").iterdir()
                                           if not p.name.endswith(".meta")) >= full,
                     what="the upload's full blocks in tmp/")    # then cut it off
        wait_for(lambda: not tmp_files(server), what="tmp/ to empty")
        wait_for(lambda name=name, body=body: read(w, f"{d}/{name}") == body,
                 what="the file to complete")
        assert w.call("POST", f"{d}/{name}", "APPEND").status == 307     # closed: open again


def test_a_file_is_there_while_it_is_written(w, server, d):
    """From CREATE on, under the writer's lease, with nothing in it yet (as HDFS shows a
    file under construction whose blocks are not complete)."""
    sock = raw_upload_start(server, d + "/f", "op=CREATE&user.name=tester")
    send_chunk(sock, b"being written")
    wait_for(lambda: w.get(d + "/f", "GETFILESTATUS").status == 200, what="the file")
    assert w.status(d + "/f")["length"] == 0
    listed = w.get(d, "LISTSTATUS").json["FileStatuses"]["FileStatus"]
    assert [s["pathSuffix"] for s in listed] == ["f"]
    assert read(w, d + "/f") == b""
    assert w.call("POST", d + "/f", "APPEND").error == (403, "AlreadyBeingCreatedException")
    send_chunk(sock, b" and done")
    assert end_upload(sock) == (201, b"")
    assert read(w, d + "/f") == b"being written and done"


def test_the_writer_follows_its_file_through_a_rename(w, server, d):
    """The lease moves with the file (LeaseManager.changeLease): the new path is held, the
    old one is free for a new writer."""
    w.mkdirs(d + "/dir")
    sock = raw_upload_start(server, d + "/dir/f", "op=CREATE&user.name=tester")
    send_chunk(sock, b"moved ")
    wait_for(lambda: w.get(d + "/dir/f", "GETFILESTATUS").status == 200, what="the file")
    assert w.put(d + "/dir/f", "RENAME", destination=d + "/g").json == {"boolean": True}
    assert w.put(d + "/dir", "RENAME", destination=d + "/moved").json == {"boolean": True}
    assert w.put(d + "/g", "RENAME", destination=d + "/moved/h").json == {"boolean": True}
    refusal = w.call("POST", d + "/moved/h", "APPEND")
    assert refusal.error == (403, "AlreadyBeingCreatedException")
    assert f"Failed to append to {d}/moved/h " in refusal.message
    w.mkdirs(d + "/dir")
    assert upload(w, d + "/dir/f", b"a new file where it was").status == 201
    send_chunk(sock, b"while written")
    assert end_upload(sock) == (201, b"")
    assert read(w, d + "/moved/h") == b"moved while written"
    assert read(w, d + "/dir/f") == b"a new file where it was"


def test_deleting_a_file_being_written_fails_the_writers_close(w, server, d):
    sock = raw_upload_start(server, d + "/f", "op=CREATE&user.name=tester")
    send_chunk(sock, b"doomed")
    wait_for(lambda: w.get(d + "/f", "GETFILESTATUS").status == 200, what="the file")
    assert w.delete(d + "/f")
    # the lease went with the file (FSNamesystem.removeLeasesAndINodes): the path is free
    assert upload(w, d + "/f", b"the next one").status == 201
    status, body = end_upload(sock)
    error = json.loads(body)["RemoteException"]
    assert (status, error["exception"]) == (404, "FileNotFoundException")
    assert error["message"].startswith("File does not exist: f (inode ")
    assert read(w, d + "/f") == b"the next one"
    wait_for(lambda: not tmp_files(server), what="tmp/ to empty")


def test_a_second_writer_is_refused_while_the_first_makes_progress(w, server, d):
    sock = raw_upload_start(server, d + "/f", "op=CREATE&user.name=tester")
    send_chunk(sock, b"first writer ")
    wait_for(lambda: w.get(d + "/f", "GETFILESTATUS").status == 200, what="the file")
    refusal = w.put(d + "/f", "CREATE", overwrite="true")
    assert refusal.error == (403, "AlreadyBeingCreatedException")
    assert refusal.java_class == "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException"
    assert "currently owned by webhdfs-create-" in refusal.message
    forged = request("PUT", f"http://127.0.0.1:{server.port}/data/v1{d}/f?op=CREATE&"
                            "user.name=tester&overwrite=true", b"x")
    assert forged.error == (403, "AlreadyBeingCreatedException")
    send_chunk(sock, b"wins")
    assert end_upload(sock) == (201, b"")
    assert read(w, d + "/f") == b"first writer wins"


class Clock:
    """The lease table's clock, moved by the test alone."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_silent_writer_loses_its_lease_to_the_next(tmp_path):
    """Silent up to the soft limit (60 s, the default) it keeps the file; past it the next
    writer takes over. Its only progress is the start of its upload: a body piece would
    renew the lease at whatever moment the loop reads it."""
    clock = Clock()
    with NamenodeInThread(str(tmp_path / "name"), lease_clock=clock) as server:
        w = WebHdfs(server)
        sock = raw_upload_start(server, "/f", "op=CREATE&user.name=tester")
        wait_for(lambda: w.get("/f", "GETFILESTATUS").status == 200, what="the file")
        clock.now += 59
        refusal = w.put("/f", "CREATE", overwrite="true")
        assert refusal.error == (403, "AlreadyBeingCreatedException")
        assert "last progress 59.0 s ago" in refusal.message
        clock.now += 2
        assert upload(w, "/f", b"next writer", overwrite="true").status == 201
        send_chunk(sock, b"late")
        status, body = end_upload(sock)
        assert status == 403 and b"LeaseExpiredException" in body
        assert read(w, "/f") == b"next writer"
        wait_for(lambda: not tmp_files(server), what="tmp/ to empty")


# --------------------------------------------------------------------------- contents

def test_checksums_are_equal_for_equal_contents(w, d):
    upload(w, d + "/a", DATA)
    upload(w, d + "/b", iter([DATA[:10], DATA[10:]]))
    upload(w, d + "/c", DATA[:-1] + b"?")
    a, b, c = (checksum_of(w, d + n) for n in ("/a", "/b", "/c"))
    assert a == b != c
    assert a == {"algorithm": "MD5-of-2MD5-of-512CRC32C", "length": 28,
                 "bytes": hex_of(cut(DATA, BLOCK))}
    assert w.get(d, "GETFILECHECKSUM").error == (404, "FileNotFoundException")


def test_truncate_inside_and_on_block_boundaries(w, d):
    upload(w, d + "/f", DATA)
    assert w.call("POST", d + "/f", "TRUNCATE", newlength="1500").json == {"boolean": True}
    assert read(w, d + "/f") == DATA[:1500]
    assert lengths(w, d + "/f") == [(0, 1024), (1024, 476)]
    assert checksum_of(w, d + "/f")["bytes"] == hex_of(cut(DATA[:1500], BLOCK))
    assert w.call("POST", d + "/f", "TRUNCATE", newlength="1024").json == {"boolean": True}
    assert read(w, d + "/f") == DATA[:1024]
    assert checksum_of(w, d + "/f")["bytes"] == hex_of([DATA[:1024]])
    assert w.call("POST", d + "/f", "TRUNCATE", newlength="2000").error == \
        (400, "IllegalArgumentException")
    assert w.call("POST", d + "/f", "TRUNCATE").status == 400
    assert upload(w, d + "/f", DATA[1024:1100], op="APPEND").status == 200
    assert read(w, d + "/f") == DATA[:1100]


def test_concat_joins_contents(w, d):
    parts = {"/a": DATA[:1500], "/b": DATA[1500:2200], "/c": DATA[2200:]}
    for name, data in parts.items():
        upload(w, d + name, data)
    reply = w.call("POST", d + "/a", "CONCAT", sources=f"{d}/b,{d}/c")
    assert (reply.status, reply.body) == (200, b"")
    assert read(w, d + "/a") == DATA
    assert w.get(d + "/b", "GETFILESTATUS").status == 404
    blocks = [DATA[:1024], DATA[1024:1500], DATA[1500:2200], DATA[2200:3224], DATA[3224:]]
    assert [n for _, n in lengths(w, d + "/a")] == [len(b) for b in blocks]
    assert checksum_of(w, d + "/a")["bytes"] == hex_of(blocks)


# --------------------------------------------------------------------------- reclaiming

def test_the_sweep_removes_blocks_no_file_refers_to(w, server, d):
    before = block_files(server)
    upload(w, d + "/f", DATA)
    mine = block_files(server) - before
    assert len(mine) == 8                               # 4 blocks, each with its meta
    assert w.delete(d + "/f").json == {"boolean": True}
    assert mine <= block_files(server)                  # young: kept for the 1 s grace
    wait_for(lambda: not (mine & block_files(server)), what="the sweep")


def test_uploads_cut_off_by_a_stop_are_closed_at_startup(start_namenode):
    from nnlite.namenode.fsnamesystem import FSNamesystem
    from tests.namenode.helpers import mutate
    from tests.servers import TESTER
    nn = start_namenode()
    w = WebHdfs(nn)
    assert upload(w, "/appended", DATA).status == 201
    nn.stop()
    # uploads a stop cut off after they opened their files (never acknowledged)
    with FSNamesystem.open(nn.name_dirs) as fs:
        mutate(fs, lambda ns: ns.append("/appended", TESTER, "webhdfs-append-7", "127.0.0.1"))
        mutate(fs, lambda ns: ns.create("/created", TESTER, client_name="webhdfs-create-8"))
    nn = start_namenode(name_dirs=nn.name_dirs)
    try:
        w = WebHdfs(nn)
        assert w.status("/created")["length"] == 0 and read(w, "/created") == b""
        assert read(w, "/appended") == DATA
        assert upload(w, "/appended", b"!", op="APPEND").status == 200
        assert read(w, "/appended") == DATA + b"!"
    finally:
        nn.stop()
    assert "lease recovery: /created" in nn.log.read_text()


@pytest.mark.crash
def test_sigkill_while_a_file_is_written_loses_nothing_acknowledged(start_namenode):
    """A namenode killed while a file is being written: every acknowledged upload is whole
    after the restart, and the file being written is there, closed by lease recovery with
    what was recorded of it (nothing: its bytes were never acknowledged)."""
    nn = start_namenode()
    try:
        w = WebHdfs(nn)
        assert upload(w, "/done", DATA).status == 201
        sock = raw_upload_start(nn, "/open", "op=CREATE&user.name=tester")
        send_chunk(sock, b"never acknowledged")
        wait_for(lambda: w.get("/open", "GETFILESTATUS").status == 200, what="the file")
    finally:
        nn.kill()
    sock.close()
    nn = start_namenode(name_dirs=nn.name_dirs)
    try:
        w = WebHdfs(nn)
        assert read(w, "/done") == DATA
        assert w.status("/open")["length"] == 0
        assert upload(w, "/open", b"again", op="APPEND").status == 200     # closed: writable
    finally:
        nn.stop()
    assert "lease recovery: /open" in nn.log.read_text()


def test_metrics_count_every_request_uploads_included(w, server, d):
    """/metrics.json Requests counts the streamed data steps too (the benchmarks read round
    trips from it): a CREATE is two requests, an APPEND two, an OPEN two."""
    def served() -> int:
        return request("GET", server.url + "/metrics.json").json["Requests"]

    before = served()
    assert upload(w, d + "/f", DATA).status == 201
    assert upload(w, d + "/f", b"more", op="APPEND").status == 200
    assert read(w, d + "/f") == DATA + b"more"
    assert served() - before - 1 == 6


def test_concat_of_another_user_s_file_from_a_sticky_directory_is_refused(w, d):
    """As an ordinary user would try it: bob concatenates alice's file, from a 1777
    directory, into his own; the NameNode refuses it by the sticky bit (FSDirConcatOp asks
    WRITE on each source's parent "for delete"), and alice's file stays."""
    shared = d + "/shared"
    assert w.put(shared, "MKDIRS", permission="1777").status == 200
    assert upload(w, shared + "/alices", DATA[:100], user="alice").status == 201
    assert upload(w, shared + "/bobs", DATA[100:200], user="bob").status == 201
    reply = w.call("POST", shared + "/bobs", "CONCAT", sources=shared + "/alices", user="bob")
    assert reply.error == (403, "AccessControlException")
    assert "Permission denied by sticky bit: user=bob" in reply.message
    assert read(w, shared + "/alices", user="alice") == DATA[:100]
    assert w.call("POST", shared + "/alices", "CONCAT", sources=shared + "/bobs",
                  user="alice").error == (403, "AccessControlException")
