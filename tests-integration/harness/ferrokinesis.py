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

import subprocess
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
    """

    def __init__(self, log_path: Path | None = None, shard_limit: int = 20_000) -> None:
        super().__init__(log_path=log_path)
        self.shard_limit = shard_limit

    @property
    def tls_endpoint(self) -> str:
        raise NotImplementedError("the ferrokinesis harness serves plain HTTP only")

    def _launch(self) -> tuple[list[str], Path, dict[str, str]]:
        binary = ferrokinesis_binary()
        return [str(binary), str(self.plain_port), str(self.shard_limit)], binary.parent, {"PATH": "/usr/bin:/bin"}
