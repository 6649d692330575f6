/* Tests for the read-only HTTP endpoint (docs/observe.md): `judge --http`
 * on a real run (a judge process, `daolease run` holders, one killed),
 * `serve --manifest` on a demo run, the paths and query arguments it
 * accepts, bad requests answered 4xx or dropped with the judge unaffected,
 * `promtool check metrics` on a scrape, and the page in headless Chromium. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/observe/query.h"
#include "tests/support.h"

static const char *bin(void)
{
    const char *b = getenv("DAOLEASE_BIN");
    return b ? b : "daolease";
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    size_t got = fread(p, 1, (size_t)n, f);
    p[got] = 0;
    fclose(f);
    return p;
}

/* ---- a raw HTTP client --------------------------------------------------------------- */

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Sends `req` (n bytes), reads the answer to EOF: its status (0 when the
 * server closed without one, -1 when it could not connect); *body (may be
 * NULL) gets the whole answer. */
static int http_raw(int port, const char *req, size_t n, char **body)
{
    if (body)
        *body = NULL;
    int fd = connect_to(port);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off < n) {
        ssize_t k = send(fd, req + off, n - off, MSG_NOSIGNAL);
        if (k <= 0)
            break; /* the server may close early on an oversized request */
        off += (size_t)k;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (len + 4096 > cap)
            buf = realloc(buf, cap *= 2);
        ssize_t k = recv(fd, buf + len, cap - len - 1, 0);
        if (k <= 0)
            break;
        len += (size_t)k;
    }
    buf[len] = 0;
    close(fd);
    int status = 0;
    if (len > 12 && !strncmp(buf, "HTTP/1.", 7))
        status = atoi(buf + 9);
    if (body)
        *body = buf;
    else
        free(buf);
    return status;
}

static int http_get(int port, const char *path, char **body)
{
    char req[4096];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path);
    return http_raw(port, req, (size_t)n, body);
}

/* The body after the headers. */
static const char *payload(const char *answer)
{
    const char *p = answer ? strstr(answer, "\r\n\r\n") : NULL;
    return p ? p + 4 : "";
}

/* A metric's value in a /metrics body (the first sample whose name and
 * labels are `series`), or -1. */
static double metric(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (!strncmp(p, series, n) && p[n] == ' ')
            return atof(p + n + 1);
    }
    return -1;
}

/* The JSON lines of a /status.json body or `status --json` output. */
static json_t *lines_of(const char *text)
{
    json_t *arr = json_array();
    char *copy = strdup(text), *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_error_t e;
        json_t *v = json_loads(line, 0, &e);
        assert_non_null(v);
        json_array_append_new(arr, v);
    }
    free(copy);
    return arr;
}

static json_t *line_with(json_t *arr, const char *key)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) if (json_object_get(v, key)) return v;
    return NULL;
}

static size_t count_with(json_t *arr, const char *key)
{
    size_t i, n = 0;
    json_t *v;
    json_array_foreach(arr, i, v) n += json_object_get(v, key) != NULL;
    return n;
}

static bool have(const char *prog)
{
    return run_sh("command -v %s >/dev/null 2>&1", prog) == 0;
}

/* ---- a site: a judge with --http and two holders' configs ----------------------------- */

typedef struct site {
    char dir[64];
    int port;
    pid_t judge, runs[2];
} site;

static int setup(void **state)
{
    site *s = calloc(1, sizeof *s);
    strcpy(s->dir, "/tmp/dls-observe-XXXXXX");
    assert_non_null(mkdtemp(s->dir));
    const char *d = s->dir, *b = bin();
    assert_int_equal(run_sh("cd %s && for p in arbiter agent-1 agent-2; do '%s' keygen $p >> "
                            "keyring || exit 1; done", d, b), 0);
    assert_int_equal(run_sh("cd %s && '%s' stream create journal.dls >/dev/null && "
                            "'%s' stream create agent-1.dls >/dev/null && "
                            "'%s' stream create agent-2.dls >/dev/null", d, b, b, b), 0);
    assert_int_equal(
        run_sh("cd %s && printf '%%s' '{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", "
               "\"keyring\": \"keyring\", \"journal\": \"journal.dls\", \"media\": "
               "[\"agent-1.dls\", \"agent-2.dls\"], \"duration\": {\"s\": 2}}' > judge.json && "
               "for a in agent-1 agent-2; do printf '{\"party\": \"%%s\", \"key\": \"%%s.secret\", "
               "\"keyring\": \"keyring\", \"grantor\": \"arbiter\", \"journal\": \"journal.dls\", "
               "\"medium\": \"%%s.dls\", \"duration\": {\"s\": 2}}' $a $a $a > $a.json; done", d),
        0);
    s->port = free_port();
    s->judge = spawn("exec '%s' judge --config %s/judge.json --http 127.0.0.1:%d > %s/judge.out "
                     "2> %s/judge.err", b, d, s->port, d, d);
    int st = -1;
    for (int i = 0; i < 100 && st != 200; i++) {
        sleep_ms(50);
        st = http_get(s->port, "/healthz", NULL);
    }
    assert_int_equal(st, 200);
    *state = s;
    return 0;
}

