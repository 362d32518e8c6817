"""Kinesis's quotas and faults, answered the way AWS answers them: throttled or failed calls are retried, never
fatal, and nothing is lost or repeated.

The limits proxy plays the service: ``control_calls_per_s`` is an account-level quota per control-plane
operation, ``faults`` answers an operation's calls with an error on a schedule (every N-th call), so that each fault
a test names fires a known number of times; each test asserts, from the proxy's counters by operation and error
code, that every fault it names fired at least 3 times, once or more while the query was delivering
(``harness.faults``).

The error codes and HTTP statuses are AWS's: GetRecords answers ``KMSThrottlingException`` (400),
``ExpiredIteratorException`` (400) and ``InternalFailure`` (500)
(https://docs.aws.amazon.com/kinesis/latest/APIReference/API_GetRecords.html and the common errors,
https://docs.aws.amazon.com/kinesis/latest/APIReference/CommonErrors.html); GetShardIterator and ListShards
``LimitExceededException`` (400); ListShards ``ExpiredNextTokenException`` (400)
(https://docs.aws.amazon.com/kinesis/latest/APIReference/API_ListShards.html).
"""

from __future__ import annotations

import json
import math
import time
from datetime import datetime, timezone

import pytest
from harness.faults import assert_faults_fired, delivered_at
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
    # 600 records at 50 a call take 12 served GetRecords calls at least. A throttled reader (KMS, or GetShardIterator's
    # quota) sleeps 5 s and halves its calls' size, so those two fire 3 times each (the 2nd, 6th and 10th GetRecords;
    # the 2nd, 4th and 6th GetShardIterator, the ones after expired iterators); internal failures (the 3rd, 8th, ...)
    # and expired iterators (the 4th, 10th, ...) keep coming.
    faults = {
        "GetRecords": {
            "KMSThrottlingException": {"every": 4, "first": 2, "times": 3},
            "InternalFailure": {"every": 5, "first": 3},
            "ExpiredIteratorException": {"every": 6, "first": 4},
        },
        "GetShardIterator": {"LimitExceededException": {"every": 2, "times": 3}},
    }
    account = proxy(faults=faults)

    started = time.time()
    query = sink.start(
        read_kinesis(name, endpoint=account.endpoint, initialPosition="trim_horizon", maxRecordsPerFetch="50")
    )
    records = sink.wait_for_rows(query, 600, timeout_s=180)
    assert_delivered_exactly(records, puts, name)
    assert_faults_fired(account, faults, since=started, until=delivered_at(sink, records))


def test_expired_listing_tokens_and_reset_connections_are_ridden_out(kinesis, stream, read_kinesis, sink, proxy):
    """ListShards' pagination token expires 300 seconds after it was issued (``ExpiredNextTokenException``, HTTP
    400, in the ListShards API reference): a listing whose later pages a throttled control plane held up that long
    failed the query. Connections reset without an answer are in the mix, on every operation the query calls."""
    name = stream(4)
    puts = kinesis.put_records(name, numbered(80))
    faults = {
        # A full listing of 4 shards a page each makes 3 calls with a token: every second one of them expires, 3
        # times, so the first listing starts again 3 times (the connector's limit, SdkKinesisApi.ListingRestarts)
        # before it gets through; later listings are not faulted by it.
        "ListShards": {"ExpiredNextTokenException": {"every": 2, "times": 3}, "ConnectionReset": {"every": 8, "first": 2}},
        "GetRecords": {"ConnectionReset": {"every": 8, "first": 2}},
        # Every other call until the 4 shards have their iterators: each reset call is made again.
        "GetShardIterator": {"ConnectionReset": {"every": 2, "first": 1}},
        # The first 3 calls (the AWS SDK makes each control-plane call up to 8 times).
        "DescribeStreamSummary": {"ConnectionReset": {"every": 1, "times": 3}},
    }
    account = proxy(faults=faults)
    started = time.time()
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
    records = sink.wait_for_rows(query, 160, timeout_s=120)
    assert query.exception() is None
    assert_delivered_exactly(records, puts, name)
    counts = assert_faults_fired(account, faults, since=started, until=delivered_at(sink, records))
    assert counts["ListShards"]["ExpiredNextTokenException"] == 3, counts  # the schedule's 3, no more


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

    started = time.time()
    query = sink.start(read_kinesis(name, endpoint=account.endpoint, initialPosition=position))
    time.sleep(max(0.0, reached - time.time()))
    assert query.exception() is None
    after = kinesis.put_records(name, numbered(40, prefix="after"))
    records = sink.wait_for_rows(query, 40)
    assert_delivered_exactly(records, after, name)
    # Refused about once a second until Kinesis's clock got there (10 or 12 s), all before the records came.
    refusals = {"GetShardIterator": {"InvalidArgumentException": "Kinesis's clock"}}
    assert_faults_fired(account, refusals, since=started, until=delivered_at(sink, records))


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

    # Every ListShards call is refused as over the account's quota (other applications use it up).
    faults = {"ListShards": {"LimitExceededException": {"every": 1}}}
    account.set_limits(faults=faults)
    account.reset()
    throttled_from = time.time()
    deadline = time.monotonic() + 10
    while not account.operation_stats("ListShards")["faults_by_code"] and time.monotonic() < deadline:
        time.sleep(0.2)  # the next listing is at most shardFetchInterval (1 s) away
    puts += kinesis.put_records(name, numbered(20, start=20))
    window_s = 10
    time.sleep(window_s)
    stats = account.stats()
    reads = account.operation_stats("GetRecords", stats)["calls"]
    assert reads >= 2 * window_s, f"{reads} GetRecords calls in {window_s} s while listing was throttled"
    records = sink.wait_for_rows(query, 40)
    account.set_limits(faults=None)
    assert_delivered_exactly(records, puts, name)
    assert_faults_fired(account, faults, since=throttled_from, until=delivered_at(sink, records), stats=stats)
