from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest

import kinesis_spark
from conftest import REPO_PROPERTIES, FakePackage
from kinesis_spark._versions import package_version, read_properties

needs_repo = pytest.mark.skipif(not REPO_PROPERTIES.is_file(), reason="not run from a repository checkout")


def installed_metadata() -> metadata.PackageMetadata:
    try:
        return metadata.metadata("kinesis-spark")
    except metadata.PackageNotFoundError:
        pytest.skip("kinesis-spark is not installed (pip install -e python)")


@needs_repo
def test_version_is_the_one_in_versions_properties() -> None:
    assert kinesis_spark.__version__ == read_properties(REPO_PROPERTIES)["kinesis-spark"]


@needs_repo
def test_installed_metadata_comes_from_versions_properties() -> None:
    props = read_properties(REPO_PROPERTIES)
    major, minor, _ = props["spark"].split(".")
    meta = installed_metadata()
    assert meta["Version"] == props["kinesis-spark"]
    requires = meta.get_all("Requires-Dist") or []
    pyspark = [r.replace(" ", "") for r in requires if r.startswith("pyspark")]
    assert len(pyspark) == 1
    assert sorted(pyspark[0].removeprefix("pyspark").split(",")) == sorted(
        [f">={props['spark']}", f"<{major}.{int(minor) + 1}"]
    )


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
