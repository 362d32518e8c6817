"""A PySpark job for the metrics test: a streaming query named ``copy`` reads a Kinesis stream of the emulator and
writes it to another, in a Spark application whose metrics system serves Prometheus's format on the driver's UI
(``/metrics/prometheus/``). Once the query has copied ``expected`` records, it scrapes that page, stops the query,
scrapes again, and prints the connector's lines of both scrapes as one ``RESULT {json}`` line.

It runs in a process of its own because it needs the Spark UI and a metrics configuration, which the test suite's
shared session does not have: ``python metrics_scrape.py ENDPOINT SOURCE_STREAM SINK_STREAM EXPECTED JAR UI_PORT``.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
import urllib.request

from pyspark.sql import SparkSession

TIMEOUT_S = 180


def scrape(port: int) -> list[str]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics/prometheus/", timeout=30) as page:
        return [line for line in page.read().decode().splitlines() if "kinesis_" in line]


def main(endpoint: str, source: str, sink: str, expected: int, jar: str, port: int) -> None:
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("kinesis-spark-metrics")
        .config("spark.jars", jar)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.port", str(port))
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.metrics.conf.*.sink.prometheusServlet.class", "org.apache.spark.metrics.sink.PrometheusServlet")
        .config("spark.metrics.conf.*.sink.prometheusServlet.path", "/metrics/prometheus")
        .getOrCreate()
    )
    connection = {"region": "us-east-1", "endpoint": endpoint, "awsAccessKey": "test", "awsSecretKey": "test"}
    records = (
        spark.readStream.format("kinesis").options(**connection).option("streamName", source)
        .option("initialPosition", "trim_horizon").load()
    )
    query = (
        records.selectExpr("partitionKey", "data").writeStream.format("kinesis").options(**connection)
        .option("streamName", sink).option("checkpointLocation", tempfile.mkdtemp(prefix="metrics-checkpoint-"))
        .queryName("copy").trigger(processingTime="1 second").start()
    )
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        progress = query.lastProgress
        written = int(progress["sink"]["metrics"].get("recordsWritten", 0)) if progress else 0
        if written >= expected:
            break
        if time.monotonic() > deadline or query.exception() is not None:
            raise SystemExit(f"the query copied {written} of {expected} records: {query.exception()}")
        time.sleep(0.5)
    time.sleep(2)  # a snapshot of the gauges after the last batch (they are cached for a second)
    running = scrape(port)
    query.stop()
    # The sink's gauges go when Spark's listener bus reports the query terminated: soon, not at once.
    stop_deadline = time.monotonic() + 30
    stopped = scrape(port)
    while stopped and time.monotonic() < stop_deadline:
        time.sleep(0.5)
        stopped = scrape(port)
    spark.stop()
    print("RESULT " + json.dumps({"running": running, "stopped": stopped}), flush=True)


if __name__ == "__main__":
    endpoint, source, sink, expected, jar, port = sys.argv[1:7]
    main(endpoint, source, sink, int(expected), jar, int(port))
