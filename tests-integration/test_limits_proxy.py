"""Tests of the Kinesis limits proxy (harness.limits_proxy) with boto3 and raw HTTP; no Spark.

Streams are created and filled directly on the emulator (the ``kinesis`` fixture) unless a test is about
writes, so only the calls under test go through the proxy. Clients used through the proxy never retry,
so a throttled call surfaces as the ``ClientError`` a caller would see. Timing-dependent steps state the
timing they need and check it, so a stalled machine fails with a message about timing, not a wrong count.
"""

from __future__ import annotations

import glob
import hashlib
import json
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cbor2
import pyspark
import pytest
from botocore.exceptions import ClientError, ConnectionClosedError, ReadTimeoutError
from harness.kinesis import Kinesis, boto_client
from harness.limits_proxy import CBOR_TYPE, JSON_TYPE, THROTTLED
from harness.spark import connector_jar

SHARD_0 = "shardId-000000000000"
SHARD_1 = "shardId-000000000001"
KB = 1000
# Most of these count calls within a second of wall time.
pytestmark = pytest.mark.serial


def client(endpoint: str):  # noqa: ANN201
    """A boto3 Kinesis client that makes exactly one attempt per call."""
    return boto_client(endpoint, max_attempts=1)


def keys_for(kinesis: Kinesis, stream: str, shard_id: str, count: int, prefix: str = "k") -> list[str]:
    """``count`` partition keys whose MD5 hash key falls in the shard's hash key range."""
    shard = next(s for s in kinesis.shards(stream) if s["ShardId"] == shard_id)
    low, high = int(shard["HashKeyRange"]["StartingHashKey"]), int(shard["HashKeyRange"]["EndingHashKey"])
    keys: list[str] = []
    i = 0
    while len(keys) < count:
        key = f"{prefix}{i}"
        if low <= int.from_bytes(hashlib.md5(key.encode()).digest(), "big") <= high:
            keys.append(key)
        i += 1
    return keys


def iterator(kinesis_client, stream: str, shard_id: str, kind: str = "TRIM_HORIZON") -> str:
    return kinesis_client.get_shard_iterator(StreamName=stream, ShardId=shard_id, ShardIteratorType=kind)[
        "ShardIterator"
    ]


def assert_throttled(error: ClientError, stream: str, shard_id: str) -> None:
    """The error is Kinesis's throttling answer for this shard, as boto3 parses it."""
    assert error.response["Error"]["Code"] == THROTTLED
    assert error.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert error.response["ResponseMetadata"]["HTTPHeaders"]["x-amzn-errortype"] == THROTTLED
    assert f"Rate exceeded for shard {shard_id} in stream {stream}" in error.response["Error"]["Message"]


def test_sixth_get_records_within_a_second_is_throttled_on_that_shard_only(kinesis, stream, proxy):
    name = stream(2)
    kinesis.put_records(name, [("a", b"x")] * 3)
    limits = proxy()
    through = client(limits.endpoint)
    iterators = {shard: iterator(through, name, shard) for shard in (SHARD_0, SHARD_1)}

    first = time.monotonic()
    shard_iterator = iterators[SHARD_0]
    for _ in range(5):  # each call uses the previous call's NextShardIterator, which the proxy follows
        shard_iterator = through.get_records(ShardIterator=shard_iterator)["NextShardIterator"]
    with pytest.raises(ClientError) as throttled:
        through.get_records(ShardIterator=shard_iterator)
    sixth_after = time.monotonic() - first
    assert sixth_after < 1.0, f"timing: six calls took {sixth_after:.2f} s, the test needs them within 1 s"
    assert_throttled(throttled.value, name, SHARD_0)

    other = iterators[SHARD_1]
    for _ in range(2):
        other = through.get_records(ShardIterator=other)["NextShardIterator"]

    time.sleep(max(0.0, first + 1.05 - time.monotonic()))  # the first call leaves the 1 s window
    through.get_records(ShardIterator=shard_iterator)

    stats = limits.stats()
    shard0 = limits.shard_stats(name, SHARD_0, "GetRecords", stats)
    assert (shard0["calls"], shard0["throttled_calls"], shard0["max_served_calls_1s"]) == (7, 1, 5)
    assert shard0["max_calls_1s"] == 6
    shard1 = limits.shard_stats(name, SHARD_1, "GetRecords", stats)
    assert (shard1["calls"], shard1["throttled_calls"]) == (2, 0)
    assert limits.operation_stats("GetRecords", stats)["throttled_calls"] == 1
    assert limits.shard_stats("?", "?", "GetRecords", stats)["calls"] == 0, "a GetRecords call was not mapped"
    through.close()


