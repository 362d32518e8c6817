"""Runs the local Kinesis emulator (kinesis-local, see ``dev/emulator/``) for the tests and the demo.

The emulator is a Node program. It is started in its own process group on free loopback ports, behind the
``loopback.js`` preload that keeps it off other interfaces, and stopped by killing the whole group, so a test
run never leaves a stray server behind even when it is interrupted.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

import boto3
from botocore.config import Config

EMULATOR_DIR = Path(__file__).resolve().parents[2] / "dev" / "emulator"
PACKAGE_DIR = EMULATOR_DIR / "node_modules" / "kinesis-local"

REGION = "us-east-1"
ACCESS_KEY = "test"
SECRET_KEY = "test"

# State transitions that take 500 ms each by default are shortened so tests do not wait on them, but kept
# non-zero so the harness still exercises the CREATING/UPDATING -> ACTIVE waits a real stream needs.
DEFAULT_SETTINGS = {
    "CREATE_STREAM_DURATION": "100ms",
    "DELETE_STREAM_DURATION": "100ms",
    "SPLIT_SHARD_DURATION": "100ms",
    "MERGE_SHARDS_DURATION": "100ms",
    "UPDATE_SHARD_COUNT_DURATION": "100ms",
    "REGISTER_STREAM_CONSUMER_DURATION": "0ms",
    "DEREGISTER_STREAM_CONSUMER_DURATION": "0ms",
    "LOG_LEVEL": "ERROR",
    "ROOT_LOG_LEVEL": "ERROR",
    "AWS_REGION": REGION,
}

STARTUP_TIMEOUT_S = 30.0
# On SIGTERM the emulator waits for clients to close their idle keep-alive connections, which boto3 and the
# connector's SDK keep open; it holds nothing to flush (persistence is off), so it gets a short grace only.
STOP_GRACE_S = 2.0
# A persisting emulator rewrites its data file in place every PERSIST_INTERVAL; killed in the middle of a
# write it leaves a truncated file and fails its next start (NoSuchElementException while loading). It is
# frozen where the file is whole before it is killed; this bounds how long that may take.
PERSIST_SETTLE_S = 10.0


def free_loopback_port() -> int:
    """A port that was free on 127.0.0.1 a moment ago (the emulator cannot pick its own and report it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class KinesisEmulator:
    """One running kinesis-local process.

    Use as a context manager, or call :meth:`start` and :meth:`stop`; a started emulator is also stopped
    at interpreter exit.

    Parameters
    ----------
    log_path
        Where the emulator's stdout and stderr go; ``kinesis-emulator-<port>.log`` in the temp dir by default.
    settings
        Environment settings on top of :data:`DEFAULT_SETTINGS` (see the kinesis-local README).
    """

    def __init__(self, log_path: Path | None = None, settings: dict[str, str] | None = None) -> None:
        self.plain_port = free_loopback_port()
        self.tls_port = free_loopback_port()
        self.log_path = log_path or Path(tempfile.gettempdir()) / f"kinesis-emulator-{self.plain_port}.log"
        self.settings = {**DEFAULT_SETTINGS, **(settings or {})}
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        """Plain-HTTP endpoint (HTTP/1.1 and h2c) for the connector's ``endpoint`` option and boto3."""
        return f"http://127.0.0.1:{self.plain_port}"

    @property
    def tls_endpoint(self) -> str:
        """HTTPS endpoint (self-signed certificate; HTTP/1.1 and h2 via ALPN)."""
        return f"https://127.0.0.1:{self.tls_port}"

    @property
    def pid(self) -> int:
        """The emulator's process (a started emulator's)."""
        if self._process is None:
            raise RuntimeError("emulator not started")
        return self._process.pid

    def start(self) -> KinesisEmulator:
        """Start the emulator and return once it answers ListStreams."""
        if self._process is not None:
            raise RuntimeError("emulator already started")
        command, cwd, env = self._launch()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(
                command,
                cwd=cwd,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        atexit.register(self.stop)
        try:
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _launch(self) -> tuple[list[str], Path, dict[str, str]]:
        """The command that serves this emulator, its working directory and its environment."""
        main_js = PACKAGE_DIR / "main.js"
        if not main_js.is_file():
            raise RuntimeError(
                f"Kinesis emulator not installed ({main_js} missing): run `bash dev/emulator/install.sh`"
            )
        env = {
            **os.environ,
            # Defaults to a path relative to the working directory; startup fails without it. A test may give
            # its own certificate (a JSON file {"server": {"key": PEM, "cert": PEM}}) in the settings.
            "KINESIS_MOCK_CERT_PATH": str(PACKAGE_DIR / "server.json"),
            **self.settings,
            "KINESIS_MOCK_PLAIN_PORT": str(self.plain_port),
            "KINESIS_MOCK_TLS_PORT": str(self.tls_port),
        }
        command = [
            "node",
            "--max-semi-space-size=128",  # roughly doubles its throughput (fewer young-generation GCs)
            "-r",
            str(EMULATOR_DIR / "loopback.js"),
            str(main_js),
        ]
        return command, PACKAGE_DIR, env

    def _wait_until_ready(self) -> None:
        """Wait until the plain port accepts connections, then until the emulator answers ListStreams.

        Polling with plain sockets keeps failed attempts from leaving half-open boto3 connections behind,
        which would delay the emulator's SIGTERM shutdown.
        """
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not self._accepts_connections():
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"Kinesis emulator did not listen on {self.endpoint} within {STARTUP_TIMEOUT_S:.0f} s; "
                    f"log {self.log_path}:\n{self.log_tail()}"
                )
            time.sleep(0.1)
        client = boto3.client(
            "kinesis",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            config=Config(
                connect_timeout=1,
                read_timeout=max(1.0, deadline - time.monotonic()),
                retries={"max_attempts": 1},
            ),
        )
        try:
            client.list_streams()
        finally:
            client.close()

    def _accepts_connections(self) -> bool:
        assert self._process is not None
        if self._process.poll() is not None:
            raise RuntimeError(
                f"Kinesis emulator exited with code {self._process.returncode} during startup; "
                f"log {self.log_path}:\n{self.log_tail()}"
            )
        try:
            socket.create_connection(("127.0.0.1", self.plain_port), timeout=1).close()
            return True
        except OSError:
            return False

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the emulator's log, for failure messages."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError as error:
            return f"(log unreadable: {error})"

    def stop(self) -> None:
        """Stop the emulator's whole process group; safe to call more than once."""
        process, self._process = self._process, None
        atexit.unregister(self.stop)
        if process is None or process.poll() is not None:
            return
        if self._persist_file() is not None:
            self._freeze_with_whole_data_file(process)
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def _persist_file(self) -> Path | None:
        """The file a persisting emulator (``SHOULD_PERSIST_DATA=true``) keeps its streams in."""
        if self.settings.get("SHOULD_PERSIST_DATA", "false").lower() != "true":
            return None
        # kinesis-local's defaults: PERSIST_PATH "data" under its working directory, kinesis-data.json.
        directory = Path(self.settings.get("PERSIST_PATH", str(PACKAGE_DIR / "data")))
        return directory / self.settings.get("PERSIST_FILE_NAME", "kinesis-data.json")

    def _freeze_with_whole_data_file(self, process: subprocess.Popen[bytes]) -> None:
        """Stop (SIGSTOP) the emulator at a moment its data file parses; let it run on a little while not."""
        path = self._persist_file()
        assert path is not None
        deadline = time.monotonic() + PERSIST_SETTLE_S
        while True:
            os.killpg(process.pid, signal.SIGSTOP)
            try:
                json.loads(path.read_bytes())
                return
            except (OSError, ValueError):
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"the emulator's data file {path} was not whole within {PERSIST_SETTLE_S:.0f} s"
                    ) from None
            os.killpg(process.pid, signal.SIGCONT)
            time.sleep(0.02)

    def __enter__(self) -> KinesisEmulator:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
