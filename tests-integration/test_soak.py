"""Soak: many streams on one busy account, faults, a reshard and a trim, a producer throughout.

One polling query reads 30 streams through the limits proxy, playing an account whose other applications leave
this one a quarter of Kinesis's quotas (DescribeStreamSummary 5 calls/s, ListShards 250/s for the account;
GetShardIterator 1 and GetRecords 2 calls/s per shard), with read and control-plane calls answered with an error
(internal failures, KMS throttling, limit exceeded, expired iterators) or a reset connection on a schedule (every
N-th call of an operation per error code, see ``FAULTS``), so that in the 150 s run every one of them fires at least
3 times, once or more while the query is delivering, which the test asserts from the proxy's counters. An enhanced
fan-out query reads 5 of the streams at the same time through a second proxy, which answers its SubscribeToShard
calls (HTTP/2) with errors (limit exceeded, internal failure, resource in use) or resets the connection, ending every
subscription on it, on a schedule too (``EFO_FAULTS``), each at least 3 times while it delivers. During the run
one stream is split, and the polling query falls behind by more than the streams' retention (every GetRecords call
throttled for ``PAUSE_S``), so that retention (20 s, played by the proxy and told to the connector by a test-only
Spark setting) takes records it had not read yet.
It runs with ``failOnDataLoss=false``: it must lose exactly those records, in each shard the ones after the last
record the proxy served it before the trim, up to the trim horizon, count one loss per such shard in
``dataLossEvents``, and deliver everything else once, in per-key order. The enhanced fan-out query must
deliver every record of its streams once, in per-key order. No query may fail.

``KINESIS_SPARK_SOAK_S`` sets how long the producers run: CI runs 150 seconds; the long run the user guide reports
is ``KINESIS_SPARK_SOAK_S=1800 ../.venv/bin/python -m pytest -m soak -s``. The test prints the calls per second
by operation that the proxy served, and adds a row to the reliability report.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable

import pytest
from harness.exactly_once import Delivery
from harness.faults import assert_faults_fired, delivered_at
from harness.producer import KeyedProducer, assert_per_key_order
from harness.reliability import record
from harness.sink import BatchSink
from test_multiple_streams import by_stream

pytestmark = pytest.mark.soak

SOAK_S = float(os.environ.get("KINESIS_SPARK_SOAK_S", "150"))
STREAMS = 30
EFO_STREAMS = 5
# Every N-th call of an operation per error code, from an early call on. Calls in 180 s on the 2-core machine while
# another test suite ran: GetRecords about 1,200 (one in 50 faulted), ListShards about 580 (one in 33),
# GetShardIterator about 55 (30 at the start, then after expired iterators and faults; three in ten faulted),
# DescribeStreamSummary about 130, mostly the 30 streams' first descriptions and their throttled retries (one in ten).
FAULTS = {
    "GetRecords": {
        "InternalFailure": {"every": 200, "first": 20},
        "KMSThrottlingException": {"every": 200, "first": 40},
        "ExpiredIteratorException": {"every": 200, "first": 60},
        "ConnectionReset": {"every": 200, "first": 80},
    },
    "GetShardIterator": {
        "LimitExceededException": {"every": 10, "first": 2},
        "InternalFailure": {"every": 10, "first": 4},
        "ConnectionReset": {"every": 10, "first": 6},
    },
    "ListShards": {
        "LimitExceededException": {"every": 100, "first": 10},
        "InternalFailure": {"every": 100, "first": 20},
        "ConnectionReset": {"every": 100, "first": 30},
    },
    "DescribeStreamSummary": {"LimitExceededException": {"every": 10, "first": 2}},
}
# SubscribeToShard calls are few (one per shard, 5 and later the split's 2 children, and one more after each fault;
# 15 in a 180 s run with every 10th faulted), so the faults take the first four calls of every six, three times
# each: a reset ends every subscription on the connection, which brings the next calls at once.
EFO_FAULTS = {
    "SubscribeToShard": {
        "LimitExceededException": {"every": 6, "first": 1, "times": 3},
        "InternalFailure": {"every": 6, "first": 2, "times": 3},
        "ResourceInUseException": {"every": 6, "first": 3, "times": 3},
        "ConnectionReset": {"every": 6, "first": 4, "times": 3},
    },
}
QUARTER = {
    "control_calls_per_s": {"DescribeStreamSummary": 5, "ListShards": 250},
    "get_shard_iterator_calls_per_s": 1,
    "get_records_calls_per_s": 2,
    "faults": FAULTS,
}
OPTIONS = {"initialPosition": "trim_horizon", "shardFetchInterval": "2s"}
# TestSettings.RetentionMs: the streams' retention as the connector takes it (AWS's least is 24 hours, which
# DescribeStreamSummary gives here), so that it checks for records expiring ahead of a reader that has fallen behind
# by about that long. Read by the driver whenever it describes a stream, so it is set before the queries start.
RETENTION_CONF = "spark.kinesisspark.test.retentionMs"
RETENTION_S = 20
# Every GetRecords call of the polling query is throttled this long: past the retention, so that what it had not read
# before is about to expire when it reads again.
PAUSE_S = RETENTION_S + 5


def delivery_of(records, puts, name: str, expired: frozenset = frozenset()) -> Delivery:
    """Each put record of one stream against the rows delivered from it; ``expired`` records must not be
    delivered (an expired record delivered counts as unexpected) and are not counted as lost."""
    rows = Counter((r.shard_id, r.sequence_number) for r in by_stream(records, name))
    stored = {(p.shard_id, p.sequence_number) for p in puts}
    return Delivery(
        stored=len(stored),
        delivered=sum(rows.values()),
        lost=sorted(stored - set(rows) - expired),
        duplicated={k: n for k, n in rows.items() if n > 1},
        unexpected=sorted((set(rows) - stored) | (set(rows) & expired)),
    )


def expected_losses(stored: list[dict], served: dict[str, str], horizon_ms: float) -> dict[str, list[tuple[str, str]]]:
    """Shard -> the records retention took ahead of the query: those after the last record the proxy served its
    reader before the trim (``served``: shard -> sequence number; none: from the shard's start), up to the last one
    that arrived before the trim horizon (``stored``: the stream's records as Kinesis returns them, with the arrival
    times the proxy trims by). Records fetched before the trim must all be delivered, even if not yet when it came."""
    by_shard: dict[str, list[dict]] = {}
    for r in stored:
        by_shard.setdefault(r["ShardId"], []).append(r)
    losses = {}
    for shard, shard_records in by_shard.items():
        read_to = int(served.get(shard, -1))
        gone = [
            (shard, r["SequenceNumber"]) for r in sorted(shard_records, key=lambda r: int(r["SequenceNumber"]))
            if int(r["SequenceNumber"]) > read_to and r["ApproximateArrivalTimestamp"].timestamp() * 1000 < horizon_ms
        ]
        if gone:
            losses[shard] = gone
    return losses


def wait_delivered(sink: BatchSink, query, expected: Callable[[list], int], timeout_s: float) -> list:
    """The sink's rows once it holds as many as ``expected(rows)`` or the time is up."""
    deadline = time.monotonic() + timeout_s
    while True:
        assert query.exception() is None, f"the query failed: {query.exception()}"
        rows = sink.records()
        if len(rows) >= expected(rows) or time.monotonic() > deadline:
            return rows
        time.sleep(2)


def test_thirty_streams_on_a_busy_faulty_account(kinesis, emulator, stream, read_kinesis, spark, tmp_path, proxy):
    names = [stream(1) for _ in range(STREAMS)]
    producers = [KeyedProducer(emulator.endpoint, name, keys=4, interval_s=1.0).start() for name in names]
    account = proxy(**QUARTER)
    polling_sink, efo_sink = BatchSink(spark, tmp_path / "polling"), BatchSink(spark, tmp_path / "efo")
    spark_conf = spark._jvm.org.apache.spark.SparkEnv.get().conf()
    spark_conf.set(RETENTION_CONF, str(RETENTION_S * 1000))
    try:  # the setting is the shared session's: removed whatever happens
        polling_started = time.time()
        polling = polling_sink.start(
            read_kinesis(",".join(names), endpoint=account.endpoint, failOnDataLoss="false", **OPTIONS)
        )
        efo_front = proxy(faults=EFO_FAULTS)
        efo_started = time.time()
        efo = efo_sink.start(
            read_kinesis(",".join(names[:EFO_STREAMS]), endpoint=efo_front.endpoint, consumerMode="efo",
                         consumerName="soak", failOnDataLoss="true", **OPTIONS)
        )
        started = time.monotonic()
        resharded = False
        paused_at = horizon_ms = None
        served_before_trim: dict[str, str] = {}
        while time.monotonic() - started < SOAK_S:
            for query in (polling, efo):
                assert query.exception() is None, f"a query failed: {query.exception()}"
            elapsed = time.monotonic() - started
            if not resharded and elapsed > SOAK_S / 3:
                kinesis.split_shard(names[0], kinesis.open_shards(names[0])[0]["ShardId"])
                resharded = True
            if paused_at is None and elapsed > SOAK_S / 2:
                account.set_limits(get_records_calls_per_s=0)  # every call throttled: the query falls behind
                paused_at = time.monotonic()
            if paused_at is not None and horizon_ms is None and time.monotonic() - paused_at >= PAUSE_S:
                # Retention takes what arrived over RETENTION_S ago: up to PAUSE_S - RETENTION_S seconds after the
                # pause began, so everything from the query's position on to then, which it has yet to read.
                horizon_ms = (time.time() - RETENTION_S) * 1000
                # What the query fetched before the trim (no call has been served since the pause began).
                served_before_trim = account.stats()["last_served"]
                account.set_limits(
                    trim_horizon_ms=horizon_ms, get_records_calls_per_s=QUARTER["get_records_calls_per_s"]
                )
            time.sleep(min(5.0, PAUSE_S / 5))
    finally:
        puts = {name: producer.stop() for name, producer in zip(names, producers)}
        spark_conf.remove(RETENTION_CONF)
    stats, efo_stats = account.stats(), efo_front.stats()
    run_s = time.monotonic() - started
    assert resharded and horizon_ms is not None, "the reshard or the trim did not happen"

    # Exactly what retention took ahead of the polling query, per shard, from the stream itself (read past the proxy).
    stored = {name: kinesis.read_all(name) for name in names}
    efo_total = sum(len(puts[n]) for n in names[:EFO_STREAMS])
    total = sum(len(p) for p in puts.values())
    wait_delivered(efo_sink, efo, lambda _: efo_total, timeout_s=300)
    losses = {
        n: expected_losses(
            stored[n], {k.split("/", 1)[1]: v for k, v in served_before_trim.items() if k.startswith(f"{n}/")},
            horizon_ms)
        for n in names
    }
    expired = {n: frozenset(p for shard in losses[n].values() for p in shard) for n in names}
    wait_delivered(polling_sink, polling, timeout_s=300,
                   expected=lambda _: total - sum(len(e) for e in expired.values()))
    time.sleep(5)  # anything delivered twice would show after the last expected row
    polling_rows, efo_rows = polling_sink.records(), efo_sink.records()
    faults_until = delivered_at(polling_sink, polling_rows) if polling_rows else polling_started
    efo_faults_until = delivered_at(efo_sink, efo_rows) if efo_rows else efo_started
    for query in (polling, efo):
        assert query.exception() is None, f"a query failed: {query.exception()}"
    loss_events = int(polling.lastProgress["sources"][0]["metrics"]["dataLossEvents"])

    per_op = {
        op: f"{totals['calls'] / run_s:.1f}"
        for op, totals in sorted(stats["operations"].items())
        if totals["calls"] > 0 and not op.startswith(("GET ", "POST "))
    }
    faulted = sum(t["faulted_calls"] for t in stats["operations"].values())
    by_code = {op: account.operation_stats(op, stats)["faults_by_code"] for op in FAULTS}
    efo_by_code = efo_front.operation_stats("SubscribeToShard", efo_stats)
    # A shard the query had not read before the trim (a child whose parent was not finished) starts at its
    # beginning, where no position tells the reader what is missing: its records count as lost, not its loss event.
    shards_lost = sum(len(shards) for shards in losses.values())
    shards_read_lost = sum(
        1 for n in names for shard in losses[n] if f"{n}/{shard}" in served_before_trim
    )
    records_lost = sum(len(e) for e in expired.values())
    print(f"\nsoak {SOAK_S:.0f} s, {total} records put; calls per second by operation "
          f"(polling query): {per_op}; {faulted} calls faulted {by_code}; retention took {records_lost} records "
          f"ahead of the polling query in {shards_lost} shards, {loss_events} data loss events; EFO query: "
          f"{efo_by_code['calls']} SubscribeToShard calls, faults {efo_by_code['faults_by_code']}")
    polling_delivery = [delivery_of(polling_rows, puts[n], n, expired[n]) for n in names]
    efo_delivery = [delivery_of(efo_rows, puts[n], n) for n in names[:EFO_STREAMS]]
    everything = polling_delivery + efo_delivery
    overall = Delivery(
        stored=sum(d.stored for d in everything),
        delivered=sum(d.delivered for d in everything),
        lost=[p for d in everything for p in d.lost],
        duplicated={(i, p): n for i, d in enumerate(everything) for p, n in d.duplicated.items()},
        unexpected=[p for d in everything for p in d.unexpected],
    )
    record(
        f"soak {SOAK_S:.0f} s: {STREAMS} streams, a quarter of the quotas, faults on a schedule, a split, retention "
        f"overtaking the polling query (failOnDataLoss=false); polling and EFO ({EFO_STREAMS} streams, "
        "SubscribeToShard faults)",
        f"0 queries failed; {records_lost} records expired unread in {shards_lost} shards, {loss_events} losses "
        f"counted; calls/s {', '.join(f'{op} {rate}' for op, rate in per_op.items())}",
        overall,
        None,
    )
    # Stats taken when the producers stopped: faults after it (while the query catches up) do not count.
    assert_faults_fired(account, FAULTS, since=polling_started, until=faults_until, stats=stats)
    assert_faults_fired(efo_front, EFO_FAULTS, since=efo_started, until=efo_faults_until, stats=efo_stats)
    assert records_lost > 0, "retention took nothing the polling query had yet to read"
    assert loss_events == shards_read_lost, (
        f"{loss_events} losses counted for {shards_read_lost} shards that lost records after their read position"
    )
    overall.assert_exactly_once()
    for name in names:  # all but what retention took ahead of the polling query, which the EFO query read
        kept = [p for p in puts[name] if (p.shard_id, p.sequence_number) not in expired[name]]
        assert_per_key_order(by_stream(polling_rows, name), kept)
    for name in names[:EFO_STREAMS]:
        assert_per_key_order(by_stream(efo_rows, name), puts[name])
