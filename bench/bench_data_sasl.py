"""What secure mode costs on the data port (issue 32): file contents written and read by
hdfs-native through the built-in datanode, in simple mode and with block tokens and the
data port's SASL handshake at each ``dfs.data.transfer.protection``.

    python bench/bench_data_sasl.py [--mib 64] [--rounds 2]

A KDC of its own (Debian's krb5kdc through k5test, ``tests/kerberos_realm.py``) in a
temporary directory and one ``nnlite namenode`` process per mode on 127.0.0.1, each stopped
when the script ends: simple (no tokens); kerberos with ``dfs.block.access.token.enable``
and no protection (tokens checked, no handshake); and kerberos with the protection at
authentication, integrity, privacy (DIGEST-MD5's 3DES layer) and privacy with
``dfs.encrypt.data.transfer.cipher.suites=AES/CTR/NoPadding``. Per mode and round: one
client writes ``--mib`` MiB in 128 MiB blocks (1 MiB writes) and reads it back, checked;
MB/s each way, the rate over simple mode's in the same round, and the namenode's CPU
seconds per GiB moved (the datanode runs in its process). One run; compare within it.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_rpc import cpu  # noqa: E402  (bench/ is sys.path[0])

from tests.kerberos_realm import Realm  # noqa: E402
from tests.servers import NamenodeProcess  # noqa: E402

USER = "alice"
AES = "AES/CTR/NoPadding"
MODES = ("simple", "tokens", "authentication", "integrity", "privacy", "privacy+AES")


def secure_args(kdc: Realm, keytab: Path, mode: str) -> list[str]:
    args = ["-D", "hadoop.security.authentication=kerberos",
            "-D", f"dfs.namenode.kerberos.principal=nn/_HOST@{kdc.name}",
            "-D", f"dfs.namenode.keytab.file={keytab}",
            "-D", f"dfs.web.authentication.kerberos.principal=HTTP/_HOST@{kdc.name}",
            "-D", "dfs.block.access.token.enable=true"]
    protection = mode.removesuffix("+AES")
    if mode != "tokens":
        args += ["-D", f"dfs.data.transfer.protection={protection}"]
    if mode.endswith("+AES"):
        args += ["-D", f"dfs.encrypt.data.transfer.cipher.suites={AES}"]
    return args


def start(kdc: Realm, base: Path, mode: str) -> NamenodeProcess:
    users = ["-D", f"hadoop.user.group.static.mapping.overrides={USER}=supergroup"]
    if mode == "simple":
        return NamenodeProcess.start([str(base / mode)], *users)
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"), path=base / "nn.keytab")
    return NamenodeProcess.start([str(base / mode)], *users, *secure_args(kdc, keytab, mode),
                                 env=kdc.env_for())


def client_for(nn: NamenodeProcess, mode: str):
    import hdfs_native
    if mode == "simple":
        return hdfs_native.Client(nn.hdfs, config={"hadoop.user.name": USER})
    config = {"hadoop.security.authentication": "kerberos"}
    if mode != "tokens":
        config["dfs.data.transfer.protection"] = mode.removesuffix("+AES")
    return hdfs_native.Client(nn.hdfs, config=config)


def transfer(nn: NamenodeProcess, mode: str, data: bytes, path: str) -> tuple[float, float,
                                                                              float]:
    """(write MB/s, read MB/s, namenode CPU s per GiB moved)."""
    import hdfs_native
    client = client_for(nn, mode)
    before = sum(cpu(nn.proc.pid))
    started = time.perf_counter()
    with client.create(path, hdfs_native.WriteOptions(block_size=128 << 20)) as stream:
        for at in range(0, len(data), 1 << 20):
            stream.write(data[at:at + (1 << 20)])
    written = time.perf_counter()
    with client.read(path) as stream:
        back = stream.read()
    done = time.perf_counter()
    if hashlib.sha256(back).digest() != hashlib.sha256(data).digest():
        raise SystemExit(f"{mode}: the bytes read back differ")
    moved = 2 * len(data) / (1 << 30)
    return (len(data) / (written - started) / 1e6, len(data) / (done - written) / 1e6,
            (sum(cpu(nn.proc.pid)) - before) / moved)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-data-sasl-", dir=os.environ.get("BENCH_DIR")))
    kdc = Realm.start(base / "kdc")
    started: dict[str, NamenodeProcess] = {}
    os.environ["KRB5CCNAME"] = f"FILE:{kdc.user(USER).ccache}"
    data = os.urandom(args.mib << 20)
    try:
        for mode in MODES:
            started[mode] = start(kdc, base, mode)
        print("| data port | write MB/s | ÷ simple | read MB/s | ÷ simple "
              "| namenode CPU s/GiB |")
        print("|---|---|---|---|---|---|")
        for r in range(args.rounds):
            modes = MODES if r % 2 == 0 else MODES[::-1]
            rows = {mode: transfer(started[mode], mode, data, f"/bench/r{r}") for mode in modes}
            for mode in MODES:
                write, read, cpu_s = rows[mode]
                print(f"| {mode} | {write:,.0f} | {write / rows['simple'][0]:.2f} | "
                      f"{read:,.0f} | {read / rows['simple'][1]:.2f} | {cpu_s:.1f} |",
                      flush=True)
    finally:
        for nn in started.values():
            nn.stop()
        kdc.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
