"""``nnlite catalog`` as a user runs it, in its own process against a real namenode."""

from __future__ import annotations

import subprocess
import sys

from tests.catalog.remote import USER, running, write_checkpoint
from tests.namenode.http.helpers import end_upload, raw_upload_start, send_chunk
from tests.servers import ROOT, wait_for

Q = "/ckpt/q1"


def test_rollback_wait_waits_until_the_query_stops_writing(start_namenode):
    """Pasted right after the query stops, ``rollback --wait`` says once why it waits and
    rolls back when the namenode finds the checkpoint quiet, here when its open file closes."""
    with running(start_namenode, "nnlite.catalog.quiet=0") as (server, hdfs, catalog):
        write_checkpoint(hdfs, Q, 3)
        upload = raw_upload_start(server, f"{Q}/state/0/0/4.delta", f"op=CREATE&user.name={USER}")
        send_chunk(upload, b"half a delta")
        wait_for(lambda: catalog.ls("/")[0]["health"] == "writing", 30, "the file open")
        cli = subprocess.Popen([sys.executable, "-m", "nnlite.cli", "catalog", "rollback", Q,
                                "--to-batch", "1", "--wait", "--namenode", server.url, "--user",
                                USER], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
        try:
            waiting = cli.stderr.readline()
            assert waiting.startswith("nnlite: waiting: ") and "is open" in waiting, waiting
            assert cli.poll() is None
            send_chunk(upload, b", the rest")
            assert end_upload(upload)[0] == 201
            out, err = cli.communicate(timeout=60)
        finally:
            if cli.poll() is None:
                cli.kill()
                cli.communicate()
        assert cli.returncode == 0 and err == "", err
        assert "rolled back to batch 1" in out and catalog.latest(Q)["latest"] == 1
