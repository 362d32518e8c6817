#!/usr/bin/env bash
# Installs, with apt-get, the system tools the build, the tests and the demo need, and only those a fresh
# Debian/Ubuntu machine lacks: java (JDK 17), mvn (fetches the sbt launcher), node and npm (the Kinesis
# emulator), python3 with venv, gpg (signing the release build). Does nothing, and needs no network or root, when everything is there.
set -euo pipefail

missing=()
command -v java >/dev/null || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || missing+=(maven)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
command -v gpg >/dev/null || missing+=(gnupg)  # dev/test.sh signs its release build as Maven Central asks
if ! command -v python3 >/dev/null; then
  missing+=(python3 python3-venv)
elif ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  missing+=(python3-venv)
fi
[[ ${#missing[@]} -eq 0 ]] && exit 0

command -v apt-get >/dev/null || {
  echo "dev/prerequisites.sh: please install: ${missing[*]} (no apt-get on this machine)" >&2
  exit 1
}
sudo=()
if [[ "$(id -u)" -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "dev/prerequisites.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
echo "dev/prerequisites.sh: installing ${missing[*]}" >&2
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
