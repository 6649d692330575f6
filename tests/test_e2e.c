/* End-to-end process tests: a `daolease judge` process and `daolease run`
 * processes competing for one subject over stream files (holder.md
 * "Running a command under a lease", cli.md `run` and `judge`, host.md
 * "Fencing tokens").
 *
 * The commands run under the leases are small shell scripts that append
 * "start T", "end T" (or "stopped T", "late T") lines to a shared file,
 * T being the fencing token they read from DAOLEASE_LEASE. The test then
 * replays those writes through the library's fence guard, as the resource
 * would. Wall time is never asserted: only orders and tokens. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daolease/host.h"

static char dir[256];
static const char *bin;

static void sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    if (rc != 0)
        fail_msg("command failed (%d): %s", rc, cmd);
}

/* A folder with keys for the grantor and three agents, their media, and
 * the configuration files of one judge and three runs. */
static int setup(void **state)
{
    (void)state;
    bin = getenv("DAOLEASE_BIN");
    if (!bin)
        bin = "daolease";
    snprintf(dir, sizeof dir, "/tmp/dls-e2e-XXXXXX");
    assert_non_null(mkdtemp(dir));
    sh("cd %s && for p in arbiter a1 a2 a3; do %s keygen $p >> keyring; done", dir, bin);
    sh("cd %s && for p in a1 a2 a3; do %s stream create $p.dls > /dev/null; done", dir, bin);
    sh("cd %s && printf '%%s' '{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", "
       "\"keyring\": \"keyring\", \"journal\": \"journal.dls\", "
       "\"media\": [\"a1.dls\", \"a2.dls\", \"a3.dls\"], \"duration\": {\"s\": 1}, "
       "\"tolerance\": {\"ms\": 250}, \"cadence\": {\"ms\": 100}}' > judge.json", dir);
    for (int i = 1; i <= 3; i++)
        sh("cd %s && printf '%%s' '{\"party\": \"a%d\", \"key\": \"a%d.secret\", "
           "\"keyring\": \"keyring\", \"grantor\": \"arbiter\", \"journal\": \"journal.dls\", "
           "\"medium\": \"a%d.dls\", \"duration\": {\"s\": 1}, \"grace\": {\"ms\": 500}}' "
           "> run-a%d.json", dir, i, i, i, i);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (!getenv("DLS_KEEP"))
        sh("rm -rf %s", dir);
    return 0;
}

static pid_t start_judge(void)
{
    pid_t judge = spawn("cd %s && exec %s judge --config judge.json --create > judge.log 2>&1", dir, bin);
    /* the judge creates the journal; runs need it to exist */
    char path[512];
    snprintf(path, sizeof path, "%s/journal.dls", dir);
    for (int i = 0; i < 500; i++) {
        struct stat st;
        if (stat(path, &st) == 0 && st.st_size >= 48)
            return judge;
        sleep_ms(10);
    }
    fail_msg("the judge did not create its journal");
    return judge;
}

static void stop(pid_t pid)
{
    kill(pid, SIGTERM);
    wait_status(pid);
}

/* One write the commands attempted: a kind and a token. */
struct write {
    char kind[16];
    uint64_t token;
};

