#!/usr/bin/env bash
# Creates or updates the repository's Python environment (.venv at the repository root, gitignored):
# pyspark pinned to the Spark version of versions.properties, the integration-test requirements, and the
# kinesis_spark package (editable) once python/pyproject.toml exists. A stamp file records what was
# installed, so a second run with unchanged inputs returns at once.
# Prints nothing on stdout but the venv's path, so callers can do venv="$(bash dev/python-env.sh)".
#
# With --cross, the same for the cross build's Spark line (Spark 3.5, whose jar is Scala 2.12): pyspark pinned to
# cross.spark, in .venv-spark<MAJOR.MINOR> (KINESIS_SPARK_CROSS_VENV overrides), for the Spark 3.5 smoke suite.
# With --line VERSION, the same for pyspark VERSION, in .venv-spark<MAJOR.MINOR>: the other Spark lines a jar runs
# on (spark.also in versions.properties), for their smoke runs and the linkage check.
# With --connect-client, a Spark Connect client environment in .venv-connect: pyspark-client (no JVM, no full
# pyspark) of the spark version and the package, as a Connect user has it; the Connect tests run their client
# code there.
#
# Usage: dev/python-env.sh [--cross | --line VERSION | --connect-client]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"

property() { sed -n "s/^${1//./\\.} *= *//p" "$root/versions.properties" | tr -d '[:space:]'; }
case "${1:-}" in
  "") spark_version="$(property spark)"; what=spark ;;
  --cross) spark_version="$(property cross.spark)"; what=cross.spark ;;
  --line)
    spark_version="${2:-}"; what="--line"
    [[ "$spark_version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] \
      || { echo "dev/python-env.sh: --line needs a pyspark version such as 4.0.5, not '$spark_version'" >&2; exit 2; } ;;
  --connect-client) spark_version="$(property spark)"; what=connect ;;
  *) echo "dev/python-env.sh: unknown argument '$1' (usage: dev/python-env.sh [--cross | --line VERSION |" \
       "--connect-client])" >&2; exit 2 ;;
esac
[[ -n "$spark_version" ]] || { echo "dev/python-env.sh: no $what= line in versions.properties" >&2; exit 1; }
minor="$(cut -d. -f1,2 <<<"$spark_version")"
case "$what" in
  spark) venv="${KINESIS_SPARK_VENV:-$root/.venv}" ;;
  cross.spark) venv="${KINESIS_SPARK_CROSS_VENV:-$root/.venv-spark$minor}" ;;
  connect) venv="$root/.venv-connect" ;;
  *) venv="$root/.venv-spark$minor" ;;
esac
stamp="$venv/.kinesis-spark-requirements"

if [[ "$what" == connect ]]; then
  # The client jobs of the Connect tests need nothing else (the tests themselves run in .venv).
  requirements="$(printf 'pyspark-client==%s\n' "$spark_version")"
else
  requirements="$(printf 'pyspark==%s\n' "$spark_version"; grep -v '^[[:space:]]*#' "$root/tests-integration/requirements.txt")"
fi
package_pyproject="$root/python/pyproject.toml"
# What decides the environment's contents: the requirements, the interpreter, and the package's metadata
# (an editable install follows source edits by itself, but not dependency or entry-point changes).
wanted="$(
  printf '%s\n' "$requirements"
  "$python" -c 'import sys; print("python", sys.version.split()[0])'
  for file in "$package_pyproject" "$root/python/setup.py" "$root/versions.properties"; do
    if [[ -f "$file" ]]; then sha256sum "$file" | cut -d' ' -f1; fi
  done
)"

if [[ -f "$stamp" ]] && [[ "$(cat "$stamp")" == "$wanted" ]]; then
  echo "$venv"
  exit 0
fi

# uv installs the requirements: about three times faster than pip here (no bytecode compiled, parallel downloads,
# built wheels cached), which counts with six environments of a ~450 MB pyspark each in every CI run. It lives in
# its own environment, .venv-tools, made once. Several runs of this script may go at once (dev/test.sh makes the
# environments side by side): the lock serializes making .venv-tools and the editable builds, which write to
# python/ itself.
uv_version=0.13.9
tools="$root/.venv-tools"
lock="$root/.venv-tools.lock"
(
  flock 9
  if [[ ! -x "$tools/bin/uv" ]] || [[ "$("$tools/bin/uv" --version | cut -d' ' -f2)" != "$uv_version" ]]; then
    echo "dev/python-env.sh: installing uv $uv_version into $tools" >&2
    "$python" -m venv "$tools" >&2
    "$tools/bin/python" -m pip install --quiet --disable-pip-version-check "uv==$uv_version" >&2
  fi
) 9>"$lock"
uv() { "$tools/bin/uv" "$@"; }

if [[ ! -x "$venv/bin/python" ]]; then
  echo "dev/python-env.sh: creating $venv" >&2
  # The standard library's venv, not uv's: the environment keeps pip, for what a developer adds by hand.
  "$python" -m venv "$venv" >&2
fi
echo "dev/python-env.sh: installing $(head -1 <<<"$requirements") and the rest of the requirements (pyspark is ~450 MB)" >&2
uv pip install --quiet --python "$venv/bin/python" -r <(printf '%s\n' "$requirements") >&2
if [[ -f "$package_pyproject" ]]; then
  echo "dev/python-env.sh: installing python/ (editable)" >&2
  (flock 9; uv pip install --quiet --python "$venv/bin/python" -e "$root/python" >&2) 9>"$lock"
fi
printf '%s\n' "$wanted" > "$stamp"
echo "$venv"
