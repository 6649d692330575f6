#!/usr/bin/env bash
# No clocks in the core (STYLE.md 4): the judge, holder, vocabulary, stream,
# resolver, audit and host code learn time only from ticks or from an
# owner-supplied clock function. Only the tick adapter, the CLI and tests may
# read the host clock.
set -u
root=${1:?source root}
hits=$(grep -rnE '\b(clock_gettime|gettimeofday|timespec_get|time\(|clock\(\))' \
  "$root"/judge "$root"/holder "$root"/vocab "$root"/resolver "$root"/audit \
  "$root"/host "$root"/include 2>/dev/null \
  | grep -vE '^\S+:[0-9]+:\s*(/\*|\*|//)')
if [ -n "$hits" ]; then
  echo "a clock is read outside the adapters:"; echo "$hits"
  echo "0 passed, 1 failed"; exit 1
fi
echo "1 passed, 0 failed"
