r"""An incremental batch job over Kinesis: each run reads what arrived since the previous run, then stops.

``Trigger.AvailableNow`` reads every record the stream's shards held when the run started, in as many
micro-batches as it takes, and the checkpoint remembers where the run ended, so the next run (an hour or a day
later, from a scheduler) starts there. Here each run counts the records per partition key, appends the
counts to a Parquet table, and prints what it read.

Run it against Kinesis, with credentials from the AWS SDK's default chain (environment, profile, role)::

    python examples/available_now_batch.py --stream clicks --region us-east-1 \\
        --checkpoint /data/checkpoints/clicks-hourly --output /data/clicks-hourly

or against a local emulator by adding ``--endpoint http://127.0.0.1:4566`` (LocalStack: docker-compose.yml).
"""

from __future__ import annotations

import argparse

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 (PySpark's usual name)

import kinesis_spark
from kinesis_spark import InitialPosition, KinesisReader
from kinesis_spark.errors import translate_errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stream", required=True, help="Kinesis stream name (or ARN)")
    parser.add_argument("--region", required=True, help="AWS region, e.g. us-east-1")
    parser.add_argument("--endpoint", help="Kinesis endpoint URL, for a local emulator")
    parser.add_argument("--checkpoint", required=True, help="where the job remembers how far it has read")
    parser.add_argument("--output", required=True, help="Parquet directory the counts are appended to")
    args = parser.parse_args()

    spark = kinesis_spark.configure(SparkSession.builder.appName("kinesis-available-now")).getOrCreate()
    reader = (
        KinesisReader(spark)
        .stream_names(args.stream)
        .region(args.region)
        # The first run starts at the oldest record; later runs continue from the checkpoint.
        .initial_position(InitialPosition.trim_horizon())
    )
    if args.endpoint:
        reader = reader.endpoint(args.endpoint)
    records = reader.load()

    read_this_run = 0

    def append_counts(batch: DataFrame, batch_id: int) -> None:  # runs on the driver, once per micro-batch
        nonlocal read_this_run
        counts = batch.groupBy("partitionKey").agg(F.count("*").alias("records"))
        counts = counts.withColumn("batch", F.lit(batch_id)).cache()
        counts.write.mode("append").parquet(args.output)
        read_this_run += sum(row.records for row in counts.select("records").collect())
        counts.unpersist()

    query = (
        records.writeStream.foreachBatch(append_counts)
        .option("checkpointLocation", args.checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    # Kinesis errors (a deleted stream, refused credentials, ...) come out as kinesis_spark.errors.
    with translate_errors():
        query.awaitTermination()
    print(f"read {read_this_run} records in this run")
    spark.stop()


if __name__ == "__main__":
    main()
