/* Tests for the NATS JetStream medium (stream-format.md revision 4, "NATS
 * JetStream stream", "Cursor results"; include/daolease/jetstream.h;
 * issue 16).
 *
 * The program starts its own nats-server processes on free loopback ports:
 * one single node (`nats-server -js`) and a three-node cluster (routes
 * between the three, cluster name "dls"), children it kills by pid (each
 * also dies with the test: PR_SET_PDEATHSIG). Every wait is bounded. Every
 * test skips only when nats-server (/usr/sbin on Debian) is missing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support.h"

#ifdef DLS_HAVE_JETSTREAM

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <nats/nats.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daolease/attrib.h"
#include "daolease/holder.h"
#include "daolease/jetstream.h"
#include "daolease/judge.h"
#include "daolease/mark.h"
#include "daolease/stream.h"
#include "daolease/tick.h"
#include "judge_harness.h"
#include "stream/jetstream/jsm.h"

/* Debian installs it in /usr/sbin; NATS_SERVER in the environment wins. */
static const char *NATS_SERVER = "/usr/sbin/nats-server";

/* ---- fixture: nats-server child processes ------------------------------- */

typedef struct node {
    pid_t pid;
    int port, cport;     /* client and cluster (route) ports */
    char name[16];
    char sd[128];        /* its JetStream store directory */
    char log[128];
} node;

static char g_dir[64];
static node g_single = {.pid = -1};
static node g_cl[3] = {{.pid = -1}, {.pid = -1}, {.pid = -1}};
static bool g_cluster_up;
static unsigned g_no;

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(p);
}

static bool have_server(void)
{
    static const char *const where[] = {"/usr/sbin/nats-server", "/usr/bin/nats-server",
                                        "/usr/local/bin/nats-server"};
    if (getenv("NATS_SERVER"))
        NATS_SERVER = getenv("NATS_SERVER");
    for (size_t i = 0; access(NATS_SERVER, X_OK) != 0 && i < 3; i++)
        NATS_SERVER = where[i];
    return access(NATS_SERVER, X_OK) == 0;
}

/* Starts (or restarts, same ports and store) one node; `peers` the cluster
 * or NULL for a single node. Does not wait. */
static void node_spawn(node *n, const node *peers, int npeers)
{
    char port[16], cl[64], routes[256] = "";
    snprintf(port, sizeof port, "%d", n->port);
    snprintf(cl, sizeof cl, "nats://127.0.0.1:%d", n->cport);
    for (int i = 0; peers && i < npeers; i++) {
        if (&peers[i] == n)
            continue;
        size_t l = strlen(routes);
        snprintf(routes + l, sizeof routes - l, "%snats://127.0.0.1:%d", l ? "," : "",
                 peers[i].cport);
    }
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
            dup2(null, 2);
        }
        if (peers)
            execl(NATS_SERVER, NATS_SERVER, "-js", "-a", "127.0.0.1", "-p", port, "-sd", n->sd,
                  "-n", n->name, "-l", n->log, "--cluster", cl, "--routes", routes,
                  "--cluster_name", "dls", (char *)NULL);
        else
            execl(NATS_SERVER, NATS_SERVER, "-js", "-a", "127.0.0.1", "-p", port, "-sd", n->sd,
                  "-n", n->name, "-l", n->log, (char *)NULL);
        _exit(127);
    }
    n->pid = pid;
}

static void node_kill(node *n)
{
    if (n->pid > 0) {
        kill(n->pid, SIGKILL);
        waitpid(n->pid, NULL, 0);
    }
    n->pid = -1;
}

static void node_init(node *n, const char *name)
{
    snprintf(n->name, sizeof n->name, "%s", name);
    snprintf(n->sd, sizeof n->sd, "%s/%s", g_dir, name);
    snprintf(n->log, sizeof n->log, "%s/%s.log", g_dir, name);
    n->port = free_port();
    n->cport = free_port();
    n->pid = -1;
}

/* "nats://127.0.0.1:p1,127.0.0.1:p2,…" of the cluster (or the single node). */
static void servers_of(char *out, size_t cap, const node *ns, int n)
{
    size_t l = snprintf(out, cap, "nats://");
    for (int i = 0; i < n; i++)
        l += snprintf(out + l, cap - l, "%s127.0.0.1:%d", i ? "," : "", ns[i].port);
}

/* A raw client of the servers (not the medium), for what an operator or a
 * foreign tool would do by hand. */
typedef struct raw {
    natsConnection *nc;
    jsCtx *js;
} raw;

static int raw_open(raw *r, const node *ns, int n)
{
    memset(r, 0, sizeof *r);
    char urls[3][64];
    const char *list[3];
    for (int i = 0; i < n && i < 3; i++) {
        snprintf(urls[i], sizeof urls[i], "nats://127.0.0.1:%d", ns[i].port);
        list[i] = urls[i];
    }
    natsOptions *o = NULL;
    natsStatus s = natsOptions_Create(&o);
    if (s == NATS_OK)
        s = natsOptions_SetServers(o, list, n);
    if (s == NATS_OK)
        s = natsOptions_SetTimeout(o, 2000);
    if (s == NATS_OK)
        s = natsOptions_SetMaxReconnect(o, -1);
    if (s == NATS_OK)
        s = natsOptions_SetReconnectWait(o, 100);
    if (s == NATS_OK)
        s = natsConnection_Connect(&r->nc, o);
    natsOptions_Destroy(o);
    if (s == NATS_OK) {
        jsOptions jo;
        jsOptions_Init(&jo);
        jo.Wait = 3000;
        s = natsConnection_JetStream(&r->js, r->nc, &jo);
    }
    return s == NATS_OK ? 0 : -1;
}

static void raw_close(raw *r)
{
    jsCtx_Destroy(r->js);
    if (r->nc) {
        natsConnection_Close(r->nc);
        natsConnection_Destroy(r->nc);
    }
    memset(r, 0, sizeof *r);
}

/* Waits (bounded) until JetStream answers on the single node. */
static int single_ready(void)
{
    char url[128];
    snprintf(url, sizeof url, "nats://127.0.0.1:%d/probe", g_single.port);
    uint64_t until = mono_ms() + 15000;
    while (mono_ms() < until) {
        dls_medium *m = NULL;
        dls_where w = {0};
        int rc = dls_jetstream_open(&m, url, DLS_OPEN_READ, NULL, &w);
        dls_medium_del(m);
        if (rc == DLS_ERR_NOTFOUND)
            return 0;
        sleep_ms(50);
    }
    return -1;
}

/* Waits (bounded) until the cluster places a three-replica stream. */
static int cluster_ready(unsigned limit_ms)
{
    char url[300], servers[256];
    servers_of(servers, sizeof servers, g_cl, 3);
    uint64_t until = mono_ms() + limit_ms;
    while (mono_ms() < until) {
        snprintf(url, sizeof url, "%s/probe-%u?replicas=3", servers, ++g_no);
        dls_medium *m = NULL;
        dls_where w = {0};
        int rc = dls_jetstream_create(&m, url, NULL, &w);
        dls_medium_del(m);
        if (rc == 0)
            return 0;
        sleep_ms(200);
    }
    return -1;
}

static int cluster_start(void)
{
    for (int i = 0; i < 3; i++)
        node_spawn(&g_cl[i], g_cl, 3);
    return cluster_ready(60000);
}

static int group_setup(void **state)
{
    (void)state;
    signal(SIGPIPE, SIG_DFL); /* a library write must never raise it */
    if (!have_server())
        return 0;
    snprintf(g_dir, sizeof g_dir, "/tmp/dls-nats-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    node_init(&g_single, "single");
    node_spawn(&g_single, NULL, 0);
    if (single_ready()) {
        fprintf(stderr, "cannot start %s (log %s)\n", NATS_SERVER, g_single.log);
        return -1;
    }
    return 0;
}

/* The cluster starts on first use (three servers cost a shared machine). */
static void need_cluster(void)
{
    if (g_cluster_up)
        return;
    node_init(&g_cl[0], "n1");
    node_init(&g_cl[1], "n2");
    node_init(&g_cl[2], "n3");
    int rc = cluster_start();
    if (rc)
        fprintf(stderr, "cluster did not form (logs in %s)\n", g_dir);
    assert_int_equal(rc, 0);
    g_cluster_up = true;
}

static int group_teardown(void **state)
{
    (void)state;
    node_kill(&g_single);
    for (int i = 0; i < 3; i++)
        node_kill(&g_cl[i]);
    if (g_dir[0] && !getenv("DLS_KEEP"))
        nftw(g_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    nats_Close();
    return 0;
}

#define NEED_SERVER()                                                          \
    do {                                                                       \
        if (!have_server()) {                                                  \
            skip();                                                            \
            return;                                                            \
        }                                                                      \
    } while (0)

/* A fresh stream URL on the single node. */
static void fresh(char url[200], const char *tag, const char *query)
{
    snprintf(url, 200, "nats://127.0.0.1:%d/%s-%u%s", g_single.port, tag, ++g_no,
             query ? query : "");
}

static void fresh_cluster(char url[400], const char *tag, const char *query)
{
    char servers[256];
    servers_of(servers, sizeof servers, g_cl, 3);
    snprintf(url, 400, "%s/%s-%u%s", servers, tag, ++g_no, query ? query : "");
}

/* Record i of writer w: a msgpack map {"w": w, "i": i} (13 bytes). */
static size_t mkrec(uint8_t b[13], unsigned w, unsigned i)
{
    b[0] = 0x82;
    b[1] = 0xa1;
    b[2] = 'w';
    b[3] = 0xce;
    b[4] = (uint8_t)(w >> 24), b[5] = (uint8_t)(w >> 16), b[6] = (uint8_t)(w >> 8), b[7] = (uint8_t)w;
    b[8] = 0xa1;
    b[9] = 'i';
    b[10] = 0xcd;
    b[11] = (uint8_t)(i >> 8), b[12] = (uint8_t)i;
    return 13;
}

static void recdec(const uint8_t *p, size_t n, unsigned *w, unsigned *i)
{
    assert_int_equal(n, 13);
    *w = (unsigned)p[4] << 24 | (unsigned)p[5] << 16 | (unsigned)p[6] << 8 | p[7];
    *i = (unsigned)p[11] << 8 | p[12];
}

static void append_n(dls_medium *m, unsigned w, unsigned from, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        uint8_t b[13];
        uint64_t pos;
        dls_where wh = {0};
        int rc = dls_medium_append(m, b, mkrec(b, w, from + k), &pos, &wh);
        if (rc)
            fprintf(stderr, "append: %s (%s)\n", dls_strerror(rc), wh.reason ? wh.reason : "");
        assert_int_equal(rc, 0);
    }
}

static dls_medium *create(const char *url)
{
    dls_medium *m = NULL;
    dls_where w = {0};
    int rc = dls_jetstream_create(&m, url, NULL, &w);
    if (rc)
        fprintf(stderr, "create %s: %s (%s)\n", url, dls_strerror(rc), w.reason ? w.reason : "");
    assert_int_equal(rc, 0);
    return m;
}

static dls_medium *open_read(const char *url)
{
    dls_medium *m = NULL;
    dls_where w = {0};
    int rc = dls_jetstream_open(&m, url, DLS_OPEN_READ, NULL, &w);
    if (rc)
        fprintf(stderr, "open %s: %s (%s)\n", url, dls_strerror(rc), w.reason ? w.reason : "");
    assert_int_equal(rc, 0);
    return m;
}

static void expect_ok(dls_cursor *c, uint64_t pos, unsigned w, unsigned i)
{
    dls_record r;
    dls_where wh = {0};
    dls_next n = dls_cursor_next(c, &r, &wh);
    if (n != DLS_NEXT_OK)
        fprintf(stderr, "next: %s (%s)\n", dls_next_name(n), wh.reason ? wh.reason : "");
    assert_int_equal(n, DLS_NEXT_OK);
    assert_true(r.position == pos);
    unsigned gw, gi;
    recdec(r.p, r.n, &gw, &gi);
    assert_int_equal(gw, w);
    assert_int_equal(gi, i);
}

/* The stream name of a URL (after the last '/', before '?'). */
static void stream_of(const char *url, char out[80])
{
    const char *s = strrchr(url, '/') + 1;
    size_t n = strcspn(s, "?");
    snprintf(out, 80, "%.*s", (int)n, s);
}

/* ---- URL grammar ----------------------------------------------------------- */

/* jetstream.h "URLs": servers, a stream name JetStream accepts, parameters;
 * a wrong URL is a clear DLS_ERR_CONFIG naming the byte (issue 16 item 3,
 * bad input). */
static void test_url_parse(void **state)
{
    (void)state;
    jsm_url u;
    dls_where w = {0};
    assert_int_equal(jsm_url_parse("nats://a:1,b,10.0.0.3:4223/s_1-x?replicas=3&timeout_ms=50"
                                   "&max_msgs=7&storage=memory&sync=data&retry_ms=40000", &u, &w), 0);
    assert_int_equal(u.nservers, 3);
    assert_string_equal(u.servers[0], "nats://a:1");
    assert_string_equal(u.servers[1], "nats://b:4222");
    assert_string_equal(u.servers[2], "nats://10.0.0.3:4223");
    assert_string_equal(u.stream, "s_1-x");
    assert_string_equal(u.name, "nats://a:1,b,10.0.0.3:4223/s_1-x");
    assert_true(u.has_replicas && u.replicas == 3);
    assert_true(u.has_timeout && u.timeout_ms == 50);
    assert_true(u.has_retry && u.retry_ms == 40000);
    assert_true(u.has_max_msgs && u.max_msgs == 7);
    assert_true(u.has_storage && u.memory);
    assert_true(u.has_sync && u.sync == DLS_SYNC_DATA);
    jsm_url_free(&u);

    static const struct { const char *url; size_t offset; } bad[] = {
        {"redis://h/s", 0},
        {"nats://h", 8},              /* no /stream */
        {"nats://h/", 9},             /* empty stream */
        {"nats:///s", 7},             /* no host */
        {"nats://h:0/s", 9},
        {"nats://h:65536/s", 9},
        {"nats://h:x/s", 9},
        {"nats://h,,k/s", 9},
        {"nats://h/a.b", 10},         /* '.' would make it a subject hierarchy */
        {"nats://h/a b", 10},
        {"nats://h/a*", 10},
        {"nats://h/s?replicas=0", 11},
        {"nats://h/s?replicas=6", 11},
        {"nats://h/s?storage=ssd", 11},
        {"nats://h/s?sync=always", 11},
        {"nats://h/s?retry_ms=0", 11},
        {"nats://h/s?retry_ms=3600001", 11},
        {"nats://h/s?nope=1", 11},
        {"nats://h/s?", 11},
        {"nats://h/s?replicas", 11},
        {"nats://h/s?replicas=3&", 22},
        {"nats://h/0123456789012345678901234567890123456789012345678901234567890123456789", 9},
        {"nats://user:secret@h:4222/s", 7}, /* docs/jetstream.md: no credentials */
        {"nats://token@h/s", 7},
        {"nats://h,u:p@k/s", 7},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&w, 0, sizeof w);
        int rc = jsm_url_parse(bad[i].url, &u, &w);
        if (rc != DLS_ERR_CONFIG || w.offset != bad[i].offset)
            fprintf(stderr, "%s: rc %d offset %llu (%s)\n", bad[i].url, rc,
                    (unsigned long long)w.offset, w.reason ? w.reason : "");
        assert_int_equal(rc, DLS_ERR_CONFIG);
        assert_non_null(w.reason);
        assert_true(w.offset == bad[i].offset);
    }
    memset(&w, 0, sizeof w);
    assert_int_equal(jsm_url_parse("nats://u:p@127.0.0.1:4222/s", &u, &w), DLS_ERR_CONFIG);
    assert_non_null(strstr(w.reason, "URLs carry no credentials"));
    /* seventeen servers are too many */
    char many[512] = "nats://";
    for (int i = 0; i < 17; i++)
        strcat(many, i ? ",h" : "h");
    strcat(many, "/s");
    assert_int_equal(jsm_url_parse(many, &u, &w), DLS_ERR_CONFIG);
    assert_true(dls_jetstream_is_url("nats://x/y"));
    assert_false(dls_jetstream_is_url("redis://x/y"));
    assert_false(dls_jetstream_is_url(NULL));
}

