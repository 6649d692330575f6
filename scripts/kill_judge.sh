#!/bin/sh
# Kill campaign for the CLI judge (issue 12 item 16; judge.md "Failure of
# the journal" and "Restart"): `daolease judge` is killed with SIGKILL N
# times at random moments while `daolease run` agents keep claiming two
# subjects; after every BATCH kills (and at the end) the journal is audited
# and must be clean (exit 0).
#
#   scripts/kill_judge.sh N [BATCH]        (N >= 1, BATCH default 10)
#
# Environment: DAOLEASE_BIN (default build/cli/daolease), DLS_KEEP=1 keeps
# the work folder. Prints one summary line:
#   kills N audits A audit_failures F runs R leased L no_lease U grants G
#       lapsed S tokens_ok yes|no seconds T
# and exits 1 when an audit failed, the fencing tokens went backwards, or no
# run ever got a lease.
set -eu

N=${1:?usage: kill_judge.sh N [BATCH]}
BATCH=${2:-10}
case "$N$BATCH" in *[!0-9]*) echo "kill_judge.sh: N and BATCH are numbers" >&2; exit 2;; esac
[ "$N" -ge 1 ] && [ "$BATCH" -ge 1 ] || { echo "kill_judge.sh: N, BATCH >= 1" >&2; exit 2; }

here=$(cd "$(dirname "$0")/.." && pwd)
BIN=${DAOLEASE_BIN:-$here/build/cli/daolease}
[ -x "$BIN" ] || { echo "kill_judge.sh: no daolease at $BIN (build first)" >&2; exit 2; }
DIR=$(mktemp -d /tmp/dls-killjudge-XXXXXX)
start=$(date +%s)

cleanup() {
    touch "$DIR/stop" 2>/dev/null || true
    [ -n "${judge:-}" ] && kill -9 "$judge" 2>/dev/null || true
    for p in ${agents:-}; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    [ "${DLS_KEEP:-0}" = 1 ] || rm -rf "$DIR"
}
trap cleanup EXIT INT TERM

cd "$DIR"
for p in arbiter a1 a2 a3; do "$BIN" keygen $p >> keyring; done
for p in a1 a2 a3; do "$BIN" stream create $p.dls > /dev/null; done
printf '%s' '{"party": "arbiter", "key": "arbiter.secret", "keyring": "keyring",
  "journal": "journal.dls", "media": ["a1.dls", "a2.dls", "a3.dls"],
  "duration": {"s": 1}, "tolerance": {"ms": 250}, "cadence": {"ms": 50}}' > judge.json
for i in 1 2 3; do
    printf '{"party": "a%d", "key": "a%d.secret", "keyring": "keyring", "grantor": "arbiter",
  "journal": "journal.dls", "medium": "a%d.dls", "duration": {"s": 1},
  "grace": {"ms": 300}}' $i $i $i > run-a$i.json
done

# A random number of milliseconds in [lo, hi].
rand_ms() {
    r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
    echo $(( $1 + r % ($2 - $1 + 1) ))
}
sleep_ms() { sleep "$(awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }')"; }

start_judge() {
    "$BIN" judge --config judge.json "$@" >> judge.out 2>> judge.err &
    judge=$!
}

audits=0
failures=0
audit_now() {
    audits=$((audits + 1))
    if ! "$BIN" audit --journal journal.dls --grantor arbiter --keyring keyring \
            --media a1.dls a2.dls a3.dls > "audit-$audits.txt" 2>&1; then
        failures=$((failures + 1))
        echo "kill_judge.sh: audit $audits failed (see $DIR/audit-$audits.txt)" >&2
        DLS_KEEP=1
    fi
}

start_judge --create
while [ ! -s journal.dls ]; do sleep_ms 10; done

# Agents: each claims job<i % 2> over and over, works 50 ms, releases.
agents=""
for i in 1 2 3; do
    (
        while [ ! -f stop ]; do
            set +e
            "$BIN" run --config run-a$i.json --subject job$((i % 2)) --wait 4s -- \
                sh -c 'echo "start $DAOLEASE_SUBJECT $DAOLEASE_LEASE" >> writes; sleep 0.05;
                       echo "end $DAOLEASE_SUBJECT $DAOLEASE_LEASE" >> writes' \
                > /dev/null 2>> agent$i.err
            echo $? >> status$i
            set -e
        done
    ) &
    agents="$agents $!"
done

k=0
while [ "$k" -lt "$N" ]; do
    sleep_ms "$(rand_ms 20 600)"
    kill -9 "$judge" 2>/dev/null || true
    wait "$judge" 2>/dev/null || true
    judge=""
    k=$((k + 1))
    if [ $((k % BATCH)) -eq 0 ] || [ "$k" -eq "$N" ]; then
        audit_now
    fi
    start_judge
done

# Let the agents finish their current runs under a live judge, then stop.
touch stop
for p in $agents; do wait "$p" 2>/dev/null || true; done
agents=""
kill -TERM "$judge" 2>/dev/null || true
wait "$judge" 2>/dev/null || true
judge=""
audit_now

runs=$(cat status1 status2 status3 2>/dev/null | wc -l)
leased=$(cat status1 status2 status3 2>/dev/null | grep -c '^0$' || true)
nolease=$(cat status1 status2 status3 2>/dev/null | grep -c '^75$' || true)
grants=$("$BIN" dump --json journal.dls 2>/dev/null | grep -c '"accepted"' || true)
lapsed=$("$BIN" dump --json journal.dls 2>/dev/null | grep -c '"lapsed"' || true)
# Fencing: per subject the tokens of successive starts strictly increase
# (a command stopped at its bound writes no end line, so ends are not
# paired here; the audit checks the grants themselves).
tokens_ok=$(awk '
    $1 == "start" { if (($2 in last) && $3 <= last[$2]) bad = 1; last[$2] = $3 }
    END { print bad ? "no" : "yes" }' writes 2>/dev/null || echo no)
end=$(date +%s)
echo "kills $N audits $audits audit_failures $failures runs $runs leased $leased" \
     "no_lease $nolease grants $grants lapsed $lapsed tokens_ok $tokens_ok" \
     "seconds $((end - start))"
[ "$failures" -eq 0 ] && [ "$tokens_ok" = yes ] && [ "$leased" -gt 0 ]
