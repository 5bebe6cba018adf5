"""A keyed, stateful PyFlink job for the Flink tests; it runs in .venv-flink, not in nnlite's
environment, and knows nnlite only as Flink's ``webhdfs://`` file system.

    python keyed_count.py --checkpoints webhdfs://127.0.0.1:PORT/flink/ckpt
        [--backend hashmap|rocksdb] [--incremental] [--restore PATH]
        [--savepoints DIR --savepoint-after SECONDS] [--rows N] [--rate R] [--keys K]

The query: ``SELECT v % K, COUNT(*), SUM(v) FROM datagen(v = 1..N) GROUP BY v % K`` in
streaming mode, with retained (externalized) checkpoints every 300 ms. The sequence source and
the aggregation both keep their state in the checkpoint, so a run restored from any complete
checkpoint ends with exactly ``COUNT = N / K`` and the matching sums.

Events go to stdout as JSON lines (``started`` with the job id, ``savepoint`` with its path,
``finished``); the result's changelog rows go there too, as Flink's print sink writes them
(``+U[k, count, sum]``), so the final value of each key is its last row.
"""

import argparse
import json
import sys
import time

from pyflink.common import Configuration
from pyflink.table import EnvironmentSettings, TableEnvironment


def savepoint(client, directory: str) -> str:
    """A canonical savepoint into ``directory``. PyFlink 2.3's ``JobClient.trigger_savepoint``
    calls ``triggerSavepoint(String)``, which Flink 2 no longer has (it takes the format too),
    so the Java method is called directly."""
    from pyflink.java_gateway import get_gateway
    canonical = get_gateway().jvm.org.apache.flink.core.execution.SavepointFormatType.CANONICAL
    return str(client._j_job_client.triggerSavepoint(directory, canonical).get())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--checkpoints", required=True)
    ap.add_argument("--backend", default="hashmap", choices=("hashmap", "rocksdb"))
    ap.add_argument("--incremental", action="store_true")
    ap.add_argument("--restore")
    ap.add_argument("--savepoints")
    ap.add_argument("--savepoint-after", type=float, default=0,
                    help="take a savepoint this many seconds after the start")
    ap.add_argument("--rows", type=int, default=6000)
    ap.add_argument("--rate", type=int, default=400)
    ap.add_argument("--keys", type=int, default=10)
    ap.add_argument("--fail-fast", action="store_true",
                    help="no restart strategy: a restore that fails ends the job")
    args = ap.parse_args()

    conf = Configuration()
    settings = {
        "execution.checkpointing.interval": "300 ms",
        "execution.checkpointing.dir": args.checkpoints,
        "execution.checkpointing.externalized-checkpoint-retention": "RETAIN_ON_CANCELLATION",
        "execution.checkpointing.num-retained": "3",
        "execution.checkpointing.incremental": str(args.incremental).lower(),
        "state.backend.type": args.backend,
        "parallelism.default": "2",
        "rest.bind-address": "127.0.0.1",
        "python.executable": sys.executable,
    }
    if args.savepoints:
        settings["execution.checkpointing.savepoint-dir"] = args.savepoints
    if args.restore:
        settings["execution.state-recovery.path"] = args.restore
    if args.fail_fast:
        settings["restart-strategy.type"] = "none"
    for key, value in settings.items():
        conf.set_string(key, value)
    env = TableEnvironment.create(
        EnvironmentSettings.new_instance().in_streaming_mode().with_configuration(conf).build())
    env.execute_sql(f"""
        CREATE TABLE src (v BIGINT) WITH (
          'connector' = 'datagen', 'rows-per-second' = '{args.rate}',
          'fields.v.kind' = 'sequence', 'fields.v.start' = '1', 'fields.v.end' = '{args.rows}')
    """)
    # The print sink writes each changelog row ("+I[k, c, s]", "-U[...]", "+U[...]") to the
    # task manager's stdout, which in local mode is this process's. collect() would be simpler
    # but its sink keeps client offsets in the checkpoint, and a restored job fails on them
    # ("userVisibleTail should not be larger than offset").
    env.execute_sql("CREATE TABLE snk (k BIGINT, c BIGINT, s BIGINT) WITH ('connector' = 'print')")
    result = env.execute_sql(
        f"INSERT INTO snk SELECT v % {args.keys}, COUNT(*), SUM(v) FROM src GROUP BY v % {args.keys}")
    client = result.get_job_client()
    print(json.dumps({"event": "started", "job_id": str(client.get_job_id())}), flush=True)
    if args.savepoint_after:
        time.sleep(args.savepoint_after)
        print(json.dumps({"event": "savepoint", "path": savepoint(client, args.savepoints)}),
              flush=True)
    result.wait()
    print(json.dumps({"event": "finished"}), flush=True)


if __name__ == "__main__":
    main()