/* ---- single node: layout, positions, answers -------------------------------- */

/* stream-format.md rev 4: position = stream sequence − 1, dense from 0;
 * ok then blocked at the tail; the medium id is the one kept in the
 * stream's description and a second handle reads the same positions
 * (issue 16 item 1). */
static void test_positions_ok_blocked(void **state)
{
    (void)state;
    NEED_SERVER();
    char url[200];
    fresh(url, "pos", NULL);
    dls_medium *m = create(url);
    assert_int_equal(dls_medium_kind_of(m), DLS_MEDIUM_JETSTREAM);
    assert_int_equal(dls_medium_retention(m), DLS_RETAIN_ALL);
    assert_int_equal(dls_medium_sync(m), DLS_SYNC_NONE); /* one server: docs/jetstream.md */
    append_n(m, 1, 0, 3);
    const uint8_t *recs[4];
    size_t lens[4];
    uint8_t b[4][13];
    for (unsigned i = 0; i < 4; i++) {
        lens[i] = mkrec(b[i], 1, 3 + i);
        recs[i] = b[i];
    }
    uint64_t first = 99;
    dls_where w = {0};
    assert_int_equal(dls_medium_append_batch(m, recs, lens, 4, &first, &w), 0);
    assert_true(first == 3); /* a batch is contiguous, right after the last */

    dls_medium *r = open_read(url);
    assert_memory_equal(dls_medium_id(r), dls_medium_id(m), DLS_MEDIUM_ID_LEN);
    assert_string_equal(dls_medium_name(r), url);
    dls_cursor *c, *c2;
    assert_int_equal(dls_cursor_new(&c, r, 0), 0);
    assert_int_equal(dls_cursor_new(&c2, m, 5), 0);
    for (unsigned i = 0; i < 7; i++)
        expect_ok(c, i, 1, i);
    dls_record rec;
    assert_int_equal(dls_cursor_next(c, &rec, NULL), DLS_NEXT_BLOCKED);
    assert_true(rec.position == 7);
    expect_ok(c2, 5, 1, 5); /* a cursor from a later position: independent */
    expect_ok(c2, 6, 1, 6);
    append_n(m, 1, 7, 1);
    expect_ok(c, 7, 1, 7);  /* follows the growing stream */
    assert_int_equal(dls_cursor_next(c, &rec, NULL), DLS_NEXT_BLOCKED);
    dls_cursor_del(c);
    dls_cursor_del(c2);
    dls_medium_del(r);
    dls_medium_del(m);
}

/* Creating never replaces (DLS_ERR_EXISTS); opening a missing stream is
 * DLS_ERR_NOTFOUND; a stream that exists with another medium id is
 * DLS_ERR_MEDIUM_ID (issue 16 item 3, bad input). */
static void test_exists_notfound_other_id(void **state)
{
    (void)state;
    NEED_SERVER();
    char url[200];
    fresh(url, "ids", NULL);
    dls_medium *m = create(url), *x = NULL;
    dls_where w = {0};
    assert_int_equal(dls_jetstream_create(&x, url, NULL, &w), DLS_ERR_EXISTS);
    assert_null(x);
    char missing[200];
    fresh(missing, "missing", NULL);
    assert_int_equal(dls_jetstream_open(&x, missing, DLS_OPEN_READ, NULL, &w), DLS_ERR_NOTFOUND);
    dls_jetstream_settings s;
    dls_jetstream_settings_default(&s);
    uint8_t other[DLS_MEDIUM_ID_LEN];
    memcpy(other, dls_medium_id(m), sizeof other);
    other[0] ^= 1;
    s.id = other;
    memset(&w, 0, sizeof w);
    assert_int_equal(dls_jetstream_open(&x, url, DLS_OPEN_APPEND, &s, &w), DLS_ERR_MEDIUM_ID);
    assert_non_null(w.reason);
    s.id = dls_medium_id(m);
    assert_int_equal(dls_jetstream_open(&x, url, DLS_OPEN_APPEND, &s, &w), 0);
    dls_medium_del(x);

    /* a stream daolease did not make (no "daolease medium" description) */
    raw r;
    assert_int_equal(raw_open(&r, &g_single, 1), 0);
    char name[80], foreign[200];
    fresh(foreign, "foreign", NULL);
    stream_of(foreign, name);
    jsStreamConfig c;
    jsStreamConfig_Init(&c);
    c.Name = name;
    const char *subj[1] = {"foreign.x"};
    c.Subjects = subj;
    c.SubjectsLen = 1;
    c.Storage = js_FileStorage;
    assert_int_equal(js_AddStream(NULL, r.js, &c, NULL, NULL), NATS_OK);
    memset(&w, 0, sizeof w);
    assert_int_equal(dls_jetstream_open(&x, foreign, DLS_OPEN_READ, NULL, &w), DLS_ERR_MEDIUM_ID);
    /* the CLI says so in one line and fails */
    char cmd[400];
    snprintf(cmd, sizeof cmd, "\"$DAOLEASE_BIN\" dump '%s' 2>&1 | grep -q 'daolease did not make'",
             foreign);
    assert_int_equal(system(cmd), 0);
    raw_close(&r);
    dls_medium_del(m);
}

/* stream-format.md "Cursor results", end: the seal occupies a position and
 * ends every cursor there; appends after it are refused, also through a
 * second writer that has not seen the seal; the server refuses publishes
 * on the sealed stream (issue 16 item 1). */
static void test_seal_end(void **state)
{
    (void)state;
    NEED_SERVER();
    char url[200];
    fresh(url, "seal", NULL);
    dls_medium *m = create(url), *m2;
    dls_where w = {0};
    assert_int_equal(dls_jetstream_open(&m2, url, DLS_OPEN_APPEND, NULL, &w), 0);
    append_n(m, 1, 0, 2);
    assert_int_equal(dls_medium_seal(m, &w), 0);
    uint8_t b[13];
    uint64_t pos;
    assert_int_equal(dls_medium_append(m, b, mkrec(b, 1, 9), &pos, &w), DLS_ERR_SEALED);
    assert_int_equal(dls_medium_append(m2, b, mkrec(b, 2, 9), &pos, &w), DLS_ERR_SEALED);
    assert_int_equal(dls_medium_seal(m2, &w), DLS_ERR_SEALED);
    dls_medium *r = open_read(url);
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, r, 0), 0);
    expect_ok(c, 0, 1, 0);
    expect_ok(c, 1, 1, 1);
    dls_record rec;
    assert_int_equal(dls_cursor_next(c, &rec, NULL), DLS_NEXT_END);
    assert_true(rec.position == 2);
    assert_int_equal(dls_cursor_next(c, &rec, NULL), DLS_NEXT_END);
    dls_cursor_del(c);
    /* the stream's configuration is sealed too: a raw publish is refused */
    raw rw;
    assert_int_equal(raw_open(&rw, &g_single, 1), 0);
    char name[80], subj[100];
    stream_of(url, name);
    snprintf(subj, sizeof subj, "daolease.%s", name);
    jsErrCode ec = 0;
    assert_int_not_equal(js_Publish(NULL, rw.js, subj, "x", 1, NULL, &ec), NATS_OK);
    raw_close(&rw);
    dls_medium_del(r);
    dls_medium_del(m2);
    dls_medium_del(m);
}

/* stream-format.md "Cursor results", gap: exactly when the first retained
 * sequence is past the cursor — max_msgs evicts the oldest; a cursor
 * behind answers gap once, moved to the oldest retained; a cursor inside
 * the retained range never does (issue 16 item 1). */
static void test_gap_max_msgs(void **state)
{
    (void)state;
    NEED_SERVER();
    char url[200];
    fresh(url, "gap", "?max_msgs=5");
    dls_medium *m = create(url);
    assert_int_equal(dls_medium_retention(m), DLS_RETAIN_EVICT_OLDEST);
    dls_cursor *early, *inside;
    assert_int_equal(dls_cursor_new(&early, m, 0), 0);
    append_n(m, 1, 0, 1);
    expect_ok(early, 0, 1, 0);
    append_n(m, 1, 1, 9); /* 10 records, 5..9 retained */
    assert_int_equal(dls_cursor_new(&inside, m, 5), 0);
    dls_record rec;
    dls_where w = {0};
    assert_int_equal(dls_cursor_next(early, &rec, &w), DLS_NEXT_GAP);
    assert_true(rec.gap_from == 1);
    assert_true(rec.position == 5);
    assert_true(dls_cursor_position(early) == 5);
    for (unsigned i = 5; i < 10; i++) {
        expect_ok(early, i, 1, i);
        expect_ok(inside, i, 1, i);
    }
    assert_int_equal(dls_cursor_next(early, &rec, &w), DLS_NEXT_BLOCKED);
    /* opening with another bound than the stream's is refused */
    char other[220];
    snprintf(other, sizeof other, "%.*s?max_msgs=6", (int)strcspn(url, "?"), url);
    dls_medium *x;
    assert_int_equal(dls_jetstream_open(&x, other, DLS_OPEN_READ, NULL, &w), DLS_ERR_CONFIG);
    dls_cursor_del(early);
    dls_cursor_del(inside);
    dls_medium_del(m);
}

/* Makes, by hand, a stream laid out as a daolease medium but with deletes
 * allowed (daolease itself creates streams with deny_delete), as another
 * tool could. Returns its subject in subj. */
static void handmade(raw *r, const char *url, const uint8_t id[16], char subj[100])
{
    char name[80], desc[64];
    stream_of(url, name);
    snprintf(subj, 100, "daolease.%s", name);
    int k = snprintf(desc, sizeof desc, "daolease medium ");
    for (int i = 0; i < 16; i++)
        k += snprintf(desc + k, sizeof desc - k, "%02x", id[i]);
    jsStreamConfig c;
    jsStreamConfig_Init(&c);
    c.Name = name;
    c.Description = desc;
    const char *subjects[1] = {subj};
    c.Subjects = subjects;
    c.SubjectsLen = 1;
    c.Storage = js_FileStorage;
    assert_int_equal(js_AddStream(NULL, r->js, &c, NULL, NULL), NATS_OK);
}

/* issue 16 item 3, bad input: a message published to the stream by hand
 * (no Dls-Medium header, or an empty payload) is never returned as a
 * record: the cursor answers transport-error at it and stays there, so no
 * reader can count it; `dump` fails naming it. A message deleted from the
 * middle is transport-error at its position (like a hole in a segmented
 * medium, stream-format.md rev 4), never skipped silently; a stream
 * daolease created refuses the delete outright (deny_delete). */
