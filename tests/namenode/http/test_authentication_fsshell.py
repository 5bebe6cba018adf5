"""Hadoop's FsShell over secure ``webhdfs://`` (issue 32's "FsShell over both schemes"; the
hdfs:// half is test_sasl's): WebHdfsFileSystem under ``hadoop.security.authentication=
kerberos`` logs in from the user's ticket cache (kinit from the keytab), does SPNEGO, fetches
its own delegation token, and puts, cats and lists as the principal's short name; without a
ticket the namenode's SPNEGO refuses it."""

from __future__ import annotations

import pytest

from tests.namenode.http.secure import make_homes, secure_args, server_env
from tests.namenode.security.test_sasl import fsshell

CORE_SITE = """<?xml version="1.0"?>
<configuration>
  <property><name>fs.defaultFS</name><value>{uri}</value></property>
  <property><name>hadoop.security.authentication</name><value>kerberos</value></property>
  <property><name>dfs.web.authentication.kerberos.principal</name>
    <value>HTTP/_HOST@NNLITE.TEST</value></property>
</configuration>
"""


@pytest.fixture(scope="module")
def nn(kdc, start_module_namenode):
    server = start_module_namenode(*secure_args(kdc), env=server_env(kdc),
                                   users="tester=supergroup;alice=staff")
    make_homes(kdc, server, "alice")
    return server


def test_fsshell_over_webhdfs_with_a_ticket_cache_and_without_one(kdc, nn, tmp_path):
    pytest.importorskip("pyspark")
    (tmp_path / "core-site.xml").write_text(
        CORE_SITE.format(uri=f"webhdfs://localhost:{nn.port}"))
    alice = kdc.user("alice")
    local = tmp_path / "up.txt"
    local.write_text("shell bytes over webhdfs")
    put = fsshell(kdc, tmp_path, alice, "-put", str(local), "/user/alice/shell-f")
    assert put.returncode == 0, put.stderr
    cat = fsshell(kdc, tmp_path, alice, "-cat", "/user/alice/shell-f")
    assert (cat.returncode, cat.stdout) == (0, "shell bytes over webhdfs"), cat.stderr
    listing = fsshell(kdc, tmp_path, alice, "-ls", "/user/alice")
    line = next(line for line in listing.stdout.splitlines() if line.endswith("/shell-f"))
    assert line.split()[2] == "alice", listing.stderr
    # someone else's directory: the permission check meets alice, not the process's user
    denied = fsshell(kdc, tmp_path, alice, "-mkdir", "/forbidden")
    assert denied.returncode != 0
    assert "Permission denied: user=alice" in denied.stderr
    # no ticket: SPNEGO has nothing to offer, the namenode's 401 ends it
    refused = fsshell(kdc, tmp_path, None, "-ls", "/")
    assert refused.returncode != 0
    assert "Authentication required" in refused.stderr or "GSSException" in refused.stderr, \
        refused.stderr
