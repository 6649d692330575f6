#!/usr/bin/env bash
# Exhaustive Spin check of the standby-judge takeover model (model/takeover.pml;
# docs/standby.md, "The protocol, model-checked"). The correct model must pass;
# each planted bug must be caught. Works in a temporary folder.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
model=$here/model/takeover.pml
command -v spin >/dev/null || { echo "model_check: spin is not installed (apt-get install -y spin)" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
# run NAME EXPECT DEFINES...: EXPECT is pass or fail. Safety (P1-P3, the
# assertions) by default; with -DP4 among the defines, the LTL property P4
# is checked for acceptance cycles under weak fairness (pan -a -f), the
# assertions with it.
run() {
  local name=$1 expect=$2; shift 2
  spin "$@" -a "$model" >spin.out 2>&1 || { cat spin.out >&2; exit 1; }
  if [[ " $* " == *" -DP4 "* ]]; then
    gcc -w -O2 -DMEMLIM=2048 -o pan pan.c
    ./pan -a -f -E >pan.out 2>&1 || true
  else
    gcc -w -O2 -DSAFETY -DMEMLIM=2048 -o pan pan.c
    ./pan -E >pan.out 2>&1 || true
  fi
  local errs; errs=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out)
  local got=pass; [ "${errs:-1}" = 0 ] || got=fail
  printf '%-18s %-5s (expected %s): %s states stored, %s transitions, %s s%s\n' "$name" "$got" "$expect" \
    "$(awk '/states, stored/{print $1}' pan.out)" "$(awk '/transitions/{print $1}' pan.out)" \
    "$(awk '/elapsed time/{print $4}' pan.out)" "$(grep -m1 'assertion violated\|acceptance cycle' pan.out | sed 's/^pan:1: /; /' || true)"
  [ "$got" = "$expect" ] || fail=1
}
run correct pass
run BUG_NO_FENCE fail -DBUG_NO_FENCE
run BUG_UNCONFIRMED fail -DBUG_UNCONFIRMED
run BUG_RECLAIM_UNMARKED fail -DBUG_RECLAIM_UNMARKED
run P4 pass -DP4
run P4_BUG_NO_RECLAIM fail -DP4 -DBUG_NO_RECLAIM
[ "$fail" = 0 ] && echo "model_check: all as expected" || { echo "model_check: unexpected result" >&2; exit 1; }
