"""A background producer of keyed, numbered records, and the per-key order check that goes with it.

Each round is one PutRecords call holding one record per key, ``<key>:<round>``, so for every key the rounds
are produced strictly in order (a round is acknowledged before the next is sent). Tests reshard or restart
while it runs and then check that every record arrived once and, per key, in production order.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict

from harness.kinesis import Kinesis, PutResult
from harness.sink import SinkRecord


class KeyedProducer:
    """Puts rounds of ``keys`` records into ``stream`` on a thread of its own until :meth:`stop`.

    Parameters
    ----------
    endpoint
        The emulator (or proxy) endpoint; the producer has its own boto3 client.
    interval_s
        Pause between rounds, so resharding calls happen while records keep arriving.
    """

    def __init__(self, endpoint: str, stream: str, keys: int = 20, interval_s: float = 0.05) -> None:
        self.stream = stream
        self.keys = keys
        self.interval_s = interval_s
        self.puts: list[PutResult] = []
        self._kinesis = Kinesis(endpoint)
        self._stop = threading.Event()
        self._go = threading.Event()  # cleared while paused
        self._go.set()
        self._between_rounds = threading.Lock()  # held while a round is being put
        self._error: BaseException | None = None
        self._round = 0
        self._thread = threading.Thread(target=self._run, name=f"producer-{stream}", daemon=True)

    def start(self) -> KeyedProducer:
        self._thread.start()
        return self

    def wait_rounds(self, rounds: int, timeout_s: float = 120.0) -> None:
        """Block until at least ``rounds`` more rounds have been acknowledged."""
        target = self._round + rounds
        deadline = time.monotonic() + timeout_s
        while self._round < target:
            self._check()
            if time.monotonic() > deadline:
                raise TimeoutError(f"producer made {self._round} of {target} rounds in {timeout_s:.0f} s")
            time.sleep(0.05)

    def pause(self) -> None:
        """Return once the round in flight (if any) is acknowledged; no round starts until :meth:`resume`."""
        self._go.clear()
        with self._between_rounds:
            pass

    def resume(self) -> None:
        self._go.set()

    def stop(self) -> list[PutResult]:
        """Stop after the current round; returns every acknowledged record, in production order."""
        self._stop.set()
        self._go.set()
        self._thread.join(timeout=120)
        self._kinesis.close()
        self._check()
        return list(self.puts)

    def _check(self) -> None:
        if self._error is not None:
            raise AssertionError(f"the producer failed: {self._error!r}") from self._error

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self._go.wait()
                with self._between_rounds:
                    if not self._go.is_set() or self._stop.is_set():
                        continue
                    batch = [(f"key-{k}", f"key-{k}:{self._round}".encode()) for k in range(self.keys)]
                    self.puts.extend(self._kinesis.put_records(self.stream, batch))
                    self._round += 1
                self._stop.wait(self.interval_s)
        except BaseException as error:  # surfaced to the test by wait_rounds/stop
            self._error = error


def assert_per_key_order(records: list[SinkRecord], puts: list[PutResult]) -> None:
    """For every key, the records arrived in the rounds' order, each exactly once, and a key's records from a child
    shard came in later batches than its records from the parent.

    Kinesis routes a key to one open shard at a time, and a batch's shards are read in parallel partitions
    downstream: so within one batch a key's records must all come from one shard (a parent and its child never share
    a batch; checked first), and then (batch, sequence number) is the delivery order.
    """
    shards_of: dict[tuple[str, int], set[str]] = defaultdict(set)
    for record in records:
        shards_of[(record.partition_key, record.batch_id)].add(record.shard_id)
    shared = {key: sorted(shards) for key, shards in shards_of.items() if len(shards) > 1}
    assert not shared, (
        f"{len(shared)} (key, batch) pairs hold records of more than one shard, read in parallel within the batch, "
        f"e.g. {sorted(shared.items())[:3]}"
    )
    produced: dict[str, list[int]] = defaultdict(list)
    for put in puts:
        produced[put.partition_key].append(int(put.data.decode().rsplit(":", 1)[1]))
    delivered: dict[str, list[int]] = defaultdict(list)
    for record in sorted(records, key=lambda r: (r.batch_id, int(r.sequence_number))):
        delivered[record.partition_key].append(int(record.data.decode().rsplit(":", 1)[1]))
    for key, numbers in produced.items():
        assert delivered[key] == numbers, (
            f"{key}: produced rounds {numbers[:5]}...{numbers[-5:]} ({len(numbers)}), delivered "
            f"{_first_difference(numbers, delivered[key])}"
        )


def _first_difference(expected: list[int], actual: list[int]) -> str:
    for i, (a, b) in enumerate(zip(expected, actual)):
        if a != b:
            return f"round {b} at position {i} where round {a} was due (context {actual[max(0, i - 3) : i + 4]})"
    return f"{len(actual)} records where {len(expected)} were produced"
