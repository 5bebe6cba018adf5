"""A keyed, stateful PyFlink job that checkpoints into nnlite through Flink's own Hadoop
file system, over ``webhdfs://`` or ``hdfs://`` (README.md, "Flink"; tests/flink runs it for
real). It runs in
PyFlink's environment (``make flink-env``), not in nnlite's, with Hadoop's client on
``HADOOP_CLASSPATH``::

    .venv-flink/bin/python examples/flink_count.py CHECKPOINTS [--restore PATH]
        [--stop-after-checkpoints N] [--savepoints DIR --savepoint-after-checkpoints N]
        [--backend hashmap|rocksdb] [--incremental] [--rows N] [--rate R] [--keys K]
        [--print] [--fail-fast] [--files DIR]

The query: ``SELECT v % K, COUNT(*), SUM(v) FROM datagen(v = 1..N) GROUP BY v % K`` in
streaming mode, checkpointed every 300 ms into ``CHECKPOINTS/<job id>/chk-<n>`` (the newest
three kept). The sequence source and the aggregation both keep their state in the checkpoint,
so a run restored from any complete checkpoint ends with exactly ``COUNT = N / K`` per key and
the matching sums. ``--print`` shows them: Flink's print sink writes each changelog row
(``+I[k, count, sum]``, then ``-U[...]`` and ``+U[...]``) to stdout, so the final value of a
key is its last row; without it the rows go to a blackhole sink.

``--files DIR`` also writes every ``v``, one JSON line each (``{"v":7}``), into ``DIR``
through Flink's exactly-once file sink (the ``filesystem`` connector: Flink's ``FileSink``
buckets over the file system's ``RecoverableWriter``). JSON, a row format (an ``Encoder``),
not CSV, whose bulk writer rolls the part file at every checkpoint (``TableRollingPolicy``):
a part file rolls on the row that finds it past 2 KiB, so every checkpoint has a file in
progress, persisted with hsync, to resume; it is
committed (renamed from ``.part-*.inprogress.*`` to ``part-*``) when the checkpoint after
its roll completes; a restore commits the pending files its checkpoint names and resumes its
in-progress file at the checkpointed length (``HadoopRecoverableFsDataOutputStream``:
``recoverLease``, ``truncate``, ``append``). Flink offers that writer on Hadoop only for
``hdfs://`` (``HadoopRecoverableWriter``: "Recoverable writers on Hadoop are only supported
for HDFS" for any other scheme). Once the job has finished, the committed files hold each
``v`` exactly once, whatever was killed and restored on the way.

The job ends once its source has read all N rows (FINISHED: Flink then discards its
checkpoints), or with ``--stop-after-checkpoints`` once Flink has completed that many: it is
cancelled, and a cancelled job keeps its checkpoints (RETAIN_ON_CANCELLATION) to restore from.
Either way the process exits only after the local cluster has shut down, so everything Flink
writes or deletes when a job ends has reached the file system by then.

Events go to stdout as JSON lines: ``started`` (job id, web UI, what it restored from),
``savepoint`` (its path) or ``savepoint-failed`` (the error; tried again after the next
completed checkpoint), then ``stopped`` or ``finished``.
"""

import argparse
import json
import sys
import threading
import time
import urllib.request

from pyflink.common import Configuration
from pyflink.java_gateway import get_gateway
from pyflink.table import EnvironmentSettings, TableEnvironment

