"""End-to-end tests of the prefetch engine: per-shard rate limits, throttling, the buffer bound,
Trigger.AvailableNow, source metrics, read limits and the checks of the tuning options.

Rates are checked with the counters of the limits proxy (harness.limits_proxy), which sees every GetRecords
call the connector makes and enforces Kinesis's per-shard quotas, never with timings measured here. Every test
puts its own records and compares what the query delivered with what Kinesis acknowledged, exactly.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter, defaultdict

import pytest
from harness.kinesis import PutResult
from harness.limits_proxy import MIB
from harness.producer import KeyedProducer
from harness.sink import BatchSink, ProgressLog, SinkRecord, wait_until_started
from test_polling_source import assert_delivered_exactly, assert_load_fails, numbered

SHARD_0 = "shardId-000000000000"
SHARD_1 = "shardId-000000000001"
RECORD_BYTES = 1000  # "about 1 KB" records
AVAILABLE_NOW_TIMEOUT_S = 120
# How long after the query's start the driver fixes Trigger.AvailableNow's target, at most (query start-up).
TARGET_MARGIN_S = 10.0
# Spark reports progress after every batch and, when idle, every 10 s (noDataProgressEventInterval).
METRIC_WAIT_S = 30.0
THROTTLE_WAIT_S = 60.0
# What the connector counts for one buffered record beyond its data (partition key, sequence number, framing):
# a generous allowance, checked against the metrics in the test that relies on it.
RECORD_OVERHEAD_BYTES = 256
SOURCE_METRICS = (
    "avgMsBehindLatest",
    "maxMsBehindLatest",
    "minMsBehindLatest",
    "activeShards",
    "bufferedRecords",
    "bufferedBytes",
    "throttlingEvents",
    "fetchRounds",
    "avgFetchLatencyMs",
    "outOfRangeSubRecords",
    "corruptAggregates",
    "lastRoundBlocks",
    "blocksStored",
    "lastRoundMs",
    "driverLatestOffsetMs",
    "driverPlanInputPartitionsMs",
    "driverLatestOffsetCpuMs",
    "driverPlanInputPartitionsCpuMs",
    "offsetBytes",
)


def read_all_through_proxy(sink: BatchSink, source, puts: list[PutResult], name: str, limits) -> dict:
    """Runs ``source`` into ``sink`` until every put record arrived exactly once, stops the query, and returns
    the proxy's counters (read them per shard with ``limits.shard_stats(..., stats)``)."""
    query = sink.start(source)
    records = sink.wait_for_rows(query, len(puts))
    query.stop()
    assert_delivered_exactly(records, puts, name)
    return limits.stats()


def sized(count: int, start: int = 0, prefix: str = "rec", keys: int = 50, size: int = RECORD_BYTES):
    """``count`` records of exactly ``size`` bytes, distinct data ``<prefix>-<i>:...`` over ``keys`` keys."""
    return [
        (f"k{i % keys}", f"{prefix}-{i}:".encode().ljust(size, b"."))
        for i in range(start, start + count)
    ]


def per_shard(puts: list[PutResult]) -> Counter[str]:
    """Records put per shard."""
    return Counter(p.shard_id for p in puts)


def rows_per_batch(records: list[SinkRecord]) -> dict[int, list[SinkRecord]]:
    """The sink's rows by micro-batch."""
    batches: dict[int, list] = defaultdict(list)
    for record in records:
        batches[record.batch_id].append(record)
    return dict(batches)


# ---- 1. per-shard limits, through a proxy that enforces Kinesis's


