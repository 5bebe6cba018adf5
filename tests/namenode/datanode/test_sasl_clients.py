"""The data port's SASL handshake with real clients against a secure namenode process (a real
KDC, tests/kerberos_realm.py; hadoop.security.authentication = kerberos,
dfs.block.access.token.enable and dfs.data.transfer.protection): Hadoop's
DistributedFileSystem in a JVM of its own (SecureBlockClient.java: SaslDataTransferClient,
which decodes our block token identifiers with Hadoop's BlockTokenIdentifier) and
hdfs-native from a ticket cache write a file of several blocks and read it back, at each
protection, and under privacy with the AES/CTR suite too; a client that does not start the
handshake is refused."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from nnlite.formats.hadoop import client_namenode as cn
from nnlite.namenode.security import services
from tests.namenode.datanode.client import TransferClient
from tests.namenode.ha.haset import NAMESERVICE, HASet
from tests.namenode.rpc.test_ha import native_conf
from tests.namenode.security.sasl_client import SaslClient
from tests.namenode.security.test_services_ha import call
from tests.servers import wait_for

JAVA_CLIENT = Path(__file__).with_name("SecureBlockClient.java")
SIZE = 2 * (1 << 20) + 12_345           # three 1 MiB blocks, the last partial


def secure_args(kdc, keytab, protection: str) -> tuple:
    return ("-D", "hadoop.security.authentication=kerberos",
            "-D", f"dfs.namenode.kerberos.principal=nn/_HOST@{kdc.name}",
            "-D", f"dfs.namenode.keytab.file={keytab}",
            "-D", f"dfs.web.authentication.kerberos.principal=HTTP/_HOST@{kdc.name}",
            "-D", f"dfs.web.authentication.kerberos.keytab={keytab}",
            "-D", "hadoop.rpc.protection=authentication,integrity,privacy",
            "-D", "dfs.block.access.token.enable=true",
            "-D", f"dfs.data.transfer.protection={protection}")


@pytest.fixture(scope="module", params=["authentication", "integrity", "privacy"])
def protection(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def secure(kdc, start_module_namenode, tmp_path_factory, protection):
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"),
                           path=tmp_path_factory.mktemp("keytab") / "nn.keytab")
    return start_module_namenode(*secure_args(kdc, keytab, protection), env=kdc.env_for(),
                                 users="alice=supergroup")


@pytest.fixture(scope="module")
def alice(kdc):
    return kdc.user("alice")


def run_java_client(kdc, namenode, user, protection: str, path: str,
                    *extra: str) -> dict[str, str]:
    pyspark = pytest.importorskip("pyspark")
    java = shutil.which("java")
    if java is None:
        pytest.skip("no java on PATH")
    jars = Path(pyspark.__file__).parent / "jars"
    proc = subprocess.run(
        [java, "-cp", f"{jars}/*", f"-Djava.security.krb5.conf={kdc.krb5_conf}",
         "-Dsun.security.krb5.disableReferrals=true", str(JAVA_CLIENT), namenode.hdfs,
         protection, user.name, str(user.keytab), path, str(SIZE), *extra],
        capture_output=True, text=True, timeout=240, env={**os.environ, **kdc.env_for()})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line.partition("=") for line in proc.stdout.splitlines() if "=" in line]
    return {key: value for key, _, value in lines}


def test_hadoops_client_writes_and_reads_through_the_handshake(kdc, secure, alice,
                                                                protection):
    out = run_java_client(kdc, secure, alice, protection, f"/java/{protection}")
    assert out["open-read"] == "1000"        # through the datanode's IPC port, by token
    assert out["written"] == str(SIZE)
    assert out["read-equal"] == "true"
    assert out["checksum"] == "MD5-of-2048MD5-of-512CRC32C"      # 1 MiB blocks


def test_hdfs_native_with_a_ticket_cache(secure, alice, monkeypatch, protection):
    hdfs_native = pytest.importorskip("hdfs_native")
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{alice.ccache}")
    client = hdfs_native.Client(secure.hdfs, config={
        "hadoop.security.authentication": "kerberos",
        "dfs.data.transfer.protection": protection})
    data = random.Random(7).randbytes(SIZE)
    options = hdfs_native.WriteOptions(block_size=1 << 20)
    with client.create(f"/native/{protection}", options) as stream:
        stream.write(data)
    with client.read(f"/native/{protection}") as stream:
        assert hashlib.sha256(stream.read()).digest() == hashlib.sha256(data).digest()


def test_a_client_without_the_handshake_is_refused(secure, alice):
    """An op sent as a simple-mode client sends it: the datanode reads no magic number and
    closes the connection unanswered (InvalidMagicNumberException)."""
    with SaslClient(secure.rpc_port) as rpc:
        rpc.kerberos(alice.ccache, "auth")
        rpc.context("alice")
        report = rpc.answer("getDatanodeReport", cn.GetDatanodeReportRequestProto(
            type=cn.DatanodeReportTypeProto.LIVE))
    datanode = report.di[0].id
    with TransferClient(datanode.xferPort, "BP-0") as client:
        client.send(client.write_request(1))
        assert client.at_eof()


def test_privacy_with_the_aes_suite_for_both_clients(kdc, start_namenode, tmp_path, alice,
                                                     monkeypatch):
    """dfs.encrypt.data.transfer.cipher.suites = AES/CTR/NoPadding on the namenode: Hadoop's
    client (offering the suite from its own key) and hdfs-native (offering it always) run
    their blocks under AES/CTR after the DIGEST-MD5 handshake."""
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"), path=tmp_path / "nn.keytab")
    namenode = start_namenode(*secure_args(kdc, keytab, "privacy"), "-D",
                              "dfs.encrypt.data.transfer.cipher.suites=AES/CTR/NoPadding",
                              env=kdc.env_for(), users="alice=supergroup")
    out = run_java_client(kdc, namenode, alice, "privacy", "/java/aes", "AES/CTR/NoPadding")
    assert (out["written"], out["read-equal"]) == (str(SIZE), "true")
    hdfs_native = pytest.importorskip("hdfs_native")
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{alice.ccache}")
    client = hdfs_native.Client(namenode.hdfs, config={
        "hadoop.security.authentication": "kerberos",
        "dfs.data.transfer.protection": "privacy"})
    data = random.Random(8).randbytes(SIZE)
    with client.create("/native/aes", hdfs_native.WriteOptions(block_size=1 << 20)) as stream:
        stream.write(data)
    with client.read("/native/aes") as stream:
        assert stream.read() == data


def test_an_ha_set_s_pipeline_runs_the_handshake_on_both_datanodes(kdc, tmp_path, etcd_single,
                                                                  alice, monkeypatch):
    """A kerberized HA set with block tokens and dfs.data.transfer.protection = privacy:
    hdfs-native, from alice's ticket cache, writes through a pipeline of both datanodes --
    the active's forwards every packet to the standby's after the data port's handshake
    with the writer's own WRITE token (mirror.py), which the standby's datanode checks with
    the set's block keys -- and, once the active is killed, reads the file back from the
    new active, whose READ tokens its own datanode takes."""
    hdfs_native = pytest.importorskip("hdfs_native")
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"), path=tmp_path / "nn.keytab")
    settings = dict(flag.split("=", 1) for flag in secure_args(kdc, keytab, "privacy")[1::2])
    settings["hadoop.user.group.static.mapping.overrides"] = "tester=supergroup;alice=supergroup"
    settings["nnlite.ha.replication.interval"] = "3600"   # no resync copy: the pipeline's only
    haset = HASet(tmp_path, etcd_single, settings=settings)
    as_nn = services.login(f"nn/localhost@{kdc.name}", str(keytab))

    def names_its_standby(i: int) -> bool:
        status, _, body = call(as_nn, haset.url(i), "GET",
                               "/jmx?qry=Hadoop:service=NameNode,name=NameNodeStatus")
        assert status == 200, body
        standbys = json.loads(json.loads(body)["beans"][0]["HAStandbys"])
        return any(p.get("datanode") and p["ageMs"] < 5000 for p in standbys.values())

    try:
        active = haset.start_all()
        wait_for(lambda: names_its_standby(active), 30, "the standby's datanode named")
        monkeypatch.setenv("KRB5CCNAME", f"FILE:{alice.ccache}")
        client = hdfs_native.Client(f"hdfs://{NAMESERVICE}", {
            **native_conf(haset), "hadoop.security.authentication": "kerberos",
            "dfs.data.transfer.protection": "privacy"})
        data = random.Random(9).randbytes(SIZE)
        with client.create("/ha/f", hdfs_native.WriteOptions(block_size=1 << 20)) as stream:
            stream.write(data)
        with SaslClient(haset.rpc_ports[active]) as rpc:
            rpc.kerberos(alice.ccache, "auth").context("alice")
            blocks = rpc.answer("getBlockLocations", cn.GetBlockLocationsRequestProto(
                src="/ha/f", offset=0, length=1 << 40)).locations.blocks
        # both copies of every block came through the pipeline: written before the close
        # was answered, not by the resync's later copy
        assert [len(b.locs) for b in blocks] == [2, 2, 2]
        haset.kill(active)
        assert haset.active(excluding=active) == 1 - active
        with client.read("/ha/f") as stream:
            assert stream.read() == data
    finally:
        haset.close()
