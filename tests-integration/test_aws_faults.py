"""Kinesis's quotas and faults, answered the way AWS answers them: throttled or failed calls are retried, never
fatal, and nothing is lost or repeated.

The limits proxy plays the service: ``control_calls_per_s`` is an account-level quota per control-plane
operation, ``faults`` answers a share of an operation's calls with an error instead of serving them.
"""

from __future__ import annotations

import json
import math
import time
from datetime import datetime, timezone

import pytest
from test_multiple_streams import by_stream
from test_polling_source import assert_delivered_exactly, numbered

STREAMS = 12
# What other applications of the account leave of DescribeStreamSummary's 20 calls per second.
DESCRIBE_LEFT_PER_S = 2


def test_query_over_12_streams_on_a_busy_account(kinesis, stream, read_kinesis, sink, proxy):
    """Kinesis limits DescribeStreamSummary to 20 calls per second for a whole account (Developer Guide, "Quotas
    and limits") and answers calls over it with ``LimitExceededException`` (HTTP 400), which the AWS SDK does not
    retry by itself: on an account whose other applications left a tenth of that quota, a query over 12 streams
    failed in ``load()`` with the SDK's raw exception."""
    names = [stream(1) for _ in range(STREAMS)]
    puts = {name: kinesis.put_records(name, numbered(20, prefix=name)) for name in names}
    account = proxy(control_calls_per_s={"DescribeStreamSummary": DESCRIBE_LEFT_PER_S})

    query = sink.start(read_kinesis(",".join(names), endpoint=account.endpoint, initialPosition="trim_horizon"))
    records = sink.wait_for_rows(query, 20 * STREAMS)
    for name in names:
        assert_delivered_exactly(by_stream(records, name), puts[name], name)
    describes = account.operation_stats("DescribeStreamSummary")
    assert describes["throttled_calls"] > 0, f"the quota was never met: {describes}"


def test_reads_ride_out_kms_throttling_internal_failures_and_expired_iterators(
    kinesis, stream, read_kinesis, sink, proxy
):
    """A stream encrypted with a KMS key answers ``KMSThrottlingException`` when KMS throttles it (GetRecords API
    reference); the source failed on it. Internal failures (500), expired iterators and a throttled
    GetShardIterator (``LimitExceededException``) are in the mix too."""
    name = stream(2)
    puts = kinesis.put_records(name, numbered(600))
    faults = {
        "GetRecords": {"KMSThrottlingException": 0.15, "InternalFailure": 0.05, "ExpiredIteratorException": 0.05},
        "GetShardIterator": {"LimitExceededException": 0.1},
    }
    account = proxy(faults=faults)

    query = sink.start(
        read_kinesis(name, endpoint=account.endpoint, initialPosition="trim_horizon", maxRecordsPerFetch="50")
    )
    records = sink.wait_for_rows(query, 600, timeout_s=180)
    assert_delivered_exactly(records, puts, name)
    faulted = account.operation_stats("GetRecords")["faulted_calls"]
    assert faulted > 0, "no GetRecords call was faulted"


def test_expired_listing_tokens_and_reset_connections_are_ridden_out(kinesis, stream, read_kinesis, sink, proxy):
    """ListShards' pagination token expires 300 seconds after it was issued (``ExpiredNextTokenException``, HTTP
    400, in the ListShards API reference): a listing whose later pages a throttled control plane held up that long
    failed the query. Connections reset without an answer are in the mix, on every operation the query calls."""
    name = stream(4)
    puts = kinesis.put_records(name, numbered(80))
    reset = {"ConnectionReset": 0.05}
    faults = {
        "ListShards": {"ExpiredNextTokenException": 0.3, "ConnectionReset": 0.05},
        "GetRecords": {"ConnectionReset": 0.1},
        "GetShardIterator": reset,
        "DescribeStreamSummary": reset,
    }
    account = proxy(faults=faults)
    query = sink.start(
        read_kinesis(
            name,
            endpoint=account.endpoint,
            initialPosition="trim_horizon",
            maxShardsPerDescribe="1",  # a page per shard: every listing carries pagination tokens
            shardFetchInterval="1s",
        )
    )
    sink.wait_for_rows(query, 80, timeout_s=120)
    puts += kinesis.put_records(name, numbered(80, start=80))
    sink.wait_for_rows(query, 160, timeout_s=120)
    # The query may read everything within a few listings (one call each once the shards are known), and each call is
    # faulted at random: keep it listing, every second, until one was, so the test shows a fault ridden out.
    deadline = time.monotonic() + 60
    while account.operation_stats("ListShards", account.stats())["faulted_calls"] == 0 and time.monotonic() < deadline:
        time.sleep(1)
    records = sink.records()
    assert query.exception() is None
    assert_delivered_exactly(records, puts, name)
    stats = account.stats()
    for op in ("ListShards", "GetRecords"):
        assert account.operation_stats(op, stats)["faulted_calls"] > 0, f"no {op} call was faulted"


