"""Hadoop's FileSystem contract over ``webhdfs://`` and over ``hdfs://`` (each test once per
scheme) through PySpark's JVM: the behaviours the
contract tests in hadoop-common's ``org.apache.hadoop.fs.contract`` (AbstractContractCreate-,
Append-, Rename-, Delete-, Open-, Seek-, Concat- and GetFileStatusTest) check, as the
FileSystem specification (filesystem.md) states them and as HDFS's contract options answer
where the specification leaves a choice (``rename-returns-false-if-dest-exists``,
``rejects-seek-past-eof``, ...). Written for nnlite, each named after the case it follows."""

from __future__ import annotations

import pytest

from tests.namenode.http.helpers import BLOCK
from tests.namenode.java import java_error

pytestmark = pytest.mark.spark

FNF = "java.io.FileNotFoundException"
EXISTS = "org.apache.hadoop.fs.FileAlreadyExistsException"
DATA = bytes(range(256)) * 10                          # 2560 bytes: three 1 KiB blocks


@pytest.fixture(scope="module")
def java_block_size() -> int:
    return BLOCK


@pytest.fixture(scope="module")
def server(start_module_namenode):
    return start_module_namenode("-D", f"dfs.blocksize={BLOCK}")


def put(fs, java, path: str, data: bytes = DATA, overwrite: bool = False) -> None:
    java.write(fs.create(java.path(path), overwrite), data)


# --------------------------------------------------------------------------- create

def test_create_new_file_then_read_it(fs, java, d):                    # testCreateNewFile
    put(fs, java, d + "/f")
    assert java.read(fs, d + "/f") == DATA
    assert fs.getFileStatus(java.path(d + "/f")).getLen() == len(DATA)


def test_create_over_an_existing_file(fs, java, d):
    put(fs, java, d + "/f")
    assert java_error(fs.create, java.path(d + "/f"), False) == EXISTS   # NoOverwrite
    put(fs, java, d + "/f", b"new", overwrite=True)                      # OverwriteExisting
    assert java.read(fs, d + "/f") == b"new"


def test_create_over_a_directory_is_refused(fs, java, d):      # testOverwriteEmptyDirectory
    assert fs.mkdirs(java.path(d + "/dir"))
    assert java_error(fs.create, java.path(d + "/dir"), True) == EXISTS
    assert fs.getFileStatus(java.path(d + "/dir")).isDirectory()


def test_create_under_a_file_is_refused(fs, java, d):          # testCreateFileUnderFile
    put(fs, java, d + "/f")
    assert java_error(fs.create, java.path(d + "/f/child"), False) == \
        "org.apache.hadoop.fs.ParentNotDirectoryException"


def test_create_makes_missing_parents(fs, java, d):            # testMkdirsPopulates...
    put(fs, java, d + "/a/b/c/f", b"x")
    assert fs.getFileStatus(java.path(d + "/a/b")).isDirectory()


# --------------------------------------------------------------------------- append

def test_append_to_an_empty_then_a_full_file(fs, java, d):     # testAppendToEmptyFile...
    put(fs, java, d + "/f", b"")
    java.write(fs.append(java.path(d + "/f")), b"one")
    java.write(fs.append(java.path(d + "/f")), DATA)
    assert java.read(fs, d + "/f") == b"one" + DATA


def test_append_to_a_missing_file(fs, java, d):                # testAppendNonexistentFile
    assert java_error(fs.append, java.path(d + "/missing")) == FNF


# --------------------------------------------------------------------------- rename

def test_rename_in_the_same_directory(fs, java, d):            # testRenameNewFileSameDir
    put(fs, java, d + "/f")
    assert fs.rename(java.path(d + "/f"), java.path(d + "/g"))
    assert not fs.exists(java.path(d + "/f"))
    assert java.read(fs, d + "/g") == DATA


def test_rename_of_a_missing_source_is_false(fs, java, d):     # testRenameNonexistentFile
    assert fs.rename(java.path(d + "/missing"), java.path(d + "/g")) is False


def test_rename_over_an_existing_file_is_false(fs, java, d):   # testRenameFileOverExisting
    put(fs, java, d + "/f", b"src")
    put(fs, java, d + "/g", b"dst")
    assert fs.rename(java.path(d + "/f"), java.path(d + "/g")) is False
    assert java.read(fs, d + "/g") == b"dst" and java.read(fs, d + "/f") == b"src"


def test_rename_into_an_existing_directory_moves_under_it(fs, java, d):
    put(fs, java, d + "/src/sub/f")                          # testRenameDirIntoExistingDir
    assert fs.mkdirs(java.path(d + "/dst"))
    assert fs.rename(java.path(d + "/src"), java.path(d + "/dst"))
    assert java.read(fs, d + "/dst/src/sub/f") == DATA


def test_rename_to_a_missing_parent_is_false(fs, java, d):     # testRenameFileNonexistentDir
    put(fs, java, d + "/f")
    assert fs.rename(java.path(d + "/f"), java.path(d + "/nope/g")) is False
    assert fs.exists(java.path(d + "/f"))


def test_rename_a_directory_onto_its_child_is_refused(fs, java, d):
    assert fs.mkdirs(java.path(d + "/a/b"))                  # testRenameDirToSelf/child
    assert fs.rename(java.path(d + "/a"), java.path(d + "/a/b/c")) is False


# --------------------------------------------------------------------------- delete

