"""Runs ferrokinesis, a fast Kinesis implementation in Rust (see ``dev/ferrokinesis/``), for benchmarks and tests
that need more than kinesis-local's one to two thousand records per second, or many shards.

It is served on 127.0.0.1 only, by a few lines of Rust around the crate (``dev/ferrokinesis/src/main.rs``), built
by ``dev/ferrokinesis/install.sh`` on first use. Its quirks, so a test does not blame the connector for them
(``shared/notes/emulators.md``): arrival timestamps are whole seconds, and it reads the AWS SDK's CBOR timestamps as
seconds, so a JVM client talks JSON to it (:data:`JVM_OPTIONS`); no TLS port; ListShards ignores ``ShardFilter`` (the
limits proxy applies AFTER_SHARD_ID), and a later page (``NextToken`` without ``StreamName``, as AWS requires) is
answered ResourceNotFound, so a reader of over ``maxShardsPerDescribe`` shards cannot list them.
"""

from __future__ import annotations

import json
import subprocess
import urllib.request
from pathlib import Path

from .emulator import KinesisEmulator

INSTALL_SCRIPT = Path(__file__).resolve().parents[2] / "dev" / "ferrokinesis" / "install.sh"
# The AWS SDK for Java v2 speaks CBOR to Kinesis by default; ferrokinesis misreads its timestamps.
JVM_OPTIONS = "-Daws.cborEnabled=false"


def ferrokinesis_binary() -> Path:
    """The built server, building it first if needed (a few minutes the first time)."""
    result = subprocess.run(["bash", str(INSTALL_SCRIPT)], check=True, capture_output=True, text=True)
    return Path(result.stdout.strip().splitlines()[-1])


class FerroKinesis(KinesisEmulator):
    """One running ferrokinesis server; used like :class:`KinesisEmulator` (no TLS endpoint).

    Parameters
    ----------
    shard_limit
        The most shards the account may hold (ferrokinesis's default is 10).
    subscription_ms
        How long an enhanced fan-out subscription lasts before the service ends it (AWS, and the default: 5 minutes).
    subscribe_faults
        Error code -> share of SubscribeToShard calls answered with it (``dev/ferrokinesis/src/subscribe_faults.rs``,
        which also refuses a subscription within 5 s of the previous one to the same consumer and shard, as AWS does).
    """

    def __init__(
        self,
        log_path: Path | None = None,
        shard_limit: int = 20_000,
        subscription_ms: int | None = None,
        subscribe_faults: dict[str, float] | None = None,
    ) -> None:
        super().__init__(log_path=log_path)
        self.shard_limit = shard_limit
        self.settings_env = {"FERROKINESIS_SUBSCRIBE_FAULTS": ",".join(f"{k}={v}" for k, v in (subscribe_faults or {}).items())}
        if subscription_ms is not None:
            self.settings_env["FERROKINESIS_SUBSCRIPTION_MS"] = str(subscription_ms)

    def fault_stats(self) -> dict[str, int]:
        """The fault model's counters: ``subscribe_calls``, ``refused_in_use`` (within 5 s of the previous one),
        ``faulted``."""
        with urllib.request.urlopen(f"{self.endpoint}/_faults", timeout=10) as response:
            return json.loads(response.read())

    @property
    def tls_endpoint(self) -> str:
        raise NotImplementedError("the ferrokinesis harness serves plain HTTP only")

    def _launch(self) -> tuple[list[str], Path, dict[str, str]]:
        binary = ferrokinesis_binary()
        env = {"PATH": "/usr/bin:/bin", **self.settings_env}
        return [str(binary), str(self.plain_port), str(self.shard_limit)], binary.parent, env
