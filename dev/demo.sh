#!/usr/bin/env bash
# One command for the demo: builds the connector jar, sets up the Python environment and the local Kinesis
# emulator, then runs examples/demo_word_count.py (a streaming word count over a Kinesis stream).
#
# SKIP_JVM_BUILD=1 reuses the jar already in connector-jvm/target.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash dev/prerequisites.sh
if [[ "${SKIP_JVM_BUILD:-0}" != 1 ]]; then
  build/sbt connector/assembly
fi
if [[ -f dev/build-python.sh ]]; then
  bash dev/build-python.sh
fi
venv="$(bash dev/python-env.sh)"
bash dev/emulator/install.sh
exec "$venv/bin/python" examples/demo_word_count.py
