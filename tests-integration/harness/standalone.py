"""A Spark standalone cluster on loopback addresses: one master and one single-core worker per host.

In ``local-cluster`` every executor has the same host, and Spark never starts a speculative copy of a task on a
host that already runs an attempt of it; so speculation needs executors on distinct hosts. 127.0.0.1 and
127.0.0.2 are distinct hosts to Spark and both loopback. Each worker (and every executor it launches, which
inherits its environment) runs with ``SPARK_LOCAL_IP`` set to its host, plus whatever ``worker_env`` adds, so a
test can make one host behave differently from the other.

Example::

    with StandaloneCluster(tmp_path / "cluster", {"127.0.0.2": {"SOME_VAR": "1"}}) as cluster:
        job = ClusterJob(tmp_path / "job", options, master=cluster.url).start()
"""

from __future__ import annotations

import ipaddress
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from types import TracebackType

import pyspark

SPARK_HOME = Path(pyspark.__file__).parent
HOSTS = ("127.0.0.1", "127.0.0.2")
START_TIMEOUT_S = 180.0  # JVM start-up on a busy two-core machine
STOP_TIMEOUT_S = 15.0
MASTER_URL = re.compile(r"Starting Spark master at (spark://[0-9.]+:[0-9]+)")
REGISTERED = "Successfully registered with master"


class StandaloneCluster:
    """Master on 127.0.0.1, a worker of ``cores`` cores and ``memory`` on each of ``hosts`` (all loopback).

    Everything binds to its loopback host on free ports (web UIs included); the REST submission server is off.
    Logs and the workers' directories (executor logs under ``work-<host>/<application>/<executor>/``) go under
    ``root``.
    """

    def __init__(
        self,
        root: Path,
        worker_env: dict[str, dict[str, str]] | None = None,
        hosts: tuple[str, ...] = HOSTS,
        cores: int = 1,
        memory: str = "1g",
    ) -> None:
        for host in hosts:
            if not ipaddress.ip_address(host).is_loopback:
                raise ValueError(f"standalone cluster host {host!r} is not a loopback address (use 127.0.0.x)")
        self.root = root
        self.hosts = hosts
        self.worker_env = worker_env or {}
        self.cores = cores
        self.memory = memory
        self.url: str | None = None
        self._processes: list[subprocess.Popen[bytes]] = []
        self._by_log: dict[Path, subprocess.Popen[bytes]] = {}

    def __enter__(self) -> StandaloneCluster:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> StandaloneCluster:
        self.root.mkdir(parents=True, exist_ok=True)
        properties = self.root / "spark-defaults.conf"
        properties.write_text("spark.master.rest.enabled false\n")
        try:
            master_log = self._launch(
                "master", "127.0.0.1", {},
                ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", "0",
                 "--webui-port", "0", "--properties-file", str(properties)],
            )
            self.url = self._wait_for(master_log, MASTER_URL).group(1)
            logs = []
            for host in self.hosts:
                work = self.root / f"work-{host}"
                work.mkdir(exist_ok=True)
                logs.append(self._launch(
                    f"worker-{host}", host, self.worker_env.get(host, {}),
                    ["org.apache.spark.deploy.worker.Worker", "--host", host, "--port", "0", "--webui-port", "0",
                     "--cores", str(self.cores), "--memory", self.memory, "--work-dir", str(work),
                     "--properties-file", str(properties), self.url],
                ))
            for log in logs:
                self._wait_for(log, re.compile(re.escape(REGISTERED)))
        except BaseException:
            self.stop()
            raise
        return self

    def executor_logs(self) -> str:
        """Everything the executors of every application have logged on every worker."""
        return "".join(
            path.read_text(errors="replace") for path in sorted(self.root.glob("work-*/*/*/stderr"))
        )

    def stop(self) -> None:
        """Stop the workers (and with them their executors, which share their process group), then the master."""
        for process in reversed(self._processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(self._processes):
            try:
                process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self._processes.clear()

    def _launch(self, name: str, host: str, env: dict[str, str], arguments: list[str]) -> Path:
        log = self.root / f"{name}.log"
        environment = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": host, **env}
        with log.open("wb") as out:
            self._by_log[log] = subprocess.Popen(
                [str(SPARK_HOME / "bin" / "spark-class"), *arguments],
                env=environment,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, so stop() reaches the executors it launches
            )
        self._processes.append(self._by_log[log])
        return log

    def _wait_for(self, log: Path, pattern: re.Pattern[str]) -> re.Match[str]:
        process = self._by_log[log]
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            text = log.read_text(errors="replace") if log.exists() else ""
            match = pattern.search(text)
            if match:
                return match
            if process.poll() is not None:
                raise AssertionError(f"{log.stem} exited with {process.returncode}:\n{text[-3000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{log.stem}: no {pattern.pattern!r} within {START_TIMEOUT_S:.0f} s:\n{text[-3000:]}"
                )
            time.sleep(0.3)
