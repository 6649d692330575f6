#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build, run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
[ -d build ] || meson setup build >/dev/null
# quiet when the build succeeds; its whole output when it fails
if ! ninja -C build > build/ninja.log 2>&1; then
  cat build/ninja.log
  echo "build failed in build" >&2
  exit 1
fi
exec ./build/cli/daolease demo "$@"
