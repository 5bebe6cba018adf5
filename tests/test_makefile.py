"""The Makefile's set-up as root: `make test` installs Debian's chromium and etcd-server only
when apt's own simulation says nothing installed is upgraded or removed, and leaves etcd-server's
own service stopped and disabled. apt-get and the service tools here are recording stand-ins on
PATH (the real ones would change this machine), apt-get answering with plans apt printed."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The summary lines of `apt-get -s install --no-install-recommends --no-upgrade chromium` on a
# Debian 12 machine whose libraries it would upgrade, and on this one.
UPGRADES = "15 upgraded, 115 newly installed, 0 to remove and 121 not upgraded."
CLEAN = "0 upgraded, 25 newly installed, 0 to remove and 143 not upgraded."
# The same line for etcd-server (its dependencies, adduser and libc6, already there), and one
# of a machine where installing it would remove a package.
ETCD_CLEAN = "0 upgraded, 1 newly installed, 0 to remove and 136 not upgraded."
ETCD_REMOVES = "0 upgraded, 1 newly installed, 1 to remove and 136 not upgraded."
# What etcd-server's postinst starts and enables, and the recipe undoes.
SERVICE_TOOLS = ("invoke-rc.d", "update-rc.d", "deb-systemd-helper")

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the recipe installs only as root")


def make(tmp_path: Path, target: str, plan: str) -> tuple[str, list[str]]:
    """``make -s target`` with the stand-ins; its output and the calls they recorded (apt-get's
    as its arguments, the service tools' as their name and arguments)."""
    bin_dir, calls = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "apt-get").write_text(f'#!/bin/sh\necho "$*" >> {calls}\n'
                                     f'case "$*" in -s*) echo "{plan}";; esac\n')
    for tool in SERVICE_TOOLS:
        (bin_dir / tool).write_text(f'#!/bin/sh\necho "{tool} $*" >> {calls}\n')
    for tool in ("apt-get", *SERVICE_TOOLS):
        (bin_dir / tool).chmod(0o755)
    for tool in ("grep", "id", "sed", "awk"):    # all the recipes run besides those
        (bin_dir / tool).symlink_to(shutil.which(tool))
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path)}
    result = subprocess.run([shutil.which("make"), "-s", target], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout, calls.read_text().splitlines() if calls.exists() else []


def test_chromium_is_not_installed_when_apt_would_upgrade_installed_packages(tmp_path):
    out, calls = make(tmp_path, "browser", UPGRADES)
    assert [c for c in calls if "install" in c] == [
        "-s install --no-install-recommends --no-upgrade chromium"]
    assert "not installing chromium" in out and "15 upgraded" in out
    assert "status-page test will be skipped" in out


def test_chromium_is_installed_when_apt_changes_nothing_installed(tmp_path):
    out, calls = make(tmp_path, "browser", CLEAN)
    assert [c for c in calls if "install" in c] == [
        "-s install --no-install-recommends --no-upgrade chromium",
        "install -y -qq --no-install-recommends --no-upgrade chromium"]
    assert "installing Debian's chromium" in out


@pytest.mark.parametrize("plan", [UPGRADES, ETCD_REMOVES], ids=["upgrades", "removes"])
def test_etcd_is_not_installed_when_apt_would_change_installed_packages(tmp_path, plan):
    out, calls = make(tmp_path, "etcd", plan)
    assert [c for c in calls if "install" in c] == ["-s install --no-upgrade etcd-server"]
    assert not [c for c in calls if c.startswith(SERVICE_TOOLS)]
    assert "not installing etcd-server" in out and plan.split(" and ")[0] in out
    assert "HA) tests will be skipped" in out


def test_etcd_is_installed_and_its_own_service_stopped_and_disabled(tmp_path):
    out, calls = make(tmp_path, "etcd", ETCD_CLEAN)
    assert [c for c in calls if "install" in c] == ["-s install --no-upgrade etcd-server",
                                                    "install -y -qq --no-upgrade etcd-server"]
    assert [c for c in calls if c.startswith(SERVICE_TOOLS)] == [
        "invoke-rc.d etcd stop", "update-rc.d etcd disable",
        "deb-systemd-helper disable etcd.service"]
    assert "installing Debian's etcd-server" in out and "stopped and disabled" in out


def test_etcd_on_path_installs_nothing(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "etcd").symlink_to(shutil.which("true"))
    out, calls = make(tmp_path, "etcd", ETCD_CLEAN)
    assert (out, calls) == ("", [])


# `apt-get -s install --no-install-recommends --no-upgrade krb5-kdc krb5-admin-server krb5-user`
# on a Debian 12 machine with MIT Kerberos 1.20.1-2+deb12u3 (the Inst lines of what it
# upgrades, then its summary), and one where an e2fsprogs library would be upgraded as well.
KRB5_LIBS = ("libgssapi-krb5-2", "libkrb5-3", "libkrb5support0", "libk5crypto3", "krb5-locales")
KRB5_PLAN = "\n".join(
    [f"Inst {p} [1.20.1-2+deb12u3] (1.20.1-2+deb12u5 Debian-Security:12/oldstable-security)"
     for p in KRB5_LIBS]
    + ["Inst krb5-kdc (1.20.1-2+deb12u5 Debian-Security:12/oldstable-security [amd64])",
       "5 upgraded, 20 newly installed, 0 to remove and 133 not upgraded."])
KRB5_OTHER = KRB5_PLAN.replace(
    "Inst krb5-kdc", "Inst libcom-err2 [1.47.0-2] (1.47.0-2+b2 Debian:12.15/oldstable)\n"
    "Inst krb5-kdc").replace("5 upgraded", "6 upgraded")
KRB5_INSTALL = "--no-install-recommends --no-upgrade krb5-kdc krb5-admin-server krb5-user"


def test_kerberos_upgrades_only_mit_kerberos_libraries_and_says_so(tmp_path):
    out, calls = make(tmp_path, "kerberos", KRB5_PLAN)
    assert [c for c in calls if "install" in c] == [f"-s install {KRB5_INSTALL}",
                                                    f"install -y -qq {KRB5_INSTALL}"]
    assert "installing Debian's MIT Kerberos" in out
    for lib in KRB5_LIBS:
        assert f"upgrading the MIT Kerberos library (security update) {lib} " \
               "1.20.1-2+deb12u3 -> 1.20.1-2+deb12u5" in out
    assert [c for c in calls if c.startswith(SERVICE_TOOLS)][:3] == [
        "invoke-rc.d krb5-kdc stop", "update-rc.d krb5-kdc disable",
        "deb-systemd-helper disable krb5-kdc.service"]


def test_kerberos_is_not_installed_when_apt_would_upgrade_anything_else(tmp_path):
    out, calls = make(tmp_path, "kerberos", KRB5_OTHER)
    assert [c for c in calls if "install" in c] == [f"-s install {KRB5_INSTALL}"]
    assert "not installing MIT Kerberos: apt-get would also upgrade libcom-err2" in out
    assert "secure-mode tests will be skipped" in out
