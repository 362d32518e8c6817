"""The Python package as users will get it once it is on PyPI: the wheel and sdist built by the project's release
command (``dev/release.sh build``), uploaded with ``twine upload`` (``dev/release.sh upload``) to a PyPI-compatible
server on 127.0.0.1 (harness/registries.py), and installed from there with ``pip install
kinesis-spark==<version> --index-url ...`` into a fresh virtual environment that sees nothing of this repository
and already has a pyspark, which the install leaves as it is. A job run there as a plain ``python`` script reads a
stream of the emulator with the jar the wheel bundles. Without the ``pyspark`` extra, pip installs the package
alone: it never installs or replaces a Spark.
"""

from __future__ import annotations

import email
import json
import os
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pyspark
import pytest
from harness.jobs import READ_STREAM_JOB, job_result, run_checked
from harness.registries import Registries
from harness.spark import REPO_ROOT

JOB_TIMEOUT_S = 300
VERSION = next(
    line.split("=", 1)[1].strip()
    for line in (REPO_ROOT / "versions.properties").read_text().splitlines()
    if line.startswith("kinesis-spark=")
)
UV = REPO_ROOT / ".venv-tools" / "bin" / "uv"


def clean_env() -> dict[str, str]:
    """The environment minus anything that would let the fresh venv see this repository's Python packages."""
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV", "SPARK_HOME")}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    return env


@pytest.fixture(scope="module")
def wheel(release: Path) -> Path:
    [built] = (release / "python").glob(f"kinesis_spark-{VERSION}-*.whl")
    return built


def new_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    run_checked(["python3", "-m", "venv", str(venv)], env=clean_env())
    return venv


def pip_install(venv: Path, *requirements: str) -> None:
    run_checked([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                 *requirements], env=clean_env())


def pip_freeze(venv: Path) -> set[str]:
    frozen = run_checked([str(venv / "bin" / "python"), "-m", "pip", "freeze", "--disable-pip-version-check"],
                         env=clean_env())
    return set(frozen.stdout.split())


