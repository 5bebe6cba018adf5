"""The package type-checks: mypy over every shipped module, as pyproject.toml's [tool.mypy]
configures it (the namesystem and what crosses the layers to it checked strictly).

mypy finds a package by its name, and this checkout's folders are the package ``nnlite``
(setup.cfg's ``package_dir``), so the check runs beside a link ``nnlite`` to the checkout.
The cache starts empty (a cold run takes seconds, not minutes) and lives in ``tmp_path``:
nothing is written into the checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_package_type_checks(tmp_path):
    (tmp_path / "nnlite").symlink_to(ROOT, target_is_directory=True)
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "-p", "nnlite",
         "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(tmp_path / "mypy-cache")],
        cwd=tmp_path, capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        pytest.fail(f"mypy found errors:\n{run.stdout}{run.stderr}", pytrace=False)