def test_sixth_get_shard_iterator_within_a_second_is_throttled(stream, proxy):
    name = stream(2)
    limits = proxy()
    through = client(limits.endpoint)
    first = time.monotonic()
    for _ in range(5):
        iterator(through, name, SHARD_0)
    with pytest.raises(ClientError) as throttled:
        iterator(through, name, SHARD_0)
    assert time.monotonic() - first < 1.0, "timing: six calls took over 1 s"
    assert_throttled(throttled.value, name, SHARD_0)
    iterator(through, name, SHARD_1)
    stats = limits.shard_stats(name, SHARD_0, "GetShardIterator")
    assert (stats["calls"], stats["throttled_calls"], stats["max_served_calls_1s"]) == (6, 1, 5)
    through.close()


def test_a_reset_fault_answers_nothing_and_expired_tokens_meet_only_later_pages(stream, proxy):
    name = stream(3)
    limits = proxy(faults={"GetShardIterator": {"ConnectionReset": 1.0}, "ListShards": {"ExpiredNextTokenException": 1.0}})
    through = client(limits.endpoint)
    with pytest.raises(ConnectionClosedError) as reset:
        iterator(through, name, SHARD_0)
    first = through.list_shards(StreamName=name, MaxResults=1)  # the first page carries no token: served
    assert [s["ShardId"] for s in first["Shards"]] == [SHARD_0] and first["NextToken"]
    with pytest.raises(ClientError) as expired:
        through.list_shards(NextToken=first["NextToken"], MaxResults=1)
    assert expired.value.response["Error"]["Code"] == "ExpiredNextTokenException"
    assert expired.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert limits.operation_stats("GetShardIterator")["faulted_calls"] == 1
    assert limits.operation_stats("ListShards")["faulted_calls"] == 1
    through.close()


def test_a_hung_call_is_held_silent_until_the_client_gives_up(stream, proxy):
    """A ConnectionHang answers nothing and keeps the connection open: the client's read timeout ends the call, the
    proxy lets go of it, and the next call is served."""
    name = stream(1)
    limits = proxy(faults={"DescribeStreamSummary": {"ConnectionHang": {"every": 2, "first": 1, "times": 1}}})
    through = boto_client(limits.endpoint, max_attempts=1, read_timeout_s=1)
    started = time.monotonic()
    with pytest.raises(ReadTimeoutError):
        through.describe_stream_summary(StreamName=name)
    assert 1 <= time.monotonic() - started < 10
    assert through.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamName"] == name
    stats = limits.operation_stats("DescribeStreamSummary")
    assert (stats["calls"], stats["faults_by_code"]) == (2, {"ConnectionHang": 1}), stats
    through.close()


