/* Tests for the operator commands `daolease status` and `daolease watch`
 * (issue 15 item 3) on real runs: a `daolease judge` process and `daolease
 * run` holders over stream files; and the one-line usage errors of every
 * subcommand (issue 12 item 13; cli.md: usage errors exit 2). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *bin(void)
{
    const char *b = getenv("DAOLEASE_BIN");
    return b ? b : "daolease";
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Runs a shell command; returns its exit status. */
static int sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strdup(buf);
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* A site: keys, keyring, journal, two agent media and their configs. */
typedef struct site {
    char dir[64];
    pid_t judge;
} site;

static pid_t spawn_sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    pid_t p = fork();
    assert_true(p >= 0);
    if (p == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return p;
}

static int setup(void **state)
{
    site *s = calloc(1, sizeof *s);
    strcpy(s->dir, "/tmp/dls-ops-XXXXXX");
    assert_non_null(mkdtemp(s->dir));
    const char *d = s->dir, *b = bin();
    assert_int_equal(sh("cd %s && for p in arbiter agent-1 agent-2; do '%s' keygen $p >> keyring || exit 1; done",
                        d, b), 0);
    assert_int_equal(sh("cd %s && '%s' stream create journal.dls >/dev/null && "
                        "'%s' stream create agent-1.dls >/dev/null && "
                        "'%s' stream create agent-2.dls >/dev/null", d, b, b, b), 0);
    assert_int_equal(sh("cd %s && printf '%%s' '{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", "
                        "\"keyring\": \"keyring\", \"journal\": \"journal.dls\", \"media\": "
                        "[\"agent-1.dls\", \"agent-2.dls\"], \"duration\": {\"s\": 2}}' > judge.json && "
                        "for a in agent-1 agent-2; do printf '{\"party\": \"%%s\", \"key\": \"%%s.secret\", "
                        "\"keyring\": \"keyring\", \"grantor\": \"arbiter\", \"journal\": \"journal.dls\", "
                        "\"medium\": \"%%s.dls\", \"duration\": {\"s\": 2}}' $a $a $a > $a.json; done", d), 0);
    s->judge = spawn_sh("exec '%s' judge --config %s/judge.json > %s/judge.out 2>&1", b, d, d);
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    site *s = *state;
    if (s->judge > 0) {
        kill(s->judge, SIGINT);
        waitpid(s->judge, NULL, 0);
    }
    sh("rm -rf %s", s->dir);
    free(s);
    return 0;
}

static json_t *status_json(site *s, const char *extra, size_t *lines)
{
    char out[128];
    snprintf(out, sizeof out, "%s/status.out", s->dir);
    assert_int_equal(sh("cd %s && '%s' status --journal journal.dls --media agent-1.dls agent-2.dls "
                        "%s --json > status.out", s->dir, bin(), extra), 0);
    char *text = slurp(out);
    *lines = count_lines(text);
    json_t *arr = json_array();
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        json_error_t e;
        json_t *v = json_loads(line, 0, &e);
        assert_non_null(v);
        json_array_append_new(arr, v);
    }
    free(text);
    return arr;
}

/* Issue 15 item 3: status lists the live lease of a running `daolease run`
 * (subject, holder, granted at, a renewal, due-by after the last renewal,
 * remaining within duration + tolerance), verified under the keyring; once
 * the command exits and the release lapses, nothing is live. */
