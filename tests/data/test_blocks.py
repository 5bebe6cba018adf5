"""The data path without HTTP: checksums, the block store, the sweep, leases, the namespace's
upload batches and the startup recovery of torn uploads."""

from __future__ import annotations

import os
import zlib

import pytest
from crc32c import crc32c

from nnlite.formats import edits
from nnlite.namenode import errors
from nnlite.namenode.blocks import checksum
from nnlite.namenode.blocks.lease_recovery import recover_uploads
from nnlite.namenode.blocks.store import BlockStore, default_data_dir
from nnlite.namenode.blocks.streams import BlockMissingError, RangeReader, segments
from nnlite.namenode.blocks.sweep import Sweeper, referenced
from nnlite.namenode.fsnamesystem import FSNamesystem, format_dirs
from nnlite.namenode.namespace import leases
from nnlite.namenode.storage.namedir import NameDir
from tests.data import cut, reference_checksum
from tests.namenode.helpers import (
    SUPER,
    dump,
    mkdir,
    mutate,
    new_ns,
    refused,
    touch,
    write_file,
)

CONTENT = bytes(range(256)) * 40 + b"tail!"          # 10245 bytes: 20 chunks and a bit


def reference(data: bytes, block_size: int) -> bytes:
    return reference_checksum(cut(data, block_size))


@pytest.fixture
def store(tmp_path):
    s = BlockStore.open(tmp_path / "data", namespace_id=7)
    yield s
    s.close()


def written(store, data: bytes, block_size: int, pieces=(1, 700, 3000), tail=None):
    """Feed ``data`` to a writer in pieces of the given sizes (cycling), seal, close."""
    writer = store.writer(block_size, tail)
    pos, i = 0, 0
    while pos < len(data):
        step = pieces[i % len(pieces)]
        writer.write(data[pos:pos + step])
        pos, i = pos + step, i + 1
    sealed = writer.seal()
    writer.close()
    return sealed


def content(store, blocks) -> bytes:
    return b"".join(store.data_path(b[0]).read_bytes()[:b[1]] for b in blocks)


def files_in(store) -> list[str]:
    return sorted(p.name for p in store.root.rglob("blk_*"))


# --------------------------------------------------------------------------- checksums

@pytest.mark.parametrize("kind, crc", [(checksum.CRC32C, crc32c), (checksum.CRC32, zlib.crc32)])
@pytest.mark.parametrize("pieces", [(1,), (511, 2), (512,), (513, 1000), (10**6,)])
def test_chunk_crcs_do_not_depend_on_how_the_bytes_arrive(pieces, kind, crc):
    chunker = checksum.CrcChunker(kind=kind)
    pos, i = 0, 0
    while pos < len(CONTENT):
        chunker.feed(CONTENT[pos:pos + pieces[i % len(pieces)]])
        pos, i = pos + pieces[i % len(pieces)], i + 1
    expected = b"".join(crc(CONTENT[i:i + 512]).to_bytes(4, "big")
                        for i in range(0, len(CONTENT), 512))
    assert chunker.finish() == expected == checksum.chunk_crcs(CONTENT, kind)


def test_the_empty_file_has_hadoops_magic_checksum():
    value = checksum.file_checksum([])
    assert checksum.to_json(value) == {"FileChecksum": {
        "algorithm": "MD5-of-0MD5-of-0CRC32", "length": 28,
        "bytes": "00000000000000000000000070bc8f4b72a86921468bf8e8441dce51"}}


@pytest.mark.parametrize("size,block_size", [(1, 1024), (1024, 1024), (3000, 1024),
                                             (4096, 1024), (5000, 1024), (10245, 512)])
