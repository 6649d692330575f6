#!/usr/bin/env bash
# Builds every libFuzzer target with clang and runs each for SECONDS (60).
# A long campaign: FUZZ_SECONDS=600 scripts/fuzz.sh (per target; the first
# argument wins over it), FUZZ_TARGETS="journal stream" to run only those.
# CI keeps the 60 s default.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
secs=${1:-${FUZZ_SECONDS:-60}}
only=" ${FUZZ_TARGETS:-} "
# undefined behaviour stops a run like a crash does
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
[ -d build-fuzz ] || CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false -Dtests=disabled >/dev/null
# quiet when the build succeeds; its whole output when it fails
if ! ninja -C build-fuzz > build-fuzz/ninja.log 2>&1; then
  cat build-fuzz/ninja.log
  echo "build failed in build-fuzz" >&2
  exit 1
fi
for t in build-fuzz/fuzz/fuzz_*; do
  [ -f "$t" ] && [ -x "$t" ] || continue
  name=$(basename "$t"); name=${name#fuzz_}
  [ "$only" = "  " ] || [[ "$only" == *" $name "* ]] || continue
  work=$(mktemp -d)
  cp -r "fuzz/corpus/$name/." "$work/" 2>/dev/null || true
  echo "fuzz: $name for ${secs}s"
  "$t" -max_total_time="$secs" -max_len=70000 -rss_limit_mb=2048 -print_final_stats=1 "$work" 2>"$work.log" || { tail -40 "$work.log"; exit 1; }
  grep -E 'stat::number_of_executed_units|stat::average_exec_per_sec' "$work.log" | sed "s/^/fuzz: $name /"
  grep -E '^#[0-9]+[[:space:]]+DONE' "$work.log" | tail -1 | sed "s/^/fuzz: $name /" || true
  rm -rf "$work" "$work.log"
done
