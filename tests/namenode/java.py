"""Hadoop's Java client and FsShell from PySpark's JVM, for the tests that use them as the
reference, over either of the namenode's doors: ``Java`` (classes, paths, a FileSystem per
user, reads and writes) on ``webhdfs://`` (WebHdfsFileSystem) or ``hdfs://``
(DistributedFileSystem: Hadoop IPC and the built-in datanode), ``java_exception`` and
``java_error`` (what a call raises, its Java class) and ``shell`` (FsShell's exit code and
output)."""

from __future__ import annotations

import pytest

SCHEMES = ("webhdfs", "hdfs")


class Java:
    """The py4j handles one test needs: classes, paths, arrays, exception names; ``scheme``
    is the door the FileSystems it opens go through."""

    def __init__(self, spark, namenode, scheme: str = "webhdfs", block_size: int | None = None):
        self.gateway = spark.sparkContext._gateway
        self.jvm = spark.sparkContext._jvm
        self.scheme = scheme
        self.uri = namenode.hdfs if scheme == "hdfs" else f"webhdfs://127.0.0.1:{namenode.port}"
        self.fs_pkg = self.jvm.org.apache.hadoop.fs
        self.block_size = block_size        # the client's dfs.blocksize (None: Hadoop's)

    def conf(self):
        conf = self.jvm.org.apache.hadoop.conf.Configuration()
        conf.setBoolean(f"fs.{self.scheme}.impl.disable.cache", True)
        if self.block_size is not None:
            conf.set("dfs.blocksize", str(self.block_size))
        conf.set("dfs.webhdfs.socket.connect-timeout", "10s")
        conf.set("dfs.webhdfs.socket.read-timeout", "20s")
        return conf

    def open(self, user: str):
        """A new FileSystem of the scheme's acting as ``user`` (newInstance: never the shared
        cache)."""
        return self.fs_pkg.FileSystem.newInstance(self.jvm.java.net.URI(self.uri), self.conf(),
                                                  user)

    def snapshottable_dirs(self, fs):
        """The SnapshottableDirectoryStatus[] of ``fs``: the one call the two client classes
        name differently (DistributedFileSystem.getSnapshottableDirListing,
        WebHdfsFileSystem.getSnapshottableDirectoryList)."""
        if self.scheme == "hdfs":
            return fs.getSnapshottableDirListing()
        return fs.getSnapshottableDirectoryList()

    def path(self, text: str):
        return self.fs_pkg.Path(text)

    def qualified(self, text: str) -> str:
        return self.uri + text

    def permission(self, octal: str):
        return self.jvm.org.apache.hadoop.fs.permission.FsPermission(octal)

    def array(self, cls, items):
        out = self.gateway.new_array(cls, len(items))
        for i, item in enumerate(items):
            out[i] = item
        return out

    def rename_options(self, *names: str):
        rename = self.fs_pkg.Options.Rename
        return self.array(rename, [rename.valueOf(n) for n in names])

    def flags(self, *names: str):
        """An EnumSet of CreateFlag."""
        return self._enum_set(self.fs_pkg.CreateFlag, names)

    def xattr_flags(self, *names: str):
        return self._enum_set(self.fs_pkg.XAttrSetFlag, names)

    def _enum_set(self, enum, names):
        out = self.jvm.java.util.EnumSet.noneOf(enum.valueOf(names[0]).getDeclaringClass())
        for name in names:
            out.add(enum.valueOf(name))
        return out

    def read(self, fs, path: str, offset: int = 0) -> bytes:
        stream = fs.open(self.path(path))
        try:
            if offset:
                stream.seek(offset)
            return bytes(self.jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
        finally:
            stream.close()

    def write(self, stream, data: bytes) -> None:
        """Write ``data`` in pieces that do not fall on block boundaries, then close."""
        try:
            for start in range(0, len(data), 2000):
                stream.write(bytearray(data[start:start + 2000]))
        finally:
            stream.close()


def java_exception(call, *args):
    """The Java exception ``call(*args)`` raises in the JVM (its py4j handle)."""
    from py4j.protocol import Py4JJavaError
    with pytest.raises(Py4JJavaError) as info:
        call(*args)
    return info.value.java_exception


def java_error(call, *args) -> str:
    """The Java class name of the exception ``call(*args)`` raises in the JVM."""
    exc = java_exception(call, *args)
    name = exc.getClass().getName()
    if name == "org.apache.hadoop.ipc.RemoteException":
        # A class the client jars lack (SnapshotException lives in hadoop-hdfs, not in
        # hadoop-client-api) stays a RemoteException naming it, against HDFS as here.
        return exc.getClassName()
    return name


class Printed(str):
    """What FsShell printed on stdout; ``err`` holds its stderr (the error lines)."""
    err = ""


def shell(java, user: str, *args: str, settings: dict[str, str] | None = None
          ) -> tuple[int, Printed]:
    """Hadoop's FsShell on the namenode as ``user``, with ``settings`` added to the client's
    configuration: its exit code and what it printed."""
    jvm = java.jvm
    out, err = jvm.java.io.ByteArrayOutputStream(), jvm.java.io.ByteArrayOutputStream()
    saved, saved_err = jvm.java.lang.System.out, jvm.java.lang.System.err
    conf = java.conf()
    conf.set("fs.defaultFS", str(java.uri))
    for key, value in (settings or {}).items():
        conf.set(key, value)
    ugi = jvm.org.apache.hadoop.security.UserGroupInformation.createRemoteUser(user)
    jvm.java.lang.System.setOut(jvm.java.io.PrintStream(out, True))
    jvm.java.lang.System.setErr(jvm.java.io.PrintStream(err, True))
    try:
        shell = jvm.org.apache.hadoop.fs.FsShell(conf)
        argv = java.gateway.new_array(jvm.java.lang.String, len(args))
        for i, arg in enumerate(args):
            argv[i] = arg
        old = jvm.org.apache.hadoop.security.UserGroupInformation.getLoginUser()
        jvm.org.apache.hadoop.security.UserGroupInformation.setLoginUser(ugi)
        try:
            code = jvm.org.apache.hadoop.util.ToolRunner.run(shell, argv)
        finally:
            jvm.org.apache.hadoop.security.UserGroupInformation.setLoginUser(old)
    finally:
        jvm.java.lang.System.setOut(saved)
        jvm.java.lang.System.setErr(saved_err)
    printed = Printed(out.toString())
    printed.err = err.toString()
    return code, printed
