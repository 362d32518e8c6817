"""Kinesis's quotas and faults, answered the way AWS answers them: throttled or failed calls are retried, never
fatal, and nothing is lost or repeated.

The limits proxy plays the service: ``control_calls_per_s`` is an account-level quota per control-plane
operation, ``faults`` answers a share of an operation's calls with an error instead of serving them.
"""

from __future__ import annotations

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
