from __future__ import annotations

from pathlib import Path

import pytest

from kinesis_spark import _jar, _versions

REPO_PROPERTIES = Path(__file__).resolve().parents[2] / "versions.properties"


class FakePackage:
    """A stand-in for the installed package folder: versions.properties and jars/ under a temp dir.

    ``pyspark`` is the pyspark version the package's jar picking sees as installed (4.2.0 unless set), so the
    tests do not depend on the pyspark of the environment running them.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.pyspark = "4.2.0"

    def write_properties(
        self,
        version: str = "9.8.7",
        scala: str = "2.13.18",
        cross: tuple[str, str] | None = ("3.5.9", "2.12.21"),
    ) -> None:
        text = f"# test copy\nkinesis-spark={version}\nspark=4.2.0\nscala={scala}\n"
        if cross is not None:
            text += f"cross.spark={cross[0]}\ncross.scala={cross[1]}\n"
        (self.root / "versions.properties").write_text(text, encoding="utf-8")

    def add_jar(self, name: str) -> Path:
        jar = self.root / "jars" / name
        jar.parent.mkdir(exist_ok=True)
        jar.write_bytes(b"PK\x05\x06" + b"\x00" * 18)  # an empty zip: enough to be a file
        return jar


@pytest.fixture
def fake_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakePackage:
    monkeypatch.setattr(_versions, "PACKAGE_DIR", tmp_path)
    package = FakePackage(tmp_path)
    monkeypatch.setattr(_jar, "_installed_pyspark_version", lambda: package.pyspark)
    return package
