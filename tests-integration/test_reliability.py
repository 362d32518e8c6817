"""Faults on a Spark local cluster (two executor JVMs): nothing lost and nothing repeated in the sink's committed
output, with a producer writing keyed, numbered records throughout.

Marked ``reliability`` (``pytest -m reliability`` runs only these; ``-m "not reliability"`` skips them); CI runs
them with the rest. Each test adds a row to ``target/test-reports/reliability.md`` (see :mod:`harness.reliability`):
the fault, what happened, records lost and duplicated, and the time from the fault until the query delivered records
again.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
from pathlib import Path

import pytest
from harness.cluster import ClusterJob
from harness.emulator import KinesisEmulator
from harness.kinesis import Kinesis
from harness.producer import KeyedProducer, assert_per_key_order
from harness.reliability import delivered_after, finish, record, source_options
from harness.sink import BatchSink
from test_kpl_deaggregation import aggregate, users

pytestmark = pytest.mark.reliability


@pytest.mark.parametrize("mode", ["polling", "efo"])
def test_executor_killed_while_holding_prefetched_blocks(kinesis, emulator, stream, spark, tmp_path, cluster_job, mode):
    """With ``efo`` the killed executors also held the subscriptions: new executors subscribe again."""
    name = stream(4)
    producer = KeyedProducer(emulator.endpoint, name).start()
    # A long trigger: between batches, the executors' prefetchers fill their buffers.
    options = source_options(emulator.endpoint, name, consumerMode=mode)
    job = cluster_job(tmp_path / "job", options, trigger_s=8).start()
    killed_at = time.time()
    before = kill_while_blocks_wait(job, tmp_path / "job" / "checkpoint")
    recovery = delivered_after(job, killed_at)
    producer.wait_rounds(20)
    rows, puts, delivery = finish(job, producer, kinesis, name, spark, tmp_path / "job")
    delivery.assert_exactly_once()
    assert_per_key_order(rows, puts)
    reread = [int(p["sources"][0]["metrics"]["blockReadsFromKinesis"]) for p in job.progress()]
    assert reread and reread[-1] > 0, (
        f"no batch after the kill read a block of the killed executors again from Kinesis (killed after batch "
        f"{before['batchId']}, {before['sources'][0]['metrics']['bufferedRecords']} records buffered)"
    )
    record(f"both executor JVMs killed (SIGKILL) while holding prefetched blocks ({mode})",
           "blocks re-read from Kinesis by the next batch; query continued", delivery, recovery)


def last_batch(checkpoint: Path, log: str) -> int:
    """The newest batch id in the checkpoint's ``offsets`` (planned) or ``commits`` (committed) log."""
    return max((int(p.name) for p in (checkpoint / log).iterdir() if p.name.isdigit()), default=-1)


def kill_while_blocks_wait(job: ClusterJob, checkpoint: Path, timeout_s: float = 180.0) -> dict:
    """SIGKILLs both executor JVMs between two batches while their prefetched blocks hold records after the end of
    the last batch, which the next batch must then read from those blocks: once the newest progress report read
    records and names records buffered after its batch's end (``oldestBufferedRecordAgeMs`` is reported only
    then), and no later batch is planned yet (the offsets log ends at its batch; the next one starts at the next
    trigger, seconds away). Returns that report. Replaces a fixed sleep after a report, which now and then let the
    next batch take the blocks first, so that the kill left no block for any batch to miss."""
    deadline = time.monotonic() + timeout_s
    while True:
        reports = job.progress()
        latest = reports[-1] if reports else None
        if (
            latest is not None
            and latest["numInputRows"] > 0
            and "oldestBufferedRecordAgeMs" in latest["sources"][0]["metrics"]
            and last_batch(checkpoint, "offsets") == latest["batchId"]
        ):
            assert len(job.kill_executors()) == 2
            return latest
        assert time.monotonic() < deadline, f"no batch ended with records buffered after it: {reports[-3:]}"
        time.sleep(0.1)


SILENCE_LIMIT_MS = 3000  # the production limit is 15 s (RoundDispatcher.SilenceLimitMillis)


def metric(job: ClusterJob, name: str) -> int:
    """A source metric of the job's latest progress report (0 before any)."""
    reports = job.progress()
    return int(reports[-1]["sources"][0]["metrics"].get(name, "0")) if reports else 0


