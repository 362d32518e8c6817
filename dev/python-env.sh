#!/usr/bin/env bash
# Creates or updates the repository's Python environment (.venv at the repository root, gitignored):
# pyspark pinned to the Spark version of versions.properties, the integration-test requirements, and the
# kinesis_spark package (editable) once python/pyproject.toml exists. A stamp file records what was
# installed, so a second run with unchanged inputs returns at once.
# Prints nothing on stdout but the venv's path, so callers can do venv="$(bash dev/python-env.sh)".
#
# With --cross, the same for the cross build's Spark line (Spark 3.5, whose jar is Scala 2.12): pyspark pinned to
# cross.spark, in .venv-spark<MAJOR.MINOR> (KINESIS_SPARK_CROSS_VENV overrides), for the Spark 3.5 smoke suite.
#
# Usage: dev/python-env.sh [--cross]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"

key=spark
case "${1:-}" in
  "") ;;
  --cross) key=cross.spark ;;
  *) echo "dev/python-env.sh: unknown argument '$1' (usage: dev/python-env.sh [--cross])" >&2; exit 2 ;;
esac
spark_version="$(sed -n "s/^${key//./\\.} *= *//p" "$root/versions.properties" | tr -d '[:space:]')"
[[ -n "$spark_version" ]] || { echo "dev/python-env.sh: no $key= line in versions.properties" >&2; exit 1; }
if [[ "$key" == spark ]]; then
  venv="${KINESIS_SPARK_VENV:-$root/.venv}"
else
  minor="$(cut -d. -f1,2 <<<"$spark_version")"
  venv="${KINESIS_SPARK_CROSS_VENV:-$root/.venv-spark$minor}"
fi
stamp="$venv/.kinesis-spark-requirements"

requirements="$(printf 'pyspark==%s\n' "$spark_version"; grep -v '^[[:space:]]*#' "$root/tests-integration/requirements.txt")"
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

if [[ ! -x "$venv/bin/python" ]]; then
  echo "dev/python-env.sh: creating $venv" >&2
  "$python" -m venv "$venv" >&2
fi
echo "dev/python-env.sh: installing pyspark==$spark_version and the test requirements (pyspark is ~450 MB on a fresh machine)" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r <(printf '%s\n' "$requirements") >&2
if [[ -f "$package_pyproject" ]]; then
  echo "dev/python-env.sh: installing python/ (editable)" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$root/python" >&2
fi
printf '%s\n' "$wanted" > "$stamp"
echo "$venv"
