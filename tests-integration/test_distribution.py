"""The wheel as users get it: built by the project's own command (``bash dev/build-python.sh --wheel``),
installed into a fresh virtual environment that sees nothing of this repository (pip brings pyspark, from its
cache when it has it), and used there, by a job run as a plain ``python`` script, to read a stream of the
emulator with the jar the wheel bundles.
"""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

import pytest
from harness.jobs import READ_STREAM_JOB, job_result, run_checked
from harness.spark import REPO_ROOT

JOB_TIMEOUT_S = 300


def clean_env() -> dict[str, str]:
    """The environment minus anything that would let the fresh venv see this repository's Python packages."""
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV", "SPARK_HOME")}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    return env


@pytest.fixture(scope="module")
def wheel() -> Path:
    result = run_checked(["bash", str(REPO_ROOT / "dev" / "build-python.sh"), "--wheel"], env={**os.environ, "PYTHON": sys.executable})
    return Path(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def fresh_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    run_checked(["python3", "-m", "venv", str(venv)], env=clean_env())
    run_checked([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)],
        env=clean_env())
    return venv


def test_the_wheel_holds_both_jars_and_the_type_marker(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    jars = sorted(name for name in names if name.startswith("kinesis_spark/jars/") and name.endswith(".jar"))
    # One per Spark line: Scala 2.12 for Spark 3.5, Scala 2.13 for Spark 4.
    assert [jar.split("_")[-1].split("-")[0] for jar in jars] == ["2.12", "2.13"], names
    assert "kinesis_spark/py.typed" in names
    assert "kinesis_spark/versions.properties" in names
    for name in jars:
        with zipfile.ZipFile(wheel) as archive, archive.open(name) as jar, zipfile.ZipFile(jar) as inner:
            assert "io/kinesisspark/KinesisSourceProvider.class" in inner.namelist(), name


def test_a_fresh_venv_reads_a_stream_with_the_bundled_jar(fresh_venv: Path, kinesis, stream, emulator, tmp_path):
    name = stream(2)
    sent = sorted(f"record-{i}" for i in range(40))
    kinesis.put_records(name, [(f"key-{i}", data.encode()) for i, data in enumerate(sent)])

    result = run_checked(
        [str(fresh_venv / "bin" / "python"), str(READ_STREAM_JOB), emulator.endpoint, name],
        cwd=tmp_path,  # nothing importable from the repository
        env=clean_env(),
        timeout=JOB_TIMEOUT_S,
    )
    output = job_result(result)
    assert output["records"] == sent
    site = str(fresh_venv.resolve())
    assert output["package"].startswith(site), output["package"]
    assert site in output["connector_jar"] and "/kinesis_spark/jars/" in output["connector_jar"], output
