"""Proof that the faults a test names did happen, from the limits proxy's counters (not from log lines).

A fault test passes without its fault if the fault never fired, or fired only when the query had nothing left to
do. :func:`assert_faults_fired` checks, for every (operation, error code) of a ``faults`` mapping, that the proxy
injected it at least ``floor`` times and at least once while the query was delivering: after ``since`` (the query's
start) and before ``until`` (when the batch holding the last expected row was committed, :func:`delivered_at`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from harness.limits_proxy import LimitsProxy
from harness.sink import BatchSink, SinkRecord

# How often a named fault must have fired.
FLOOR = 3


def delivered_at(sink: BatchSink, records: Iterable[SinkRecord]) -> float:
    """The epoch time at which the last batch holding any of ``records`` was committed (its ``_SUCCESS`` file,
    which Spark writes last)."""
    last = max(r.batch_id for r in records)
    return (sink.batch_dir(last) / "_SUCCESS").stat().st_mtime


def assert_faults_fired(
    account: LimitsProxy,
    faults: Mapping[str, Mapping[str, Any]],
    since: float,
    until: float,
    floor: int = FLOOR,
    stats: dict | None = None,
) -> dict[str, dict[str, int]]:
    """Every fault of ``faults`` (operation -> error code -> share or schedule) fired ``floor`` times or more, and
    once or more between ``since`` and ``until`` (epoch seconds); returns the counts by operation and code."""
    stats = stats if stats is not None else account.stats()
    counts: dict[str, dict[str, int]] = {}
    for op, codes in faults.items():
        fired = account.operation_stats(op, stats)
        counts[op] = dict(fired["faults_by_code"])
        for code in codes:
            times = fired["fault_times"].get(code, [])
            assert fired["faults_by_code"].get(code, 0) == len(times)
            assert len(times) >= floor, f"{code} on {op} fired {len(times)} times, not {floor}: {fired['faults_by_code']}"
            during = [t for t in times if since <= t <= until]
            assert during, (
                f"{code} on {op} never fired while the query was delivering ({since:.3f} to {until:.3f}): at {times}"
            )
    return counts
