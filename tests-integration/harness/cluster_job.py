"""A streaming job in a process of its own, so that a test can kill its driver, its executors, or both.

The job reads with the connector on a Spark local cluster (``local-cluster[2,1,1024]``: two executor JVMs) and
writes through :class:`harness.sink.BatchSink` (one parquet directory per micro-batch, replaced when a batch runs
again), which makes exactly-once checkable from outside. Run as ``python -m harness.cluster_job CONFIG`` from
``tests-integration``; :class:`harness.cluster.ClusterJob` does that. CONFIG is a JSON file:

``root``
    the sink's directory (output in ``out/``, checkpoint in ``checkpoint/``), also where ``STOP`` is looked for;
``master``, ``jar``, ``conf``
    the Spark master, the connector jar, extra Spark settings;
``options``
    the source's options;
``union_options``
    if set, a second source's options: the job reads the union of the two (by column name);
``trigger_s``
    the processing-time trigger;
``batch_delay_s``
    how long each batch waits after writing its output, before Spark commits it;
``real_time``
    if set, a batch duration such as ``"5 seconds"``: the query runs in real-time mode instead, writing through
    :class:`harness.real_time.RealTimeSink` (rows in ``rows/``; ``trigger_s``, ``batch_delay_s`` and the slow shard
    do not apply);
``slow_shard``, ``slow_ms``
    if set, every row of that shard costs ``slow_ms`` in its task (for slow and speculative tasks), or what
    ``KINESIS_SPARK_TEST_SLOW_MS`` says in the environment of the executor that runs it.

The job prints one JSON line per event on stdout: ``started`` (with the application id), ``progress`` (each
micro-batch's progress report), ``failed`` (the query's error), ``stopped``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from pyspark import cloudpickle
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from harness import real_time
from harness.real_time import RealTimeSink
from harness.sink import BatchSink

SLOW_MS_ENV = "KINESIS_SPARK_TEST_SLOW_MS"


def emit(event: str, **fields: object) -> None:
    print(json.dumps({"event": event, "time": time.time(), **fields}), flush=True)


def main(config_path: str) -> int:
    config = json.loads(Path(config_path).read_text())
    root = Path(config["root"])
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.master(config["master"])
        .appName("kinesis-spark-reliability")
        .config("spark.jars", config["jar"])
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
    )
    for key, value in config.get("conf", {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    emit("started", appId=spark.sparkContext.applicationId, pid=os.getpid())

    reader = spark.readStream.format("kinesis")
    for key, value in config["options"].items():
        reader = reader.option(key, value)
    source = reader.load()
    if config.get("union_options"):
        other = spark.readStream.format("kinesis")
        for key, value in config["union_options"].items():
            other = other.option(key, value)
        source = source.unionByName(other.load())
    if config.get("slow_shard"):
        # Thread.sleep through reflect(). reflect() is nondeterministic, so the optimizer keeps it; it answers a
        # void method with the string 'null' (String.valueOf), not SQL NULL, so the filter's condition must hold
        # for either: length(coalesce(r, '')) >= 0 keeps every row. An executor whose environment sets
        # SLOW_MS_ENV sleeps that long instead: a slow host, the case speculation is for (an unset variable comes
        # back as 'null' too).
        env = f"nullif(reflect('java.lang.System', 'getenv', '{SLOW_MS_ENV}'), 'null')"
        millis = f"coalesce({env}, '{int(config['slow_ms'])}')"
        kept = f"length(coalesce(reflect('java.lang.Thread', 'sleep', cast({millis} as bigint)), '')) >= 0"
        source = source.where(F.when(F.col("shardId") == config["slow_shard"], F.expr(kept)).otherwise(F.lit(True)))
    if config.get("real_time"):
        # The executors' Python workers cannot import this harness: its ForeachWriter travels by value.
        cloudpickle.register_pickle_by_value(real_time)
        query = RealTimeSink(root).start(source, config["real_time"])
    else:
        trigger = {"processingTime": f"{config['trigger_s']} seconds"}
        query = BatchSink(spark, root).start(source, trigger=trigger, batch_delay_s=config.get("batch_delay_s", 0.0))

    reported: set[tuple[int, str]] = set()
    stop_file = root / "STOP"
    while True:
        for progress in query.recentProgress:
            key = (progress["batchId"], progress["timestamp"])
            if key not in reported:
                reported.add(key)
                emit("progress", progress=json.loads(progress.json) if hasattr(progress, "json") else progress)
        error = query.exception()
        if error is not None:
            emit("failed", message=str(error))
            return 1
        if stop_file.exists():
            query.stop()
            # Prefetched blocks left in the cluster after the stop (there should be none). Executors drop them
            # asynchronously, so give them a moment.
            bridge = spark._jvm.org.apache.spark.kinesisspark.BlockStoreBridge
            counts = [bridge.streamBlockCount()]
            deadline = time.monotonic() + 15
            while counts[-1] > 0 and time.monotonic() < deadline:
                time.sleep(0.5)
                counts.append(bridge.streamBlockCount())
            emit("stopped", blocks=counts[-1], blockCounts=counts)
            spark.stop()
            return 0
        time.sleep(0.2)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