def test_executors_paused_past_the_silence_limit_have_their_late_results_refused(
    kinesis, emulator, stream, spark, tmp_path, cluster_job, proxy
):
    """Both executor JVMs are paused (SIGSTOP) while they hold prefetch tickets, for longer than the silence limit:
    the driver gives the tickets up (their executors are still registered, only silent) and their shards are fetched
    again; resumed (SIGCONT), the executors deliver the tickets' results late, which the driver refuses, and remove
    the blocks of those results. Every GetRecords call takes 1 s (through the limits proxy), so executors hold tickets
    most of the time; a pause that caught none (no ticket lost) is tried again. Counted by the source's metrics
    ``fetchTicketsLost``, ``fetchResultsRefused``, ``fetchRefusedBlocks`` (the blocks the refused results had
    stored, counted by the driver) and ``fetchRefusedBlocksRemoved`` (those the executors said they removed)."""
    name = stream(4)
    producer = KeyedProducer(emulator.endpoint, name).start()
    slow = proxy(delays_s={"GetRecords": 1.0})
    options = source_options(slow.endpoint, name)
    conf = {"spark.kinesisspark.test.prefetchSilenceLimitMs": str(SILENCE_LIMIT_MS)}
    job = cluster_job(tmp_path / "job", options, conf=conf).start()
    job.wait_progress(lambda p: p["numInputRows"] > 0)
    paused = job.executor_pids()
    assert len(paused) == 2, paused
    pause_s = SILENCE_LIMIT_MS / 1000 + 3  # past the limit, the driver's liveness check and a listing cadence
    for attempt in range(4):
        lost_before = metric(job, "fetchTicketsLost")
        for pid in paused:
            os.kill(pid, signal.SIGSTOP)
        time.sleep(pause_s)
        for pid in paused:
            os.kill(pid, signal.SIGCONT)
        resumed_at = time.time()
        job.wait_event(lambda e, at=resumed_at: e["event"] == "progress" and e["time"] > at + 2, 120)
        if metric(job, "fetchTicketsLost") > lost_before:
            break
        time.sleep(1 + attempt)  # a pause at another moment of the rounds
    else:
        raise AssertionError(f"four pauses of {pause_s:.0f} s lost no prefetch ticket")
    refused = job.wait_progress(lambda p: int(p["sources"][0]["metrics"]["fetchResultsRefused"]) > 0, 120)

    def all_removed(progress: dict) -> bool:
        """The refused results stored blocks (the producer writes all along), and their executors removed them all:
        each says so right after the driver's answer."""
        counts = progress["sources"][0]["metrics"]
        refused_blocks = int(counts["fetchRefusedBlocks"])
        return refused_blocks > 0 and int(counts["fetchRefusedBlocksRemoved"]) == refused_blocks

    removed = job.wait_progress(all_removed, 60)["sources"][0]["metrics"]
    recovery = delivered_after(job, resumed_at)
    producer.wait_rounds(20)
    rows, puts, delivery = finish(job, producer, kinesis, name, spark, tmp_path / "job")
    assert slow.operation_stats("GetRecords")["delayed_calls"] > 0
    record(
        f"both executor JVMs paused (SIGSTOP) for {pause_s:.0f} s, past a {SILENCE_LIMIT_MS / 1000:.0f} s silence "
        "limit, while they fetched",
        f"{metric(job, 'fetchTicketsLost')} ticket(s) given up and fetched again, "
        f"{refused['sources'][0]['metrics']['fetchResultsRefused']} late result(s) refused, their "
        f"{removed['fetchRefusedBlocksRemoved']} block(s) removed; "
        f"pauses: {attempt + 1}",
        delivery,
        recovery,
    )
    delivery.assert_exactly_once()
    assert_per_key_order(rows, puts)


def start_with_a_slow_shard(emulator, cluster_job, name: str, root: Path):  # noqa: ANN001, ANN201
    """A producer and a job whose batches run for seconds (so a kill lands inside one), yet keep up: about 50
    records/s a shard, and each row of shard 0 costs 10 ms in its task. Returns them once a batch read records."""
    producer = KeyedProducer(emulator.endpoint, name, interval_s=0.2).start()
    job = cluster_job(root, source_options(emulator.endpoint, name), slow_shard="shardId-000000000000", slow_ms=10)
    batch = job.start().wait_progress(lambda p: p["numInputRows"] > 100)
    time.sleep(1.0)
    return producer, job, batch


