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
# With DLS_NATS=1 the journal and the agents' media are streams with three
# replicas on a three-node JetStream cluster the script starts on loopback
# (nats-server, docs/jetstream.md), the standby takes over by expected last
# sequence after `takeover_after` (DLS_TAKEOVER_MS, default 10000: longer
# than a leader failover, so a live judge riding through one is not taken
# over), and at the middle kill one NATS server is killed too (and started
# again after the takeover).
#
# For the takeover's figures (docs/standby.md): DLS_LEASE_MS (the agents'
# lease duration, default 1000), DLS_WORK_MS (how long an agent's command
# works, default 50), DLS_AGENT_KILLS=0 (no agent is killed: every holder
# lives, so a holder stopped at its bound is a loss the takeover caused) and
# DLS_NATS_KILL=0 (no NATS server killed). Each kill's time until the
# standby said it took over is measured (takeover_ms: the largest and the
# median); holders_stopped counts the agents' runs stopped at their bound
# or reclaimed under them.
#
# Environment: DAOLEASE_BIN (default build/cli/daolease), DLS_KEEP=1 keeps
# the work folder. Prints one summary line:
#   kills N takeovers T takeover_marks M servers_killed S audits A
#       audit_failures F runs R leased L agents_killed K holders_stopped H
#       grants G lapsed S live_at_end V tokens_ok yes|no
#       takeover_ms max X median Y seconds T
# and exits 1 when a takeover did not happen, an audit failed, a lease was
# left live, the tokens went backwards, or no run ever got a lease.
set -eu

N=${1:?usage: kill_standby.sh N [BATCH]}
LEASE_MS=${DLS_LEASE_MS:-1000}
WORK=$(awk -v m="${DLS_WORK_MS:-50}" 'BEGIN { printf "%.3f", m / 1000 }')
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
    for j in 1 2 3; do eval "[ -n \"\${npid$j:-}\" ]" && nats_kill $j; done
    wait 2>/dev/null || true
    [ "${DLS_KEEP:-0}" = 1 ] || rm -rf "$DIR"
}
trap cleanup EXIT INT TERM

cd "$DIR"

# A three-node JetStream cluster on free loopback ports (DLS_NATS=1).
NATS_SERVER=${NATS_SERVER:-/usr/sbin/nats-server}
free_port() {
    /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
nats_spawn() { # node index 1..3
    eval "p=\$port$1 c=\$cport$1"
    routes=""
    for j in 1 2 3; do
        [ "$j" = "$1" ] && continue
        eval "routes=\"\${routes:+\$routes,}nats://127.0.0.1:\$cport$j\""
    done
    "$NATS_SERVER" -js -a 127.0.0.1 -p "$p" -sd "$DIR/n$1" -n "n$1" -l "$DIR/n$1.log" \
        --cluster "nats://127.0.0.1:$c" --routes "$routes" --cluster_name dls &
    eval "npid$1=\$!"
}
nats_kill() { eval "kill -9 \$npid$1 2>/dev/null; wait \$npid$1 2>/dev/null" || true; eval "npid$1="; }
if [ "${DLS_NATS:-0}" = 1 ]; then
    [ -x "$NATS_SERVER" ] || { echo "kill_standby.sh: no nats-server at $NATS_SERVER" >&2; exit 2; }
    for j in 1 2 3; do eval "port$j=$(free_port) cport$j=$(free_port)"; done
    for j in 1 2 3; do nats_spawn $j; done
    srv="nats://127.0.0.1:$port1,127.0.0.1:$port2,127.0.0.1:$port3"
    J="$srv/journal?replicas=3&sync=data"
    for i in 1 2 3; do eval "M$i=\"$srv/a$i?replicas=3\""; done
    takeover="\"takeover_after\": {\"ms\": ${DLS_TAKEOVER_MS:-10000}},"
    t=0 # the cluster places a three-replica stream once its nodes see each other
    until "$BIN" stream create "$M1" > /dev/null 2>&1; do
        t=$((t + 1))
        [ "$t" -lt 120 ] || { echo "kill_standby.sh: the cluster did not form (see $DIR)" >&2; DLS_KEEP=1; exit 1; }
        sleep 0.5
    done
    for i in 2 3; do eval "\"\$BIN\" stream create \"\$M$i\"" > /dev/null; done
else
    J=journal.dls M1=a1.dls M2=a2.dls M3=a3.dls takeover=""
    for i in 1 2 3; do eval "\"\$BIN\" stream create \"\$M$i\"" > /dev/null; done
fi
for p in arbiter a1 a2 a3; do "$BIN" keygen $p >> keyring; done
printf '{"party": "arbiter", "key": "arbiter.secret", "keyring": "keyring",
  "journal": "%s", "media": ["%s", "%s", "%s"],
  "duration": {"ms": %d}, "tolerance": {"ms": 250}, "cadence": {"ms": 50}, %s
  "heartbeat": {"ms": 500}}' "$J" "$M1" "$M2" "$M3" "$LEASE_MS" "$takeover" > judge.json
for i in 1 2 3; do
    eval "m=\$M$i"
    printf '{"party": "a%d", "key": "a%d.secret", "keyring": "keyring", "grantor": "arbiter",
  "journal": "%s", "medium": "%s", "duration": {"ms": %d},
  "grace": {"ms": 300}}' $i $i "$J" "$m" "$LEASE_MS" > run-a$i.json
done