static void test_foreign_and_deleted_messages(void **state)
{
    (void)state;
    NEED_SERVER();
    raw r;
    assert_int_equal(raw_open(&r, &g_single, 1), 0);
    char url[200], subj[100], name[80];
    fresh(url, "foreign-msg", NULL);
    dls_medium *m = create(url);
    append_n(m, 1, 0, 1);
    stream_of(url, name);
    snprintf(subj, sizeof subj, "daolease.%s", name);
    assert_int_equal(js_Publish(NULL, r.js, subj, "\x81\xa1x\x01", 4, NULL, NULL), NATS_OK);
    /* docs/jetstream.md, "A broken medium": the writer learns it at its next
     * append (before, it appended after it and answered ok, while every
     * reader stopped at it for good), and at every later one; so does a
     * writer that opens the medium afterwards */
    uint8_t b[13];
    uint64_t pos = 0;
    dls_where aw = {0};
    assert_int_equal(dls_medium_append(m, b, mkrec(b, 1, 1), &pos, &aw), DLS_ERR_CORRUPT);
    assert_true(aw.offset == 1);
    assert_non_null(strstr(aw.reason, "not a daolease record"));
    assert_int_equal(dls_medium_append(m, b, mkrec(b, 1, 2), &pos, &aw), DLS_ERR_CORRUPT);
    dls_medium *again = NULL;
    assert_int_equal(dls_jetstream_open(&again, url, DLS_OPEN_APPEND, NULL, &aw), 0);
    memset(&aw, 0, sizeof aw);
    assert_int_equal(dls_medium_append(again, b, mkrec(b, 1, 3), &pos, &aw), DLS_ERR_CORRUPT);
    assert_true(aw.offset == 1);
    dls_medium_del(again);
    dls_medium *rd = open_read(url);
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, rd, 0), 0);
    expect_ok(c, 0, 1, 0);
    dls_record rec;
    dls_where w = {0};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(dls_cursor_next(c, &rec, &w), DLS_NEXT_ERROR);
        assert_true(rec.position == 1);
        assert_non_null(strstr(w.reason, "not a daolease record"));
    }
    dls_cursor_del(c);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "\"$DAOLEASE_BIN\" dump '%s' > /dev/null 2>&1", url);
    assert_int_not_equal(system(cmd), 0);

    /* a deleted message in the middle; deny_delete: the daolease stream
     * refuses it (the foreign message too: no remedy but a new medium) */
    js_DeleteMsg(r.js, name, 1, NULL, NULL);
    assert_int_not_equal(js_DeleteMsg(r.js, name, 2, NULL, NULL), NATS_OK);
    dls_cursor *d;
    assert_int_equal(dls_cursor_new(&d, rd, 0), 0);
    expect_ok(d, 0, 1, 0); /* position 0 is intact */
    dls_cursor_del(d);
    dls_medium_del(rd);
    dls_medium_del(m);

    char hurl[200];
    fresh(hurl, "holes", NULL);
    uint8_t id[16];
    memset(id, 0x5a, sizeof id);
    handmade(&r, hurl, id, subj);
    dls_jetstream_settings s;
    dls_jetstream_settings_default(&s);
    s.id = id;
    dls_medium *h;
    assert_int_equal(dls_jetstream_open(&h, hurl, DLS_OPEN_APPEND, &s, &w), 0);
    append_n(h, 2, 0, 3);
    stream_of(hurl, name);
    assert_int_equal(js_DeleteMsg(r.js, name, 2, NULL, NULL), NATS_OK); /* position 1 */
    assert_int_equal(dls_cursor_new(&d, h, 0), 0);
    expect_ok(d, 0, 2, 0);
    for (int i = 0; i < 2; i++) {
        memset(&w, 0, sizeof w);
        assert_int_equal(dls_cursor_next(d, &rec, &w), DLS_NEXT_ERROR);
        assert_true(rec.position == 1);
        assert_non_null(strstr(w.reason, "missing between"));
    }
    dls_cursor_del(d);
    /* a purge of the front is eviction, not a hole: gap, exactly */
    jsOptions po;
    jsOptions_Init(&po);
    po.Stream.Purge.Sequence = 3; /* purge below sequence 3 */
    assert_int_equal(js_PurgeStream(r.js, name, &po, NULL), NATS_OK);
    assert_int_equal(dls_cursor_new(&d, h, 0), 0);
    assert_int_equal(dls_cursor_next(d, &rec, &w), DLS_NEXT_GAP);
    assert_true(rec.gap_from == 0 && rec.position == 2);
    expect_ok(d, 2, 2, 2);
    dls_cursor_del(d);
    dls_medium_del(h);
    raw_close(&r);
}

/* issue 16 item 1: append = a publish with Nats-Expected-Last-Sequence.
 * Writers on separate connections appending batches at once: every
 * acknowledged batch lies at contiguous positions (no other writer's record
 * inside it), positions are dense, each record is where its ack said.
 * A writer opened `exclusive` (a journal) fails with DLS_ERR_LOCKED instead
 * of appending after a record it has not seen. */
typedef struct wjob {
    const char *url;
    unsigned w;
    unsigned batches;
    uint64_t first[64];
    size_t len[64];
    bool ok[64];
} wjob;

static void *writer(void *p)
{
    wjob *j = p;
    dls_medium *m = NULL;
    dls_where w = {0};
    if (dls_jetstream_open(&m, j->url, DLS_OPEN_APPEND, NULL, &w))
        return NULL;
    for (unsigned b = 0; b < j->batches; b++) {
        uint8_t buf[8][13];
        const uint8_t *recs[8];
        size_t lens[8];
        size_t n = 1 + (b % 5);
        for (size_t i = 0; i < n; i++) {
            lens[i] = mkrec(buf[i], j->w, b * 8 + (unsigned)i);
            recs[i] = buf[i];
        }
        j->len[b] = n;
        j->ok[b] = dls_medium_append_batch(m, recs, lens, n, &j->first[b], &w) == 0;
    }
    dls_medium_del(m);
    return NULL;
}

/* judge.md rev 5, Standby judges and takeover ("JetStream: its first
 * append names the last sequence it read"): dls_jetstream_expect_after on
 * an exclusive handle; an append after records the handle did not read is
 * refused and stores nothing; the writer it took over from is refused. */
static void test_takeover_expect_after(void **state)
{
    (void)state;
    NEED_SERVER();
    char url[200];
    fresh(url, "takeover", "");
    dls_medium_del(create(url));
    dls_jetstream_settings ex;
    dls_jetstream_settings_default(&ex);
    ex.exclusive = true;
    dls_medium *a, *b, *shared;
    dls_where w = {0};
    assert_int_equal(dls_jetstream_open(&a, url, DLS_OPEN_APPEND, &ex, &w), 0);
    append_n(a, 1, 0, 3);
    assert_int_equal(dls_jetstream_open(&b, url, DLS_OPEN_APPEND, &ex, &w), 0);
    assert_int_equal(dls_jetstream_open(&shared, url, DLS_OPEN_APPEND, NULL, &w), 0);
    assert_int_equal(dls_jetstream_expect_after(shared, 3), DLS_ERR_STATE);
    assert_int_equal(dls_jetstream_expect_after(NULL, 3), DLS_ERR_INVAL);
    append_n(a, 1, 3, 1); /* the writer is alive: position 3 */
    uint8_t r[13];
    uint64_t pos;
    assert_int_equal(dls_jetstream_expect_after(b, 3), 0); /* b read up to 3 only */
    assert_int_equal(dls_medium_append(b, r, mkrec(r, 2, 0), &pos, &w), DLS_ERR_LOCKED);
    assert_int_equal(dls_jetstream_expect_after(b, 4), 0); /* read to the end */
    assert_int_equal(dls_medium_append(b, r, mkrec(r, 2, 1), &pos, &w), 0);
    assert_int_equal(pos, 4u);
    assert_int_equal(dls_medium_append(a, r, mkrec(r, 1, 9), &pos, &w), DLS_ERR_LOCKED);
    dls_medium *rd = open_read(url);
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, rd, 4), 0);
    expect_ok(c, 4, 2, 1); /* nothing of the refused appends */
    dls_record rec;
    assert_int_equal(dls_cursor_next(c, &rec, &w), DLS_NEXT_BLOCKED);
    dls_cursor_del(c);
    dls_medium_del(rd);
    dls_medium_del(a);
    dls_medium_del(b);
    dls_medium_del(shared);
}

static void test_concurrent_writers_and_exclusive(void **state)
{
    (void)state;
    NEED_SERVER();
    char url[200];
    fresh(url, "writers", NULL);
    dls_medium *m = create(url);
    wjob jobs[3];
    pthread_t th[3];
    for (unsigned k = 0; k < 3; k++) {
        memset(&jobs[k], 0, sizeof jobs[k]);
        jobs[k].url = url;
        jobs[k].w = k + 1;
        jobs[k].batches = 30;
        assert_int_equal(pthread_create(&th[k], NULL, writer, &jobs[k]), 0);
    }
    for (unsigned k = 0; k < 3; k++)
        pthread_join(th[k], NULL);
    /* read everything back */
    static unsigned who[4096], idx[4096];
    uint64_t total = 0;
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    dls_record rec;
    while (dls_cursor_next(c, &rec, NULL) == DLS_NEXT_OK) {
        assert_true(rec.position == total);
        recdec(rec.p, rec.n, &who[total], &idx[total]);
        total++;
    }
    dls_cursor_del(c);
    unsigned acked = 0;
    for (unsigned k = 0; k < 3; k++)
        for (unsigned b = 0; b < jobs[k].batches; b++) {
            if (!jobs[k].ok[b])
                continue;
            acked++;
            for (size_t i = 0; i < jobs[k].len[b]; i++) {
                uint64_t p = jobs[k].first[b] + i;
                assert_true(p < total);
                assert_int_equal(who[p], k + 1);
                assert_int_equal(idx[p], b * 8 + i);
            }
        }
    assert_true(acked >= 80); /* conflicts are retried: nearly all succeed */

    /* exclusive: a second writer's append makes the first one refuse */
    dls_jetstream_settings s;
    dls_jetstream_settings_default(&s);
    s.exclusive = true;
    dls_medium *ex, *other;
    dls_where w = {0};
    assert_int_equal(dls_jetstream_open(&ex, url, DLS_OPEN_APPEND, &s, &w), 0);
    assert_int_equal(dls_jetstream_open(&other, url, DLS_OPEN_APPEND, NULL, &w), 0);
    append_n(ex, 9, 0, 1);
    append_n(other, 8, 0, 1);
    uint8_t b[13];
    uint64_t pos;
    assert_int_equal(dls_medium_append(ex, b, mkrec(b, 9, 1), &pos, &w), DLS_ERR_LOCKED);
    dls_medium_del(ex);
    dls_medium_del(other);
    dls_medium_del(m);
}

/* jetstream.h: every call is bounded. No server at the address: open is
 * DLS_ERR_TRANSPORT within the timeout. The server killed under an open
 * medium: appends answer DLS_ERR_TRANSPORT and cursors transport-error
 * (cursor unchanged), each within timeout_ms; once the server is back the
 * same handles carry on (issue 16 item 1, transport-error). */
static void test_unreachable_and_restart(void **state)
{
    (void)state;
    NEED_SERVER();
    char url[200];
    snprintf(url, sizeof url, "nats://127.0.0.1:%d/x?timeout_ms=500", free_port());
    dls_medium *m = NULL;
    dls_where w = {0};
    uint64_t t0 = mono_ms();
    assert_int_equal(dls_jetstream_open(&m, url, DLS_OPEN_READ, NULL, &w), DLS_ERR_TRANSPORT);
    assert_true(mono_ms() - t0 < 5000);

    fresh(url, "restart", "?timeout_ms=500");
    m = create(url);
    append_n(m, 1, 0, 2);
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    expect_ok(c, 0, 1, 0);
    node_kill(&g_single);
    uint8_t b[13];
    uint64_t pos;
    t0 = mono_ms();
    assert_int_equal(dls_medium_append(m, b, mkrec(b, 1, 2), &pos, &w), DLS_ERR_TRANSPORT);
    dls_record rec;
    assert_int_equal(dls_cursor_next(c, &rec, &w), DLS_NEXT_ERROR);
    assert_true(rec.position == 1);
    assert_true(mono_ms() - t0 < 5000);
    node_spawn(&g_single, NULL, 0);
    assert_int_equal(single_ready(), 0);
    int rc = DLS_ERR_TRANSPORT;
    for (int i = 0; i < 100 && rc; i++) { /* the client reconnects by itself */
        rc = dls_medium_append(m, b, mkrec(b, 1, 2), &pos, &w);
        if (rc)
            sleep_ms(100);
    }
    assert_int_equal(rc, 0);
    /* the append answered failed may still have been stored (jetstream.h:
     * a request that timed out), then the retry lands after it */
    assert_true(pos == 2 || pos == 3);
    expect_ok(c, 1, 1, 1);
    expect_ok(c, 2, 1, 2);
    if (pos == 3)
        expect_ok(c, 3, 1, 2);
    dls_cursor_del(c);
    dls_medium_del(m);
}

/* A bug found by the demo: processes forked after the parent used the NATS
 * client inherited its inbox-name generator, shared reply subjects and read
 * each other's answers (a stream's info answered with another stream's:
 * the judge then saw "one medium listed twice"). Each connection now has a
 * reply prefix of its own randomness. Two children forked after the parent
 * opened media each open their own stream many times and must always get
 * its own id, and read back their own records. */
static void test_forked_processes_keep_their_answers(void **state)
{
    (void)state;
    NEED_SERVER();
    char url[2][200];
    uint8_t id[2][DLS_MEDIUM_ID_LEN];
    for (int k = 0; k < 2; k++) {
        fresh(url[k], "fork", NULL);
        dls_medium *m = create(url[k]);
        memcpy(id[k], dls_medium_id(m), DLS_MEDIUM_ID_LEN);
        dls_medium_del(m);
    }
    pid_t pid[2];
    for (int k = 0; k < 2; k++) {
        pid[k] = fork();
        assert_true(pid[k] >= 0);
        if (pid[k] == 0) {
            int bad = 0;
            for (int i = 0; i < 40 && !bad; i++) {
                dls_medium *m = NULL;
                dls_where w = {0};
                if (dls_jetstream_open(&m, url[k], DLS_OPEN_APPEND, NULL, &w) ||
                    memcmp(dls_medium_id(m), id[k], DLS_MEDIUM_ID_LEN))
                    bad = 1;
                uint8_t b[13];
                uint64_t pos;
                if (!bad && dls_medium_append(m, b, mkrec(b, (unsigned)k + 1, (unsigned)i), &pos, &w))
                    bad = 2;
                dls_medium_del(m);
            }
            _exit(bad);
        }
    }
    /* the parent goes on using the client meanwhile, as the demo's judge does */
    int parent_bad = 0;
    for (int i = 0; i < 40; i++) {
        dls_medium *m = NULL;
        dls_where w = {0};
        if (dls_jetstream_open(&m, url[i % 2], DLS_OPEN_READ, NULL, &w) ||
            memcmp(dls_medium_id(m), id[i % 2], DLS_MEDIUM_ID_LEN))
            parent_bad++;
        dls_medium_del(m);
    }
    assert_int_equal(parent_bad, 0);
    for (int k = 0; k < 2; k++) {
        int st = 0;
        uint64_t until = mono_ms() + 120000;
        pid_t done;
        while ((done = waitpid(pid[k], &st, WNOHANG)) == 0 && mono_ms() < until)
            sleep_ms(50);
        if (done == 0) {
            kill(pid[k], SIGKILL);
            waitpid(pid[k], &st, 0);
        }
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
        dls_medium *r = open_read(url[k]);
        dls_cursor *c;
        assert_int_equal(dls_cursor_new(&c, r, 0), 0);
        for (unsigned i = 0; i < 40; i++)
            expect_ok(c, i, (unsigned)k + 1, i);
        dls_cursor_del(c);
        dls_medium_del(r);
    }
}