def test_file_checksum_pads_the_block_md5s_as_hadoops_buffer_does(size, block_size):
    data = CONTENT[:size]
    digests = [checksum.block_digest(checksum.chunk_crcs(data[i:i + block_size]))
               for i in range(0, size, block_size)]
    value = checksum.file_checksum(digests)
    assert value == reference(data, block_size) + bytes([checksum.CRC32C])
    blocks = len(digests)
    assert checksum.algorithm(value) == \
        f"MD5-of-{block_size // 512 if blocks > 1 else 0}MD5-of-512CRC32C"


def test_a_file_of_crc32_and_crc32c_blocks_is_mixed_and_an_old_checksum_stays_crc32():
    old = checksum.block_digest(checksum.chunk_crcs(CONTENT[:1024], checksum.CRC32),
                                checksum.CRC32)
    new = checksum.block_digest(checksum.chunk_crcs(CONTENT[1024:2048]))
    assert checksum.algorithm(checksum.file_checksum([old, new])) == "MD5-of-2MD5-of-512MIXED"
    recorded = checksum.file_checksum([old])             # 28 bytes, as nnlite recorded before
    assert len(recorded) == 28 and checksum.to_json(recorded)["FileChecksum"][
        "algorithm"] == "MD5-of-0MD5-of-512CRC32"


# --------------------------------------------------------------------------- the store

def test_a_writer_cuts_blocks_and_records_their_crcs(store):
    sealed = written(store, CONTENT, 4096)
    assert [b[1] for b in sealed.blocks] == [4096, 4096, 2053]
    assert content(store, sealed.blocks) == CONTENT
    for block in sealed.blocks:
        data = store.data_path(block[0]).read_bytes()
        assert store.meta_path(block[0]).read_bytes() == \
            checksum.meta_header() + checksum.chunk_crcs(data)
    assert checksum.file_checksum(sealed.digests)[:28] == reference(CONTENT, 4096)
    assert list(store.tmp.iterdir()) == [] and store.held() == set()


def test_appending_to_a_partial_block_copies_it_into_a_new_block(store):
    first = written(store, CONTENT[:1500], 4096)
    tail = first.blocks[-1]
    rest = written(store, CONTENT[1500:], 4096, pieces=(7, 4000), tail=tail)
    assert rest.replaces_tail and rest.length == len(CONTENT) - 1500
    assert [b[1] for b in rest.blocks] == [4096, 4096, 2053]
    assert tail[0] not in [b[0] for b in rest.blocks]
    assert content(store, rest.blocks) == CONTENT
    assert store.data_path(tail[0]).read_bytes() == CONTENT[:1500]    # the old block is intact
    merged = store.data_path(rest.blocks[0][0]).read_bytes()
    assert store.meta_path(rest.blocks[0][0]).read_bytes() == \
        checksum.meta_header() + checksum.chunk_crcs(merged)
    assert checksum.file_checksum(rest.digests)[:28] == reference(CONTENT, 4096)


def test_an_append_continues_an_old_crc32_block_in_crc32_and_starts_new_ones_in_crc32c(store):
    first = written(store, CONTENT[:1500], 4096)
    tail = first.blocks[-1]
    # the meta file as nnlite wrote it before CRC32C: CRC32s, no header
    store.meta_path(tail[0]).write_bytes(checksum.chunk_crcs(CONTENT[:1536], checksum.CRC32)[:8])
    assert store.read_crcs(tail[0], 1500) == (
        checksum.chunk_crcs(CONTENT[:1500], checksum.CRC32), checksum.CRC32)
    rest = written(store, CONTENT[1500:], 4096, tail=tail)
    assert [d[2] for d in rest.digests] == [checksum.CRC32, checksum.CRC32C, checksum.CRC32C]
    assert checksum.algorithm(checksum.file_checksum(rest.digests)) == \
        "MD5-of-8MD5-of-512MIXED"
    merged = store.data_path(rest.blocks[0][0]).read_bytes()
    assert store.read_crcs(rest.blocks[0][0], 4096) == (
        checksum.chunk_crcs(merged, checksum.CRC32), checksum.CRC32)


