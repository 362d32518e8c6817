"""A PySpark job for the packaging tests: reads a Kinesis stream of the emulator to its end with
``Trigger.AvailableNow`` through the ``kinesis_spark`` package, and prints what it read and where the
connector was loaded from, as one ``RESULT {json}`` line.

It is run as a user would run it: ``python read_stream.py ENDPOINT STREAM`` in a fresh virtual environment
with the wheel installed (``configure`` puts the bundled jar on ``spark.jars``), or
``spark-submit --packages ... read_stream.py ENDPOINT STREAM`` (``configure`` sees the connector already
loaded and adds nothing).
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession

import kinesis_spark
from kinesis_spark import InitialPosition, KinesisReader
from kinesis_spark.errors import translate_errors


def main(endpoint: str, stream: str) -> None:
    builder = (
        SparkSession.builder.master("local[1]")
        .appName("kinesis-spark-read-stream")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
    )
    spark = kinesis_spark.configure(builder).getOrCreate()
    df = (
        KinesisReader(spark)
        .stream_names(stream)
        .region("us-east-1")
        .endpoint(endpoint)
        .credentials("test", "test")
        .initial_position(InitialPosition.trim_horizon())
        .load()
    )
    query = (
        df.selectExpr("CAST(data AS STRING) AS data")
        .writeStream.format("memory")
        .queryName("records")
        .trigger(availableNow=True)
        .start()
    )
    with translate_errors():
        query.awaitTermination()
    records = sorted(row.data for row in spark.sql("SELECT data FROM records").collect())
    provider = spark.sparkContext._jvm.java.lang.Class.forName(
        "io.kinesisspark.KinesisSourceProvider",
        False,
        spark.sparkContext._jvm.java.lang.Thread.currentThread().getContextClassLoader(),
    )
    jar = provider.getProtectionDomain().getCodeSource().getLocation().toString()
    result = {"records": records, "connector_jar": jar, "package": kinesis_spark.__file__}
    print("RESULT " + json.dumps(result), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
