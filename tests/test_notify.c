/* Process tests of `daolease judge` under a service manager
 * (docs/service.md, Readiness and watchdog; cli/service.h): the test is
 * the manager. It binds its own datagram socket, names it in
 * NOTIFY_SOCKET and reads what the judge sends: READY=1 after the first
 * pass, WATCHDOG=1 after every pass when WATCHDOG_USEC asks for it and
 * never otherwise, STATUS= with the pass number and the live leases,
 * nothing while the judge is stopped (SIGSTOP: the stall a watchdog
 * catches), STOPPING=1 on SIGTERM, the last checkpoint and exit 0. A
 * configuration that cannot be read exits 78 (EX_CONFIG) with one line and
 * says nothing to the manager (docs/service.md, A bad configuration).
 *
 * Wall time is never asserted as a measurement: counts of messages against
 * the pass numbers the judge reports, and windows the judge cannot send in
 * (it is stopped); waits are bounded polls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static char dir[64];
static const char *bin;
static int sock = -1;

#define SH(...) assert_int_equal(run_sh(__VA_ARGS__), 0)

/* A fresh folder: the grantor's key, a keyring, two media, the judge's
 * config (checkpoints every 100000 passes: never due in a test, so the
 * one found after a stop is the stop's own), and the manager's socket. */
static int setup(void **state)
{
    (void)state;
    bin = getenv("DAOLEASE_BIN");
    if (!bin)
        bin = "daolease";
    snprintf(dir, sizeof dir, "/tmp/dls-notify-XXXXXX");
    assert_non_null(mkdtemp(dir));
    SH("cd %s && %s keygen arbiter >> keyring && %s keygen a1 >> keyring", dir, bin, bin);
    SH("cd %s && %s stream create a1.dls > /dev/null", dir, bin);
    SH("cd %s && printf '%%s' '{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", "
       "\"keyring\": \"keyring\", \"journal\": \"journal.dls\", \"media\": [\"a1.dls\"], "
       "\"create_journal\": true, \"tolerance\": {\"ms\": 250}, \"cadence\": {\"ms\": 100}, "
       "\"checkpoint_every\": {\"passes\": 100000}}' > judge.json",
       dir);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s/notify", dir);
    sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    assert_true(sock >= 0);
    assert_int_equal(bind(sock, (struct sockaddr *)&a, sizeof a), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (sock >= 0)
        close(sock);
    sock = -1;
    if (!getenv("DLS_KEEP"))
        run_sh("rm -rf %s", dir);
    return 0;
}

/* The next datagram within ms milliseconds into buf (NUL-terminated):
 * true, or false when none came. */
static bool next_msg(char *buf, size_t cap, int ms)
{
    struct pollfd p = {.fd = sock, .events = POLLIN};
    int r;
    do
        r = poll(&p, 1, ms);
    while (r < 0 && errno == EINTR);
    if (r <= 0)
        return false;
    ssize_t n = recv(sock, buf, cap - 1, 0);
    assert_true(n >= 0);
    buf[n] = 0;
    return true;
}

/* Reads datagrams until one holds `want` (within ms): true when found. */
static bool wait_for(const char *want, char *buf, size_t cap, int ms)
{
    uint64_t end = mono_ms() + (uint64_t)ms;
    while (mono_ms() < end)
        if (next_msg(buf, cap, (int)(end - mono_ms())) && strstr(buf, want))
            return true;
    return false;
}

/* "STATUS=pass N, live L, ...": N (and L), or -1 when the message has no
 * STATUS. */
static int64_t status_pass(const char *msg, uint64_t *live)
{
    const char *s = strstr(msg, "STATUS=pass ");
    uint64_t pass, l;
    if (!s || sscanf(s, "STATUS=pass %" SCNu64 ", live %" SCNu64, &pass, &l) != 2)
        return -1;
    if (live)
        *live = l;
    return (int64_t)pass;
}

/* True when process pid is in the stopped state ('T' in /proc). */
static bool is_stopped(pid_t pid)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool t = false;
    if (fgets(line, sizeof line, f)) {
        const char *rp = strrchr(line, ')');
        t = rp && rp[1] == ' ' && rp[2] == 'T';
    }
    fclose(f);
    return t;
}

static pid_t start_judge(const char *env)
{
    return spawn("cd %s && NOTIFY_SOCKET=%s/notify %s exec %s judge --config judge.json "
                 "> judge.out 2> judge.err",
                 dir, dir, env, bin);
}

/* docs/service.md, Readiness and watchdog: READY=1 once the journal is
 * assembled and the first pass landed, its STATUS the pass's number; one
 * WATCHDOG=1 for every pass after it; STATUS= with the pass number and
 * live leases about once a second. */