def test_scheduled_faults_fire_on_the_calls_they_name_and_are_counted_by_code(stream, proxy):
    """``{"every": N, "first": F, "times": K}`` faults the F-th call and every N-th after it, K times at most; a code
    that falls due on a call another took takes the next; ExpiredNextTokenException counts only calls with a token.
    Every fault is counted by its code with the time it was injected."""
    name = stream(3)
    before = time.time()
    limits = proxy(
        get_shard_iterator_calls_per_s=None,
        faults={
            "GetShardIterator": {
                "LimitExceededException": {"every": 3},
                "InternalFailure": {"every": 3, "first": 3, "times": 1},
            },
            "ListShards": {"ExpiredNextTokenException": {"every": 2}},
        },
    )
    through = client(limits.endpoint)
    outcomes = []
    for _ in range(10):
        try:
            iterator(through, name, SHARD_0)
            outcomes.append("ok")
        except ClientError as error:
            outcomes.append((error.response["Error"]["Code"], error.response["ResponseMetadata"]["HTTPStatusCode"]))
    le, internal = ("LimitExceededException", 400), ("InternalFailure", 500)
    assert outcomes == ["ok", "ok", le, internal, "ok", le, "ok", "ok", le, "ok"]

    first = through.list_shards(StreamName=name, MaxResults=1)  # no token: does not count
    second = through.list_shards(NextToken=first["NextToken"], MaxResults=1)  # the first call with a token
    with pytest.raises(ClientError) as expired:  # the second
        through.list_shards(NextToken=second["NextToken"], MaxResults=1)
    assert expired.value.response["Error"]["Code"] == "ExpiredNextTokenException"
    assert [s["ShardId"] for s in through.list_shards(NextToken=second["NextToken"], MaxResults=1)["Shards"]] == [
        "shardId-000000000002"
    ]
    after = time.time()

    stats = limits.stats()
    iterators, listings = limits.operation_stats("GetShardIterator", stats), limits.operation_stats("ListShards", stats)
    assert iterators["faults_by_code"] == {"LimitExceededException": 3, "InternalFailure": 1}
    assert iterators["faulted_calls"] == 4 and iterators["calls"] == 10
    assert listings["faults_by_code"] == {"ExpiredNextTokenException": 1}
    times = [t for codes in (iterators, listings) for ts in codes["fault_times"].values() for t in ts]
    assert len(times) == 5 and all(before <= t <= after for t in times), (before, times, after)
    assert limits.operation_stats("GetRecords", stats)["faults_by_code"] == {}

    limits.reset()  # zeroes the counters and starts the schedules again
    assert limits.operation_stats("GetShardIterator")["faults_by_code"] == {}
    iterator(through, name, SHARD_0)
    iterator(through, name, SHARD_0)
    with pytest.raises(ClientError):
        iterator(through, name, SHARD_0)
    through.close()


def test_seeded_fault_draws_repeat_and_bad_fault_entries_are_refused(emulator):
    """Share-based faults drawn from a seeded generator come in the same sequence every time; an entry that is
    neither a share nor a schedule is refused when the limits are set."""
    from harness.limits_proxy import Limits, LimitsProxy, _Proxy

    def draws(seed: int) -> list[str | None]:
        faults = {"GetRecords": {"KMSThrottlingException": 0.2, "InternalFailure": 0.1}}
        proxy = _Proxy(emulator.endpoint, Limits(faults=faults, fault_seed=seed), "us-east-1", "a", "b", "0", 2.0)
        return [proxy._fault("GetRecords", False) for _ in range(200)]

    first = draws(7)
    assert first == draws(7)
    assert first != draws(8)
    assert 20 < first.count("KMSThrottlingException") < 60 and 5 < first.count("InternalFailure") < 40
    for bad in ({"every": 0}, {"first": 2}, {"every": 2, "often": 1}, 1.5, "always"):
        with pytest.raises(ValueError):
            Limits(faults={"GetRecords": {"InternalFailure": bad}})
    with LimitsProxy(emulator.endpoint) as running:
        with pytest.raises(urllib.error.HTTPError) as refused:
            running.set_limits(faults={"GetRecords": {"InternalFailure": {"every": -1}}})
        assert refused.value.code == 400