/* ---- three-node cluster ------------------------------------------------------ */

/* The index in g_cl of the stream's leader, or -1 (bounded wait for one). */
static int leader_of(const char *url)
{
    char name[80];
    stream_of(url, name);
    uint64_t until = mono_ms() + 30000;
    while (mono_ms() < until) {
        raw r;
        int found = -1;
        int ro = raw_open(&r, g_cl, 3);
        if (getenv("DLS_DEBUG"))
            fprintf(stderr, "raw_open %d\n", ro);
        if (ro == 0) {
            jsStreamInfo *si = NULL;
            natsStatus st = js_GetStreamInfo(&si, r.js, name, NULL, NULL);
            if (getenv("DLS_DEBUG"))
                fprintf(stderr, "info %d %s leader %s\n", st, natsStatus_GetText(st),
                        st == NATS_OK && si->Cluster && si->Cluster->Leader ? si->Cluster->Leader : "-");
            if (st == NATS_OK && si->Cluster &&
                si->Cluster->Leader)
                for (int i = 0; i < 3; i++)
                    if (g_cl[i].pid > 0 && !strcmp(si->Cluster->Leader, g_cl[i].name))
                        found = i;
            jsStreamInfo_Destroy(si);
        }
        raw_close(&r);
        if (found >= 0)
            return found;
        if (getenv("DLS_DEBUG"))
            fprintf(stderr, "leader_of %s: none yet\n", name);
        sleep_ms(200);
    }
    return -1;
}

/* Waits (bounded) until every replica of the stream is current. */
static void replicas_current(const char *url)
{
    char name[80];
    stream_of(url, name);
    uint64_t until = mono_ms() + 30000;
    while (mono_ms() < until) {
        raw r;
        bool all = false;
        if (raw_open(&r, g_cl, 3) == 0) {
            jsStreamInfo *si = NULL;
            if (js_GetStreamInfo(&si, r.js, name, NULL, NULL) == NATS_OK && si->Cluster &&
                si->Cluster->ReplicasLen == 2) {
                all = true;
                for (int i = 0; i < 2; i++)
                    all = all && si->Cluster->Replicas[i]->Current &&
                          !si->Cluster->Replicas[i]->Offline;
            }
            jsStreamInfo_Destroy(si);
        }
        raw_close(&r);
        if (all)
            return;
        sleep_ms(200);
    }
    fail_msg("replicas of %s not current within 30 s", url);
}

/* Reads record (w, i) back at acknowledged position pos. A read that cannot
 * reach the cluster (transport-error: an election, a slow instrumented
 * server) says nothing about the record and is retried, bounded; any other
 * answer, a gap, an end or a wrong record, fails the test (issue 16 item 3:
 * every acknowledged append is still there). */
static void read_back(dls_medium *r, uint64_t pos, unsigned w, unsigned i, unsigned *unreachable)
{
    uint64_t until = mono_ms() + 60000;
    for (;;) {
        dls_cursor *c = NULL;
        assert_int_equal(dls_cursor_new(&c, r, pos), 0);
        dls_record rec;
        dls_where wh = {0};
        dls_next n = dls_cursor_next(c, &rec, &wh);
        if (n == DLS_NEXT_ERROR && mono_ms() < until) {
            dls_cursor_del(c);
            (*unreachable)++;
            sleep_ms(200);
            continue;
        }
        if (n != DLS_NEXT_OK)
            fprintf(stderr, "read at %llu: %s (%s)\n", (unsigned long long)pos,
                    dls_next_name(n), wh.reason ? wh.reason : "");
        assert_int_equal(n, DLS_NEXT_OK);
        assert_true(rec.position == pos);
        unsigned gw, gi;
        recdec(rec.p, rec.n, &gw, &gi);
        assert_int_equal(gw, w);
        assert_int_equal(gi, i);
        dls_cursor_del(c);
        return;
    }
}

/* Appends record (w, i), retrying (bounded) through a failover; returns its
 * acknowledged position. A try that timed out may have been stored too: a
 * retry then lands after it (jetstream.h), which is why reads below check
 * acknowledged positions, not density of i. */
static uint64_t append_retry(dls_medium *m, unsigned w, unsigned i, unsigned *failures)
{
    uint64_t until = mono_ms() + 60000;
    for (;;) {
        uint8_t b[13];
        uint64_t pos;
        dls_where wh = {0};
        int rc = dls_medium_append(m, b, mkrec(b, w, i), &pos, &wh);
        if (rc == 0)
            return pos;
        assert_int_equal(rc, DLS_ERR_TRANSPORT);
        (*failures)++;
        if (mono_ms() > until)
            fail_msg("no append acknowledged within 60 s: %s", wh.reason ? wh.reason : "");
        sleep_ms(100);
    }
}

/* issue 16 item 3: a three-node cluster, a stream with three replicas
 * (declared sync data: docs/jetstream.md); SIGKILL a follower mid-run, then
 * (after it is back and current) the stream's leader. Appends carry on
 * (after a bounded election), and every acknowledged append is still there,
 * at the position its acknowledgement named, read back by a new handle. */
static void test_cluster_failover_keeps_acked(void **state)
{
    (void)state;
    NEED_SERVER();
    need_cluster();
    char url[400];
    fresh_cluster(url, "failover", "?replicas=3&timeout_ms=1500");
    dls_medium *m = create(url);
    assert_int_equal(dls_medium_sync(m), DLS_SYNC_DATA);
    enum { N = 60 };
    uint64_t pos[N];
    unsigned failures = 0;
    int leader = leader_of(url);
    assert_true(leader >= 0);
    int follower = (leader + 1) % 3;
    for (unsigned i = 0; i < N; i++) {
        if (i == 20)
            node_kill(&g_cl[follower]);
        if (i == 30) {
            node_spawn(&g_cl[follower], g_cl, 3);
            replicas_current(url);
            leader = leader_of(url);
            assert_true(leader >= 0);
            node_kill(&g_cl[leader]);
        }
        pos[i] = append_retry(m, 7, i, &failures);
        if (i > 0)
            assert_true(pos[i] > pos[i - 1]);
    }
    node_spawn(&g_cl[leader], g_cl, 3);
    replicas_current(url);
    dls_medium *r = open_read(url);
    unsigned checked = 0, unreachable = 0;
    for (unsigned i = 0; i < N; i++) {
        read_back(r, pos[i], 7, i, &unreachable);
        checked++;
    }
    assert_int_equal(checked, N);
    fprintf(stderr,
            "# failover: %u appends acknowledged, %u tries failed meanwhile, "
            "%u reads retried (cluster unreachable)\n",
            N, failures, unreachable);
    dls_medium_del(r);
    dls_medium_del(m);
}

/* docs/jetstream.md, "Failover budget"; judge.md "Failure of the journal":
 * an exclusive writer (a journal) with the default settings — no timeout_ms
 * or retry_ms in the URL — rides through three kills of its stream's leader
 * on the three-node cluster: every append answers ok (none fails), and the
 * records read back dense and in order at their acknowledged positions (an
 * append whose outcome was unknown was read back, never stored twice).
 * Prints the time from each kill to the first acknowledged append after
 * it: the failover time a journal sees (the figure in docs/jetstream.md). */
static void test_exclusive_append_rides_through_leader_kills(void **state)
{
    (void)state;
    NEED_SERVER();
    need_cluster();
    char url[400];
    fresh_cluster(url, "ride", "?replicas=3&sync=data");
    dls_medium_del(create(url));
    dls_jetstream_settings js;
    dls_jetstream_settings_default(&js);
    js.exclusive = true;
    dls_medium *m = NULL;
    dls_where w = {0};
    assert_int_equal(dls_jetstream_open(&m, url, DLS_OPEN_APPEND, &js, &w), 0);
    enum { KILLS = 3, BEFORE = 5, AFTER = 5 };
    uint64_t failover_ms[KILLS], worst = 0;
    unsigned n = 0;
    for (unsigned k = 0; k < KILLS; k++) {
        int leader = leader_of(url);
        assert_true(leader >= 0);
        for (unsigned i = 0; i < BEFORE + 1 + AFTER; i++) {
            if (i == BEFORE)
                node_kill(&g_cl[leader]);
            uint64_t t0 = mono_ms(), pos = 0;
            uint8_t b[13];
            memset(&w, 0, sizeof w);
            int rc = dls_medium_append(m, b, mkrec(b, 9, n), &pos, &w);
            if (rc)
                fprintf(stderr, "append %u after kill %u: %s (%s)\n", n, k, dls_strerror(rc),
                        w.reason ? w.reason : "");
            assert_int_equal(rc, 0);
            assert_true(pos == n); /* dense: nothing stored twice */
            uint64_t took = mono_ms() - t0;
            if (i == BEFORE)
                failover_ms[k] = took;
            if (took > worst)
                worst = took;
            n++;
        }
        node_spawn(&g_cl[leader], g_cl, 3);
        replicas_current(url);
    }
    dls_medium *r = open_read(url);
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, r, 0), 0);
    for (unsigned i = 0; i < n; i++)
        expect_ok(c, i, 9, i);
    dls_cursor_del(c);
    dls_medium_del(r);
    dls_medium_del(m);
    fprintf(stderr, "# journal failover: append after a leader kill took %llu, %llu, %llu ms "
                    "(worst append %llu ms; budget %u ms)\n",
            (unsigned long long)failover_ms[0], (unsigned long long)failover_ms[1],
            (unsigned long long)failover_ms[2], (unsigned long long)worst, JOURNAL_RETRY_MS);
}

static int sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* issue 16 item 3 ("Done when"): the demo over the three-node cluster with
 * three-replica agent streams; mid-run a follower of agent-1's stream is
 * killed with SIGKILL and restarted, then (once every stream is whole
 * again) that stream's leader, restarted after the run. The demo
 * passes (every item done exactly once, its audit clean) and a re-audit
 * from manifest.json alone, reading the streams back, is clean. */
/* One run of the demo with the kills; false only for the demo's known
 * lost-commit stall (docs/jetstream.md: a release-with-commit that reached
 * the stream after the lease's bound leaves its item never committed, and
 * the run ends at its 120 s limit); every other failure fails the test. */
static bool demo_attempt(const char *name)
{
    char servers[256], run[128], out[160], url[400];
    servers_of(servers, sizeof servers, g_cl, 3);
    snprintf(run, sizeof run, "%s/%s", g_dir, name);
    snprintf(out, sizeof out, "%s/%s.out", g_dir, name);
    snprintf(url, sizeof url, "%s/%s-agent-1", servers, name);
    char last[400];
    snprintf(last, sizeof last, "%s/%s-agent-4", servers, name);
    const char *bin = getenv("DAOLEASE_BIN");
    assert_non_null(bin);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        char nats[300];
        snprintf(nats, sizeof nats, "%s?replicas=3&timeout_ms=15000", servers);
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execl(bin, bin, "demo", "--dir", run, "--agents", "4", "--items", "16", "--kill", "1",
              "--nats", nats, (char *)NULL);
        _exit(127);
    }
    /* wait for the agents' streams and the first grants, then kill mid-run */
    uint64_t until = mono_ms() + 60000;
    dls_medium *probe = NULL;
    while (mono_ms() < until) {
        dls_where w = {0};
        if (dls_jetstream_open(&probe, last, DLS_OPEN_READ, NULL, &w) == 0)
            break;
        sleep_ms(100);
    }
    assert_non_null(probe);
    dls_medium_del(probe);
    sleep_ms(2500);
    int leader = leader_of(url);
    assert_true(leader >= 0);
    int follower = (leader + 2) % 3;
    node_kill(&g_cl[follower]);
    sleep_ms(1500);
    node_spawn(&g_cl[follower], g_cl, 3);
    for (int k = 1; k <= 4; k++) { /* every stream whole again before the next kill */
        char each[400];
        snprintf(each, sizeof each, "%s/%s-agent-%d", servers, name, k);
        replicas_current(each);
    }
    leader = leader_of(url);
    assert_true(leader >= 0);
    node_kill(&g_cl[leader]);
    int status = 0;
    pid_t done = 0;
    until = mono_ms() + 300000;
    while ((done = waitpid(pid, &status, WNOHANG)) == 0 && mono_ms() < until)
        sleep_ms(100);
    if (done == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    /* it comes back after the run: a client that connects to a server still
     * rejoining waits on it (docs/jetstream.md, Limits), and the demo's own
     * audit connects at the end */
    node_spawn(&g_cl[leader], g_cl, 3);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        sh("tail -n 40 %s >&2", out);
    assert_true(done == pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0 &&
        sh("grep -q 'did not finish within' %s", out) == 0 &&
        sh("grep -q 'ended with\\|proposal failed\\|no answer' %s", out) != 0) {
        for (int k = 1; k <= 4; k++) { /* whole again before anything else */
            char each[400];
            snprintf(each, sizeof each, "%s/%s-agent-%d", servers, name, k);
            replicas_current(each);
        }
        return false;
    }
    /* The demo's own audit runs at its very end, while the server killed
     * last is still down: under load (a sanitized build) its connection can
     * time out. Then the run's outcome still stands — every item done
     * exactly once, checked by the demo before its audit — and the audit is
     * the re-audit below, once the cluster is whole; a run that did not get
     * that far is a failure as before. */
    bool audit_unreached =
        WIFEXITED(status) && WEXITSTATUS(status) != 0 &&
        sh("grep -q 'exactly once: 16 of 16 items done once, 0 stale results, 0 unreadable' %s",
           out) == 0 &&
        sh("grep -q 'daolease audit: .*JetStream did not answer within timeout_ms' %s", out) == 0;
    bool have_jq = sh("command -v jq > /dev/null") == 0;
    if (audit_unreached && have_jq)
        fprintf(stderr, "# the demo's own audit did not reach the cluster; re-auditing\n");
    else {
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        assert_int_equal(sh("grep -q 'demo passed' %s", out), 0);
    }
    if (!have_jq)
        return true;
    /* the server killed last is back: let it catch up before reading (a
     * client connected to a server still rejoining waits on it) */
    for (int k = 1; k <= 4; k++) {
        char each[400];
        snprintf(each, sizeof each, "%s/%s-agent-%d", servers, name, k);
        replicas_current(each);
    }
    /* re-audit from the manifest alone, as an operator would */
    assert_int_equal(sh("cd %s && \"%s\" audit --journal \"$(jq -r .journal manifest.json)\" "
                        "--grantor \"$(jq -r .grantor manifest.json)\" --keyring \"$(jq -r "
                        ".keyring manifest.json)\" --media $(jq -r '.media[]' manifest.json) "
                        "--json > audit.jsonl",
                        run, bin),
                     0);
    assert_int_equal(sh("cd %s && tail -n 1 audit.jsonl | jq -e '.exit == 0 and "
                        ".failures.double_grant == 0 and .failures.unjustified_lapse == 0' "
                        "> /dev/null",
                        run),
                     0);
    return true;
}

