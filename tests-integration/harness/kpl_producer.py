"""KPL aggregates for end-to-end tests: made by an independent producer (PyPI ``aws-kinesis-agg``, the awslabs
Python aggregator), put where a test says, with the rows they must become (``Producer.expected``)."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass

from aws_kinesis_agg.aggregator import RecordAggregator

from harness.kinesis import PutResult
from harness.sink import SinkRecord


@dataclass(frozen=True)
class UserRecord:
    """A record as the producer hands it to the aggregator; ``explicit_hash_key`` is a decimal string."""

    partition_key: str
    data: bytes
    explicit_hash_key: str | None = None


# One expected row: (shard, sequence number, sub-sequence number or None, partition key, data).
Row = tuple[str, str, int | None, str, bytes]


def aggregate(records: list[UserRecord]) -> tuple[str, bytes]:
    """One aggregate of ``records`` made by aws-kinesis-agg: its outer partition key and its bytes."""
    aggregator = RecordAggregator()
    for record in records:
        full = aggregator.add_user_record(record.partition_key, record.data, record.explicit_hash_key)
        assert full is None, "the test's user records must fit in one aggregate"
    built = aggregator.clear_and_get()
    assert built.get_num_user_records() == len(records)
    partition_key, _, data = built.get_contents()
    return partition_key, data


def users(prefix: str, count: int) -> list[UserRecord]:
    """``count`` user records with distinct keys and data; key and data vary in length, unicode and bytes."""
    return [
        UserRecord(f"{prefix}-ключ-{i}", f"{prefix}-{i}:".encode() + bytes(range(i % 7)) * (i % 5))
        for i in range(count)
    ]


def hash_key(partition_key: str) -> int:
    """A partition key's hash key in Kinesis: its MD5 digest as a 128-bit unsigned big-endian number."""
    return int.from_bytes(hashlib.md5(partition_key.encode()).digest(), "big")


def effective_hash_key(record: UserRecord) -> int:
    return int(record.explicit_hash_key) if record.explicit_hash_key is not None else hash_key(record.partition_key)


class Producer:
    """Puts aggregates and plain records on one stream, in order, and keeps the rows they must become.

    Like aws-kinesis-agg (unlike the KPL, which groups user records by shard), it puts an aggregate wherever the
    test says, whatever its user records' hash keys: ``out_of_range`` counts those outside the shard's range.
    """

    def __init__(self, kinesis, name: str) -> None:
        self.kinesis = kinesis
        self.name = name
        self.ranges = {
            s["ShardId"]: (int(s["HashKeyRange"]["StartingHashKey"]), int(s["HashKeyRange"]["EndingHashKey"]))
            for s in kinesis.shards(name)
        }
        self.expected: list[Row] = []
        self.out_of_range = 0

    @property
    def shards(self) -> list[str]:
        return sorted(self.ranges)

    def put_aggregate(self, shard: str, records: list[UserRecord]) -> PutResult:
        outer_key, data = aggregate(records)
        put = self._put(shard, outer_key, data)
        low, high = self.ranges[shard]
        self.out_of_range += sum(not low <= effective_hash_key(r) <= high for r in records)
        self.expected.extend(
            (put.shard_id, put.sequence_number, i, r.partition_key, r.data) for i, r in enumerate(records)
        )
        return put

    def put_plain(self, shard: str, partition_key: str, data: bytes) -> PutResult:
        """A record that must come out as it went in (a plain record, or one that is not a valid aggregate)."""
        put = self._put(shard, partition_key, data)
        self.expected.append((put.shard_id, put.sequence_number, None, partition_key, data))
        return put

    def _put(self, shard: str, partition_key: str, data: bytes) -> PutResult:
        # The shard's starting hash key as explicit hash key places the record in that shard.
        (put,) = self.kinesis.put_records(self.name, [(partition_key, data, self.ranges[shard][0])])
        assert put.shard_id == shard
        return put


def in_shard(producer: Producer, shard: str, records: list[UserRecord]) -> list[UserRecord]:
    """The user records with the shard's starting hash key as explicit hash key. KCL 2.x drops a whole aggregate
    holding a user record whose hash key lies outside its shard; KPL itself aggregates only records of one shard."""
    low = producer.ranges[shard][0]
    return [UserRecord(r.partition_key, r.data, str(low)) for r in records]


def rows(records: list[SinkRecord]) -> list[Row]:
    return [(r.shard_id, r.sequence_number, r.sub_sequence_number, r.partition_key, r.data) for r in records]


def assert_rows_exactly(records: list[SinkRecord], expected: list[Row]) -> None:
    """The sink holds exactly the expected rows, each once (compared as multisets, with a readable diff)."""
    got, want = Counter(rows(records)), Counter(expected)
    repeated = {row: n for row, n in got.items() if n > 1}
    assert not repeated, f"{len(repeated)} rows delivered more than once, e.g. {list(repeated.items())[:3]}"
    missing, unexpected = want - got, got - want
    assert not missing and not unexpected, (
        f"{sum(missing.values())} rows missing, e.g. {list(missing)[:3]}; "
        f"{sum(unexpected.values())} unexpected, e.g. {list(unexpected)[:3]}"
    )
