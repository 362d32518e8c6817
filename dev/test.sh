#!/usr/bin/env bash
# Builds and tests everything, from a fresh clone on a fresh machine: system prerequisites, the connector's
# unit tests and assembly jar for both Spark lines (Spark 4 / Scala 2.13, and the cross build for Spark 3.5 /
# Scala 2.12), the Python environments, the Kinesis emulator, then the Python package's lint and type checks
# (ruff, mypy) and tests, the end-to-end suite on Spark 4.2, and its line_smoke tests again on every other Spark
# line (Spark 3.5, and 4.0, 4.1 and 4.3 with the same 2.13 jar; a venv each, the same JDK 17). JUnit XML reports go
# to target/test-reports/.
# Exits non-zero if anything fails, or if a test was skipped that is not on the short allowlist of the summary
# (ALLOWED_SKIPS, at the end).
#
# SKIP_JVM_BUILD=1 reuses the jar already in connector-jvm/target (for iterating on Python-side tests).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# Each phase's wall time, printed as it ends and again in the summary: CI's budget is 60 minutes on a fresh machine.
phase_name="" phase_start=$SECONDS run_start=$SECONDS phase_times=()
phase() {  # phase NAME: ends the current phase (if any) and starts NAME
  if [[ -n "$phase_name" ]]; then
    phase_times+=("$(printf '%5d s  %s' $((SECONDS - phase_start)) "$phase_name")")
    echo "== $(date +%T) done in $((SECONDS - phase_start)) s: $phase_name" >&2
  fi
  phase_name="$1" phase_start=$SECONDS
  [[ -z "$1" ]] || echo "== $(date +%T) $1" >&2
}
# On any exit: no background job (ferrokinesis, the environments, a smoke line) outlives the run, nor the gpg agent
# of the run's throwaway key.
cleanup() {
  jobs -p | xargs -r kill 2>/dev/null || true
  [[ -z "${GNUPGHOME:-}" ]] || gpgconf --kill gpg-agent 2>/dev/null || true
}
trap cleanup EXIT
phase "prerequisites"
bash dev/prerequisites.sh
phase "sbt: Scala unit tests and jars of both Scala lines (ferrokinesis and nginx build alongside)"
# Output of the jobs run alongside others (the ferrokinesis build, the Python environments, the smoke lines).
setup="$root/target/setup"
mkdir -p "$setup"
# ferrokinesis (cargo, minutes the first time; the enhanced fan-out fault model's emulator) builds while sbt runs,
# which keeps mostly one core busy (scalac). Without it only the tests that use it fail (they try the build again
# and say why), not the whole run.
bash dev/ferrokinesis/install.sh > "$setup/ferrokinesis.out" 2> "$setup/ferrokinesis.log" &
ferrokinesis_build=$!
# nginx, the Maven repository the release tests deploy to (seconds; apt's package, unpacked into dev/nginx).
bash dev/nginx/install.sh > "$setup/nginx.out" 2> "$setup/nginx.log" &
nginx_install=$!
# The Python environments, made while sbt compiles (they are mostly downloads and unpacking, sbt mostly one core of
# scalac): the main one (.venv) and one per other Spark line: the cross build's (3.5), then each spark.also version
# (test_spark_linkage.py reads their pyspark jars; the line_smoke runs below use them), and a Spark Connect client
# environment (pyspark-client and the package) for test_spark_connect.py's client code. They share uv, which the
# first to need it installs (dev/python-env.sh serializes that, and the editable builds of python/, with a lock).
env_args=("" "--cross")
for version in $(sed -n 's/^spark\.also *= *//p' versions.properties | tr ',' ' '); do
  env_args+=("--line $version")
done
env_args+=("--connect-client")
# The main environment then gets the class archive its Spark JVMs start from (dev/spark-class-archive.sh: a test's
# Spark starts in about half the time; a minute or two of CPU, while sbt compiles). Not the other lines': their few
# smoke tests each saved about 10 s of the 60 to 110 s their archive cost.
env_jobs=()
for i in "${!env_args[@]}"; do
  # shellcheck disable=SC2086  # "--line VERSION" is two arguments
  {
    bash dev/python-env.sh ${env_args[$i]} > "$setup/env-$i.out" \
      && { [[ -n "${env_args[$i]}" ]] || bash dev/spark-class-archive.sh "$(cat "$setup/env-$i.out")" \
             || echo "dev/test.sh: no class archive (ignored: Spark starts without one)" >&2; }
  } 2> "$setup/env-$i.log" &
  env_jobs+=($!)
done
release="$root/target/release"
if [[ "${SKIP_JVM_BUILD:-0}" != 1 ]]; then
  # connector/publish builds the assembly jar (its packageBin) and publishes both Scala lines' artifacts into the
  # release folder, as dev/release.sh does: the release tests (test_spark_submit.py, test_distribution.py) take
  # that release, on every Spark line, instead of building one again.
  rm -rf "$release"
  KINESIS_SPARK_PUBLISH_TO="$release/maven" build/sbt connector/test connector/publish "++2.12 connector/test" \
    "++2.12 connector/publish" linkageCheck/assembly kclConsumer/assembly
