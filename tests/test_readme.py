"""The README's "Using it" blocks, pasted into bash in order as a user with a fresh clone would:
the shell's exports carry from one block to the next, ``.venv/bin/...`` is this environment's
scripts, the Spark drivers are their own processes run as the user the README names, and the
namenode has the default settings (the catalog's 30 s quiet period included). Only the addresses
change: the test namenode listens on free ports, not 9870 and 8020."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.servers import ROOT

pytestmark = pytest.mark.spark

README = ROOT / "README.md"
DEFAULT_PORT = "127.0.0.1:9870"
DEFAULT_RPC_PORT = "127.0.0.1:8020"


def section_blocks(heading: str) -> list[tuple[str, str]]:
    """``(language, code)`` of every fenced block between ``## heading`` and the next one."""
    text = README.read_text()
    section = text[text.index(f"## {heading}\n"):]
    section = section[:section.index("\n## ", 1)]
    return re.findall(r"```(\w+)\n(.*?)```", section, flags=re.S)


def using_it_blocks() -> list[tuple[str, str]]:
    return section_blocks("Using it")


def paste(blocks: list[tuple[str, str]], server, cwd: Path,
          **replace: str) -> list[str]:
    """Run each block through ``bash -euo pipefail`` in order, as a user's shell in ``cwd``
    with this environment's scripts as ``.venv/bin`` and the server's addresses for 9870 and
    8020 (also nnlite's default addresses, as ``make run``'s would be); a block's exports
    carry on. Returns
    each block's stdout."""
    scripts = Path(sys.executable).parent
    assert (scripts / "nnlite").exists(), f"{scripts}: the project is not installed here"
    env = {k: v for k, v in os.environ.items()
           if k not in ("NNLITE_NAMENODE", "HADOOP_USER_NAME", "HADOOP_CLASSPATH")}
    env["NNLITE_NAMENODE"] = server.url
    places = {DEFAULT_PORT: f"127.0.0.1:{server.port}", ".venv/bin/": f"{scripts}/"}
    rpc_port = getattr(server, "rpc_port", None)    # an HA set's blocks name their own
    if rpc_port is not None:
        places[DEFAULT_RPC_PORT] = f"127.0.0.1:{rpc_port}"
    replace = {**places, **replace}
    outputs = []
    for _, code in blocks:
        for old, new in replace.items():
            code = code.replace(old, new)
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"{code}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr, done.stderr
        # every key a block's configuration names is one nnlite uses
        assert "unknown configuration key" not in done.stderr, done.stderr
        outputs.append(done.stdout)
        env.update(re.findall(r"^export (\w+)=(\S+)$", code, flags=re.M))
    return outputs


def test_every_block_is_a_shell_block_naming_its_python_and_user():
    blocks = using_it_blocks()
    assert blocks and {lang for lang, _ in blocks} == {"sh"}
    drivers = [code for _, code in blocks if "python" in code]
    assert drivers and all("HADOOP_USER_NAME=spark .venv/bin/python -" in c for c in drivers)


@pytest.fixture
def server(start_namenode):
    """A namenode as ``make run`` starts one: no test users."""
    return start_namenode(users=None)


def test_the_readme_blocks_run_as_pasted(server, tmp_path):
    outputs = paste(using_it_blocks(), server, tmp_path)
    assert "100 rows in the latest checkpoint" in "".join(outputs)
    from nnlite.catalog.client import CatalogClient
    with CatalogClient(server.url, "spark") as catalog:
        kinds = {row["path"]: row["kind"] for row in catalog.ls("/ckpt")}
        assert kinds.pop("/ckpt/q1") == "streaming"
        assert set(kinds.values()) == {"rdd"}
        assert catalog.latest("/ckpt/q1")["latest"] == 2        # rolled back
        assert [row["kind"] for row in catalog.ls("/jobs")] == ["job"]