SAVEPOINT_ATTEMPTS = 3
POLL_SECONDS = 0.2


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoints", help="checkpoint directory, e.g. "
                                        "webhdfs://127.0.0.1:9870/flink/ckpt")
    ap.add_argument("--restore", help="checkpoint or savepoint to start from "
                                      "(execution.state-recovery.path)")
    ap.add_argument("--stop-after-checkpoints", type=int, default=0, metavar="N",
                    help="cancel the job once Flink has completed N checkpoints")
    ap.add_argument("--savepoints", help="savepoint directory")
    ap.add_argument("--savepoint-after-checkpoints", type=int, default=0, metavar="N",
                    help="take a savepoint into --savepoints once N checkpoints completed")
    ap.add_argument("--backend", default="hashmap", choices=("hashmap", "rocksdb"))
    ap.add_argument("--incremental", action="store_true")
    ap.add_argument("--rows", type=int, default=6000)
    ap.add_argument("--rate", type=int, default=400, help="rows per second")
    ap.add_argument("--keys", type=int, default=10)
    ap.add_argument("--print", action="store_true", help="print the changelog rows")
    ap.add_argument("--fail-fast", action="store_true",
                    help="no restart strategy: a restore that fails ends the job")
    ap.add_argument("--files", metavar="DIR",
                    help="also write every v into DIR through the exactly-once file sink")
    args = ap.parse_args(argv)
    if args.savepoint_after_checkpoints and not args.savepoints:
        ap.error("--savepoint-after-checkpoints needs --savepoints")
    return args


def configuration(args: argparse.Namespace) -> Configuration:
    settings = {
        "execution.checkpointing.interval": "300 ms",
        "execution.checkpointing.dir": args.checkpoints,
        "execution.checkpointing.externalized-checkpoint-retention": "RETAIN_ON_CANCELLATION",
        "execution.checkpointing.num-retained": "3",
        "execution.checkpointing.incremental": str(args.incremental).lower(),
        "state.backend.type": args.backend,
        "parallelism.default": "2",
        "rest.bind-address": "127.0.0.1",
        # The watcher reads the completed checkpoints over REST: fresh, not 3 s old.
        "rest.cache.checkpoint-statistics.timeout": "100 ms",
        "python.executable": sys.executable,
    }
    if args.savepoints:
        settings["execution.checkpointing.savepoint-dir"] = args.savepoints
    if args.restore:
        settings["execution.state-recovery.path"] = args.restore
    if args.fail_fast:
        settings["restart-strategy.type"] = "none"
    conf = Configuration()
    for key, value in settings.items():
        conf.set_string(key, value)
    return conf


def start(args: argparse.Namespace):
    """Submit the query; returns its ``TableResult``."""
    env = TableEnvironment.create(EnvironmentSettings.new_instance().in_streaming_mode()
                                  .with_configuration(configuration(args)).build())
    env.execute_sql(f"""
        CREATE TABLE src (v BIGINT) WITH (
          'connector' = 'datagen', 'rows-per-second' = '{args.rate}',
          'fields.v.kind' = 'sequence', 'fields.v.start' = '1', 'fields.v.end' = '{args.rows}')
    """)
    # collect() would be simpler than a print sink, but its sink keeps client offsets in the
    # checkpoint, and a restored job fails on them ("userVisibleTail should not be larger
    # than offset").
    sink = "print" if args.print else "blackhole"
    env.execute_sql(
        f"CREATE TABLE snk (k BIGINT, c BIGINT, s BIGINT) WITH ('connector' = '{sink}')")
    inserts = env.create_statement_set()
    inserts.add_insert_sql(
        f"INSERT INTO snk SELECT v % {args.keys}, COUNT(*), SUM(v) FROM src"
        f" GROUP BY v % {args.keys}")
    if args.files:
        env.execute_sql(f"""
            CREATE TABLE files (v BIGINT) WITH (
              'connector' = 'filesystem', 'path' = '{args.files}', 'format' = 'json',
              'sink.rolling-policy.file-size' = '2kb')
        """)
        inserts.add_insert_sql("INSERT INTO files SELECT v FROM src")
    return inserts.execute()


def emit(event: str, **fields) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


