#!/usr/bin/env bash
# Builds the user guide (docs/) into site/ with MkDocs in strict mode: a broken link, a missing anchor or a
# missing included sample fails the build. Uses the project's Python environment (dev/python-env.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$(bash "$root/dev/python-env.sh")"
cd "$root"
# Not --quiet: it hides warnings from strict mode's count, and the build would pass with broken links.
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! "$venv/bin/mkdocs" build --strict "$@" >"$log" 2>&1; then
  grep -v '^INFO' "$log" >&2
  echo "dev/docs.sh: the user guide does not build (see the warnings above)" >&2
  exit 1
fi
echo "dev/docs.sh: the user guide is in $root/site/index.html" >&2