static size_t read_writes(const char *name, struct write *w, size_t cap)
{
    char path[512], line[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = 0;
    while (n < cap && fgets(line, sizeof line, f))
        if (sscanf(line, "%15s %" SCNu64, w[n].kind, &w[n].token) == 2)
            n++;
    fclose(f);
    return n;
}

/* holder.md, cli.md `run`: three runs competing for one subject run their
 * commands one at a time — every "start T" is followed by its own "end T"
 * before any other start — and the tokens strictly increase (the lease id
 * is the fencing token, strictly increasing per grantor). */
static void test_three_runs_one_at_a_time(void **state)
{
    (void)state;
    pid_t judge = start_judge();
    pid_t run[3];
    for (int i = 0; i < 3; i++)
        run[i] = spawn("cd %s && exec %s run --config run-a%d.json --subject job --wait 30s -- "
                       "sh -c 'echo start $DAOLEASE_LEASE >> writes; sleep 0.4; "
                       "echo end $DAOLEASE_LEASE >> writes'",
                       dir, bin, i + 1);
    for (int i = 0; i < 3; i++)
        assert_int_equal(wait_status(run[i]), 0); /* exit status is CMD's */
    stop(judge);
    struct write w[16];
    size_t n = read_writes("writes", w, 16);
    assert_int_equal(n, 6);
    for (size_t i = 0; i < n; i += 2) {
        assert_string_equal(w[i].kind, "start");
        assert_string_equal(w[i + 1].kind, "end");
        assert_true(w[i].token == w[i + 1].token);
        if (i)
            assert_true(w[i].token > w[i - 1].token);
    }
}

/* holder.md "Stop acting at the bound", cli.md `run`: when renewals stop
 * succeeding (the run's medium is sealed, so appends are refused), the run
 * stops its command at the holder's bound — SIGTERM to its group, "lease
 * lost" on stderr — before the judge grants the subject to the next run. */
static void test_failing_renewals_stop_child_before_regrant(void **state)
{
    (void)state;
    sh("rm -f %s/writes2", dir);
    pid_t judge = start_judge();
    pid_t first = spawn("cd %s && exec %s run --config run-a1.json --subject job2 --wait 30s -- "
                        "sh -c 'trap \"echo stopped $DAOLEASE_LEASE >> writes2; exit 0\" TERM; "
                        "echo start $DAOLEASE_LEASE >> writes2; "
                        "while :; do sleep 0.05; done' 2> run1.err",
                        dir, bin);
    /* wait until the first command runs, then seal its holder's medium */
    char path[512];
    snprintf(path, sizeof path, "%s/writes2", dir);
    for (int i = 0; i < 1000; i++) {
        struct stat st;
        if (stat(path, &st) == 0 && st.st_size > 0)
            break;
        sleep_ms(10);
    }
    sh("cd %s && %s stream seal a1.dls", dir, bin);
    pid_t second = spawn("cd %s && exec %s run --config run-a2.json --subject job2 --wait 30s -- "
                         "sh -c 'echo start $DAOLEASE_LEASE >> writes2'",
                         dir, bin);
    int s1 = wait_status(first);
    assert_int_equal(wait_status(second), 0);
    stop(judge);
    assert_int_equal(s1, 0); /* the trap exits 0 after SIGTERM */
    sh("grep -q 'lease lost' %s/run1.err", dir);
    sh("grep -q 'newest confirmed position' %s/run1.err", dir); /* issue 12 item 7 */
    struct write w[8];
    size_t n = read_writes("writes2", w, 8);
    assert_int_equal(n, 3);
    assert_string_equal(w[0].kind, "start");
    assert_string_equal(w[1].kind, "stopped"); /* stopped before ... */
    assert_string_equal(w[2].kind, "start");   /* ... the next holder started */
    assert_true(w[2].token > w[0].token);
}

/* host.md "Fencing tokens", holder.md "What the bound is not": a run frozen
 * outright (SIGSTOP: no holder can stop itself) loses its lease by silence;
 * the subject is granted to another run; when the frozen command resumes,
 * its late write carries the old token and the resource's fence guard
 * refuses it, while every write of the new holder is admitted. */
static void test_frozen_run_late_write_refused_by_guard(void **state)
{
    (void)state;
    sh("rm -f %s/writes3", dir);
    pid_t judge = start_judge();
    pid_t first = spawn("cd %s && exec %s run --config run-a3.json --subject job3 --wait 30s -- "
                        "sh -c 'echo start $DAOLEASE_LEASE >> writes3; echo $$ > frozen.pid; "
                        "sleep 1; echo late $DAOLEASE_LEASE >> writes3'",
                        dir, bin);
    char path[512];
    snprintf(path, sizeof path, "%s/frozen.pid", dir);
    /* the shell creates frozen.pid before it writes the pid: wait for both */
    int child = 0;
    for (int i = 0; i < 1000 && child <= 0; i++) {
        sleep_ms(10);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%d", &child) != 1)
                child = 0;
            fclose(f);
        }
    }
    assert_true(child > 0);
    /* freeze the run and its command's whole group */
    kill(first, SIGSTOP);
    kill(-child, SIGSTOP);
    pid_t second = spawn("cd %s && exec %s run --config run-a2.json --subject job3 --wait 30s -- "
                         "sh -c 'echo start $DAOLEASE_LEASE >> writes3; "
                         "echo end $DAOLEASE_LEASE >> writes3'",
                         dir, bin);
    assert_int_equal(wait_status(second), 0);
    /* the command resumes first (its pause ends before its run's): its
     * late write reaches the resource; then the run wakes, past its bound */
    kill(-child, SIGCONT);
    snprintf(path, sizeof path, "grep -q late %s/writes3", dir);
    for (int i = 0; i < 500 && system(path) != 0; i++)
        sleep_ms(10);
    kill(first, SIGCONT);
    wait_status(first);
    stop(judge);
    struct write w[8];
    size_t n = read_writes("writes3", w, 8);
    assert_int_equal(n, 4);
    dls_fence_guard *g;
    assert_int_equal(dls_fence_guard_new(&g, NULL, NULL, NULL), 0);
    int refused = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = dls_fence_guard_admit(g, w[i].token);
        if (!strcmp(w[i].kind, "late")) {
            assert_int_not_equal(rc, 0); /* the stale holder's write is refused */
            refused++;
        } else {
            assert_int_equal(rc, 0);
        }
    }
    assert_int_equal(refused, 1);
    dls_fence_guard_del(g);
}

