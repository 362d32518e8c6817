from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

import kinesis_spark
from conftest import REPO_PROPERTIES, FakePackage
from kinesis_spark._versions import package_version, read_properties

# The sdist carries these tests (MANIFEST.in) but not the repository's versions.properties: run from an
# unpacked sdist, these tests do not apply. dev/test.sh always runs them from a checkout and fails a run with
# a skip not on its allowlist, so a checkout that loses the file fails there.
needs_repo = pytest.mark.skipif(not REPO_PROPERTIES.is_file(), reason="not run from a repository checkout")


def installed_metadata() -> metadata.PackageMetadata:
    """The installed distribution's metadata; not installed (``pip install -e python``) fails the test."""
    return metadata.metadata("kinesis-spark")


@needs_repo
def test_version_is_the_one_in_versions_properties() -> None:
    assert kinesis_spark.__version__ == read_properties(REPO_PROPERTIES)["kinesis-spark"]


@needs_repo
def test_installed_metadata_comes_from_versions_properties() -> None:
    props = read_properties(REPO_PROPERTIES)
    meta = installed_metadata()
    assert meta["Version"] == props["kinesis-spark"]
    requires = [Requirement(r) for r in meta.get_all("Requires-Dist") or []]
    pyspark = [r for r in requires if r.name == "pyspark"]
    assert len(pyspark) == 1
    # Only with the extra: installing the package never installs, upgrades or replaces a user's Spark.
    assert meta.get_all("Provides-Extra") == ["pyspark"]
    assert pyspark[0].marker is not None and not pyspark[0].marker.evaluate({"extra": ""})
    assert pyspark[0].marker.evaluate({"extra": "pyspark"})
    assert [r for r in requires if r.marker is None or r.marker.evaluate({"extra": ""})] == []
    # Every patch release of the Spark lines the jars run on (from the version built against, on the lines
    # built against), and nothing else.
    spark, cross = Version(props["spark"]), Version(props["cross.spark"])
    also = [Version(v) for v in props.get("spark.also", "").split(",") if v.strip()]
    minors = {spark.minor, *(v.minor for v in also)}
    accepted = [
        props["spark"],
        f"{spark.major}.{spark.minor}.{spark.micro + 1}",
        props["cross.spark"],
        f"{cross.major}.{cross.minor}.{cross.micro + 7}",
        *(f"{v.major}.{v.minor}.{p}" for v in also for p in (0, v.micro, v.micro + 3)),
    ]
    refused = [
        f"{spark.major}.{max(minors) + 1}.0",
        f"{spark.major + 1}.0.0",
        f"{cross.major}.{cross.minor - 1}.0",
        *(f"{spark.major}.{m}.0" for m in range(min(minors)) if m not in minors),
        *(f"{spark.major}.{m}.0" for m in range(min(minors), max(minors)) if m not in minors),
    ]
    if cross.micro > 0:
        refused.append(f"{cross.major}.{cross.minor}.{cross.micro - 1}")
    if spark.micro > 0:
        refused.append(f"{spark.major}.{spark.minor}.{spark.micro - 1}")
    assert [v for v in accepted + refused if v in pyspark[0].specifier] == accepted, pyspark[0]


def test_packaged_properties_win(fake_package: FakePackage) -> None:
    fake_package.write_properties(version="9.8.7")
    assert package_version() == "9.8.7"


def test_falls_back_to_package_metadata(fake_package: FakePackage, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metadata, "version", lambda name: {"kinesis-spark": "1.2.3"}[name])
    assert package_version() == "1.2.3"


def test_read_properties_understands_comments_blanks_and_spaces(tmp_path: Path) -> None:
    path = tmp_path / "v.properties"
    path.write_text("# a comment\n! another\n\n  spark = 4.2.0  \nkinesis-spark=0.1.0\n", encoding="utf-8")
    assert read_properties(path) == {"spark": "4.2.0", "kinesis-spark": "0.1.0"}