@pytest.fixture(scope="module")
def installed_from_the_index(registries: Registries, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with this run's pyspark (put there by uv from its cache: pyspark is a 450 MB sdist), then
    ``pip install kinesis-spark==<version>`` from the local PyPI, as a user next to their Spark does."""
    venv = new_venv(tmp_path_factory)
    run_checked([str(UV), "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
                 f"pyspark=={pyspark.__version__}"], env=clean_env())  # fmt: skip
    before = pip_freeze(venv)
    pip_install(venv, f"kinesis-spark=={VERSION}", "--index-url", registries.pypi_index)
    after = pip_freeze(venv)
    assert after - before == {f"kinesis-spark=={VERSION}"} and before <= after, (before, after)
    return venv


def test_the_wheel_holds_both_jars_the_licence_and_the_metadata(wheel: Path):
    archive = zipfile.ZipFile(wheel)
    names = archive.namelist()
    jars = sorted(name for name in names if name.startswith("kinesis_spark/jars/") and name.endswith(".jar"))
    # One per Spark line: Scala 2.12 for Spark 3.5, Scala 2.13 for Spark 4.
    assert [jar.split("_")[-1].split("-")[0] for jar in jars] == ["2.12", "2.13"], names
    assert "kinesis_spark/py.typed" in names
    assert "kinesis_spark/versions.properties" in names
    for name in jars:
        with archive.open(name) as jar, zipfile.ZipFile(jar) as inner:
            assert "io/kinesisspark/KinesisSourceProvider.class" in inner.namelist(), name
            assert {"META-INF/LICENSE", "META-INF/NOTICE"} <= set(inner.namelist()), name
    dist_info = f"kinesis_spark-{VERSION}.dist-info"
    assert archive.read(f"{dist_info}/licenses/LICENSE") == (REPO_ROOT / "LICENSE").read_bytes()
    assert archive.read(f"{dist_info}/licenses/NOTICE") == (REPO_ROOT / "NOTICE").read_bytes()
    metadata = email.message_from_bytes(archive.read(f"{dist_info}/METADATA"))
    # The package's own code is Apache-2.0; the jars it carries bundle code under the others (their META-INF/LICENSE).
    assert metadata["License-Expression"] == "Apache-2.0 AND BSD-3-Clause AND BSL-1.0 AND MIT AND MIT-0 AND MPL-2.0"
    assert "Homepage, https://github.com/kinesis-spark/kinesis-spark" in metadata.get_all("Project-URL")
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert "pip install kinesis-spark" in metadata.get_payload()  # the PyPI page: python/README.md


def test_the_wheel_is_built_from_the_sdist_with_everything_in_it(release: Path, wheel: Path):
    # dev/release.sh builds the wheel from the sdist (python -m build), as pip builds one from PyPI's sdist.
    [sdist] = (release / "python").glob(f"kinesis_spark-{VERSION}.tar.gz")
    with tarfile.open(sdist) as archive:
        members = {member.name.split("/", 1)[1]: member for member in archive.getmembers() if "/" in member.name}
        # Links in the repository (python/LICENSE -> ../LICENSE) must arrive as files.
        assert members["LICENSE"].isfile() and members["NOTICE"].isfile(), members["LICENSE"]
        assert archive.extractfile(members["LICENSE"]).read() == (REPO_ROOT / "LICENSE").read_bytes()
    wheel_names = set(zipfile.ZipFile(wheel).namelist())
    for name in wheel_names:
        if name.startswith("kinesis_spark/"):
            assert f"src/{name}" in members, name


def test_pip_installs_from_the_index_next_to_a_spark_and_reads_a_stream(
    installed_from_the_index: Path, kinesis, stream, emulator, tmp_path
):
    name = stream(2)
    sent = sorted(f"record-{i}" for i in range(40))
    kinesis.put_records(name, [(f"key-{i}", data.encode()) for i, data in enumerate(sent)])

    result = run_checked(
        [str(installed_from_the_index / "bin" / "python"), str(READ_STREAM_JOB), emulator.endpoint, name],
        cwd=tmp_path,  # nothing importable from the repository
        env=clean_env(),
        timeout=JOB_TIMEOUT_S,
    )
    output = job_result(result)
    assert output["records"] == sent
    site = str(installed_from_the_index.resolve())
    assert output["package"].startswith(site), output["package"]
    assert site in output["connector_jar"] and "/kinesis_spark/jars/" in output["connector_jar"], output


def test_the_release_is_signed_and_bundled_for_maven_central(release: Path):
    # dev/test.sh signs its release with a throwaway key (KINESIS_SPARK_GPG_KEY); gpg checks every signature.
    files = sorted(p for p in (release / "maven").rglob("*") if p.suffix in (".jar", ".pom"))
    assert len(files) == 8, files  # jar, POM, sources, scaladoc, for each Scala line
    if not os.environ.get("KINESIS_SPARK_GPG_KEY"):
        pytest.fail("KINESIS_SPARK_GPG_KEY is not set: dev/test.sh makes a throwaway key and signs with it")
    for file in files:
        check = subprocess.run(["gpg", "--batch", "--verify", f"{file}.asc", str(file)], capture_output=True, text=True)
        assert check.returncode == 0 and "Good signature" in check.stderr, (file, check.stderr)
    with zipfile.ZipFile(release / "central-bundle.zip") as bundle:
        names = set(bundle.namelist())
    for file in files:
        path = file.relative_to(release / "maven").as_posix()
        assert {path, f"{path}.asc", f"{path}.md5", f"{path}.sha1", f"{path}.asc.sha1"} <= names, path


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


def test_the_pyspark_extra_brings_a_supported_pyspark_into_a_fresh_venv(
    wheel: Path, tmp_path_factory: pytest.TempPathFactory
):
    # What `pip install "kinesis_spark-...whl[pyspark]"` would install in an environment without Spark (the README's
    # line for a fresh environment): the package and a pyspark of the range the package supports.
    venv = new_venv(tmp_path_factory)
    report = run_checked([str(venv / "bin" / "python"), "-m", "pip", "install", "--dry-run", "--quiet",
                          "--disable-pip-version-check", "--report", "-", f"{wheel}[pyspark]"], env=clean_env())
    installs = {item["metadata"]["name"].lower(): item["metadata"]["version"]
                for item in json.loads(report.stdout)["install"]}
    assert installs["kinesis-spark"] == VERSION, installs
    properties = dict(line.split("=", 1) for line in (REPO_ROOT / "versions.properties").read_text().splitlines()
                      if "=" in line and not line.startswith("#"))
    lines = [properties["spark"], properties["cross.spark"], *properties["spark.also"].split(",")]
    supported = {".".join(line.strip().split(".")[:2]) for line in lines}
    assert ".".join(installs["pyspark"].split(".")[:2]) in supported, (installs, supported)
