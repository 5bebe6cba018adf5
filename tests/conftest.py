"""Shared fixtures. One SparkSession serves the whole session: starting a JVM costs seconds."""

import os
import sys

import pytest


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession  # lazily: most tests never start a JVM

    # Python workers (UDFs, RDD code) must run this interpreter, not whatever "python3" is.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (SparkSession.builder.master("local[2]").appName("nnlite-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1")
               .getOrCreate())
    session.sparkContext.setLogLevel("WARN")
    yield session
    session.stop()
