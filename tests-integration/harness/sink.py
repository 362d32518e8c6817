"""A replay-safe sink for checking exactly-once delivery (one parquet directory per micro-batch), and a log of
a query's progress reports.

Each micro-batch is written to ``out/batch=<batchId>`` with mode overwrite, so a batch that Spark runs again
after a failure or a restart replaces its own earlier output instead of adding to it. Duplicates in the sink
therefore mean the source returned a record in two different batches, which is what the tests look for. The
output a replay replaces is kept under ``attempts/`` (see :meth:`BatchSink.replays`): a sink that skips a batch id it
has written already (Delta's ``txnVersion``) is exactly-once only if the replay holds the same records.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

DEFAULT_TIMEOUT_S = 180.0
START_TIMEOUT_S = 120.0
# After the expected count is reached, watch this long for rows that should not be there (duplicates, or
# records from before the requested start position arriving in a later batch).
DEFAULT_SETTLE_S = 3.0
POLL_INTERVAL_S = 1.0


@dataclass(frozen=True)
class SinkRecord:
    """One row of the sink, with the batch that wrote it and the arrival time as epoch seconds."""

    batch_id: int
    partition_key: str
    data: bytes
    stream: str
    shard_id: str
    sequence_number: str
    arrival: float
    # The user record's index in its KPL aggregate; None for a record that was not aggregated.
    sub_sequence_number: int | None = None


class BatchSink:
    """Output and checkpoint directories of one streaming query under ``root``."""

    def __init__(self, spark: SparkSession, root: Path) -> None:
        self.spark = spark
        self.out = root / "out"
        self.attempts = root / "attempts"
        self.checkpoint = root / "checkpoint"

    def start(
        self, source: DataFrame, trigger: dict | None = None, batch_delay_s: float = 0.0
    ) -> StreamingQuery:
        """Start (or, with the same checkpoint, resume) the query that writes ``source`` into this sink.

        ``trigger`` is passed to ``DataStreamWriter.trigger`` (e.g. ``{"availableNow": True}``); the default
        is Spark's (a micro-batch as soon as the previous one ends). ``batch_delay_s`` makes a slow consumer:
        each batch sleeps that long after writing its output.
        """
        out, attempts = self.out, self.attempts

        def write_batch(batch: DataFrame, batch_id: int) -> None:
            target = out / f"batch={batch_id}"
            if (target / "_SUCCESS").is_file():  # a replay: keep what it replaces
                kept = attempts / str(time.time_ns())
                kept.mkdir(parents=True)
                target.rename(kept / target.name)
            batch.write.mode("overwrite").parquet(str(target))
            if batch_delay_s > 0:
                time.sleep(batch_delay_s)

        writer = source.writeStream.foreachBatch(write_batch)
        writer = writer.option("checkpointLocation", str(self.checkpoint))
        if trigger:
            writer = writer.trigger(**trigger)
        return writer.start()

    def batch_dir(self, batch_id: int) -> Path:
        """Where micro-batch ``batch_id`` is written."""
        return self.out / f"batch={batch_id}"

    def completed_batches(self) -> list[int]:
        """Ids of the batches whose write has committed (Spark writes ``_SUCCESS`` last)."""
        if not self.out.is_dir():
            return []
        return sorted(
            int(path.name.removeprefix("batch="))
            for path in self.out.glob("batch=*")
            if (path / "_SUCCESS").is_file()
        )

    def records(self, batch_ids: list[int] | None = None) -> list[SinkRecord]:
        """Every row of the given (default: all completed) batches."""
        batch_ids = self.completed_batches() if batch_ids is None else batch_ids
        return self._read(self.out, [self.batch_dir(b) for b in batch_ids])

    def replays(self) -> dict[int, list[list[SinkRecord]]]:
        """Per batch that ran again over its own committed output: the rows of each earlier attempt, oldest first."""
        earlier: dict[int, list[list[SinkRecord]]] = {}
        for kept in sorted(self.attempts.iterdir(), key=lambda p: int(p.name)) if self.attempts.is_dir() else []:
            for batch in kept.glob("batch=*"):
                earlier.setdefault(int(batch.name.removeprefix("batch=")), []).append(self._read(kept, [batch]))
        return earlier

    def _read(self, base: Path, batches: list[Path]) -> list[SinkRecord]:
        if not batches:
            return []
        stored = self.spark.read.option("basePath", str(base)).parquet(*(str(b) for b in batches))
        # Reads name a KPL user record by its index only with includeSubSequenceNumber; otherwise there is none.
        sub_sequence = F.col("subSequenceNumber") if "subSequenceNumber" in stored.columns else F.lit(None).cast("long")
        rows = (
            stored.select(
                "batch",
                "partitionKey",
                "data",
                "stream",
                "shardId",
                "sequenceNumber",
                F.unix_micros("approximateArrivalTimestamp").alias("arrivalMicros"),
                sub_sequence.alias("subSequenceNumber"),
            )
            .collect()
        )
        return [
            SinkRecord(
                batch_id=row.batch,
                partition_key=row.partitionKey,
                data=bytes(row.data),
                stream=row.stream,
                shard_id=row.shardId,
                sequence_number=row.sequenceNumber,
                arrival=row.arrivalMicros / 1e6,
                sub_sequence_number=row.subSequenceNumber,
            )
            for row in rows
        ]

    def wait_for_rows(
        self,
        query: StreamingQuery,
        expected: int,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        settle_s: float = DEFAULT_SETTLE_S,
        on_poll: Callable[[], None] | None = None,
    ) -> list[SinkRecord]:
        """Poll until the sink holds exactly ``expected`` rows and no more arrive for ``settle_s``.

        Fails at once when the query dies or the sink holds more rows than expected, and after ``timeout_s``
        with what did arrive, so a failure says whether data was missing, duplicated or the query was stuck.
        ``on_poll`` runs at every poll (e.g. :meth:`ProgressLog.poll`, to keep every progress report).
        """
        deadline = time.monotonic() + timeout_s
        reached_at: float | None = None
        while True:
            if on_poll is not None:
                on_poll()
            if query.exception() is not None:
                raise AssertionError(f"query failed while waiting for {expected} rows: {query.exception()}")
            if not query.isActive:
                raise AssertionError(
                    f"query stopped while waiting for {expected} rows; {self.describe(query)}"
                )
            try:
                records = self.records()
            except Exception:  # a batch directory being replaced by a replayed batch; read again next round
                records = None
            if records is not None:
                if len(records) > expected:
                    raise AssertionError(
                        f"expected {expected} rows, the sink holds more; {self.describe(query)}"
                    )
                if len(records) == expected:
                    reached_at = reached_at or time.monotonic()
                    if time.monotonic() - reached_at >= settle_s:
                        return records
                else:
                    reached_at = None
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out after {timeout_s:.0f} s waiting for {expected} rows; {self.describe(query)}"
                )
            time.sleep(POLL_INTERVAL_S)

    def describe(self, query: StreamingQuery) -> str:
        """Rows per batch in the sink and the query's status and last progress, for failure messages."""
        counts = {}
        for batch_id in self.completed_batches():
            try:
                counts[batch_id] = self.spark.read.parquet(str(self.batch_dir(batch_id))).count()
            except Exception as error:
                counts[batch_id] = f"unreadable: {error}"
        total = sum(c for c in counts.values() if isinstance(c, int))
        progress = query.lastProgress
        progress_text = json.dumps(progress, indent=1, default=str)[:3000] if progress else "none"
        return (
            f"sink holds {total} rows, per batch {counts}; query status {query.status}; "
            f"last progress: {progress_text}"
        )


