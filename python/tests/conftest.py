from __future__ import annotations

from pathlib import Path

import pytest

from kinesis_spark import _versions

REPO_PROPERTIES = Path(__file__).resolve().parents[2] / "versions.properties"


class FakePackage:
    """A stand-in for the installed package folder: versions.properties and jars/ under a temp dir."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write_properties(self, version: str = "9.8.7", scala: str = "2.13.18") -> None:
        text = f"# test copy\nkinesis-spark={version}\nspark=4.2.0\nscala={scala}\n"
        (self.root / "versions.properties").write_text(text, encoding="utf-8")

    def add_jar(self, name: str) -> Path:
        jar = self.root / "jars" / name
        jar.parent.mkdir(exist_ok=True)
        jar.write_bytes(b"PK\x05\x06" + b"\x00" * 18)  # an empty zip: enough to be a file
        return jar


@pytest.fixture
def fake_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakePackage:
    monkeypatch.setattr(_versions, "PACKAGE_DIR", tmp_path)
    return FakePackage(tmp_path)
