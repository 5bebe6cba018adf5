"""BENCHMARKS.md stays what its first lines promise: the table of current figures, then one
section per benchmark of bench/, each naming its script in its heading, and short (history
is in git)."""

from __future__ import annotations

import re

from tests.servers import ROOT

BENCHMARKS = ROOT / "BENCHMARKS.md"
MAX_LINES = 500


def headings() -> list[str]:
    return re.findall(r"^## (.*)$", BENCHMARKS.read_text(), flags=re.M)


def named_in(text: str) -> set[str]:
    """The bench/ paths ``text`` names at the start of code (``bench/peers/`` for the harness,
    ``bash bench/peers.sh``, ``.venv/bin/python bench/x.py --flag``)."""
    found = re.findall(r"`(?:bash |\.venv/bin/python )?(bench/[\w./-]*\w/?)", text)
    return {m.rstrip("/") for m in found}


def test_it_opens_with_the_current_figures_and_stays_short():
    assert headings()[0] == "Current figures"
    assert len(BENCHMARKS.read_text().splitlines()) < MAX_LINES


def test_every_benchmark_has_its_section_and_every_section_its_script():
    scripts = {f"bench/{p.name}" for p in (ROOT / "bench").iterdir()
               if p.suffix in (".py", ".sh") or (p / "run.py").is_file()}
    sections = [named_in(h) for h in headings()[1:]]
    assert all(sections), "a section whose heading names no bench/ script"
    named = set().union(*sections)
    assert sorted(scripts - named) == [], "scripts without a section"
    assert sorted(p for p in named if not (ROOT / p).exists()) == []


def test_every_command_of_the_figures_names_a_script_that_is_there():
    table = BENCHMARKS.read_text().split("\n## ")[1]
    assert sorted(p for p in named_in(table) if not (ROOT / p).exists()) == []
