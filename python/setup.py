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


def pyspark_requirement(spark: str, cross_spark: str | None = None, also: tuple[str, ...] = ()) -> str:
    # The 2.13 jar is compiled against one Spark minor version (spark=4.2.0: any 4.2 from 4.2.0 on) and runs
    # on the other minors of spark.also (any patch release of each); the cross build's jar on cross.spark's
    # minor (from cross.spark on). The union is one range with exclusions: spark=4.2.0 with
    # spark.also=4.0.5,4.3.0 and cross.spark=3.5.9 gives "pyspark>=3.5.9,<4.4,!=4.1.*". Spark 3.5 is the last
    # 3.x minor version, so only the newer major's minors lie between the two lines.
    major, minor, patch = parse_spark(spark)
    minors = {minor}
    for other in also:
        other_major, other_minor, _ = parse_spark(other)
        if other_major != major:
            raise SystemExit(f"versions.properties: spark.also={other} is not a Spark {major} version")
        minors.add(other_minor)
    top, bottom = max(minors), min(minors)
    excluded = [f"!={major}.{m}.*" for m in range(bottom, top) if m not in minors]
    excluded += [f"!={major}.{minor}.{p}" for p in range(patch)]
    if cross_spark is None:
        return ",".join(
            [
                f"pyspark>={major}.{bottom}.0" if bottom < minor else f"pyspark>={spark}",
                f"<{major}.{top + 1}",
                *excluded,
            ]
        )
    low_major, low_minor, _ = parse_spark(cross_spark)
    if (low_major, low_minor) >= (major, bottom):
        raise SystemExit(f"versions.properties: cross.spark={cross_spark} must be older than spark={spark}")
    first_minor = low_minor + 1 if low_major == major else 0
    excluded = [f"!={major}.{m}.*" for m in range(first_minor, bottom)] + excluded
    return ",".join([f"pyspark>={cross_spark}", f"<{major}.{top + 1}", *excluded])


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
    extras_require={
        "pyspark": [
            pyspark_requirement(
                versions["spark"],
                versions.get("cross.spark"),
                tuple(v.strip() for v in versions.get("spark.also", "").split(",") if v.strip()),
            )
        ]
    },
)
