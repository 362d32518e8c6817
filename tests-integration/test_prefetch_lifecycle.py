"""Stopping a query leaves nothing behind: no prefetcher thread on the driver, no prefetched block anywhere."""

from __future__ import annotations

import time

from harness.sink import wait_until_started

STOP_TIMEOUT_S = 30.0
STOP_ATTEMPTS = 12


def prefetcher_threads(spark, also_remover: bool = True) -> list[str]:
    """The source's own threads: its prefetcher's, and (started with its first commit) its block remover's."""
    threads = spark._jvm.java.lang.Thread.getAllStackTraces().keySet().toArray()
    names = ("kinesis-spark-prefetcher-", "kinesis-spark-block-remover-") if also_remover else "kinesis-spark-prefetcher-"
    return [t.getName() for t in threads if t.getName().startswith(names)]


def stream_blocks(spark) -> int:
    return spark._jvm.org.apache.spark.kinesisspark.BlockStoreBridge.streamBlockCount()


def test_stop_removes_the_prefetcher_and_its_blocks(spark, kinesis, stream, read_kinesis, sink):
    name = stream(2)
    kinesis.put_records(name, [(f"k{i}", f"rec-{i}".encode()) for i in range(400)])
    # A slow consumer: one small batch at a time, so the prefetcher holds blocks that are not yet committed.
    query = sink.start(read_kinesis(name, initialPosition="trim_horizon", maxRecordsPerTrigger="20",
                                    maxRecordsPerFetch="20"))
    wait_until_started(query)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while stream_blocks(spark) == 0:
        assert time.monotonic() < deadline, "the prefetcher never buffered a block"
        time.sleep(0.2)
    assert len(prefetcher_threads(spark, also_remover=False)) == 1

    query.stop()

    deadline = time.monotonic() + STOP_TIMEOUT_S
    while prefetcher_threads(spark) or stream_blocks(spark):
        assert time.monotonic() < deadline, (
            f"after stop: threads {prefetcher_threads(spark)}, {stream_blocks(spark)} blocks still stored"
        )
        time.sleep(0.2)


def test_stops_at_any_moment_of_a_round_leave_no_block(spark, kinesis, stream, read_kinesis, sink):
    """A stop may come while a round is being planned, submitted, run or recorded: none may leave a block behind.

    Found by CI: a round submitted just after the stop cancelled the running one went on storing blocks.
    """
    name = stream(2)
    kinesis.put_records(name, [(f"k{i}", f"rec-{i}".encode()) for i in range(2000)])
    for attempt in range(STOP_ATTEMPTS):
        query = sink.start(read_kinesis(name, initialPosition="trim_horizon", maxRecordsPerTrigger="20",
                                        maxRecordsPerFetch="10"))
        wait_until_started(query)
        # Stops spread over a round's phases: rounds here last tens to hundreds of milliseconds.
        time.sleep(0.05 + 0.13 * attempt)
        query.stop()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while prefetcher_threads(spark) or stream_blocks(spark):
            assert time.monotonic() < deadline, (
                f"stop {attempt}: threads {prefetcher_threads(spark)}, {stream_blocks(spark)} blocks still stored"
            )
            time.sleep(0.2)
