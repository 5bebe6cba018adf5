"""The ``catalog`` group: ``nnlite catalog`` over the namenode's /catalog/v1 (ls, show,
latest, validate, retain, rollback, pin/unpin, gc, the job-checkpoint lifecycle) and ``watch``,
the mirror of a local checkpoint directory. ``cli.py`` adds the group to ``nnlite``; it reuses
the remote options of ``commands/dfs.py``; its errors become one line in ``commands/support.py``.
"""

from __future__ import annotations

import functools
import time

import click

from nnlite.commands.dfs import echo_lines, json_option, remote_options
from nnlite.commands.support import EXIT_FAILED


@click.group("catalog")
def catalog_group() -> None:
    """The checkpoint catalog: Spark's (Structured Streaming, RDD, DStream, job checkpoints)
    and Flink's (job checkpoints, savepoints) kept in nnlite (over /catalog/v1)."""


def catalog_options(fn):
    """``--namenode``, ``--user``, ``--json``; the command gets a ``catalog`` client."""
    @functools.wraps(fn)
    def wrapper(*args, client, **kw):
        from nnlite.catalog.client import CatalogClient
        return fn(*args, catalog=CatalogClient(hdfs=client), **kw)
    return json_option(remote_options(wrapper))


def echo_answer(doc, as_json: bool, lines) -> None:
    from nnlite.client import display
    echo_lines([display.to_json(doc)] if as_json else lines(doc))


@catalog_group.command("ls")
@click.argument("root", default="/")
@catalog_options
def catalog_ls(catalog, root, as_json) -> None:
    """Every checkpoint under ROOT: kind, last batch or id, health, size, last update."""
    from nnlite.catalog.display import ls_lines
    from nnlite.client import display
    rows = catalog.ls(root)
    echo_lines([display.to_json(r) for r in rows] if as_json else ls_lines(rows))


@catalog_group.command("show")
@click.argument("path")
@catalog_options
def catalog_show(catalog, path, as_json) -> None:
    """Per batch: offsets, commit, watermark, timestamps, bytes; state per operator."""
    from nnlite.catalog.display import show_lines
    echo_answer(catalog.show(path), as_json, show_lines)


@catalog_group.command("latest")
@click.argument("path")
@catalog_options
def catalog_latest(catalog, path, as_json) -> None:
    """The last fully restorable batch, the id of the newest job checkpoint, RDD or DStream
    time that restores, or for Flink the newest restorable checkpoint or savepoint at or under
    PATH as the URI to give Flink (execution.state-recovery.path, or flink run -s)."""
    doc = catalog.latest(path)
    latest = doc["latest"]
    if as_json:
        echo_answer(doc, True, None)
    elif latest is None:
        raise click.ClickException(f"{path}: nothing restorable")
    elif doc["kind"] == "flink":
        click.echo(catalog.webhdfs_uri(latest["path"]))
    else:
        click.echo(latest["id"] if isinstance(latest, dict) else latest)


@catalog_group.command("validate")
@click.argument("path")
@catalog_options
def catalog_validate(catalog, path, as_json) -> None:
    """Every problem of the checkpoint at PATH, by its kind's rules: gaps, uncommitted
    offsets, missing metadata or state, temp files, corrupt logs (Structured Streaming);
    files missing or changed since completion (job checkpoints); gaps in the parts (RDD);
    empty files (DStream); files a _metadata references (Flink). Exit code 0 only when it
    restores as it is (its newest complete checkpoint, or every RDD)."""
    from nnlite.catalog.display import validate_lines
    doc = catalog.validate(path)
    echo_answer(doc, as_json, validate_lines)
    if not doc["restorable"]:
        raise click.exceptions.Exit(EXIT_FAILED)


@catalog_group.command("retain")
@click.argument("path")
@click.option("--keep", type=click.IntRange(min=1), required=True,
              help="How many of the newest batches (or job checkpoints) stay restorable.")
@catalog_options
def catalog_retain(catalog, path, keep, as_json) -> None:
    """Delete batches older than the newest KEEP (pinned ones stay); every kept batch stays
    restorable, and the deletes are durable before it answers."""
    from nnlite.catalog.display import change_line
    echo_answer(catalog.retain(path, keep), as_json, lambda d: [change_line("retain", d)])


@catalog_group.command("rollback")
@click.argument("path")
@click.option("--to-batch", type=click.IntRange(min=0), required=True,
              help="The batch to go back to: the query restarts from the next one.")
