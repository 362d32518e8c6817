#!/usr/bin/env bash
# Puts the assembled connector jars, versions.properties and the option catalog inside the Python package
# (python/src/kinesis_spark/, all gitignored), so an editable install, an sdist or a wheel carries them: one jar per
# Spark line, the Spark 4.x one (Scala 2.13) and the Spark 3.5 one (Scala 2.12); the package picks the one of the
# installed pyspark. A missing Spark 3.5 jar is only warned about (enough for working on Spark 4 alone). Builds no
# jar itself: run `build/sbt connector/assembly "++2.12 connector/assembly"` first. The wheel and the sdist:
# dev/release.sh build.
#
# Usage: dev/build-python.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
package="$root/python/src/kinesis_spark"

for arg in "$@"; do
  case "$arg" in
    -h|--help) sed -n '2,7s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "dev/build-python.sh: unknown argument '$arg' (usage: dev/build-python.sh)" >&2; exit 2 ;;
  esac
done

property() {
  local value
  value="$(sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*//p" "$root/versions.properties" | tr -d '[:space:]')"
  [[ -n "$value" ]] || { echo "dev/build-python.sh: no '$1=' line in versions.properties" >&2; exit 1; }
  printf '%s' "$value"
}
version="$(property kinesis-spark)"

# The jar of each Spark line, as "<scala key>:<command that builds it>"; the first is required.
lines=("scala:build/sbt connector/assembly" "cross.scala:build/sbt \"++2.12 connector/assembly\"")
jars=()
sources=()
for entry in "${lines[@]}"; do
  key="${entry%%:*}" build="${entry#*:}"
  scala="$(property "$key")"
  scala_binary="${scala%.*}"   # 2.13.18 -> 2.13, the suffix sbt puts in the jar name
  jar_name="kinesis-spark-assembly_${scala_binary}-${version}.jar"
  jar="$root/connector-jvm/target/scala-${scala_binary}/$jar_name"
  if [[ ! -f "$jar" ]]; then
    if [[ "$key" == scala ]]; then
      echo "dev/build-python.sh: ${jar#"$root"/} not found; build it first with: $build" >&2
      exit 1
    fi
    echo "dev/build-python.sh: warning: ${jar#"$root"/} not found, so this package has no Spark 3.5 jar; build it with: $build" >&2
    continue
  fi
  # sbt leaves the old jar in place when a later build fails; say so rather than ship stale code silently.
  newer_source="$(find "$root/connector-jvm/src/main" -type f -newer "$jar" -print -quit 2>/dev/null || true)"
  if [[ -n "$newer_source" ]]; then
    echo "dev/build-python.sh: warning: ${newer_source#"$root"/} is newer than $jar_name; rerun $build" >&2
  fi
  jars+=("$jar_name")
  sources+=("$jar")
done

mkdir -p "$package/jars"
rm -f "$package/jars/"*.jar
cp "${sources[@]}" "$package/jars/"
cp "$root/versions.properties" "$package/versions.properties"
# The option catalog the JVM wrote into its jar at build time (options/OptionCatalog.scala): the package checks
# option values with it, the same rules and messages as the JVM's.
python3 - "${sources[0]}" "$package/option_catalog.json" <<'PY'
import pathlib, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as jar:
    pathlib.Path(sys.argv[2]).write_bytes(jar.read("io/kinesisspark/options/catalog.json"))
PY
echo "dev/build-python.sh: bundled ${jars[*]}, versions.properties and option_catalog.json into ${package#"$root"/}" >&2
