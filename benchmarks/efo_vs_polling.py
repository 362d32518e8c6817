"""Enhanced fan-out against polling: read throughput and end-to-end latency of the same data, on the local emulator.

For every shard count and every mode (polling with the connector's defaults, polling with the Databricks
low-latency settings minFetchPeriod=210ms and maxFetchDuration=200ms, and ``consumerMode=efo``):

(a) throughput: a query reads one pre-filled stream (the same stream for every mode) from trim_horizon into a
    counting foreachBatch sink; records/s from the query's start to the batch that completes the count; the
    best of --repeats reads, each with a fresh checkpoint (and, for EFO, a consumer of its own, deregistered
    on stop);
(b) latency: a producer puts timestamped records at a steady rate into a fresh stream while a query runs;
    foreachBatch computes now - put time for every record; p50 and p99.

The emulator path only, with no limits proxy in either mode (so both meet the same emulator). kinesis-mock pushes one
event per shard per second, so EFO latency here is bounded below by that tick, not by Kinesis's ~70 ms.

    .venv/bin/python benchmarks/efo_vs_polling.py            # 1 and 4 shards: about 3 minutes
    .venv/bin/python benchmarks/efo_vs_polling.py --quick    # 1 shard, less data: about 1.5 minutes

Prints a Markdown table and writes it to benchmarks/efo_results.md (--output).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
import uuid
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from read_throughput import (  # noqa: E402
    REPO,
    Row,
    fill,
    fmt,
    measure_latency,
    measure_throughput,
    warm_up,
)

from harness.emulator import KinesisEmulator  # noqa: E402
from harness.kinesis import Kinesis  # noqa: E402
from harness.spark import connector_jar, local_spark  # noqa: E402

MODES: dict[str, dict[str, str]] = {
    "polling": {},
    "polling low-latency": {"minFetchPeriod": "210ms", "maxFetchDuration": "200ms"},
    "efo": {"consumerMode": "efo", "requireConsumerDeregistration": "true"},
}


READING = [
    "- kinesis-mock pushes one event per shard per second, holding only records that arrived about a second "
    "before or earlier: a bare SDK subscriber sees records 1.0 to 2.0 s after they were put (p50 1.5 s). The EFO "
    "rows' latency is that plus the connector's own share (a prefetch round and a micro-batch, about 0.2 s); Kinesis "
    "itself pushes records within about 70 ms.",
    "- Throughput rows read a small pre-filled stream, so EFO's start dominates: registering the consumer, then the "
    "emulator's first event about 2 s after a subscription starts. Polling pays one GetShardIterator instead.",
    "- The emulator, Spark and the producer share 2 cores; repeated runs vary by tens of percent.",
]


def mode_options(mode: str) -> dict[str, str]:
    """The mode's options; an EFO query gets a consumer of its own, so no two reads share one."""
    options = dict(MODES[mode])
    if mode == "efo":
        options["consumerName"] = f"bench-{uuid.uuid4().hex[:8]}"
    return options