static void test_status_on_a_real_run(void **state)
{
    site *s = *state;
    pid_t run = spawn_sh("cd %s && exec '%s' run --config agent-1.json --subject job/1 "
                         "--wait 10s -- sleep 2", s->dir, bin());
    json_t *st = NULL;
    size_t lines = 0;
    for (int i = 0; i < 100; i++) { /* until granted and renewed once */
        sleep_ms(100);
        if (st)
            json_decref(st);
        st = status_json(s, "--grantor arbiter --keyring keyring", &lines);
        if (lines == 2 && !json_is_null(json_object_get(json_array_get(st, 0), "last_renewal")))
            break;
    }
    assert_int_equal(lines, 2);
    json_t *l = json_array_get(st, 0), *sum = json_array_get(st, 1);
    assert_string_equal(json_string_value(json_object_get(l, "subject")), "job/1");
    assert_string_equal(json_string_value(json_object_get(l, "holder")), "agent-1");
    json_int_t granted = json_integer_value(json_object_get(l, "granted_at"));
    json_int_t renewed = json_integer_value(json_object_get(l, "last_renewal"));
    json_int_t due = json_integer_value(json_object_get(l, "due_by"));
    json_int_t rem = json_integer_value(json_object_get(l, "remaining_ns"));
    assert_true(renewed > granted);
    /* judge.md silence: last relevant observation + 2 s + 250 ms, strictly */
    assert_int_equal(due, renewed + 2000000000 + 250000000 + 1);
    assert_true(rem > 0 && rem <= 2250000001);
    assert_true(json_is_true(json_object_get(sum, "verified")));
    assert_int_equal(json_integer_value(json_object_get(sum, "live")), 1);
    json_decref(st);
    /* the table names the lease too */
    assert_int_equal(sh("cd %s && '%s' status --journal journal.dls --media agent-1.dls agent-2.dls"
                        " | grep -q '1 live lease at pass'", s->dir, bin()), 0);
    /* a medium path that holds '=' and exists as given is a path, not
     * PATH=PARTY (cli.md, --media; the rule audit uses, shared) */
    assert_int_equal(sh("cd %s && cp agent-1.dls 'agent=1.dls' && '%s' status --journal journal.dls"
                        " --media 'agent=1.dls' agent-2.dls | grep -q '1 live lease at pass'",
                        s->dir, bin()), 0);
    int ws;
    waitpid(run, &ws, 0);
    assert_int_equal(WEXITSTATUS(ws), 0);
    for (int i = 0; i < 50; i++) {
        sleep_ms(100);
        st = status_json(s, "", &lines);
        json_int_t live = json_integer_value(json_object_get(json_array_get(st, lines - 1), "live"));
        json_decref(st);
        if (live == 0)
            break;
    }
    assert_int_equal(lines, 1); /* the summary alone */
}

/* Issue 15 item 3: status with a keyring but the wrong grantor counts no
 * journal record (attribution.md: only the grantor's records count). */
static void test_status_counts_only_the_grantor(void **state)
{
    site *s = *state;
    assert_int_equal(sh("cd %s && '%s' run --config agent-2.json --subject job/2 --wait 10s -- true",
                        s->dir, bin()), 0);
    size_t lines;
    json_t *st = status_json(s, "--grantor agent-1 --keyring keyring", &lines);
    json_t *sum = json_array_get(st, lines - 1);
    assert_int_equal(json_integer_value(json_object_get(sum, "pass")), 0);
    assert_int_equal(json_integer_value(json_object_get(sum, "live")), 0);
    json_decref(st);
}

/* Issue 15 item 3: watch follows the journal as it is written — a grant,
 * then a lapse with cause release — and exits 0 on SIGINT. */
static void test_watch_follows_and_stops_on_sigint(void **state)
{
    site *s = *state;
    pid_t w = spawn_sh("cd %s && exec '%s' watch --journal journal.dls --grantor arbiter "
                       "--keyring keyring --json > watch.out", s->dir, bin());
    sleep_ms(300);
    assert_int_equal(sh("cd %s && '%s' run --config agent-2.json --subject job/3 --wait 10s -- true",
                        s->dir, bin()), 0);
    char path[128];
    snprintf(path, sizeof path, "%s/watch.out", s->dir);
    char *text = NULL;
    for (int i = 0; i < 50; i++) {
        sleep_ms(100);
        free(text);
        text = slurp(path);
        if (strstr(text, "\"lapsed\""))
            break;
    }
    kill(w, SIGINT);
    int ws;
    assert_int_equal(waitpid(w, &ws, 0), w);
    assert_true(WIFEXITED(ws));
    assert_int_equal(WEXITSTATUS(ws), 0);
    char *grant = strstr(text, "{\"event\": \"grant\"");
    char *lapse = strstr(text, "{\"event\": \"lapsed\"");
    assert_non_null(grant);
    assert_non_null(lapse);
    assert_true(lapse > grant);
    assert_non_null(strstr(grant, "\"subject\": \"job/3\", \"holder\": \"agent-2\""));
    assert_non_null(strstr(lapse, "\"cause\": \"release\""));
    free(text);
    /* --no-follow prints the history and stops at the end by itself */
    assert_int_equal(sh("cd %s && '%s' watch --journal journal.dls --no-follow | grep -c . | "
                        "grep -qx 2", s->dir, bin()), 0);
}

/* Issue 12 item 13: a usage error prints one line naming the problem on
 * stderr (help stays on --help) and exits 2, for every subcommand. */