def test_omitted_shards_are_counted_where_a_listing_left_them_out(stream, proxy):
    """``omitted_listings`` counts the ListShards answers that did leave an ``omit_shards`` shard out, not those the
    shard was not in anyway (a ShardFilter after it)."""
    name = stream(3)
    limits = proxy(omit_shards=[SHARD_1])
    through = client(limits.endpoint)
    assert [s["ShardId"] for s in through.list_shards(StreamName=name)["Shards"]] == [SHARD_0, "shardId-000000000002"]
    after_1 = through.list_shards(StreamName=name, ShardFilter={"Type": "AFTER_SHARD_ID", "ShardId": SHARD_1})
    assert [s["ShardId"] for s in after_1["Shards"]] == ["shardId-000000000002"]
    listing = limits.operation_stats("ListShards")
    assert (listing["omitted_listings"], listing["omitted_shards"]) == (1, 1)
    after_0 = through.list_shards(StreamName=name, ShardFilter={"Type": "AFTER_SHARD_ID", "ShardId": SHARD_0})
    assert [s["ShardId"] for s in after_0["Shards"]] == ["shardId-000000000002"]
    assert limits.operation_stats("ListShards")["omitted_listings"] == 2
    through.close()


def test_read_budget_of_2_mb_per_second_throttles_after_a_large_response(kinesis, stream, proxy):
    name = stream(1)
    record = 100 * KB
    kinesis.put_records(name, [(f"k{i}", bytes([i]) * record) for i in range(30)])  # 3 MB, one call
    limits = proxy()  # Kinesis defaults: 2 MiB/s, with one second's worth available at first
    through = client(limits.endpoint)

    response = through.get_records(ShardIterator=iterator(through, name, SHARD_0), Limit=30)
    served_at = time.monotonic()
    assert len(response["Records"]) == 30
    # The budget was 2 MiB and the response took 3 MB: it stays negative for about 0.45 s.
    with pytest.raises(ClientError) as throttled:
        through.get_records(ShardIterator=response["NextShardIterator"])
    assert time.monotonic() - served_at < 0.4, "timing: the second call came too late to find the debt"
    assert_throttled(throttled.value, name, SHARD_0)

    time.sleep(max(0.0, served_at + 0.8 - time.monotonic()))  # +1.6 MiB of budget: positive again
    through.get_records(ShardIterator=response["NextShardIterator"])

    stats = limits.shard_stats(name, SHARD_0, "GetRecords")
    assert (stats["calls"], stats["throttled_calls"]) == (3, 1)
    assert stats["bytes"] == 30 * record and stats["records"] == 30
    assert stats["max_bytes_1s"] == 30 * record
    through.close()


def test_calls_after_a_large_response_are_throttled_for_the_penalty(kinesis, stream, proxy):
    name = stream(2)
    record = 100 * KB
    keys = keys_for(kinesis, name, SHARD_0, 8)
    kinesis.put_records(name, [(key, b"z" * record) for key in keys])
    # A 500 kB threshold and a 1.5 s penalty stand in for Kinesis's 10 MB and 5 s; the read budget is off so
    # that only the penalty throttles.
    limits = proxy(large_response_bytes=5 * record, large_response_penalty_s=1.5, read_bytes_per_s=None)
    through = client(limits.endpoint)

    small = through.get_records(ShardIterator=iterator(through, name, SHARD_0), Limit=3)  # 300 kB: no penalty
    large = through.get_records(ShardIterator=small["NextShardIterator"], Limit=5)  # 500 kB: penalty
    large_at = time.monotonic()
    assert (len(small["Records"]), len(large["Records"])) == (3, 5)
    with pytest.raises(ClientError) as throttled:
        through.get_records(ShardIterator=large["NextShardIterator"])
    assert_throttled(throttled.value, name, SHARD_0)
    time.sleep(max(0.0, large_at + 1.0 - time.monotonic()))
    with pytest.raises(ClientError):  # still within the penalty, and no 5-calls limit in the way (4 in 1 s)
        through.get_records(ShardIterator=large["NextShardIterator"])
    assert time.monotonic() - large_at < 1.5, "timing: the second check came after the penalty ended"

    through.get_records(ShardIterator=iterator(through, name, SHARD_1))  # another shard is not penalised

    time.sleep(max(0.0, large_at + 1.6 - time.monotonic()))
    assert through.get_records(ShardIterator=large["NextShardIterator"])["Records"] == []
    stats = limits.shard_stats(name, SHARD_0, "GetRecords")
    assert (stats["calls"], stats["throttled_calls"]) == (5, 2)
    through.close()