def test_executors_killed_while_a_batch_is_running(kinesis, emulator, stream, spark, tmp_path, cluster_job):
    """The batch's tasks die with their JVMs and run again on new executors, re-reading the lost blocks."""
    name = stream(2)
    producer, job, _ = start_with_a_slow_shard(emulator, cluster_job, name, tmp_path / "job")
    checkpoint = tmp_path / "job" / "checkpoint"
    running = last_batch(checkpoint, "offsets") == last_batch(checkpoint, "commits") + 1
    killed_at = time.time()
    assert len(job.kill_executors()) == 2
    assert running, "the kill did not land inside a batch"
    recovery = delivered_after(job, killed_at)
    producer.wait_rounds(20)
    rows, puts, delivery = finish(job, producer, kinesis, name, spark, tmp_path / "job")
    record("both executor JVMs killed (SIGKILL) while a batch was running",
           "the batch's tasks ran again on new executors; query continued", delivery, recovery)
    delivery.assert_exactly_once()
    assert_per_key_order(rows, puts)


def kill_between_write_and_commit(job: ClusterJob, root: Path, timeout_s: float = 120.0) -> int:
    """SIGKILLs the driver's process group once a batch's output is written and its commit is not; returns the
    batch. The job waits ``batch_delay_s`` after each write, which makes that window."""
    out, checkpoint = root / "out", root / "checkpoint"
    deadline = time.monotonic() + timeout_s
    while True:
        committed = last_batch(checkpoint, "commits")
        written = [int(p.name.removeprefix("batch=")) for p in out.glob("batch=*") if (p / "_SUCCESS").is_file()]
        pending = [batch for batch in written if batch > committed]
        if pending:
            job.kill()
            assert last_batch(checkpoint, "commits") < pending[0], "the batch committed before the kill"
            return pending[0]
        assert time.monotonic() < deadline, f"no batch written and left uncommitted; committed up to {committed}"
        time.sleep(0.05)


@pytest.mark.parametrize("mode", ["polling", "efo"])
def test_driver_killed_between_a_batch_s_write_and_its_commit_replays_the_same_records(
    kinesis, emulator, stream, spark, tmp_path, cluster_job, mode
):
    """After the restart Spark runs the uncommitted batch again with the offsets it planned, over its own output: a
    sink that skips batch ids it has written (Delta's ``txnVersion``) is exactly-once only if the replay reads the
    same records. ``finish`` compares the replay with the first attempt, record for record."""
    name = stream(2)
    producer = KeyedProducer(emulator.endpoint, name).start()
    root = tmp_path / "job"
    options = source_options(emulator.endpoint, name, consumerMode=mode)
    job = cluster_job(root, options, batch_delay_s=3.0).start()
    job.wait_progress(lambda p: p["numInputRows"] > 0)
    batch = kill_between_write_and_commit(job, root)
    killed_at = time.time()
    job.start()
    recovery = delivered_after(job, killed_at)
    producer.wait_rounds(20)
    rows, puts, delivery = finish(job, producer, kinesis, name, spark, root)
    replays = BatchSink(spark, root).replays()
    assert [len(attempt) > 0 for attempt in replays.get(batch, [])] == [True], (
        f"batch {batch}'s records were not written again once after the restart: replays {sorted(replays)}"
    )
    record(f"driver process group killed (SIGKILL) after a batch's write, before its commit ({mode})",
           f"batch {batch} ran again after the restart and wrote the same {len(replays[batch][0])} records; "
           "query continued", delivery, recovery)
    delivery.assert_exactly_once()
    assert_per_key_order(rows, puts)

OUTAGE_S = 20.0


@pytest.fixture
def persistent_emulator(tmp_path):  # noqa: ANN001, ANN201
    """An emulator of this test's own that keeps its streams on disk, so it can be stopped and started again."""
    settings = {"SHOULD_PERSIST_DATA": "true", "PERSIST_PATH": str(tmp_path / "emulator-data"), "PERSIST_INTERVAL": "500ms"}
    with KinesisEmulator(log_path=tmp_path / "emulator.log", settings=settings) as running:
        yield running


