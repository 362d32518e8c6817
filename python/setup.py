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


def parse_spark(spark: str) -> tuple[int, int, int]:
    match = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", spark)
    if match is None:
        raise SystemExit(f"versions.properties: Spark version {spark!r} is not a MAJOR.MINOR.PATCH version")
    return int(match.group(1)), int(match.group(2)), int(match.group(3))


def pyspark_requirement(spark: str, cross_spark: str | None = None) -> str:
    # Each jar is compiled against one Spark minor version: spark=4.2.0 alone gives "pyspark>=4.2.0,<4.3".
    # With the cross build (cross.spark=3.5.9) the wheel runs on either line, a union that one specifier can
    # only say by exclusion: "pyspark>=3.5.9,<4.3,!=4.0.*,!=4.1.*". Spark 3.5 is the last 3.x minor version,
    # so only the newer major's earlier minors (and patches) lie between the two lines.
    major, minor, patch = parse_spark(spark)
    if cross_spark is None:
        return f"pyspark>={spark},<{major}.{minor + 1}"
    low_major, low_minor, _ = parse_spark(cross_spark)
    if (low_major, low_minor) >= (major, minor):
        raise SystemExit(f"versions.properties: cross.spark={cross_spark} must be older than spark={spark}")
    first_minor = low_minor + 1 if low_major == major else 0
    excluded = [f"!={major}.{m}.*" for m in range(first_minor, minor)]
    excluded += [f"!={major}.{minor}.{p}" for p in range(patch)]
    return ",".join([f"pyspark>={cross_spark}", f"<{major}.{minor + 1}", *excluded])


source = next((p for p in CANDIDATES if p.is_file()), None)
if source is None:
    raise SystemExit(
        "versions.properties not found (looked at: " + ", ".join(map(str, CANDIDATES)) + "); "
        "build from the repository, or run `bash dev/build-python.sh` first"
    )
versions = read_properties(source)

# pyspark is an extra, never a requirement: installing the package must not install, upgrade or replace the
# Spark a user (or a cluster) already has, nor pull full pyspark into a Spark Connect client environment
# (pyspark-client). A fresh environment asks for it: pip install "kinesis-spark[pyspark]".
setup(
    version=versions["kinesis-spark"],
    extras_require={"pyspark": [pyspark_requirement(versions["spark"], versions.get("cross.spark"))]},
)
