"""The status page at / as a person sees it: rendered by headless Chromium (Debian's package,
installed by the Makefile's set-up where that changes no installed package, else skipped),
checked against /jmx."""

import html
import json
import re
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest

from nnlite.namenode.http import status

FLINK_METADATA = (Path(__file__).parents[2] / "formats" / "data"
                  / "flink-savepoint-v6.metadata")

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("Debian's chromium renders the status page: `apt-get install chromium` "
                    "(`make test` installs it as root only when that upgrades no installed "
                    "package)")
    return path


def render(url: str, tmp_path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'ud'}",
                           *extra, url], capture_output=True, text=True, timeout=120)


def test_status_page_shows_health_txids_and_dirs(namenode, tmp_path):
    for i in range(3):
        request = urllib.request.Request(namenode.webhdfs(f"/p/d{i}?op=MKDIRS&user.name=tester"),
                                         method="PUT")
        urllib.request.urlopen(request).read()
    from nnlite.client.webhdfs import WebHdfsClient
    with WebHdfsClient(namenode.url, "tester") as client:
        client.create("/p/f", b"x" * 10)
        client.create("/p/g", b"y" * 10)
    with urllib.request.urlopen(namenode.url + "/") as response:
        assert response.headers["Content-Type"] == "text/html; charset=utf-8"
        body = response.read().decode()
    assert "https://" not in body and "http://" not in body.replace(namenode.url, "")
    bean = json.load(urllib.request.urlopen(namenode.url + "/jmx"))["beans"][0]

    dom = render(namenode.url + "/", tmp_path, "--dump-dom").stdout
    assert "nnlite NameNode" in dom and "Every name directory is healthy." in dom
    assert f">{bean['LastWrittenTransactionId']}<" in dom
    assert bean["BlocksTotal"] == 2 and '<dd id="blocks">2</dd>' in dom    # no lag
    assert namenode.name_dirs[0] in dom and "healthy" in dom

    shot = tmp_path / "page.png"
    render(namenode.url + "/", tmp_path, f"--screenshot={shot}", "--window-size=1200,900")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1200, 900)


# ---------------------------------------------------------------------- no card overflows

# The page itself carries no script, so the test injects one into a copy of it: it measures every
# element of every card (<section>) and the page, checks that the content sits in the middle with
# the title above its left edge, and leaves what is wrong in an attribute of <body> that
# --dump-dom prints.
MEASURE = """<script>
const bad = [];
const where = el => `<${el.tagName.toLowerCase()}${el.id ? " id=" + el.id : ""}>`;
for (const card of document.querySelectorAll("section")) {
  const box = card.getBoundingClientRect(), name = card.querySelector("h2").textContent;
  for (const el of [card, ...card.querySelectorAll("*")]) {
    const r = el.getBoundingClientRect();
    if (r.width && (r.left < box.left - 0.5 || r.right > box.right + 0.5))
      bad.push(`${name}: ${where(el)} spans ${r.left}..${r.right}, card ${box.left}..${box.right}`);
    if (el.clientWidth && el.scrollWidth > el.clientWidth + 1)
      bad.push(`${name}: ${where(el)} content ${el.scrollWidth} px wide in ${el.clientWidth} px`);
  }
}
const main = document.querySelector("main > .grid, main > p").getBoundingClientRect();
const gap = window.innerWidth - document.documentElement.clientWidth;   // a scroll bar
if (Math.abs(main.left - (document.documentElement.clientWidth - main.right)) > 1)
  bad.push(`content off centre: ${main.left} px left, `
           + `${window.innerWidth - gap - main.right} right`);
const title = document.querySelector("header h1").getBoundingClientRect();
if (Math.abs(title.left - main.left) > 1)
  bad.push(`title at ${title.left} px, content at ${main.left}`);
if (document.documentElement.scrollWidth > window.innerWidth)
  bad.push(`page ${document.documentElement.scrollWidth} px wide in ${window.innerWidth} px`);
document.body.setAttribute("data-overflow", JSON.stringify(bad));
document.body.setAttribute("data-viewport", String(window.innerWidth));
</script>"""