@pytest.mark.serial
@pytest.mark.parametrize(
    "options",
    [{}, {"minFetchPeriod": "200ms", "maxRecordsPerFetch": "100"}],
    ids=["defaults", "minFetchPeriod-200ms"],
)
def test_get_records_stay_within_five_calls_per_second_per_shard(
    kinesis, stream, read_kinesis, sink, proxy, options
):
    name = stream(2)
    puts = kinesis.put_records(name, numbered(3000))
    counts = per_shard(puts)
    assert set(counts) == {SHARD_0, SHARD_1}
    period_ms = int(options.get("minFetchPeriod", "400ms").removesuffix("ms"))
    limits = proxy()

    source = read_kinesis(name, endpoint=limits.endpoint, initialPosition="trim_horizon", **options)
    stats = read_all_through_proxy(sink, source, puts, name, limits)
    for shard in (SHARD_0, SHARD_1):
        reads = limits.shard_stats(name, shard, "GetRecords", stats)
        assert reads["records"] >= counts[shard], f"{shard}: not every record was read through the proxy"
        assert reads["throttled_calls"] == 0, f"{shard}: {reads}"
        # Calls at least minFetchPeriod apart: at most 3 in a second at the default 400ms, 5 at 200ms.
        assert reads["max_calls_1s"] <= math.ceil(1000 / period_ms), f"{shard}: {reads}"
        if options:
            # 100 records per call: each shard takes 15 calls or more at the 200 ms spacing, so the
            # connector runs at the limit for a while (otherwise "at most 5" would prove nothing).
            assert reads["calls"] >= math.ceil(counts[shard] / 100), f"{shard}: {reads}"
            assert reads["max_calls_1s"] >= 4, f"{shard}: the connector never came near 5 calls/s: {reads}"
        iterators = limits.shard_stats(name, shard, "GetShardIterator", stats)
        assert iterators["throttled_calls"] == 0, f"{shard}: {iterators}"
    assert limits.shard_stats("?", "?", "GetRecords", stats)["calls"] == 0, "a GetRecords call was not mapped"


@pytest.mark.serial
def test_max_fetch_rate_bounds_the_bytes_read_per_shard_per_second(
    kinesis, stream, read_kinesis, sink, proxy
):
    name = stream(2)
    puts = kinesis.put_records(name, sized(800))
    counts = per_shard(puts)
    rate_mb = 0.05  # about 52 KB/s
    per_call = 50  # records per GetRecords call: about 50 KB per response
    budget = rate_mb * MIB * 1.0 + per_call * RECORD_BYTES  # one second's worth, plus the response in flight
    # Without the rate limit, five 50 KB responses a second (minFetchPeriod 200ms) would break the budget,
    # and each shard holds several seconds' worth.
    assert min(counts.values()) * RECORD_BYTES > 3 * budget
    limits = proxy()

    source = read_kinesis(
        name,
        endpoint=limits.endpoint,
        initialPosition="trim_horizon",
        maxFetchRate=str(rate_mb),
        minFetchPeriod="200ms",
        maxRecordsPerFetch=str(per_call),
    )
    stats = read_all_through_proxy(sink, source, puts, name, limits)
    for shard in (SHARD_0, SHARD_1):
        reads = limits.shard_stats(name, shard, "GetRecords", stats)
        assert reads["bytes"] >= counts[shard] * RECORD_BYTES, f"{shard}: {reads}"
        assert reads["max_bytes_1s"] <= budget, f"{shard}: {reads['max_bytes_1s']} bytes in 1 s > {budget}"
        assert reads["throttled_calls"] == 0 and reads["max_calls_1s"] <= 5, f"{shard}: {reads}"


# ---- 2. throttling


@pytest.mark.serial
def test_two_queries_on_one_stream_survive_throttling(
    spark, kinesis, stream, read_kinesis, sink, proxy, tmp_path
):
    name = stream(2)
    limits = proxy()
    # Two consumers that each take a shard's whole budget (5 calls/s, 2 MB/s): together they are throttled.
    options = dict(
        endpoint=limits.endpoint,
        initialPosition="trim_horizon",
        maxFetchRate="2.0",
        minFetchPeriod="200ms",
        maxRecordsPerFetch="50",
        maxFetchDuration="1s",
    )
    second = BatchSink(spark, tmp_path / "second")
    queries = [sink.start(read_kinesis(name, **options)), second.start(read_kinesis(name, **options))]
    for query in queries:
        wait_until_started(query)
    logs = [ProgressLog(query) for query in queries]
    puts = kinesis.put_records(name, numbered(600))  # straight to the emulator, while both queries poll

    # Both read the 6 calls' worth each shard holds at once: 10 calls/s per shard. Once the proxy has
    # throttled them, the limit is lifted, or two consumers taking 5 calls/s each would crawl for minutes.
    deadline = time.monotonic() + THROTTLE_WAIT_S
    while limits.operation_stats("GetRecords")["throttled_calls"] == 0:
        assert time.monotonic() < deadline, f"no call throttled in {THROTTLE_WAIT_S:.0f} s: {limits.stats()}"
        time.sleep(0.2)
    limits.set_limits(get_records_calls_per_s=None, get_shard_iterator_calls_per_s=None)

    for query, query_sink in zip(queries, (sink, second), strict=True):
        records = query_sink.wait_for_rows(query, len(puts), on_poll=lambda: [log.poll() for log in logs])
        assert_delivered_exactly(records, puts, name)

    def throttled() -> int:
        stats = limits.stats()
        return sum(limits.operation_stats(op, stats)["throttled_calls"] for op in ("GetRecords", "GetShardIterator"))

    # The throttled calls show up in the progress of the queries that made them.
    def reported() -> list[float]:
        return [max(log.metric("throttlingEvents"), default=0.0) for log in logs]

    # Exactly: the data path's client makes one attempt per call (no SDK retries), so each call the proxy throttled
    # is one throttling its reader counted, and the reader's count reaches the query's metrics with its shard's
    # next fetch result (the queries keep polling after the last row).
    deadline = time.monotonic() + METRIC_WAIT_S
    while sum(reported()) != throttled() and time.monotonic() < deadline:
        for log in logs:
            log.poll()
        time.sleep(1)
    for query in queries:
        assert query.exception() is None, query.exception()
        query.stop()
    calls = throttled()
    assert calls > 0 and sum(reported()) == calls, f"throttlingEvents {reported()}, the proxy throttled {calls} calls"


