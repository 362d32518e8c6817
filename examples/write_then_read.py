"""Write rows to a Kinesis stream with the connector's sink, then read them back with its source.

The rows are written by a batch job (``KinesisWriter(df).save()``, that is ``df.write.format("kinesis")``):
a ``partitionKey`` and a ``data`` column per record. A streaming query with ``Trigger.AvailableNow`` then
reads the stream from its oldest record, and the script checks that every row came back exactly once. The
sink is at-least-once (a retried task may write a record twice), so "exactly once" holds for a run without
failures.

Run it against an existing, empty stream, with credentials from the AWS SDK's default chain::

    python examples/write_then_read.py --stream round-trip --region us-east-1 --records 1000

or against a local emulator by adding ``--endpoint http://127.0.0.1:4566`` (LocalStack: docker-compose.yml).
"""

from __future__ import annotations

import argparse
import sys
import tempfile

from pyspark.sql import SparkSession

import kinesis_spark
from kinesis_spark import InitialPosition, KinesisReader, KinesisWriter
from kinesis_spark.errors import translate_errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stream", required=True, help="an existing Kinesis stream, empty")
    parser.add_argument("--region", required=True, help="AWS region, e.g. us-east-1")
    parser.add_argument("--endpoint", help="Kinesis endpoint URL, for a local emulator")
    parser.add_argument("--records", type=int, default=1000, help="how many records to write")
    args = parser.parse_args()

    spark = kinesis_spark.configure(SparkSession.builder.appName("kinesis-write-then-read")).getOrCreate()

    # Rows to write: a partition key (which spreads records over shards) and the data, as a string.
    rows = spark.range(args.records).selectExpr(
        "concat('customer-', CAST(id % 17 AS STRING)) AS partitionKey",
        "concat('order-', CAST(id AS STRING)) AS data",
    )
    writer = KinesisWriter(rows).stream_name(args.stream).region(args.region)
    if args.endpoint:
        writer = writer.endpoint(args.endpoint)
    writer.save()
    print(f"wrote {args.records} records to {args.stream}")

    reader = (
        KinesisReader(spark)
        .stream_names(args.stream)
        .region(args.region)
        .initial_position(InitialPosition.trim_horizon())
    )
    if args.endpoint:
        reader = reader.endpoint(args.endpoint)
    query = (
        reader.load()
        .selectExpr("partitionKey", "CAST(data AS STRING) AS data")
        .writeStream.format("memory")
        .queryName("read_back")
        .option("checkpointLocation", tempfile.mkdtemp(prefix="write-then-read-"))
        .trigger(availableNow=True)
        .start()
    )
    with translate_errors():
        query.awaitTermination()

    written = {(row.partitionKey, row.data) for row in rows.collect()}
    read = [(row.partitionKey, row.data) for row in spark.sql("SELECT * FROM read_back").collect()]
    spark.stop()
    if len(read) == len(written) and set(read) == written:
        print(f"round trip OK: {len(read)} records read back, each once, with their partition keys")
        return 0
    missing, extra = len(written - set(read)), len(read) - len(set(read))
    print(f"round trip FAILED: read {len(read)} records; {missing} missing, {extra} duplicates")
    return 1


if __name__ == "__main__":
    sys.exit(main())
