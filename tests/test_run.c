/* Process tests of `daolease run` (cli.md `run`, holder.md "Running a
 * command under a lease", docs/holder.md): a missing holder medium is
 * refused unless creation was asked for (issue 12 item 13), the default
 * wait and --wait end in exit 75, and a killed `run` takes its command
 * down with it (the parent-death signal; issue 12 item 14). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "daolease/attrib.h"
#include "daolease/fact.h"
#include "daolease/mark.h"
#include "daolease/stream.h"

static char dir[256];
static const char *bin;

#define SH(...) assert_int_equal(run_sh(__VA_ARGS__), 0)

static bool exists(const char *name)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

/* Keys for the grantor and one agent, the agent's medium, a judge config
 * and run configs (one whose medium is missing). */
static int setup(void **state)
{
    (void)state;
    bin = getenv("DAOLEASE_BIN");
    if (!bin)
        bin = "daolease";
    snprintf(dir, sizeof dir, "/tmp/dls-run-XXXXXX");
    assert_non_null(mkdtemp(dir));
    SH("cd %s && for p in arbiter a1 a2; do %s keygen $p >> keyring; done", dir, bin);
    SH("cd %s && %s stream create a1.dls > /dev/null && %s stream create a2.dls > /dev/null",
       dir, bin, bin);
    SH("cd %s && printf '%%s' '{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", "
       "\"keyring\": \"keyring\", \"journal\": \"journal.dls\", \"media\": [\"a1.dls\", \"a2.dls\"], "
       "\"duration\": {\"s\": 1}, \"tolerance\": {\"ms\": 250}, \"cadence\": {\"ms\": 100}}'"
       " > judge.json", dir);
    const char *base = "\"party\": \"a1\", \"key\": \"a1.secret\", \"keyring\": \"keyring\", "
                       "\"grantor\": \"arbiter\", \"journal\": \"journal.dls\", "
                       "\"duration\": {\"s\": 1}";
    SH("cd %s && printf '%%s' '{%s, \"medium\": \"a1.dls\"}' > run.json", dir, base);
    SH("cd %s && printf '%%s' '{%s, \"medium\": \"typo.dls\"}' > typo.json", dir, base);
    SH("cd %s && sed 's/\"a1/\"a2/g' run.json > run2.json", dir);
    SH("cd %s && printf '%%s' '{%s, \"medium\": \"new.dls\", \"create_medium\": true}' "
       "> create.json", dir, base);
    SH("cd %s && printf '%%s' '{%s, \"medium\": \"new.dls\", \"create_medium\": \"yes\"}' "
       "> badcreate.json", dir, base);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (!getenv("DLS_KEEP"))
        run_sh("rm -rf %s", dir);
    return 0;
}

/* Starts `daolease judge` (with --create when this build's judge asks for
 * it to create a missing journal) and waits for its journal. */
