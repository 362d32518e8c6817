"""moto's server on a free loopback port: STS for the credential tests, with its request recorder on, so a test can
see what the connector asked STS (AssumeRole's role, session name, external id, duration, and the signing key), and
DynamoDB for the KCL lease table and awslabs checkpoint tests."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import boto3

from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY, free_loopback_port

STARTUP_TIMEOUT_S = 30.0


class MotoServer:
    """One ``moto_server`` process; a context manager."""

    def __init__(self, log_path: Path) -> None:
        self.port = free_loopback_port()
        self.log_path = log_path
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, service: str):  # noqa: ANN201 (boto3 clients have no static type)
        """A boto3 client of ``service`` (``dynamodb``, ``sts``) on this server, with the emulator's keys."""
        return boto3.client(
            service,
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
        )

    def __enter__(self) -> MotoServer:
        server = Path(sys.executable).with_name("moto_server")
        with open(self.log_path, "ab") as log:
            self._process = subprocess.Popen(
                [str(server), "-H", "127.0.0.1", "-p", str(self.port)],
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "MOTO_ENABLE_RECORDING": "True"},
                start_new_session=True,
            )
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            try:
                self._post("/moto-api/recorder/start-recording")
                return self
            except OSError:
                if self._process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto_server did not start; see {self.log_path}") from None
                time.sleep(0.2)

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)

    def _post(self, path: str) -> None:
        urllib.request.urlopen(urllib.request.Request(self.endpoint + path, method="POST"), timeout=5).read()

    def clear(self) -> None:
        """Forget the requests recorded so far."""
        self._post("/moto-api/recorder/reset-recording")
        self._post("/moto-api/recorder/start-recording")

    def assume_role_calls(self) -> list[dict[str, str]]:
        """Every AssumeRole request recorded: its form parameters plus ``SigningKeyId``."""
        with urllib.request.urlopen(self.endpoint + "/moto-api/recorder/download-recording", timeout=5) as response:
            lines = response.read().decode().splitlines()
        calls = []
        for line in filter(None, lines):
            entry = json.loads(line)
            body = entry.get("body") or ""
            try:
                body = base64.b64decode(body).decode()
            except ValueError:
                pass
            params = dict(urllib.parse.parse_qsl(body))
            if params.get("Action") != "AssumeRole":
                continue
            auth = entry.get("headers", {}).get("Authorization", "")
            params["SigningKeyId"] = auth.split("Credential=", 1)[-1].split("/", 1)[0]
            calls.append(params)
        return calls