static void test_demo_over_cluster_with_kills(void **state)
{
    (void)state;
    NEED_SERVER();
    need_cluster();
    if (!demo_attempt("demo-nats")) {
        fprintf(stderr, "# the demo's known lost-commit stall (docs/jetstream.md); "
                        "a second run with the same kills\n");
        assert_true(demo_attempt("demo-nats2"));
    }
}

/* ---- the judge on a JetStream journal, across a whole-cluster restart -------- */

typedef struct reclaims {
    unsigned n;
    uint64_t lease;
    dls_cause cause;
} reclaims;

static int on_reclaim(void *ud, dls_bytes subject, uint64_t lease, dls_cause cause, bool commit)
{
    (void)subject;
    (void)commit;
    reclaims *r = ud;
    r->n++;
    r->lease = lease;
    r->cause = cause;
    return DLS_RECLAIM_DONE;
}

static void tick_at(dls_medium *ring, uint64_t ns)
{
    uint8_t b[64];
    size_t n;
    uint64_t pos;
    assert_int_equal(dls_tick_fact(ns, DLS_UNIT_MS, b, sizeof b, &n), 0);
    assert_int_equal(dls_medium_append(ring, b, n, &pos, NULL), 0);
}

static void judge_pass(dls_judge *j, dls_judge_pass_result *r)
{
    memset(r, 0, sizeof *r);
    int rc = dls_judge_pass(j, r);
    if (rc)
        fprintf(stderr, "pass: %s\n", dls_strerror(rc));
    assert_int_equal(rc, 0);
}

static void holder_step(dls_holder *h, uint64_t *granted, unsigned *renewed)
{
    dls_holder_result res;
    assert_int_equal(dls_holder_step(h, &res), 0);
    for (size_t i = 0; i < res.n_events; i++) {
        if (res.events[i].kind == DLS_HOLDER_GRANTED && granted)
            *granted = res.events[i].lease;
        if (res.events[i].kind == DLS_HOLDER_RENEWED && renewed)
            (*renewed)++;
    }
}

/* Does any journal record hold these bytes (e.g. "dao.judge/kept")? */
static bool journal_holds(const char *url, const char *what)
{
    dls_medium *m = open_read(url);
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    dls_record r;
    bool found = false;
    while (!found && dls_cursor_next(c, &r, NULL) == DLS_NEXT_OK)
        found = memmem(r.p, r.n, what, strlen(what)) != NULL;
    dls_cursor_del(c);
    dls_medium_del(m);
    return found;
}

/* issue 16 item 3: the judge's journal and the holder's medium are
 * three-replica streams (the journal declares sync data, so the judge
 * accepts it; it is opened `exclusive`, the writer fence). A lease is
 * granted and renewed; then all three servers are killed with SIGKILL and
 * restarted. A new judge restarts from its JetStream journal: the same
 * lease, no second grant, and the silent holder's lease lapses by silence
 * exactly once. judge.md rev 4: a restart no longer re-arms silence — when
 * the judge writes `dao.judge/kept`, the lapse comes before restart +
 * duration (no TTL reset); a judge of the revision-3 rule re-arms, and the
 * lapse then comes after it (checked the same way, so the test tightens by
 * itself once the judge keeps the observation). */
static void test_judge_restarts_from_jetstream_journal(void **state)
{
    (void)state;
    NEED_SERVER();
    need_cluster();
    char jurl[400], aurl[400], lockpath[128];
    fresh_cluster(jurl, "journal", "?replicas=3&sync=data&timeout_ms=5000");
    fresh_cluster(aurl, "agent", "?replicas=3&timeout_ms=5000");
    snprintf(lockpath, sizeof lockpath, "%s/journal-%u.lock", g_dir, g_no);

    uint8_t seed[32];
    memset(seed, 1, sizeof seed);
    dls_secret *grantor, *agent;
    assert_int_equal(dls_secret_from_seed(&grantor, "judge", DLS_KEY_ED25519, seed), 0);
    memset(seed, 2, sizeof seed);
    assert_int_equal(dls_secret_from_seed(&agent, "agent-1", DLS_KEY_ED25519, seed), 0);
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    assert_int_equal(dls_keyring_add(kr, (const uint8_t *)"judge", 5, DLS_KEY_ED25519,
                                     dls_secret_public(grantor)), 0);
    assert_int_equal(dls_keyring_add(kr, (const uint8_t *)"agent-1", 7, DLS_KEY_ED25519,
                                     dls_secret_public(agent)), 0);

    dls_jetstream_settings ex;
    dls_jetstream_settings_default(&ex);
    ex.exclusive = true;
    dls_medium *journal, *jticks, *aticks, *judge_m, *agent_m = create(aurl), *jread;
    dls_where w = {0};
    assert_int_equal(dls_jetstream_create(&journal, jurl, &ex, &w), 0);
    assert_int_equal(dls_medium_sync(journal), DLS_SYNC_DATA);
    assert_int_equal(dls_ring_new(&jticks, NULL), 0);
    assert_int_equal(dls_ring_new(&aticks, NULL), 0);
    judge_m = open_read(aurl);
    jread = open_read(jurl);

    dls_resolver *r_media, *r_jticks, *r_aticks, *r_journal;
    assert_int_equal(dls_resolver_new_signed(&r_media, dls_medium_id(judge_m), kr), 0);
    assert_int_equal(dls_resolver_new_medium(&r_jticks, dls_medium_id(jticks), "ticker", NULL), 0);
    assert_int_equal(dls_resolver_new_medium(&r_aticks, dls_medium_id(aticks), "ticker", NULL), 0);
    assert_int_equal(dls_resolver_new_signed(&r_journal, dls_medium_id(jread), kr), 0);

    dls_judge_tick_source ts = {jticks, r_jticks, "ticker", "test-basis", 0};
    dls_judge_medium jm = {judge_m, r_media};
    dls_judge_settings js;
    dls_judge_settings_default(&js);
    js.grantor = grantor;
    js.journal = journal;
    js.journal_lock_path = lockpath;
    js.ticks = &ts;
    js.nticks = 1;
    js.media = &jm;
    js.nmedia = 1;
    js.tolerance_ns = 100 * DLS_MS;
    js.cadence_ns = 1000 * DLS_MS;
    reclaims rc = {0};
    dls_judge_callbacks cb = {.reclaim = on_reclaim};
    dls_judge *j;
    int e = dls_judge_new(&j, &js, &cb, &rc, &w);
    if (e)
        fprintf(stderr, "judge: %s (%s)\n", dls_strerror(e), w.reason ? w.reason : "");
    assert_int_equal(e, 0);

    dls_cursor *jcur, *tcur;
    assert_int_equal(dls_cursor_new(&jcur, jread, 0), 0);
    assert_int_equal(dls_cursor_new(&tcur, aticks, 0), 0);
    dls_holder_parts hp = {
        .name = "agent-1", .secret = agent, .medium = agent_m, .grantor = "judge",
        .journal = jcur, .journal_resolver = r_journal, .ticks = tcur,
        .tick_resolver = r_aticks, .tick_party = "ticker",
    };
    dls_holder_settings hs;
    dls_holder_settings_default(&hs);
    dls_holder *h;
    dls_where hw = {0};
    e = dls_holder_new(&h, &hp, &hs, NULL, NULL, &hw);
    if (e)
        fprintf(stderr, "holder: %s (%s)\n", dls_strerror(e), hw.reason ? hw.reason : "");
    assert_int_equal(e, 0);

    uint64_t t = 1000 * DLS_MS;
    tick_at(jticks, t);
    tick_at(aticks, t);
    holder_step(h, NULL, NULL);
    const uint8_t subject[] = {0xa5, 'j', 'o', 'b', '-', '1'};
    dls_duration ask;
    assert_int_equal(dls_duration_make(&ask, DLS_UNIT_S, 3), 0);
    assert_int_equal(dls_holder_propose(h, subject, sizeof subject, &ask, DLS_MODE_EXCLUSIVE, NULL), 0);
    dls_judge_pass_result pr;
    judge_pass(j, &pr);
    assert_true(pr.granted == 1);
    uint64_t lease = 0;
    holder_step(h, &lease, NULL);
    assert_true(lease != 0);
    unsigned renewed = 0;
    for (int step = 0; step < 12; step++) {
        t += 250 * DLS_MS;
        tick_at(aticks, t);
        holder_step(h, NULL, &renewed);
        tick_at(jticks, t);
        judge_pass(j, &pr);
        assert_true(pr.lapsed[DLS_CAUSE_SILENCE] == 0);
    }
    assert_true(renewed >= 1);
    uint64_t last_seen = t; /* the judge's last pass that drained the holder */
    /* the holder falls silent; one more pass, nothing lapses */
    t += 500 * DLS_MS;
    tick_at(jticks, t);
    judge_pass(j, &pr);
    assert_int_equal(rc.n, 0);

    /* the whole cluster dies and comes back */
    dls_judge_del(j);
    dls_holder_del(h);
    dls_cursor_del(jcur);
    dls_medium_del(journal);
    dls_medium_del(judge_m);
    for (int i = 0; i < 3; i++)
        node_kill(&g_cl[i]);
    for (int i = 0; i < 3; i++)
        node_spawn(&g_cl[i], g_cl, 3);
    assert_int_equal(cluster_ready(90000), 0);
    uint64_t until = mono_ms() + 60000;
    while ((e = dls_jetstream_open(&journal, jurl, DLS_OPEN_APPEND, &ex, &w)) != 0 &&
           mono_ms() < until)
        sleep_ms(200);
    assert_int_equal(e, 0);
    judge_m = open_read(aurl);
    dls_resolver_del(r_media);
    assert_int_equal(dls_resolver_new_signed(&r_media, dls_medium_id(judge_m), kr), 0);
    jm = (dls_judge_medium){judge_m, r_media};
    js.journal = journal;
    e = dls_judge_new(&j, &js, &cb, &rc, &w);
    if (e)
        fprintf(stderr, "judge restart: %s (%s)\n", dls_strerror(e), w.reason ? w.reason : "");
    assert_int_equal(e, 0);
    assert_true(dls_judge_highest_lease(j) == lease);
    assert_true(dls_judge_live(j) == 1);

    t += 500 * DLS_MS;
    uint64_t restart_at = t;
    tick_at(jticks, t);
    judge_pass(j, &pr);
    assert_true(pr.restarted);
    assert_true(pr.granted == 0);
    uint64_t lapse_at = 0;
    for (int step = 0; step < 40 && rc.n == 0; step++) {
        t += 250 * DLS_MS;
        tick_at(jticks, t);
        judge_pass(j, &pr);
        assert_true(pr.granted == 0);
        if (rc.n)
            lapse_at = t;
    }
    assert_int_equal(rc.n, 1);
    assert_true(rc.lease == lease);
    assert_int_equal(rc.cause, DLS_CAUSE_SILENCE);
    uint64_t bound = 3000 * DLS_MS + js.tolerance_ns;
    if (journal_holds(jurl, "dao.judge/kept")) {
        /* rev 4: the silence clock kept running through the restart */
        assert_true(lapse_at <= last_seen + bound + js.cadence_ns);
        assert_true(lapse_at < restart_at + bound);
    } else {
        fprintf(stderr, "# judge without dao.judge/kept (revision-3 restart rule): "
                        "silence re-armed at the restart\n");
        assert_true(lapse_at >= restart_at + bound);
    }

    dls_judge_del(j);
    dls_resolver_del(r_media);
    dls_resolver_del(r_jticks);
    dls_resolver_del(r_aticks);
    dls_resolver_del(r_journal);
    dls_cursor_del(tcur);
    dls_medium_del(jread);
    dls_medium_del(judge_m);
    dls_medium_del(agent_m);
    dls_medium_del(journal);
    dls_medium_del(jticks);
    dls_medium_del(aticks);
    dls_keyring_del(kr);
    dls_secret_del(grantor);
    dls_secret_del(agent);
}

/* ---- a JetStream journal for the judge (issue 16 item 2) ------------------ */

/* issue 16 item 2; judge.md, Assembly: a JetStream journal opened
 * `exclusive` is its own writer fence, so the judge accepts it without
 * journal_lock_path; the same stream opened without exclusive and without
 * a lock path is refused (DLS_ERR_CONFIG, a reason saying to open it
 * exclusive). A single-replica stream declares sync none and stays refused
 * (the journal needs data/group: file storage on 2 or more replicas). */