def table(rows: list[Row]) -> str:
    header = "| shards | mode | connector rec/s | MB/s | first batch s | latency p50 ms | p99 ms |"
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    for r in rows:
        cells = [
            str(r.shards),
            r.setting,
            fmt(r.records_s) + (" ⚠" if r.errors else ""),
            fmt(r.mb_s, 2),
            fmt(r.first_batch_s, 1),
            fmt(r.p50_ms),
            fmt(r.p99_ms),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def measure(spark, kinesis: Kinesis, endpoint: str, args, row: Row, stream: str, expected: int, work: Path) -> None:
    latency_stream = f"bench-efo-lat-{row.shards}-{uuid.uuid4().hex[:6]}"
    try:
        for _ in range(args.repeats):
            measure_throughput(
                spark, endpoint, stream, mode_options(row.setting), expected, args.record_size, work, row
            )
        kinesis.create_stream(latency_stream, row.shards)
        measure_latency(
            spark, kinesis, endpoint, latency_stream, mode_options(row.setting), args.record_size,
            args.latency_rate, args.latency_seconds, work, row,
        )
    except Exception as error:  # keep going: the table says what failed
        row.errors.append(f"{type(error).__name__}: {str(error).splitlines()[0][:300]}")
        traceback.print_exc()
    finally:
        kinesis.delete_stream(latency_stream)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shards", default=None, help="comma-separated shard counts (default 1,4)")
    parser.add_argument("--records-per-shard", type=int, default=None, help="pre-filled records per shard (2000)")
    parser.add_argument("--record-size", type=int, default=1024, help="bytes per record (1024)")
    parser.add_argument("--latency-rate", type=float, default=100.0, help="records/s put during latency (100)")
    parser.add_argument("--latency-seconds", type=float, default=None, help="seconds of producing (15)")
    parser.add_argument("--repeats", type=int, default=2, help="throughput reads per row, best kept (2)")
    parser.add_argument("--quick", action="store_true", help="1 shard, 500 records, 6 s of latency")
    parser.add_argument("--output", default=str(REPO / "benchmarks" / "efo_results.md"), help="Markdown output")
    args = parser.parse_args(argv)
    args.shards = [int(s) for s in (args.shards or ("1" if args.quick else "1,4")).split(",")]
    args.records_per_shard = args.records_per_shard or (500 if args.quick else 2000)
    args.latency_seconds = args.latency_seconds or (6.0 if args.quick else 15.0)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started_at = datetime.now(timezone.utc)
    clock = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="kinesis-efo-bench-"))
    jar = work / "kinesis-spark-connector.jar"
    shutil.copy(connector_jar(), jar)
    rows: list[Row] = []
    notes: list[str] = []
    with KinesisEmulator(log_path=work / "emulator.log") as emulator:
        kinesis = Kinesis(emulator.endpoint)
        spark = local_spark("kinesis-spark-efo-vs-polling", jar=jar)
        spark.sparkContext.setLogLevel("ERROR")
        try:
            warm_up(spark, kinesis, emulator.endpoint, args.record_size, work)
            for shards in args.shards:
                stream = f"bench-efo-{shards}-{uuid.uuid4().hex[:6]}"
                kinesis.create_stream(stream, shards)
                expected = shards * args.records_per_shard
                rate = fill(kinesis, stream, expected, args.record_size)
                notes.append(f"- {shards} shards: {expected:,} records filled at {rate:,.0f}/s.")
                for mode in MODES:
                    row = Row(shards, mode, "direct")
                    rows.append(row)
                    print(f"  {shards} shards, {mode} ...", flush=True)
                    measure(spark, kinesis, emulator.endpoint, args, row, stream, expected, work)
                    print(
                        f"    {fmt(row.records_s)} records/s, first batch {fmt(row.first_batch_s, 1)} s, latency "
                        f"p50 {fmt(row.p50_ms)} ms p99 {fmt(row.p99_ms)} ms{' ' + str(row.errors) if row.errors else ''}",
                        flush=True,
                    )
                kinesis.delete_stream(stream)
        finally:
            spark.stop()
            kinesis.close()

    errors = [f"- {r.shards} shards, {r.setting}: {e}" for r in rows for e in r.errors]
    text = "\n".join(
        [
            "# Enhanced fan-out against polling",
            "",
            f"Run {started_at:%Y-%m-%d %H:%M} UTC, {(time.monotonic() - clock) / 60:.1f} min, on {os.cpu_count()} "
            f"cores ({platform.machine()}, Python {platform.python_version()}); "
            f"`benchmarks/efo_vs_polling.py {' '.join(sys.argv[1:])}`.",
            f"Records of {args.record_size} bytes, {args.records_per_shard:,} per shard pre-filled (one stream read "
            f"by every mode); latency: {args.latency_rate:g} records/s for {args.latency_seconds:g} s into a fresh "
            "stream. Emulator: kinesis-local, directly (one EFO event per shard per second).",
            "",
            table(rows),
            "",
            "*connector rec/s* = the best of the reads from start() until the last record reached the sink; "
            "*first batch* = seconds from start() to the first non-empty batch (EFO: includes registering the "
            "consumer); *latency* = time foreachBatch saw a record minus the time it was put.",
            "",
            "Reading the numbers:",
            "",
            *READING,
            "",
            *notes,
            *(["", "Problems:", *errors] if errors else []),
        ]
    ) + "\n"
    print()
    print(text)
    Path(args.output).write_text(text)
    print(f"written to {args.output}")
    if errors:
        print(f"logs kept in {work}")
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
