"""Retention trimming, played by the limits proxy: records that arrived before its trim horizon are gone, and every
way of reading goes on from the oldest record left, as on AWS (see the proxy's table). A query that resumes after a
record retention took must not read on as if nothing happened: with ``failOnDataLoss`` (the default) it fails naming
the stream, the shard and the position; without it, it counts the loss in ``dataLossEvents`` and reads everything
left, once.

Reproduced before the fix: the resumed query read the records left and went on, and the expired ones were lost
without a word, whatever ``failOnDataLoss`` said (the reader resumed AFTER its last record, and Kinesis does not
refuse that iterator).
"""

from __future__ import annotations

import time

import pytest
from harness.sink import ProgressLog, wait_for_failure
from test_polling_source import assert_delivered_exactly, numbered

SHARD = "shardId-000000000000"
# Between the records that expire and those kept: wider than the emulator's arrival-time precision and clock steps.
GAP_S = 1.5


@pytest.mark.parametrize("fail_on_data_loss", [True, False], ids=["failOnDataLoss", "no-failOnDataLoss"])
def test_a_query_resuming_after_expired_records(fail_on_data_loss, kinesis, stream, read_kinesis, sink, proxy):
    name = stream(1)
    read = kinesis.put_records(name, numbered(40, prefix="read"))
    account = proxy()
    options = {"endpoint": account.endpoint, "initialPosition": "trim_horizon",
               "failOnDataLoss": str(fail_on_data_loss).lower()}
    query = sink.start(read_kinesis(name, **options))
    sink.wait_for_rows(query, 40)
    query.stop()

    kinesis.put_records(name, numbered(30, prefix="expired"))
    time.sleep(GAP_S)
    horizon_ms = time.time() * 1000
    time.sleep(GAP_S)
    kept = kinesis.put_records(name, numbered(25, prefix="kept"))
    account.set_limits(trim_horizon_ms=horizon_ms)

    query = sink.start(read_kinesis(name, **options))
    if fail_on_data_loss:
        message = wait_for_failure(query, timeout_s=90)
        last_read = read[-1].sequence_number
        for part in (f"'{name}'", SHARD, last_read, "failOnDataLoss"):
            assert part in message, f"{part!r} not in the error: {message[:2000]}"
        return
    progress = ProgressLog(query)
    records = sink.wait_for_rows(query, 40 + 25, on_poll=progress.poll)
    assert not [r for r in records if r.data.startswith(b"expired")], "an expired record was read"
    assert_delivered_exactly([r for r in records if r.data.startswith(b"kept")], kept, name)
    assert max(progress.metric("dataLossEvents")) == 1
    assert account.operation_stats("GetRecords")["trimmed_records"] > 0, "the proxy trimmed nothing"