@pytest.mark.parametrize("mode", ["polling", "efo"])
def test_kinesis_unreachable_for_20_seconds(persistent_emulator, spark, tmp_path, cluster_job, mode):
    """Inside the retry budget (see TransientBackoff: 36 s at the least), the query rides the outage out."""
    kinesis = Kinesis(persistent_emulator.endpoint)
    name = f"outage-{mode}"
    kinesis.create_stream(name, 2)
    producer = KeyedProducer(persistent_emulator.endpoint, name).start()
    job = cluster_job(tmp_path / "job", source_options(persistent_emulator.endpoint, name, consumerMode=mode)).start()
    job.wait_progress(lambda p: p["numInputRows"] > 0)
    # Every acknowledged record must be on disk before the emulator goes: it persists every 500 ms.
    producer.pause()
    time.sleep(1.5)
    persistent_emulator.stop()
    time.sleep(OUTAGE_S)
    persistent_emulator.start()
    back_at = time.time()
    producer.resume()
    recovery = delivered_after(job, back_at)  # counted from Kinesis being back: records buffered before still flow
    producer.wait_rounds(20)
    rows, puts, delivery = finish(job, producer, kinesis, name, spark, tmp_path / "job")
    kinesis.close()
    assert "failed (" in job.stderr_tail(4000) + job.executor_logs(), "no call failed while Kinesis was down"
    record(f"Kinesis (the emulator) stopped for {OUTAGE_S:.0f} s, then started again ({mode})",
           "calls retried with back-off; query continued", delivery, recovery)
    delivery.assert_exactly_once()
    assert_per_key_order(rows, puts)


# TransientBackoff.MaxFailuresConf: the retry budget, in failures in a row, of every caller in the application.
RETRY_BUDGET_CONF = "spark.kinesisspark.test.transientMaxFailures"


@pytest.mark.parametrize("mode", ["polling", "efo"])
def test_kinesis_unreachable_past_the_retry_budget_fails_the_query_and_a_restart_loses_nothing(
    persistent_emulator, spark, tmp_path, cluster_job, mode
):
    """An outage that outlives the retry budget fails the query, saying Kinesis was unreachable and that a restart
    resumes; restarted from its checkpoint once Kinesis is back, it delivers every record once. The budget is 2
    failures in a row here (a few seconds), where the production one of 8 lasts 36 to 72 s."""
    kinesis = Kinesis(persistent_emulator.endpoint)
    name = f"long-outage-{mode}"
    kinesis.create_stream(name, 2)
    producer = KeyedProducer(persistent_emulator.endpoint, name).start()
    root = tmp_path / "job"
    options = source_options(persistent_emulator.endpoint, name, consumerMode=mode)
    job = cluster_job(root, options, conf={RETRY_BUDGET_CONF: "2"}).start()
    job.wait_progress(lambda p: p["numInputRows"] > 0)
    producer.pause()
    time.sleep(1.5)  # the emulator persists every 500 ms: every acknowledged record is on disk
    persistent_emulator.stop()
    down_at = time.monotonic()
    failed = job.wait_event(lambda e: e["event"] == "failed", timeout_s=120)
    down_s = time.monotonic() - down_at
    persistent_emulator.start()
    back_at = time.time()
    message = failed["message"]
    assert "failed 3 times in a row" in message and "Kinesis was unreachable" in message, message[:2000]
    assert "restarting the query from its checkpoint resumes" in message, message[:2000]
    job.process.wait(timeout=60)
    job.start()
    producer.resume()
    recovery = delivered_after(job, back_at)
    producer.wait_rounds(20)
    rows, puts, delivery = finish(job, producer, kinesis, name, spark, root)
    kinesis.close()
    record(f"Kinesis (the emulator) stopped past the retry budget ({mode}; 2 failures in a row, {down_s:.0f} s)",
           "query failed naming the outage; restarted from its checkpoint", delivery, recovery)
    delivery.assert_exactly_once()
    assert_per_key_order(rows, puts)


# TestSettings.SocketTimeoutMs: how long the connector's HTTP clients wait for a byte of an answer.
SOCKET_TIMEOUT_CONF = "spark.kinesisspark.test.socketTimeoutMs"
HANGS = {"GetRecords": {"ConnectionHang": {"every": 7, "times": 3}}}