# ---- 3. the buffer bound


def test_prefetching_pauses_while_fetch_buffer_size_is_buffered(kinesis, stream, read_kinesis, sink):
    name = stream(2)
    puts = kinesis.put_records(name, sized(600))
    shards = 2
    buffer_bytes = 200 * 1024
    per_call = 25
    min_fetch_period_ms, max_fetch_duration_ms = 200, 500
    # A round runs at most maxFetchDuration; its calls on a shard start at least minFetchPeriod apart (less
    # a millisecond of clock rounding) and before the round's deadline; each returns at most per_call records.
    calls_per_round = math.ceil(max_fetch_duration_ms / (min_fetch_period_ms - 1))
    round_bytes = shards * calls_per_round * per_call * (RECORD_BYTES + RECORD_OVERHEAD_BYTES)
    bound = buffer_bytes + round_bytes
    # Everything buffered at once would break the bound, so prefetching must pause to pass.
    assert len(puts) * RECORD_BYTES > bound + 100 * 1024

    query = sink.start(
        read_kinesis(
            name,
            initialPosition="trim_horizon",
            fetchBufferSize="200kb",
            maxRecordsPerFetch=str(per_call),
            maxRecordsPerTrigger="50",
            minFetchPeriod=f"{min_fetch_period_ms}ms",
            maxFetchDuration=f"{max_fetch_duration_ms}ms",
        ),
        batch_delay_s=0.4,
    )
    log = ProgressLog(query)
    records = sink.wait_for_rows(query, len(puts), on_poll=log.poll)
    log.poll()
    query.stop()
    assert_delivered_exactly(records, puts, name)

    metrics = log.source_metrics(with_data=True)
    assert len(metrics) >= 10, f"only {len(metrics)} progress reports with data"
    buffered = [int(m["bufferedBytes"]) for m in metrics]
    ratios = [int(m["bufferedBytes"]) / n for m in metrics if (n := int(m["bufferedRecords"]))]
    assert ratios and max(ratios) <= RECORD_BYTES + RECORD_OVERHEAD_BYTES, f"bytes per record {ratios}"
    assert max(buffered) <= bound, f"bufferedBytes {buffered} exceeds {bound}"
    assert max(buffered) >= buffer_bytes // 2, f"the buffer never filled: bufferedBytes {buffered}"


def test_a_batch_that_takes_the_whole_buffer_does_not_stall_the_next(kinesis, stream, read_kinesis, sink):
    """Spark tells a source a batch is done (commit) only once the batch after it has data. With no read limit, a
    batch takes everything buffered; when one round had filled the buffer, prefetching waited for room that only
    that commit would make, and the query stopped reading (seen with 256 shards of a fast Kinesis). What a finished
    batch read must make room as soon as Spark asks for the next."""
    name = stream(2)
    puts = kinesis.put_records(name, numbered(400))
    query = sink.start(
        read_kinesis(
            name,
            initialPosition="trim_horizon",
            # Each round fills the buffer: one response of 20 such records is about 2 KB.
            fetchBufferSize="1kb",
            maxRecordsPerFetch="20",
            minFetchPeriod="200ms",
            maxFetchDuration="300ms",
        )
    )
    log = ProgressLog(query)
    records = sink.wait_for_rows(query, len(puts), on_poll=log.poll)
    log.poll()
    query.stop()
    assert_delivered_exactly(records, puts, name)
    batches = log.source_metrics(with_data=True)
    assert len(batches) >= 5, f"400 records in 20-record responses came in only {len(batches)} batches"


