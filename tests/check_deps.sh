#!/usr/bin/env bash
# scripts/deps.sh against a stand-in apt on PATH (README.md, "Building by
# hand": deps.sh waits, bounded, for another apt's lock):
#   1. a lock held for two tries: deps.sh says it waits, then installs;
#   2. a lock never freed: one clear line and a non-zero exit after the bound;
#   3. any other apt failure: apt's own words at once, no waiting.
set -u
src=${1:?usage: check_deps.sh SOURCE_ROOT}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }

mkdir -p "$work/bin"
# Every package is missing, so deps.sh runs apt-get update and install.
cat > "$work/bin/dpkg-query" <<'Q'
#!/bin/sh
exit 1
Q
# apt-get: fails on the lock while $work/locked-tries holds a count > 0
# (decremented each call), fails otherwise when $work/broken exists.
cat > "$work/bin/apt-get" <<Q
#!/bin/sh
echo "\$*" >> "$work/calls"
n=\$(cat "$work/locked-tries" 2>/dev/null || echo 0)
if [ "\$n" -gt 0 ]; then
  echo \$((n - 1)) > "$work/locked-tries"
  echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)" >&2
  exit 100
fi
if [ -e "$work/broken" ]; then echo "E: Unable to locate package nosuch" >&2; exit 100; fi
exit 0
Q
chmod +x "$work/bin/"*
run() { PATH="$work/bin:$PATH" DEPS_LOCK_POLL=0 bash "$src/scripts/deps.sh" 2>"$work/err"; }

# 1. held for two tries, then free
echo 2 > "$work/locked-tries"; : > "$work/calls"
if run; then
  grep -q "another apt holds its lock; waiting" "$work/err" || no "case 1: no waiting line: $(cat "$work/err")"
  grep -q "install -y" "$work/calls" || no "case 1: install never ran: $(cat "$work/calls")"
else
  no "case 1: deps.sh failed: $(cat "$work/err")"
fi

# 2. never freed: the bound ends it with one clear line
echo 1000000 > "$work/locked-tries"; : > "$work/calls"
if DEPS_LOCK_WAIT=0 run; then
  no "case 2: deps.sh succeeded with the lock held"
else
  grep -q "another apt still holds its lock after 0 s" "$work/err" || no "case 2: no final line: $(cat "$work/err")"
  [ "$(grep -c '' "$work/calls")" -eq 1 ] || no "case 2: apt-get called $(grep -c '' "$work/calls") times"
fi

# 3. another failure: reported at once, never retried
echo 0 > "$work/locked-tries"; : > "$work/calls"; touch "$work/broken"
if run; then
  no "case 3: deps.sh succeeded on a failing apt"
else
  grep -q "Unable to locate package" "$work/err" || no "case 3: apt's error not shown: $(cat "$work/err")"
  grep -q "waiting" "$work/err" && no "case 3: waited on a failure that is not a lock"
  [ "$(grep -c '' "$work/calls")" -eq 1 ] || no "case 3: apt-get called $(grep -c '' "$work/calls") times"
fi
[ "$fail" -eq 0 ] && echo "deps: 3 cases passed"
exit "$fail"
