"""Hadoop's WebHdfsFileSystem for the data tests (PySpark's jars), configured with 1 KiB
blocks so a few KiB make a multi-block file; the ``java`` and ``fs`` fixtures are in
tests/data/conftest.py."""

from __future__ import annotations

from tests.data import cut

BLOCK = 1024


class Java:
    def __init__(self, spark, port: int):
        self.gateway = spark.sparkContext._gateway
        self.jvm = spark.sparkContext._jvm
        self.uri = self.jvm.java.net.URI(f"webhdfs://127.0.0.1:{port}")
        self.fs_pkg = self.jvm.org.apache.hadoop.fs

    def conf(self):
        conf = self.jvm.org.apache.hadoop.conf.Configuration()
        conf.setBoolean("fs.webhdfs.impl.disable.cache", True)
        conf.set("dfs.blocksize", str(BLOCK))
        conf.set("dfs.webhdfs.socket.connect-timeout", "10s")
        conf.set("dfs.webhdfs.socket.read-timeout", "20s")
        return conf

    def path(self, text: str):
        return self.fs_pkg.Path(text)

    def array(self, cls, items):
        out = self.gateway.new_array(cls, len(items))
        for i, item in enumerate(items):
            out[i] = item
        return out

    def flags(self, *names):
        flag = self.fs_pkg.CreateFlag
        out = self.jvm.java.util.EnumSet.noneOf(flag.valueOf(names[0]).getDeclaringClass())
        for name in names:
            out.add(flag.valueOf(name))
        return out

    def rename_options(self, *names):
        rename = self.fs_pkg.Options.Rename
        return self.array(rename, [rename.valueOf(n) for n in names])

    def read(self, fs, path: str, offset: int = 0) -> bytes:
        stream = fs.open(self.path(path))
        try:
            if offset:
                stream.seek(offset)
            return bytes(self.jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
        finally:
            stream.close()

    def write(self, stream, data: bytes) -> None:
        try:
            for piece in cut(data, 2000):
                stream.write(bytearray(piece))
        finally:
            stream.close()
