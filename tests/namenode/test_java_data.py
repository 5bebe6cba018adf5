"""File contents through Hadoop's own clients (PySpark's jars) against a real namenode, each
test over both schemes: ``WebHdfsFileSystem`` (webhdfs://: the namenode's data path) and
``DistributedFileSystem`` (hdfs://: Hadoop IPC and the built-in datanode), with
``FileContext`` on each: the calls Spark's checkpointing makes (create, rename with and
without OVERWRITE, createNonRecursive, open/seek/read, getFileChecksum, block locations), and
FsShell's commands on files.

The client is configured with 1 KiB blocks, so a few KiB make a multi-block file. The file
checksum is compared with one assembled by Hadoop's own classes (MD5Hash, DataOutputBuffer,
MD5MD5CRC32GzipFileChecksum) from the content, so the server computes what HDFS would, and
``hadoop fs -checksum`` prints the same over both schemes.
"""

from __future__ import annotations

import pytest

from tests.namenode.blocks.helpers import cut
from tests.namenode.http.helpers import BLOCK, WebHdfs
from tests.namenode.java import Java, java_error, shell
from tests.servers import wait_for

pytestmark = pytest.mark.spark

DATA = bytes(range(256)) * 20 + b"!"                  # 5121 bytes: 6 blocks


@pytest.fixture(scope="module")
def java_block_size() -> int:
    return BLOCK


