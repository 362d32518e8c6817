"""The client side of the Spark Connect tests, run in the pyspark-client environment (no JVM, no full pyspark):
each public function of the kinesis_spark package against a real Connect server, as a Connect user calls it. Prints
one ``RESULT {json}`` line: for each step, what it returned or the error it raised (type and message).

``python connect_client.py URL ENDPOINT STREAM OUT_STREAM [JAR]``: with JAR, the session adds the connector itself
(``spark.addArtifacts``), to a server started without it.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
import uuid
from pathlib import Path
from typing import Any, Callable

from pyspark.sql import SparkSession

import kinesis_spark
from kinesis_spark import InitialPosition, KinesisConsumerManager, KinesisReader, KinesisWriter
from kinesis_spark.errors import translate_errors

REGION = "us-east-1"


def step(results: dict[str, Any], name: str, action: Callable[[], Any]) -> None:
    try:
        results[name] = {"returned": action()}
    except Exception as error:  # recorded for the test to judge
        results[name] = {"error": type(error).__name__, "module": type(error).__module__, "message": str(error)}
        if not type(error).__module__.startswith("kinesis_spark"):
            results[name]["traceback"] = traceback.format_exc()[-3000:]


class LineFiles:
    """A ForeachWriter: each task attempt appends its rows' ``data`` to a file of its own under ``root``."""

    def __init__(self, root: str) -> None:
        self.root = root

    def open(self, partition_id: int, epoch_id: int) -> bool:
        self.file = open(f"{self.root}/p{partition_id}-e{epoch_id}-{uuid.uuid4().hex}", "a")  # noqa: SIM115
        return True

    def process(self, row: Any) -> None:
        self.file.write(row.data + "\n")
        self.file.flush()

    def close(self, error: BaseException | None) -> None:
        self.file.close()


def main(url: str, endpoint: str, stream: str, out_stream: str, jar: str | None = None) -> None:
    results: dict[str, Any] = {}
    step(results, "configure", lambda: kinesis_spark.configure(SparkSession.builder.remote(url)) and "returned")
    spark = SparkSession.builder.remote(url).getOrCreate()
    if jar:
        spark.addArtifacts(jar)

    def reader(*streams: str) -> KinesisReader:
        return KinesisReader(spark).stream_names(*streams).region(REGION).endpoint(endpoint).credentials("a", "b")

    step(results, "missing_stream", lambda: reader("no-such-stream").load().columns)

    def bad_option() -> Any:
        with translate_errors():
            return (spark.readStream.format("kinesis").option("streamName", stream).option("region", REGION)
                    .option("maxRecordsPerFetch", "0").load().columns)

    step(results, "bad_option", bad_option)
    step(results, "consumer_manager", lambda: KinesisConsumerManager(spark).region(REGION).list_consumers(stream))

    def read() -> Any:
        df = reader(stream).initial_position(InitialPosition.trim_horizon()).load()
        query = (df.selectExpr("CAST(data AS STRING) AS data", "partitionKey").writeStream.format("memory")
                 .queryName("connect_read").trigger(availableNow=True).start())
        with translate_errors():
            query.awaitTermination()
        return {"columns": df.columns,
                "rows": sorted([r.partitionKey, r.data] for r in spark.table("connect_read").collect())}

    step(results, "read", read)

    def write() -> Any:
        rows = spark.createDataFrame([(f"k{i}", f"written-{i}") for i in range(20)], "partitionKey STRING, data STRING")
        KinesisWriter(rows).stream_name(out_stream).region(REGION).endpoint(endpoint).credentials("a", "b").save()
        return "saved"

    step(results, "write", write)

    def stream_write() -> Any:
        df = reader(stream).initial_position(InitialPosition.trim_horizon()).load().select("partitionKey", "data")
        query = (KinesisWriter(df).stream_name(out_stream).region(REGION).endpoint(endpoint).credentials("a", "b")
                 .stream_writer().option("checkpointLocation", "checkpoint-stream-write")
                 .trigger(availableNow=True).start())
        with translate_errors():
            query.awaitTermination()
        return [progress["sink"].get("metrics", {}) for progress in query.recentProgress]

    step(results, "stream_write", stream_write)

    def real_time_read() -> Any:
        # Real-time mode through Connect (Spark 4.2+'s trigger(realTime=...)), into a foreach writer (the server runs
        # it in its Python workers): Spark admits no memory sink in real-time mode.
        rows = Path("real-time-rows").absolute()
        rows.mkdir()
        df = reader(stream).initial_position(InitialPosition.trim_horizon()).load()
        query = (df.selectExpr("CAST(data AS STRING) AS data").writeStream.foreach(LineFiles(str(rows)))
                 .outputMode("update").option("checkpointLocation", "checkpoint-real-time")
                 .trigger(realTime="5 seconds").start())

        def lines() -> list[str]:
            return sorted(line for path in rows.iterdir() for line in path.read_text().splitlines())

        deadline = time.monotonic() + 90
        try:
            while len(lines()) < 30 and time.monotonic() < deadline:
                with translate_errors():
                    error = query.exception()
                    if error is not None:
                        raise error
                time.sleep(0.5)
            return lines()
        finally:
            query.stop()

    step(results, "real_time_read", real_time_read)

    def real_time_write() -> Any:
        df = reader(stream).load().select("partitionKey", "data")
        KinesisWriter(df).stream_name(out_stream).region(REGION).endpoint(endpoint).credentials("a", "b").start(
            "checkpoint-real-time-write", real_time="5 seconds")
        return "started"

    step(results, "real_time_write", real_time_write)
    print("RESULT " + json.dumps(results), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
