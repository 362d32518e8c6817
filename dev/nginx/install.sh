#!/usr/bin/env bash
# Installs Debian's nginx into dev/nginx/root (gitignored), unpacked from its package rather than installed as a
# system service: the tests run it on 127.0.0.1 as the Maven repository a release deploys to (its WebDAV module
# takes the uploads: tests-integration/harness/registries.py). Needs no root once apt's package lists exist.
# Returns at once when it is there.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
binary="$here/root/usr/sbin/nginx"
[[ -x "$binary" ]] && "$binary" -v 2>/dev/null && exit 0

command -v apt-get >/dev/null || { echo "dev/nginx/install.sh: needs apt-get (Debian/Ubuntu), or nginx with its dav module at $binary" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# apt-get download fetches the package for the machine's release into the current folder, as any user.
# The package that holds the binary: nginx itself on Debian 12; nginx-core where nginx is only a metapackage.
download() {
  local package
  for package in nginx nginx-core; do
    (cd "$work" && rm -f ./*.deb && apt-get download "$package" >/dev/null 2>&1) || continue
    dpkg-deb -c "$work"/*.deb | grep '/usr/sbin/nginx$' >/dev/null && return 0  # not grep -q, under pipefail
  done
  return 1
}
if ! download; then
  sudo=()
  # sudo -n: this runs in the background of dev/test.sh, where a password prompt would hang the run.
  [[ "$(id -u)" -eq 0 ]] || sudo=(sudo -n)
  echo "dev/nginx/install.sh: refreshing apt's package lists" >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 \
    || { echo "dev/nginx/install.sh: 'apt-get update' needs root or password-less sudo" >&2; exit 1; }
  download || { echo "dev/nginx/install.sh: no package of this machine's apt holds /usr/sbin/nginx" >&2; exit 1; }
fi
rm -rf "$here/root"
dpkg-deb -x "$work"/*.deb "$here/root"
"$binary" -V 2>&1 | grep -q -- --with-http_dav_module \
  || { echo "dev/nginx/install.sh: this nginx has no dav module, which the Maven repository needs" >&2; exit 1; }
echo "dev/nginx/install.sh: installed $("$binary" -v 2>&1) into $here/root" >&2
