"""Running the packaging tests' jobs (``jobs/``) as separate processes, and reading what they print."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

#: Reads a stream to its end through the kinesis_spark package; prints ``RESULT {json}``.
READ_STREAM_JOB = Path(__file__).resolve().parents[1] / "jobs" / "read_stream.py"


def run_checked(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run ``command`` (``subprocess.run`` keywords allowed), failing with its output tails if it fails."""
    result = subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload]
    assert result.returncode == 0, f"{command} failed:\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
    return result


def job_result(result: subprocess.CompletedProcess[str]) -> dict:
    """The last ``RESULT {json}`` line a job printed."""
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, f"no RESULT line:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return json.loads(lines[-1].removeprefix("RESULT "))