def test_a_full_last_block_is_not_continued(store):
    first = written(store, CONTENT[:4096], 4096)
    rest = written(store, b"x" * 10, 4096, tail=first.blocks[-1])
    assert not rest.replaces_tail and [b[1] for b in rest.blocks] == [10]


def test_discard_deletes_written_and_published_blocks(store):
    writer = store.writer(1024)
    writer.write(CONTENT[:3000])
    assert len(files_in(store)) == 5                  # 2 full blocks with meta, 1 open
    writer.discard()
    writer.close()
    assert files_in(store) == [] and store.held() == set()
    writer = store.writer(1024)
    writer.write(CONTENT[:3000])
    writer.seal()
    writer.discard()
    writer.close()
    assert files_in(store) == []


def test_copy_prefix_and_crcs_of_a_shorter_prefix(store):
    sealed = written(store, CONTENT[:3000], 4096)
    block = sealed.blocks[0]
    assert store.read_crcs(block[0], 1300) == (checksum.chunk_crcs(CONTENT[:1300]),
                                               checksum.CRC32C)
    copy, digest = store.copy_prefix((block[0], 1300))
    assert copy[1] == 1300 and copy[0] != block[0]
    assert store.data_path(copy[0]).read_bytes() == CONTENT[:1300]
    assert digest == checksum.block_digest(checksum.chunk_crcs(CONTENT[:1300]))
    assert copy[0] in store.held()


def test_missing_or_short_blocks_are_reported(store):
    with pytest.raises(BlockMissingError):
        store.open_block(999, 1)
    sealed = written(store, b"abc", 1024)
    with pytest.raises(BlockMissingError):
        store.open_block(sealed.blocks[0][0], 4)


def test_range_reader_spans_blocks(store):
    sealed = written(store, CONTENT, 1024)
    parts = segments(sealed.blocks, 1000, 2100)
    assert [(p[1], p[2]) for p in parts] == [(1000, 24), (0, 1024), (0, 1024), (0, 28)]
    reader = RangeReader([(store.open_block(b[0], b[1]), start, n) for b, start, n in parts])
    out, buf = b"", bytearray(100)
    while n := reader.readinto(buf):
        out += buf[:n]
    assert out == CONTENT[1000:3100]
    reader.seek(1030)
    n = reader.readinto(buf)
    assert bytes(buf[:n]) == CONTENT[2030:2030 + n]
    reader.close()


def test_opening_refuses_another_namespace_and_a_second_owner(tmp_path):
    store = BlockStore.open(tmp_path / "data", namespace_id=1)
    with pytest.raises(errors.StorageError, match="in use"):
        BlockStore.open(tmp_path / "data", namespace_id=1)
    store.close()
    BlockStore.open(tmp_path / "data", namespace_id=2).close()   # empty: taken over
    store = BlockStore.open(tmp_path / "data", namespace_id=2)
    written(store, b"x", 1024)
    store.close()
    with pytest.raises(errors.StorageError, match="namespace 2"):
        BlockStore.open(tmp_path / "data", namespace_id=3)


def test_opening_clears_tmp_and_allocates_above_every_id(tmp_path):
    store = BlockStore.open(tmp_path / "data", namespace_id=1, last_block_id=5)
    writer = store.writer(1024)
    writer.write(b"left behind by a crash")           # never sealed
    store.close()
    store = BlockStore.open(tmp_path / "data", namespace_id=1, last_block_id=5)
    assert list(store.tmp.iterdir()) == []
    sealed = written(store, b"x", 1024)
    store.close()
    store = BlockStore.open(tmp_path / "data", namespace_id=1, last_block_id=2)
    assert store.allocate() == sealed.blocks[0][0] + 1
    store.close()


def test_default_data_dir_is_beside_the_first_name_dir(tmp_path):
    assert default_data_dir(tmp_path / "name") == tmp_path / "name-data"
    assert default_data_dir(str(tmp_path / "name") + "/") == tmp_path / "name-data"


# --------------------------------------------------------------------------- the sweep

