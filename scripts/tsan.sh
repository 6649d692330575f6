#!/usr/bin/env bash
# The audit's tests under ThreadSanitizer (docs/audit.md, Threads): the
# audit verifies records on worker threads; every library audit of
# tests/test_audit.c runs on 1, 2 and 4 threads, and the binary its CLI
# cases run is built here too. Builds only those two targets in build-tsan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
dir=build-tsan
[ -d "$dir" ] || meson setup "$dir" -Db_sanitize=thread -Db_lundef=false >/dev/null
if ! ninja -C "$dir" tests/test_audit cli/daolease > "$dir/ninja.log" 2>&1; then
  cat "$dir/ninja.log"
  echo "build failed in $dir" >&2
  exit 1
fi
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
meson test -C "$dir" --no-rebuild --print-errorlogs audit