def wait_until_started(query: StreamingQuery, timeout_s: float = START_TIMEOUT_S) -> None:
    """Wait for the query's first progress report, i.e. until its first trigger has fixed its start offsets.

    Records put after this returns arrive after the query's start, which is what ``latest`` is defined by.
    """
    deadline = time.monotonic() + timeout_s
    while query.lastProgress is None:
        if query.exception() is not None:
            raise AssertionError(f"query failed before its first progress report: {query.exception()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no progress report within {timeout_s:.0f} s; query status {query.status}")
        time.sleep(0.2)


class ProgressLog:
    """Every progress report of one query, kept as they are polled.

    ``query.recentProgress`` holds only the latest reports (``spark.sql.streaming.numRecentProgressUpdates``);
    polling it often enough (e.g. as ``wait_for_rows(..., on_poll=log.poll)``) keeps all of them, in order.
    """

    def __init__(self, query: StreamingQuery) -> None:
        self.query = query
        self._reports: dict[tuple[int, str], dict] = {}

    def poll(self) -> list[dict]:
        """Adds the query's recent reports to the log; returns the whole log."""
        for report in self.query.recentProgress:
            self._reports.setdefault((report["batchId"], report["timestamp"]), report)
        return self.reports

    @property
    def reports(self) -> list[dict]:
        """The reports seen so far, oldest first."""
        return [self._reports[key] for key in sorted(self._reports, key=lambda k: (k[1], k[0]))]

    def source_metrics(self, source: int = 0, with_data: bool = False) -> list[dict[str, str]]:
        """The ``metrics`` of one source in each report (only reports that read rows, with ``with_data``)."""
        return [
            dict(report["sources"][source]["metrics"] or {})
            for report in self.reports
            if report["sources"] and (not with_data or report["numInputRows"] > 0)
        ]

    def metric(self, name: str, source: int = 0, with_data: bool = False) -> list[float]:
        """One source metric over time, as numbers, from the reports that have it."""
        return [
            float(metrics[name])
            for metrics in self.source_metrics(source, with_data)
            if metrics.get(name) is not None
        ]


def wait_for_failure(query: StreamingQuery, timeout_s: float = START_TIMEOUT_S) -> str:
    """Wait until the query fails; returns its error message (fails the test if it keeps running or stops
    without an error)."""
    deadline = time.monotonic() + timeout_s
    while query.isActive:
        if time.monotonic() > deadline:
            query.stop()
            raise AssertionError(f"the query was expected to fail but still ran after {timeout_s:.0f} s")
        time.sleep(0.5)
    error = query.exception()
    assert error is not None, "the query stopped without an error; it was expected to fail"
    return str(error)
