"""Every code sample of the README and the user guide (docs/) runs, against the local emulator.

The samples are written for AWS: no endpoint, no keys, stream names such as ``clicks``. The jobs that run them get
the AWS SDK's environment variables instead (``AWS_ENDPOINT_URL_KINESIS`` and keys for the emulator), and this test
creates the streams they name and keeps a producer writing to ``clicks`` meanwhile, so that queries starting at
``latest`` have something to read.

- ``python`` blocks: run in one Spark application by ``jobs/run_doc_snippets.py`` (``>>>`` blocks as doctests).
- ``scala`` blocks: pasted into one ``spark-shell`` with the connector jar, each in a block of its own.
- ``json`` blocks: parsed, and handed to the connector's option check when they are an ``initialPosition``.
- ``properties`` blocks: each setting must be one a test job uses (so a documented configuration is a tested one).
- ``bash`` blocks: every file of the repository they name must exist.
- Included files (``--8<-- "file"``): must be run by a test of their own (the decoding recipes).
- ``text``: shown, not run. A block without a language fails the test: each says what it is.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pyspark
import pytest
from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY
from harness.jobs import job_result, run_checked
from harness.spark import connector_jar

from kinesis_spark._position import check_initial_position

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUNNER = Path(__file__).resolve().parent / "jobs" / "run_doc_snippets.py"
SHOWN_ONLY = {"text"}
KNOWN = {"python", "scala", "json", "properties", "bash", *SHOWN_ONLY}
# The streams the samples name, with their shard counts.
STREAMS = {"clicks": 2, "clicks-copy": 1, "clicks-enriched": 1, "users": 1}
FENCE = re.compile(r"^```(\S*)\s*$")
INCLUDE = re.compile(r'^--8<-- "([^"]+)"$')


@dataclass(frozen=True)
class Snippet:
    page: str
    line: int
    language: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def snippets() -> list[Snippet]:
    found = []
    for page in PAGES:
        lines = page.read_text().splitlines()
        start = None
        for number, line in enumerate(lines, 1):
            match = FENCE.match(line)
            if not match:
                continue
            if start is None:
                start, language = number, match.group(1)
            else:
                code = "\n".join(lines[start : number - 1]) + "\n"
                found.append(Snippet(str(page.relative_to(ROOT)), start, language, code))
                start = None
        assert start is None, f"{page}: a code block opened at line {start} is never closed"
    return found


ALL = snippets()


def of(language: str) -> list[Snippet]:
    return [s for s in ALL if s.language == language and not INCLUDE.match(s.code.strip())]


def test_every_block_says_what_it_is():
    unknown = [f"{s.id} ({s.language or 'no language'})" for s in ALL if s.language not in KNOWN]
    assert not unknown, f"code blocks of no known kind: {unknown}; mark shown-only ones as text"
    assert of("python") and of("scala"), "the guide has Python and Scala samples"


@pytest.fixture(scope="module")
def world(kinesis, emulator):
    """The samples' streams, a producer writing to ``clicks`` while they run, and the environment for the jobs."""
    for name, shards in STREAMS.items():
        kinesis.create_stream(name, shards)
    kinesis.put_records("clicks", [(f"user-{i % 7}", f"click-{i}".encode()) for i in range(200)])
    stop = threading.Event()

    def produce() -> None:
        n = 0
        while not stop.wait(0.2):
            kinesis.put_records("clicks", [(f"user-{n % 7}", f"live-{n}".encode())])
            n += 1

    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    env = {
        **os.environ,
        "AWS_ENDPOINT_URL_KINESIS": emulator.endpoint,
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_REGION": REGION,
        "SPARK_HOME": str(Path(pyspark.__file__).parent),
        "PYSPARK_PYTHON": sys.executable,
    }
    yield env
    stop.set()
    producer.join()
    for name in STREAMS:
        kinesis.delete_stream(name)


def test_python_samples_run(world, tmp_path):
    samples = of("python")
    listing = tmp_path / "snippets.json"
    listing.write_text(json.dumps([{"id": s.id, "code": s.code} for s in samples]))
    results = job_result(run_checked(
        [sys.executable, str(RUNNER), str(listing), str(connector_jar()), str(tmp_path / "work")],
        env=world, cwd=tmp_path, timeout=600,
    ))
    assert set(results) == {s.id for s in samples}
    failed = {sample_id: error for sample_id, error in results.items() if error != "ok"}
    assert not failed, "\n\n".join(f"{sample_id}:\n{error}" for sample_id, error in failed.items())


def test_scala_samples_run(world, tmp_path):
    samples = of("scala")
    script = []
    for s in samples:
        # Each sample in a block of its own: its vals stay its own, and one failing does not hide the others.
        script += [
            f'println("SAMPLE-START {s.id}")',
            "try {",
            s.code,
            f'println("SAMPLE-OK {s.id}")',
            f'}} catch {{ case e: Throwable => println("SAMPLE-FAILED {s.id} " + e); e.printStackTrace(System.out) }}',
            # A sample's query is not left running: a real-time one holds every task slot.
            "spark.streams.active.foreach(_.stop())",
        ]
    script.append("System.exit(0)")
    shell = Path(world["SPARK_HOME"]) / "bin" / "spark-shell"
    command = [
        str(shell), "--master", "local[2]", "--jars", str(connector_jar()),
        "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
        "--conf", "spark.ui.enabled=false",
    ]
    result = subprocess.run(command, input="\n".join(script) + "\n", capture_output=True, text=True, env=world,
                            cwd=tmp_path, timeout=600, check=False)
    output = result.stdout
    for s in samples:
        assert f"SAMPLE-OK {s.id}" in output, (
            f"{s.id} did not run to its end:\n{output[-6000:]}\n{result.stderr[-3000:]}"
        )


def test_json_samples_parse_and_initial_positions_are_accepted():
    for s in of("json"):
        value = json.loads(s.code)
        if isinstance(value, dict) and {"default", "shards", "streams"} & value.keys():
            check_initial_position(s.code, ["orders"])


def test_documented_properties_are_the_tested_ones():
    jobs = "\n".join(p.read_text() for p in (ROOT / "tests-integration" / "jobs").glob("*.py"))
    for s in of("properties"):
        for line in s.code.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key, _, value = line.partition("=")
            assert f'"{key.strip()}", "{value.strip()}"' in jobs, f"{s.id}: {line} is set by no test job"


def test_files_named_by_shell_samples_exist():
    for s in of("bash"):
        for command in s.code.replace("\\\n", " ").splitlines():
            for word in shlex.split(command, comments=True):
                # Files of the repository (built wheels excepted: dev/build-python.sh makes them).
                if re.match(r"^(dev|examples|benchmarks|build|python|tests-integration)/", word) and "/dist/" not in word:
                    assert (ROOT / word).exists(), f"{s.id}: {word} does not exist"


def test_included_files_are_run_by_their_own_test():
    tests = "\n".join(p.read_text() for p in (ROOT / "tests-integration").glob("test_*.py"))
    included = [INCLUDE.match(s.code.strip()).group(1) for s in ALL if INCLUDE.match(s.code.strip())]
    for name in included:
        assert (ROOT / "docs" / "snippets" / name).is_file(), f"docs/snippets/{name} is included but missing"
        assert Path(name).name in tests, f"docs/snippets/{name} is included in the guide but run by no test"


def test_the_readme_fits_a_first_read():
    """The README is for a newcomer's first minutes (issue 34): at most 150 lines of at most 120 columns."""
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines"
    wide = [n for n, line in enumerate(lines, 1) if len(line) > 120]
    assert not wide, f"README.md lines over 120 columns: {wide}"
