#!/usr/bin/env bash
# Makes VENV/spark-classes.jsa: a dynamic class-data-sharing (CDS) archive of the classes a Spark JVM of that
# environment's pyspark loads to start a session and run a few queries. A JVM started with
# -XX:SharedArchiveFile=<it> maps those classes instead of loading and verifying them from the jars: a local
# session's start and first query took 15 s without it and 7 s with it (C1 only, as the tests run), which the
# end-to-end suite pays at every Spark JVM it starts (sessions, spark-submit, a local cluster's driver and
# executors). tests-integration/conftest.py hands the archive of the environment it runs in to every JVM.
#
# A JVM whose JDK or class path differs from the archive's ignores it (silently, with the -Xlog settings that
# conftest.py adds) and starts as it would without. The stamp beside the archive records the JDK, pyspark and its
# jars: a run with the same inputs returns at once. Failing to make the archive only costs that speed: this prints
# why and exits 0. Prints nothing on stdout.
#
# Usage: dev/spark-class-archive.sh VENV
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${1:?usage: dev/spark-class-archive.sh VENV}"
archive="$venv/spark-classes.jsa"
stamp="$archive.stamp"

pyspark_dir="$("$venv/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
wanted="$(
  java -version 2>&1
  "$venv/bin/python" -c 'import pyspark; print("pyspark", pyspark.__version__)'
  ls -l --time-style=+%s "$pyspark_dir/jars" | sha256sum
)"
if [[ -f "$archive" && -f "$stamp" ]] && [[ "$(cat "$stamp")" == "$wanted" ]]; then
  exit 0
fi

mkdir -p "$root/target"
# One archive at a time: dev/test.sh makes the environments side by side while sbt compiles, and each dump is a
# Spark session's worth of CPU.
(
  flock 9
  rm -f "$archive" "$stamp" "$archive.tmp"
  echo "dev/spark-class-archive.sh: archiving the classes of $venv's Spark" >&2
  started=$SECONDS
  dump="-XX:TieredStopAtLevel=1 -XX:ArchiveClassesAtExit=$archive.tmp -Xlog:cds=off -Xlog:cds+dynamic=off"
  if JDK_JAVA_OPTIONS="$dump" "$venv/bin/python" "$root/dev/spark_class_archive_workload.py" >&2 \
      && [[ -s "$archive.tmp" ]]; then
    mv "$archive.tmp" "$archive"
    printf '%s\n' "$wanted" > "$stamp"
    echo "dev/spark-class-archive.sh: $archive ($(du -m "$archive" | cut -f1) MB, $((SECONDS - started)) s)" >&2
  else
    rm -f "$archive.tmp"
    echo "dev/spark-class-archive.sh: no archive for $venv (its Spark JVMs start without one)" >&2
  fi
) 9>"$root/target/.spark-class-archive.lock"