def test_put_records_entries_beyond_1000_records_per_second_on_a_shard_are_throttled(kinesis, stream, proxy):
    name = stream(2)
    keys0 = keys_for(kinesis, name, SHARD_0, 1200)
    keys1 = keys_for(kinesis, name, SHARD_1, 300)
    limits = proxy()
    calls = [
        [
            (key, f"{key}-v".encode())
            for key in keys0[400 * c : 400 * (c + 1)] + keys1[100 * c : 100 * (c + 1)]
        ]
        for c in range(3)
    ]  # three calls of 400 entries for shard 0 and 100 for shard 1: 1,200 for shard 0 in all
    clients = [client(limits.endpoint) for _ in calls]
    # Three concurrent calls, so all three reach the proxy within the same second however slowly the
    # emulator writes.
    barrier = threading.Barrier(len(calls))

    def put(index: int) -> tuple[list[tuple[str, bytes]], dict, float]:
        barrier.wait()
        sent = time.monotonic()
        entries = [{"PartitionKey": k, "Data": d} for k, d in calls[index]]
        return calls[index], clients[index].put_records(StreamName=name, Records=entries), sent

    with ThreadPoolExecutor(len(calls)) as pool:
        results = list(pool.map(put, range(len(calls))))
    sent_times = [sent for _, _, sent in results]
    assert max(sent_times) - min(sent_times) < 0.5, "timing: the three calls were not sent together"

    failed: list[tuple[str, bytes]] = []
    for records, response, _ in results:
        assert response["FailedRecordCount"] == sum("ErrorCode" in e for e in response["Records"])
        for (key, data), entry in zip(records, response["Records"], strict=True):
            if "ErrorCode" in entry:
                assert entry["ErrorCode"] == THROTTLED
                assert f"Rate exceeded for shard {SHARD_0} in stream {name}" in entry["ErrorMessage"]
                failed.append((key, data))
            else:
                assert entry["ShardId"] == (SHARD_0 if key in keys0 else SHARD_1)
    assert len(failed) == 200 and all(key in keys0 for key, _ in failed)

    # Throttled entries never reached the emulator: shard 0 holds 1,000 records, shard 1 all 300.
    direct = kinesis.client
    stored = {
        shard: len(direct.get_records(ShardIterator=iterator(direct, name, shard), Limit=10000)["Records"])
        for shard in (SHARD_0, SHARD_1)
    }
    assert stored == {SHARD_0: 1000, SHARD_1: 300}

    stats = limits.stats()
    shard0 = limits.shard_stats(name, SHARD_0, "PutRecords", stats)
    assert (shard0["records"], shard0["throttled_records"], shard0["max_records_1s"]) == (1000, 200, 1000)
    shard1 = limits.shard_stats(name, SHARD_1, "PutRecords", stats)
    assert (shard1["records"], shard1["throttled_records"]) == (300, 0)
    assert stats["placement_mismatches"] == 0

    time.sleep(1.0)  # the window has moved on: the failed entries go through on retry
    retry = clients[0].put_records(
        StreamName=name, Records=[{"PartitionKey": k, "Data": d} for k, d in failed]
    )
    assert retry["FailedRecordCount"] == 0
    for c in clients:
        c.close()


def test_writes_beyond_1_mb_per_second_on_a_shard_are_throttled(stream, proxy):
    name = stream(1)
    limits = proxy()
    through = client(limits.endpoint)
    big = 400 * KB
    response = through.put_records(
        StreamName=name, Records=[{"PartitionKey": f"p{i}", "Data": b"b" * big} for i in range(3)]
    )
    assert response["FailedRecordCount"] == 1  # 2 x 400 kB fit in 1 MiB, the third does not
    assert ["ErrorCode" in e for e in response["Records"]] == [False, False, True]
    with pytest.raises(ClientError) as throttled:  # PutRecord is throttled as a whole call
        through.put_record(StreamName=name, PartitionKey="p", Data=b"b" * big)
    assert_throttled(throttled.value, name, SHARD_0)
    stats = limits.stats()
    assert limits.shard_stats(name, SHARD_0, "PutRecord", stats)["throttled_calls"] == 1
    assert limits.shard_stats(name, SHARD_0, "PutRecords", stats)["bytes"] == 2 * (big + 2)
    through.close()