static void test_usage_errors_are_one_line(void **state)
{
    site *s = *state;
    static const char *cases[][2] = {
        {"status", "--journal is required"},
        {"status --journal j --bogus", "unknown option --bogus"},
        {"watch", "--journal is required"},
        {"watch --journal", "option --journal needs a value"},
        {"watch --journal j --from x", "--from takes a position"},
        {"judge", "--config FILE is required"},
        {"judge --config", "option --config needs a value"},
        {"run --config c.json --subject s", "a command to run is required"},
        {"audit --journal j", "--grantor is required"},
        {"judge --bogus", "unknown option --bogus"},
        {"run --bogus", "unknown option --bogus"},
        {"run --subject s -- true", "--config is required"},
        {"dump", "PATH is missing"},
        {"append x --bogus", "unknown option --bogus"},
        {"keygen", "a party NAME is required"},
        {"stream", "create or seal is required"},
        {"fact --bogus", "expected 'encode' or 'decode'"},
        {"demo --bogus", "unknown option --bogus"},
        {"demo --agents x", "--agents takes a number"},
        {"demo --agents 2 --kill 2", "--kill must be below --agents"},
        {"bench nosuch", "unknown benchmark"},
        {"nosuch", "unknown command"},
        {"", "a command is required"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = sh("cd %s && '%s' %s > u.out 2> u.err", s->dir, bin(), cases[i][0]);
        char path[128];
        snprintf(path, sizeof path, "%s/u.err", s->dir);
        char *err = slurp(path);
        if (rc != 2 || count_lines(err) != 1 || !strstr(err, cases[i][1]))
            fail_msg("daolease %s: exit %d, stderr:\n%s(want one line with \"%s\")", cases[i][0],
                     rc, err, cases[i][1]);
        free(err);
        snprintf(path, sizeof path, "%s/u.out", s->dir);
        char *out = slurp(path);
        assert_string_equal(out, "");
        free(out);
    }
    /* help stays on --help: usage text on stdout, exit 0 */
    assert_int_equal(sh("'%s' status --help | grep -q '^usage: daolease status'", bin()), 0);
    assert_int_equal(sh("'%s' watch --help | grep -q '^usage: daolease watch'", bin()), 0);
}

/* Issue 15 item 4: the demo's "grants N" is the number of grants on its
 * journal, and no item is granted again after its holder released it (the
 * demo's agents release with commit only when the item is done, and its
 * owner's policy refuses finished items). */
static void test_demo_counts_and_finished_items(void **state)
{
    site *s = *state;
    assert_int_equal(sh("cd %s && '%s' demo --dir demo --items 8 --agents 3 > demo.out 2>&1",
                        s->dir, bin()), 0);
    assert_int_equal(sh("cd %s && '%s' watch --journal demo/journal.dls --no-follow --json "
                        "> watch.out", s->dir, bin()), 0);
    char path[128];
    snprintf(path, sizeof path, "%s/demo.out", s->dir);
    char *out = slurp(path);
    char *g = strstr(out, "grants ");
    assert_non_null(g);
    unsigned shown = (unsigned)strtoul(g + 7, NULL, 10);
    free(out);
    snprintf(path, sizeof path, "%s/watch.out", s->dir);
    char *text = slurp(path);
    unsigned grants = 0;
    char released[64][16];
    unsigned n_released = 0;
    json_t *subjects = json_object(); /* lease -> subject */
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        json_error_t e;
        json_t *v = json_loads(line, 0, &e);
        assert_non_null(v);
        const char *ev = json_string_value(json_object_get(v, "event"));
        const char *subject = json_string_value(json_object_get(v, "subject"));
        if (!strcmp(ev, "grant")) {
            grants++;
            for (unsigned k = 0; k < n_released; k++)
                if (!strcmp(released[k], subject))
                    fail_msg("%s granted again after its release", subject);
        } else if (!strcmp(ev, "lapsed") &&
                   !strcmp(json_string_value(json_object_get(v, "cause")), "release")) {
            assert_true(n_released < 64);
            snprintf(released[n_released++], sizeof released[0], "%s", subject);
        }
        json_decref(v);
    }
    json_decref(subjects);
    free(text);
    assert_int_equal(shown, grants);
    assert_int_equal(n_released, 8); /* every item done once, released with commit */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_status_on_a_real_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_counts_only_the_grantor, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch_follows_and_stops_on_sigint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage_errors_are_one_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_demo_counts_and_finished_items, setup, teardown),
    };
    return cmocka_run_group_tests_name("ops", tests, NULL, NULL);
}
