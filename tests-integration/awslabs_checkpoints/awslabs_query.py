"""The awslabs connector's query that wrote the checkpoints kept here: run by ``make.py`` with ``spark-submit``, never by
the tests (which only replay what it wrote).

It reads one stream from TRIM_HORIZON with ``format("aws-kinesis")`` (the awslabs jar alone on the classpath), at most
``kinesis.maxFetchRecordsPerShard`` (six) user records per shard and batch, so that batches end inside KPL aggregates, and
writes each batch's rows to ``<output>/batch-<id>.jsonl``. Batch ``batches`` fails before it commits, so the query
stops with ``batches`` batches committed and the next one's offsets and shard positions written, as a query stopped
mid-batch leaves them.

Usage: awslabs_query.py ENDPOINT STREAM CHECKPOINT OUTPUT BATCHES COMMITTER [DYNAMODB_TABLE]
"""

import base64
import json
import sys
from pathlib import Path

from pyspark.sql import SparkSession

endpoint, stream, checkpoint, output, batches, committer = sys.argv[1:7]
table = sys.argv[7] if len(sys.argv) > 7 else None
spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
spark.sparkContext.setLogLevel("WARN")
reader = (
    spark.readStream.format("aws-kinesis")
    .option("kinesis.region", "us-east-1")
    .option("kinesis.kinesisRegion", "us-east-1")
    .option("kinesis.streamName", stream)
    .option("kinesis.consumerType", "GetRecords")
    .option("kinesis.endpointUrl", endpoint)
    .option("kinesis.startingPosition", "TRIM_HORIZON")
    .option("kinesis.maxFetchRecordsPerShard", "6")
    .option("kinesis.metadataCommitterType", committer)
)
if table:
    reader = reader.option("kinesis.dynamodb.tableName", table)
Path(output).mkdir(parents=True, exist_ok=True)


class Stop(Exception):
    """Raised in the batch after the last to commit: the query fails before Spark commits it, as a query
    stopped mid-batch does, and the checkpoint ends exactly at batch ``batches`` - 1."""


def write(frame, batch_id):
    if batch_id >= int(batches):
        frame.count()  # the batch reads, so the connector writes where it left each shard; then it fails
        raise Stop(f"batch {batch_id}: stopping after {batches} committed batches")
    rows = [
        {
            "partitionKey": r["partitionKey"],
            "data": base64.b64encode(bytes(r["data"])).decode(),
            "sequenceNumber": r["sequenceNumber"],
        }
        for r in frame.collect()
    ]
    (Path(output) / f"batch-{batch_id}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


query = reader.load().writeStream.foreachBatch(write).option("checkpointLocation", checkpoint).start()
try:
    query.awaitTermination(300)
except Exception as stopped:  # the Stop of the batch after the last, as Spark reports it
    if "stopping after" not in str(stopped):
        raise
else:
    raise SystemExit(f"the query did not reach batch {batches} in 300 s")
spark.stop()
