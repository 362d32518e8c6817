"""A Spark Connect server on 127.0.0.1 with the connector jar on its classpath, started from the installed pyspark
(pip's pyspark has no ``sbin/start-connect-server.sh``: its ``spark-submit`` runs the server class instead, as the
script does), and the Connect client environment the client code of the tests runs in.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pyspark

from harness.spark import REPO_ROOT

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
STARTED = "Spark Connect server started"
START_TIMEOUT_S = 180.0


def client_python() -> Path:
    """The interpreter of the Connect client environment (``dev/python-env.sh --connect-client``): pyspark-client
    and the package, no JVM and no full pyspark."""
    python = REPO_ROOT / ".venv-connect" / "bin" / "python"
    assert python.is_file(), f"{python} is missing: run `bash dev/python-env.sh --connect-client`"
    return python


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class ConnectServer:
    """A running server: ``url`` for ``SparkSession.builder.remote``, its log, and its process."""

    url: str
    log: Path
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_connect_server(jar: Path | None, workdir: Path) -> ConnectServer:
    """Start the server in ``workdir``, with ``--jars jar`` (how a user puts the connector on a server they start)
    or, without a jar, for clients that add it themselves (``spark.addArtifacts``); wait until it listens."""
    spark_home = Path(pyspark.__file__).parent
    port = free_port()
    log = workdir / "connect-server.log"
    env = {**os.environ, "SPARK_HOME": str(spark_home), "SPARK_LOCAL_IP": "127.0.0.1"}
    command = [
        str(spark_home / "bin" / "spark-submit"), "--class", SERVER_CLASS, "--master", "local[2]",
        *(["--jars", str(jar)] if jar else []),
        "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
        "--conf", "spark.ui.enabled=false", "--conf", "spark.driver.memory=1g",
        "--conf", "spark.sql.shuffle.partitions=2",
        "spark-internal",
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=workdir)
    server = ConnectServer(f"sc://127.0.0.1:{port}", log, process)
    deadline = time.monotonic() + START_TIMEOUT_S
    while STARTED not in log.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            server.stop()
            raise AssertionError(f"the Connect server did not start:\n{log.read_text(errors='replace')[-4000:]}")
        time.sleep(0.5)
    return server
