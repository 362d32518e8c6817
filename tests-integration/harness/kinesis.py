"""The test side's view of Kinesis: boto3 calls that create, fill and reshard streams on the emulator.

Every helper waits for the state the connector will observe (stream ACTIVE, every record acknowledged) and
returns what Kinesis reported, so tests can compare the connector's output with the producer's ground truth.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import boto3
from botocore.config import Config

from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY

PUT_RECORDS_LIMIT = 500  # records per PutRecords call, a Kinesis limit
# (partition key, data), or (partition key, data, explicit hash key)
Record = tuple[str, bytes] | tuple[str, bytes, int | str]
PUT_ATTEMPTS = 10
ACTIVE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class PutResult:
    """One acknowledged record and where Kinesis put it.

    ``sent_at`` and ``acknowledged_at`` (epoch seconds) bracket the PutRecords call that stored it, and so
    its approximate arrival timestamp.
    """

    partition_key: str
    data: bytes
    shard_id: str
    sequence_number: str
    sent_at: float
    acknowledged_at: float


@dataclass(frozen=True)
class StoredRecord:
    """A record as GetRecords returns it."""

    shard_id: str
    sequence_number: str
    partition_key: str
    data: bytes


def _entry(record: Record) -> dict:
    """The PutRecords entry of one record."""
    entry = {"PartitionKey": record[0], "Data": record[1]}
    if len(record) > 2:
        entry["ExplicitHashKey"] = str(record[2])
    return entry


def boto_client(endpoint: str, max_attempts: int = 5, read_timeout_s: float = 60):  # noqa: ANN201 (no static type)
    """A boto3 Kinesis client for ``endpoint`` (region us-east-1, keys ``test``/``test``); ``max_attempts=1``
    makes exactly one attempt per call (to see throttling as it happens)."""
    retries = {"mode": "standard", "max_attempts": max_attempts} if max_attempts > 1 else {"total_max_attempts": 1}
    return boto3.client(
        "kinesis",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        config=Config(retries=retries, read_timeout=read_timeout_s),
    )


class Kinesis:
    """boto3 Kinesis client for one emulator endpoint (region us-east-1, keys ``test``/``test``)."""

    def __init__(self, endpoint: str) -> None:
        self.client = boto_client(endpoint)

    def close(self) -> None:
        """Close the client's connections (the emulator's graceful shutdown waits for open ones)."""
        self.client.close()

    def create_stream(self, name: str, shards: int) -> None:
        """Create a provisioned stream and wait until it is ACTIVE."""
        self.client.create_stream(StreamName=name, ShardCount=shards)
        self.wait_active(name)

    def delete_stream(self, name: str) -> None:
        """Delete a stream (and its consumers) without waiting; frees the emulator's memory and CPU."""
        self.client.delete_stream(StreamName=name, EnforceConsumerDeletion=True)

    def delete_and_wait(self, name: str, timeout_s: float = ACTIVE_TIMEOUT_S) -> None:
        """Delete a stream and wait until Kinesis no longer knows it (so its name can be used again)."""
        self.delete_stream(name)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                self.client.describe_stream_summary(StreamName=name)
            except self.client.exceptions.ResourceNotFoundException:
                return
            time.sleep(0.05)
        raise TimeoutError(f"stream {name} still exists {timeout_s:.0f} s after DeleteStream")

    def wait_active(self, name: str, timeout_s: float = ACTIVE_TIMEOUT_S) -> None:
        """Wait until the stream is ACTIVE (after create, split, merge or update shard count)."""
        deadline = time.monotonic() + timeout_s
        status = "unknown"
        while time.monotonic() < deadline:
            status = self.client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"][
                "StreamStatus"
            ]
            if status == "ACTIVE":
                return
            time.sleep(0.05)
        raise TimeoutError(f"stream {name} still {status} after {timeout_s:.0f} s")

    def shards(self, name: str) -> list[dict]:
        """Every shard of the stream, open and closed, as ListShards reports them."""
        shards: list[dict] = []
        request: dict = {"StreamName": name}
        while True:
            response = self.client.list_shards(**request)
            shards.extend(response["Shards"])
            token = response.get("NextToken")
            if not token:
                return shards
            request = {"NextToken": token}

    def hash_key_range(self, stream: str, shard_id: str) -> tuple[int, int]:
        """The (starting, ending) hash keys of a shard, both inclusive."""
        shard = next(s for s in self.shards(stream) if s["ShardId"] == shard_id)
        return int(shard["HashKeyRange"]["StartingHashKey"]), int(shard["HashKeyRange"]["EndingHashKey"])

    def put_records(self, stream: str, records: Iterable[Record]) -> list[PutResult]:
        """Put (partition key, data) records in order, in PutRecords calls of at most 500.

        A record may carry a third element, an explicit hash key (an int or its decimal string), which places
        it in the shard whose hash key range holds that key instead of the one the partition key's MD5 picks.
        Entries a call reports as failed are retried (in their original order, before the next batch) so
        that every record is stored exactly once; returns one result per record, in input order.
        """
        records = list(records)
        results: list[PutResult] = []
        for start in range(0, len(records), PUT_RECORDS_LIMIT):
            results.extend(self._put_batch(stream, records[start : start + PUT_RECORDS_LIMIT]))
        return results

    def _put_batch(self, stream: str, batch: Sequence[Record]) -> list[PutResult]:
        acknowledged: dict[int, PutResult] = {}
        pending = list(range(len(batch)))
        for attempt in range(PUT_ATTEMPTS):
            sent_at = time.time()
            response = self.client.put_records(
                StreamName=stream,
                Records=[_entry(batch[i]) for i in pending],
            )
            acknowledged_at = time.time()
            failed = []
            for index, entry in zip(pending, response["Records"], strict=True):
                if "ErrorCode" in entry:
                    failed.append(index)
                else:
                    key, data = batch[index][0], batch[index][1]
                    acknowledged[index] = PutResult(
                        key, data, entry["ShardId"], entry["SequenceNumber"], sent_at, acknowledged_at
                    )
            if not failed:
                return [acknowledged[i] for i in range(len(batch))]
            pending = failed
            time.sleep(min(0.1 * 2**attempt, 2.0))
        raise RuntimeError(
            f"{len(pending)} records to {stream} still failing after {PUT_ATTEMPTS} PutRecords attempts"
        )

    def read_all(self, stream: str) -> list[dict]:
        """Every record of every shard, from the oldest, as boto3 returns them plus ``ShardId``: shard by shard,
        in shard order, until a shard's GetRecords returns nothing more (nothing is being written meanwhile)."""
        records: list[dict] = []
        for shard in self.shards(stream):
            iterator = self.client.get_shard_iterator(
                StreamName=stream, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
            )["ShardIterator"]
            while iterator:
                response = self.client.get_records(ShardIterator=iterator, Limit=10000)
                records.extend({**r, "ShardId": shard["ShardId"]} for r in response["Records"])
                if not response["Records"] and response.get("MillisBehindLatest", 0) == 0:
                    break
                iterator = response.get("NextShardIterator")
        return records

    def split_shard(self, stream: str, shard_id: str, new_starting_hash_key: int | None = None) -> None:
        """Split a shard (by default at the midpoint of its hash key range) and wait until ACTIVE."""
        if new_starting_hash_key is None:
            shard = next(s for s in self.shards(stream) if s["ShardId"] == shard_id)
            low = int(shard["HashKeyRange"]["StartingHashKey"])
            high = int(shard["HashKeyRange"]["EndingHashKey"])
            new_starting_hash_key = (low + high + 1) // 2
        self.client.split_shard(
            StreamName=stream, ShardToSplit=shard_id, NewStartingHashKey=str(new_starting_hash_key)
        )
        self.wait_active(stream)

    def open_shards(self, stream: str) -> list[dict]:
        """The open shards (no ending sequence number), in hash key order."""
        shards = [s for s in self.shards(stream) if "EndingSequenceNumber" not in s.get("SequenceNumberRange", {})]
        return sorted(shards, key=lambda s: int(s["HashKeyRange"]["StartingHashKey"]))

    def merge_adjacent(self, stream: str, index: int = 0) -> str:
        """Merge the open shard at ``index`` (in hash key order) with the next one and wait until ACTIVE;
        returns the id of the shard merged into."""
        shards = self.open_shards(stream)
        first, second = shards[index], shards[index + 1]
        self.client.merge_shards(
            StreamName=stream, ShardToMerge=first["ShardId"], AdjacentShardToMerge=second["ShardId"]
        )
        self.wait_active(stream)
        return str(first["ShardId"])

    def stored_records(self, stream: str) -> list[StoredRecord]:
        """Every record the stream holds (see :meth:`read_all`) as the ground truth of an exactly-once check."""
        return [
            StoredRecord(r["ShardId"], r["SequenceNumber"], r["PartitionKey"], bytes(r["Data"]))
            for r in self.read_all(stream)
        ]

    def update_shard_count(self, stream: str, target: int) -> None:
        """Reshard uniformly to ``target`` open shards and wait until ACTIVE."""
        self.client.update_shard_count(
            StreamName=stream, TargetShardCount=target, ScalingType="UNIFORM_SCALING"
        )
        self.wait_active(stream)
