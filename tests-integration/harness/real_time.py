"""Collecting what a real-time query (a real-time trigger, Spark 4.1+) delivers.

Spark admits only the console, foreach and Kafka sinks in real-time mode (``foreachBatch`` and ``memory`` are
refused), so rows are collected through a ForeachWriter: each task attempt appends every row, as it processes it, to
a file of its own (one JSON line per row, flushed at once), with the batch (Spark's epoch) and the time it was
processed. A task ended by a stop may have processed rows whose batch never committed: the restarted query delivers
them again, which is what real-time mode's at-least-once promise allows, and what :meth:`RealTimeSink.replayed` tells
apart.
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime
from dataclasses import dataclass
from pathlib import Path

from harness.sink import SinkRecord
from pyspark.sql import DataFrame
from pyspark.sql.streaming import StreamingQuery

BATCH_DURATION = "5 seconds"  # Spark's least (spark.sql.streaming.realTimeMode.minBatchDuration)


class RowFiles:
    """The ForeachWriter (pickled to the executors): one file per task attempt under ``root``."""

    def __init__(self, root: str) -> None:
        self.root = root

    def open(self, partition_id: int, epoch_id: int) -> bool:
        self.epoch = epoch_id
        self.file = open(f"{self.root}/e{epoch_id}-p{partition_id}-{uuid.uuid4().hex}.jsonl", "a")  # noqa: SIM115
        return True

    def process(self, row) -> None:  # noqa: ANN001 (a pyspark Row)
        self.file.write(
            json.dumps({
                "batch": self.epoch,
                "key": row.partitionKey,
                "data": bytes(row.data).decode("utf-8", "replace"),
                "stream": row.stream,
                "shard": row.shardId,
                "seq": row.sequenceNumber,
                "arrival": row.approximateArrivalTimestamp.timestamp(),
                "seen": time.time(),
            })
            + "\n"
        )
        self.file.flush()

    def close(self, error: BaseException | None) -> None:
        self.file.close()


@dataclass(frozen=True)
class RealTimeRecord:
    record: SinkRecord
    seen: float  # epoch seconds the writer processed it


class RealTimeSink:
    """The rows files and checkpoint of one real-time query under ``root``."""

    def __init__(self, root: Path) -> None:
        self.out = root / "rows"
        self.out.mkdir(parents=True, exist_ok=True)
        self.checkpoint = root / "checkpoint"

    def start(self, source: DataFrame, duration: str = BATCH_DURATION) -> StreamingQuery:
        """Start (or, with the same checkpoint, resume) the real-time query that writes ``source`` here."""
        return (
            source.writeStream.foreach(RowFiles(str(self.out)))
            .outputMode("update")
            .option("checkpointLocation", str(self.checkpoint))
            .trigger(realTime=duration)
            .start()
        )

    def rows(self) -> list[RealTimeRecord]:
        """Every row processed so far, in the order processed (a row cut off by a stop is left out)."""
        rows = []
        for path in self.out.glob("*.jsonl"):
            for line in path.read_text().splitlines():
                try:
                    r = json.loads(line)
                except json.JSONDecodeError:
                    continue  # the last line of a file whose task was stopped while writing it
                record = SinkRecord(r["batch"], r["key"], r["data"].encode(), r["stream"], r["shard"], r["seq"],
                                    r["arrival"])
                rows.append(RealTimeRecord(record, r["seen"]))
        return sorted(rows, key=lambda r: (r.record.batch_id, r.seen))

    def wait_for(self, query: StreamingQuery, expected: set[tuple[str, str]], timeout_s: float = 120.0) -> None:
        """Until every (shard, sequence number) of ``expected`` has been processed; fails on the query's error."""
        deadline = time.monotonic() + timeout_s
        while True:
            error = query.exception()
            assert error is None, f"the real-time query failed: {error}"
            missing = expected - {(r.record.shard_id, r.record.sequence_number) for r in self.rows()}
            if not missing:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(missing)} of {len(expected)} records not delivered in {timeout_s:.0f} s, "
                                     f"e.g. {sorted(missing)[:3]}")
            time.sleep(0.5)

    @staticmethod
    def replayed(rows: list[RealTimeRecord]) -> dict[tuple[str, str], list[int]]:
        """(shard, sequence number) -> the batches of a record delivered more than once."""
        batches: dict[tuple[str, str], list[int]] = {}
        for r in rows:
            batches.setdefault((r.record.shard_id, r.record.sequence_number), []).append(r.record.batch_id)
        return {k: v for k, v in batches.items() if len(v) > 1}


def batch_at(reports: list[dict], at: float) -> dict:
    """The progress report of the batch that was running at epoch second ``at`` (the last to start by then)."""

    def start(report: dict) -> float:
        return datetime.fromisoformat(report["timestamp"].replace("Z", "+00:00")).timestamp()

    return max((r for r in reports if start(r) <= at), key=lambda r: r["batchId"])
