#!/usr/bin/env bash
# Publishes the connector as Maven artifacts (the shaded jar, its POM, sources and scaladoc) into a directory laid
# out as a Maven repository, for `spark-submit --packages <organization>:kinesis-spark_<scala>:<version>
# --repositories file://<dir>`: kinesis-spark_2.13 for Spark 4.x and kinesis-spark_2.12 for Spark 3.5, both built
# from the same sources (sbt's `+`, over crossScalaVersions). The coordinates come from build.sbt and
# versions.properties; each POM lists only Spark and Scala (and, for 2.12, scala-collection-compat), as provided:
# everything else is shaded inside the jar.
#
# Usage: dev/publish-maven.sh DIR
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ $# -eq 1 ]] || { echo "usage: dev/publish-maven.sh DIR" >&2; exit 2; }
mkdir -p "$1"
dir="$(cd "$1" && pwd)"
cd "$root"
KINESIS_SPARK_PUBLISH_TO="$dir" build/sbt "+connector/publish" >&2
echo "dev/publish-maven.sh: published into $dir" >&2
find "$dir" -name '*.pom' -print
