#!/bin/sh
# Kill campaign for the standby judge on a file journal (judge.md rev 5,
# Standby judges and takeover; docs/standby.md): `daolease judge` runs with
# a `daolease judge --standby` beside it while `daolease run` agents keep
# claiming two subjects (every fifth run is itself killed with SIGKILL while
# it holds its lease). The active judge is killed with SIGKILL N times at
# random moments (from 0 ms after a pass to 300 ms: some kills land between
# a mark listing a due lease and its `lapsed`); each time the standby must
# take over, and a fresh standby is started beside the new judge. After
# every BATCH kills (and at the end) the journal is audited and must be
# clean; at the end, with the agents stopped and one more silence bound
# waited, no lease is live (every dead agent's lease was reclaimed) and the
# fencing tokens of successive starts on a subject strictly increased (no
# subject held twice).
#
#   scripts/kill_standby.sh N [BATCH]      (N >= 1, BATCH default 10)
#
# Environment: DAOLEASE_BIN (default build/cli/daolease), DLS_KEEP=1 keeps
# the work folder. Prints one summary line:
#   kills N takeovers T audits A audit_failures F runs R leased L
#       agents_killed K grants G lapsed S live_at_end V tokens_ok yes|no
#       seconds T
# and exits 1 when a takeover did not happen, an audit failed, a lease was
# left live, the tokens went backwards, or no run ever got a lease.
set -eu

N=${1:?usage: kill_standby.sh N [BATCH]}
BATCH=${2:-10}
case "$N$BATCH" in *[!0-9]*) echo "kill_standby.sh: N and BATCH are numbers" >&2; exit 2;; esac
[ "$N" -ge 1 ] && [ "$BATCH" -ge 1 ] || { echo "kill_standby.sh: N, BATCH >= 1" >&2; exit 2; }

here=$(cd "$(dirname "$0")/.." && pwd)
BIN=${DAOLEASE_BIN:-$here/build/cli/daolease}
[ -x "$BIN" ] || { echo "kill_standby.sh: no daolease at $BIN (build first)" >&2; exit 2; }
DIR=$(mktemp -d /tmp/dls-killstandby-XXXXXX)
start=$(date +%s)

cleanup() {
    touch "$DIR/stop" 2>/dev/null || true
    [ -n "${judge:-}" ] && kill -9 "$judge" 2>/dev/null || true
    [ -n "${standby:-}" ] && kill -9 "$standby" 2>/dev/null || true
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
  "duration": {"s": 1}, "tolerance": {"ms": 250}, "cadence": {"ms": 50},
  "heartbeat": {"ms": 500}}' > judge.json
for i in 1 2 3; do
    printf '{"party": "a%d", "key": "a%d.secret", "keyring": "keyring", "grantor": "arbiter",
  "journal": "journal.dls", "medium": "a%d.dls", "duration": {"s": 1},
  "grace": {"ms": 300}}' $i $i $i > run-a$i.json
done

rand_ms() {
    r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
    echo $(( $1 + r % ($2 - $1 + 1) ))
}
sleep_ms() { sleep "$(awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }')"; }

# Waits up to 10 s for a line matching $2 in file $1 beyond its first $3 lines.
wait_line() {
    t=0
    while [ "$t" -lt 1000 ]; do
        if tail -n +"$(( $3 + 1 ))" "$1" 2>/dev/null | grep -q "$2"; then return 0; fi
        sleep_ms 10
        t=$((t + 1))
    done
    return 1
}

n_standbys=0
start_standby() {
    n_standbys=$((n_standbys + 1))
    out="standby-$n_standbys.out"
    : > "$out"
    "$BIN" judge --standby --config judge.json > "$out" 2>> standby.err &
    standby=$!
    wait_line "$out" '"standby": true' 0 || {
        echo "kill_standby.sh: standby $n_standbys does not follow (see $DIR)" >&2
        DLS_KEEP=1; exit 1; }
}

audits=0
failures=0
audit_now() {
    audits=$((audits + 1))
    if ! "$BIN" audit --journal journal.dls --grantor arbiter --keyring keyring \
            --media a1.dls a2.dls a3.dls > "audit-$audits.txt" 2>&1; then
        failures=$((failures + 1))
        echo "kill_standby.sh: audit $audits failed (see $DIR/audit-$audits.txt)" >&2
        DLS_KEEP=1
    fi
}

