#!/usr/bin/env bash
# Builds and tests everything, from a fresh clone on a fresh machine: system prerequisites, the connector's
# unit tests and assembly jar, the Python environment, the Kinesis emulator, then the Python package's lint and
# type checks (ruff, mypy) and tests, and the end-to-end suite. JUnit XML reports go to target/test-reports/.
# Exits non-zero if anything fails.
#
# SKIP_JVM_BUILD=1 reuses the jar already in connector-jvm/target (for iterating on Python-side tests).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash dev/prerequisites.sh
if [[ "${SKIP_JVM_BUILD:-0}" != 1 ]]; then
  build/sbt connector/test connector/assembly
fi
if [[ -f dev/build-python.sh ]]; then
  bash dev/build-python.sh
fi
venv="$(bash dev/python-env.sh)"
bash dev/emulator/install.sh

reports="$root/target/test-reports"
mkdir -p "$reports"
suites=()
[[ -d python/tests ]] && suites+=(python)
[[ -d tests-integration ]] && suites+=(tests-integration)

status=0
# Static checks of the Python package, with the configuration in python/pyproject.toml: lint, formatting and
# strict typing. A failure fails the run, and is listed in the summary.
checks=()
if [[ -d python/src ]]; then
  echo "== ruff check, ruff format --check, mypy (python/)" >&2
  (cd python && "$venv/bin/ruff" check . && "$venv/bin/ruff" format --check .) && checks+=("ruff: ok") \
    || { checks+=("ruff: FAILED"); status=1; }
  (cd python && "$venv/bin/mypy") && checks+=("mypy: ok") || { checks+=("mypy: FAILED"); status=1; }
fi

# Each suite runs from its own directory so that its own pytest configuration applies.
for suite in "${suites[@]}"; do
  echo "== pytest $suite" >&2
  (cd "$suite" && "$venv/bin/python" -m pytest -q --junitxml="$reports/pytest-$suite.xml") || status=1
done

# One summary over every runner: the Scala suites (sbt's JUnit XML) and each pytest suite.
"$venv/bin/python" - "$reports" "${suites[@]}" <<'PY'
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

reports, suites = Path(sys.argv[1]), sys.argv[2:]
sources = {"scala": sorted(Path("connector-jvm/target/test-reports").glob("*.xml"))}
sources.update({suite: [reports / f"pytest-{suite}.xml"] for suite in suites})
totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
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
    for key in totals:
        totals[key] += counts[key]
    print(f"TESTS {name}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
failed = totals["failures"] + totals["errors"]
passed = totals["tests"] - failed - totals["skipped"]
print(f"{passed} passed, {failed} failed, {totals['skipped']} skipped")
PY
for check in "${checks[@]}"; do echo "CHECK $check"; done
exit "$status"