def test_hung_get_records_calls_are_given_up_at_the_socket_timeout_and_made_again(
    kinesis, emulator, stream, spark, tmp_path, cluster_job, proxy
):
    """Three GetRecords calls get no answer on a connection that stays open (not refused, not reset): each is given
    up at the socket timeout (2 s here, 30 s in production) and made again, and nothing is lost or repeated."""
    name = stream(2)
    through = proxy(faults=HANGS)
    producer = KeyedProducer(emulator.endpoint, name).start()
    root = tmp_path / "job"
    job = cluster_job(root, source_options(through.endpoint, name), conf={SOCKET_TIMEOUT_CONF: "2000"}).start()
    job.wait_progress(lambda p: p["numInputRows"] > 0)
    deadline = time.monotonic() + 120
    while through.operation_stats("GetRecords")["faults_by_code"].get("ConnectionHang", 0) < 3:
        assert time.monotonic() < deadline, f"the hangs did not all fire: {through.operation_stats('GetRecords')}"
        time.sleep(0.5)
    hung_at = time.time()
    recovery = delivered_after(job, hung_at)
    producer.wait_rounds(20)
    rows, puts, delivery = finish(job, producer, kinesis, name, spark, root)
    fired = through.operation_stats("GetRecords")["faults_by_code"]
    assert fired == {"ConnectionHang": 3}, fired
    record("3 GetRecords calls hung (connection open, no answer; 2 s socket timeout)",
           "calls given up and made again; query continued", delivery, recovery)
    delivery.assert_exactly_once()
    assert_per_key_order(rows, puts)


KPL_MAGIC = bytes.fromhex("f3899ac2")
MAX_RECORD_BYTES = 1024 * 1024  # data and partition key together


def odd_records() -> list[tuple[str, bytes, bool]]:
    """(partition key, data, whether the connector counts it as a corrupt aggregate) for input that breaks naive
    readers: broken KPL aggregates of four kinds, an empty record, the largest record Kinesis takes, bytes that
    are not UTF-8."""
    key, good = aggregate(users("odd", 3))
    bad_body = b"\x0a\x05ab"  # a protobuf field that claims 5 bytes and has 2
    return [
        (key, good[: len(good) // 2], True),  # truncated
        (key, good[:-1] + bytes([good[-1] ^ 0xFF]), True),  # MD5 digest that does not match
        (key, KPL_MAGIC + bad_body + hashlib.md5(bad_body).digest(), True),  # right digest, malformed protobuf
        ("magic-only", KPL_MAGIC, True),  # the magic bytes and nothing else
        ("empty", b"", False),
        ("largest", b"\xfe" * (MAX_RECORD_BYTES - len("largest")), False),
        ("not-utf-8", bytes([0xFF, 0xFE, 0x00, 0xC3, 0x28, 0xA0, 0xA1, 0x80]) * 64, False),
    ]


def test_corrupt_empty_huge_and_binary_records_among_good_ones(kinesis, emulator, stream, spark, tmp_path, cluster_job):
    name = stream(2)
    producer = KeyedProducer(emulator.endpoint, name).start()
    job = cluster_job(tmp_path / "job", source_options(emulator.endpoint, name)).start()
    job.wait_progress(lambda p: p["numInputRows"] > 0)
    odd = odd_records()
    for key, data, _ in odd:
        kinesis.client.put_record(StreamName=name, PartitionKey=key, Data=data)
    corrupt = sum(is_corrupt for _, _, is_corrupt in odd)

    def counted(report: dict) -> int:
        return int(report["sources"][0]["metrics"].get("corruptAggregates", "0"))

    job.wait_progress(lambda p: counted(p) >= corrupt)
    producer.wait_rounds(20)
    rows, puts, delivery = finish(job, producer, kinesis, name, spark, tmp_path / "job", also_put=len(odd))
    # Exactly the broken aggregates, each once: nothing here makes a record be fetched twice (no fault, no lost
    # round), and the producer's records are plain. The counter only grows, so its largest value is its last.
    assert max(counted(p) for p in job.progress()) == corrupt, [counted(p) for p in job.progress()]
    # compare() checked every row's key and bytes against the stream: the odd records came back as they are.
    assert {row.partition_key for row in rows if row.sub_sequence_number is None} >= {key for key, _, _ in odd}
    record("corrupt KPL aggregates (truncated, bad MD5, bad protobuf, magic only), an empty record, a 1 MB record, "
           "non-UTF-8 bytes, among keyed records", f"each delivered as it is; {corrupt} counted in corruptAggregates",
           delivery, None)
    delivery.assert_exactly_once()
    assert_per_key_order([row for row in rows if row.partition_key.startswith("key-")], puts)
