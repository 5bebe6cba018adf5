"""CI's part of the conformance matrix (tests/catalog/conformance.py): every verdict of the
catalog on a retained checkpoint, confirmed by restarting real Spark, for one cell of each
stateful operator, spread over the state stores and both keeps, and one cell whose checkpoint
Spark writes over hdfs:// (Hadoop IPC and the built-in datanode). ``bench/conformance.py``
runs the rest."""

from __future__ import annotations

import pytest

from tests.catalog.conformance import OPERATORS, Outcome, run_cell, table

pytestmark = pytest.mark.spark

BATCHES = 6
CELLS = [
    ("aggregation", "hdfs", 2),
    ("aggregation", "rocksdb", 6),
    ("dropDuplicates", "rocksdb-v2", 2),
    ("dropDuplicatesWithinWatermark", "hdfs", 2),
    ("stream-stream join", "rocksdb-changelog", 2),
    ("applyInPandasWithState", "hdfs", 6),
    ("transformWithState", "rocksdb", 2),
    ("stateless-async", "hdfs", 6),
    ("stream-stream join", "rocksdb-v2-zips", 2),
    ("stateless", "hdfs-offsets-v2", 2),
]


@pytest.mark.parametrize("operator,store,keep", CELLS)
def test_every_verdict_is_spark_s_own(spark, server, tmp_path, operator, store, keep):
    outcomes = run_cell(spark, OPERATORS[operator], store, keep, server.url, server.port,
                        tmp_path, BATCHES)
    check(outcomes, operator, keep)


def test_every_verdict_is_spark_s_own_on_a_checkpoint_written_over_hdfs(spark, server,
                                                                        tmp_path):
    outcomes = run_cell(spark, OPERATORS["aggregation"], "rocksdb", 2, server.url,
                        server.rpc_port, tmp_path, BATCHES, scheme="hdfs")
    check(outcomes, "aggregation", 2)


@pytest.mark.parametrize("damage,keep,restored", [
    ("swap", 6, [0, 1, 2]),          # version 4's committed file renamed: 3-5 read it
    ("leftover", 2, [4, 5]),         # another attempt's files beside the newest: harmless
    ("no-sidecar", 6, [0, 1, 2]),    # version 4's changelog damaged, its .crc lost
])
def test_every_verdict_is_spark_s_own_on_damaged_format_v2_files(spark, server, tmp_path,
                                                                 damage, keep, restored):
    """conformance.DAMAGES done to a retained RocksDB format version 2 checkpoint: the
    catalog's verdicts, from the changelogs' lineages and the commits, are Spark's."""
    outcomes = run_cell(spark, OPERATORS["aggregation"], "rocksdb-v2", keep, server.url,
                        server.port, tmp_path, BATCHES, damage=damage)
    shown = "\n".join(table(outcomes))
    assert [o for o in outcomes if not o.agrees] == [], shown
    assert [o.batch for o in outcomes if o.catalog_restores] == restored, shown


@pytest.mark.parametrize("store,damage", [("rocksdb-v2-snappy", "checksum"),
                                          ("rocksdb-v2-zstd", "no-sidecar"),
                                          ("rocksdb-v2-snappy", "no-sidecar"),
                                          ("rocksdb-v2-zips", "no-sidecar")])
def test_a_damaged_state_file_without_a_check_of_its_own_as_spark_restarts_it(
        spark, server, tmp_path, store, damage):
    """One byte of version 4's changelog changed under snappy and zstd
    (spark.sql.streaming.stateStore.compression.codec), or of version 4's snapshot zip:
    the restores that read it are refused, as Spark's restart fails them -- with the .crc
    sidecar kept by its checksum check, with it lost by the codec's read and the changelog
    reader's (codecs that carry no checksum of their own: the catalog decodes them and
    reads the records) or by the unzip (ZipInputStream's CRC and sizes). Spark writes these
    over hdfs:// (bench/conformance.py runs every codec and damage over webhdfs://)."""
    outcomes = run_cell(spark, OPERATORS["aggregation"], store, 6, server.url,
                        server.rpc_port, tmp_path, BATCHES, scheme="hdfs", damage=damage)
    shown = "\n".join(table(outcomes))
    assert [o for o in outcomes if not o.agrees] == [], shown
    restored = [o.batch for o in outcomes if o.catalog_restores]
    if damage == "checksum":
        assert restored == [0, 1, 2], shown
    elif store == "rocksdb-v2-zips":
        # each version is a whole snapshot: only batch 3's restore reads version 4's zip
        assert restored == [0, 1, 2, 4, 5], shown
    else:
        # where the flipped byte lands decides how far the damage goes: a record (every
        # restore that replays version 4's changelog fails) or the lineage at its head
        # (batch 3's restore follows a garbled id; 4 and 5 follow version 5's lineage)
        assert restored[:3] == [0, 1, 2] and 3 not in restored, shown


def check(outcomes: list[Outcome], operator: str, keep: int) -> None:
    shown = "\n".join(table(outcomes))
    assert [o for o in outcomes if not o.agrees] == [], shown
    restored = [o.batch for o in outcomes if o.catalog_restores]
    if OPERATORS[operator].async_progress:
        # offsets and commits at most every 300 ms, always for a run's first batch: which
        # batches restore depends on timing, but batch 0 does (nothing was deleted)
        assert 0 in restored, shown
    else:
        # retention kept the newest `keep` batches; each of them, and no other, restores
        assert restored == list(range(BATCHES - keep, BATCHES)), shown
