"""What dev/spark-class-archive.sh runs to learn which classes a test's Spark JVM loads: a local session, a query
with a shuffle, parquet written and read (the tests' sinks), a Python UDF, and a streaming query through
foreachBatch with a checkpoint. Its JVM writes the archive when it exits, which this waits for."""

from __future__ import annotations

import os
import tempfile

from pyspark import SparkContext
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
spark = (
    SparkSession.builder.master("local[2]")
    .appName("spark-class-archive")
    .config("spark.driver.host", "127.0.0.1")
    .config("spark.driver.bindAddress", "127.0.0.1")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
with tempfile.TemporaryDirectory() as scratch:
    frame = spark.range(1000).withColumn("key", F.col("id") % 7).withColumn("data", F.expr("binary(string(id))"))
    frame.groupBy("key").agg(F.count("*"), F.max("data")).collect()
    frame.write.parquet(f"{scratch}/table")
    spark.read.parquet(f"{scratch}/table").where("key = 3").count()
    spark.range(10).select(F.udf(lambda value: value + 1, "long")("id")).collect()

    batches: list[int] = []
    query = (
        spark.readStream.format("rate")
        .option("rowsPerSecond", 100)
        .load()
        .writeStream.foreachBatch(lambda batch, batch_id: batches.append(batch.count()))
        .option("checkpointLocation", f"{scratch}/checkpoint")
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    while len(batches) < 3 and query.exception() is None:
        query.awaitTermination(0.5)
    query.stop()
spark.stop()
# The JVM exits when its stdin closes (as it does when Python exits) and only then writes the archive, which takes
# seconds: Python must not exit first, or a caller would find no archive yet.
jvm = SparkContext._gateway.proc  # type: ignore[union-attr]
jvm.stdin.close()
jvm.wait(timeout=300)
