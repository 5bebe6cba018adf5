"""The offline tools' commands: ``oiv``, ``oev``, ``edits verify``, ``fsimage verify`` and
``analyze``, with their option helpers. ``cli.py`` adds them to ``nnlite``; their errors become
one line in ``commands/support.py``. pyarrow and pyspark are imported inside the commands.
"""

from __future__ import annotations

from pathlib import Path

import click

from nnlite.commands.support import EXIT_CORRUPT


def input_option(help_text: str):
    return click.option("-i", "--input", "input_path", required=True, help=help_text,
                        type=click.Path(exists=True, dir_okay=False))


def output_option(fn):
    return click.option("-o", "--output", default="-", show_default=True,
                        help="Output file; - for standard output.")(fn)


def max_record_option(fn):
    return click.option("--max-record", type=click.IntRange(min=1), default=None,
                        help="Largest record accepted, in bytes (default 1 MiB).")(fn)


def processor_option(choices, default: str):
    return click.option("-p", "--processor", type=click.Choice(choices, case_sensitive=False),
                        default=default, show_default=True, help="What to produce.")


def _tools_processors():
    from nnlite.tools import OEV_PROCESSORS, OIV_PROCESSORS
    return OIV_PROCESSORS, OEV_PROCESSORS


OIV_CHOICES, OEV_CHOICES = _tools_processors()


@click.command("oiv")
@input_option("The fsimage to read.")
@output_option
@processor_option(OIV_CHOICES, "Delimited")
@click.option("--delimiter", default=None, help="Delimited: field separator (default tab).")
@click.option("--no-header", is_flag=True, help="Delimited: leave out the header line.")
@click.option("--step", type=int, default=None, help="FileDistribution: bucket width in bytes "
              "(default 2 MiB).")
@click.option("--max", "max_size", type=int, default=None,
              help="FileDistribution: largest size with its own bucket (default 128 GiB).")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="FileDistribution: also draw the histogram as a PNG bar chart.")
@click.option("--md5", default=None, help="Expected MD5 of the image (default: the digest in "
              "FSIMAGE.md5, when that file exists).")
def oiv_cmd(input_path, output, processor, delimiter, no_header, step, max_size, plot,
            md5) -> None:
    """Offline image viewer: render an fsimage, one inode per line or record."""
    from nnlite.tools import oiv
    options = oiv.OivOptions(processor=processor, delimiter=delimiter, header=not no_header,
                             step=step, max_size=max_size, plot=plot, md5=md5)
    result = oiv.run(input_path, output, options)
    kept = f", {result.kept} kept only by snapshots left out" if result.kept else ""
    click.echo(f"oiv: {result.md5_note}; {result.written} of {result.meta.inode_count} inodes "
               f"rendered{kept} (image txid {result.meta.last_txid})", err=True)
    result.check()


@click.command("oev")
@input_option("The edits file to read (for -p binary: its JSON or XML rendering).")
@output_option
@processor_option(OEV_CHOICES, "XML")
@max_record_option
@click.option("--show-secrets", is_flag=True,
              help="Render the delegation master keys' secrets too (shown as their size "
                   "otherwise); a rendering -p binary turns back into edits needs them.")
def oev_cmd(input_path, output, processor, max_record, show_secrets) -> None:
    """Offline edits viewer: render an edits file as JSON, XML or stats; -p binary turns a
    JSON or XML rendering back into an edits file."""
    from nnlite.tools import oev, oev_binary
    if processor == "binary":
        if output == "-":
            raise click.UsageError("-p binary writes a file: give -o FILE")
        done = oev_binary.to_binary(input_path, output)
        click.echo(oev_binary.describe_binary(done), err=True)
        return
    result = oev.view(input_path, output, processor, **oev.reader_options(max_record),
                      secrets=show_secrets)
    click.echo(oev.describe_view(result), err=True)
    if result.error is not None:
        raise result.error


@click.group("edits")
def edits_group() -> None:
    """Offline checks of edits files."""


@edits_group.command("verify")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@max_record_option
def edits_verify_cmd(path, max_record) -> None:
    """Check an edits file (frames, CRCs, txids); exit 0 only if it is clean."""
    from nnlite.tools import oev, verify
    report = verify.verify_edits(path, **oev.reader_options(max_record))
    click.echo(report.render(), nl=False)
    if not report.ok:
        click.get_current_context().exit(EXIT_CORRUPT)


@click.group("fsimage")
def fsimage_group() -> None:
    """Offline checks of fsimage files."""


@fsimage_group.command("verify")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--md5", default=None, help="Expected MD5 (default: the digest in PATH.md5).")
def fsimage_verify_cmd(path, md5) -> None:
    """Check an fsimage (MD5, footer, schema, every page, the tree); exit 0 only if clean."""
    from nnlite.tools import verify
    report = verify.verify_image(path, md5=md5)
    click.echo(report.render(), nl=False)
    if not report.ok:
        click.get_current_context().exit(EXIT_CORRUPT)


@click.command("analyze")
@click.argument("fsimage", type=click.Path(exists=True))
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Also write Parquet and CSV tables, PNG charts and report.html here.")
@click.option("--master", default="local[2]", show_default=True, help="Spark master.")
@click.option("--top", type=click.IntRange(min=1), default=20, show_default=True,
              help="Rows of the top-N tables.")
@click.option("--small-file-size", "small_bytes", type=click.IntRange(min=1),
              default=1 << 20, show_default=True, help="Files shorter than this are small.")
def analyze_cmd(fsimage, out, master, top, small_bytes) -> None:
    """Analyse an fsimage (or a name/checkpoint dir) with PySpark: sizes, small files,
    owners, top-level dirs, replication, oldest data, Spark and Flink checkpoints."""
    try:
        import pyspark  # noqa: F401  (only to say clearly what is missing)

        from nnlite.analytics import analyze, report
    except ImportError as exc:
        raise click.ClickException(f"nnlite analyze needs pyspark and matplotlib ({exc}): "
                                   "pip install 'nnlite[spark,plot]'") from exc
    try:
        result = analyze.analyze(fsimage, master=master, top=top, small_bytes=small_bytes)
    except FileNotFoundError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(report.summary(result))
    if out:
        written = report.write(result, out)
        click.echo(f"\nWrote {len(written)} files to {out}; open {Path(out) / 'report.html'}")
