"""The namenode service (namenode/daemon.py) in this process (``tests.servers
.NamenodeInThread``): it binds WebHDFS, hdfs:// and its datanode on free ports, hands the lease
table the clock it was given, and a stop leaves its name dir to the next start with every
acknowledged op. The process around it (signals, exit codes, crashes) is tested through
``nnlite namenode`` in tests/namenode/test_service_crash.py and tests/test_run.py."""

from __future__ import annotations

import socket

from tests.namenode.http.helpers import WebHdfs
from tests.servers import NamenodeInThread


def test_it_serves_on_the_free_ports_it_bound_with_the_lease_clock_it_was_given(tmp_path):
    def clock() -> float:
        return 42.0
    with NamenodeInThread(str(tmp_path / "name"), lease_clock=clock) as nn:
        WebHdfs(nn).mkdirs("/d")
        service = nn.service
        assert nn.port > 0 and service.rpc_port > 0 and service.datanode_server is not None
        with socket.create_connection(("127.0.0.1", service.rpc_port), timeout=5):
            pass                                    # hdfs:// listens beside WebHDFS
        assert service.app.data.leases.clock is clock


def test_a_stop_leaves_the_name_dir_to_the_next_start_with_what_was_acknowledged(tmp_path):
    name = str(tmp_path / "name")
    with NamenodeInThread(name) as nn:
        WebHdfs(nn).mkdirs("/kept")
    with NamenodeInThread(name) as again:
        assert WebHdfs(again).get("/kept", "GETFILESTATUS").status == 200