def overflowing(page: str, width: int, tmp_path) -> list[str]:
    """What sticks out of its card (or out of the page) when ``page`` is shown ``width`` px wide."""
    copy = tmp_path / f"page-{width}.html"
    copy.write_text(page.replace("</body>", MEASURE + "</body>"))
    dom = render(copy.as_uri(), tmp_path, "--dump-dom", f"--window-size={width},900").stdout
    found = re.search(r'data-overflow="([^"]*)" data-viewport="(\d+)"', dom)
    assert found, f"the measuring script did not run: {dom[:500]}"
    assert int(found.group(2)) == width
    return json.loads(html.unescape(found.group(1)))


@pytest.mark.parametrize("width", [1600, 1200, 800])
def test_no_card_overflows_live_page(namenode, tmp_path, width):
    with urllib.request.urlopen(namenode.url + "/") as response:
        page = response.read().decode()
    assert overflowing(page, width, tmp_path) == []


def worst_case() -> status.Snapshot:
    """Every value at its longest: failed dirs with long reasons, a pending checkpoint, big
    counts, long paths without spaces."""
    deep = "/var/lib/nnlite/" + "very-long-directory-name-" * 4 + "name"
    report = {
        "namespaceId": 2_147_483_647, "safeMode": True, "lastWrittenTxid": 123_456_789_012,
        "lastSyncedTxid": 123_456_789_012, "lastCheckpointTxid": 123_456_000_000,
        "lastCheckpointTime": 1_700_000_000_000, "transactionsSinceLastCheckpoint": 789_012,
        "segment": "edits.new", "editsSize": {deep: 987_654_321_098},
        "files": 1_234_567_890, "directories": 987_654_321, "blocks": 9_876_543_210,
        "nameDirs": [{"path": deep, "healthy": True, "failure": None},
                     {"path": deep + "2", "healthy": False,
                      "failure": "OSError: [Errno 5] Input/output error: " + deep + "2/edits"}],
    }
    return status.Snapshot(report=report, uptime=400 * 86400, now=1_800_000_000,
                           writable=True, checkpoints=123_456,
                           data_dirs=[status.DataDir(deep + "-data", False, "not writable")])


@pytest.mark.parametrize("width", [1200, 800, 500])
def test_no_card_overflows_with_longest_values(tmp_path, width):
    assert overflowing(status.render(worst_case()), width, tmp_path) == []


# ---------------------------------------------------------------------- the catalog's section

def test_status_page_lists_the_spark_checkpoints(tmp_path, start_namenode):
    from nnlite.client.webhdfs import WebHdfsClient
    from tests.catalog.remote import USER, share, start, write_checkpoint
    nn = start(start_namenode, "nnlite.catalog.quiet=0")
    with WebHdfsClient(nn.url, USER) as client:
        write_checkpoint(client, "/ckpt/good", 3)
        write_checkpoint(client, "/ckpt/damaged", 3)
        client.delete("/ckpt/damaged/state/0/1/3.delta")
        write_checkpoint(client, "/ckpt/private", 2)
        job = "/ckpt/flink/3d4e5f"           # a Flink job's directory, beside Spark's
        client.mkdirs(f"{job}/shared")
        client.mkdirs(f"{job}/taskowned")
        client.create(f"{job}/chk-7/_metadata", FLINK_METADATA.read_bytes())
        share(client, "/ckpt")
        client.set_permission("/ckpt/private/state", 0o700)   # the page has no identity
    dom = render(nn.url + "/", tmp_path, "--dump-dom").stdout
    assert "/ckpt/private" not in dom
    assert "1 more that only their owners may read" in dom
    section = dom[dom.index("Checkpoints (3)"):]
    rows = re.findall(r'<tr class="checkpoint">(.*?)</tr>', section, re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in rows]
    # the unhealthy one first; its last batch says which batch still restores
    assert cells[0][0] == "/ckpt/damaged" and "degraded" in cells[0][3]
    assert cells[0][2] == "2 (restores 1)"
    assert cells[1][:3] == ["/ckpt/flink/3d4e5f", "flink", "7"]
    assert cells[2][:3] == ["/ckpt/good", "streaming", "2"] and ">ok<" in cells[2][3]
