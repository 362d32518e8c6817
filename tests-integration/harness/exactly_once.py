"""Exactly-once accounting: what a sink holds against what the stream holds, by (shard, sequence number,
sub-sequence number)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

from harness.kinesis import StoredRecord
from harness.sink import BatchSink, SinkRecord

Position = tuple[str, str, int | None]


@dataclass(frozen=True)
class Delivery:
    """The sink's committed rows compared with the stream's records."""

    stored: int
    delivered: int
    lost: list[Position]
    duplicated: dict[Position, int]
    unexpected: list[Position]

    def assert_exactly_once(self) -> None:
        assert (len(self.lost), len(self.duplicated), len(self.unexpected)) == (0, 0, 0), (
            f"{self.stored} records stored, {self.delivered} rows delivered: {len(self.lost)} lost "
            f"(e.g. {self.lost[:3]}), {len(self.duplicated)} duplicated (e.g. {list(self.duplicated.items())[:3]}), "
            f"{len(self.unexpected)} not in the stream (e.g. {self.unexpected[:3]})"
        )


def compare(delivered: list[SinkRecord], stored: list[StoredRecord]) -> Delivery:
    """Plain (not aggregated) records: each stored record must be delivered once, with its key and data."""
    truth = {(r.shard_id, r.sequence_number, None): r for r in stored}
    counts = Counter((r.shard_id, r.sequence_number, r.sub_sequence_number) for r in delivered)
    for row in delivered:
        expected = truth.get((row.shard_id, row.sequence_number, row.sub_sequence_number))
        if expected is not None:
            assert (row.partition_key, row.data) == (expected.partition_key, expected.data), (
                f"{row.shard_id}/{row.sequence_number}: delivered {row.partition_key!r}/{row.data[:40]!r}, "
                f"stored {expected.partition_key!r}/{expected.data[:40]!r}"
            )
    return Delivery(
        stored=len(truth),
        delivered=len(delivered),
        lost=sorted(p for p in truth if p not in counts),
        duplicated={p: n for p, n in counts.items() if n > 1},
        unexpected=sorted(p for p in counts if p not in truth),
    )


def wait_until_delivered(
    sink: BatchSink, expected: int, timeout_s: float = 240.0, settle_s: float = 5.0
) -> list[SinkRecord]:
    """Poll the sink until it holds at least ``expected`` rows and nothing more arrives for ``settle_s``."""
    deadline = time.monotonic() + timeout_s
    rows: list[SinkRecord] = []
    stable_since = time.monotonic()
    while time.monotonic() < deadline:
        latest = sink.records()
        if len(latest) != len(rows):
            rows, stable_since = latest, time.monotonic()
        elif len(rows) >= expected and time.monotonic() - stable_since >= settle_s:
            return rows
        time.sleep(2)
    return rows  # the comparison that follows says what is missing