def hdfs_checksum(java, data: bytes):
    """What a default HDFS returns for ``data`` in 1 KiB blocks, computed by Hadoop's own
    classes: DataChecksum (CRC32C, 512 bytes per checksum: dfs.checksum.type's default) sums
    each block's chunks as a DataNode's BlockReceiver does, MD5Hash digests them as
    BlockChecksumHelper does, and the client's FileChecksumHelper way of combining them into
    MD5MD5CRC32CastagnoliFileChecksum."""
    jvm = java.jvm
    io, nio = jvm.org.apache.hadoop.io, jvm.java.nio
    util = jvm.org.apache.hadoop.util
    summer = util.DataChecksum.newDataChecksum(util.DataChecksum.Type.CRC32C, 512)
    buffer = io.DataOutputBuffer()
    blocks = cut(data, BLOCK)
    for block in blocks:
        sums = bytearray(4 * -(-len(block) // 512))
        out = nio.ByteBuffer.wrap(sums)
        summer.calculateChunkedSums(nio.ByteBuffer.wrap(bytearray(block)), out)
        io.MD5Hash.digest(out.array()).write(buffer)
    md5 = io.MD5Hash.digest(buffer.getData())
    crc_per_block = BLOCK // 512 if len(blocks) > 1 else 0
    return java.fs_pkg.MD5MD5CRC32CastagnoliFileChecksum(512, crc_per_block, md5)


# --------------------------------------------------------------------------- FileSystem

def test_create_write_and_read_a_multi_block_file(fs, java, d):
    java.write(fs.create(java.path(d + "/f"), False), DATA)
    status = fs.getFileStatus(java.path(d + "/f"))
    assert (status.getLen(), status.getBlockSize(), status.isFile()) == (len(DATA), BLOCK, True)
    assert java.read(fs, d + "/f") == DATA
    assert java.read(fs, d + "/f", offset=3000) == DATA[3000:]
    stream = fs.open(java.path(d + "/f"))
    try:                                   # seek back and forth on one stream
        for offset in (4000, 10, 2048):
            stream.seek(offset)
            assert stream.read() == DATA[offset]
    finally:
        stream.close()
    locations = fs.getFileBlockLocations(java.path(d + "/f"), 0, len(DATA))
    assert [(b.getOffset(), b.getLength()) for b in locations] == \
        [(i * BLOCK, len(part)) for i, part in enumerate(cut(DATA, BLOCK))]
    assert list(locations[0].getHosts()) == ["127.0.0.1"]


def test_get_block_locations_parses_with_hadoops_located_blocks_reader(fs, java, d, server):
    """GET_BLOCK_LOCATIONS (the form older clients fall back to), read by Hadoop's own
    JsonUtilClient.toLocatedBlocks."""
    import urllib.request
    java.write(fs.create(java.path(d + "/f"), False), DATA)
    url = f"{server.url}/webhdfs/v1{d}/f?op=GET_BLOCK_LOCATIONS&offset=1500&length=1000" \
          "&user.name=tester"
    with urllib.request.urlopen(url) as reply:
        text = reply.read().decode()
    jvm = java.jvm
    parsed = jvm.com.fasterxml.jackson.databind.ObjectMapper().readValue(
        text, jvm.java.lang.Class.forName("java.util.Map"))
    reader = jvm.java.lang.Class.forName("org.apache.hadoop.hdfs.web.JsonUtilClient") \
        .getDeclaredMethod("toLocatedBlocks", java.array(jvm.java.lang.Class,
                                                         [jvm.java.lang.Class.forName(
                                                             "java.util.Map")]))
    reader.setAccessible(True)
    located = reader.invoke(None, java.array(jvm.java.lang.Object, [parsed]))
    assert located.getFileLength() == len(DATA) and located.isLastBlockComplete()
    blocks = located.getLocatedBlocks()
    assert [b.getStartOffset() for b in blocks] == [1024, 2048]
    assert [b.getBlockSize() for b in blocks] == [BLOCK, BLOCK]
    assert blocks[0].getLocations()[0].getHostName() == "127.0.0.1"
    assert located.getLastLocatedBlock().getStartOffset() == 5 * BLOCK


def test_overwrite_false_refuses_and_true_replaces(fs, java, d):
    java.write(fs.create(java.path(d + "/f"), False), b"first")
    assert java_error(fs.create, java.path(d + "/f"), False) == \
        "org.apache.hadoop.fs.FileAlreadyExistsException"
    java.write(fs.create(java.path(d + "/f"), True), b"second")
    assert java.read(fs, d + "/f") == b"second"


def test_append_truncate_and_concat(fs, java, d):
    java.write(fs.create(java.path(d + "/f"), False), DATA[:1500])
    java.write(fs.append(java.path(d + "/f")), DATA[1500:])
    assert java.read(fs, d + "/f") == DATA
    assert fs.truncate(java.path(d + "/f"), 2500) is True
    assert java.read(fs, d + "/f") == DATA[:2500]
    java.write(fs.create(java.path(d + "/g"), False), DATA[2500:])
    fs.concat(java.path(d + "/f"), java.array(java.fs_pkg.Path, [java.path(d + "/g")]))
    assert java.read(fs, d + "/f") == DATA
    assert not fs.exists(java.path(d + "/g"))


def test_create_non_recursive(fs, java, d):
    create = fs.createNonRecursive
    java.write(create(java.path(d + "/f"), True, 4096, 1, BLOCK, None), b"made")
    assert java.read(fs, d + "/f") == b"made"
    assert java_error(create, java.path(d + "/missing/f"), True, 4096, 1, BLOCK, None) == \
        "java.io.FileNotFoundException"
    permission = java.jvm.org.apache.hadoop.fs.permission.FsPermission.getFileDefault()
    assert java_error(create, java.path(d + "/f"), permission, java.flags("CREATE"), 4096, 1,
                      BLOCK, None) == "org.apache.hadoop.fs.FileAlreadyExistsException"
    java.write(create(java.path(d + "/f"), permission, java.flags("CREATE", "OVERWRITE"), 4096,
                      1, BLOCK, None), b"again")
    assert java.read(fs, d + "/f") == b"again"


def test_a_second_writer_gets_already_being_created(fs, java, d):
    stream = fs.create(java.path(d + "/f"), True)
    stream.write(bytearray(b"x" * 100))
    # the first writer holds the lease once its data step has opened the file
    wait_for(lambda: fs.exists(java.path(d + "/f")), 30, "the first writer's data step")
    assert java_error(fs.create, java.path(d + "/f"), True) == \
        "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException"
    stream.close()
    assert java.read(fs, d + "/f") == b"x" * 100


def test_get_file_checksum_is_what_hdfs_computes(fs, java, d):
    for name, data in (("/a", DATA), ("/b", DATA), ("/c", DATA[:-1] + b"?"), ("/e", b"")):
        java.write(fs.create(java.path(d + name), False), data)
    a, b, c, e = (fs.getFileChecksum(java.path(d + n)) for n in ("/a", "/b", "/c", "/e"))
    assert a.equals(b) and not a.equals(c)
    assert a.getAlgorithmName() == "MD5-of-2MD5-of-512CRC32C"
    assert a.equals(hdfs_checksum(java, DATA))
    assert a.getLength() == 28
    assert e.getAlgorithmName() == "MD5-of-0MD5-of-0CRC32"
    if java.scheme == "hdfs":   # WebHdfsFileSystem has no checksum of a prefix (FileSystem's
        for length in (600, 1024, 1500, 3000):                        # default: null)
            assert fs.getFileChecksum(java.path(d + "/a"), length).equals(
                hdfs_checksum(java, DATA[:length])), length


# --------------------------------------------------------------------------- FileContext

def test_file_context_create_and_rename_as_spark_checkpoints_do(fs, java, d):
    """Spark's FileContextBasedCheckpointFileManager: create a temp file (checksum disabled),
    then rename it into place, with OVERWRITE or without."""
    fc = java.fs_pkg.FileContext.getFileContext(java.jvm.java.net.URI(java.uri),
                                                  java.conf())
    opts = java.fs_pkg.Options
    no_checksum = java.array(opts.CreateOpts, [
        opts.CreateOpts.checksumParam(opts.ChecksumOpt.createDisabled())])

    def create(path: str, data: bytes, *flags: str):
        java.write(fc.create(java.path(path), java.flags(*(flags or ("CREATE",))),
                             no_checksum), data)

    create(d + "/.1.tmp", b"batch 1")
    fc.rename(java.path(d + "/.1.tmp"), java.path(d + "/1"), java.rename_options("NONE"))
    create(d + "/.1b.tmp", b"batch 1 again")
    assert java_error(fc.rename, java.path(d + "/.1b.tmp"), java.path(d + "/1"),
                      java.rename_options("NONE")) == \
        "org.apache.hadoop.fs.FileAlreadyExistsException"
    fc.rename(java.path(d + "/.1b.tmp"), java.path(d + "/1"), java.rename_options("OVERWRITE"))
    assert java.read(fs, d + "/1") == b"batch 1 again"
    assert java_error(create, d + "/1", b"x") == \
        "org.apache.hadoop.fs.FileAlreadyExistsException"
    create(d + "/1", b"overwritten", "CREATE", "OVERWRITE")
    assert java.read(fs, d + "/1") == b"overwritten"
    assert sorted(s.getPath().getName() for s in fs.listStatus(java.path(d))) == ["1"]


def test_composite_crc_is_what_hadoop_s_crc_composer_makes(spark, java, start_namenode):
    """With dfs.checksum.combine.mode=COMPOSITE_CRC the file checksum is the composite CRC:
    every chunk's CRC32C (Hadoop's DataChecksum) composed by Hadoop's CrcComposer, the last
    chunk by its real length. Over hdfs:// the client's setting chooses it (DFSClient asks
    the datanode for each block's composite CRC and composes them: FileChecksumHelper); over
    webhdfs:// the namenode's, and the answer is read as JSON: WebHdfsFileSystem reads only
    MD5-of-MD5 checksums (JsonUtilClient.toMD5MD5CRC32FileChecksum)."""
    nn = start_namenode("-D", "dfs.checksum.combine.mode=COMPOSITE_CRC",
                        "-D", f"dfs.blocksize={BLOCK}")
    client = Java(spark, nn, java.scheme, block_size=BLOCK)
    conf = client.conf()
    conf.set("dfs.checksum.combine.mode", "COMPOSITE_CRC")
    fs = java.fs_pkg.FileSystem.newInstance(java.jvm.java.net.URI(client.uri), conf, "tester")
    try:
        client.write(fs.create(client.path("/c/f"), False), DATA)
        if java.scheme == "hdfs":
            answer = fs.getFileChecksum(client.path("/c/f"))
            got = {"algorithm": answer.getAlgorithmName(), "length": answer.getLength(),
                   "bytes": bytes(b & 0xFF for b in answer.getBytes()).hex()}
        else:
            got = WebHdfs(nn).get("/c/f", "GETFILECHECKSUM").json["FileChecksum"]
    finally:
        fs.close()
    util = java.jvm.org.apache.hadoop.util
    crc32c = util.DataChecksum.Type.CRC32C
    summer = util.DataChecksum.newDataChecksum(crc32c, 512)
    composer = util.CrcComposer.newCrcComposer(crc32c, 512)
    for i in range(0, len(DATA), 512):
        chunk = DATA[i:i + 512]
        summer.reset()
        summer.update(bytearray(chunk), 0, len(chunk))
        composer.update(int(summer.getValue()) - (1 << 32 if summer.getValue() >= 1 << 31
                                                  else 0), len(chunk))
    expected = bytes(b & 0xFF for b in composer.digest())
    assert got == {"algorithm": "COMPOSITE-CRC32C", "bytes": expected.hex(), "length": 4}


def test_fsshell_checksum_prints_what_hdfs_prints(fs, java, d):
    """``hadoop fs -checksum``: the path, the algorithm and the checksum's bytes in hex."""
    java.write(fs.create(java.path(d + "/f"), False), DATA)
    code, printed = shell(java, "tester", "-checksum", d + "/f")
    expected = hdfs_checksum(java, DATA)
    assert code == 0
    path, algorithm, value = printed.strip().split("\t")
    assert path.endswith(d + "/f") and algorithm == "MD5-of-2MD5-of-512CRC32C"
    # FsShell prints getLength() (28) bytes of getBytes()
    assert value == bytes(b & 0xFF for b in expected.getBytes())[:expected.getLength()].hex()


def test_fsshell_commands_on_files(java, d, tmp_path):
    """Hadoop's FsShell (``hadoop fs``) with fs.defaultFS on the scheme: every command exits
    0, prints what HDFS prints and leaves what HDFS would (-rm moves to the caller's trash,
    as fs.trash.interval asks)."""
    local = tmp_path / "local.txt"
    local.write_text("hello shell\n" * 100)
    x = d + "/x"

    def run(*args: str) -> tuple[int, str]:
        code, printed = shell(java, "tester", *args, settings={"fs.trash.interval": "5"})
        return code, printed

    commands = [
        ("-mkdir", "-p", x), ("-put", str(local), x + "/f.txt"), ("-ls", "-R", d),
        ("-du", "-s", d), ("-df", "/"), ("-count", "-q", d), ("-setrep", "2", x + "/f.txt"),
        ("-touchz", x + "/empty"), ("-getfacl", x),
        ("-setfattr", "-n", "user.a", "-v", "b", x), ("-test", "-d", x),
    ]
    assert [(c, run(*c)[0]) for c in commands] == [(c, 0) for c in commands]
    assert run("-cat", x + "/f.txt") == (0, local.read_text())
    assert run("-stat", "%r %b %n", x + "/f.txt") == (0, "2 1200 f.txt\n")
    assert run("-getfattr", "-d", x) == (0, f'# file: {x}\nuser.a="b"\n')
    commands = [
        ("-appendToFile", str(local), x + "/f.txt"), ("-truncate", "-w", "5", x + "/f.txt"),
        ("-mv", x + "/f.txt", x + "/g.txt"), ("-cp", x + "/g.txt", x + "/h.txt"),
        ("-rm", x + "/empty"),
    ]
    assert [(c, run(*c)[0]) for c in commands] == [(c, 0) for c in commands]
    assert run("-cat", x + "/h.txt") == (0, "hello")
    assert run("-test", "-e", x + "/empty")[0] == 1
    assert run("-test", "-e", f"/user/tester/.Trash/Current{x}/empty")[0] == 0
