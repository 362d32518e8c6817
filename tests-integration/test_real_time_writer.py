"""Writing to Kinesis from a real-time query: ``KinesisWriter.start(real_time=...)`` runs the query with the JVM's
``Trigger.RealTime`` (so it works on Spark 4.1, whose PySpark has no real-time trigger) and writes through the
connector's ``KinesisForeachWriter``, which sends each row as it comes rather than when the batch ends."""

from __future__ import annotations

import time
from collections import defaultdict

import pytest
from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY
from kinesis_spark import KinesisOptionError, KinesisWriter
from pyspark.errors import IllegalArgumentException

pytestmark = pytest.mark.real_time_jvm


@pytest.mark.line_smoke  # also on Spark 4.1 and 4.3 (on 4.0 and 3.5 the real_time_jvm marker deselects it)
def test_a_real_time_query_writes_each_row_to_kinesis_as_it_comes(kinesis, stream, read_kinesis, emulator, tmp_path):
    source_name, target = stream(2), stream(1)
    rows = read_kinesis(source_name, initialPosition="trim_horizon").selectExpr("data", "partitionKey")

    def writer(df):  # noqa: ANN001, ANN202
        return (KinesisWriter(df).stream_name(target).region(REGION).endpoint(emulator.endpoint)
                .credentials(ACCESS_KEY, SECRET_KEY))

    # A missing column, or an option the writer cannot honour, is refused on the driver before any query starts (a
    # missing column is Spark's IllegalArgumentException, as in micro-batch writes; options are KinesisOptionError).
    with pytest.raises(IllegalArgumentException, match="no column 'partitionKey'"):
        writer(rows.select("data")).start(str(tmp_path / "refused"), real_time="5 seconds")
    with pytest.raises(KinesisOptionError, match="aggregation"):
        writer(rows).option("aggregation", True).start(str(tmp_path / "refused"), real_time="5 seconds")

    # Batches of a minute: every row must be in the target stream long before the first batch ends and commits.
    started = time.monotonic()
    query = writer(rows).option("preserveKeyOrder", True).start(str(tmp_path / "checkpoint"), real_time="1 minute")
    try:
        produced: dict[str, list[str]] = defaultdict(list)
        for round_ in range(3):
            records = [(f"key-{i % 5}", f"key-{i % 5}:{round_ * 10 + i // 5}") for i in range(50)]
            kinesis.put_records(source_name, [(k, d.encode()) for k, d in records])
            for key, data in records:
                produced[key].append(data)
            time.sleep(1)
        expected = sum(len(v) for v in produced.values())
        deadline = time.monotonic() + 45
        while len(written := kinesis.read_all(target)) < expected:
            assert query.exception() is None, f"the real-time query failed: {query.exception()}"
            assert time.monotonic() < deadline, f"{len(written)} of {expected} rows written after 45 s"
            time.sleep(0.5)
        seconds = time.monotonic() - started
        progress = query.lastProgress
    finally:
        query.stop()
    print(f"\nreal-time writer: {len(written)} rows in the target stream {seconds:.1f} s after the query started")
    assert progress is None and seconds < 60, f"rows appeared only after the first batch ended: {progress}"
    delivered: dict[str, list[str]] = defaultdict(list)
    for record in written:
        delivered[record["PartitionKey"]].append(bytes(record["Data"]).decode())
    assert delivered == produced  # each row once, every key's rows in order
