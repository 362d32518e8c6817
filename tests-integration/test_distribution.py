"""The wheel as users get it: built by the project's own command (``bash dev/build-python.sh --wheel``),
installed into a fresh virtual environment that sees nothing of this repository (with the ``pyspark`` extra, pip
brings pyspark, from its cache when it has it), and used there, by a job run as a plain ``python`` script, to read
a stream of the emulator with the jar the wheel bundles. Without the extra, pip installs the package alone: it
never installs or replaces a Spark.
"""

from __future__ import annotations

import json
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


def new_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    run_checked(["python3", "-m", "venv", str(venv)], env=clean_env())
    return venv


def pip_install(venv: Path, *requirements: str) -> None:
    run_checked([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                 *requirements], env=clean_env())


@pytest.fixture(scope="module")
def fresh_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel with its extra, as a new user installs it: `pip install "kinesis-spark[pyspark]"`."""
    venv = new_venv(tmp_path_factory)
    pip_install(venv, f"{wheel}[pyspark]")
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


def test_without_the_extra_pip_installs_no_spark_and_the_package_says_what_is_missing(
    wheel: Path, tmp_path_factory: pytest.TempPathFactory
):
    venv = new_venv(tmp_path_factory)
    python = str(venv / "bin" / "python")
    pip_install(venv, str(wheel))
    listed = run_checked([python, "-m", "pip", "list", "--format=json", "--disable-pip-version-check"], env=clean_env())
    names = {package["name"].lower() for package in json.loads(listed.stdout)}
    assert "kinesis-spark" in names and not names & {"pyspark", "pyspark-client", "py4j"}, names
    probe = (
        "import kinesis_spark\n"
        "print(kinesis_spark.jar_path('3.5.4'))\n"
        "try:\n"
        "    kinesis_spark.jar_path()\n"
        "except kinesis_spark.PySparkNotFoundError as missing:\n"
        "    print('MISSING', missing)\n"
    )
    out = run_checked([python, "-c", probe], env=clean_env()).stdout.splitlines()
    assert "/kinesis_spark/jars/kinesis-spark-assembly_2.12-" in out[0], out  # a jar asked for by Spark version
    assert out[1].startswith("MISSING pyspark is not installed"), out
    assert 'pip install "kinesis-spark[pyspark]"' in out[1], out


LINE_VENVS = sorted(REPO_ROOT.glob(".venv-spark*")) + [REPO_ROOT / ".venv-connect"]


@pytest.mark.parametrize("venv", LINE_VENVS, ids=lambda venv: venv.name)
def test_installing_next_to_a_spark_leaves_it_as_it_is(wheel: Path, venv: Path):
    # Each Spark line's venv (pyspark 3.5, 4.0, 4.1, 4.3 from dev/python-env.sh) and the Connect client's
    # (pyspark-client): what pip would install there for the wheel, counting the package as not yet installed
    # (--ignore-installed; the venvs have it in editable form): the package alone, never a Spark.
    python = venv / "bin" / "python"
    if not python.is_file():
        pytest.fail(f"{venv} is missing: dev/test.sh makes it (dev/python-env.sh --line/--cross/--connect-client)")
    report = run_checked([str(python), "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                          "--disable-pip-version-check", "--report", "-", str(wheel)], env=clean_env())
    installs = {item["metadata"]["name"].lower() for item in json.loads(report.stdout)["install"]}
    assert installs == {"kinesis-spark"}, installs
