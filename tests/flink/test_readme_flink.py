"""The README's Flink block, pasted into bash from the repository as a user with ``make run``
elsewhere and ``make flink-env`` done: the superuser makes /flink for spark, the job runs as
spark from PyFlink's own environment, the catalog names its newest restorable checkpoint, and
the job restored from it finishes."""

from __future__ import annotations

import json

import pytest

from nnlite.catalog.client import CatalogClient
from nnlite.catalog.layout import FLINK, SAVEPOINT
from tests.servers import ROOT
from tests.test_readme import paste, section_blocks

pytestmark = pytest.mark.flink


def test_the_flink_block_runs_as_pasted(namenode, flink_python):
    [(lang, _)] = blocks = section_blocks("Flink")
    assert lang == "sh"
    [out] = paste(blocks, namenode, ROOT, **{".venv-flink/bin/python": str(flink_python)})
    events = [json.loads(line)["event"] for line in out.splitlines() if line.startswith("{")]
    assert events.count("started") == 2 and "savepoint" in events, out
    assert events[-1] == "finished", out
    with CatalogClient(namenode.url, "spark") as catalog:
        kinds = {row["kind"] for row in catalog.ls("/flink")}
    assert kinds == {FLINK, SAVEPOINT}, kinds