def test_the_sweep_removes_only_old_unreferenced_unheld_blocks(store):
    ns = new_ns()
    kept = written(store, b"referenced", 1024).blocks
    orphan = written(store, b"orphan", 1024).blocks
    held = written(store, b"held", 1024).blocks
    young = written(store, b"young", 1024).blocks
    ns.tree.apply(edits.AddFileOp("/f", ns.tree.last_inode_id + 1, 1, 1024, 0, 0o644, "u", "g", 1, 1,
                         False, "c", ""))
    ns.tree.apply(edits.CloseFileOp("/f", ns.tree.last_inode_id, 10, 1, 1, kept, b""))
    store.hold(held[0][0])
    for block in kept + orphan + held:
        for path in (store.data_path(block[0]), store.meta_path(block[0])):
            os.utime(path, (1, 1))
    sweeper = Sweeper(lambda: referenced(ns.tree), store, grace=60)
    assert sweeper.sweep() == [orphan[0][0]]
    assert not store.data_path(orphan[0][0]).exists()
    for block in kept + held + young:
        assert store.data_path(block[0]).exists() and store.meta_path(block[0]).exists()
    assert sweeper.sweep() == []


def test_a_block_only_a_snapshot_keeps_stays_until_the_snapshot_goes(store):
    """Deleted, truncated or overwritten after a snapshot: the old blocks stay swept-proof
    while a snapshot refers to them, and go once the last such snapshot is deleted."""
    ns = new_ns()
    blocks = written(store, b"snapshotted content", 1024).blocks
    ns.mkdirs("/s", 0o755, SUPER)
    ns.tree.apply(edits.AddFileOp("/s/f", ns.tree.last_inode_id + 1, 1, 1024, 0, 0o644, "u", "g", 1, 1,
                             False, "c", ""))
    ns.tree.apply(edits.CloseFileOp("/s/f", ns.tree.last_inode_id, 19, 1, 1, blocks, b""))
    ns.allow_snapshot("/s", SUPER)
    ns.create_snapshot("/s", "one", SUPER)
    ns.create_snapshot("/s", "two", SUPER)
    ns.delete("/s/f", False, SUPER)
    for block in blocks:
        for path in (store.data_path(block[0]), store.meta_path(block[0])):
            os.utime(path, (1, 1))
    sweeper = Sweeper(lambda: referenced(ns.tree), store, grace=60)
    assert sweeper.sweep() == []
    ns.delete_snapshot("/s", "one", SUPER)
    assert sweeper.sweep() == []                     # "two" still shows the file
    ns.delete_snapshot("/s", "two", SUPER)
    assert sweeper.sweep() == [b[0] for b in blocks]


# --------------------------------------------------------------------------- leases

class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_a_lease_refuses_a_second_writer_until_it_is_silent_too_long():
    clock = Clock()
    manager = leases.LeaseManager(soft_limit=60, hard_limit=600, clock=clock)
    revoked = []
    first = manager.acquire("/f", leases.CREATE, "10.0.0.1", revoked.append)
    assert first.holder == "webhdfs-create-1" and leases.upload_kind(first.holder) == "create"
    with pytest.raises(errors.LeaseError) as info:
        manager.acquire("/f", leases.APPEND, "10.0.0.2")
    assert "currently owned by webhdfs-create-1 on 10.0.0.1" in str(info.value)
    assert info.value.JAVA_CLASS.endswith("AlreadyBeingCreatedException")
    clock.now += 59
    manager.renew(first)
    clock.now += 59
    with pytest.raises(errors.LeaseError):
        manager.check_free("/f", "create")
    clock.now += 2
    second = manager.acquire("/f", leases.APPEND, "10.0.0.2")
    assert revoked and f"{second.holder} took over" in revoked[0]
    with pytest.raises(errors.LeaseExpiredError):
        first.check()
    manager.release(first)                          # a late release keeps the new holder
    assert manager.holder("/f") is second