class LocalCluster:
    """The local cluster running the job. Flink's local ``JobClient`` tells neither how many
    checkpoints completed nor when its cluster has shut down; the ``MiniCluster`` it holds (in a
    private field) does, through its REST API (the one the web UI uses) and ``closeAsync``."""

    def __init__(self, client):
        self.client = client
        self.job_id = str(client.get_job_id())
        j_client = client._j_job_client
        field = j_client.getClass().getDeclaredField("miniCluster")
        field.setAccessible(True)
        self._mini = field.get(j_client)
        self.rest = str(self._mini.getRestAddress().get()).rstrip("/")

    def checkpoints(self) -> dict:
        """``GET /jobs/<id>/checkpoints``: counts, and the latest completed one."""
        with urllib.request.urlopen(f"{self.rest}/jobs/{self.job_id}/checkpoints",
                                    timeout=30) as resp:
            return json.load(resp)

    def savepoint(self, directory: str) -> str:
        """A canonical savepoint into ``directory``. PyFlink 2.3's
        ``JobClient.trigger_savepoint`` calls ``triggerSavepoint(String)``, which Flink 2 no
        longer has (it takes the format too), so the Java method is called directly."""
        canonical = get_gateway().jvm.org.apache.flink.core.execution.SavepointFormatType.CANONICAL
        return str(self.client._j_job_client.triggerSavepoint(directory, canonical).get())

    def shut_down(self) -> None:
        """Wait until the cluster has shut down: the job's checkpoint clean-up (subsumed,
        aborted, or all of them when the job finished) is over then."""
        self._mini.closeAsync().get()


class Watcher(threading.Thread):
    """Follows Flink's completed checkpoints: takes the savepoint and stops the job when
    their counts are reached."""

    def __init__(self, cluster: LocalCluster, args: argparse.Namespace):
        super().__init__(daemon=True)
        self.cluster, self.args = cluster, args
        self.stopping = threading.Event()
        self.savepoint_done = not args.savepoint_after_checkpoints
        self.savepoint_attempts = 0
        self.retry_after = args.savepoint_after_checkpoints

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                stats = self.cluster.checkpoints()
            except OSError:                  # the cluster is shutting down
                return
            completed = stats["counts"]["completed"]
            if not self.savepoint_done and completed >= self.retry_after:
                self.take_savepoint(completed)
            if self.args.stop_after_checkpoints and completed >= self.args.stop_after_checkpoints:
                self.stopping.set()
                self.cluster.client.cancel().result()     # RETAIN_ON_CANCELLATION
                return
            time.sleep(POLL_SECONDS)

    def take_savepoint(self, completed: int) -> None:
        """A savepoint needs every task running; a completed checkpoint shows they were. If
        one failed over meanwhile, try again after the next completed checkpoint."""
        self.savepoint_attempts += 1
        try:
            emit("savepoint", path=self.cluster.savepoint(self.args.savepoints))
            self.savepoint_done = True
        except Exception as exc:             # py4j's error for the Java one
            emit("savepoint-failed", attempt=self.savepoint_attempts, error=str(exc)[:2000])
            if self.savepoint_attempts >= SAVEPOINT_ATTEMPTS:
                self.savepoint_done = True
            self.retry_after = completed + 1


def main() -> None:
    args = parse_args()
    result = start(args)
    try:
        cluster = LocalCluster(result.get_job_client())
    except Exception:
        # A job that fails at once (a --fail-fast restore from a broken checkpoint) can take
        # its mini cluster down before the REST address is asked: the job's own failure is
        # the error to report, so wait for it first.
        result.wait()
        raise
    emit("started", job_id=cluster.job_id, web=cluster.rest, restored_from=args.restore)
    watcher = Watcher(cluster, args)
    watcher.start()
    try:
        result.wait()
    except Exception:
        if not watcher.stopping.is_set():
            raise                            # the job failed: a non-zero exit
        watcher.join()
        cluster.shut_down()
        emit("stopped")
        return
    watcher.stopping.set()
    cluster.shut_down()
    emit("finished")


if __name__ == "__main__":
    main()
