"""The status page at / as a person sees it: rendered by headless Chromium (Debian's package,
installed by the Makefile's set-up), checked against /jmx."""

import json
import shutil
import subprocess
import urllib.request

import pytest

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("Debian's chromium is needed for this test: `make test` installs it "
                    "(apt-get install -y chromium, as root)")
    return path


def render(url: str, tmp_path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'ud'}",
                           *extra, url], capture_output=True, text=True, timeout=120)


def test_status_page_shows_health_txids_and_dirs(namenode, tmp_path):
    for i in range(3):
        request = urllib.request.Request(namenode.webhdfs(f"/p/d{i}?op=MKDIRS&user.name=tester"),
                                         method="PUT")
        urllib.request.urlopen(request).read()
    with urllib.request.urlopen(namenode.url + "/") as response:
        assert response.headers["Content-Type"] == "text/html; charset=utf-8"
        body = response.read().decode()
    assert "https://" not in body and "http://" not in body.replace(namenode.url, "")
    bean = json.load(urllib.request.urlopen(namenode.url + "/jmx"))["beans"][0]

    dom = render(namenode.url + "/", tmp_path, "--dump-dom").stdout
    assert "nnlite NameNode" in dom and "Every name directory is healthy." in dom
    assert f">{bean['LastWrittenTransactionId']}<" in dom
    assert namenode.name_dirs[0] in dom and "healthy" in dom

    shot = tmp_path / "page.png"
    render(namenode.url + "/", tmp_path, f"--screenshot={shot}", "--window-size=1200,900")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1200, 900)
