"""ListShards responses that leave shards out (an incomplete page, a listing taken mid-reshard) must not change what
the query reads: one listing is never trusted on its own.

The limits proxy's ``omit_shards`` leaves shards out of every ListShards response for a while. Reproduced before the
fix: an open shard left out of one listing was reported lost (the query failed under the default
``failOnDataLoss``), and a parent read to its end that was left out dropped out of the offset and came back at
TRIM_HORIZON with the next listing, its records read a second time.
"""

from __future__ import annotations

import time

import pytest
from test_polling_source import assert_delivered_exactly, numbered

# Listings every second; shards are left out for several of them.
OPTIONS = {"initialPosition": "trim_horizon", "shardFetchInterval": "1s"}
OMITTED_S = 4.5


def split_stream(kinesis, stream) -> tuple[str, list, str, str]:
    """A stream of one shard with records, split in two, with records in both children."""
    name = stream(1)
    puts = kinesis.put_records(name, numbered(60, prefix="parent"))
    parent = kinesis.open_shards(name)[0]["ShardId"]
    kinesis.split_shard(name, parent)
    children = [s["ShardId"] for s in kinesis.open_shards(name)]
    puts += kinesis.put_records(name, numbered(60, prefix="children"))
    return name, puts, parent, children[0]


def leave_out(account, shards: list[str]) -> None:
    account.set_limits(omit_shards=shards)
    time.sleep(OMITTED_S)
    account.set_limits(omit_shards=None)
    time.sleep(OMITTED_S)


@pytest.mark.parametrize("left_out", ["open child", "finished parent"])
def test_shards_missing_from_listings_are_neither_lost_nor_read_again(left_out, kinesis, stream, read_kinesis, sink, proxy):
    name, puts, parent, child = split_stream(kinesis, stream)
    account = proxy()
    query = sink.start(read_kinesis(name, endpoint=account.endpoint, **OPTIONS))
    sink.wait_for_rows(query, len(puts))

    leave_out(account, [child if left_out == "open child" else parent])
    assert query.isActive, f"the query failed: {query.exception()}"
    puts += kinesis.put_records(name, numbered(40, prefix="after"))
    assert_delivered_exactly(sink.wait_for_rows(query, len(puts)), puts, name)
