"""Streaming word count over Amazon Kinesis, entirely on this machine.

Starts the local Kinesis emulator, creates a 2-shard stream, writes a few sentences to it with boto3, counts
the words with a PySpark Structured Streaming query that reads the stream through the kinesis-spark connector,
prints the counts, and stops everything. Run it with ``bash dev/demo.sh``, which builds and installs what it
needs first.

Against real Kinesis, the same query needs only the stream name and region (and credentials from the usual
AWS provider chain): drop the ``endpoint``, ``awsAccessKey`` and ``awsSecretKey`` options.
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter
from pathlib import Path

# The emulator, boto3 and SparkSession helpers are shared with the integration tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests-integration"))

from pyspark.sql import functions as F

from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY, KinesisEmulator
from harness.kinesis import Kinesis
from harness.spark import local_spark

STREAM = "demo-sentences"
SENTENCES = [
    "the quick brown fox jumps over the lazy dog",
    "a stream of records flows through the shards",
    "spark reads the stream and counts the words",
    "every record is read once and only once",
    "the fox and the dog read the stream together",
]
REPEAT = 20  # each sentence is sent this many times
RESULT_TIMEOUT_S = 120.0


def expected_counts() -> Counter[str]:
    """What the query must arrive at: the word counts of everything sent."""
    once = Counter(word for sentence in SENTENCES for word in re.findall(r"\w+", sentence))
    return Counter({word: count * REPEAT for word, count in once.items()})


def main() -> int:
    with KinesisEmulator() as emulator:
        print(f"Kinesis emulator listening on {emulator.endpoint}")
        kinesis = Kinesis(emulator.endpoint)
        kinesis.create_stream(STREAM, shards=2)
        records = [(f"user-{i % 7}", sentence.encode()) for i in range(REPEAT) for sentence in SENTENCES]
        kinesis.put_records(STREAM, records)
        kinesis.close()
        print(f"Put {len(records)} sentences into the 2-shard stream {STREAM!r}")

        spark = local_spark("kinesis-spark-demo")
        try:
            lines = (
                spark.readStream.format("kinesis")
                .option("streamName", STREAM)
                .option("region", REGION)
                .option("endpoint", emulator.endpoint)
                .option("awsAccessKey", ACCESS_KEY)
                .option("awsSecretKey", SECRET_KEY)
                .option("initialPosition", "trim_horizon")
                .load()
            )
            words = lines.select(
                F.explode(F.split(F.lower(F.col("data").cast("string")), r"\W+")).alias("word")
            ).where(F.col("word") != "")
            query = (
                words.groupBy("word")
                .count()
                .writeStream.outputMode("complete")
                .format("memory")
                .queryName("word_counts")
                .start()
            )
            counts = wait_for_counts(spark, query, expected_counts())
            spark.sql("SELECT word, count FROM word_counts ORDER BY count DESC, word").show(
                50, truncate=False
            )
            query.stop()
        finally:
            spark.stop()

    if counts != expected_counts():
        print(f"MISMATCH: got {dict(counts)}, expected {dict(expected_counts())}")
        return 1
    print(f"OK: {sum(counts.values())} words counted, exactly as sent.")
    return 0


def wait_for_counts(spark, query, expected: Counter[str]) -> Counter[str]:
    """Poll the memory sink until it reaches the expected total (or the query fails or time runs out)."""
    deadline = time.monotonic() + RESULT_TIMEOUT_S
    while True:
        if query.exception() is not None:
            raise RuntimeError(f"the streaming query failed: {query.exception()}")
        counts = Counter({row.word: row["count"] for row in spark.sql("SELECT * FROM word_counts").collect()})
        if sum(counts.values()) >= sum(expected.values()):
            return counts
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"counted {sum(counts.values())} of {sum(expected.values())} words "
                f"after {RESULT_TIMEOUT_S:.0f} s"
            )
        time.sleep(1)


if __name__ == "__main__":
    sys.exit(main())