def raw_call(endpoint: str, operation: str, body: dict, cbor: bool) -> tuple[int, dict[str, str], bytes]:
    """One Kinesis call as plain HTTP/1.1 (the emulator does not check signatures), in JSON or CBOR."""
    request = urllib.request.Request(
        endpoint + "/",
        data=cbor2.dumps(body) if cbor else json.dumps(body).encode(),
        method="POST",
        headers={
            "Content-Type": CBOR_TYPE if cbor else JSON_TYPE,
            "X-Amz-Target": f"Kinesis_20131202.{operation}",
            "Authorization": "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/kinesis/aws4_request, "
            "SignedHeaders=host;x-amz-date, Signature=0",
            "X-Amz-Date": "20260101T000000Z",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def test_other_calls_pass_through_unchanged(emulator, kinesis, stream, proxy):
    name = stream(2)
    puts = kinesis.put_records(name, [(f"k{i}", f"v{i}".encode()) for i in range(20)])
    limits = proxy()
    comparisons = [
        ("ListShards", {"StreamName": name}),
        ("DescribeStreamSummary", {"StreamName": name}),
        ("DescribeStreamSummary", {"StreamName": "no-such-stream"}),  # an error passes through as well
    ]
    for operation, body in comparisons:
        for cbor in (False, True):
            direct = raw_call(emulator.endpoint, operation, body, cbor)
            through = raw_call(limits.endpoint, operation, body, cbor)
            assert through[0] == direct[0], (operation, cbor)
            assert through[1]["content-type"] == direct[1]["content-type"], (operation, cbor)
            assert through[2] == direct[2], (operation, cbor)

    # Records read through the proxy are the records Kinesis stored, in JSON and in CBOR.
    first = puts[0]
    for cbor in (False, True):
        status, _, raw = raw_call(
            limits.endpoint,
            "GetShardIterator",
            {"StreamName": name, "ShardId": first.shard_id, "ShardIteratorType": "TRIM_HORIZON"},
            cbor,
        )
        assert status == 200
        shard_iterator = (cbor2.loads(raw) if cbor else json.loads(raw))["ShardIterator"]
        status, headers, raw = raw_call(
            limits.endpoint, "GetRecords", {"ShardIterator": shard_iterator}, cbor
        )
        assert status == 200 and headers["content-type"] == (CBOR_TYPE if cbor else JSON_TYPE)
        records = (cbor2.loads(raw) if cbor else json.loads(raw))["Records"]
        expected = [p.sequence_number for p in puts if p.shard_id == first.shard_id]
        assert [r["SequenceNumber"] for r in records] == expected

    # boto3 sees the same answers through the proxy as directly.
    through = client(limits.endpoint)
    assert (
        through.list_shards(StreamName=name)["Shards"]
        == kinesis.client.list_shards(StreamName=name)["Shards"]
    )
    with pytest.raises(ClientError) as missing:
        through.describe_stream_summary(StreamName="no-such-stream")
    assert missing.value.response["Error"]["Code"] == "ResourceNotFoundException"
    stats = limits.stats()
    assert limits.operation_stats("ListShards", stats)["calls"] == 3  # 2 raw + 1 boto3; none are throttled
    assert limits.operation_stats("ListShards", stats)["cbor_calls"] == 1
    through.close()


def test_cbor_requests_get_cbor_throttling_answers(kinesis, stream, proxy):
    name = stream(1)
    limits = proxy(write_records_per_s=10)
    status, _, raw = raw_call(
        limits.endpoint,
        "GetShardIterator",
        {"StreamName": name, "ShardId": SHARD_0, "ShardIteratorType": "TRIM_HORIZON"},
        cbor=True,
    )
    shard_iterator = cbor2.loads(raw)["ShardIterator"]
    answers = []
    for _ in range(6):
        status, headers, raw = raw_call(
            limits.endpoint, "GetRecords", {"ShardIterator": shard_iterator}, True
        )
        answers.append(status)
        if status == 200:
            shard_iterator = cbor2.loads(raw)["NextShardIterator"]
    assert answers == [200] * 5 + [400]
    assert headers["content-type"] == CBOR_TYPE
    assert headers["x-amzn-errortype"] == THROTTLED
    error = cbor2.loads(raw)
    assert error["__type"] == THROTTLED and error["message"].startswith(f"Rate exceeded for shard {SHARD_0}")

    entries = [{"PartitionKey": f"k{i}", "Data": b"cbor"} for i in range(12)]
    status, headers, raw = raw_call(
        limits.endpoint, "PutRecords", {"StreamName": name, "Records": entries}, True
    )
    assert status == 200 and headers["content-type"] == CBOR_TYPE
    result = cbor2.loads(raw)
    assert result["FailedRecordCount"] == 2
    assert [e.get("ErrorCode") for e in result["Records"]] == [None] * 10 + [THROTTLED] * 2
    assert all(e["ShardId"] == SHARD_0 for e in result["Records"][:10])


JAVA_CHECK = r"""
import io.kinesisspark.shaded.awssdk.auth.credentials.AwsBasicCredentials;
import io.kinesisspark.shaded.awssdk.auth.credentials.StaticCredentialsProvider;
import io.kinesisspark.shaded.awssdk.awscore.exception.AwsServiceException;
import io.kinesisspark.shaded.awssdk.awscore.retry.AwsRetryStrategy;
import io.kinesisspark.shaded.awssdk.core.SdkBytes;
import io.kinesisspark.shaded.awssdk.http.apache.ApacheHttpClient;
import io.kinesisspark.shaded.awssdk.regions.Region;
import io.kinesisspark.shaded.awssdk.services.kinesis.KinesisClient;
import io.kinesisspark.shaded.awssdk.services.kinesis.model.*;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;

/** The connector's own (shaded) SDK client against the proxy, without retries: what does it make of it? */
public class ProxyCheck {
  public static void main(String[] args) {
    KinesisClient client = KinesisClient.builder()
        .endpointOverride(URI.create(args[0]))
        .region(Region.US_EAST_1)
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
        .httpClient(ApacheHttpClient.builder().build())
        .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry()))
        .build();
    String stream = args[1];
    String iterator = client.getShardIterator(b -> b.streamName(stream).shardId("shardId-000000000000")
        .shardIteratorType(ShardIteratorType.TRIM_HORIZON)).shardIterator();
    for (int i = 1; i <= 6; i++) {
      final String current = iterator;
      try {
        iterator = client.getRecords(b -> b.shardIterator(current)).nextShardIterator();
        System.out.println("getRecords ok");
      } catch (AwsServiceException e) {
        System.out.println("getRecords " + e.getClass().getSimpleName()
            + " code=" + e.awsErrorDetails().errorCode()
            + " status=" + e.statusCode() + " throttling=" + e.isThrottlingException());
      }
    }
    List<PutRecordsRequestEntry> entries = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      entries.add(PutRecordsRequestEntry.builder()
          .partitionKey("k" + i).data(SdkBytes.fromUtf8String("v")).build());
    }
    PutRecordsResponse r = client.putRecords(b -> b.streamName(stream).records(entries));
    long throttled = r.records().stream()
        .filter(e -> "ProvisionedThroughputExceededException".equals(e.errorCode())).count();
    long written = r.records().stream().filter(e -> e.sequenceNumber() != null).count();
    System.out.println(
        "putRecords failed=" + r.failedRecordCount() + " throttled=" + throttled + " written=" + written);
    client.close();
  }
}
"""


@pytest.mark.parametrize("cbor", [True, False], ids=["cbor", "json"])
def test_the_connectors_java_sdk_reads_the_throttling_answers(stream, proxy, tmp_path, cbor):
    """The AWS SDK for Java v2 shaded into the connector jar: CBOR (its default) and JSON both parse."""
    # All three are there wherever the suite runs (dev/test.sh installs the JDK and builds the jar; every pyspark
    # ships slf4j-api): one missing is a broken environment or build, which fails the test rather than skip it.
    java = shutil.which("java")
    assert java, "no java on PATH"
    built = connector_jar()  # FileNotFoundError, saying where it looked, if the jar was not built
    slf4j = glob.glob(str(Path(pyspark.__file__).parent / "jars" / "slf4j-api-*.jar"))
    assert slf4j, f"no slf4j-api jar in {Path(pyspark.__file__).parent / 'jars'}"
    jar = tmp_path / "connector.jar"
    shutil.copy(built, jar)  # a copy: the build may replace the jar while the check runs
    source = tmp_path / "ProxyCheck.java"
    source.write_text(JAVA_CHECK)
    name = stream(1)
    limits = proxy(write_records_per_s=10)
    run = subprocess.run(
        [
            java,
            f"-Daws.cborEnabled={str(cbor).lower()}",
            "-cp",
            f"{jar}:{slf4j[0]}",
            str(source),
            limits.endpoint,
            name,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert lines[:5] == ["getRecords ok"] * 5, run.stdout
    assert lines[5] == (
        "getRecords ProvisionedThroughputExceededException code=ProvisionedThroughputExceededException "
        "status=400 throttling=true"
    ), run.stdout
    assert lines[6] == "putRecords failed=2 throttled=2 written=10", run.stdout
    stats = limits.stats()
    expected_cbor = 6 if cbor else 0
    assert limits.operation_stats("GetRecords", stats)["cbor_calls"] == expected_cbor


def read_everything(kinesis_client, stream: str, shard_id: str, limit: int) -> tuple[int, int, float]:
    """Read a shard from TRIM_HORIZON to its end; returns (records, calls, seconds)."""
    started = time.perf_counter()
    shard_iterator = iterator(kinesis_client, stream, shard_id)
    records = calls = 0
    while True:
        response = kinesis_client.get_records(ShardIterator=shard_iterator, Limit=limit)
        calls += 1
        records += len(response["Records"])
        shard_iterator = response["NextShardIterator"]
        if not response["Records"] and response.get("MillisBehindLatest", 0) == 0:
            return records, calls, time.perf_counter() - started


def test_the_proxy_is_not_the_bottleneck(kinesis, stream, proxy):
    """GetRecords rates through the proxy (limits off) and directly, printed; the assertion is generous."""
    name = stream(1)
    count = 3000
    kinesis.put_records(name, [(f"k{i}", bytes([i % 256]) * KB) for i in range(count)])
    limits = proxy(enabled=False)
    direct, through = client(kinesis.client.meta.endpoint_url), client(limits.endpoint)
    lines = []
    ratios = []
    for limit in (100, 10000):
        best: dict[str, float] = {}
        for _ in range(2):  # alternate, best of two, so a hiccup of either side does not decide
            for label, c in (("direct", direct), ("proxy", through)):
                records, calls, seconds = read_everything(c, name, SHARD_0, limit)
                assert records == count
                best[label] = max(best.get(label, 0.0), records / seconds)
        ratios.append(best["proxy"] / best["direct"])
        lines.append(
            f"Limit={limit:>5}: direct {best['direct']:7.0f} records/s, through the proxy "
            f"{best['proxy']:7.0f} records/s ({ratios[-1]:.0%}), {calls} calls per pass"
        )
    print("\nGetRecords of 1 KB records, one boto3 client:\n  " + "\n  ".join(lines))
    assert min(ratios) > 0.5, "the proxy more than halves the emulator's read rate:\n" + "\n".join(lines)
    assert limits.operation_stats("GetRecords")["throttled_calls"] == 0
    direct.close()
    through.close()