/* cli.md `demo`: the main job runs end to end — every item done exactly
 * once, killed agents' items reclaimed by silence and granted again — and
 * leaves manifest.json from which any auditor can re-check the run: the
 * audit it names exits 0. */
static void run_demo_and_reaudit(const char *extra, const char *name)
{
    char run[300];
    snprintf(run, sizeof run, "%s/%s", dir, name);
    sh("%s demo --dir %s --agents 4 --items 10 --kill 1 %s > %s.out 2>&1 || "
       "{ cat %s.out; exit 1; }", bin, run, extra, run, run);
    sh("grep -q 'demo passed' %s.out && grep -q 'reclaimed by silence' %s.out", run, run);
    /* re-audit from the manifest alone, as an operator would */
    sh("cd %s && test -s timeline.svg && %s audit --journal \"$(jq -r .journal manifest.json)\" "
       "--grantor \"$(jq -r .grantor manifest.json)\" --keyring \"$(jq -r .keyring manifest.json)\" "
       "--media $(jq -r '.media[]' manifest.json) --json > audit.jsonl",
       run, bin);
    sh("cd %s && tail -n 1 audit.jsonl | jq -e '.exit == 0 and .failures.double_grant == 0 "
       "and .failures.unjustified_lapse == 0' > /dev/null", run);
    sh("cd %s && jq -s -e 'map(select(.cause == \"silence\")) | length >= 1' audit.jsonl "
       "> /dev/null", run);
}

static void test_demo_default_media(void **state)
{
    (void)state;
    run_demo_and_reaudit("", "demo-files");
}

/* Redis medium (stream-format.md "Redis layout"): the demo with the agents'
 * media on a Redis server and the judge's journal a local file. */