"$BIN" judge --config judge.json --create > judge-0.out 2>> judge.err &
judge=$!
while [ ! -s journal.dls ]; do sleep_ms 10; done
start_standby

# Agents: each claims job<i % 2> over and over, works 50 ms, releases; every
# fifth run is killed with SIGKILL 200 ms into a 1 s command, lease held.
agents=""
for i in 1 2 3; do
    (
        n=0
        while [ ! -f stop ]; do
            n=$((n + 1))
            set +e
            if [ $((n % 5)) -eq 0 ]; then
                timeout -s KILL 0.2 "$BIN" run --config run-a$i.json --subject job$((i % 2)) \
                    --wait 4s -- sh -c 'echo "start $DAOLEASE_SUBJECT $DAOLEASE_LEASE" >> writes;
                                        sleep 1' > /dev/null 2>> agent$i.err
                echo "killed $?" >> status$i
            else
                "$BIN" run --config run-a$i.json --subject job$((i % 2)) --wait 4s -- \
                    sh -c 'echo "start $DAOLEASE_SUBJECT $DAOLEASE_LEASE" >> writes; sleep 0.05;
                           echo "end $DAOLEASE_SUBJECT $DAOLEASE_LEASE" >> writes' \
                    > /dev/null 2>> agent$i.err
                echo $? >> status$i
            fi
            set -e
        done
    ) &
    agents="$agents $!"
done

k=0
takeovers=0
while [ "$k" -lt "$N" ]; do
    sleep_ms "$(rand_ms 0 300)"
    kill -9 "$judge" 2>/dev/null || true
    wait "$judge" 2>/dev/null || true
    k=$((k + 1))
    if wait_line "$out" '"took_over": "journal.dls"' 0; then
        takeovers=$((takeovers + 1))
    else
        echo "kill_standby.sh: kill $k: the standby did not take over (see $DIR)" >&2
        DLS_KEEP=1
        break
    fi
    judge=$standby
    standby=""
    if [ $((k % BATCH)) -eq 0 ] || [ "$k" -eq "$N" ]; then
        audit_now
    fi
    start_standby
done

# Stop the agents, wait one silence bound (duration + tolerance + cadence,
# with room) under a live judge: every lease of a killed run lapses.
touch stop
for p in $agents; do wait "$p" 2>/dev/null || true; done
agents=""
sleep 3
live=$("$BIN" status --journal journal.dls --media a1.dls a2.dls a3.dls --json 2>/dev/null |
       sed -n 's/.*"summary": true, "live": \([0-9]*\).*/\1/p')
kill -TERM "$judge" "$standby" 2>/dev/null || true
wait "$judge" 2>/dev/null || true
wait "$standby" 2>/dev/null || true
judge=""
standby=""
audit_now

runs=$(cat status1 status2 status3 2>/dev/null | wc -l)
leased=$(cat status1 status2 status3 2>/dev/null | grep -c '^0$' || true)
killed=$(cat status1 status2 status3 2>/dev/null | grep -c '^killed' || true)
grants=$("$BIN" dump --json journal.dls 2>/dev/null | grep -c '"accepted"' || true)
lapsed=$("$BIN" dump --json journal.dls 2>/dev/null | grep -c '"lapsed"' || true)
marks=$("$BIN" audit --journal journal.dls --grantor arbiter --keyring keyring \
        --media a1.dls a2.dls a3.dls --json 2>/dev/null |
        sed -n 's/.*"takeovers": \[\([0-9, ]*\)\].*/\1/p' | tr ',' '\n' | grep -c . || true)
tokens_ok=$(awk '
    $1 == "start" { if (($2 in last) && $3 <= last[$2]) bad = 1; last[$2] = $3 }
    END { print bad ? "no" : "yes" }' writes 2>/dev/null || echo no)
end=$(date +%s)
echo "kills $k takeovers $takeovers takeover_marks $marks audits $audits" \
     "audit_failures $failures runs $runs leased $leased agents_killed $killed" \
     "grants $grants lapsed $lapsed live_at_end ${live:-?} tokens_ok $tokens_ok" \
     "seconds $((end - start))"
[ "$takeovers" -eq "$N" ] && [ "$failures" -eq 0 ] && [ "$tokens_ok" = yes ] &&
    [ "$leased" -gt 0 ] && [ "${live:-1}" = 0 ]
