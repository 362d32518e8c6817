"""The harness's persisting emulator comes back after any number of stops, with every stream it had.

kinesis-local rewrites its data file in place; a stop that lands in the middle of that write used to leave a
truncated file, and the next start failed with ``java.util.NoSuchElementException`` (seen once in CI, in
test_reliability's outage test). The data (1 MB) is written every 50 ms so that writes are long and
frequent, which makes a stop mid-write likely on every cycle.
"""

from __future__ import annotations

from harness.emulator import KinesisEmulator
from harness.kinesis import Kinesis

CYCLES = 5


def test_persisting_emulator_survives_repeated_stops(tmp_path):
    settings = {"SHOULD_PERSIST_DATA": "true", "PERSIST_PATH": str(tmp_path / "data"), "PERSIST_INTERVAL": "50ms"}
    emulator = KinesisEmulator(log_path=tmp_path / "emulator.log", settings=settings).start()
    try:
        kinesis = Kinesis(emulator.endpoint)
        kinesis.create_stream("restarts", 1)
        kinesis.put_records("restarts", [(f"k{i}", b"x" * 25_000) for i in range(40)])
        kinesis.close()
        for cycle in range(CYCLES):
            emulator.stop()
            emulator.start()
            kinesis = Kinesis(emulator.endpoint)
            assert len(kinesis.read_all("restarts")) == 40, f"records after restart {cycle + 1}"
            kinesis.close()
    finally:
        emulator.stop()