@click.option("--wait", is_flag=True,
              help="While the checkpoint is written (or within nnlite.catalog.quiet of its last "
                   "write), wait until it is quiet instead of failing.")
@catalog_options
def catalog_rollback(catalog, path, to_batch, wait, as_json) -> None:
    """Remove every later offsets, commit, source-log entry and state version in one atomic
    op (refused while the query writes, unless --wait)."""
    from nnlite.catalog.display import change_line
    echo_answer(until_quiet(lambda: catalog.rollback(path, to_batch), wait), as_json,
                lambda d: [change_line("rollback", d)])


def until_quiet(change, wait: bool, poll: float = 1.0):
    """``change()``; with ``wait``, again after each refusal for a busy checkpoint (the
    namenode decides when it is quiet), saying once on stderr why it waits."""
    from nnlite.catalog.client import CheckpointBusy
    said = False
    while True:
        try:
            return change()
        except CheckpointBusy as exc:
            if not wait:
                raise
            if not said:
                click.echo(f"nnlite: waiting: {exc} (Ctrl-C stops)", err=True)
                said = True
            time.sleep(poll)


def _pin_command(name: str, on: bool, summary: str):
    @catalog_group.command(name, help=summary)
    @click.argument("path")
    @click.argument("batch", type=click.IntRange(min=0))
    @catalog_options
    def command(catalog, path, batch, as_json) -> None:
        doc = catalog.pin(path, batch) if on else catalog.unpin(path, batch)
        echo_answer(doc, as_json, lambda d: [f"{d.get('path', path)}: pinned {d.get('pinned')}"])
    return command


catalog_pin = _pin_command("pin", True, "Protect BATCH (and the state it needs) from retention.")
catalog_unpin = _pin_command("unpin", False, "Let retention remove BATCH again.")


@catalog_group.command("gc")
@click.argument("root", default="/")
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@catalog_options
def catalog_gc(catalog, root, dry_run, as_json) -> None:
    """Remove orphan temp files and abandoned RDD checkpoint directories under ROOT
    (unchanged for nnlite.catalog.gc.tmp-ttl / rdd-ttl on the namenode: 1 h / 7 d by
    default); what stays is named with why (younger than its TTL, and when gc will remove
    it; still being written; not the caller's to delete)."""
    from nnlite.catalog.display import change_line
    echo_answer(catalog.gc(root, dry_run), as_json, lambda d: [change_line("gc", d)])


@catalog_group.command("begin")
@click.argument("job")
@catalog_options
def catalog_begin(catalog, job, as_json) -> None:
    """Start a job checkpoint: prints its id and the directory to write into."""
    echo_answer(catalog.begin(job), as_json, lambda d: [f"{d['id']} {d['path']}"])


@catalog_group.command("complete")
@click.argument("job")
@click.argument("chk_id", type=int)
@click.option("--parts", type=click.IntRange(min=0), default=None,
              help="Part files expected (default: require Spark's _SUCCESS marker).")
@catalog_options
def catalog_complete(catalog, job, chk_id, parts, as_json) -> None:
    """Verify a job checkpoint's parts and mark it complete (one atomic rename)."""
    echo_answer(catalog.complete(job, chk_id, parts), as_json,
                lambda d: [f"complete: {d['path']} ({d['parts']} parts)"])


@catalog_group.command("abort")
@click.argument("job")
@click.argument("chk_id", type=int)
@catalog_options
def catalog_abort(catalog, job, chk_id, as_json) -> None:
    """Discard a job checkpoint that is in progress."""
    echo_answer(catalog.abort(job, chk_id), as_json, lambda d: [f"aborted {job} {chk_id}"])


@catalog_group.command("watch")
@click.argument("local_dir", type=click.Path(file_okay=False))
@click.option("--into", required=True, metavar="PATH",
              help="Where the copy lives in nnlite (an absolute path).")
@click.option("--interval", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
              help="Seconds between full rescans (a safety net for lost events).")
@click.option("--once", is_flag=True,
              help="One reconciliation pass, then exit (0 when the copy is complete).")
@remote_options
def catalog_watch(client, local_dir, into, interval, once) -> None:
    """Mirror a local Structured Streaming checkpoint directory into nnlite in commit order
    (offsets and state before commits), until SIGTERM/SIGINT. A LOCAL_DIR that does not
    exist yet is waited for (start the watcher, then the query); with --once it must exist."""
    from nnlite.catalog.watch import run_watch
    run_watch(client, local_dir, into, interval=interval, once=once)