static void test_judge_assembly_exclusive_journal(void **state)
{
    (void)state;
    NEED_SERVER();
    need_cluster();
    char jurl[400], one[200];
    fresh_cluster(jurl, "asm-journal", "?replicas=3&sync=data&timeout_ms=5000");
    fresh(one, "asm-single", "?sync=none");
    dls_medium_del(create(jurl));
    dls_medium_del(create(one));
    uint8_t seed[32];
    memset(seed, 7, sizeof seed);
    dls_secret *grantor;
    assert_int_equal(dls_secret_from_seed(&grantor, "judge", DLS_KEY_ED25519, seed), 0);
    dls_medium *ticks;
    assert_int_equal(dls_ring_new(&ticks, NULL), 0);
    dls_resolver *rt;
    assert_int_equal(dls_resolver_new_medium(&rt, dls_medium_id(ticks), "ticker", NULL), 0);
    dls_judge_tick_source ts = {ticks, rt, "ticker", "test-basis", 0};

    dls_jetstream_settings ex;
    dls_jetstream_settings_default(&ex);
    ex.exclusive = true;
    dls_jetstream_settings shared;
    dls_jetstream_settings_default(&shared);
    dls_medium *jx, *js_shared, *j1;
    dls_where w = {0};
    assert_int_equal(dls_jetstream_open(&jx, jurl, DLS_OPEN_APPEND, &ex, &w), 0);
    assert_int_equal(dls_jetstream_open(&js_shared, jurl, DLS_OPEN_APPEND, &shared, &w), 0);
    assert_int_equal(dls_jetstream_open(&j1, one, DLS_OPEN_APPEND, &ex, &w), 0);
    assert_true(dls_jetstream_is_exclusive(jx));
    assert_false(dls_jetstream_is_exclusive(js_shared));
    assert_false(dls_jetstream_is_exclusive(ticks)); /* not a JetStream medium */
    assert_false(dls_jetstream_is_exclusive(NULL));

    dls_judge_settings js;
    dls_judge_settings_default(&js);
    js.grantor = grantor;
    js.ticks = &ts;
    js.nticks = 1;
    js.tolerance_ns = 100 * DLS_MS;
    js.cadence_ns = 1000 * DLS_MS;
    dls_judge_callbacks cb = {.reclaim = on_reclaim};
    reclaims rc = {0};
    dls_judge *j = NULL;

    /* non-exclusive, no lock path: refused, naming the way out */
    js.journal = js_shared;
    memset(&w, 0, sizeof w);
    assert_int_equal(dls_judge_new(&j, &js, &cb, &rc, &w), DLS_ERR_CONFIG);
    assert_non_null(w.reason);
    assert_non_null(strstr(w.reason, "exclusive"));
    /* sync none (one replica): refused for its sync, exclusive or not */
    js.journal = j1;
    memset(&w, 0, sizeof w);
    assert_int_equal(dls_judge_new(&j, &js, &cb, &rc, &w), DLS_ERR_JOURNAL_SYNC);
    /* exclusive, no lock path: accepted, and its first pass appends */
    js.journal = jx;
    memset(&w, 0, sizeof w);
    int e = dls_judge_new(&j, &js, &cb, &rc, &w);
    if (e)
        fprintf(stderr, "judge: %s (%s)\n", dls_strerror(e), w.reason ? w.reason : "");
    assert_int_equal(e, 0);
    tick_at(ticks, 1000 * DLS_MS);
    dls_judge_pass_result pr;
    judge_pass(j, &pr);
    assert_true(pr.restarted);
    dls_judge_del(j);

    dls_medium_del(jx);
    dls_medium_del(js_shared);
    dls_medium_del(j1);
    dls_resolver_del(rt);
    dls_medium_del(ticks);
    dls_secret_del(grantor);
}

/* judge.md rev 5, Standby judges and takeover: a dead holder's lease on a
 * JetStream journal (three replicas) is reclaimed at the same reading with
 * or without a takeover in between, the takeover adding at most
 * takeover_after (3 x heartbeat + tolerance, in readings) and one cadence.
 * Each judge has its own exclusive handle; the standby fences by expected
 * last sequence. */
static char g_dead_url[400];

static dls_medium *dead_js_open(void)
{
    dls_jetstream_settings ex;
    dls_jetstream_settings_default(&ex);
    ex.exclusive = true;
    dls_medium *m;
    dls_where w = {0};
    assert_int_equal(dls_jetstream_open(&m, g_dead_url, DLS_OPEN_APPEND, &ex, &w), 0);
    return m;
}

static dls_medium *dead_js_journal(harness *h, dls_medium *inner)
{
    (void)h;
    dls_medium_del(inner);
    fresh_cluster(g_dead_url, "dead-journal", "?replicas=3&sync=data&timeout_ms=5000");
    dls_medium_del(create(g_dead_url));
    return dead_js_open();
}

static uint64_t dead_holder_js(bool takeover, size_t kill_at)
{
    harness h;
    jh_options o = {.wrap_journal = dead_js_journal};
    jh_init(&h, 1, 1, &o);
    h.s.heartbeat_ns = 500 * DLS_MS;
    h_open(&h);
    dls_medium *sj = NULL;
    dls_judge *sb = NULL;
    dls_where w = {0};
    if (takeover) {
        sj = dead_js_open();
        dls_judge_settings ss = h.s;
        ss.standby = true;
        ss.journal = sj;
        dls_judge_callbacks cb = {.reclaim = h_reclaim};
        assert_int_equal(dls_judge_new(&sb, &ss, &cb, &h, &w), 0);
    }
    uint64_t at = h_dead_holder_reclaimed_at(&h, sb, kill_at);
    if (takeover) {
        dls_judge_standby_info si;
        assert_int_equal(dls_judge_standby_status(sb, &si), 0);
        assert_true(si.took_over && !si.standby && !si.lost_race);
    }
    dls_judge_del(sb);
    dls_medium_del(sj);
    h_fini(&h);
    return at;
}

/* judge.md rev 5, Standby judges: a standby that cannot read its
 * JetStream journal (the whole cluster down) keeps following and makes no
 * guess from the marks it cannot see — not even once the readings are
 * takeover_after past the newest mark it read — and reads on once the
 * cluster is back. */
static void test_standby_no_guess_from_unreadable_journal(void **state)
{
    (void)state;
    NEED_SERVER();
    need_cluster();
    harness h;
    jh_options o = {.wrap_journal = dead_js_journal};
    jh_init(&h, 1, 1, &o);
    h.s.heartbeat_ns = 500 * DLS_MS; /* takeover_after 1.75 s */
    h_open(&h);
    char url[420];
    snprintf(url, sizeof url, "%s", g_dead_url);
    char *q = strstr(url, "timeout_ms=5000");
    assert_non_null(q);
    memcpy(q, "timeout_ms=0500", 15);
    dls_jetstream_settings ex;
    dls_jetstream_settings_default(&ex);
    ex.exclusive = true;
    dls_medium *sj;
    dls_where w = {0};
    assert_int_equal(dls_jetstream_open(&sj, url, DLS_OPEN_APPEND, &ex, &w), 0);
    dls_judge_settings ss = h.s;
    ss.standby = true;
    ss.journal = sj;
    dls_judge_callbacks cb = {.reclaim = h_reclaim};
    dls_judge *sb;
    assert_int_equal(dls_judge_new(&sb, &ss, &cb, &h, &w), 0);
    dls_judge_pass_result r;
    h_tick(&h, 1000 * DLS_MS);
    for (int k = 0; k < 3; k++) {
        h_tick(&h, h.now + 250 * DLS_MS);
        h_pass(&h);
        assert_int_equal(dls_judge_pass(sb, &r), 0);
    }
    h_close_judge(&h); /* the judge is not stepped while the cluster is down */
    for (int i = 0; i < 3; i++)
        node_kill(&g_cl[i]);
    dls_judge_standby_info si;
    for (int k = 0; k < 4; k++) {
        h_tick(&h, h.now + 1000 * DLS_MS); /* 4 s of readings: past takeover_after */
        assert_int_equal(dls_judge_pass(sb, &r), 0);
        assert_true(r.standby && !r.took_over);
    }
    assert_int_equal(dls_judge_standby_status(sb, &si), 0);
    assert_true(si.standby && si.read_errors >= 1);
    for (int i = 0; i < 3; i++)
        node_spawn(&g_cl[i], g_cl, 3);
    assert_int_equal(cluster_ready(90000), 0);
    dls_judge_del(sb);
    dls_medium_del(sj);
    h_fini(&h);
}

static void test_dead_holder_same_reading_jetstream(void **state)
{
    (void)state;
    NEED_SERVER();
    need_cluster();
    uint64_t plain = dead_holder_js(false, 0);
    assert_true(plain > 0);
    const uint64_t after = 3 * 500 * DLS_MS + 250 * DLS_MS, cadence = 1000 * DLS_MS;
    /* killed while the holder renews, after it died, and just before its lease is due */
    const size_t kills[] = {4, 10, 16};
    for (size_t k = 0; k < sizeof kills / sizeof kills[0]; k++) {
        uint64_t t = dead_holder_js(true, kills[k]);
        print_message("kill at step %zu: reclaimed at %" PRIu64 " ms, without a takeover %" PRIu64
                      " ms\n", kills[k], (uint64_t)(t / DLS_MS), (uint64_t)(plain / DLS_MS));
        assert_true(t + cadence >= plain);
        assert_true(t <= plain + after + cadence);
    }
}

/* Starts `daolease ARGS...` in `dir`, stdout/stderr to dir/<tag>.out|err. */
/* judge.md rev 5, Standby judges and takeover, on a JetStream journal: a
 * standby needs an exclusive handle and a heartbeat; it follows while the
 * judge marks, takes over once the readings are takeover_after past the
 * newest mark (its first append names the last sequence it read); the
 * stale judge, continued, stops at its next append (DLS_ERR_LOCKED under
 * a fatal DLS_ERR_JOURNAL_WRITE) and reclaims nothing. */
/* A standby whose takeover a rival standby beats: in its took_over
 * callback (after its fence, before its first append) the rival passes. */
typedef struct racer {
    reclaims r; /* first: on_reclaim's user */
    dls_judge *rival;
    bool rival_took;
} racer;

static void race_rival(void *u, uint64_t pass)
{
    (void)pass;
    racer *x = u;
    dls_judge_pass_result pr;
    memset(&pr, 0, sizeof pr);
    assert_int_equal(dls_judge_pass(x->rival, &pr), 0);
    x->rival_took = pr.took_over;
}

static void test_standby_takes_over_jetstream_journal(void **state)
{
    (void)state;
    NEED_SERVER();
    need_cluster();
    char jurl[400], aurl[200];
    fresh_cluster(jurl, "standby-journal", "?replicas=3&sync=data&timeout_ms=5000");
    dls_medium_del(create(jurl));
    fresh(aurl, "standby-agent", "?sync=none");
    dls_medium *agent_m = create(aurl);
    dls_medium *judge_m = open_read(aurl);
    uint8_t seed[32];
    memset(seed, 7, sizeof seed);
    dls_secret *grantor;
    assert_int_equal(dls_secret_from_seed(&grantor, "judge", DLS_KEY_ED25519, seed), 0);
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    assert_int_equal(dls_keyring_add(kr, (const uint8_t *)"judge", 5, DLS_KEY_ED25519,
                                     dls_secret_public(grantor)),
                     0);
    dls_medium *ticks;
    assert_int_equal(dls_ring_new(&ticks, NULL), 0);
    dls_resolver *rt, *rm;
    assert_int_equal(dls_resolver_new_medium(&rt, dls_medium_id(ticks), "ticker", NULL), 0);
    assert_int_equal(dls_resolver_new_signed(&rm, dls_medium_id(judge_m), kr), 0);
    dls_judge_tick_source ts = {ticks, rt, "ticker", "test-basis", 0};
    dls_judge_medium jm = {judge_m, rm};
    dls_jetstream_settings ex;
    dls_jetstream_settings_default(&ex);
    ex.exclusive = true;
    dls_medium *j1m, *j2m;
    dls_where w = {0};
    assert_int_equal(dls_jetstream_open(&j1m, jurl, DLS_OPEN_APPEND, &ex, &w), 0);
    assert_int_equal(dls_jetstream_open(&j2m, jurl, DLS_OPEN_APPEND, &ex, &w), 0);
    dls_judge_settings js;
    dls_judge_settings_default(&js);
    js.grantor = grantor;
    js.journal = j1m;
    js.ticks = &ts;
    js.nticks = 1;
    js.media = &jm;
    js.nmedia = 1;
    js.tolerance_ns = 100 * DLS_MS;
    js.cadence_ns = 1000 * DLS_MS;
    js.heartbeat_ns = 500 * DLS_MS; /* takeover_after: 1600 ms */
    dls_judge_callbacks cb = {.reclaim = on_reclaim};
    reclaims rc1 = {0}, rc2 = {0};
    dls_judge *j1, *sb = NULL;
    assert_int_equal(dls_judge_new(&j1, &js, &cb, &rc1, &w), 0);
    uint64_t t = 1000 * DLS_MS;
    dls_judge_pass_result pr;
    tick_at(ticks, t);
    judge_pass(j1, &pr);
    dls_judge_settings ss = js;
    ss.standby = true;
    ss.journal = j2m;
    ss.heartbeat_ns = 0;
    assert_int_equal(dls_judge_new(&sb, &ss, &cb, &rc2, &w), DLS_ERR_CONFIG);
    ss.heartbeat_ns = js.heartbeat_ns;
    assert_int_equal(dls_judge_new(&sb, &ss, &cb, &rc2, &w), 0);
    /* a second standby; when it takes over, the first one passes first */
    dls_medium *j3m;
    assert_int_equal(dls_jetstream_open(&j3m, jurl, DLS_OPEN_APPEND, &ex, &w), 0);
    racer rc3 = {.rival = sb};
    dls_judge_callbacks cb3 = {.reclaim = on_reclaim, .took_over = race_rival};
    dls_judge *sb2 = NULL;
    ss.journal = j3m;
    assert_int_equal(dls_judge_new(&sb2, &ss, &cb3, &rc3, &w), 0);
    for (int k = 0; k < 6; k++) {
        t += 300 * DLS_MS;
        tick_at(ticks, t);
        judge_pass(j1, &pr);
        judge_pass(sb2, &pr);
        assert_true(pr.standby && !pr.took_over);
        judge_pass(sb, &pr);
        assert_true(pr.standby && !pr.took_over);
    }
    uint64_t last_mark = t - 300 * DLS_MS;
    uint64_t took = 0;
    for (int k = 0; k < 12 && !took; k++) {
        t += 250 * DLS_MS;
        tick_at(ticks, t);
        memset(&pr, 0, sizeof pr);
        int e = dls_judge_pass(sb2, &pr);
        if (e) { /* its fence set, the rival took over inside its callback */
            assert_int_equal(e, DLS_ERR_JOURNAL_WRITE);
            assert_true(rc3.rival_took);
            took = t;
            break;
        }
        assert_true(pr.standby);
    }
    assert_true(took > 0);
    dls_judge_standby_info si;
    assert_int_equal(dls_judge_standby_status(sb2, &si), 0);
    assert_true(si.lost_race); /* exactly one took over: the rival */
    assert_int_equal(dls_judge_standby_status(sb, &si), 0);
    assert_true(si.took_over && !si.standby && !si.lost_race);
    assert_int_equal(rc3.r.n, 0);
    assert_true(took >= last_mark + 1300 * DLS_MS);
    assert_true(took <= last_mark + 2600 * DLS_MS);
    uint8_t b[13];
    uint64_t pos;
    assert_int_equal(dls_medium_append(agent_m, b, mkrec(b, 1, 0), &pos, &w), 0);
    unsigned reclaims_before = rc1.n;
    memset(&pr, 0, sizeof pr);
    assert_int_equal(dls_judge_pass(j1, &pr), DLS_ERR_JOURNAL_WRITE);
    assert_int_equal(dls_judge_journal_failure(j1, &w), DLS_ERR_LOCKED);
    assert_int_equal(rc1.n, reclaims_before);
    t += 250 * DLS_MS;
    tick_at(ticks, t);
    judge_pass(sb, &pr);
    assert_false(pr.standby);
    dls_judge_del(j1);
    dls_judge_del(sb);
    dls_judge_del(sb2);
    dls_medium_del(j1m);
    dls_medium_del(j2m);
    dls_medium_del(j3m);
    dls_resolver_del(rt);
    dls_resolver_del(rm);
    dls_medium_del(judge_m);
    dls_medium_del(agent_m);
    dls_medium_del(ticks);
    dls_keyring_del(kr);
    dls_secret_del(grantor);
}

