#!/usr/bin/env bash
# Builds the loopback ferrokinesis server (dev/ferrokinesis, a few lines around the ferrokinesis crate) with cargo,
# into a cache in the user's home (KINESIS_SPARK_CACHE, ~/.cache/kinesis-spark by default), and prints the binary's
# path. Returns at once when the binary for these sources is already built.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${KINESIS_SPARK_CACHE:-$HOME/.cache/kinesis-spark}"
target="$cache/ferrokinesis-target"
binary="$target/release/ferrokinesis-loopback"
stamp="$binary.sources"
files=("$here/Cargo.toml" "$here"/src/*.rs)
[[ -f "$here/Cargo.lock" ]] && files+=("$here/Cargo.lock")
sources="$(cat "${files[@]}" | sha256sum | cut -d' ' -f1)"
if [[ -x "$binary" && -f "$stamp" && "$(cat "$stamp")" == "$sources" ]]; then
  echo "$binary"
  exit 0
fi
# rustup installs into ~/.cargo/bin, which a non-login shell may not have on its PATH.
command -v cargo >/dev/null || export PATH="$HOME/.cargo/bin:$PATH"
command -v cargo >/dev/null || { echo "dev/ferrokinesis/install.sh: cargo is needed (https://rustup.rs)" >&2; exit 1; }
echo "dev/ferrokinesis/install.sh: building ferrokinesis (a few minutes the first time)" >&2
locked=()
[[ -f "$here/Cargo.lock" ]] && locked=(--locked)
CARGO_TARGET_DIR="$target" cargo build --release "${locked[@]}" --manifest-path "$here/Cargo.toml" >&2
echo "$sources" > "$stamp"
echo "$binary"
