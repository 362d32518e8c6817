"""Read a Kinesis stream with enhanced fan-out (EFO): a registered consumer with its own 2 MB/s per shard.

Records are pushed to the query over SubscribeToShard instead of being polled with GetRecords, so this query
neither competes with other readers of the stream for each shard's read throughput nor waits between calls.
The query registers a consumer named ``--consumer`` (or reuses it) and deregisters it when it stops, so
nothing is left to pay for. It counts records as they arrive, stops after ``--expect`` records (or
``--timeout`` seconds), and shows the first few.

Run it against Kinesis with credentials from the AWS SDK's default chain::

    python examples/efo_read.py --stream clicks --region us-east-1 --consumer clicks-dashboard --expect 100

or against a local emulator by adding ``--endpoint http://127.0.0.1:4566``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time

from pyspark.sql import SparkSession

import kinesis_spark
from kinesis_spark import ConsumerMode, InitialPosition, KinesisReader
from kinesis_spark.errors import translate, translate_errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stream", required=True, help="Kinesis stream name (or ARN)")
    parser.add_argument("--region", required=True, help="AWS region, e.g. us-east-1")
    parser.add_argument("--endpoint", help="Kinesis endpoint URL, for a local emulator")
    parser.add_argument("--consumer", required=True, help="name of the EFO consumer to register or reuse")
    parser.add_argument("--expect", type=int, required=True, help="stop after this many records")
    parser.add_argument("--timeout", type=float, default=120.0, help="give up after this many seconds")
    args = parser.parse_args()

    spark = kinesis_spark.configure(SparkSession.builder.appName("kinesis-efo")).getOrCreate()
    reader = (
        KinesisReader(spark)
        .stream_names(args.stream)
        .region(args.region)
        .consumer_mode(ConsumerMode.EFO)
        .consumer_name(args.consumer)
        .require_consumer_deregistration()  # a registered consumer costs money while it exists
        .initial_position(InitialPosition.trim_horizon())
    )
    if args.endpoint:
        reader = reader.endpoint(args.endpoint)
    query = (
        reader.load()
        .selectExpr("shardId", "sequenceNumber", "CAST(data AS STRING) AS data")
        .writeStream.format("memory")
        .queryName("efo_records")
        .option("checkpointLocation", tempfile.mkdtemp(prefix="efo-read-"))
        .start()
    )

    deadline = time.monotonic() + args.timeout
    seen = 0
    while seen < args.expect and time.monotonic() < deadline:
        failure = query.exception()
        if failure is not None:
            raise translate(failure)
        count = spark.sql("SELECT count(*) AS n FROM efo_records").first()
        if count is not None and count.n != seen:
            seen = count.n
            print(f"{seen} records so far")
        time.sleep(1)
    spark.sql("SELECT * FROM efo_records ORDER BY shardId, sequenceNumber").show(10, truncate=False)
    with translate_errors():
        query.stop()
    spark.stop()
    print(f"read {seen} records with enhanced fan-out")
    return 0 if seen >= args.expect else 1


if __name__ == "__main__":
    sys.exit(main())