def test_delete_cases(fs, java, d):
    assert fs.mkdirs(java.path(d + "/empty"))
    assert fs.delete(java.path(d + "/empty"), False)         # testDeleteEmptyDirNonRecursive
    assert fs.delete(java.path(d + "/missing"), True) is False   # ...NonexistentPathRecursive
    put(fs, java, d + "/full/f")
    assert java_error(fs.delete, java.path(d + "/full"), False) == \
        "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException"   # NonEmptyDirNonRecursive
    assert fs.exists(java.path(d + "/full/f"))
    assert fs.delete(java.path(d + "/full"), True)           # testDeleteNonEmptyDirRecursive
    put(fs, java, d + "/one")
    assert fs.delete(java.path(d + "/one"), False)           # testDeleteSingleFile
    assert fs.mkdirs(java.path(d + "/deep/er/est"))
    assert fs.delete(java.path(d + "/deep/er/est"), False)   # testDeleteDeepEmptyDir
    assert fs.exists(java.path(d + "/deep/er"))


# --------------------------------------------------------------------------- open, seek

def test_open_missing_and_directory(fs, java, d):              # testOpenReadDir, ...Missing
    from py4j.protocol import Py4JJavaError  # with pyspark, as tests/namenode/java.py

    assert java_error(fs.open, java.path(d + "/missing")) == FNF
    with pytest.raises(Py4JJavaError):
        stream = fs.open(java.path(d))
        stream.read()


def test_seek_and_read_across_blocks(fs, java, d):             # testSeekAndReadPastEndOfFile
    put(fs, java, d + "/f")
    stream = fs.open(java.path(d + "/f"))
    try:
        assert stream.getPos() == 0
        for offset in (0, BLOCK - 1, BLOCK, 2 * BLOCK + 5, 7):
            stream.seek(offset)
            assert stream.getPos() == offset and stream.read() == DATA[offset]
        stream.seek(len(DATA) - 1)
        assert stream.read() == DATA[-1]
        assert stream.read() == -1                            # at EOF: -1
    finally:
        stream.close()


def test_a_read_after_seeking_past_the_end(fs, java, d):     # testSeekPastEndOfFileThenRead
    """EOFException, where each client's stream raises it: DFSInputStream.seek checks the
    target against the file's length at once; WebHDFS's stream seeks lazily and refuses the
    read that follows (the contract allows either: rejects-seek-past-eof)."""
    put(fs, java, d + "/f")
    stream = fs.open(java.path(d + "/f"))
    try:
        if java.scheme == "hdfs":
            assert java_error(stream.seek, len(DATA) + 10) == "java.io.EOFException"
        else:
            stream.seek(len(DATA) + 10)
            assert java_error(stream.read) == "java.io.EOFException"
    finally:
        stream.close()


def test_positioned_reads(fs, java, d):             # testPositionedBulkReadDoesntChangePosition
    """py4j hands a Java byte[] over by value, so the bytes a pread fills are checked as the
    ranged OPEN it makes (test_webhdfs_data.py); here its count and position."""
    put(fs, java, d + "/f")
    stream = fs.open(java.path(d + "/f"))
    try:
        stream.seek(7)
        buffer = java.gateway.new_array(java.jvm.byte, 100)
        assert stream.read(1500, buffer, 0, 100) == 100
        assert stream.getPos() == 7                           # pread leaves the position
        assert stream.read() == DATA[7]
        assert java_error(stream.readFully, len(DATA) - 10, buffer) == "java.io.EOFException"
    finally:
        stream.close()


# --------------------------------------------------------------------------- concat

def test_concat_cases(fs, java, d):
    put(fs, java, d + "/t", DATA[:BLOCK])
    put(fs, java, d + "/s1", DATA[BLOCK:2 * BLOCK])
    put(fs, java, d + "/s2", DATA[2 * BLOCK:])
    paths = java.array(java.fs_pkg.Path, [java.path(d + "/s1"), java.path(d + "/s2")])
    fs.concat(java.path(d + "/t"), paths)                     # testConcatFiles
    assert java.read(fs, d + "/t") == DATA
    assert not fs.exists(java.path(d + "/s1"))
    missing = java.array(java.fs_pkg.Path, [java.path(d + "/t")])
    assert java_error(fs.concat, java.path(d + "/missing"), missing) == FNF   # MissingTarget
    self_ = java.array(java.fs_pkg.Path, [java.path(d + "/t")])
    assert java_error(fs.concat, java.path(d + "/t"), self_) == \
        "org.apache.hadoop.HadoopIllegalArgumentException"                   # testConcatOnSelf
    put(fs, java, d + "/empty", b"")
    empty = java.array(java.fs_pkg.Path, [java.path(d + "/empty")])
    assert java_error(fs.concat, java.path(d + "/t"), empty) == \
        "org.apache.hadoop.HadoopIllegalArgumentException"           # testConcatEmptyFiles


# --------------------------------------------------------------------------- status

def test_get_file_status_cases(fs, java, d):
    assert java_error(fs.getFileStatus, java.path(d + "/missing")) == FNF   # testGetFileStatus
    put(fs, java, d + "/f")                                                 # ...NonexistentFile
    status = fs.getFileStatus(java.path(d + "/f"))
    assert status.isFile() and status.getLen() == len(DATA) and status.getBlockSize() == BLOCK
    assert status.getPath().toString() == java.qualified(f"{d}/f")
    listed = fs.listStatus(java.path(d + "/f"))                 # testListStatusFile
    assert len(listed) == 1 and listed[0].getPath().getName() == "f"
    assert fs.mkdirs(java.path(d + "/empty"))
    assert len(fs.listStatus(java.path(d + "/empty"))) == 0    # testListStatusEmptyDirectory
    put(fs, java, d + "/deep/a/f1", b"1")
    put(fs, java, d + "/deep/b/f2", b"22")
    found, it = [], fs.listFiles(java.path(d + "/deep"), True)  # testListFilesRecursive
    while it.hasNext():
        found.append(it.next().getPath().getName())
    assert sorted(found) == ["f1", "f2"]
    assert java_error(fs.listStatus, java.path(d + "/nope")) == FNF
