"""``nnlite format``, ``namenode`` and ``run`` as a new user meets them, with real processes:
a busy port or a name dir in use is one line and exit 3, nothing is bound or logged as
listening before the name dirs are locked, a wrong path leaves nothing behind, ``run`` takes
both ports, and no line meant for ``run`` reaches the terminal."""

from __future__ import annotations

import http.client
import itertools
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from nnlite import cli
from nnlite.commands.support import EXIT_FAILED, EXIT_STORAGE, EXIT_USAGE
from tests.servers import wait_for

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def nnlite(*args: str, home: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    """The command as a user runs it: its own process, its own stdout and stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NNLITE_")}
    return subprocess.run([sys.executable, "-m", "nnlite.cli", *args], cwd=ROOT, timeout=timeout,
                          capture_output=True, text=True, env={**env, "HOME": str(home)})


def one_line(result: subprocess.CompletedProcess, code: int, kind: str) -> str:
    assert result.returncode == code, (result.returncode, result.stderr)
    lines = result.stderr.splitlines()
    errors = [line for line in lines if line.startswith("nnlite: ")]
    assert len(errors) == 1 and errors[0] == lines[-1], result.stderr
    assert "Traceback" not in result.stderr and "NNLITE_" not in result.stderr
    assert errors[0].startswith(f"nnlite: {kind}: "), errors[0]
    return result.stderr


def test_a_busy_port_is_one_line_and_exit_3(tmp_path):
    assert nnlite("format", "--name-dir", str(tmp_path / "name"), home=tmp_path).returncode == 0
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = nnlite("namenode", "--name-dir", str(tmp_path / "name"), "--port", str(port),
                        home=tmp_path)
    err = one_line(result, EXIT_STORAGE, "AddressError")
    assert f"cannot listen on 127.0.0.1:{port}" in err
    assert "listening" not in err


def test_name_dirs_in_use_stop_a_second_namenode_before_it_binds(tmp_path, start_namenode):
    first = start_namenode()                  # holding its name dir, tmp_path / "name"
    port = free_port()
    result = nnlite("namenode", "--name-dir", first.name_dirs[0], "--port", str(port),
                    home=tmp_path)
    err = one_line(result, EXIT_STORAGE, "NameDirError")
    assert "in use by another process" in err and "listening" not in err
    with socket.socket() as probe:        # the port was never bound: it is still free
        probe.bind(("127.0.0.1", port))


def test_a_start_on_a_missing_dir_leaves_nothing_behind(tmp_path):
    missing = tmp_path / "no" / "such" / "name"
    result = nnlite("namenode", "--name-dir", str(missing), "--port", str(free_port()),
                    home=tmp_path)
    err = one_line(result, EXIT_STORAGE, "NameDirError")
    assert "run `nnlite format`" in err and "listening" not in err
    assert not (tmp_path / "no").exists()


def test_the_namenode_prints_no_supervisor_line_to_a_terminal(tmp_path):
    assert nnlite("format", "--name-dir", str(tmp_path / "name"), home=tmp_path).returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("NNLITE_")}
    proc = subprocess.Popen([sys.executable, "-m", "nnlite.cli", "namenode", "--name-dir",
                             str(tmp_path / "name"), "--port", str(free_port())], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if "namenode ready" in line:
                break
        proc.send_signal(signal.SIGTERM)
        lines += proc.stdout.readlines()
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert any("namenode ready" in line for line in lines), lines
    assert not [line for line in lines if line.startswith("NNLITE_")], lines


def test_format_and_run_default_to_the_home_name_dir(tmp_path):
    result = CliRunner(env={"HOME": str(tmp_path)}).invoke(cli.main, ["format"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / ".nnlite" / "name" / "current" / "VERSION").is_file()


def test_run_refuses_one_port_for_both_daemons(tmp_path):
    port = str(free_port())
    result = nnlite("run", "--name-dir", str(tmp_path / "name"), "--port", port,
                    "--secondary-port", port, home=tmp_path)
    err = one_line(result, EXIT_USAGE, "UsageError")
    assert "cannot share port" in err
    assert not (tmp_path / "name").exists()


@pytest.mark.parametrize("move", ["both", "namenode only"])
def test_run_takes_the_ports_and_the_secondary_follows_the_namenode(tmp_path, move):
    port, secondary_port = free_port(), free_port()
    args = ["--port", str(port)]
    if move == "both":
        args += ["--secondary-port", str(secondary_port)]
    else:                                   # the secondary's port from the configuration
        args += ["-D", f"dfs.namenode.secondary.http-address=127.0.0.1:{secondary_port}"]
    log = tmp_path / "run.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NNLITE_")}
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "nnlite.cli", "run", "--name-dir",
                                 str(tmp_path / "name"), *args], cwd=ROOT, stdout=out,
                                stderr=subprocess.STDOUT, env={**env, "HOME": str(tmp_path)})
    try:
        wait_for(lambda: "secondary status on" in log.read_text(), 60, "the secondary")
        with urllib.request.urlopen(f"http://127.0.0.1:{secondary_port}/status") as resp:
            assert json.load(resp)["namenode"] == f"http://127.0.0.1:{port}"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert not re.search(r"NNLITE_\w+=", text), text


def test_run_twice_is_one_line_and_exit_3(tmp_path):
    """The second ``make run``: its namenode finds the name dir locked, says so in one line, and
    ``run`` exits with its code; a busy port is found before a new name dir is formatted."""
    log = tmp_path / "first.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NNLITE_")}
    port, secondary_port = free_port(), free_port()
    with open(log, "w") as out:
        first = subprocess.Popen([sys.executable, "-m", "nnlite.cli", "run", "--name-dir",
                                  str(tmp_path / "name"), "--port", str(port),
                                  "--secondary-port", str(secondary_port)], cwd=ROOT,
                                 stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        wait_for(lambda: "secondary status on" in log.read_text(), 60, "the first run")
        again = nnlite("run", "--name-dir", str(tmp_path / "name"), "--port", str(free_port()),
                       "--secondary-port", str(free_port()), home=tmp_path)
        assert "in use by another process" in one_line(again, EXIT_STORAGE, "NameDirError")
        elsewhere = nnlite("run", "--name-dir", str(tmp_path / "other"), "--port", str(port),
                           home=tmp_path)
        assert "cannot listen" in one_line(elsewhere, EXIT_STORAGE, "AddressError")
        assert not (tmp_path / "other").exists()
    finally:
        first.send_signal(signal.SIGTERM)
        try:
            first.wait(60)
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()


def children(pid: int) -> dict[str, int]:
    """The child processes of ``pid`` by the role named on their command line."""
    found = {}
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        found[argv[argv.index(b"nnlite.cli") + 1].decode()] = int(child)
    return found


def start_run(tmp_path: Path, log: Path, port: int, secondary_port: int) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NNLITE_")}
    with open(log, "a") as out:
        return subprocess.Popen([sys.executable, "-m", "nnlite.cli", "run", "--name-dir",
                                 str(tmp_path / "name"), "--port", str(port), "--secondary-port",
                                 str(secondary_port)], cwd=ROOT, stdout=out,
                                stderr=subprocess.STDOUT, env={**env, "HOME": str(tmp_path)})


@pytest.mark.crash
def test_run_after_its_namenode_is_killed_under_load_serves_again_at_once(tmp_path):
    """SIGKILL of the namenode while clients hold connections leaves its port's sockets in
    TIME_WAIT for a minute; ``run`` says which process died and how to start again, and the
    same command, run at once, binds the same ports (SO_REUSEADDR in the check before
    formatting, as in the server's own bind) and serves every acknowledged change."""
    port, secondary_port = free_port(), free_port()
    log = tmp_path / "run.log"
    run = start_run(tmp_path, log, port, secondary_port)
    acknowledged, stop = [], threading.Event()

    def writer(n: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for i in itertools.count():
            if stop.is_set():
                break
            try:
                conn.request("PUT", f"/webhdfs/v1/load/w{n}/d{i}?op=MKDIRS&user.name=root")
                if json.load(conn.getresponse()) == {"boolean": True}:
                    acknowledged.append(f"/load/w{n}/d{i}")
            except (OSError, http.client.HTTPException, ValueError):
                break
        conn.close()                 # as a client does: its side closes, the server's waits

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    idle = [http.client.HTTPConnection("127.0.0.1", port, timeout=10) for _ in range(4)]
    try:
        wait_for(lambda: "secondary status on" in log.read_text(), 60, "the secondary")
        for thread in threads:
            thread.start()
        for conn in idle:                    # kept alive between requests, as Hadoop's pool
            conn.request("GET", "/webhdfs/v1/?op=GETFILESTATUS&user.name=root")
            conn.getresponse().read()
        wait_for(lambda: len(acknowledged) >= 200, 60, "200 acknowledged MKDIRS")
        os.kill(children(run.pid)["namenode"], signal.SIGKILL)
        assert run.wait(60) == EXIT_FAILED, log.read_text()
    finally:
        stop.set()
        for conn in idle:
            conn.close()
        for thread in threads:
            thread.join()
        if run.poll() is None:
            run.kill()
            run.wait()
    died = one_line(subprocess.CompletedProcess([], run.returncode, "", log.read_text()),
                    EXIT_FAILED, "ChildDied")
    assert "the namenode" in died and "killed by SIGKILL" in died and "nnlite run" in died
    again = start_run(tmp_path, log, port, secondary_port)
    try:
        wait_for(lambda: log.read_text().count("secondary status on") == 2 or again.poll(), 60,
                 "the second run")
        assert again.poll() is None, log.read_text()
        for path in acknowledged:
            url = f"http://127.0.0.1:{port}/webhdfs/v1{path}?op=GETFILESTATUS&user.name=root"
            with urllib.request.urlopen(url) as resp:
                assert json.load(resp)["FileStatus"]["type"] == "DIRECTORY", path
    finally:
        again.send_signal(signal.SIGTERM)
        try:
            assert again.wait(60) == 0, log.read_text()
        finally:
            if again.poll() is None:
                again.kill()
                again.wait()
