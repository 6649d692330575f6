#!/usr/bin/env bash
# Installs, from Debian's packages, everything daolease needs to build, test
# and fuzz. Idempotent: installs only what is missing. Run as root.
#
# Another apt (an unattended upgrade right after boot, a second shell) holds
# the dpkg and lists locks for a while: apt is asked to wait for them, and a
# run that still fails on a lock is retried, saying so, for at most
# DEPS_LOCK_WAIT seconds (300) before giving up with one clear line.
set -euo pipefail
pkgs=(meson ninja-build pkg-config gcc clang libclang-rt-14-dev
      libmsgpack-dev libsodium-dev libcmocka-dev zlib1g-dev libdeflate-dev libjansson-dev
      libhiredis-dev redis-server libnats-dev nats-server python3 python3-msgpack python3-nacl
      python3-cffi python3-pytest python3-venv
      libsystemd-dev
      valgrind jq help2man man-db spin
      libmicrohttpd-dev chromium prometheus)
wait_s=${DEPS_LOCK_WAIT:-300}

# apt_get ARGS...: apt-get, waiting (bounded) while another apt holds a lock.
apt_get() {
  local start=$SECONDS err rc
  err=$(mktemp)
  while :; do
    rc=0
    apt-get -o DPkg::Lock::Timeout=10 "$@" 2>"$err" >/dev/null || rc=$?
    if [ "$rc" -eq 0 ]; then rm -f "$err"; return 0; fi
    if ! grep -qiE 'could not get lock|unable to acquire|is another process using it' "$err"; then
      cat "$err" >&2; rm -f "$err"; return "$rc"
    fi
    if [ $((SECONDS - start)) -ge "$wait_s" ]; then
      echo "deps: another apt still holds its lock after ${wait_s} s; run this again when it has finished" >&2
      rm -f "$err"; return "$rc"
    fi
    echo "deps: another apt holds its lock; waiting ($((SECONDS - start)) s of at most ${wait_s} s)" >&2
    sleep "${DEPS_LOCK_POLL:-5}"
  done
}

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt_get update -qq
  apt_get install -y -qq --no-install-recommends "${missing[@]}"
fi
# The Node package (docs/node.md) needs node >= 20 and npm; a machine that
# has them (e.g. from another source) keeps its own, else Debian's.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "deps: installing nodejs npm" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