static pid_t cli_start(const char *dir, const char *tag, const char *const *args)
{
    const char *bin = getenv("DAOLEASE_BIN");
    assert_non_null(bin);
    char out[256], err[256];
    snprintf(out, sizeof out, "%s/%s.out", dir, tag);
    snprintf(err, sizeof err, "%s/%s.err", dir, tag);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || chdir(dir) != 0)
            _exit(126);
        dup2(o, 1);
        dup2(e, 2);
        char *argv[16];
        size_t i = 0;
        argv[i++] = (char *)bin;
        for (; args[i - 1] && i < 15; i++)
            argv[i] = (char *)args[i - 1];
        argv[i] = NULL;
        execv(bin, argv);
        _exit(127);
    }
    return pid;
}

/* Waits for pid at most `ms`; its exit status, or -1 (then killed). */
static int cli_wait(pid_t pid, unsigned ms)
{
    int st;
    for (unsigned i = 0; i < ms / 10; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        sleep_ms(10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

/* The journal's pass marks carrying `restarted` (one per judge start that
 * wrote, judge.md "Journal"), every record verifying as the grantor's. */
static unsigned restarts(const char *url, dls_keyring *kr)
{
    dls_medium *m = open_read(url);
    dls_resolver *res;
    assert_int_equal(dls_resolver_new_signed(&res, dls_medium_id(m), kr), 0);
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    unsigned n = 0;
    dls_record r;
    while (dls_cursor_next(c, &r, NULL) == DLS_NEXT_OK) {
        dls_attribution a;
        dls_resolver_attribute(res, r.p, r.n, &a);
        assert_true(a.attributed);
        dls_mark_view v;
        if (dls_mark_classify(a.fact.p, a.fact.n) == DLS_MARK_REC_MARK &&
            dls_mark_decode(a.fact.p, a.fact.n, &v, NULL) == 0 && v.restarted)
            n++;
    }
    dls_cursor_del(c);
    dls_resolver_del(res);
    dls_medium_del(m);
    return n;
}

static bool file_has(const char *dir, const char *name, const char *needle)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    char buf[8192] = "";
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    bool yes = strstr(buf, needle) != NULL;
    if (!yes)
        fprintf(stderr, "%s: wanted \"%s\", got: %s\n", path, needle, buf);
    return yes;
}

/* issue 16 item 2 (docs/jetstream.md, A journal on JetStream; judge.md,
 * Assembly): `daolease judge` takes a nats:// journal on the three-node
 * cluster (R3, file storage, sync data). A missing journal is an error
 * unless --create. Two judges on two "machines" (two working directories
 * sharing nothing but the cluster) started at the same moment: the
 * journal's fence (expected-last-sequence, `exclusive`) lets exactly one
 * write — the other's first append fails and it exits non-zero saying
 * another writer appended — and `daolease run` holders are granted by the
 * one left. */
static void test_judge_cli_two_machines(void **state)
{
    (void)state;
    NEED_SERVER();
    const char *bin = getenv("DAOLEASE_BIN");
    if (!bin) {
        skip();
        return;
    }
    need_cluster();
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/machine-a-%u", g_dir, ++g_no);
    snprintf(b, sizeof b, "%s/machine-b-%u", g_dir, g_no);
    assert_int_equal(mkdir(a, 0700), 0);
    assert_int_equal(mkdir(b, 0700), 0);
    assert_int_equal(sh("cd %s && \"%s\" keygen arbiter >> keyring && \"%s\" keygen a1 >> "
                        "keyring && cp keyring arbiter.secret %s/",
                        a, bin, bin, b),
                     0);
    char jurl[400], murl[400], cfg[2000], path[256];
    fresh_cluster(jurl, "cli-journal", "?replicas=3&sync=data&timeout_ms=5000");
    fresh_cluster(murl, "cli-agent", "?replicas=3&timeout_ms=5000");
    dls_medium_del(create(murl));
    int cn = snprintf(cfg, sizeof cfg,
                      "{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", \"keyring\": "
                      "\"keyring\", \"journal\": \"%s\", \"media\": [\"%s\"], "
                      "\"tolerance\": {\"ms\": 250}, \"cadence\": {\"ms\": 100}, "
                      "\"duration\": {\"s\": 3}}\n",
                      jurl, murl);
    assert_true(cn > 0 && (size_t)cn < sizeof cfg);
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/judge.json", k ? b : a);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(cfg, f);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/run.json", a);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"party\": \"a1\", \"key\": \"a1.secret\", \"keyring\": \"keyring\", "
               "\"grantor\": \"arbiter\", \"journal\": \"%s\", \"medium\": \"%s\", "
               "\"duration\": {\"s\": 3}}\n",
            jurl, murl);
    fclose(f);
    dls_keyring *kr;
    snprintf(path, sizeof path, "%s/keyring", a);
    dls_where w = {0};
    assert_int_equal(dls_keyring_load(&kr, path, &w), 0);

    /* a missing journal: an error naming the way out, nothing created */
    const char *run[] = {"judge", "--config", "judge.json", NULL};
    const char *first[] = {"judge", "--config", "judge.json", "--create", "--passes", "2", NULL};
    assert_int_not_equal(cli_wait(cli_start(a, "judge-0", run), 30000), 0);
    assert_true(file_has(a, "judge-0.err", "no such journal"));
    assert_true(file_has(a, "judge-0.err", "--create"));
    dls_medium *probe = NULL;
    assert_int_equal(dls_jetstream_open(&probe, jurl, DLS_OPEN_READ, NULL, &w),
                     DLS_ERR_NOTFOUND);
    /* --create: the journal is made (R3 file storage: sync data holds) */
    assert_int_equal(cli_wait(cli_start(a, "judge-1", first), 60000), 0);
    assert_int_equal(restarts(jurl, kr), 1);

    /* both machines start their judge at once */
    pid_t both[2] = {cli_start(a, "judge-2", run), cli_start(b, "judge-2", run)};
    int loser = -1, st = 0;
    for (int i = 0; i < 3000 && loser < 0; i++, sleep_ms(10))
        for (int k = 0; k < 2 && loser < 0; k++)
            if (waitpid(both[k], &st, WNOHANG) == both[k])
                loser = k;
    unsigned n = restarts(jurl, kr);
    if (loser >= 0) {
        /* either both opened at the same sequence and the loser's first
         * append failed (it wrote nothing: 2 restarts), or the later one
         * took over and the earlier one stopped at its next append, which
         * its own pass made before the holder below could (3 restarts;
         * docs/jetstream.md: a judge that lost the journal stops at its
         * first attempt to write) */
        if (n != 2)
            fprintf(stderr, "judge-2: the later judge took over, the earlier stopped "
                            "(%u restarts)\n", n);
        assert_true(n == 2 || n == 3);
    } else {
        /* the later one opened after the other's first append and wrote
         * after it (never inside it); the earlier one fails at its next
         * append, which the holder below causes (docs/jetstream.md) */
        fprintf(stderr, "judge-2: the later judge took over (%u restarts)\n", n);
        assert_int_equal(n, 3);
    }

    /* a holder on machine A is granted by the judge left, and releases */
    const char *hold[] = {"run", "--config", "run.json", "--subject", "s1", "--wait", "30s",
                          "--", "true", NULL};
    assert_int_equal(cli_wait(cli_start(a, "run-1", hold), 90000), 0);
    for (int i = 0; i < 3000 && loser < 0; i++, sleep_ms(10))
        for (int k = 0; k < 2 && loser < 0; k++)
            if (waitpid(both[k], &st, WNOHANG) == both[k])
                loser = k;
    assert_true(loser >= 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) != 0);
    assert_true(file_has(loser ? b : a, "judge-2.err", "another writer appended"));
    assert_int_equal(waitpid(both[1 - loser], NULL, WNOHANG), 0); /* the other runs */
    const char *again[] = {"run", "--config", "run.json", "--subject", "s2", "--wait", "30s",
                           "--", "true", NULL};
    assert_int_equal(cli_wait(cli_start(a, "run-2", again), 90000), 0);
    kill(both[1 - loser], SIGTERM);
    assert_int_equal(cli_wait(both[1 - loser], 30000), 0);
    /* the journal reads back whole under the grantor's key */
    assert_int_equal(sh("\"%s\" dump --json '%s' > %s/dump.jsonl", bin, jurl, a), 0);
    assert_true(restarts(jurl, kr) >= 2);
    dls_keyring_del(kr);
}