@pytest.mark.parametrize("case", ["at_timestamp 10 s ahead", "latest, Kinesis's clock 12 s behind"])
def test_a_start_ahead_of_kinesiss_clock_reads_from_there_once_reached(
    case, kinesis, stream, read_kinesis, sink, proxy
):
    """AWS refuses an AT_TIMESTAMP time ahead of its clock (InvalidArgumentException "The timestampInMillis parameter
    cannot be greater than the currentTimestampInMillis"): a query started at a future time, or with ``latest``
    (pinned to the driver's clock) on a driver whose clock runs ahead of Kinesis's, failed. It must read nothing
    until Kinesis's clock gets there, then every record at or after the time."""
    name = stream(1)
    kinesis.put_records(name, numbered(30, prefix="before"))
    if case.startswith("at_timestamp"):
        start = math.ceil(time.time()) + 10
        stamp = datetime.fromtimestamp(start, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        position = json.dumps({"at_timestamp": stamp, "format": "yyyy-MM-dd'T'HH:mm:ssX"})
        account, reached = proxy(kinesis_clock_offset_s=0.0), start + 1.0
    else:
        position = "latest"
        account, reached = proxy(kinesis_clock_offset_s=-12.0), time.time() + 13.0

    query = sink.start(read_kinesis(name, endpoint=account.endpoint, initialPosition=position))
    time.sleep(max(0.0, reached - time.time()))
    assert query.exception() is None
    after = kinesis.put_records(name, numbered(40, prefix="after"))
    records = sink.wait_for_rows(query, 40)
    assert_delivered_exactly(records, after, name)
    refused = account.operation_stats("GetShardIterator")["faulted_calls"]
    assert refused > 0, "Kinesis's clock never refused the start"


def test_steady_state_lists_shards_without_describing_streams(kinesis, stream, read_kinesis, sink, proxy):
    """Listing used to describe every stream (DescribeStreamSummary, 20 calls per second for the whole account)
    every ``shardFetchInterval``. ListShards shows when a stream was created again (a known shard id with another
    starting sequence number, or a new shard numbered below a known one), so once running, a query lists only; and
    nine listings in ten ask only for shards after the highest id known."""
    names = [stream(1) for _ in range(3)]
    puts = {name: kinesis.put_records(name, numbered(10, prefix=name)) for name in names}
    account = proxy()
    query = sink.start(
        read_kinesis(",".join(names), endpoint=account.endpoint, initialPosition="trim_horizon", shardFetchInterval="1s")
    )
    records = sink.wait_for_rows(query, 30)
    for name in names:
        assert_delivered_exactly(by_stream(records, name), puts[name], name)

    account.reset()
    time.sleep(8)
    stats = account.stats()
    listings = account.operation_stats("ListShards", stats)["calls"]
    describes = account.operation_stats("DescribeStreamSummary", stats)["calls"]
    assert listings >= 3 * 5, f"the streams were listed {listings} times in 8 s"
    assert describes == 0, f"{describes} DescribeStreamSummary calls in steady state ({listings} ListShards)"
    # Most listings ask only for the shards after the highest id known (ShardFilter AFTER_SHARD_ID), and get none.
    listing = account.operation_stats("ListShards", stats)
    filtered = listing.get("filtered_calls", 0)
    assert filtered >= 0.8 * listings, f"{filtered} of {listings} ListShards calls asked for new shards only"
    full = listing.get("answered_calls", 0) - filtered  # counted with shards_listed, when the answer came back
    assert listing.get("shards_listed", 0) == full, f"one shard per full listing: {listing}"


def test_a_throttled_listing_does_not_hold_up_fetching(kinesis, stream, read_kinesis, sink, proxy):
    """Shards were listed on the fetch loop's own thread, so a listing the control plane throttled (retried with
    back-off for seconds) stopped every shard's fetching meanwhile. Listing runs on its own thread now."""
    name = stream(1)
    puts = kinesis.put_records(name, numbered(20))
    account = proxy()
    query = sink.start(
        read_kinesis(name, endpoint=account.endpoint, initialPosition="trim_horizon", shardFetchInterval="1s")
    )
    sink.wait_for_rows(query, 20)

    # Most ListShards calls are refused as over the account's quota (other applications use it up).
    account.set_limits(faults={"ListShards": {"LimitExceededException": 0.85}})
    account.reset()
    puts += kinesis.put_records(name, numbered(20, start=20))
    window_s = 10
    time.sleep(window_s)
    stats = account.stats()
    listing = account.operation_stats("ListShards", stats)
    reads = account.operation_stats("GetRecords", stats)["calls"]
    assert listing["faulted_calls"] > 0, f"ListShards was never throttled: {listing}"
    assert reads >= 2 * window_s, f"{reads} GetRecords calls in {window_s} s while listing was throttled"
    assert_delivered_exactly(sink.wait_for_rows(query, 40), puts, name)
