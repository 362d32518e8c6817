# Supplies the two dynamic fields of pyproject.toml from versions.properties, the one place for versions.
# The repository's copy wins; an sdist or a copied python/ tree falls back to the copy that
# dev/build-python.sh puts inside the package.
from __future__ import annotations

import re
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
CANDIDATES = (HERE.parent / "versions.properties", HERE / "src" / "kinesis_spark" / "versions.properties")


def read_properties(path: Path) -> dict[str, str]:
    # The subset of the Java properties format that versions.properties uses: key=value lines and comments.
    props: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")):
            key, _, value = line.partition("=")
            props[key.strip()] = value.strip()
    return props


def pyspark_requirement(spark: str) -> str:
    # Spark 4.2.0 -> "pyspark>=4.2.0,<4.3": the connector is compiled against one Spark minor version.
    match = re.fullmatch(r"(\d+)\.(\d+)\.\d+", spark)
    if match is None:
        raise SystemExit(f"versions.properties: spark={spark!r} is not a MAJOR.MINOR.PATCH version")
    major, minor = int(match.group(1)), int(match.group(2))
    return f"pyspark>={spark},<{major}.{minor + 1}"


source = next((p for p in CANDIDATES if p.is_file()), None)
if source is None:
    raise SystemExit(
        "versions.properties not found (looked at: " + ", ".join(map(str, CANDIDATES)) + "); "
        "build from the repository, or run `bash dev/build-python.sh` first"
    )
versions = read_properties(source)

setup(
    version=versions["kinesis-spark"],
    install_requires=[pyspark_requirement(versions["spark"])],
)
