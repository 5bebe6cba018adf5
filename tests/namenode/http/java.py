"""Hadoop's Java client and FsShell from PySpark's JVM, for the tests that use them as the
reference: ``Java`` (classes, paths, a FileSystem per user), ``java_error`` (the Java class of
what a call raises) and ``shell`` (FsShell's exit code and output)."""

from __future__ import annotations

import pytest


class Java:
    """The py4j handles one test needs: classes, paths, arrays, exception names."""

    def __init__(self, spark, port: int):
        self.gateway = spark.sparkContext._gateway
        self.jvm = spark.sparkContext._jvm
        self.uri = f"webhdfs://127.0.0.1:{port}"
        self.fs_pkg = self.jvm.org.apache.hadoop.fs

    def conf(self):
        conf = self.jvm.org.apache.hadoop.conf.Configuration()
        conf.setBoolean("fs.webhdfs.impl.disable.cache", True)
        conf.set("dfs.webhdfs.socket.connect-timeout", "10s")
        conf.set("dfs.webhdfs.socket.read-timeout", "20s")
        return conf

    def open(self, user: str):
        """A new WebHdfsFileSystem acting as ``user`` (newInstance: never the shared cache)."""
        return self.fs_pkg.FileSystem.newInstance(self.jvm.java.net.URI(self.uri), self.conf(),
                                                  user)

    def path(self, text: str):
        return self.fs_pkg.Path(text)

    def qualified(self, text: str) -> str:
        return self.uri + text

    def permission(self, octal: str):
        return self.jvm.org.apache.hadoop.fs.permission.FsPermission(octal)

    def rename_options(self, *names: str):
        rename = self.fs_pkg.Options.Rename
        array = self.gateway.new_array(rename, len(names))
        for i, name in enumerate(names):
            array[i] = rename.valueOf(name)
        return array

    def xattr_flags(self, *names: str):
        flag = self.fs_pkg.XAttrSetFlag
        flags = self.jvm.java.util.EnumSet.noneOf(flag.valueOf(names[0]).getDeclaringClass())
        for name in names:
            flags.add(flag.valueOf(name))
        return flags


def java_error(call, *args) -> str:
    """The Java class name of the exception ``call(*args)`` raises in the JVM."""
    from py4j.protocol import Py4JJavaError
    with pytest.raises(Py4JJavaError) as info:
        call(*args)
    exc = info.value.java_exception
    name = exc.getClass().getName()
    if name == "org.apache.hadoop.ipc.RemoteException":
        # A class the client jars lack (SnapshotException lives in hadoop-hdfs, not in
        # hadoop-client-api) stays a RemoteException naming it, against HDFS as here.
        return exc.getClassName()
    return name


class Printed(str):
    """What FsShell printed on stdout; ``err`` holds its stderr (the error lines)."""
    err = ""


def shell(java, user: str, *args: str) -> tuple[int, Printed]:
    """Hadoop's FsShell on the namenode as ``user``: its exit code and what it printed."""
    jvm = java.jvm
    out, err = jvm.java.io.ByteArrayOutputStream(), jvm.java.io.ByteArrayOutputStream()
    saved, saved_err = jvm.java.lang.System.out, jvm.java.lang.System.err
    conf = java.conf()
    conf.set("fs.defaultFS", str(java.uri))
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
