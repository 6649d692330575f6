#!/usr/bin/env bash
# Quick start, command 2: install what is missing, build, run the whole test
# suite. With SANITIZE=1 the suite runs in build-asan under ASan+UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
dir=build
opts=()
if [ "${SANITIZE:-0}" = 1 ]; then
  dir=build-asan
  opts=(-Db_sanitize=address,undefined -Db_lundef=false)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
fi
[ -d "$dir" ] || meson setup "$dir" "${opts[@]}" >/dev/null
# quiet when the build succeeds; its whole output when it fails
if ! ninja -C "$dir" > "$dir/ninja.log" 2>&1; then
  cat "$dir/ninja.log"
  echo "build failed in $dir" >&2
  exit 1
fi
set +e
meson test -C "$dir" --print-errorlogs --num-processes 2 "$@" | tee "$dir/test-summary.txt"
status=${PIPESTATUS[0]}
set -e
ok=$(awk '/^Ok:/ {print $2}' "$dir/test-summary.txt")
fail=$(awk '/^Fail:/ {print $2}' "$dir/test-summary.txt")
echo "${ok:-0} passed, ${fail:-0} failed"
exit "$status"
