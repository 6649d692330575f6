#!/bin/sh
# Retention soak (issue 17 item 3; judge.md rev 4, Checkpoints, Retention):
# RENEWALS renewals (default 10^6) through a judge whose journal is a
# segmented directory trimmed after every checkpoint (keep 2), with
# restarts at random (seeded) points, beside an uninterrupted reference
# judge reading the same media and ticks. Fails unless the journal's disk
# stays under the stated bound, every acknowledged renewal is counted after
# every pass, no lease is reclaimed for silence, the ledger equals the
# reference's after every pass, and the audit of the trimmed journal (from
# the oldest kept checkpoint) is clean. Prints the figures and the time.
#
#   scripts/soak_checkpoint.sh [RENEWALS [SEED]]     (build first)
#
# Environment (defaults): DLS_SOAK_LEASES (1000 live leases; steps =
# RENEWALS / leases), DLS_SOAK_EVERY (a checkpoint every 5 passes: 2 s of
# the simulated 400 ms cadence), DLS_SOAK_SEGMENT (16384-byte journal
# segments), DLS_SOAK_RESTART_IN (a restart in one step of 25),
# DLS_SOAK_DIR (the folder: default $TMPDIR or /tmp, a disk, so the
# journal's fdatasync is real).
set -eu
R=${1:-1000000}
SEED=${2:-20261201}
case "$R$SEED" in *[!0-9]*|'') echo "soak_checkpoint.sh: RENEWALS and SEED are numbers" >&2; exit 2;; esac
here=$(cd "$(dirname "$0")/.." && pwd)
BIN=${DLS_TEST_CHECKPOINT:-$here/build/tests/test_checkpoint}
[ -x "$BIN" ] || { echo "soak_checkpoint.sh: no $BIN (build first)" >&2; exit 2; }
L=${DLS_SOAK_LEASES:-1000}
STEPS=$(( (R + L - 1) / L ))
start=$(date +%s)
rc=0
DLS_CKPT_ONLY_SOAK=1 DLS_SOAK_LEASES=$L DLS_SOAK_STEPS=$STEPS \
DLS_SOAK_EVERY=${DLS_SOAK_EVERY:-5} DLS_SOAK_SEGMENT=${DLS_SOAK_SEGMENT:-16384} \
DLS_SOAK_RESTART_IN=${DLS_SOAK_RESTART_IN:-25} DLS_SOAK_SEED=$SEED \
DLS_SOAK_DIR=${DLS_SOAK_DIR:-${TMPDIR:-/tmp}} "$BIN" || rc=$?
echo "soak: wall seconds $(( $(date +%s) - start ))"
exit $rc