static void stop(pid_t *p, int sig)
{
    if (*p > 0) {
        kill(*p, sig);
        waitpid(*p, NULL, 0);
        *p = 0;
    }
}

static int teardown(void **state)
{
    site *s = *state;
    stop(&s->runs[0], SIGKILL);
    stop(&s->runs[1], SIGKILL);
    stop(&s->judge, SIGINT);
    run_sh("rm -rf %s", s->dir);
    free(s);
    return 0;
}

static void start_runs(site *s)
{
    for (int i = 0; i < 2; i++)
        s->runs[i] = spawn("cd %s && exec '%s' run --config agent-%d.json --subject job/%d "
                           "--wait 10s -- sleep 60 > run%d.out 2>&1",
                           s->dir, bin(), i + 1, i + 1, i + 1);
}

/* /status.json until it lists n leases (each renewed once); its lines. */
static json_t *wait_leases(site *s, size_t n)
{
    for (int i = 0; i < 200; i++) {
        char *a = NULL;
        if (http_get(s->port, "/status.json", &a) == 200) {
            json_t *l = lines_of(payload(a));
            free(a);
            size_t renewed = 0, k;
            json_t *v;
            json_array_foreach(l, k, v) renewed +=
                json_object_get(v, "lease") && json_integer_value(json_object_get(v, "seq")) > 0;
            if (renewed == n)
                return l;
            json_decref(l);
        } else {
            free(a);
        }
        sleep_ms(50);
    }
    fail_msg("the endpoint never listed %zu renewed leases", n);
    return NULL;
}

/* The lease id of subject job/N in a status.json. */
static json_int_t lease_of(json_t *lines, const char *subject)
{
    size_t i;
    json_t *v;
    json_array_foreach(lines, i, v) {
        json_t *sub = json_object_get(v, "subject");
        if (json_is_string(sub) && !strcmp(json_string_value(sub), subject))
            return json_integer_value(json_object_get(v, "lease"));
    }
    return 0;
}

/* Waits for /status.json's recent events to hold a lapse of `lease`;
 * returns its cause (a static string) or NULL. */
static const char *wait_lapse(site *s, json_int_t lease, double *seen_unix)
{
    static char cause[32];
    for (int i = 0; i < 300; i++) {
        char *a = NULL;
        if (http_get(s->port, "/status.json?limit=1", &a) == 200) {
            json_t *l = lines_of(payload(a));
            json_t *ev = json_object_get(line_with(l, "observe"), "events");
            size_t k;
            json_t *e;
            json_array_foreach(ev, k, e) {
                if (!strcmp(json_string_value(json_object_get(e, "kind")), "lapse") &&
                    json_integer_value(json_object_get(e, "lease")) == lease) {
                    snprintf(cause, sizeof cause, "%s",
                             json_string_value(json_object_get(e, "cause")));
                    struct timespec ts;
                    clock_gettime(CLOCK_REALTIME, &ts);
                    if (seen_unix)
                        *seen_unix = (double)ts.tv_sec + ts.tv_nsec / 1e9;
                    json_decref(l);
                    free(a);
                    return cause;
                }
            }
            json_decref(l);
        }
        free(a);
        sleep_ms(20);
    }
    return NULL;
}

/* ---- paths and query arguments (query.c) --------------------------------------------- */

/* docs/observe.md, Requests: the served paths route; bad paths are 400 (not
 * UTF-8, control bytes, "." / ".." segments, a backslash, too long) or 404
 * (not served); query arguments are checked one by one. */
