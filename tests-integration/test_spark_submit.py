"""``spark-submit --packages`` as users will run it once the connector is on Maven Central: the release built by
``dev/release.sh build`` is deployed by ``dev/release.sh upload`` (a Maven deploy, as a release does) to a Maven
repository over HTTP on 127.0.0.1 (harness/registries.py), resolved from there by Spark's own Ivy (a per-test
``spark.jars.ivy``, so nothing comes from or goes to ~/.ivy2), and used by a PySpark job against the emulator. Both
artifacts are released (``_2.13`` for Spark 4, ``_2.12`` for Spark 3.5); the one of the installed pyspark's Scala
version is used. The POM must carry what Maven Central requires and list only what Spark provides; the shaded
dependencies are inside the jar, with their licences.
"""

from __future__ import annotations

import io
import os
import sys
import urllib.request
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pyspark
import pytest
from harness.jobs import READ_STREAM_JOB, job_result, run_checked
from harness.registries import Registries
from harness.spark import SCALA_BINARY

POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}
SUBMIT_TIMEOUT_S = 600
GROUP = "io.github.kinesis-spark"
PROJECT_URL = "https://github.com/kinesis-spark/kinesis-spark"


def version() -> str:
    text = (Path(__file__).resolve().parents[1] / "versions.properties").read_text()
    return next(line.split("=", 1)[1].strip() for line in text.splitlines() if line.startswith("kinesis-spark="))


def artifact_url(registries: Registries, suffix: str) -> str:
    artifact = f"kinesis-spark_{SCALA_BINARY}"
    return f"{registries.maven}{GROUP.replace('.', '/')}/{artifact}/{version()}/{artifact}-{version()}{suffix}"


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read()


@pytest.fixture(scope="module")
def pom(registries: Registries) -> ET.Element:
    """The POM of this pyspark's Scala version, as the registry serves it after the deploy."""
    return ET.fromstring(fetch(artifact_url(registries, ".pom")))


def coordinates(pom: ET.Element) -> str:
    return ":".join(pom.findtext(f"m:{field}", namespaces=POM_NS) or "" for field in ("groupId", "artifactId", "version"))


@pytest.mark.line_smoke
def test_the_pom_carries_what_maven_central_requires_and_only_what_spark_provides(pom: ET.Element):
    assert coordinates(pom) == f"{GROUP}:kinesis-spark_{SCALA_BINARY}:{version()}"
    dependencies = {
        (d.findtext("m:artifactId", namespaces=POM_NS), d.findtext("m:scope", namespaces=POM_NS))
        for d in pom.iterfind("m:dependencies/m:dependency", POM_NS)
    }
    assert dependencies == {(f"spark-sql_{SCALA_BINARY}", "provided"), ("scala-library", "provided")}
    # https://central.sonatype.org/publish/requirements/#required-pom-metadata
    text = {field: pom.findtext(path, namespaces=POM_NS) for field, path in {
        "name": "m:name", "description": "m:description", "url": "m:url",
        "licence": "m:licenses/m:license/m:name", "licence url": "m:licenses/m:license/m:url",
        "developer": "m:developers/m:developer/m:name", "scm": "m:scm/m:url", "connection": "m:scm/m:connection",
    }.items()}  # fmt: skip
    assert text == {
        "name": "kinesis-spark",
        "description": "Spark Structured Streaming connector for Amazon Kinesis Data Streams (shaded jar).",
        "url": PROJECT_URL,
        "licence": "Apache-2.0",
        "licence url": "https://www.apache.org/licenses/LICENSE-2.0.txt",
        "developer": "the kinesis-spark contributors",
        "scm": PROJECT_URL,
        "connection": f"scm:git:{PROJECT_URL}.git",
    }


@pytest.mark.line_smoke
def test_the_deployed_jars_carry_the_licences_of_all_they_bundle(registries: Registries):
    jar = zipfile.ZipFile(io.BytesIO(fetch(artifact_url(registries, ".jar"))))
    names = set(jar.namelist())
    assert "io/kinesisspark/KinesisSourceProvider.class" in names
    assert any(name.startswith("io/kinesisspark/shaded/awssdk/services/kinesis/") for name in names)
    assert not any(name.startswith(("software/amazon/", "io/netty/", "com/google/protobuf/")) for name in names)
    licence = jar.read("META-INF/LICENSE").decode()
    notice = jar.read("META-INF/NOTICE").decode()
    repository_licence = (Path(__file__).resolve().parents[1] / "LICENSE").read_text()
    assert licence.startswith(repository_licence.rstrip()), licence[:500]
    # Every bundled library is listed with its licence; the shaded packages say which libraries are inside.
    for library, shaded in [
        ("software.amazon.awssdk:kinesis:", "io/kinesisspark/shaded/awssdk/services/kinesis/"),
        ("io.netty:netty-codec-http2:", "io/kinesisspark/shaded/netty/handler/codec/http2/"),
        ("com.google.protobuf:protobuf-java:", "io/kinesisspark/shaded/protobuf/"),
        ("org.apache.httpcomponents:httpclient:", "io/kinesisspark/shaded/apachehttp/client/"),
        ("org.reactivestreams:reactive-streams:", "io/kinesisspark/shaded/reactivestreams/"),
    ]:
        assert any(name.startswith(shaded) for name in names), shaded
        assert f"\n{library}" in licence, library
    # The AWS SDK's NOTICE, which the Apache License asks a redistribution to pass on, and protobuf's BSD terms.
    assert "AWS SDK for Java 2.0" in notice and "Copyright Amazon.com, Inc." in notice, notice[:2000]
    texts = {name: jar.read(name).decode() for name in names if name.startswith("META-INF/licenses/")}
    assert any("Copyright 2008 Google Inc." in text for text in texts.values()), sorted(texts)
    for listed in {line.split("Its texts: ")[1] for line in licence.splitlines() if "Its texts: " in line}:
        for path in listed.split(", "):
            assert path in texts, path
    # Only the generated files speak for the jar: no library's own licence file left at the top of META-INF.
    assert not [n for n in names if n.startswith("META-INF/") and n.count("/") == 1 and "LICENSE" in n.upper()
                and n != "META-INF/LICENSE"]


@pytest.mark.parametrize(
    "repository",
    # Over HTTP, from the repository the release was deployed to, on every Spark line; from the release folder itself
    # (the README's line for today, before anything is published), on the main line.
    [pytest.param("deployed", marks=pytest.mark.line_smoke), "release folder"],
)
def test_spark_submit_packages_reads_a_stream(
    repository: str, registries: Registries, release: Path, pom, kinesis, stream, emulator, tmp_path
):
    repositories = registries.maven if repository == "deployed" else (release / "maven").as_uri()
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
            "--repositories", repositories,
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
    group, artifact, released = coordinates(pom).split(":")
    assert f"found {group}#{artifact};{released} in repo-1" in result.stderr, result.stderr[-3000:]
