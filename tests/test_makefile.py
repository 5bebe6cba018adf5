"""The Makefile's set-up as root: `make test` installs Debian's chromium only when apt's own
simulation says nothing installed is upgraded or removed. apt-get here is a recording stand-in
on PATH (the real one would change this machine), answering with plans apt printed."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The summary lines of `apt-get -s install --no-upgrade chromium` on two Debian 12 machines.
UPGRADES = "15 upgraded, 115 newly installed, 0 to remove and 121 not upgraded."
CLEAN = "0 upgraded, 115 newly installed, 0 to remove and 121 not upgraded."

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the recipe installs only as root")


def make_browser(tmp_path: Path, plan: str) -> tuple[str, list[str]]:
    bin_dir, calls = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    (bin_dir / "apt-get").write_text(f'#!/bin/sh\necho "$*" >> {calls}\n'
                                     f'case "$*" in -s*) echo "{plan}";; esac\n')
    (bin_dir / "apt-get").chmod(0o755)
    for tool in ("grep", "id"):              # all the recipe runs besides apt-get
        (bin_dir / tool).symlink_to(shutil.which(tool))
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path)}
    result = subprocess.run([shutil.which("make"), "-s", "browser"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout, calls.read_text().splitlines() if calls.exists() else []


def test_chromium_is_not_installed_when_apt_would_upgrade_installed_packages(tmp_path):
    out, calls = make_browser(tmp_path, UPGRADES)
    assert [c for c in calls if "install" in c] == ["-s install --no-upgrade chromium"]
    assert "not installing chromium" in out and "15 upgraded" in out
    assert "status-page test will be skipped" in out


def test_chromium_is_installed_when_apt_changes_nothing_installed(tmp_path):
    out, calls = make_browser(tmp_path, CLEAN)
    assert [c for c in calls if "install" in c] == ["-s install --no-upgrade chromium",
                                                    "install -y -qq --no-upgrade chromium"]
    assert "installing Debian's chromium" in out