static void test_routes_and_query(void **state)
{
    (void)state;
    obs_route r;
    const char *why;
    assert_int_equal(obs_route_of("/", &r, &why), 0);
    assert_int_equal(r, OBS_ROUTE_PAGE);
    assert_int_equal(obs_route_of("/metrics", &r, &why), 0);
    assert_int_equal(r, OBS_ROUTE_METRICS);
    assert_int_equal(obs_route_of("/status.json", &r, &why), 0);
    assert_int_equal(r, OBS_ROUTE_STATUS);
    assert_int_equal(obs_route_of("/app.js", &r, &why), 0);
    assert_int_equal(r, OBS_ROUTE_SCRIPT);
    const char *bad[] = {"/../etc/passwd", "/a/../metrics", "/.", "/./metrics", "/..",
                         "/\xff", "/\xc0\xaf", "/\xed\xa0\x80", "/a\x01", "/a\\b", "",
                         "metrics"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(obs_route_of(bad[i], &r, &why), 400);
    char longp[OBS_PATH_MAX + 8];
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = 0;
    assert_int_equal(obs_route_of(longp, &r, &why), 400);
    assert_int_equal(obs_route_of("/etc/passwd", &r, &why), 404);
    assert_int_equal(obs_route_of("/metrics/", &r, &why), 404);
    assert_int_equal(obs_route_of("/..a", &r, &why), 404); /* not a dot segment */
    assert_int_equal(obs_route_of("/caf\xc3\xa9", &r, &why), 404);

    obs_query q;
    obs_query_init(&q);
    assert_int_equal(obs_query_set(&q, "limit", "50", &why), 0);
    assert_int_equal(q.limit, 50);
    assert_int_equal(obs_query_set(&q, "offset", "100", &why), 0);
    assert_int_equal(q.offset, 100);
    assert_int_equal(obs_query_set(&q, "q", "job/\xc3\xa9", &why), 0);
    assert_string_equal(q.filter, "job/\xc3\xa9");
    const char *badv[][2] = {{"limit", "0"}, {"limit", "100001"}, {"limit", "-1"},
                             {"limit", "1e3"}, {"limit", ""}, {"limit", NULL},
                             {"offset", "99999999999999999999"}, {"offset", "+1"},
                             {"q", "\xff"}, {"q", "a\nb"}, {"sort", "x"}, {NULL, "x"}};
    for (size_t i = 0; i < sizeof badv / sizeof badv[0]; i++)
        assert_int_equal(obs_query_set(&q, badv[i][0], badv[i][1], &why), 400);
    char longq[OBS_FILTER_MAX + 2];
    memset(longq, 'x', sizeof longq - 1);
    longq[sizeof longq - 1] = 0;
    assert_int_equal(obs_query_set(&q, "q", longq, &why), 400);
    obs_query_init(&q);
    assert_int_equal(obs_query_set(&q, "q", "gent-2", &why), 0);
    assert_true(obs_query_match(&q, "\"job/1\"", 7, (const uint8_t *)"agent-2", 7, 5));
    assert_false(obs_query_match(&q, "\"job/1\"", 7, (const uint8_t *)"agent-1", 7, 5));
    assert_int_equal(obs_query_set(&q, "q", "42", &why), 0);
    assert_true(obs_query_match(&q, "\"job/1\"", 7, (const uint8_t *)"agent-1", 7, 142));
}

/* ---- the live endpoint ------------------------------------------------------------------ */

static void promtool_check(const char *dir, const char *metrics)
{
    if (!have("promtool")) {
        print_message("SKIPPED promtool check: promtool is not installed (Debian prometheus; "
                      "scripts/deps.sh installs it)\n");
        return;
    }
    char path[128];
    snprintf(path, sizeof path, "%s/metrics.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(metrics, f);
    fclose(f);
    assert_int_equal(run_sh("promtool check metrics < %s", path), 0);
}

/* docs/observe.md, /status.json and /metrics: the live judge's endpoint
 * lists the leases `status --json` lists from the files (same lines,
 * bar the readings taken at another pass); /metrics passes promtool; a
 * holder killed with SIGKILL has its lease lapse with cause silence, and
 * the counters say so (grants 2, lapses{silence} 1, renewals counted). */
static void test_live_endpoint(void **state)
{
    site *s = *state;
    start_runs(s);
    json_t *live = wait_leases(s, 2);
    assert_int_equal(count_with(live, "lease"), 2);
    json_t *sum = line_with(live, "summary");
    assert_int_equal(json_integer_value(json_object_get(sum, "live")), 2);
    assert_true(json_is_true(json_object_get(line_with(live, "observe"), "alive")));
    /* the same leases as `status --json` on the files */
    assert_int_equal(run_sh("cd %s && '%s' status --journal journal.dls --media agent-1.dls "
                            "agent-2.dls --grantor arbiter --keyring keyring --json > st.out",
                            s->dir, bin()), 0);
    char path[128];
    snprintf(path, sizeof path, "%s/st.out", s->dir);
    char *st_text = slurp(path);
    json_t *st = lines_of(st_text);
    free(st_text);
    for (int i = 1; i <= 2; i++) {
        char subj[16];
        snprintf(subj, sizeof subj, "job/%d", i);
        assert_true(lease_of(live, subj) > 0);
        assert_int_equal(lease_of(live, subj), lease_of(st, subj));
    }
    /* the same keys in the same order on each lease line */
    json_t *a = json_array_get(live, 0), *b = json_array_get(st, 0);
    const char *k1, *k2;
    void *i1 = json_object_iter(a), *i2 = json_object_iter(b);
    for (; i1 && i2; i1 = json_object_iter_next(a, i1), i2 = json_object_iter_next(b, i2)) {
        k1 = json_object_iter_key(i1);
        k2 = json_object_iter_key(i2);
        assert_string_equal(k1, k2);
    }
    assert_null(i1);
    assert_null(i2);
    json_t *victim_lines = live;
    json_int_t victim = lease_of(victim_lines, "job/1");
    json_decref(st);

    char *m = NULL;
    assert_int_equal(http_get(s->port, "/metrics", &m), 200);
    assert_non_null(strstr(m, "Content-Type: text/plain; version=0.0.4"));
    promtool_check(s->dir, payload(m));
    assert_true(metric(payload(m), "daolease_judge_passes_total") > 0);
    assert_true(metric(payload(m), "daolease_judge_renewals_total") >= 2);
    assert_int_equal((int)metric(payload(m), "daolease_judge_grants_total"), 2);
    assert_int_equal((int)metric(payload(m), "daolease_judge_live_leases"), 2);
    free(m);

    stop(&s->runs[0], SIGKILL); /* agent-1 holds job/1 */
    const char *cause = wait_lapse(s, victim, NULL);
    assert_non_null(cause);
    assert_string_equal(cause, "silence");
    assert_int_equal(http_get(s->port, "/metrics", &m), 200);
    assert_int_equal((int)metric(payload(m), "daolease_judge_lapses_total{cause=\"silence\"}"), 1);
    assert_int_equal((int)metric(payload(m), "daolease_judge_live_leases"), 1);
    promtool_check(s->dir, payload(m));
    free(m);
    /* HEAD: the headers alone */
    char *h = NULL;
    const char head[] = "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    assert_int_equal(http_raw(s->port, head, sizeof head - 1, &h), 200);
    assert_string_equal(payload(h), "");
    free(h);
    json_decref(live);
}

/* ---- bad input --------------------------------------------------------------------------- */

/* docs/observe.md, Security: methods other than GET/HEAD are 405 with
 * Allow; bad paths 400, unknown ones 404; bad query arguments 400; a body
 * 413; an oversized request refused or dropped; slowloris connections
 * dropped after the idle timeout while others are served; the judge keeps
 * passing and its lease stays renewed throughout. */
static void test_bad_requests(void **state)
{
    site *s = *state;
    start_runs(s);
    json_t *l = wait_leases(s, 2);
    json_decref(l);
    char *m = NULL;
    assert_int_equal(http_get(s->port, "/metrics", &m), 200);
    double passes0 = metric(payload(m), "daolease_judge_passes_total");
    free(m);

    const char *methods[] = {"POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT"};
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        char req[256], *a = NULL;
        int n = snprintf(req, sizeof req, "%s /metrics HTTP/1.1\r\nHost: x\r\nConnection: "
                         "close\r\nContent-Length: 0\r\n\r\n", methods[i]);
        int st = http_raw(s->port, req, (size_t)n, &a);
        if (strcmp(methods[i], "CONNECT")) { /* CONNECT's target is no path: 400 or 405 */
            assert_int_equal(st, 405);
            assert_non_null(strstr(a, "Allow: GET, HEAD"));
        } else {
            assert_true(st == 405 || st == 400 || st == 0);
        }
        free(a);
    }
    struct { const char *path; int want; } paths[] = {
        {"/nope", 404}, {"/../../etc/passwd", 400}, {"/%2e%2e/etc/passwd", 400},
        {"/status.json/..", 400}, {"/%ff%fe", 400}, {"/metrics%00.txt", 400},
        {"/status.json?q=a%00b", 400}, {"/%c0%ae%c0%ae/", 400},
        {"/status.json?limit=abc", 400}, {"/status.json?limit=0", 400},
        {"/status.json?q=%ff", 400}, {"/status.json?x=1", 400}, {"/metrics?q=a", 400},
        {"/status.json?limit=1&offset=1", 200}, {"/status.json?q=job%2F2", 200},
    };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        int st = http_get(s->port, paths[i].path, NULL);
        if (st != paths[i].want)
            fail_msg("GET %s: %d, expected %d", paths[i].path, st, paths[i].want);
    }
    /* a non-UTF-8 byte sent raw in the request line */
    const char raw[] = "GET /\xff\xfe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    int st = http_raw(s->port, raw, sizeof raw - 1, NULL);
    assert_true(st == 400 || st == 0);
    /* the filter selects: job/2 only */
    char *a = NULL;
    assert_int_equal(http_get(s->port, "/status.json?q=job%2F2", &a), 200);
    json_t *f = lines_of(payload(a));
    assert_int_equal(count_with(f, "lease"), 1);
    assert_int_equal(json_integer_value(json_object_get(line_with(f, "observe"), "matched")), 1);
    json_decref(f);
    free(a);
    /* a GET with a body */
    const char body[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                        "Content-Length: 5\r\n\r\nhello";
    assert_int_equal(http_raw(s->port, body, sizeof body - 1, NULL), 413);
    /* oversized: 1 MB of headers, past the per-connection memory bound */
    size_t big = 1 << 20;
    char *huge = malloc(big + 256);
    int n = snprintf(huge, 256, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ");
    memset(huge + n, 'a', big);
    memcpy(huge + n + big, "\r\n\r\n", 4);
    st = http_raw(s->port, huge, (size_t)n + big + 4, NULL);
    assert_true(st == 0 || (st >= 400 && st < 500));
    /* an oversized URL */
    memcpy(huge, "GET /", 5);
    memset(huge + 5, 'a', 64 * 1024);
    memcpy(huge + 5 + 64 * 1024, " HTTP/1.1\r\nHost: x\r\n\r\n", 22);
    st = http_raw(s->port, huge, 5 + 64 * 1024 + 22, NULL);
    assert_true(st == 0 || (st >= 400 && st < 500));
    free(huge);

    /* slowloris: half a request each, then silence */
    int slow[8];
    uint64_t t0 = mono_ms();
    for (int i = 0; i < 8; i++) {
        slow[i] = connect_to(s->port);
        assert_true(slow[i] >= 0);
        const char part[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
        assert_int_equal(send(slow[i], part, sizeof part - 1, MSG_NOSIGNAL), sizeof part - 1);
    }
    /* others are served meanwhile */
    for (int i = 0; i < 5; i++) {
        assert_int_equal(http_get(s->port, "/metrics", NULL), 200);
        sleep_ms(200);
    }
    /* each slow one is closed by the server after the idle timeout (10 s) */
    for (int i = 0; i < 8; i++) {
        struct timeval tv = {20, 0};
        setsockopt(slow[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        char c;
        ssize_t k = recv(slow[i], &c, 1, 0);
        assert_true(k <= 0 || c == 'H'); /* closed (or a 4xx answer) */
        close(slow[i]);
    }
    uint64_t waited = mono_ms() - t0;
    assert_true(waited >= 9000 && waited < 25000);
    /* the judge was unaffected: passes went on, both leases renewed, live */
    l = wait_leases(s, 2);
    assert_int_equal(json_integer_value(json_object_get(line_with(l, "summary"), "live")), 2);
    assert_true(json_is_true(json_object_get(line_with(l, "observe"), "alive")));
    json_decref(l);
    assert_int_equal(http_get(s->port, "/metrics", &m), 200);
    assert_true(metric(payload(m), "daolease_judge_passes_total") > passes0 + 50);
    assert_int_equal((int)metric(payload(m), "daolease_judge_lapses_total{cause=\"silence\"}"), 0);
    free(m);
}

/* ---- the page in a real browser ----------------------------------------------------------- */

static const char chromium_flags[] =
    "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
    "--disable-background-networking --disable-component-update --disable-sync "
    "--disable-dev-shm-usage";

/* docs/observe.md, The page: headless Chromium (--dump-dom) renders the
 * page listing the two holders' leases from /status.json; then, driven in
 * real time over the DevTools pipe (observe_browser.py), the page polls
 * while agent-1 is killed and shows its lease lapsed (silence), its row
 * gone, within one poll (1 s) of the judge's pass; a screenshot of that
 * page is kept (--screenshot too). */
static void test_browser(void **state)
{
    site *s = *state;
    if (!have("chromium")) {
        print_message("SKIPPED browser test: chromium is not installed (Debian chromium; "
                      "scripts/deps.sh installs it)\n");
        skip();
    }
    start_runs(s);
    json_t *l = wait_leases(s, 2);
    json_int_t victim = lease_of(l, "job/1"), other = lease_of(l, "job/2");
    json_decref(l);
    const char *d = s->dir;
    /* 1. --dump-dom: the page as rendered lists both leases */
    assert_int_equal(run_sh("mkdir -p %s/chr && exec chromium %s --user-data-dir=%s/chr "
                            "--virtual-time-budget=3000 --dump-dom http://127.0.0.1:%d/ > "
                            "%s/dom.html 2> %s/chromium.err", d, chromium_flags, d, s->port, d, d),
                     0);
    char path[160];
    snprintf(path, sizeof path, "%s/dom.html", d);
    char *dom = slurp(path);
    char mark[96];
    json_int_t both[2] = {victim, other};
    for (int i = 0; i < 2; i++) {
        snprintf(mark, sizeof mark, "<tr data-lease=\"%" JSON_INTEGER_FORMAT "\"", both[i]);
        if (!strstr(dom, mark))
            fail_msg("--dump-dom: the page does not list lease %" JSON_INTEGER_FORMAT
                     ":\n%.3000s", both[i], dom);
    }
    assert_non_null(strstr(dom, "<td>job/1</td><td>agent-1</td>"));
    assert_non_null(strstr(dom, "<td>job/2</td><td>agent-2</td>"));
    assert_non_null(strstr(dom, "judge alive"));
    /* docs/observe.md, The page: each row's last confirmed renewal, "#seq,
       X s ago" once the judge counted one, "none yet" before */
    size_t confirmed = 0;
    static const char cell[] = "<td class=\"num\">";
    for (const char *p = dom; (p = strstr(p, cell)); p++) {
        const char *v = p + sizeof cell - 1, *ago = strstr(v, " s ago</td>");
        confirmed += !strncmp(v, "none yet</td>", 13) ||
                     (v[0] == '#' && ago && ago < strstr(v, "</tr>"));
    }
    if (confirmed < 2)
        fail_msg("--dump-dom: %zu rows show their last confirmed renewal:\n%.3000s", confirmed,
                 strstr(dom, "<tbody") ? strstr(dom, "<tbody") : dom);
    free(dom);
    /* 2. --screenshot, as the command line takes it */
    const char *build = getenv("DLS_BUILD_ROOT");
    char shot[512];
    snprintf(shot, sizeof shot, "%s/observe-page-cli.png", build ? build : d);
    assert_int_equal(run_sh("exec chromium %s --user-data-dir=%s/chr --hide-scrollbars "
                            "--window-size=1280,860 --virtual-time-budget=3000 --screenshot=%s "
                            "http://127.0.0.1:%d/ > /dev/null 2>> %s/chromium.err",
                            chromium_flags, d, shot, s->port, d), 0);
    struct stat st;
    assert_int_equal(stat(shot, &st), 0);
    assert_true(st.st_size > 10000);
    /* 3. real time: agent-1 killed while the page polls */
    char ready_js[256], until_js[512], py[512], ready[160], out[160];
    snprintf(ready_js, sizeof ready_js,
             "!!document.querySelector('tr[data-lease=\"%" JSON_INTEGER_FORMAT "\"]') && "
             "!!document.querySelector('tr[data-lease=\"%" JSON_INTEGER_FORMAT "\"]')",
             victim, other);
    snprintf(until_js, sizeof until_js,
             "(function(){var e=document.querySelector('li.event.lapse.silence[data-lease=\"%"
             JSON_INTEGER_FORMAT "\"]');return e&&!document.querySelector('tr[data-lease=\"%"
             JSON_INTEGER_FORMAT "\"]')?{shown:+e.dataset.shownUnix,at:+e.dataset.atUnix,"
             "polls:+document.body.dataset.polls}:null})()", victim, victim);
    snprintf(py, sizeof py, "%s/tests/observe_browser.py",
             getenv("DLS_SOURCE_ROOT") ? getenv("DLS_SOURCE_ROOT") : "..");
    snprintf(ready, sizeof ready, "%s/ready", d);
    snprintf(out, sizeof out, "%s/browser.json", d);
    snprintf(shot, sizeof shot, "%s/observe-page.png", build ? build : d);
    char js[2][160];
    const char *scripts[2] = {ready_js, until_js};
    for (int i = 0; i < 2; i++) {
        snprintf(js[i], sizeof js[i], "%s/%s.js", d, i ? "until" : "ready");
        FILE *f = fopen(js[i], "w");
        assert_non_null(f);
        fputs(scripts[i], f);
        fclose(f);
    }
    pid_t drv = spawn("exec python3 '%s' http://127.0.0.1:%d/ @%s %s @%s %s %s 2> %s/driver.err",
                      py, s->port, js[0], ready, js[1], out, shot, d);
    bool up = false;
    for (int i = 0; i < 1800 && !up; i++) { /* Chromium starts slowly on a loaded machine */
        sleep_ms(50);
        up = access(ready, F_OK) == 0;
    }
    if (!up) {
        snprintf(path, sizeof path, "%s/driver.err", d);
        char *e = slurp(path);
        fail_msg("observe_browser.py never saw both leases: %s", e);
    }
    stop(&s->runs[0], SIGKILL);
    double seen = 0;
    assert_non_null(wait_lapse(s, victim, &seen));
    int rc = wait_status(drv);
    if (rc) {
        snprintf(path, sizeof path, "%s/driver.err", d);
        char *e = slurp(path);
        fail_msg("observe_browser.py: exit %d: %s", rc, e);
    }
    char *res = slurp(out);
    json_error_t je;
    json_t *r = json_loads(res, 0, &je);
    assert_non_null(r);
    json_t *v = json_object_get(r, "value");
    double shown = json_number_value(json_object_get(v, "shown"));
    double at = json_number_value(json_object_get(v, "at"));
    assert_true(shown > 0 && at > 0);
    print_message("browser: lease %" JSON_INTEGER_FORMAT " lapsed (silence) at the judge's "
                  "pass %.3f; the endpoint had it by %.3f; the page (poll %d) showed it at "
                  "%.3f: %.3f s after the pass\n", victim, at, seen,
                  (int)json_number_value(json_object_get(v, "polls")), shown, shown - at);
    /* within one poll (1 s) of the pass, plus the ledger's freshness bound
     * (250 ms) and 0.5 s for a loaded machine */
    assert_true(shown - at <= 1.0 + 0.25 + 0.5);
    const char *final_dom = json_string_value(json_object_get(r, "dom"));
    snprintf(mark, sizeof mark, "<tr data-lease=\"%" JSON_INTEGER_FORMAT "\"", other);
    assert_non_null(strstr(final_dom, mark));
    json_decref(r);
    free(res);
    assert_int_equal(stat(shot, &st), 0);
    assert_true(st.st_size > 10000);
    print_message("browser: screenshots %s and %s/observe-page-cli.png\n", shot,
                  build ? build : d);
}

/* ---- serve: a demo run from its files ---------------------------------------------------- */

/* docs/observe.md, serve: `serve --manifest` on a finished demo run serves
 * the lines `status --json` prints (byte for byte, the observe line
 * aside), and /metrics whose grants, refusals and lapses equal the audit's
 * counts and whose live count equals status's; promtool accepts it. */
static void test_serve_demo(void **state)
{
    site *s = *state;
    const char *d = s->dir, *b = bin();
    assert_int_equal(run_sh("'%s' demo --dir %s/demo --agents 3 --items 6 --kill 1 > %s/demo.out "
                            "2>&1", b, d, d), 0);
    int port = free_port();
    pid_t srv = spawn("exec '%s' serve --manifest %s/demo/manifest.json --http 127.0.0.1:%d "
                      "2> %s/serve.err", b, d, port, d);
    int st = -1;
    for (int i = 0; i < 100 && st != 200; i++) {
        sleep_ms(50);
        st = http_get(port, "/healthz", NULL);
    }
    assert_int_equal(st, 200);
    char *a = NULL, *m = NULL;
    assert_int_equal(http_get(port, "/status.json", &a), 200);
    assert_int_equal(http_get(port, "/metrics", &m), 200);
    /* byte for byte: the status lines, then one observe line */
    assert_int_equal(run_sh("cd %s/demo && '%s' status --journal journal.dls --media "
                            "agent-1.dls agent-2.dls agent-3.dls --grantor arbiter --keyring "
                            "keyring --json > %s/st.out", d, b, d), 0);
    char path[160];
    snprintf(path, sizeof path, "%s/st.out", d);
    char *want = slurp(path);
    const char *got = payload(a);
    assert_true(strlen(got) > strlen(want));
    assert_memory_equal(got, want, strlen(want));
    assert_non_null(strstr(got + strlen(want), "{\"observe\": true, \"source\": \"files\""));
    json_t *lines = lines_of(got);
    json_t *obs = line_with(lines, "observe");
    assert_true(json_array_size(json_object_get(obs, "events")) >= 6);
    /* the audit's counts */
    assert_int_equal(run_sh("cd %s/demo && '%s' audit --journal journal.dls --media agent-1.dls "
                            "agent-2.dls agent-3.dls --grantor arbiter --keyring keyring --json "
                            "> %s/audit.out", d, b, d), 0);
    snprintf(path, sizeof path, "%s/audit.out", d);
    char *au = slurp(path);
    json_t *al = lines_of(au);
    json_t *rep = json_object_get(line_with(al, "summary"), "reports");
    assert_non_null(rep);
    const char *mt = payload(m);
    promtool_check(d, mt);
    assert_int_equal((json_int_t)metric(mt, "daolease_judge_grants_total"),
                     json_integer_value(json_object_get(rep, "grants")));
    assert_int_equal((json_int_t)metric(mt, "daolease_judge_refusals_total"),
                     json_integer_value(json_object_get(rep, "refusals")));
    double lapsed = 0;
    const char *causes[] = {"release", "cap", "policy", "silence"};
    for (int i = 0; i < 4; i++) {
        char series[96];
        snprintf(series, sizeof series, "daolease_judge_lapses_total{cause=\"%s\"}", causes[i]);
        lapsed += metric(mt, series);
    }
    assert_int_equal((json_int_t)lapsed, json_integer_value(json_object_get(rep, "lapsed")));
    /* the demo killed one agent: at least one lapse by silence */
    assert_true(metric(mt, "daolease_judge_lapses_total{cause=\"silence\"}") >= 1);
    json_t *sum = line_with(lines, "summary");
    assert_int_equal((json_int_t)metric(mt, "daolease_judge_live_leases"),
                     json_integer_value(json_object_get(sum, "live")));
    assert_int_equal((json_int_t)metric(mt, "daolease_judge_pass"),
                     json_integer_value(json_object_get(sum, "pass")));
    /* read-only: POST is refused, the files unchanged */
    const char post[] = "POST /status.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                        "Content-Length: 0\r\n\r\n";
    assert_int_equal(http_raw(port, post, sizeof post - 1, NULL), 405);
    json_decref(al);
    json_decref(lines);
    free(au);
    free(want);
    free(a);
    free(m);
    kill(srv, SIGINT);
    assert_int_equal(wait_status(srv), 0);
}

/* A non-loopback address needs "http_public" (docs/observe.md, Security). */
/* docs/observe.md, metrics (and docs/standby.md): a standby judge serves
 * the same endpoint; its /metrics says it follows and how far behind the
 * journal it is, and that it took over once its judge was killed. */
static void test_standby_metrics(void **state)
{
    site *s = *state;
    int port = free_port();
    pid_t standby = spawn("exec '%s' judge --standby --config %s/judge.json --http 127.0.0.1:%d "
                          "> %s/standby.out 2> %s/standby.err", bin(), s->dir, port, s->dir,
                          s->dir);
    char *m = NULL;
    int st = -1;
    for (int i = 0; i < 100 && st != 200; i++) {
        sleep_ms(50);
        free(m);
        m = NULL;
        st = http_get(port, "/metrics", &m);
        if (st == 200 && !strstr(payload(m), "daolease_standby_following"))
            st = -1; /* published before its first step */
    }
    assert_int_equal(st, 200);
    assert_int_equal((int)metric(payload(m), "daolease_standby_following"), 1);
    assert_true(metric(payload(m), "daolease_standby_behind_records") >= 0);
    promtool_check(s->dir, payload(m));
    free(m);
    m = NULL;
    /* the active judge has no standby series */
    assert_int_equal(http_get(s->port, "/metrics", &m), 200);
    assert_null(strstr(payload(m), "daolease_standby_"));
    free(m);
    m = NULL;
    stop(&s->judge, SIGKILL);
    double following = 1;
    for (int i = 0; i < 200 && following != 0; i++) {
        sleep_ms(50);
        free(m);
        m = NULL;
        if (http_get(port, "/metrics", &m) == 200)
            following = metric(payload(m), "daolease_standby_following");
    }
    assert_true(following == 0);
    promtool_check(s->dir, payload(m));
    free(m);
    stop(&standby, SIGINT);
}

/* docs/observe.md, Security: a non-loopback --http is refused unless the
 * configuration says "http_public": true, and then served with a warning;
 * `serve --config` takes the judge's configuration (its journal, media and
 * "http" key) and serves the files read-only. */
static void test_loopback_only(void **state)
{
    site *s = *state;
    assert_int_equal(run_sh("cd %s && '%s' serve --journal journal.dls --media agent-1.dls "
                            "--http 0.0.0.0:0 2> pub.err", s->dir, bin()), 1);
    char path[128];
    snprintf(path, sizeof path, "%s/pub.err", s->dir);
    char *e = slurp(path);
    assert_non_null(strstr(e, "not a loopback address"));
    free(e);
    assert_int_equal(run_sh("cd %s && '%s' serve --journal journal.dls --http nowhere "
                            "2> /dev/null", s->dir, bin()), 1);
    int port = free_port();
    assert_int_equal(run_sh("cd %s && sed 's/}$/, \"http\": \"0.0.0.0:%d\", \"http_public\": "
                            "true}/' judge.json > pub.json", s->dir, port), 0);
    pid_t srv = spawn("cd %s && exec '%s' serve --config pub.json 2> pub.err", s->dir, bin());
    int st = -1;
    for (int i = 0; i < 100 && st != 200; i++) {
        sleep_ms(50);
        st = http_get(port, "/healthz", NULL);
    }
    assert_int_equal(st, 200);
    char *a = NULL;
    assert_int_equal(http_get(port, "/status.json", &a), 200);
    assert_non_null(strstr(payload(a), "{\"observe\": true, \"source\": \"files\""));
    free(a);
    stop(&srv, SIGINT);
    e = slurp(path);
    if (!strstr(e, "warning: --http 0.0.0.0:") || !strstr(e, "is not loopback"))
        fail_msg("serve --config with http_public: stderr: %s", e);
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_routes_and_query),
        cmocka_unit_test_setup_teardown(test_live_endpoint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_requests, setup, teardown),
        cmocka_unit_test_setup_teardown(test_browser, setup, teardown),
        cmocka_unit_test_setup_teardown(test_serve_demo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_standby_metrics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loopback_only, setup, teardown),
    };
    if (getenv("DLS_ONLY")) /* run one test by name (e.g. while iterating) */
        cmocka_set_test_filter(getenv("DLS_ONLY"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