# ---- 4. Trigger.AvailableNow


@pytest.mark.line_smoke
def test_available_now_reads_what_the_shards_held_then_stops(kinesis, stream, read_kinesis, sink):
    name = stream(1)
    [parent] = [s["ShardId"] for s in kinesis.shards(name)]
    parent_puts = kinesis.put_records(name, numbered(300, prefix="parent"))
    kinesis.split_shard(name, parent)
    children = sorted(
        (kinesis.hash_key_range(name, s["ShardId"]), s["ShardId"])
        for s in kinesis.shards(name)
        if s["ShardId"] != parent
    )
    (low_range, low), (high_range, high) = children
    # Records for the low child only: the high child stays empty, the parent is closed.
    child_puts = kinesis.put_records(
        name, [(key, data, low_range[0] + i) for i, (key, data) in enumerate(numbered(300, prefix="child"))]
    )
    assert {p.shard_id for p in parent_puts} == {parent} and {p.shard_id for p in child_puts} == {low}
    options = dict(initialPosition="trim_horizon", maxRecordsPerFetch="50")

    query = sink.start(read_kinesis(name, **options), trigger={"availableNow": True})
    assert query.awaitTermination(AVAILABLE_NOW_TIMEOUT_S), (
        f"AvailableNow did not stop within {AVAILABLE_NOW_TIMEOUT_S} s; {sink.describe(query)}"
    )
    assert query.exception() is None, query.exception()
    first_run = sink.records()
    assert_delivered_exactly(first_run, parent_puts + child_puts, name)
    last_batch = max(r.batch_id for r in first_run)

    more = kinesis.put_records(
        name,
        [(key, data, low_range[0] + i) for i, (key, data) in enumerate(numbered(100, prefix="low-more"))]
        + [(key, data, high_range[0] + i) for i, (key, data) in enumerate(numbered(100, prefix="high-more"))],
    )
    assert {p.shard_id for p in more} == {low, high}
    query = sink.start(read_kinesis(name, **options), trigger={"availableNow": True})
    assert query.awaitTermination(AVAILABLE_NOW_TIMEOUT_S), (
        f"the second AvailableNow run did not stop within {AVAILABLE_NOW_TIMEOUT_S} s; {sink.describe(query)}"
    )
    assert query.exception() is None, query.exception()
    records = sink.records()
    assert_delivered_exactly(records, parent_puts + child_puts + more, name)
    second_run = [r for r in records if r.batch_id > last_batch]
    assert sorted(r.data for r in second_run) == sorted(p.data for p in more)


@pytest.mark.parametrize("mode", ["polling", "efo"])
def test_available_now_with_a_live_producer_ends_at_its_target(mode, kinesis, emulator, stream, read_kinesis, sink):
    """Spark's AvailableNow contract: the end is fixed when the trigger starts. With a producer writing throughout,
    a run read records that arrived long after its start (1,200 of them over 40 s, in the report that found it),
    and at a shard's write limit it might never end. Every record that arrived before the start must be read once,
    none that arrived after the target (the driver's time at the start, within a few seconds of it)."""
    name = stream(2)
    kinesis.put_records(name, numbered(1000))
    producer = KeyedProducer(emulator.endpoint, name, keys=10, interval_s=0.05).start()  # about 150 records/s
    producer.wait_rounds(20)
    options = dict(initialPosition="trim_horizon", maxRecordsPerFetch="100")
    if mode == "efo":
        options.update(consumerMode="efo", consumerName="available-now-live")
    try:
        started = time.time()
        query = sink.start(read_kinesis(name, **options), trigger={"availableNow": True})
        ended = query.awaitTermination(AVAILABLE_NOW_TIMEOUT_S)
    finally:
        producer.stop()
    assert ended, f"AvailableNow did not stop within {AVAILABLE_NOW_TIMEOUT_S} s; {sink.describe(query)}"
    assert query.exception() is None, query.exception()
    read = sink.records()
    keys = [(r.shard_id, r.sequence_number) for r in read]
    assert len(keys) == len(set(keys)), "a record was delivered twice"
    stored = kinesis.read_all(name)
    held = {(r["ShardId"], r["SequenceNumber"]) for r in stored if r["ApproximateArrivalTimestamp"].timestamp() <= started}
    assert held <= set(keys), f"{len(held - set(keys))} records that arrived before the start were not read"
    # The end the run fixed for itself, shortly after the query started.
    target = int(query.lastProgress["sources"][0]["metrics"]["availableNowTargetMillis"]) / 1000
    assert started <= target <= started + TARGET_MARGIN_S, f"target {target - started:.1f} s after the start"
    after = [r for r in read if r.arrival > target]
    assert not after, f"read {len(after)} records that arrived after the target; {len(read)} of {len(stored)} read"