static pid_t start_judge(void)
{
    const char *create =
        run_sh("%s judge --help 2>&1 | grep -q -- --create", bin) == 0 ? "--create" : "";
    pid_t judge = spawn("cd %s && exec %s judge --config judge.json %s > judge.log 2>&1", dir,
                        bin, create);
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

/* issue 12 item 13 (cli.md `run`): a holder medium path that does not exist
 * is refused — exit 1, a message naming the path and the way out, nothing
 * created — unless --create or "create_medium": true asks for it. Before
 * the fix `run` silently created typo.dls, a medium no judge reads. */
static void test_missing_medium_refused_unless_create(void **state)
{
    (void)state;
    SH("cd %s && %s stream create journal.dls > /dev/null", dir, bin);
    assert_int_equal(run_sh("cd %s && %s run --config typo.json --subject s --wait 1s -- true "
                            "2> typo.err", dir, bin),
                     1);
    assert_false(exists("typo.dls"));
    SH("grep -q 'typo.dls: the holder.s medium does not exist' %s/typo.err", dir);
    SH("grep -q -- '--create' %s/typo.err", dir);
    /* --create: the medium is made; no judge answers, so the wait ends: 75 */
    assert_int_equal(run_sh("cd %s && %s run --config typo.json --create --subject s --wait "
                            "300ms -- true 2> /dev/null", dir, bin),
                     75);
    assert_true(exists("typo.dls"));
    /* the config key does the same */
    assert_int_equal(run_sh("cd %s && %s run --config create.json --subject s --wait 300ms "
                            "-- true 2> /dev/null", dir, bin),
                     75);
    assert_true(exists("new.dls"));
    /* a wrong type is a usage error naming the key */
    assert_int_equal(run_sh("cd %s && %s run --config badcreate.json --subject s -- true "
                            "2> bad.err", dir, bin),
                     2);
    SH("grep -q create_medium %s/bad.err", dir);
    run_sh("rm -f %s/journal.dls %s/journal.dls.lock", dir, dir);
}

/* The command's state from /proc: 0 gone (or a zombie nobody reaped yet:
 * dead either way), 1 alive. */
static int alive(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')');
    return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

/* issue 12 item 14 (holder.md "Running a command under a lease"): a `run`
 * killed outright (SIGKILL: it can neither stop its command nor renew)
 * takes its command down through the parent-death signal, instead of
 * leaving it working on past a lease nobody renews. Before the fix the
 * command lived on (to its 60 s sleep). */
static void test_killed_run_takes_child_down(void **state)
{
    (void)state;
    pid_t judge = start_judge();
    pid_t run = spawn("cd %s && exec %s run --config run.json --subject job --wait 30s -- "
                      "sh -c 'echo $$ > child.pid; exec sleep 60'",
                      dir, bin);
    char path[512];
    snprintf(path, sizeof path, "%s/child.pid", dir);
    pid_t child = 0;
    for (int i = 0; i < 1000 && child <= 0; i++) {
        FILE *f = fopen(path, "r");
        if (f) {
            int v = 0;
            if (fscanf(f, "%d", &v) == 1)
                child = v;
            fclose(f);
        }
        if (child <= 0)
            sleep_ms(10);
    }
    assert_true(child > 0);
    assert_int_equal(alive(child), 1);
    kill(run, SIGKILL);
    assert_int_equal(wait_status(run), 128 + SIGKILL);
    int i = 0;
    while (alive(child) && i++ < 300)
        sleep_ms(10);
    int still = alive(child);
    if (still)
        kill(child, SIGKILL);
    kill(judge, SIGTERM);
    wait_status(judge);
    assert_int_equal(still, 0);
}

/* docs/holder.md "exit 75": with the default wait `run` waits for the
 * grantor's answer. The judge fixes a waiter's bound at its arrival — the
 * current holder's remaining term (duration + tolerance) — and refuses it
 * "unavailable" once that elapsed while the holder kept renewing; `run`
 * then gives up with 75, while the first command is still running. */
static void test_default_wait_gives_up_with_75(void **state)
{
    (void)state;
    pid_t judge = start_judge();
    pid_t first = spawn("cd %s && exec %s run --config run.json --subject busy --wait 30s -- "
                        "sh -c 'touch busy.started; sleep 5; touch busy.done'",
                        dir, bin);
    char path[512];
    snprintf(path, sizeof path, "%s/busy.started", dir);
    struct stat st;
    for (int i = 0; i < 1000 && stat(path, &st) != 0; i++)
        sleep_ms(10);
    assert_int_equal(stat(path, &st), 0);
    int rc = run_sh("cd %s && %s run --config run2.json --subject busy -- true 2> wait.err",
                    dir, bin);
    assert_false(exists("busy.done")); /* given up while the first still held it */
    assert_int_equal(rc, 75);
    SH("grep -q 'refused (unavailable)' %s/wait.err", dir);
    assert_int_equal(wait_status(first), 0);
    kill(judge, SIGTERM);
    wait_status(judge);
}

/* Appends `fact` (len bytes) to the journal, signed by the grantor. */
static void put_signed(dls_medium *j, const dls_secret *g, const uint8_t *fact, size_t len)
{
    static uint8_t env[DLS_JOURNAL_RECORD_MAX + 512];
    size_t elen;
    assert_int_equal(dls_envelope_seal(g, dls_medium_id(j), fact, len, env, sizeof env, &elen),
                     0);
    uint64_t pos;
    assert_int_equal(dls_medium_append(j, env, elen, &pos, NULL), 0);
}

/* judge.md rev 4 "Lost ledger", holder.md rev 4 Sizing; issue 12 item 6
 * (holder side): the grantor's journal is lost while `run` works under
 * lease L. A new journal at the same path starts above the floor L + 10
 * (first mark: restarted, dao.judge/floor, dao.judge/from) and re-grants
 * the subject to the same holder, unsolicited. The running `run` moves to
 * the new journal, takes up the re-grant — its --lease-file now names the
 * new id, which the command reads — and its command keeps running; with
 * no judge confirming the new lease's renewals it is then stopped at that
 * lease's bound. (The judge side — writing such a journal — is judge.md's;
 * here the test writes it with the library.) */
static void test_new_journal_regrant_keeps_run(void **state)
{
    (void)state;
    pid_t judge = start_judge();
    pid_t run = spawn("cd %s && exec %s run --config run.json --subject job6 --duration 2s "
                      "--wait 30s --lease-file lease.txt -- sh -c 'while :; do cat lease.txt "
                      ">> seen.txt; sleep 0.05; done' 2> regrant.err",
                      dir, bin);
    char path[512];
    snprintf(path, sizeof path, "%s/lease.txt", dir);
    unsigned long old = 0;
    for (int i = 0; i < 1000 && !old; i++) {
        FILE *f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%lu", &old) != 1)
                old = 0;
            fclose(f);
        }
        if (!old)
            sleep_ms(10);
    }
    assert_true(old > 0);
    sleep_ms(300); /* a renewal or two, confirmed */
    kill(judge, SIGKILL);
    wait_status(judge);
    SH("cd %s && rm -f journal.dls journal.dls.lock", dir);

    /* the owner's new journal */
    assert_true(sodium_init() >= 0);
    char p[512];
    dls_secret *g;
    snprintf(p, sizeof p, "%s/arbiter.secret", dir);
    assert_int_equal(dls_secret_load(&g, p, NULL), 0);
    dls_medium *a1;
    snprintf(p, sizeof p, "%s/a1.dls", dir);
    assert_int_equal(dls_medium_open(&a1, p, DLS_OPEN_READ, NULL, NULL), 0);
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, a1, 0), 0);
    dls_record rec;
    while (dls_cursor_next(c, &rec, NULL) == DLS_NEXT_OK)
        ;
    uint64_t from = dls_cursor_position(c);
    dls_medium *j;
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    snprintf(p, sizeof p, "%s/journal.dls.new", dir);
    unlink(p);
    assert_int_equal(dls_medium_create(&j, DLS_MEDIUM_FILE, p, &ms, NULL), 0);
    uint64_t floor = old + 10;
    dls_mark_pos dp;
    memcpy(dp.medium, dls_medium_id(a1), DLS_MEDIUM_ID_LEN);
    dp.position = from;
    dls_mark m = {
        .pass = 1, .now_ns = DLS_NS_PER_S, .basis = {(const uint8_t *)"b", 1},
        .tolerance_ns = 250 * DLS_NS_PER_MS, .cadence_ns = 100 * DLS_NS_PER_MS,
        .drained = &dp, .n_drained = 1, .restarted = true,
    };
    uint8_t buf[512];
    dls_mark_writer wr = {0};
    size_t len;
    assert_int_equal(dls_mark_encode_next(&m, &wr, buf, 400, &len), 1);
    assert_true(buf[0] >= 0x80 && buf[0] <= 0x8d && floor < 128);
    buf[0] += 2;
    buf[len++] = 0xaf;
    memcpy(buf + len, "dao.judge/floor", 15);
    len += 15;
    buf[len++] = (uint8_t)floor;
    buf[len++] = 0xae;
    memcpy(buf + len, "dao.judge/from", 14);
    len += 14;
    buf[len++] = 0x91;
    buf[len++] = 0x92;
    buf[len++] = 0xc4;
    buf[len++] = DLS_MEDIUM_ID_LEN;
    memcpy(buf + len, dls_medium_id(a1), DLS_MEDIUM_ID_LEN);
    len += DLS_MEDIUM_ID_LEN;
    assert_true(from < 128);
    buf[len++] = (uint8_t)from;
    put_signed(j, g, buf, len);
    static const uint8_t subj[] = {0xa4, 'j', 'o', 'b', '6'};
    dls_fact gf;
    dls_fact_grant(&gf, floor + 1, (dls_bytes){subj, sizeof subj},
                   (dls_bytes){(const uint8_t *)"a1", 2}, dls_duration_from_ns(2000000000ull),
                   dls_medium_id(a1));
    uint8_t fb[DLS_FACT_MAX];
    assert_int_equal(dls_fact_encode(&gf, fb, sizeof fb, &len), 0);
    put_signed(j, g, fb, len);
    dls_medium_del(j);
    /* the new journal appears at the journal's path in one step */
    SH("cd %s && mv journal.dls.new journal.dls", dir);
    dls_cursor_del(c);
    dls_medium_del(a1);
    dls_secret_del(g);

    int st = wait_status(run); /* stopped at the new lease's bound: no judge */
    assert_int_equal(st, 128 + SIGTERM);
    SH("grep -q 'the grantor.s journal was replaced' %s/regrant.err", dir);
    SH("grep -q 're-granted: lease %lu on \"job6\" (was %lu)' %s/regrant.err",
       (unsigned long)floor + 1, old, dir);
    /* the command read both tokens, the new one after the old */
    SH("grep -qx '%lu' %s/seen.txt && grep -qx '%lu' %s/seen.txt", old, dir,
       (unsigned long)floor + 1, dir);
    SH("test \"$(tail -n 1 %s/seen.txt)\" = '%lu'", dir, (unsigned long)floor + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_medium_refused_unless_create),
        cmocka_unit_test(test_killed_run_takes_child_down),
        cmocka_unit_test(test_default_wait_gives_up_with_75),
        cmocka_unit_test(test_new_journal_regrant_keeps_run),
    };
    return cmocka_run_group_tests_name("run", tests, setup, teardown);
}
