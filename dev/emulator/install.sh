#!/usr/bin/env bash
# Installs the pinned Kinesis emulator (kinesis-local, see package.json and package-lock.json) into
# dev/emulator/node_modules. Returns at once when the pinned version is already there.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
wanted="$(node -p "require('$here/package.json').dependencies['kinesis-local']")"
installed_manifest="$here/node_modules/kinesis-local/package.json"

if [[ -f "$installed_manifest" ]] && [[ "$(node -p "require('$installed_manifest').version")" == "$wanted" ]]; then
  exit 0
fi
command -v npm >/dev/null || { echo "dev/emulator/install.sh: npm is needed (apt-get install nodejs npm)" >&2; exit 1; }
echo "dev/emulator/install.sh: installing kinesis-local $wanted" >&2
# npm ci installs exactly what the lock file pins (version and integrity hash).
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
