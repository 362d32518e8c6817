"""Test-side control of a :mod:`harness.cluster_job` process: start it, follow its events, kill its driver or one
of its executor JVMs, stop it cleanly."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pyspark

from harness.spark import connector_jar

HARNESS_ROOT = Path(__file__).resolve().parent.parent
LOCAL_CLUSTER = "local-cluster[2,1,1024]"
SPARK_WORK = Path(pyspark.__file__).parent / "work"
START_TIMEOUT_S = 240.0


class ClusterJob:
    """One run of the job over ``root`` (run it again with the same ``root`` to restart from its checkpoint).

    Parameters
    ----------
    root
        The sink's directory; the job's config, stdout and stderr go beside it.
    options
        The source's options.
    conf
        Extra Spark settings (e.g. speculation).
    trigger_s, slow_shard, slow_ms, batch_delay_s, real_time, union_options
        See :mod:`harness.cluster_job`.
    """

    def __init__(
        self,
        root: Path,
        options: dict[str, str],
        conf: dict[str, str] | None = None,
        trigger_s: float = 1.0,
        slow_shard: str | None = None,
        slow_ms: int = 0,
        master: str = LOCAL_CLUSTER,
        batch_delay_s: float = 0.0,
        real_time: str | None = None,
        union_options: dict[str, str] | None = None,
    ) -> None:
        self.root = root
        self.config = {
            "root": str(root),
            "master": master,
            "jar": str(connector_jar()),
            "conf": conf or {},
            "options": options,
            "trigger_s": trigger_s,
            "slow_shard": slow_shard,
            "slow_ms": slow_ms,
            "batch_delay_s": batch_delay_s,
            "real_time": real_time,
            "union_options": union_options,
        }
        self.process: subprocess.Popen[bytes] | None = None
        self.run = 0
        self.app_id: str | None = None
        self.app_ids: list[str] = []

    def executor_logs(self) -> str:
        """Everything the executors of every run have logged. A local cluster's workers keep them under
        ``$SPARK_HOME/work/<application>/<executor>/``, whatever SPARK_WORKER_DIR says."""
        return "".join(
            path.read_text(errors="replace")
            for app in self.app_ids
            for path in sorted((SPARK_WORK / app).glob("*/stderr"))
        )

    def clean_up(self) -> None:
        """Remove the executors' work directories of every run (they would pile up inside pyspark)."""
        for app in self.app_ids:
            shutil.rmtree(SPARK_WORK / app, ignore_errors=True)

    @property
    def stdout(self) -> Path:
        return self.root.parent / f"{self.root.name}-run{self.run}.out"

    def start(self) -> ClusterJob:
        """Start a run and wait until its Spark application is up."""
        self.run += 1
        (self.root / "STOP").unlink(missing_ok=True)
        config = self.root.parent / f"{self.root.name}-config.json"
        config.write_text(json.dumps(self.config))
        with self.stdout.open("wb") as out, (self.root.parent / f"{self.root.name}-run{self.run}.err").open("wb") as err:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "harness.cluster_job", str(config)],
                cwd=HARNESS_ROOT,
                stdout=out,
                stderr=err,
                start_new_session=True,  # its own process group: the driver JVM and executors die with it
            )
        self.app_id = self.wait_event(lambda e: e["event"] == "started", START_TIMEOUT_S)["appId"]
        self.app_ids.append(self.app_id)
        return self

    def events(self) -> list[dict]:
        if not self.stdout.exists():
            return []
        return [json.loads(line) for line in self.stdout.read_text().splitlines() if line.startswith("{")]

    def progress(self) -> list[dict]:
        """The progress reports of this run, oldest first."""
        return [e["progress"] for e in self.events() if e["event"] == "progress"]

    def wait_event(self, matches: Callable[[dict], bool], timeout_s: float) -> dict:
        """The first event of this run that ``matches``; fails if the job ends or the time runs out first."""
        deadline = time.monotonic() + timeout_s
        while True:
            for event in self.events():
                if matches(event):
                    return event
                if event["event"] == "failed":
                    raise AssertionError(f"the job failed: {event['message'][:3000]}")
            if self.process is not None and self.process.poll() is not None:
                raise AssertionError(f"the job exited with {self.process.returncode}; stderr:\n{self.stderr_tail()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"no such event within {timeout_s:.0f} s; stderr:\n{self.stderr_tail()}")
            time.sleep(0.3)

    def wait_progress(self, matches: Callable[[dict], bool], timeout_s: float = 180.0) -> dict:
        """The first progress report that ``matches``."""
        return self.wait_event(lambda e: e["event"] == "progress" and matches(e["progress"]), timeout_s)["progress"]

    def stderr_tail(self, lines: int = 60) -> str:
        path = self.root.parent / f"{self.root.name}-run{self.run}.err"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def executor_pids(self) -> list[int]:
        """The executor JVMs of the current run (the local cluster replaces one that dies)."""
        listing = subprocess.run(
            ["pgrep", "-f", f"CoarseGrainedExecutorBackend.*{self.app_id}"], capture_output=True, text=True
        )
        return sorted(int(pid) for pid in listing.stdout.split())

    def kill_executors(self) -> list[int]:
        """SIGKILL every executor JVM (so whatever blocks they held are gone); returns their pids."""
        pids = self.executor_pids()
        assert pids, f"no executor process of {self.app_id}"
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        return pids

    def kill(self) -> None:
        """SIGKILL the driver's whole process group: nothing gets to clean up."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        # Executors of the dead driver notice on their own; do not let them linger into the next run.
        for pid in self.executor_pids():
            os.kill(pid, signal.SIGKILL)

    def stop(self, timeout_s: float = 120.0) -> dict | None:
        """Ask the job to stop its query and exit (kill it if it does not); returns its ``stopped`` event."""
        if self.process is None or self.process.poll() is not None:
            return None
        (self.root / "STOP").touch()
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
        return next((e for e in self.events() if e["event"] == "stopped"), None)
