"""The connector's metrics in Spark's metrics system: a streaming query's source and sink metrics reach
Prometheus's format on the driver (``PrometheusServlet``), as they do every other sink of the metrics system, and
leave it when the query stops."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from harness.emulator import free_loopback_port
from harness.jobs import job_result, run_checked
from harness.spark import connector_jar

METRICS_JOB = Path(__file__).resolve().parent / "jobs" / "metrics_scrape.py"

RECORDS = 300


def gauge(lines: list[str], kind: str, name: str) -> float | None:
    """The value of ``metrics_<app>_driver_kinesis_<kind>_copy_<name>_Value``, if scraped."""
    pattern = re.compile(rf"^metrics_\S+_driver_kinesis_{kind}_copy_{name}_Value(\{{[^}}]*\}})? (\S+)$")
    for line in lines:
        match = pattern.match(line)
        if match:
            return float(match.group(2))
    return None


def test_a_running_query_s_lag_and_counts_are_scraped_from_prometheus(kinesis, stream, emulator):
    source, sink = stream(2), stream(1)
    kinesis.put_records(source, [(f"key-{i % 17}", f"record-{i}".encode()) for i in range(RECORDS)])
    scraped = job_result(run_checked(
        [sys.executable, str(METRICS_JOB), emulator.endpoint, source, sink, str(RECORDS), str(connector_jar()),
         str(free_loopback_port())],
        timeout=600,
    ))
    running = scraped["running"]

    # Scraped 2 s after the last of the records put before the start was copied: the query has processed every
    # record and its readers poll at the shards' tips, so it is not behind at all (as test_prefetch_engine's lag
    # after catching up).
    assert gauge(running, "source", "maxMsBehindLatest") == 0, running
    assert gauge(running, "source", "recordsRead") == RECORDS, running
    assert gauge(running, "source", "activeShards") == 2, running
    assert gauge(running, "sink", "recordsWritten") == RECORDS, running
    assert gauge(running, "sink", "throttledEntries") == 0, running
    # Stopped, the query's metrics are gone from the metrics system.
    assert gauge(scraped["stopped"], "source", "maxMsBehindLatest") is None, scraped["stopped"]
    assert gauge(scraped["stopped"], "sink", "recordsWritten") is None, scraped["stopped"]