static void test_ready_then_watchdog_each_pass(void **state)
{
    (void)state;
    char msg[512];
    pid_t judge = start_judge("WATCHDOG_USEC=5000000");
    assert_true(next_msg(msg, sizeof msg, 20000));
    assert_non_null(strstr(msg, "READY=1"));
    uint64_t live = 99;
    int64_t first = status_pass(msg, &live);
    assert_true(first >= 1); /* a pass with a now has landed */
    assert_int_equal(live, 0);
    struct stat st;
    char path[512];
    snprintf(path, sizeof path, "%s/journal.dls", dir);
    assert_int_equal(stat(path, &st), 0); /* assembled: the journal exists */
    /* every message until the third STATUS after READY: each pass since
     * READY's sent exactly one WATCHDOG=1 (a STATUS rides on one) */
    uint64_t watchdogs = 1, statuses = 0;
    int64_t last = first;
    while (statuses < 3) {
        assert_true(next_msg(msg, sizeof msg, 5000));
        assert_null(strstr(msg, "READY=1"));
        assert_non_null(strstr(msg, "WATCHDOG=1"));
        watchdogs++;
        int64_t p = status_pass(msg, NULL);
        if (p >= 0) {
            assert_true(p > last);
            last = p;
            statuses++;
        }
    }
    /* pass numbers count passes with a now; every pass sent one */
    assert_true(watchdogs >= (uint64_t)(last - first + 1));
    kill(judge, SIGTERM);
    assert_true(wait_for("STOPPING=1", msg, sizeof msg, 10000));
    assert_int_equal(wait_status(judge), 0);
}

/* docs/service.md, Watchdog: a judge whose pass loop stalls (here
 * stopped with SIGSTOP) sends no WATCHDOG=1, so the manager's WatchdogSec
 * runs out; sent again once it runs. */
static void test_stalled_judge_sends_no_watchdog(void **state)
{
    (void)state;
    char msg[512];
    pid_t judge = start_judge("WATCHDOG_USEC=5000000");
    assert_true(wait_for("READY=1", msg, sizeof msg, 20000));
    assert_true(wait_for("WATCHDOG=1", msg, sizeof msg, 5000));
    kill(judge, SIGSTOP);
    for (int i = 0; i < 500 && !is_stopped(judge); i++)
        sleep_ms(10);
    assert_true(is_stopped(judge));
    while (next_msg(msg, sizeof msg, 0)) /* sent before it stopped */
        ;
    /* 1.5 s: 15 cadences of 100 ms, nothing */
    uint64_t end = mono_ms() + 1500;
    while (mono_ms() < end)
        assert_false(next_msg(msg, sizeof msg, (int)(end - mono_ms())));
    kill(judge, SIGCONT);
    assert_true(wait_for("WATCHDOG=1", msg, sizeof msg, 5000));
    kill(judge, SIGTERM);
    assert_true(wait_for("STOPPING=1", msg, sizeof msg, 10000));
    assert_int_equal(wait_status(judge), 0);
}

/* docs/service.md, Stopping: SIGTERM gives STOPPING=1, the pass is
 * finished, the last checkpoint is written (checkpoints are configured and
 * none was due), exit 0. */
static void test_sigterm_stopping_checkpoint_exit_0(void **state)
{
    (void)state;
    char msg[512];
    pid_t judge = start_judge("");
    assert_true(wait_for("READY=1", msg, sizeof msg, 20000));
    SH("test -z \"$(ls %s/journal.dls.ckpt 2>/dev/null | grep '\\.dls$')\"", dir);
    kill(judge, SIGTERM);
    assert_true(wait_for("STOPPING=1", msg, sizeof msg, 10000));
    assert_int_equal(wait_status(judge), 0);
    SH("ls %s/journal.dls.ckpt | grep -q '^[0-9]*\\.dls$'", dir);
}

/* Without WATCHDOG_USEC the manager did not ask: READY=1 and STATUS=, never
 * WATCHDOG=1. */
static void test_no_watchdog_unless_asked(void **state)
{
    (void)state;
    char msg[512];
    pid_t judge = start_judge("");
    assert_true(wait_for("READY=1", msg, sizeof msg, 20000));
    int statuses = 0;
    while (statuses < 2) {
        assert_true(next_msg(msg, sizeof msg, 5000));
        assert_null(strstr(msg, "WATCHDOG=1"));
        if (status_pass(msg, NULL) >= 0)
            statuses++;
    }
    kill(judge, SIGTERM);
    assert_true(wait_for("STOPPING=1", msg, sizeof msg, 10000));
    assert_null(strstr(msg, "WATCHDOG=1"));
    assert_int_equal(wait_status(judge), 0);
}

/* docs/service.md, A bad configuration: missing, unreadable (a folder) or
 * invalid, the judge exits 78 (EX_CONFIG, RestartPreventExitStatus=78 in
 * the unit) with one line naming the file, and never says READY=1. */
static void test_bad_config_exits_78(void **state)
{
    (void)state;
    char msg[512];
    SH("mkdir %s/folder.json && printf '{\"party\": ' > %s/cut.json", dir, dir);
    const char *cases[][2] = {
        {"missing.json", "cannot read the configuration: No such file or directory"},
        {"folder.json", "cannot read the configuration: Is a directory"},
        {"cut.json", "line 1, column"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = run_sh("cd %s && NOTIFY_SOCKET=%s/notify %s judge --config %s "
                        "> out 2> err",
                        dir, dir, bin, cases[i][0]);
        assert_int_equal(rc, 78);
        SH("test \"$(wc -l < %s/err)\" -eq 1", dir);
        SH("grep -q '^daolease: %s: %s' %s/err", cases[i][0], cases[i][1], dir);
        assert_false(next_msg(msg, sizeof msg, 0));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ready_then_watchdog_each_pass, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stalled_judge_sends_no_watchdog, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_stopping_checkpoint_exit_0, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_watchdog_unless_asked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_config_exits_78, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
