"""The README's "Using it" blocks, pasted into bash in order as a user with a fresh clone would:
the shell's exports carry from one block to the next, ``.venv/bin/...`` is this environment's
scripts, the Spark drivers are their own processes run as the user the README names, and the
namenode has the default settings (the catalog's 30 s quiet period included). Only the address
changes: the test namenode listens on a free port, not 9870."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.servers import ROOT, NamenodeProcess

pytestmark = pytest.mark.spark

README = ROOT / "README.md"
DEFAULT_PORT = "127.0.0.1:9870"


def using_it_blocks() -> list[tuple[str, str]]:
    """``(language, code)`` of every fenced block between "## Using it" and the next heading."""
    text = README.read_text()
    section = text[text.index("## Using it"):]
    section = section[:section.index("\n## ", 1)]
    return re.findall(r"```(\w+)\n(.*?)```", section, flags=re.S)


def test_every_block_is_a_shell_block_naming_its_python_and_user():
    blocks = using_it_blocks()
    assert blocks and {lang for lang, _ in blocks} == {"sh"}
    drivers = [code for _, code in blocks if "python" in code]
    assert drivers and all("HADOOP_USER_NAME=spark .venv/bin/python -" in c for c in drivers)


@pytest.fixture
def server(tmp_path):
    nn = NamenodeProcess.start([str(tmp_path / "name")])
    try:
        yield nn
    finally:
        nn.stop()


def test_the_readme_blocks_run_as_pasted(server, tmp_path):
    scripts = Path(sys.executable).parent
    assert (scripts / "nnlite").exists(), f"{scripts}: the project is not installed here"
    env = {k: v for k, v in os.environ.items()
           if k not in ("NNLITE_NAMENODE", "HADOOP_USER_NAME")}
    outputs = []
    for _, code in using_it_blocks():
        code = code.replace(DEFAULT_PORT, f"127.0.0.1:{server.port}").replace(
            ".venv/bin/", f"{scripts}/")
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{code}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr
        outputs.append(done.stdout)
        # The reader's shell keeps what a block exports for the blocks after it.
        env.update(re.findall(r"^export (\w+)=(\S+)$", code, flags=re.M))
    assert "100 rows in the latest checkpoint" in "".join(outputs)
    from nnlite.catalog.client import CatalogClient
    with CatalogClient(server.url, "spark") as catalog:
        kinds = {row["path"]: row["kind"] for row in catalog.ls("/ckpt")}
        assert kinds.pop("/ckpt/q1") == "streaming"
        assert set(kinds.values()) == {"rdd"}
        assert catalog.latest("/ckpt/q1")["latest"] == 2        # rolled back
        assert [row["kind"] for row in catalog.ls("/jobs")] == ["job"]
