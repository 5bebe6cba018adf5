"""``swebhdfs://``: Hadoop's own ``SWebHdfsFileSystem`` (PySpark's JVM) against a namenode
serving HTTPS, trusting the test's CA through an ``ssl-client.xml`` whose PKCS#12 truststore
Java's keytool made, as a Hadoop client is set up; without that truststore the handshake
fails (PKIX), so the JVM's own trust never let it through."""

from __future__ import annotations

import pytest

from tests.tls_certs import Certificates

pytestmark = pytest.mark.spark

PASSWORD = "trustpass"


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> Certificates:
    return Certificates.make(tmp_path_factory.mktemp("tls-jvm"))


@pytest.fixture(scope="module")
def nn(start_module_namenode, certs):
    return start_module_namenode(*[a for d in certs.server_defines() for a in ("-D", d)])


def file_system(spark, nn, ssl_client=None):
    jvm = spark.sparkContext._jvm
    conf = jvm.org.apache.hadoop.conf.Configuration()
    conf.setBoolean("fs.swebhdfs.impl.disable.cache", True)
    conf.set("dfs.webhdfs.socket.connect-timeout", "10s")
    conf.set("dfs.webhdfs.socket.read-timeout", "20s")
    if ssl_client is not None:       # the client's ssl-client.xml, read as a local file
        conf.addResource(jvm.org.apache.hadoop.fs.Path(str(ssl_client)))
    uri = jvm.java.net.URI(f"swebhdfs://127.0.0.1:{nn.https_port}")
    return jvm, jvm.org.apache.hadoop.fs.FileSystem.newInstance(uri, conf, "tester")


def test_swebhdfs_writes_reads_and_lists_with_the_truststore(spark, nn, certs):
    jvm, fs = file_system(spark, nn, certs.client_xml(PASSWORD))
    try:
        assert fs.getClass().getName() == "org.apache.hadoop.hdfs.web.SWebHdfsFileSystem"
        path = jvm.org.apache.hadoop.fs.Path("/swebhdfs/file")
        assert fs.mkdirs(path.getParent())
        out = fs.create(path)
        out.write(bytearray(b"over swebhdfs"))
        out.close()
        stream = fs.open(path)
        try:
            assert bytes(stream.readAllBytes()) == b"over swebhdfs"
        finally:
            stream.close()
        listed = [s.getPath().getName() for s in fs.listStatus(path.getParent())]
        assert listed == ["file"]
    finally:
        fs.close()


def test_swebhdfs_without_the_truststore_fails_the_handshake(spark, nn):
    from py4j.protocol import Py4JJavaError
    jvm, fs = file_system(spark, nn)
    try:
        with pytest.raises(Py4JJavaError) as failed:
            fs.getFileStatus(jvm.org.apache.hadoop.fs.Path("/"))
        assert "PKIX" in str(failed.value) or "SSLHandshake" in str(failed.value)
    finally:
        fs.close()