static void test_demo_redis_media(void **state)
{
    (void)state;
    if (access("/usr/bin/redis-server", X_OK) != 0)
        skip();
    int port = 0;
    for (int p = 16390; p < 16490 && !port; p++) {
        char probe[128];
        snprintf(probe, sizeof probe, "! bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d' 2>/dev/null", p);
        if (system(probe) == 0)
            port = p;
    }
    assert_true(port != 0);
    pid_t server = spawn("exec /usr/bin/redis-server --port %d --bind 127.0.0.1 --save '' "
                         "--appendonly no > %s/redis.log 2>&1", port, dir);
    char ping[128];
    snprintf(ping, sizeof ping, "redis-cli -p %d ping > /dev/null 2>&1", port);
    for (int i = 0; i < 500 && system(ping) != 0; i++)
        sleep_ms(10);
    char extra[64];
    snprintf(extra, sizeof extra, "--redis redis://127.0.0.1:%d", port);
    run_demo_and_reaudit(extra, "demo-redis");
    /* cli.md `demo`: the last lines name the files the run left, and on
       Redis no agent-N.dls (the agents' media are streams on the server) */
    sh("grep -q \"the agents' media: on redis://127.0.0.1:%d\" %s/demo-redis.out && "
       "! grep -q 'agent-N.dls' %s/demo-redis.out", port, dir, dir);
    stop(server);
}

/* judge.md, "Standby judges and takeover (revision 5)"; docs/standby.md;
 * cli.md `demo`: with --standby the demo's judge runs in its own process
 * beside a standby judge; the judge's process is killed with SIGKILL while
 * agents hold leases, the standby takes over (one takeover mark on the
 * journal, counted by the audit, at the pass the demo names), and the run
 * still ends with every item's result written exactly once and a clean
 * audit. */
static void test_demo_standby(void **state)
{
    (void)state;
    char run[300];
    snprintf(run, sizeof run, "%s/demo-standby", dir);
    sh("%s demo --standby --dir %s --agents 3 --items 8 --kill 1 > %s.out 2>&1 || "
       "{ cat %s.out; exit 1; }", bin, run, run, run);
    sh("grep -q 'killed the judge.s process (SIGKILL)' %s.out && "
       "grep -q 'exactly once: 8 of 8 items done once, 0 stale results' %s.out", run, run);
    /* the killed judge's process left leases held: it was killed mid-run */
    sh("grep -Eq 'killed the judge.s process .* [1-9][0-9]* leases held' %s.out", run);
    /* results.jsonl: one line per item, items 0..7 each exactly once */
    sh("cd %s && jq -s -e 'map(.item) | sort == [0,1,2,3,4,5,6,7]' results.jsonl > /dev/null",
       run);
    /* the audit, again from the manifest: clean, one takeover, at the pass
     * the demo names */
    sh("cd %s && %s audit --journal \"$(jq -r .journal manifest.json)\" "
       "--grantor \"$(jq -r .grantor manifest.json)\" --keyring \"$(jq -r .keyring manifest.json)\" "
       "--media $(jq -r '.media[]' manifest.json) --json > audit.jsonl", run, bin);
    sh("cd %s && pass=$(sed -n 's/.*the standby judge took over at pass \\([0-9]*\\)$/\\1/p' "
       "../demo-standby.out) && test -n \"$pass\" && tail -n 1 audit.jsonl | jq -e --argjson p "
       "\"$pass\" '.exit == 0 and .failures.double_grant == 0 and "
       ".failures.unjustified_lapse == 0 and .reports.takeovers == [$p]' > /dev/null", run);
    /* the journal itself: exactly one takeover mark */
    sh("cd %s && test \"$(%s watch --journal journal.dls --no-follow --json | "
       "jq -c 'select(.event == \"takeover\")' | wc -l)\" = 1", run, bin);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_three_runs_one_at_a_time),
        cmocka_unit_test(test_failing_renewals_stop_child_before_regrant),
        cmocka_unit_test(test_frozen_run_late_write_refused_by_guard),
        cmocka_unit_test(test_demo_default_media),
        cmocka_unit_test(test_demo_redis_media),
        cmocka_unit_test(test_demo_standby),
    };
    return cmocka_run_group_tests_name("e2e", tests, setup, teardown);
}