def test_recording_leases_are_not_revoked_and_the_hard_limit_applies():
    clock = Clock()
    manager = leases.LeaseManager(soft_limit=1, hard_limit=10, clock=clock)
    busy = manager.acquire("/a", leases.CREATE)
    busy.recording = True
    idle = manager.acquire("/b", leases.CREATE)
    clock.now += 11
    with pytest.raises(errors.LeaseError):
        manager.acquire("/a", leases.CREATE)
    assert manager.expire() == 1 and idle.revoked and not busy.revoked
    assert manager.holder("/b") is None


def test_a_lease_follows_its_file_through_the_ops_that_move_or_remove_it():
    """changeLease for renames (of the file or a directory above it), removeLeases for
    deletes and renames over; a path that only shares a prefix keeps its lease."""
    ns = new_ns()
    for d in ("/a/d", "/b", "/ab"):
        mkdir(ns, d)
    for f in ("/a/d/f", "/a/g", "/ab/f", "/b/old"):
        touch(ns, f)
    manager = leases.LeaseManager()
    held = {f: manager.acquire(f, leases.CREATE) for f in ("/a/d/f", "/a/g", "/ab/f", "/b/old")}
    manager.follow(ns.rename("/a/d", "/b/d", False, SUPER)[1])
    assert held["/a/d/f"].path == "/b/d/f" and manager.holder("/b/d/f") is held["/a/d/f"]
    assert manager.holder("/a/d/f") is None
    manager.follow(ns.rename_legacy("/a", "/b", SUPER)[1])          # into /b: /b/a
    assert manager.holder("/b/a/g") is held["/a/g"] and held["/a/g"].path == "/b/a/g"
    manager.follow(ns.rename("/b/a/g", "/b/old", True, SUPER)[1])   # over an open file
    assert manager.holder("/b/old") is held["/a/g"]
    manager.follow(ns.delete("/b", True, SUPER)[1])
    assert set(manager.leases) == {"/ab/f"} and manager.holder("/ab/f") is held["/ab/f"]
    manager.release(held["/a/g"])                                   # a late release: no harm
    assert set(manager.leases) == {"/ab/f"}


@pytest.mark.parametrize("name,kind", [("webhdfs-create-3", "create"),
                                       ("webhdfs-append-12", "append"),
                                       ("webhdfs-truncate-1", "truncate"),
                                       ("webhdfs-create-", None), ("DFSClient_1", None),
                                       ("webhdfs-rename-1", None), (None, None)])
def test_upload_kinds_are_read_from_client_names(name, kind):
    assert leases.upload_kind(name) == kind


# --------------------------------------------------------------------------- namespace batches

def test_create_complete_logs_one_batch_and_checks_overwrite():
    ns = new_ns()
    blocks = ((1, 10, 1001),)
    _, ops = ns.create_complete("/a/b/f", SUPER, blocks=blocks, length=10, checksum=b"c" * 28,
                                client_name="webhdfs-create-1", replication=1)
    assert [type(op) for op in ops] == [edits.MkdirOp, edits.AddFileOp, edits.CloseFileOp]
    assert ops[1].client_name == "webhdfs-create-1"
    node = ns.tree.get("/a/b/f")
    assert (node.blocks, node.length, node.checksum, node.client_name) == \
        (blocks, 10, b"c" * 28, None)
    refused(ns, errors.FileAlreadyExistsError, ns.create_complete, "/a/b/f", SUPER,
            blocks=blocks, length=10, checksum=b"", client_name="webhdfs-create-2")