/* The lines of dir/name holding `needle`. */
static unsigned lines_with(const char *dir, const char *name, const char *needle)
{
    char path[256], line[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    unsigned c = 0;
    while (f && fgets(line, sizeof line, f))
        c += strstr(line, needle) != NULL;
    if (f)
        fclose(f);
    return c;
}

/* Waits at most `ms` until dir/name has `want` lines holding `needle`. */
static bool wait_lines(const char *dir, const char *name, const char *needle, unsigned want,
                       unsigned ms)
{
    for (unsigned i = 0; i < ms / 20; i++, sleep_ms(20))
        if (lines_with(dir, name, needle) >= want)
            return true;
    fprintf(stderr, "%s/%s: fewer than %u lines with \"%s\"\n", dir, name, want, needle);
    return false;
}

/* `daolease judge --standby` on a JetStream journal (judge.md rev 5,
 * Standby judges; cli.md, Operators (revision 5), `judge --standby`): two
 * standbys beside a `daolease judge` on an R3 journal of the cluster; the
 * judge is killed with SIGKILL (takeover_after 3 s: well past the time a
 * judge's append may take on a loaded machine). Exactly one standby takes over (one
 * took_over line); the other keeps following it — when both presumed the
 * judge gone at once, its first append was refused and it says so once on
 * stderr (which of the two cases happens is the scheduler's) — and takes
 * over when the new judge is killed too. The journal audits clean with
 * both takeovers. */
static void test_judge_cli_standby_jetstream(void **state)
{
    (void)state;
    NEED_SERVER();
    const char *bin = getenv("DAOLEASE_BIN");
    if (!bin) {
        skip();
        return;
    }
    need_cluster();
    char dir[128], jurl[400];
    snprintf(dir, sizeof dir, "%s/standby-%u", g_dir, ++g_no);
    assert_int_equal(mkdir(dir, 0700), 0);
    fresh_cluster(jurl, "cli-standby", "?replicas=3&sync=data&timeout_ms=5000");
    assert_int_equal(sh("cd %s && \"%s\" keygen arbiter >> keyring && \"%s\" stream create a1.dls "
                        "> /dev/null && printf '%%s' '{\"party\": \"arbiter\", \"key\": "
                        "\"arbiter.secret\", \"keyring\": \"keyring\", \"journal\": \"%s\", "
                        "\"media\": [\"a1.dls\"], \"tolerance\": {\"ms\": 250}, \"cadence\": "
                        "{\"ms\": 100}, \"heartbeat\": {\"ms\": 300}, \"takeover_after\": {\"s\": 3}, "
                        "\"create_journal\": true}' "
                        "> judge.json",
                        dir, bin, bin, jurl),
                     0);
    const char *judge[] = {"judge", "--config", "judge.json", NULL};
    const char *standby[] = {"judge", "--standby", "--config", "judge.json", NULL};
    pid_t active = cli_start(dir, "judge", judge);
    assert_true(wait_lines(dir, "judge.out", "\"status\": true", 1, 60000));
    pid_t sb[2] = {cli_start(dir, "s0", standby), cli_start(dir, "s1", standby)};
    assert_true(wait_lines(dir, "s0.out", "\"standby\": true, \"journal\": \"nats://", 1, 30000));
    assert_true(wait_lines(dir, "s1.out", "\"standby\": true, \"journal\": \"nats://", 1, 30000));
    kill(active, SIGKILL);
    assert_int_equal(cli_wait(active, 10000), 128 + SIGKILL);

    const char *took = "\"took_over\": \"nats://", *lost = "lost the takeover race on nats://";
    int winner = -1;
    for (int i = 0; i < 1500 && winner < 0; i++, sleep_ms(20))
        for (int k = 0; k < 2 && winner < 0; k++)
            if (lines_with(dir, k ? "s1.out" : "s0.out", took))
                winner = k;
    assert_true(winner >= 0);
    const char *wout = winner ? "s1.out" : "s0.out";
    const char *lout = winner ? "s0.out" : "s1.out", *lerr = winner ? "s0.err" : "s1.err";
    unsigned following = lines_with(dir, lout, "\"standby\": true");
    if (!wait_lines(dir, lout, "\"standby\": true", following + 2, 30000)) {
        sh("cd %s && grep -hv '\"st' s0.out s1.out s0.err s1.err >&2", dir);
        fail();
    }
    assert_int_equal(lines_with(dir, lout, took), 0);
    assert_true(lines_with(dir, lerr, lost) <= 1);
    if (lines_with(dir, lerr, lost))
        fprintf(stderr, "the standbys raced: the loser follows again\n");
    assert_int_equal(lines_with(dir, wout, took), 1);
    assert_int_equal(waitpid(sb[1 - winner], NULL, WNOHANG), 0);

    kill(sb[winner], SIGKILL);
    assert_int_equal(cli_wait(sb[winner], 10000), 128 + SIGKILL);
    assert_true(wait_lines(dir, lout, took, 1, 30000));
    assert_true(lines_with(dir, lerr, lost) <= 1);
    kill(sb[1 - winner], SIGTERM);
    assert_int_equal(cli_wait(sb[1 - winner], 30000), 0);
    /* judge.md rev 5, Audit: clean, both takeovers counted */
    assert_int_equal(sh("cd %s && \"%s\" audit --journal '%s' --keyring keyring --grantor "
                        "arbiter --media a1.dls --json > audit.out && grep -q '\"takeovers\": "
                        "\\[[0-9]*, [0-9]*\\]' audit.out",
                        dir, bin, jurl),
                     0);
}

/* A live agent for test_judge_rides_through_journal_leader_kills: a
 * process that runs `daolease run --config CFG --subject TAG-i -- sleep 2`
 * for i = 1, 2, … until `stop` exists, appending "i status" to
 * dir/TAG.log for each. */
static pid_t agent_loop(const char *dir, const char *cfg, const char *tag, const char *stop)
{
    const char *bin = getenv("DAOLEASE_BIN");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid != 0)
        return pid;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    char log[256], subj[64];
    snprintf(log, sizeof log, "%s/%s.log", dir, tag);
    for (unsigned i = 1; access(stop, F_OK) != 0 && i < 10000; i++) {
        snprintf(subj, sizeof subj, "%s-%u", tag, i);
        pid_t run = fork();
        if (run == 0) {
            int null = open("/dev/null", O_WRONLY);
            char err[256];
            snprintf(err, sizeof err, "%s/%s.err", dir, tag);
            int e = open(err, O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (null < 0 || e < 0 || chdir(dir) != 0)
                _exit(126);
            dup2(null, 1);
            dup2(e, 2);
            execl(bin, bin, "run", "--config", cfg, "--subject", subj, "--wait", "60s", "--",
                  "sleep", "2", (char *)NULL);
            _exit(127);
        }
        int st = 0;
        if (run < 0 || waitpid(run, &st, 0) != run)
            _exit(1);
        FILE *f = fopen(log, "a");
        if (f) {
            fprintf(f, "%u %d\n", i, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
            fclose(f);
        }
    }
    _exit(0);
}

/* Lines "i 0" of dir/TAG.log: runs whose command finished under the lease
 * and whose release with commit was acknowledged. */
static unsigned agent_done(const char *dir, const char *tag, unsigned *runs)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s.log", dir, tag);
    FILE *f = fopen(path, "r");
    unsigned i, ok = 0;
    int st;
    *runs = 0;
    while (f && fscanf(f, "%u %d", &i, &st) == 2) {
        (*runs)++;
        ok += st == 0;
    }
    if (f)
        fclose(f);
    return ok;
}

/* The journal read whole: every record the grantor's, no gap, no error;
 * pass numbers of first mark records strictly increasing (no record
 * stored twice). Answers the number of records. */
static unsigned journal_whole(const char *url, dls_keyring *kr)
{
    dls_medium *m = open_read(url);
    dls_resolver *res;
    assert_int_equal(dls_resolver_new_signed(&res, dls_medium_id(m), kr), 0);
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    unsigned n = 0;
    uint64_t last_pass = 0;
    dls_record r;
    dls_where w = {0};
    dls_next nx;
    while ((nx = dls_cursor_next(c, &r, &w)) == DLS_NEXT_OK) {
        assert_true(r.position == n);
        dls_attribution a;
        dls_resolver_attribute(res, r.p, r.n, &a);
        assert_true(a.attributed);
        dls_mark_view v;
        if (dls_mark_classify(a.fact.p, a.fact.n) == DLS_MARK_REC_MARK &&
            dls_mark_decode(a.fact.p, a.fact.n, &v, NULL) == 0 && !v.continued) {
            assert_true(v.pass > last_pass);
            last_pass = v.pass;
        }
        n++;
    }
    if (nx != DLS_NEXT_BLOCKED)
        fprintf(stderr, "journal at %u: %s (%s)\n", n, dls_next_name(nx),
                w.reason ? w.reason : "");
    assert_int_equal(nx, DLS_NEXT_BLOCKED);
    dls_cursor_del(c);
    dls_resolver_del(res);
    dls_medium_del(m);
    return n;
}

/* judge.md "Failure of the journal"; docs/jetstream.md "Failover budget":
 * `daolease judge` on an R3 journal of the three-node cluster with the
 * default settings (the URL names no timeout_ms or retry_ms), two live
 * agents (`daolease run` holders claiming, renewing and releasing with
 * commit, their media R3 on the same cluster), and the journal's leader
 * SIGKILLed three times (restarted after each failover). The judge never
 * exits and wrote one restart mark only; the journal reads back whole,
 * every record the grantor's, no pass stored twice; agents completed work
 * after the kills; the audit of the journal and the agents' media is
 * clean (no double grant, no unjustified lapse). Before the failover
 * budget the judge exited at the first kill ("journal write or sync
 * failed (fatal)"). */
static void test_judge_rides_through_journal_leader_kills(void **state)
{
    (void)state;
    NEED_SERVER();
    const char *bin = getenv("DAOLEASE_BIN");
    if (!bin) {
        skip();
        return;
    }
    need_cluster();
    char dir[128], stop[160];
    snprintf(dir, sizeof dir, "%s/ride-%u", g_dir, ++g_no);
    snprintf(stop, sizeof stop, "%s/stop", dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(sh("cd %s && \"%s\" keygen arbiter >> keyring && \"%s\" keygen a1 >> "
                        "keyring && \"%s\" keygen a2 >> keyring",
                        dir, bin, bin, bin),
                     0);
    char jurl[400], m1[400], m2[400], path[256];
    fresh_cluster(jurl, "ride-journal", "?replicas=3&sync=data");
    fresh_cluster(m1, "ride-a1", "?replicas=3");
    fresh_cluster(m2, "ride-a2", "?replicas=3");
    dls_medium_del(create(m1));
    dls_medium_del(create(m2));
    snprintf(path, sizeof path, "%s/judge.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", \"keyring\": \"keyring\", "
               "\"journal\": \"%s\", \"media\": [\"%s\", \"%s\"], \"create_journal\": true, "
               "\"tolerance\": {\"ms\": 250}, \"cadence\": {\"ms\": 100}, "
               "\"duration\": {\"s\": 10}}\n",
            jurl, m1, m2);
    fclose(f);
    for (int k = 1; k <= 2; k++) {
        snprintf(path, sizeof path, "%s/a%d.json", dir, k);
        f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "{\"party\": \"a%d\", \"key\": \"a%d.secret\", \"keyring\": \"keyring\", "
                   "\"grantor\": \"arbiter\", \"journal\": \"%s\", \"medium\": \"%s\", "
                   "\"duration\": {\"s\": 10}}\n",
                k, k, jurl, k == 1 ? m1 : m2);
        fclose(f);
    }
    dls_keyring *kr;
    snprintf(path, sizeof path, "%s/keyring", dir);
    dls_where w = {0};
    assert_int_equal(dls_keyring_load(&kr, path, &w), 0);

    const char *run[] = {"judge", "--config", "judge.json", NULL};
    pid_t judge = cli_start(dir, "judge", run);
    for (int i = 0; i < 600; i++, sleep_ms(100)) { /* the judge made the journal */
        dls_medium *probe = NULL;
        int rc = dls_jetstream_open(&probe, jurl, DLS_OPEN_READ, NULL, &w);
        dls_medium_del(probe);
        if (rc == 0 && journal_holds(jurl, "restarted"))
            break;
    }
    pid_t agents[2] = {agent_loop(dir, "a1.json", "a1", stop),
                       agent_loop(dir, "a2.json", "a2", stop)};
    unsigned runs = 0, before = 0;
    for (int i = 0; i < 600 && before < 2; i++, sleep_ms(100))
        before = agent_done(dir, "a1", &runs) + agent_done(dir, "a2", &runs);
    assert_true(before >= 2); /* holders are working before the first kill */
    int st = 0;
    for (int k = 0; k < 3; k++) {
        int leader = leader_of(jurl);
        assert_true(leader >= 0);
        uint64_t t0 = mono_ms();
        node_kill(&g_cl[leader]);
        int next = -1;
        while ((next = leader_of(jurl)) < 0 || next == leader)
            assert_true(mono_ms() - t0 < 60000);
        uint64_t elected = mono_ms() - t0;
        sleep_ms(3000); /* the judge and the agents carry on with two servers */
        assert_int_equal(waitpid(judge, &st, WNOHANG), 0);
        node_spawn(&g_cl[leader], g_cl, 3);
        replicas_current(jurl);
        sleep_ms(2000);
        assert_int_equal(waitpid(judge, &st, WNOHANG), 0); /* the judge never exits */
        fprintf(stderr, "# kill %d of the journal's leader: a new leader seen after %llu ms\n",
                k + 1, (unsigned long long)elected);
    }
    /* the agents complete work after the kills */
    unsigned r1, r2, after = 0;
    for (int i = 0; i < 600 && after < before + 2; i++, sleep_ms(100))
        after = agent_done(dir, "a1", &r1) + agent_done(dir, "a2", &r2);
    assert_true(after >= before + 2);
    assert_int_equal(sh("touch %s", stop), 0);
    for (int k = 0; k < 2; k++)
        assert_int_not_equal(cli_wait(agents[k], 90000), -1);
    sleep_ms(1000); /* the judge records the last releases */
    assert_int_equal(waitpid(judge, &st, WNOHANG), 0);
    kill(judge, SIGTERM);
    assert_int_equal(cli_wait(judge, 60000), 0);
    assert_int_equal(sh("! grep -q fatal %s/judge.err", dir), 0);
    assert_int_equal(restarts(jurl, kr), 1); /* one judge start, never restarted */
    replicas_current(m1);
    replicas_current(m2);
    unsigned n = journal_whole(jurl, kr);
    agent_done(dir, "a1", &r1);
    agent_done(dir, "a2", &r2);
    assert_int_equal(sh("cd %s && \"%s\" audit --journal '%s' --grantor arbiter --keyring "
                        "keyring --media '%s' '%s' --json > audit.jsonl",
                        dir, bin, jurl, m1, m2),
                     0);
    assert_int_equal(sh("cd %s && tail -n 1 audit.jsonl | jq -e '.exit == 0 and "
                        ".failures.double_grant == 0 and .failures.unjustified_lapse == 0' "
                        "> /dev/null",
                        dir),
                     0);
    fprintf(stderr, "# judge rode through 3 leader kills: %u journal records, %u agent runs "
                    "(%u completed with commit), audit clean\n",
            n, r1 + r2, after);
    dls_keyring_del(kr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_parse),
        cmocka_unit_test(test_positions_ok_blocked),
        cmocka_unit_test(test_exists_notfound_other_id),
        cmocka_unit_test(test_seal_end),
        cmocka_unit_test(test_gap_max_msgs),
        cmocka_unit_test(test_foreign_and_deleted_messages),
        cmocka_unit_test(test_concurrent_writers_and_exclusive),
        cmocka_unit_test(test_takeover_expect_after),
        cmocka_unit_test(test_unreachable_and_restart),
        cmocka_unit_test(test_forked_processes_keep_their_answers),
        cmocka_unit_test(test_cluster_failover_keeps_acked),
        cmocka_unit_test(test_exclusive_append_rides_through_leader_kills),
        cmocka_unit_test(test_demo_over_cluster_with_kills),
        cmocka_unit_test(test_judge_restarts_from_jetstream_journal),
        cmocka_unit_test(test_judge_assembly_exclusive_journal),
        cmocka_unit_test(test_standby_takes_over_jetstream_journal),
        cmocka_unit_test(test_dead_holder_same_reading_jetstream),
        cmocka_unit_test(test_standby_no_guess_from_unreadable_journal),
        cmocka_unit_test(test_judge_cli_two_machines),
        cmocka_unit_test(test_judge_cli_standby_jetstream),
        cmocka_unit_test(test_judge_rides_through_journal_leader_kills),
    };
    if (getenv("DLS_ONLY")) /* run one test by name (e.g. while iterating) */
        cmocka_set_test_filter(getenv("DLS_ONLY"));
    return cmocka_run_group_tests_name("jetstream", tests, group_setup, group_teardown);
}

#else /* built without libnats */

#include <stdio.h>

int main(void)
{
    printf("1..0 # SKIP built without libnats\n");
    return 77;
}

#endif