def test_available_now_on_an_empty_stream_stops_by_itself(stream, read_kinesis, sink):
    name = stream(2)
    query = sink.start(read_kinesis(name, initialPosition="trim_horizon"), trigger={"availableNow": True})
    assert query.awaitTermination(60), f"AvailableNow on an empty stream did not stop; {sink.describe(query)}"
    assert query.exception() is None, query.exception()
    # Spark may run one batch on a fresh checkpoint (nothing is committed yet); it must be empty.
    assert sink.records() == []


# ---- 5. metrics


def test_lag_metrics_show_a_backlog_and_then_the_catch_up(kinesis, stream, read_kinesis, sink):
    name = stream(1)
    # MillisBehindLatest is measured between arrival times: records put 2 s before the newest ones are behind.
    backlog = kinesis.put_records(name, numbered(400, prefix="old"))
    time.sleep(2)
    recent = kinesis.put_records(name, numbered(100, start=400, prefix="new"))
    # A small buffer keeps the prefetcher from running ahead of the batches: when the first batch reports, the
    # prefetcher has read at most about 200 records (buffer, one round, two batches), all of the backlog.
    query = sink.start(
        read_kinesis(
            name,
            initialPosition="trim_horizon",
            fetchBufferSize="16kb",
            maxRecordsPerFetch="20",
            maxRecordsPerTrigger="50",
            minFetchPeriod="200ms",
            maxFetchDuration="300ms",
        )
    )
    log = ProgressLog(query)
    records = sink.wait_for_rows(query, len(backlog) + len(recent), on_poll=log.poll)
    log.poll()
    query.stop()
    assert_delivered_exactly(records, backlog + recent, name)

    metrics = log.source_metrics(with_data=True)
    assert len(metrics) >= 10
    for m in metrics:
        assert set(SOURCE_METRICS) <= set(m), f"missing {set(SOURCE_METRICS) - set(m)} in {m}"
        assert float(m["minMsBehindLatest"]) <= float(m["avgMsBehindLatest"]) <= float(m["maxMsBehindLatest"])
        assert int(m["activeShards"]) == 1 and int(m["throttlingEvents"]) == 0, m
        assert int(m["bufferedRecords"]) >= 0 and int(m["bufferedBytes"]) >= 0, m
        assert float(m["avgFetchLatencyMs"]) >= 0, m
    rounds = [int(m["fetchRounds"]) for m in metrics]
    assert rounds == sorted(rounds) and rounds[0] > 0, f"fetchRounds {rounds}"
    # The driver's side of each batch: one shard, a few milliseconds; the offset is one shard's JSON.
    for m in metrics:
        assert 0 <= float(m["driverLatestOffsetMs"]) < 5000 and 0 <= float(m["driverPlanInputPartitionsMs"]) < 5000, m
        # A thread's CPU in a call is at most the call's time (a millisecond allowed for the two clocks' grain).
        for call in ("LatestOffset", "PlanInputPartitions"):
            assert 0 <= float(m[f"driver{call}CpuMs"]) <= float(m[f"driver{call}Ms"]) + 1, m
        assert 50 < int(m["offsetBytes"]) < 1000, m
    stored = [int(m["blocksStored"]) for m in metrics]
    assert stored == sorted(stored) and stored[-1] >= 1, f"blocksStored {stored}"
    assert all(0 <= int(m["lastRoundBlocks"]) <= stored[i] for i, m in enumerate(metrics)), metrics
    lag = [int(m["maxMsBehindLatest"]) for m in metrics]
    assert lag[0] > 0, f"no lag reported while the backlog was read: maxMsBehindLatest {lag}"
    assert lag[-1] == 0, f"lag after catching up: maxMsBehindLatest {lag}"


