#!/usr/bin/env bash
# Installs, from Debian's packages, everything daolease needs to build, test
# and fuzz. Idempotent: installs only what is missing. Run as root.
set -euo pipefail
pkgs=(meson ninja-build pkg-config gcc clang libclang-rt-14-dev
      libmsgpack-dev libsodium-dev libcmocka-dev zlib1g-dev libdeflate-dev libjansson-dev
      libhiredis-dev redis-server libnats-dev nats-server python3 python3-msgpack python3-nacl
      python3-cffi python3-pytest python3-venv
      valgrind jq)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The Node package (docs/node.md) needs node >= 20 and npm; a machine that
# has them (e.g. from another source) keeps its own, else Debian's.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "deps: installing nodejs npm" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
