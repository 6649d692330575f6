#!/usr/bin/env bash
# The Node package's suites (docs/node.md, "Tests and benchmark"): installs
# the dependencies from the committed package-lock.json when node_modules is
# missing or older than the lock (offline-safe once it exists), compiles
# with tsc, runs every node --test file. Run by `meson test node` with
# DAOLEASE_BUILD set to the build folder.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --prefer-offline
fi
node node_modules/typescript/bin/tsc -p tsconfig.json
exec node --test --test-concurrency=1 test/*.test.js
