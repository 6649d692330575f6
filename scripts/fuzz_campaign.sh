#!/usr/bin/env bash
# A long fuzz campaign, counted in CPU time rather than wall time (issue 12
# item 16): each target runs until its process has used CPU_SECONDS of CPU
# (600 = 10 CPU-minutes by default), JOBS targets at a time (2). On a shared
# machine wall time says little; CPU time is what the target actually got.
#
#   bash scripts/fuzz_campaign.sh [CPU_SECONDS] [TARGET ...]
#
# Prints one line per target: executions, CPU seconds, exec per CPU second,
# coverage (libFuzzer's cov: and ft: counts) and corpus size. Finds land in
# build-fuzz/campaign/<target>/ as crash-*/leak-*/timeout-* files, and the
# script exits 1 if any target found one. New corpus entries are written to
# build-fuzz/campaign/<target>/corpus (not to fuzz/corpus: minimise and pick
# by hand before committing).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cpu=${1:-600}
shift || true
jobs=${JOBS:-2}
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
[ -d build-fuzz ] || CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false -Dtests=disabled >/dev/null
ninja -C build-fuzz >/dev/null
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for t in build-fuzz/fuzz/fuzz_*; do
    [ -f "$t" ] && [ -x "$t" ] && targets+=("$(basename "${t#build-fuzz/fuzz/fuzz_}")")
  done
fi

# CPU seconds a process has used (user + system), from /proc.
cpu_of() {
  local tck; tck=$(getconf CLK_TCK)
  awk -v t="$tck" '{print int(($14 + $15) / t)}' "/proc/$1/stat" 2>/dev/null || echo -1
}

run_one() {
  local name=$1 dir=build-fuzz/campaign/$1
  rm -rf "$dir"; mkdir -p "$dir/corpus"
  cp -r "fuzz/corpus/$name/." "$dir/corpus/" 2>/dev/null || true
  (cd "$dir" && exec "../../fuzz/fuzz_$name" -max_len=70000 -rss_limit_mb=2048 \
      -print_final_stats=1 corpus) >"$dir/log" 2>&1 &
  local pid=$! used=0
  while kill -0 "$pid" 2>/dev/null; do
    used=$(cpu_of "$pid")
    echo "$used" >"$dir/cpu"
    [ "$used" -ge "$cpu" ] && { kill -INT "$pid"; break; }
    sleep 5
  done
  wait "$pid" 2>/dev/null || true
  report "$name"
}

# One line from a target's log (also: bash scripts/fuzz_campaign.sh --report T...).
report() {
  local name=$1 dir=build-fuzz/campaign/$1 used execs cov finds
  used=$(cat "$dir/cpu" 2>/dev/null || echo 0)
  execs=$(grep -E 'stat::number_of_executed_units' "$dir/log" 2>/dev/null | awk '{print $2}' | tail -1 || true)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$dir/log" 2>/dev/null | tail -1 || true)
  finds=$(ls "$dir" 2>/dev/null | grep -cE '^(crash|leak|timeout|oom)-' || true)
  echo "campaign: $name cpu_s=$used execs=${execs:-?} exec_per_cpu_s=$(( ${execs:-0} / (used > 0 ? used : 1) )) $cov finds=$finds"
  [ "$finds" -eq 0 ]
}

if [ "${targets[0]:-}" = --report ]; then
  status=0
  for name in "${targets[@]:1}"; do report "$name" || status=1; done
  exit "$status"
fi

status=0
running=0
for name in "${targets[@]}"; do
  run_one "$name" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do wait -n || status=1; running=$((running - 1)); done
exit "$status"
