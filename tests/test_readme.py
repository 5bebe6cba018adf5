"""The README's "Using it" blocks, run as written against a real namenode: the shell blocks
through bash with the installed ``nnlite`` script, the Python blocks in one namespace with the
shared SparkSession as ``spark`` and a small DataFrame as ``df`` (the driver a reader has).
Only the address changes: the test namenode listens on a free port, not 9870."""

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
DEFAULT_URL = "http://127.0.0.1:9870"
DEFAULT_WEBHDFS = "webhdfs://127.0.0.1:9870"


def using_it_blocks() -> list[tuple[str, str]]:
    """``(language, code)`` of every fenced block between "## Using it" and the next heading."""
    text = README.read_text()
    section = text[text.index("## Using it"):]
    section = section[:section.index("\n## ", 1)]
    return re.findall(r"```(\w+)\n(.*?)```", section, flags=re.S)


def test_the_section_has_shell_and_python_blocks():
    languages = [lang for lang, _ in using_it_blocks()]
    assert languages.count("sh") >= 2 and languages.count("python") >= 2


@pytest.fixture
def server(tmp_path):
    # The catalog's quiet period is a server setting; the README's rollback runs at once.
    nn = NamenodeProcess.start([str(tmp_path / "name")], "-D", "nnlite.catalog.quiet=0")
    try:
        yield nn
    finally:
        nn.stop()


def test_the_readme_blocks_run_as_written(server, spark, tmp_path):
    script = Path(sys.executable).parent / "nnlite"
    assert script.exists(), f"{script}: the project is not installed in this environment"
    port = server.url.rsplit(":", 1)[1]
    scope = {"spark": spark, "df": spark.range(0, 100, numPartitions=2)}
    env = {k: v for k, v in os.environ.items() if k != "NNLITE_NAMENODE"}
    for lang, code in using_it_blocks():
        code = code.replace(DEFAULT_URL, server.url).replace(
            DEFAULT_WEBHDFS, f"webhdfs://127.0.0.1:{port}")
        if lang == "sh":
            code = code.replace(".venv/bin/nnlite", str(script))
            done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=tmp_path,
                                  env=env, capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, f"{code}\n{done.stdout}\n{done.stderr}"
            assert "Traceback" not in done.stderr
            # The reader's shell keeps what a block exports for the blocks after it.
            env.update(re.findall(r"^export (\w+)=(\S+)$", code, flags=re.M))
        else:
            exec(compile(code, "README.md", "exec"), scope)
    assert scope["latest"].count() == 100
    from nnlite.catalog.client import CatalogClient
    with CatalogClient(server.url, "spark") as catalog:
        kinds = {row["path"]: row["kind"] for row in catalog.ls("/ckpt")}
        assert kinds.pop("/ckpt/q1") == "streaming"
        assert set(kinds.values()) == {"rdd"}
        assert catalog.latest("/ckpt/q1")["latest"] == 2        # rolled back