fi
phase "the release, the Python environments, the emulators"
if [[ -d "$release/maven" ]]; then
  # The rest of the release (signatures, checksums, the Central bundle, the wheel and the sdist), signed with a
  # throwaway key made for this run, so that the tests check signatures as Maven Central would.
  export GNUPGHOME="$root/target/gnupg"
  rm -rf "$GNUPGHOME"
  mkdir -m 700 -p "$GNUPGHOME"
  gpg --batch --quiet --passphrase '' --quick-gen-key "kinesis-spark tests <tests@kinesis-spark.invalid>" \
    ed25519 sign never
  KINESIS_SPARK_GPG_KEY="$(gpg --batch --list-secret-keys --with-colons | awk -F: '$1 == "fpr" {print $10; exit}')"
  export KINESIS_SPARK_GPG_KEY
  bash dev/release.sh build "$release" --reuse-maven > /dev/null
  export KINESIS_SPARK_RELEASE_DIR="$release"
else
  bash dev/build-python.sh
fi
wait "$nginx_install" || { cat "$setup/nginx.log" >&2; echo "dev/test.sh: installing nginx failed; the release tests will fail" >&2; }
line_venvs=()
for i in "${!env_args[@]}"; do
  wait "${env_jobs[$i]}" \
    || { cat "$setup/env-$i.log" >&2; echo "dev/test.sh: dev/python-env.sh ${env_args[$i]} failed" >&2; exit 1; }
  case "${env_args[$i]}" in
    "") venv="$(cat "$setup/env-$i.out")" ;;
    --connect-client) ;;
    *) line_venvs+=("$(cat "$setup/env-$i.out")") ;;
  esac
done
# uv keeps every revision of the pyspark sdists it built (each ~0.7 GB) whenever the index's cache headers make it
# fetch one again, so a developer's cache grew by about 12 GB per run; pruning keeps only what is current. Here,
# with no environment being made, nothing in use is pruned.
"$root/.venv-tools/bin/uv" cache prune --quiet || echo "dev/test.sh: 'uv cache prune' failed (ignored)" >&2
bash dev/emulator/install.sh
wait "$ferrokinesis_build" \
  || { cat "$setup/ferrokinesis.log" >&2; echo "dev/test.sh: building ferrokinesis failed; its tests will fail" >&2; }

reports="$root/target/test-reports"
mkdir -p "$reports"
suites=()
[[ -d python/tests ]] && suites+=(python)
[[ -d tests-integration ]] && suites+=(tests-integration)

status=0
# From here on every JVM is short-lived (Spark sessions of a test or two, spark-submit, Maven): C2's compile threads
# would take much of the 2 cores the tests need, so the JIT stops at C1. On one subset (test_examples.py and an
# executor-kill test) that took the wall time from 276 s to 211 s. The java launcher adds JDK_JAVA_OPTIONS to every
# JVM it starts, executors of a local cluster included; sbt above ran before it.
export JDK_JAVA_OPTIONS="${JDK_JAVA_OPTIONS:+$JDK_JAVA_OPTIONS }-XX:TieredStopAtLevel=1"
# Static checks of the Python package, with the configuration in python/pyproject.toml: lint, formatting and
# strict typing. A failure fails the run, and is listed in the summary.
checks=()
if [[ -d python/src ]]; then
  phase "ruff check, ruff format --check, mypy (python/)"
  (cd python && "$venv/bin/ruff" check . && "$venv/bin/ruff" format --check .) && checks+=("ruff: ok") \
    || { checks+=("ruff: FAILED"); status=1; }
  (cd python && "$venv/bin/mypy") && checks+=("mypy: ok") || { checks+=("mypy: FAILED"); status=1; }
fi
# The user guide: MkDocs in strict mode (broken links and anchors fail). Its samples run in the end-to-end suite
# (test_docs_snippets.py).
if [[ -f mkdocs.yml ]]; then
  phase "user guide (dev/docs.sh)"
  bash dev/docs.sh && checks+=("docs: ok") || { checks+=("docs: FAILED"); status=1; }
fi

# Each suite runs from its own directory so that its own pytest configuration applies. --durations: the slowest
# tests, to see where CI's minutes go.
rm -f "$reports/reliability.md"  # the reliability tests' table: each pytest process below adds its rows
for suite in "${suites[@]}"; do
  if [[ "$suite" == tests-integration ]]; then
    # Two processes, each with its own emulator and Spark session, a test file at a time (pytest-xdist): the tests
    # wait on Spark and the emulator about half of the time, so two lanes on the 2 cores take about 60 % of one
    # lane's time (test_prefetch_engine.py and test_efo.py: 395 s in one lane, 235 s in two). The tests marked
    # serial count calls per second of wall time, which another test's CPU would shift: they run alone, after.
    phase "pytest $suite, two test files at a time"
    (cd "$suite" && "$venv/bin/python" -m pytest -q --durations=15 -n 2 --dist loadfile -m "not serial" \
      --junitxml="$reports/pytest-$suite.xml") || status=1
    phase "pytest $suite -m serial, alone"
    suites+=("$suite-serial")
    (cd "$suite" && "$venv/bin/python" -m pytest -q --durations=5 -m serial \
      --junitxml="$reports/pytest-$suite-serial.xml") || status=1
  else
    phase "pytest $suite"
    (cd "$suite" && "$venv/bin/python" -m pytest -q --durations=15 --junitxml="$reports/pytest-$suite.xml") \
      || status=1
  fi
