/* Benchmark of the NATS JetStream medium (issue 16 item 4): appends/s
 * through the medium (single appends, and batches of 64) and records/s read
 * by a cursor, each against the raw JetStream operation measured in the
 * same run on the same servers by the same program:
 *   append_single   dls_medium_append     vs js_Publish (synchronous, no headers)
 *   append_batch64  dls_medium_append_batch of 64
 *                                         vs 64 js_PublishAsync + PublishAsyncComplete
 *   cursor_read     dls_cursor_next       vs js_GetMsg by sequence
 * on one node (stream with 1 replica) and on a three-node cluster (3
 * replicas), each started by the program on free loopback ports.
 *
 *   bench_jetstream [N]     N records per measurement (default 2000)
 *
 * Prints JSON Lines {"bench","metric","value","baseline","ratio"}.
 */
#include <stdio.h>

#ifdef DLS_HAVE_JETSTREAM

#include <errno.h>
#include <fcntl.h>
#include <nats/nats.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daolease/fact.h"
#include "daolease/jetstream.h"
#include "daolease/stream.h"
#include "common.h"

#define REC_LEN 128u /* about one signed renewal envelope */
#define BATCH 64u

static void line(const char *metric, const char *setup, double value, double baseline)
{
    char name[160];
    snprintf(name, sizeof name, "%s_%s", metric, setup);
    bench_line("jetstream", name, value, baseline);
}

static void die(const char *what, int rc, const dls_where *w)
{
    fprintf(stderr, "bench_jetstream: %s: %s (%s)\n", what, dls_strerror(rc),
            w && w->reason ? w->reason : "");
    exit(1);
}

static void mkrec(uint8_t *b, unsigned i)
{
    static const char k[] = "dao.bench";
    size_t kn = sizeof k - 1;
    b[0] = 0x81;
    b[1] = (uint8_t)(0xa0 | kn);
    memcpy(b + 2, k, kn);
    b[2 + kn] = 0xc4;
    b[3 + kn] = (uint8_t)(REC_LEN - 4 - kn);
    memset(b + 4 + kn, 0x5a, REC_LEN - 4 - kn);
    memcpy(b + REC_LEN - sizeof i, &i, sizeof i);
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof a;
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &l) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

typedef struct srv {
    pid_t pid;
    int port, cport;
    char name[8], sd[96];
} srv;

static char g_dir[64];

static void spawn(srv *s, const srv *all, int n)
{
    char port[16], cl[64], routes[256] = "";
    snprintf(port, sizeof port, "%d", s->port);
    snprintf(cl, sizeof cl, "nats://127.0.0.1:%d", s->cport);
    for (int i = 0; i < n; i++)
        if (&all[i] != s) {
            size_t l = strlen(routes);
            snprintf(routes + l, sizeof routes - l, "%snats://127.0.0.1:%d", l ? "," : "",
                     all[i].cport);
        }
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
            dup2(null, 1);
            dup2(null, 2);
        }
        if (n > 1)
            execlp("nats-server", "nats-server", "-js", "-a", "127.0.0.1", "-p", port, "-sd",
                   s->sd, "-n", s->name, "--cluster", cl, "--routes", routes, "--cluster_name",
                   "bench", (char *)NULL);
        else
            execlp("nats-server", "nats-server", "-js", "-a", "127.0.0.1", "-p", port, "-sd",
                   s->sd, "-n", s->name, (char *)NULL);
        _exit(127);
    }
    s->pid = pid;
}

static unsigned g_no;

/* "nats://127.0.0.1:p1,…/name?…" */
static void url_of(char *out, size_t cap, const srv *s, int n, const char *name, const char *q)
{
    size_t l = (size_t)snprintf(out, cap, "nats://");
    for (int i = 0; i < n; i++)
        l += (size_t)snprintf(out + l, cap - l, "%s127.0.0.1:%d", i ? "," : "", s[i].port);
    snprintf(out + l, cap - l, "/%s%s", name, q);
}

