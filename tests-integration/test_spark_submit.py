"""``spark-submit --packages``: the connector published by sbt (``bash dev/publish-maven.sh DIR``) into a Maven
repository in a directory, resolved from there by Spark's own Ivy (a per-test ``spark.jars.ivy``, so nothing
comes from or goes to ~/.ivy2), and used by a PySpark job against the emulator. Both artifacts are published
(``_2.13`` for Spark 4, ``_2.12`` for Spark 3.5); the one of the installed pyspark's Scala version is used. The
POM must list only what Spark provides; the shaded dependencies are inside the jar. ``KINESIS_SPARK_MAVEN_REPO``
names a repository published already (dev/test.sh publishes once for every Spark line's run).
"""

from __future__ import annotations

import os
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pyspark
import pytest
from harness.jobs import READ_STREAM_JOB, job_result, run_checked
from harness.spark import REPO_ROOT, SCALA_BINARY

POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}
SUBMIT_TIMEOUT_S = 600
# A Maven repository directory already holding what dev/publish-maven.sh publishes (set by dev/test.sh, which
# publishes once per run); unset, the tests publish into a temporary directory themselves.
PUBLISHED_VARIABLE = "KINESIS_SPARK_MAVEN_REPO"


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ET.Element]:
    """(the repository directory, the parsed POM of this pyspark's Scala version) after publishing with the
    project's command."""
    prebuilt = os.environ.get(PUBLISHED_VARIABLE, "")
    if prebuilt:
        # dev/test.sh published both artifacts with the same command, in the sbt run that built the jars: publishing
        # again here (an sbt start and both Scala versions) would cost each Spark line's smoke run about 100 s.
        repo = Path(prebuilt)
        paths = [str(path) for path in repo.rglob("*.pom")]
    else:
        repo = tmp_path_factory.mktemp("maven") / "repo"
        result = run_checked(
            ["bash", str(REPO_ROOT / "dev" / "publish-maven.sh"), str(repo)], timeout=SUBMIT_TIMEOUT_S
        )
        paths = [line for line in result.stdout.splitlines() if line.endswith(".pom")]
    poms = sorted(Path(path).name for path in paths)
    assert [name.split("-")[1] for name in poms] == ["spark_2.12", "spark_2.13"], paths
    [pom] = [Path(path) for path in paths if f"kinesis-spark_{SCALA_BINARY}-" in path]
    return repo, ET.parse(pom).getroot()


def coordinates(pom: ET.Element) -> str:
    return ":".join(pom.findtext(f"m:{field}", namespaces=POM_NS) or "" for field in ("groupId", "artifactId", "version"))


@pytest.mark.line_smoke
def test_the_pom_lists_only_what_spark_provides(published):
    repo, pom = published
    group, artifact, version = coordinates(pom).split(":")
    assert artifact == f"kinesis-spark_{SCALA_BINARY}"
    dependencies = {
        (d.findtext("m:artifactId", namespaces=POM_NS), d.findtext("m:scope", namespaces=POM_NS))
        for d in pom.iterfind("m:dependencies/m:dependency", POM_NS)
    }
    assert dependencies == {(f"spark-sql_{SCALA_BINARY}", "provided"), ("scala-library", "provided")}

    jar = repo.joinpath(*group.split("."), artifact, version, f"{artifact}-{version}.jar")
    names = set(zipfile.ZipFile(jar).namelist())
    assert "io/kinesisspark/KinesisSourceProvider.class" in names
    assert any(name.startswith("io/kinesisspark/shaded/awssdk/services/kinesis/") for name in names)
    assert not any(name.startswith(("software/amazon/", "io/netty/", "com/google/protobuf/")) for name in names)


@pytest.mark.line_smoke
def test_spark_submit_packages_reads_a_stream(published, kinesis, stream, emulator, tmp_path):
    repo, pom = published
    name = stream(2)
    sent = sorted(f"submitted-{i}" for i in range(30))
    kinesis.put_records(name, [(f"key-{i}", data.encode()) for i, data in enumerate(sent)])

    spark_home = Path(pyspark.__file__).resolve().parent
    ivy = tmp_path / "ivy"
    env = {
        **os.environ,
        "SPARK_HOME": str(spark_home),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    result = run_checked(
        [
            str(spark_home / "bin" / "spark-submit"),
            "--master", "local[1]",
            "--packages", coordinates(pom),
            "--repositories", repo.as_uri(),
            "--conf", f"spark.jars.ivy={ivy}",
            str(READ_STREAM_JOB), emulator.endpoint, name,
        ],  # fmt: skip
        env=env,
        cwd=tmp_path,
        timeout=SUBMIT_TIMEOUT_S,
    )
    output = job_result(result)
    assert output["records"] == sent
    # The connector came from --packages (Ivy's copy under spark.jars.ivy), not from the pip package's jar:
    # configure() saw it loaded and added nothing. Ivy found it in the repository given (the first of
    # --repositories is "repo-1"), not in a local Maven or Ivy cache.
    assert str(ivy) in output["connector_jar"], output["connector_jar"]
    group, artifact, version = coordinates(pom).split(":")
    assert f"found {group}#{artifact};{version} in repo-1" in result.stderr, result.stderr[-3000:]
