"""ListShards responses that leave shards out (an incomplete page, a listing taken mid-reshard) must not change what
the query reads: one listing is never trusted on its own.

The limits proxy's ``omit_shards`` leaves shards out of every ListShards response for a while. Reproduced before the
fix: an open shard left out of one listing was reported lost (the query failed under the default
``failOnDataLoss``), and a parent read to its end that was left out dropped out of the offset and came back at
TRIM_HORIZON with the next listing, its records read a second time.

Nine listings in ten ask only for the shards after the highest id known (ShardFilter AFTER_SHARD_ID), which never
holds the parent or the first child: only a full listing, one in ten, can miss them. So the shard stays hidden until
the proxy has served listings that did leave it out (its ``omitted_listings``), not for a fixed time: 3 for the open
child (a listing that misses it is refused, and the next listing is a full one again, a second later), 1 for the
parent (a full listing that misses it is accepted, and the next full one comes 10 listings later).
"""

from __future__ import annotations

import time

import pytest
from test_polling_source import assert_delivered_exactly, numbered

# Listings every second; a full listing every 10 (ShardListings.FullListingEvery).
OPTIONS = {"initialPosition": "trim_horizon", "shardFetchInterval": "1s"}
# Listings that must have left the shard out, by case (see the module documentation).
OMISSIONS = {"open child": 3, "finished parent": 1}
# The longest wait for them: the first comes with the next full listing, within 10 s of listings.
OMISSIONS_TIMEOUT_S = 40.0
VISIBLE_S = 4.5


def split_stream(kinesis, stream) -> tuple[str, list, str, str]:
    """A stream of one shard with records, split in two, with records in both children."""
    name = stream(1)
    puts = kinesis.put_records(name, numbered(60, prefix="parent"))
    parent = kinesis.open_shards(name)[0]["ShardId"]
    kinesis.split_shard(name, parent)
    children = [s["ShardId"] for s in kinesis.open_shards(name)]
    puts += kinesis.put_records(name, numbered(60, prefix="children"))
    return name, puts, parent, children[0]


def leave_out(account, shards: list[str], omissions: int) -> int:
    """Leaves the shards out of ListShards answers until ``omissions`` answers did leave them out, then lists them
    again for a few listings; returns how many answers left them out."""
    before = account.operation_stats("ListShards")["omitted_listings"]
    account.set_limits(omit_shards=shards)
    deadline = time.monotonic() + OMISSIONS_TIMEOUT_S
    while account.operation_stats("ListShards")["omitted_listings"] - before < omissions and time.monotonic() < deadline:
        time.sleep(0.1)
    account.set_limits(omit_shards=None)
    served = account.operation_stats("ListShards")["omitted_listings"] - before
    time.sleep(VISIBLE_S)
    return served


@pytest.mark.parametrize("left_out", ["open child", "finished parent"])
def test_shards_missing_from_listings_are_neither_lost_nor_read_again(left_out, kinesis, stream, read_kinesis, sink, proxy):
    name, puts, parent, child = split_stream(kinesis, stream)
    account = proxy()
    query = sink.start(read_kinesis(name, endpoint=account.endpoint, **OPTIONS))
    sink.wait_for_rows(query, len(puts))

    omitted = leave_out(account, [child if left_out == "open child" else parent], OMISSIONS[left_out])
    assert omitted >= OMISSIONS[left_out], f"{omitted} listings of the query left the {left_out} out"
    assert query.isActive, f"the query failed: {query.exception()}"
    puts += kinesis.put_records(name, numbered(40, prefix="after"))
    assert_delivered_exactly(sink.wait_for_rows(query, len(puts)), puts, name)
