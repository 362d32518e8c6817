"""What the reliability tests (``test_reliability*.py``) share: the report table, the source options of a
:class:`harness.cluster.ClusterJob`, and the end of a test (drain, stop, compare with the stream).

Each test adds a row with :func:`record`; ``conftest.py`` writes the rows to :data:`REPORT` when the session ends,
the table the README's reliability section shows.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from pyspark.sql import SparkSession

from harness.cluster import ClusterJob
from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY
from harness.exactly_once import Delivery, compare, wait_until_delivered
from harness.kinesis import Kinesis, PutResult
from harness.producer import KeyedProducer
from harness.sink import BatchSink, SinkRecord

REPORT = Path(__file__).resolve().parents[2] / "target" / "test-reports" / "reliability.md"
HEADER = "| fault | what happened | lost | duplicated | recovery |\n| --- | --- | --- | --- | --- |\n"
ROWS: list[str] = []


def record(fault: str, happened: str, delivery: Delivery, recovery_s: float | None) -> None:
    """One row of the report: ``recovery_s`` is the time from the fault until records were delivered again."""
    recovery = "n/a" if recovery_s is None else f"{recovery_s:.1f} s"
    ROWS.append(f"| {fault} | {happened} | {len(delivery.lost)} | {len(delivery.duplicated)} | {recovery} |\n")


def write_report() -> None:
    """Add the rows recorded in this process to the report (nothing if no reliability test ran). Processes of one
    run (dev/test.sh's two lanes and its serial phase) add to the same file, under a lock; dev/test.sh removes it
    before the run."""
    if ROWS:
        REPORT.parent.mkdir(parents=True, exist_ok=True)
        with REPORT.open("a") as report:
            fcntl.flock(report, fcntl.LOCK_EX)
            report.seek(0, os.SEEK_END)  # another process may have added rows while this one waited
            report.write(("" if report.tell() else HEADER) + "".join(ROWS))
        print(f"\n{REPORT}:\n{HEADER}{''.join(ROWS)}")


def source_options(endpoint: str, stream: str, **extra: str) -> dict[str, str]:
    """The source's options for the emulator (or a proxy in front of it), from the oldest record; rows name KPL
    user records by their index (``subSequenceNumber``), which exactly-once accounting needs."""
    return {
        "streamName": stream,
        "region": REGION,
        "endpoint": endpoint,
        "awsAccessKey": ACCESS_KEY,
        "awsSecretKey": SECRET_KEY,
        "initialPosition": "trim_horizon",
        "includeSubSequenceNumber": "true",
        **extra,
    }


def delivered_after(job: ClusterJob, since: float, timeout_s: float = 240.0) -> float:
    """Seconds from ``since`` until the first batch that started after it and read records."""
    event = job.wait_event(
        lambda e: e["event"] == "progress" and e["progress"]["numInputRows"] > 0 and e["time"] > since,
        timeout_s,
    )
    return float(event["time"]) - since


def finish(
    job: ClusterJob,
    producer: KeyedProducer,
    kinesis: Kinesis,
    stream: str,
    spark: SparkSession,
    root: Path,
    also_put: int = 0,
) -> tuple[list[SinkRecord], list[PutResult], Delivery]:
    """Stop producing, let the job drain the stream, stop it; the sink's rows, read after the stop (a duplicate
    committed late is among them), against the stream's records (the producer's and ``also_put`` more that the test
    put itself). Every batch that ran again over its own output must have written the same records as before."""
    puts = producer.stop()
    stored = kinesis.stored_records(stream)
    expected = len(puts) + also_put
    assert len(stored) == expected, f"the stream holds {len(stored)} records, {expected} were put"
    sink = BatchSink(spark, root)
    wait_until_delivered(sink, len(stored))
    stopped = job.stop()
    assert stopped is not None, f"the job did not stop cleanly:\n{job.stderr_tail()}"
    assert stopped["blocks"] == 0, f"{stopped['blocks']} prefetched blocks left in the cluster after the stop"
    assert "Failed to stop streaming source" not in job.stderr_tail(400)
    rows = sink.records()
    assert_replays_identical(sink, rows)
    return rows, puts, compare(rows, stored)


def positions(rows: list[SinkRecord]) -> list[tuple[str, str, int | None]]:
    return sorted((r.shard_id, r.sequence_number, r.sub_sequence_number) for r in rows)


def assert_replays_identical(sink: BatchSink, rows: list[SinkRecord]) -> dict[int, list[list[SinkRecord]]]:
    """Each batch's earlier attempts (see :meth:`BatchSink.replays`) held the records its final output holds;
    returns the replays."""
    replays = sink.replays()
    for batch_id, attempts in replays.items():
        final = positions([r for r in rows if r.batch_id == batch_id])
        for attempt in attempts:
            assert positions(attempt) == final, (
                f"batch {batch_id} ran again with other records: first {len(attempt)} rows "
                f"({positions(attempt)[:2]}...), then {len(final)} ({final[:2]}...)"
            )
    return replays
