"""Task attempts as a Spark application's event log records them (``spark.eventLog.enabled``, uncompressed).

The driver writes the log as it goes, flushing at least when a stage or job ends, so a test can read it while
the application runs as well as after it stopped. Example::

    attempts = task_ends(events_dir)
    won = [a for a in attempts if a.speculative and a.reason == "Success"]
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TaskEnd:
    """One finished task attempt: ``reason`` is Spark's ``Task End Reason`` (``Success``, ``TaskKilled``, ...)."""

    stage: int
    index: int
    attempt: int
    speculative: bool
    host: str
    reason: str
    kill_reason: str | None


def task_ends(events_dir: Path) -> list[TaskEnd]:
    """Every ``SparkListenerTaskEnd`` of every application that logged into ``events_dir``."""
    ends = []
    # A log is one file, or with rolling (Spark 4's default) a directory of event files.
    for path in sorted(p for p in events_dir.rglob("*") if p.is_file()):
        for line in path.read_text(errors="replace").splitlines():
            if '"SparkListenerTaskEnd"' not in line:
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:  # the last line of a log still being written
                continue
            info, reason = event["Task Info"], event["Task End Reason"]
            ends.append(TaskEnd(
                stage=event["Stage ID"],
                index=info["Index"],
                attempt=info["Attempt"],
                speculative=info["Speculative"],
                host=info["Host"],
                reason=reason["Reason"],
                kill_reason=reason.get("Kill Reason"),
            ))
    return ends