def test_an_upload_whose_close_exceeds_the_record_limit_changes_nothing():
    """The CloseFileOp of an upload is checked against the namespace's own record limit
    before the batch's first op applies (a smaller nnlite.edits.max-record, many blocks)."""
    ns = new_ns()
    ns.max_record = 4096
    mkdir(ns, "/d")
    many = tuple((i, 10, 1001) for i in range(1, 600))
    error = refused(ns, errors.IllegalArgumentError, ns.create_complete, "/d/f", SUPER,
                    blocks=many, length=10 * len(many), checksum=b"",
                    client_name="webhdfs-create-1")
    assert "4096-byte limit" in str(error)
    write_file(ns, "/d/g", sizes=(100,))
    node = ns.tree.get("/d/g")
    refused(ns, errors.IllegalArgumentError, ns.append_complete, "/d/g", SUPER,
            inode_id=node.id, expected_blocks=node.blocks, blocks=node.blocks + many,
            length=100 + 10 * len(many), checksum=b"", client_name="webhdfs-append-1")


def test_append_complete_refuses_a_file_changed_meanwhile():
    ns = new_ns()
    mkdir(ns, "/d")
    write_file(ns, "/d/f", sizes=(100,))
    node = ns.tree.get("/d/f")
    old = node.blocks
    refused(ns, errors.NamenodeError, ns.append_complete, "/d/f", SUPER, inode_id=node.id,
            expected_blocks=((9, 9, 9),), blocks=old, length=100, checksum=b"",
            client_name="webhdfs-append-1")
    _, ops = ns.append_complete("/d/f", SUPER, inode_id=node.id, expected_blocks=old,
                                blocks=old + ((50, 20, 1001),), length=120, checksum=b"",
                                client_name="webhdfs-append-1")
    assert [type(op) for op in ops] == [edits.AppendOp, edits.CloseFileOp]
    assert (ns.tree.get("/d/f").length, ns.tree.get("/d/f").client_name) == (120, None)


def test_truncate_blocks_swaps_in_the_copied_block():
    ns = new_ns()
    mkdir(ns, "/d")
    write_file(ns, "/d/f", sizes=(100, 100))
    node = ns.tree.get("/d/f")
    old = node.blocks
    _, ops = ns.truncate_blocks("/d/f", SUPER, 150, inode_id=node.id, expected_blocks=old,
                                last_block=(77, 50, 1001), checksum=b"k",
                                client_name="webhdfs-truncate-1")
    assert [type(op) for op in ops] == [edits.TruncateOp, edits.AppendOp, edits.CloseFileOp]
    assert ns.tree.get("/d/f").blocks == (old[0], (77, 50, 1001))
    assert ns.truncate_blocks("/d/f", SUPER, 150, inode_id=node.id,
                              expected_blocks=ns.tree.get("/d/f").blocks, last_block=None,
                              checksum=b"", client_name="x") == (True, [])


# --------------------------------------------------------------------------- recovery

def test_startup_recovery_closes_files_whose_uploads_were_cut_off(tmp_path):
    name = str(tmp_path / "name")
    format_dirs([NameDir(name)])
    with FSNamesystem.open([name]) as fs:
        mutate(fs, lambda ns: (True, write_file(ns, "/appended", sizes=(100,))))
        before = fs.ns.tree.get("/appended").blocks
        mutate(fs, lambda ns: ns.append("/appended", SUPER, "webhdfs-append-4", "h"))
        mutate(fs, lambda ns: ns.create("/created", SUPER, client_name="webhdfs-create-3"))
        mutate(fs, lambda ns: ns.create("/foreign", SUPER, client_name="DFSClient_1"))
    with FSNamesystem.open([name]) as fs:
        done = recover_uploads(fs)
        assert sorted(done) == [("/appended", "closed with the blocks it has"),
                                ("/created", "closed with the blocks it has")]
        expected = dump(fs.ns)
    with FSNamesystem.open([name]) as fs:               # the recovery was logged
        assert dump(fs.ns) == expected
        created = fs.ns.tree.get("/created")
        assert (created.length, created.client_name) == (0, None)
        node = fs.ns.tree.get("/appended")
        assert (node.blocks, node.client_name) == (before, None)
        assert fs.ns.tree.get("/foreign").client_name == "DFSClient_1"