rand_ms() {
    r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
    echo $(( $1 + r % ($2 - $1 + 1) ))
}
sleep_ms() { sleep "$(awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }')"; }

# Waits up to $4 × 10 ms (default 10 s) for a line matching $2 in file $1
# beyond its first $3 lines.
wait_line() {
    t=0
    while [ "$t" -lt "${4:-1000}" ]; do
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
    if ! "$BIN" audit --journal "$J" --grantor arbiter --keyring keyring \
            --media "$M1" "$M2" "$M3" > "audit-$audits.txt" 2>&1; then
        failures=$((failures + 1))
        echo "kill_standby.sh: audit $audits failed (see $DIR/audit-$audits.txt)" >&2
        DLS_KEEP=1
    fi
}

"$BIN" judge --config judge.json --create > judge-0.out 2>> judge.err &
judge=$!
t=0
until "$BIN" dump "$J" 2>/dev/null | grep -q .; do
    t=$((t + 1))
    [ "$t" -lt 3000 ] || { echo "kill_standby.sh: the judge wrote nothing (see $DIR)" >&2; DLS_KEEP=1; exit 1; }
    sleep_ms 10
done
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
            if [ "${DLS_AGENT_KILLS:-1}" = 1 ] && [ $((n % 5)) -eq 0 ]; then
                timeout -s KILL 0.2 "$BIN" run --config run-a$i.json --subject job$((i % 2)) \
                    --wait 4s -- sh -c 'echo "start $DAOLEASE_SUBJECT $DAOLEASE_LEASE" >> writes;
                                        sleep 1' > /dev/null 2>> agent$i.err
                echo "killed $?" >> status$i
            else
                "$BIN" run --config run-a$i.json --subject job$((i % 2)) --wait 4s -- \
                    env WORK="$WORK" sh -c 'echo "start $DAOLEASE_SUBJECT $DAOLEASE_LEASE" >> writes; sleep "$WORK";
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
servers_killed=0
# how long a takeover may take, in 10 ms steps: takeover_after and a leader
# failover (4-8 s measured, docs/jetstream.md) on JetStream, 10 s on a file
wait_limit=1000
[ "${DLS_NATS:-0}" = 1 ] && wait_limit=$(( (${DLS_TAKEOVER_MS:-10000} + 30000) / 10 ))
while [ "$k" -lt "$N" ]; do
    sleep_ms "$(rand_ms 0 300)"
    nats_killed=""
    if [ "${DLS_NATS:-0}" = 1 ] && [ "${DLS_NATS_KILL:-1}" = 1 ] && [ "$k" -eq $((N / 2)) ]; then
        nats_killed=$((k % 3 + 1))
        nats_kill "$nats_killed"
    fi
    killed_at=$(date +%s%N)
    kill -9 "$judge" 2>/dev/null || true
    wait "$judge" 2>/dev/null || true
    k=$((k + 1))
    if wait_line "$out" '"took_over": ' 0 "$wait_limit"; then
        takeovers=$((takeovers + 1))
        echo $(( ($(date +%s%N) - killed_at) / 1000000 )) >> takeover_ms
    else
        echo "kill_standby.sh: kill $k: the standby did not take over (see $DIR)" >&2
        DLS_KEEP=1
        break
    fi
    judge=$standby
    standby=""
    if [ -n "$nats_killed" ]; then
        nats_spawn "$nats_killed"
        servers_killed=$((servers_killed + 1))
    fi
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
sleep $((LEASE_MS / 1000 + 2)) # a grant that arrived after its run gave up lapses by silence
live=$("$BIN" status --journal "$J" --media "$M1" "$M2" "$M3" --json 2>/dev/null |
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
grants=$("$BIN" dump --json "$J" 2>/dev/null | grep -c '"accepted"' || true)
lapsed=$("$BIN" dump --json "$J" 2>/dev/null | grep -c '"lapsed"' || true)
marks=$("$BIN" audit --journal "$J" --grantor arbiter --keyring keyring \
        --media "$M1" "$M2" "$M3" --json 2>/dev/null |
        sed -n 's/.*"takeovers": \[\([0-9, ]*\)\].*/\1/p' | tr ',' '\n' | grep -c . || true)
stopped=$(cat agent1.err agent2.err agent3.err 2>/dev/null |
          grep -c 'stopped: \|was reclaimed by the grantor' || true)
tk_max=$(sort -n takeover_ms 2>/dev/null | tail -1)
tk_med=$(sort -n takeover_ms 2>/dev/null | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }')
tokens_ok=$(awk '
    $1 == "start" { if (($2 in last) && $3 <= last[$2]) bad = 1; last[$2] = $3 }
    END { print bad ? "no" : "yes" }' writes 2>/dev/null || echo no)
end=$(date +%s)
echo "kills $k takeovers $takeovers takeover_marks $marks servers_killed $servers_killed audits $audits" \
     "audit_failures $failures runs $runs leased $leased agents_killed $killed" \
     "holders_stopped $stopped grants $grants lapsed $lapsed live_at_end ${live:-?}" \
     "tokens_ok $tokens_ok takeover_ms max ${tk_max:-?} median ${tk_med:-?}" \
     "seconds $((end - start))"
[ "$takeovers" -eq "$N" ] && [ "$failures" -eq 0 ] && [ "$tokens_ok" = yes ] &&
    [ "$leased" -gt 0 ] && [ "${live:-1}" = 0 ]
