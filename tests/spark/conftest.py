"""One local Spark session for the whole test run (local[2], ANSI on, two shuffle partitions).

The Spark tests are skipped where pyspark is not installed (``pip install "securedp[spark]"``);
CI installs it and runs them.
"""

from __future__ import annotations

import os
import sys

import pytest

pyspark = pytest.importorskip("pyspark", reason='the Spark engine tests need pip install "securedp[spark]"')


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("securedp-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.ansi.enabled", "true")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
