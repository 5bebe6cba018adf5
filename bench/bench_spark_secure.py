"""What secure mode costs a Spark micro-batch's checkpoint (issue 32): the stateful query of
``bench_data.py streaming`` with its checkpointLocation on a secure namenode against the same
on a simple one, over hdfs:// and over webhdfs://.

    python bench/bench_spark_secure.py [--rounds 2] [--batches 20] [--protection privacy]

A KDC of its own (Debian's krb5kdc through k5test, ``tests/kerberos_realm.py``) in a
temporary directory and two ``nnlite namenode`` processes on 127.0.0.1: one in simple mode,
one with ``hadoop.security.authentication=kerberos`` (nn/_HOST and HTTP/_HOST from one keytab,
every qop offered). Both are stopped when the script ends, and every driver with them.

Hadoop's ``UserGroupInformation`` is one per JVM, so each mode has a driver process of its
own (this script with ``driver``): simple as ``HADOOP_USER_NAME``, secure logged in from the
user's keytab as ``spark-submit --principal --keytab`` does, with a core-site.xml asking for
``hadoop.rpc.protection`` (``--protection``). A driver runs one discarded query per scheme
(class loading, the scheme's client, its login), then one query per scheme of
``WARMUP_BATCHES + --batches`` batches, and reports from Spark's ``StreamingQueryProgress``
the median of each counted batch's checkpoint (``walCommit`` + ``commitOffsets`` + the state
commit) and of its ``triggerExecution``. Rounds alternate which mode goes first. Each row:
secure ÷ simple per scheme in that round, with the load average before and after it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_data import USER, run_query  # noqa: E402  (bench/ is sys.path[0])

from tests.kerberos_realm import Realm  # noqa: E402
from tests.servers import NamenodeProcess  # noqa: E402

SCHEMES = ("hdfs", "webhdfs")
MODES = ("simple", "secure")
DRIVER_TIMEOUT = 1800            # seconds one driver may take at most

CORE_SITE = """<?xml version="1.0"?>
<configuration>
  <property><name>hadoop.security.authentication</name><value>kerberos</value></property>
  <property><name>dfs.namenode.kerberos.principal</name><value>nn/_HOST@{realm}</value>
  </property>
  <property><name>hadoop.rpc.protection</name><value>{protection}</value></property>
</configuration>
"""


# ====================================================================== the driver process

def driver(argv: list[str]) -> None:
    """``driver MODE HDFS_URI WEBHDFS_URI BATCHES [PRINCIPAL KEYTAB KRB5_CONF]``: one JSON
    line, per scheme the medians of the counted batches."""
    mode, hdfs, webhdfs, batches = argv[0], argv[1], argv[2], int(argv[3])
    from pyspark.sql import SparkSession
    builder = (SparkSession.builder.master("local[2]").appName(f"nnlite-bench-{mode}")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1"))
    if mode == "secure":
        principal, keytab, krb5_conf = argv[4:7]
        builder = (builder.config("spark.kerberos.principal", principal)
                   .config("spark.kerberos.keytab", keytab)
                   .config("spark.driver.extraJavaOptions",
                           f"-Djava.security.krb5.conf={krb5_conf}"))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    out = {}
    try:
        for scheme, base in (("hdfs", hdfs), ("webhdfs", webhdfs)):
            run_query(spark, f"{base}/bench/warm-{scheme}", f"warm_{scheme}", 1)
            figures, _ = run_query(spark, f"{base}/bench/run-{scheme}", f"run_{scheme}",
                                   batches)
            out[scheme] = {key: statistics.median(f[key] for f in figures)
                           for key in ("checkpoint", "triggerExecution")}
    finally:
        spark.stop()
    print(json.dumps(out), flush=True)


# ==================================================================== the benchmark proper

def start(kdc: Realm, base: Path) -> tuple[NamenodeProcess, NamenodeProcess]:
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"), path=base / "nn.keytab")
    users = ("-D", f"hadoop.user.group.static.mapping.overrides={USER}=supergroup")
    simple = NamenodeProcess.start([str(base / "simple")], *users)
    secure = NamenodeProcess.start(
        [str(base / "secure")], *users,
        "-D", "hadoop.security.authentication=kerberos",
        "-D", f"dfs.namenode.kerberos.principal=nn/_HOST@{kdc.name}",
        "-D", f"dfs.namenode.keytab.file={keytab}",
        "-D", f"dfs.web.authentication.kerberos.principal=HTTP/_HOST@{kdc.name}",
        "-D", f"dfs.web.authentication.kerberos.keytab={keytab}",
        "-D", "hadoop.rpc.protection=authentication,integrity,privacy", env=kdc.env_for())
    return simple, secure


def uris(nn: NamenodeProcess, round_: int) -> tuple[str, str]:
    """A fresh directory per round on both schemes; webhdfs:// by the name HTTP/_HOST has."""
    return (f"hdfs://127.0.0.1:{nn.rpc_port}/r{round_}",
            f"webhdfs://localhost:{nn.port}/r{round_}")


def run_driver(mode: str, nn: NamenodeProcess, round_: int, batches: int, kdc: Realm,
               conf_dir: Path) -> dict:
    args = [sys.executable, __file__, "driver", mode, *uris(nn, round_), str(batches)]
    env = {**os.environ, "HADOOP_USER_NAME": USER}
    if mode == "secure":
        user = kdc.user(USER)
        args += [user.name, str(user.keytab), kdc.krb5_conf]
        env.update(kdc.env_for(), HADOOP_CONF_DIR=str(conf_dir))
    proc = subprocess.run(args, capture_output=True, text=True, timeout=DRIVER_TIMEOUT,
                          env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"the {mode} driver failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bench_round(round_: int, batches: int, nns: dict, kdc: Realm, conf_dir: Path) -> None:
    load = os.getloadavg()[0]
    order = MODES if round_ % 2 == 0 else MODES[::-1]
    got = {mode: run_driver(mode, nns[mode], round_, batches, kdc, conf_dir) for mode in order}
    for scheme in SCHEMES:
        simple, secure = got["simple"][scheme], got["secure"][scheme]
        print(f"  round {round_} {scheme:<8} checkpoint secure {secure['checkpoint']:6.0f} ms"
              f" / simple {simple['checkpoint']:6.0f} ms = "
              f"{secure['checkpoint'] / simple['checkpoint']:.2f}x; batch "
              f"{secure['triggerExecution']:6.0f} / {simple['triggerExecution']:6.0f} ms = "
              f"{secure['triggerExecution'] / simple['triggerExecution']:.2f}x "
              f"(load {load:.1f} -> {os.getloadavg()[0]:.1f})", flush=True)


def main() -> None:
    if sys.argv[1:2] == ["driver"]:
        driver(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--protection", default="privacy",
                        choices=("authentication", "integrity", "privacy"))
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-spark-secure-",
                                 dir=os.environ.get("BENCH_DIR")))
    kdc = Realm.start(base / "kdc")
    started: list[NamenodeProcess] = []
    try:
        simple, secure = start(kdc, base)
        started += [simple, secure]
        conf_dir = base / "conf"
        conf_dir.mkdir()
        (conf_dir / "core-site.xml").write_text(
            CORE_SITE.format(realm=kdc.name, protection=args.protection))
        print(f"secure ÷ simple, median of {args.batches} batches per query, "
              f"hadoop.rpc.protection={args.protection}", flush=True)
        for r in range(args.rounds):
            bench_round(r, args.batches, {"simple": simple, "secure": secure}, kdc, conf_dir)
    finally:
        for nn in started:
            nn.stop()
        kdc.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
