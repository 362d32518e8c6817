"""Steady-state control-plane calls of a running polling query, per minute, over 1, 30 and 300 shards (and over 30
one-shard streams), counted by the Kinesis limits proxy (tests-integration/harness/limits_proxy.py) in front of
ferrokinesis (dev/ferrokinesis: it holds hundreds of shards where kinesis-local slows down).

Why it matters: Kinesis's control plane has small quotas, several of them per account (DescribeStreamSummary 20
calls/s, DescribeStream 10/s, ListStreamConsumers 5/s per stream; ListShards 1,000/s per stream: the Developer
Guide's "Quotas and limits"). Every call a query makes in steady state is taken from what the account's other
applications can use.

For each case a stream (or streams) is created and given a few records per shard; a query with the connector's
default options (shardFetchInterval 1s) reads them into a counting sink; once it has, the proxy's counters are
reset and read again ``--window`` seconds later. Data-plane calls (GetRecords, GetShardIterator) are shown for
scale. The Spark session is the harness's local[2] one; JVM clients talk JSON to ferrokinesis (its CBOR timestamps
are off by a factor of 1,000).

    .venv/bin/python benchmarks/control_plane.py              # 60 s per case: about 6 minutes
    .venv/bin/python benchmarks/control_plane.py --window 20  # quicker

Prints a Markdown table and writes it to benchmarks/control_plane_results.md (--output).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests-integration"))

from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY  # noqa: E402
from harness.ferrokinesis import JVM_OPTIONS, FerroKinesis  # noqa: E402
from harness.kinesis import Kinesis  # noqa: E402
from harness.limits_proxy import LimitsProxy  # noqa: E402
from harness.spark import connector_jar, local_spark  # noqa: E402

# (streams, shards per stream)
CASES = [(1, 1), (1, 30), (1, 300), (30, 1)]
RECORDS_PER_SHARD = 3
CONTROL_PLANE = (
    "ListShards",
    "DescribeStreamSummary",
    "DescribeStream",
    "ListStreams",
    "DescribeStreamConsumer",
    "ListStreamConsumers",
    "RegisterStreamConsumer",
)
DATA_PLANE = ("GetShardIterator", "GetRecords")


@dataclass
class Row:
    streams: int
    shards: int
    window_s: float
    calls: dict[str, int]
    shards_listed: int
    filtered_listings: int

    def per_minute(self, op: str) -> float:
        return self.calls.get(op, 0) * 60.0 / self.window_s

    @property
    def other_ops(self) -> dict[str, int]:
        return {op: n for op, n in self.calls.items() if op not in CONTROL_PLANE + DATA_PLANE and n}


def keys_per_shard(kinesis: Kinesis, stream: str, per_shard: int) -> list[str]:
    """Partition keys landing ``per_shard`` times on every shard of the stream (MD5 against hash key ranges)."""

    ranges = sorted(
        (int(s["HashKeyRange"]["StartingHashKey"]), int(s["HashKeyRange"]["EndingHashKey"]))
        for s in kinesis.shards(stream)
    )
    wanted = {r: per_shard for r in ranges}
    keys: list[str] = []
    i = 0
    while any(wanted.values()):
        key = f"k{i}"
        i += 1
        point = int.from_bytes(hashlib.md5(key.encode()).digest(), "big")
        for r in ranges:
            if r[0] <= point <= r[1] and wanted[r]:
                wanted[r] -= 1
                keys.append(key)
                break
    return keys


def run_case(
    spark, kinesis: Kinesis, proxy: LimitsProxy, streams: int, shards: int, args: argparse.Namespace, work: Path
) -> Row:
    window_s = args.window
    names = [f"cp-{streams}x{shards}-{uuid.uuid4().hex[:6]}-{i}" for i in range(streams)]
    expected = 0
    for name in names:
        kinesis.create_stream(name, shards)
        keys = keys_per_shard(kinesis, name, RECORDS_PER_SHARD)
        kinesis.put_records(name, [(k, b"x" * 100) for k in keys])
        expected += len(keys)

    seen = [0]
    lock = threading.Lock()

    def count(batch, _batch_id: int) -> None:
        n = batch.count()
        with lock:
            seen[0] += n

    reader = (
        spark.readStream.format("kinesis")
        .option("streamName", ",".join(names))
        .option("region", REGION)
        .option("endpoint", proxy.endpoint)
        .option("awsAccessKey", ACCESS_KEY)
        .option("awsSecretKey", SECRET_KEY)
        .option("initialPosition", "trim_horizon")
    )
    for key, value in args.option:
        reader = reader.option(key, value)
    query = (
        reader.load()
        .writeStream.foreachBatch(count)
        .option("checkpointLocation", str(work / f"checkpoint-{names[0]}"))
        .start()
    )
    try:
        deadline = time.monotonic() + 300
        while seen[0] < expected:
            if query.exception() is not None:
                raise RuntimeError(f"the query failed: {query.exception()}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{seen[0]} of {expected} records read in 300 s")
            time.sleep(0.5)
        time.sleep(5)  # the first listings and iterators are behind it
        proxy.reset()
        started = time.monotonic()
        time.sleep(window_s)
        stats = proxy.stats()
        elapsed = time.monotonic() - started
        if query.exception() is not None:
            raise RuntimeError(f"the query failed: {query.exception()}")
    finally:
        query.stop()
    for name in names:
        kinesis.delete_stream(name)
    calls = {op: int(total["calls"]) for op, total in stats["operations"].items()}
    listing = stats["operations"].get("ListShards", {})
    return Row(streams, shards, elapsed, calls, listing.get("shards_listed", 0), listing.get("filtered_calls", 0))


def table(rows: list[Row]) -> str:
    head = (
        "| streams x shards | ListShards (of them filtered) | shards listed | DescribeStreamSummary "
        "| other control-plane calls | GetShardIterator | GetRecords |\n|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for r in rows:
        others = sum(r.per_minute(op) for op in CONTROL_PLANE[2:])
        lines.append(
            f"| {r.streams} x {r.shards} | {r.per_minute('ListShards'):,.0f} ({r.filtered_listings * 60 / r.window_s:,.0f}) "
            f"| {r.shards_listed * 60 / r.window_s:,.0f} | {r.per_minute('DescribeStreamSummary'):,.0f} "
            f"| {others:,.0f} | {r.per_minute('GetShardIterator'):,.0f} | {r.per_minute('GetRecords'):,.0f} |"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--window", type=float, default=60.0, help="seconds counted per case (default 60)")
    parser.add_argument("--output", default=str(REPO / "benchmarks" / "control_plane_results.md"))
    parser.add_argument("--jar", type=Path, help="the connector jar (default: the one the build made)")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        type=lambda text: tuple(text.split("=", 1)),
        metavar="KEY=VALUE",
        help="a source option on top of the defaults (repeatable)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started_at = datetime.now(timezone.utc)
    work = Path(tempfile.mkdtemp(prefix="kinesis-control-plane-"))
    jar = work / "kinesis-spark-connector.jar"
    shutil.copy(args.jar or connector_jar(), jar)  # the build may replace the jar while this runs
    rows: list[Row] = []
    with (
        FerroKinesis(log_path=work / "ferrokinesis.log") as emulator,
        LimitsProxy(emulator.endpoint, log_path=work / "proxy.log") as proxy,
    ):
        kinesis = Kinesis(emulator.endpoint)
        spark = local_spark(
            "kinesis-spark-control-plane", jar=jar, conf={"spark.driver.extraJavaOptions": JVM_OPTIONS}
        )
        spark.sparkContext.setLogLevel("ERROR")
        try:
            for streams, shards in CASES:
                print(f"  {streams} stream(s) x {shards} shard(s) ...", flush=True)
                row = run_case(spark, kinesis, proxy, streams, shards, args, work)
                rows.append(row)
                others = f"; also {row.other_ops}" if row.other_ops else ""
                print(f"    calls in {row.window_s:.0f} s: {row.calls}{others}", flush=True)
        finally:
            spark.stop()
            kinesis.close()
    text = (
        f"# Steady-state control-plane calls per minute\n\n"
        f"`.venv/bin/python benchmarks/control_plane.py --window {args.window:g}"
        f"{''.join(f' --option {k}={v}' for k, v in args.option)}`, {started_at:%Y-%m-%d %H:%M} UTC, "
        f"{platform.machine()}, {os.cpu_count()} cores. A polling query with the default options "
        f"(`shardFetchInterval` 1s, `maxShardsPerDescribe` 1000) over the streams, after it read what they held; "
        f"calls per minute through the limits proxy over {args.window:g} s, in front of ferrokinesis.\n\n"
        f"{table(rows)}\n"
    )
    print()
    print(text)
    Path(args.output).write_text(text)
    print(f"written to {args.output}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