static dls_medium *create_retry(const srv *s, int n, const char *tag, char *url, size_t cap)
{
    char name[32];
    double until = bench_now_s() + 60;
    for (;;) {
        snprintf(name, sizeof name, "%s-%u", tag, ++g_no);
        url_of(url, cap, s, n, name, n > 1 ? "?replicas=3&timeout_ms=5000" : "?timeout_ms=5000");
        dls_medium *m = NULL;
        dls_where w = {0};
        int rc = dls_jetstream_create(&m, url, NULL, &w);
        if (rc == 0)
            return m;
        if (bench_now_s() > until)
            die("create", rc, &w);
        struct timespec ts = {0, 200000000};
        nanosleep(&ts, NULL);
    }
}

static void raw_connect(const srv *s, int n, natsConnection **nc, jsCtx **js)
{
    char u[3][64];
    const char *list[3];
    for (int i = 0; i < n; i++) {
        snprintf(u[i], sizeof u[i], "nats://127.0.0.1:%d", s[i].port);
        list[i] = u[i];
    }
    natsOptions *o = NULL;
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = 5000;
    if (natsOptions_Create(&o) != NATS_OK || natsOptions_SetServers(o, list, n) != NATS_OK ||
        natsOptions_SetSendAsap(o, true) != NATS_OK || natsConnection_Connect(nc, o) != NATS_OK ||
        natsConnection_JetStream(js, *nc, &jo) != NATS_OK) {
        fprintf(stderr, "bench_jetstream: raw connect failed\n");
        exit(1);
    }
    natsOptions_Destroy(o);
}

/* A raw stream beside the medium's, same storage and replicas. */
static void raw_stream(jsCtx *js, int n, char *name, char *subj)
{
    snprintf(name, 32, "raw-%u", ++g_no);
    snprintf(subj, 48, "raw.%s", name);
    const char *subjects[1] = {subj};
    jsStreamConfig c;
    jsStreamConfig_Init(&c);
    c.Name = name;
    c.Subjects = subjects;
    c.SubjectsLen = 1;
    c.Storage = js_FileStorage;
    c.Replicas = n > 1 ? 3 : 1;
    if (js_AddStream(NULL, js, &c, NULL, NULL) != NATS_OK) {
        fprintf(stderr, "bench_jetstream: raw stream failed\n");
        exit(1);
    }
}