def test_lag_is_of_what_the_query_processed_not_of_what_was_fetched(kinesis, emulator, stream, read_kinesis, sink):
    """A producer writes about 200 records/s; the query takes 20 records a batch and 6 s per batch, so it falls
    behind by many seconds, while the prefetcher, paused on a full buffer, fetches little. The lag metrics must
    follow how far behind the query is."""
    name = stream(1)
    producer = KeyedProducer(emulator.endpoint, name, keys=10, interval_s=0.05).start()
    try:
        query = sink.start(
            read_kinesis(name, initialPosition="trim_horizon", maxRecordsPerTrigger="20", fetchBufferSize="20kb"),
            batch_delay_s=6.0,
        )
        log = ProgressLog(query)
        deadline = time.monotonic() + 25
        while time.monotonic() < deadline:
            log.poll()
            time.sleep(1)
        log.poll()
    finally:
        producer.stop()
    query.stop()
    last = log.source_metrics()[-1]
    behind_s = time.time() - max(r.arrival for r in sink.records())
    assert behind_s > 10, f"the query should have fallen far behind: {behind_s:.1f} s"
    print(f"behind {behind_s:.1f} s; last progress: {last}")
    assert float(last["maxMsBehindLatest"]) >= 500 * behind_s, f"lag metrics while {behind_s:.0f} s behind: {last}"
    assert float(last["oldestBufferedRecordAgeMs"]) >= 500 * behind_s, last


# ---- 6. read limits


def test_max_records_per_trigger_bounds_every_batch(kinesis, stream, read_kinesis, sink):
    name = stream(2)
    puts = kinesis.put_records(name, numbered(1000))
    query = sink.start(read_kinesis(name, initialPosition="trim_horizon", maxRecordsPerTrigger="100"))
    records = sink.wait_for_rows(query, len(puts))
    query.stop()
    assert_delivered_exactly(records, puts, name)
    sizes = {batch: len(rows) for batch, rows in sorted(rows_per_batch(records).items())}
    assert all(0 < n <= 100 for n in sizes.values()), f"rows per batch {sizes}"
    assert len(sizes) >= 10


@pytest.mark.line_smoke
def test_max_bytes_per_trigger_bounds_every_batch(kinesis, stream, read_kinesis, sink):
    name = stream(2)
    puts = kinesis.put_records(name, sized(200))
    limit = 20 * 1024
    per_call = 8  # a block (one GetRecords response) holds at most 8 KB of data, well within the limit
    query = sink.start(
        read_kinesis(
            name,
            initialPosition="trim_horizon",
            maxBytesPerTrigger="20kb",
            maxRecordsPerFetch=str(per_call),
            minFetchPeriod="200ms",
        )
    )
    records = sink.wait_for_rows(query, len(puts))
    query.stop()
    assert_delivered_exactly(records, puts, name)
    batches = sorted(rows_per_batch(records).items())
    data_bytes = {batch: sum(len(r.data) for r in rows) for batch, rows in batches}
    assert all(0 < n <= limit for n in data_bytes.values()), f"data bytes per batch {data_bytes}"
    assert len(data_bytes) >= math.ceil(len(puts) * RECORD_BYTES / limit)


# ---- 7. option checks


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("minFetchPeriod", "100ms"),
        ("minFetchPeriod", "soon"),
        ("maxFetchRate", "3"),
        ("maxFetchRate", "0"),
        ("fetchBufferSize", "lots"),
        ("maxFetchDuration", "0ms"),
        ("shardsPerTask", "0"),
        ("shardFetchInterval", "often"),
        ("maxShardsPerDescribe", "10001"),
        ("coalesceBinSize", "big"),
        ("maxRecordsPerTrigger", "0"),
        ("maxBytesPerTrigger", "much"),
    ],
)
def test_bad_prefetch_option_fails_at_load(stream, read_kinesis, option, value):
    name = stream(1)
    value_pattern = rf"(?<![\w.]){re.escape(value)}(?![\w.])"
    assert_load_fails(lambda: read_kinesis(name, **{option: value}), re.escape(option), value_pattern)
