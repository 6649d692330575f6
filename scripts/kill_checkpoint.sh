#!/bin/sh
# Kill campaign for checkpoints (issue 17 item 5; judge.md rev 4,
# Checkpoints): a judge passing and writing checkpoints in a loop is killed
# with SIGKILL N times at random moments (most of them while a checkpoint
# is being written); after each kill the judge is restarted from the
# newest committed checkpoint and its ledger must equal the one full replay
# gives, field by field. An uncommitted or torn checkpoint is never used.
#
#   scripts/kill_checkpoint.sh N          (N >= 1; build first)
#
# Runs tests/test_checkpoint.c's kill test alone with N rounds; prints its
# summary line ("kill rounds N, killed with a torn checkpoint write T") and
# exits non-zero on any failure.
set -eu
N=${1:?usage: kill_checkpoint.sh N}
case "$N" in *[!0-9]*|'') echo "kill_checkpoint.sh: N is a number" >&2; exit 2;; esac
[ "$N" -ge 1 ] || { echo "kill_checkpoint.sh: N >= 1" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
BIN=${DLS_TEST_CHECKPOINT:-$here/build/tests/test_checkpoint}
[ -x "$BIN" ] || { echo "kill_checkpoint.sh: no $BIN (build first)" >&2; exit 2; }
DLS_CKPT_ONLY_KILL=1 DLS_CKPT_KILLS=$N exec "$BIN"