static void run(const srv *s, int n, const char *setup, unsigned N)
{
    uint8_t rec[REC_LEN];
    char url[400], name[32], subj[48];
    dls_where w = {0};
    natsConnection *nc;
    jsCtx *js;
    /* single appends (creating the medium waits for the servers) */
    dls_medium *m = create_retry(s, n, "single", url, sizeof url);
    raw_connect(s, n, &nc, &js);
    raw_stream(js, n, name, subj);
    double t0 = bench_now_s();
    for (unsigned i = 0; i < N; i++) {
        mkrec(rec, i);
        uint64_t pos;
        int rc = dls_medium_append(m, rec, REC_LEN, &pos, &w);
        if (rc)
            die("append", rc, &w);
    }
    double med = N / (bench_now_s() - t0);
    t0 = bench_now_s();
    for (unsigned i = 0; i < N; i++) {
        mkrec(rec, i);
        if (js_Publish(NULL, js, subj, rec, REC_LEN, NULL, NULL) != NATS_OK) {
            fprintf(stderr, "bench_jetstream: raw publish failed\n");
            exit(1);
        }
    }
    double rawv = N / (bench_now_s() - t0);
    line("append_single", setup, med, rawv);

    /* cursor reads of those N records */
    dls_cursor *c;
    if (dls_cursor_new(&c, m, 0))
        die("cursor", DLS_ERR_NOMEM, NULL);
    t0 = bench_now_s();
    dls_record r;
    unsigned got = 0;
    while (dls_cursor_next(c, &r, &w) == DLS_NEXT_OK)
        got++;
    double rd = got / (bench_now_s() - t0);
    dls_cursor_del(c);
    t0 = bench_now_s();
    for (uint64_t q = 1; q <= N; q++) {
        natsMsg *msg = NULL;
        if (js_GetMsg(&msg, js, name, q, NULL, NULL) != NATS_OK) {
            fprintf(stderr, "bench_jetstream: raw get failed\n");
            exit(1);
        }
        natsMsg_Destroy(msg);
    }
    double rawrd = N / (bench_now_s() - t0);
    if (got != N)
        fprintf(stderr, "bench_jetstream: read %u of %u\n", got, N);
    line("cursor_read", setup, rd, rawrd);
    dls_medium_del(m);

    /* batches of 64 */
    m = create_retry(s, n, "batch", url, sizeof url);
    raw_stream(js, n, name, subj);
    static uint8_t bufs[BATCH][REC_LEN];
    const uint8_t *recs[BATCH];
    size_t lens[BATCH];
    unsigned batches = N / BATCH ? N / BATCH : 1;
    t0 = bench_now_s();
    for (unsigned b = 0; b < batches; b++) {
        for (unsigned i = 0; i < BATCH; i++) {
            mkrec(bufs[i], b * BATCH + i);
            recs[i] = bufs[i];
            lens[i] = REC_LEN;
        }
        uint64_t first;
        int rc = dls_medium_append_batch(m, recs, lens, BATCH, &first, &w);
        if (rc)
            die("append_batch", rc, &w);
    }
    med = batches * BATCH / (bench_now_s() - t0);
    t0 = bench_now_s();
    for (unsigned b = 0; b < batches; b++) {
        for (unsigned i = 0; i < BATCH; i++) {
            mkrec(rec, b * BATCH + i);
            if (js_PublishAsync(js, subj, rec, REC_LEN, NULL) != NATS_OK) {
                fprintf(stderr, "bench_jetstream: raw async publish failed\n");
                exit(1);
            }
        }
        if (js_PublishAsyncComplete(js, NULL) != NATS_OK) {
            fprintf(stderr, "bench_jetstream: raw async complete failed\n");
            exit(1);
        }
    }
    rawv = batches * BATCH / (bench_now_s() - t0);
    line("append_batch64", setup, med, rawv);
    dls_medium_del(m);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
}

int main(int argc, char **argv)
{
    unsigned N = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 2000;
    if (N == 0)
        N = 2000;
    char path[4096]; /* Debian installs nats-server in /usr/sbin */
    snprintf(path, sizeof path, "/usr/sbin:%s", getenv("PATH") ? getenv("PATH") : "/usr/bin");
    setenv("PATH", path, 1);
    snprintf(g_dir, sizeof g_dir, "/tmp/dls-bench-nats-XXXXXX");
    if (!mkdtemp(g_dir)) {
        perror("bench_jetstream: mkdtemp");
        return 1;
    }
    srv s[4];
    memset(s, 0, sizeof s);
    for (int i = 0; i < 4; i++) {
        s[i].port = free_port();
        s[i].cport = free_port();
        snprintf(s[i].name, sizeof s[i].name, "b%d", i);
        snprintf(s[i].sd, sizeof s[i].sd, "%s/%s", g_dir, s[i].name);
    }
    spawn(&s[3], &s[3], 1);
    run(&s[3], 1, "1node", N);
    kill(s[3].pid, SIGKILL);
    waitpid(s[3].pid, NULL, 0);
    for (int i = 0; i < 3; i++)
        spawn(&s[i], s, 3);
    run(s, 3, "3nodes_r3", N);
    for (int i = 0; i < 3; i++) {
        kill(s[i].pid, SIGKILL);
        waitpid(s[i].pid, NULL, 0);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_jetstream: could not remove %s\n", g_dir);
    nats_Close();
    return 0;
}

#else

int main(void)
{
    printf("bench_jetstream: built without libnats\n");
    return 0;
}

#endif