done
# The same harness and tests on every other Spark line, each in its own venv with the jar the package picks for
# its pyspark: Spark 3.5 (the Scala 2.12 jar) and the spark.also lines of versions.properties (the Scala 2.13 jar,
# unchanged). Only the tests marked line_smoke: a read with restart, AvailableNow, read limits, sink round trips,
# and spark-submit --packages with the line's Maven artifact. Two lines at a time (each pytest has its own emulator
# and Spark, on free ports; a line's run leaves a core mostly idle); each one's output is printed when it ends.
if [[ -d tests-integration ]]; then
  phase "pytest tests-integration -m line_smoke on the other Spark lines, two at a time"
  smoke_line() {  # venv line
    (cd tests-integration && "$1/bin/python" -m pytest -q -m line_smoke \
      --junitxml="$reports/pytest-tests-integration-spark$2.xml") > "$setup/smoke-$2.log" 2>&1
  }
  running=()
  for i in "${!line_venvs[@]}"; do
    line="$(basename "${line_venvs[$i]}" | sed 's/^\.venv-spark//')"
    suites+=("tests-integration-spark$line")
    smoke_line "${line_venvs[$i]}" "$line" &
    running+=("$!:$line")
    if (( ${#running[@]} == 2 )) || (( i == ${#line_venvs[@]} - 1 )); then
      for job in "${running[@]}"; do
        wait "${job%%:*}" || status=1
        echo "== $(date +%T) pytest tests-integration -m line_smoke (pyspark ${job#*:})" >&2
        cat "$setup/smoke-${job#*:}.log" >&2
      done
      running=()
    fi
  done
fi

# One summary over every runner: the Scala suites (sbt's JUnit XML) and each pytest suite. It fails the run if a
# test was skipped that is not on its allowlist (below): a skip must not hide a missing feature or a broken run.
"$venv/bin/python" - "$reports" "${suites[@]}" <<'PY' || status=1
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

# The skips a run may have, by test id ("<classname>::<name>" as the JUnit XML gives them, e.g.
# "test_examples::test_efo_read" or "io.kinesisspark.DriverTimingsSuite::<test name>"), each with why it is allowed.
# Keep it short: a test that does not apply to a Spark line or an environment is deselected (a marker, -m) or left
# out at collection, not skipped; a skip on an error that a defect could cause is never allowed. None is today.
ALLOWED_SKIPS: dict[str, str] = {}

reports, suites = Path(sys.argv[1]), sys.argv[2:]
# sbt writes each Scala version's reports under its own target folder (build.sbt: testReportsDirectory).
sources = {f"scala-{v}": sorted(Path(f"connector-jvm/target/scala-{v}/test-reports").glob("*.xml"))
           for v in ("2.13", "2.12")}
sources.update({suite: [reports / f"pytest-{suite}.xml"] for suite in suites})
totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
refused = []  # (suite, test id, skip message) of each skip not on the allowlist
for name, files in sources.items():
    counts = dict.fromkeys(totals, 0)
    present = [f for f in files if f.is_file()]
    if not present:
        print(f"TESTS {name}: no report (the runner did not run)")
        counts["errors"] += 1
    for report in present:
        root = ET.parse(report).getroot()
        for testsuite in [root] if root.tag == "testsuite" else root.iter("testsuite"):
            for key in counts:
                counts[key] += int(testsuite.get(key, 0))
            for case in testsuite.iter("testcase"):
                skipped = case.find("skipped")
                test_id = f"{case.get('classname', '')}::{case.get('name', '')}"
                if skipped is not None and test_id not in ALLOWED_SKIPS:
                    said = skipped.get("message") or (skipped.text or "").strip() or "no message"
                    refused.append((name, test_id, said))
    for key in totals:
        totals[key] += counts[key]
    print(f"TESTS {name}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
failed = totals["failures"] + totals["errors"]
passed = totals["tests"] - failed - totals["skipped"]
print(f"{passed} passed, {failed} failed, {totals['skipped']} skipped")
for name, test_id, said in refused:
    print(f"SKIPPED, NOT ALLOWED {name}: {test_id}: {said[:300]}")
if refused:
    print(f"{len(refused)} skipped test(s) not on dev/test.sh's allowlist (ALLOWED_SKIPS): the run fails")
    sys.exit(1)
PY
for check in "${checks[@]}"; do echo "CHECK $check"; done
phase ""
echo "Phases (total $((SECONDS - run_start)) s):"
printf '%s\n' "${phase_times[@]}"
exit "$status"
