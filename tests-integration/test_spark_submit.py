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
import subprocess
import sys
import tomllib
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
# The project's URL as the Python package states it: the POM must state the same.
PROJECT_URL = tomllib.loads((Path(__file__).resolve().parents[1] / "python" / "pyproject.toml").read_text())[
    "project"
]["urls"]["Homepage"]


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


# The top-level packages of io/kinesisspark/shaded/ and the libraries whose classes they hold (build.sbt's shade
# rules; Jackson is the AWS SDK's own third-party copy, under awssdk/thirdparty).
SHADED = {
    "apachehttp": ["org.apache.httpcomponents:httpclient:", "org.apache.httpcomponents:httpcore:"],
    "awssdk": ["software.amazon.awssdk:sdk-core:", "software.amazon.awssdk:third-party-jackson-core:"],
    "commons": ["commons-codec:commons-codec:", "commons-logging:commons-logging:"],
    "netty": ["io.netty:netty-common:", "io.netty:netty-codec-http2:"],
    "protobuf": ["com.google.protobuf:protobuf-java:"],
    "reactivestreams": ["org.reactivestreams:reactive-streams:"],
}
# Files outside the connector's and the shaded packages, and the library each comes from.
ROOT_FILES = {"VersionInfo.java": "software.amazon.awssdk:sdk-core:", "mime.types": "software.amazon.awssdk:sdk-core:",
              "mozilla/public-suffix-list.txt": "org.apache.httpcomponents:httpclient:"}  # fmt: skip


@pytest.mark.line_smoke
def test_the_deployed_jars_carry_the_licences_of_all_they_bundle(registries: Registries):
    jar = zipfile.ZipFile(io.BytesIO(fetch(artifact_url(registries, ".jar"))))
    names = set(jar.namelist())
    assert "io/kinesisspark/KinesisSourceProvider.class" in names
    assert not any(name.startswith(("software/amazon/", "io/netty/", "com/google/protobuf/")) for name in names)
    licence = jar.read("META-INF/LICENSE").decode()
    notice = jar.read("META-INF/NOTICE").decode()
    repository_licence = (Path(__file__).resolve().parents[1] / "LICENSE").read_text()
    assert licence.startswith(repository_licence.rstrip()), licence[:500]
    # Everything in the jar is the connector's, or belongs to a library the LICENSE lists with its licence.
    shaded = {name.split("/")[3] for name in names if name.startswith("io/kinesisspark/shaded/") and name.count("/") > 3}
    assert shaded == set(SHADED), shaded
    outside = {name for name in names if not name.endswith("/")
               and not name.startswith(("io/kinesisspark/", "org/apache/spark/kinesisspark/", "META-INF/"))}
    assert outside == set(ROOT_FILES), outside
    for library in [*(lib for libs in SHADED.values() for lib in libs), *ROOT_FILES.values()]:
        assert f"\n{library}" in licence and "Licence: " in licence.split(f"\n{library}", 1)[1][:300], library
    texts = {name: jar.read(name).decode() for name in names if name.startswith("META-INF/licenses/")}
    for listed in {line.split("Its texts: ")[1] for line in licence.splitlines() if "Its texts: " in line}:
        for path in listed.split(", "):
            assert path in texts, path
    # The NOTICE texts the Apache License asks a redistribution to pass on (the AWS SDK's, Netty's, which its jars
    # do not carry), protobuf's BSD terms, and the MIT terms of code Netty contains (jbzip2).
    assert "AWS SDK for Java 2.0" in notice and "Copyright Amazon.com, Inc." in notice, notice[:2000]
    assert "The Netty Project" in notice and "mozilla/public-suffix-list.txt" in notice
    assert any("Copyright 2008 Google Inc." in text for text in texts.values()), sorted(texts)
    assert any("jbzip2" in name for name in texts), sorted(texts)
    # Only the generated files speak for the jar: no library's own licence file left at the top of META-INF.
    assert not [n for n in names if n.startswith("META-INF/") and n.count("/") == 1 and "LICENSE" in n.upper()
                and n != "META-INF/LICENSE"]


@pytest.mark.line_smoke
def test_the_deployed_files_are_signed(registries: Registries, tmp_path):
    # dev/test.sh signs its release with a throwaway key (KINESIS_SPARK_GPG_KEY) and the deploy carries the
    # signatures: gpg checks each against the file the registry serves.
    if not os.environ.get("KINESIS_SPARK_GPG_KEY"):
        pytest.fail("KINESIS_SPARK_GPG_KEY is not set: dev/test.sh makes a throwaway key and signs with it")
    for suffix in (".jar", ".pom", "-sources.jar", "-javadoc.jar"):
        file, signature = tmp_path / f"file{suffix}", tmp_path / f"file{suffix}.asc"
        file.write_bytes(fetch(artifact_url(registries, suffix)))
        signature.write_bytes(fetch(artifact_url(registries, f"{suffix}.asc")))
        check = subprocess.run(["gpg", "--batch", "--verify", str(signature), str(file)],
                               capture_output=True, text=True, check=False)  # fmt: skip
        assert check.returncode == 0 and "Good signature" in check.stderr, (suffix, check.stderr)


@pytest.mark.parametrize(
    "repository",
    # Over HTTP, from the repository the release was deployed to, on every Spark line; from the release folder itself
    # (the README's line for today, before anything is published), on the main line.
    [pytest.param("deployed", marks=pytest.mark.line_smoke), "release folder"],
)
def test_spark_submit_packages_reads_a_stream(repository: str, request, release: Path, kinesis, stream, emulator, tmp_path):
    if repository == "deployed":
        repositories = request.getfixturevalue("registries").maven
        pom = request.getfixturevalue("pom")
    else:  # the release folder alone, as the README's line for today uses it: its own POM, no registry
        repositories = (release / "maven").as_uri()
        [release_pom] = (release / "maven").rglob(f"kinesis-spark_{SCALA_BINARY}-*.pom")
        pom = ET.parse(release_pom).getroot()
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
