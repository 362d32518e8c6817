#!/usr/bin/env bash
# Publishes the connector as a Maven artifact (the shaded jar, its POM, sources and scaladoc) into a directory laid
# out as a Maven repository, for `spark-submit --packages <organization>:kinesis-spark_2.13:<version>
# --repositories file://<dir>`. The coordinates come from build.sbt and versions.properties; the POM lists only
# Spark and Scala, as provided (everything else is shaded inside the jar).
#
# Usage: dev/publish-maven.sh DIR
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ $# -eq 1 ]] || { echo "usage: dev/publish-maven.sh DIR" >&2; exit 2; }
mkdir -p "$1"
dir="$(cd "$1" && pwd)"
cd "$root"
KINESIS_SPARK_PUBLISH_TO="$dir" build/sbt connector/publish >&2
echo "dev/publish-maven.sh: published into $dir" >&2
find "$dir" -name '*.pom' -print
