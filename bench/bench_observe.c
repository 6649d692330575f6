/* bench_observe — what the HTTP endpoint (docs/observe.md) costs the judge
 * it watches: the judge's pass time with the endpoint off, then on with
 * 200 concurrent clients polling it, side by side in one run.
 *
 * One judge holds 10^5 live leases (DLS_BENCH_LEASES), each its own subject,
 * granted to 64 MAC holders; every pass drains RATE/10 renewals (MAC
 * envelopes on a file medium, signed and appended before the pass's clock
 * starts), ten passes a second, so RATE renewals/s flow (DLS_BENCH_RATE,
 * default 100,000). After a warm-up of SECONDS/10, phases of SECONDS/2 each
 * (DLS_BENCH_SECONDS, default 30 a side) in the order off, on, on, off, so
 * that a shared machine's drift falls on both sides:
 *
 *   off: the pass loop alone;
 *   on:  `judge --http`'s path: obs_live_pass after each pass (counters
 *        published every pass, the ledger of 10^5 leases copied at most
 *        every 250 ms while watched), the libmicrohttpd server on a free
 *        loopback port, and CLIENTS (200) threads each polling once a
 *        second, alternately the page's /status.json?limit=50 and /metrics.
 *
 * Prints JSON Lines (bench/common.h):
 *
 *   pass_ms_mean_http_on   baseline: pass_ms_mean_http_off (target ratio <= 1.10)
 *   pass_cpu_ms_mean_http_on  the judge thread's CPU time in a pass
 *                          (CLOCK_THREAD_CPUTIME_ID: waiting for a core on
 *                          a shared machine excluded); baseline: off
 *   publish_cpu_ms_per_pass  the judge thread's CPU in obs_live_pass (the
 *                          snapshot; the lease table copy amortised);
 *                          baseline: the pass's CPU, endpoint off
 *   pass_ms_p99_http_on    baseline: the same with the endpoint off
 *   loop_ms_per_pass_http_on  the pass plus obs_live_pass (the snapshot's
 *                          cost to the judge's thread); baseline: the pass
 *                          alone, endpoint off
 *   requests_per_s         answers with status 200 a second; baseline: the
 *                          rate asked (CLIENTS a second)
 *   renewals_per_s         renewals counted a second, endpoint on; baseline:
 *                          RATE
 *
 * Benchmarks may read the clock; the library never does. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "cli/config.h"
#include "cli/observe/live.h"
#include "daolease/attrib.h"
#include "daolease/fact.h"
#include "daolease/judge.h"
#include "daolease/medium_impl.h"
#include "daolease/stream.h"
#include "common.h"
#include "sink.h"

#define HOLDERS 64
#define CLIENTS 200

/* cli/main.c's, for the endpoint's messages */
void dls_cli_error(const char *sub, const char *fmt, ...);
void dls_cli_error(const char *sub, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench_observe %s: ", sub);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void check(int rc, const char *what)
{
    if (rc) {
        fprintf(stderr, "bench_observe: %s: %s\n", what, dls_strerror(rc));
        exit(1);
    }
}

/* ---- the judge ------------------------------------------------------------------------- */

typedef struct bench {
    dls_secret *grantor, *holders[HOLDERS];
    dls_keyring *kr;
    dls_medium *journal, *ticks, *medium;
    dls_resolver *tickr, *res;
    dls_judge *j;
    obs_live *obs;
    uint64_t now, seq, cursor;
    size_t n;
    char lock[64], path[256];
} bench;

static int reclaim(void *u, dls_bytes s, uint64_t l, dls_cause c, bool commit)
{
    bench *b = u;
    obs_live_lapsed(b->obs, b->j, s, l, c);
    (void)commit;
    return DLS_RECLAIM_DONE;
}

static void granted(void *u, const dls_judge_lease_info *l)
{
    bench *b = u;
    obs_live_granted(b->obs, l);
}

static void tick(bench *b)
{
    b->now += 100 * DLS_MS;
    dls_fact f;
    dls_duration d;
    check(dls_duration_make(&d, DLS_UNIT_NS, b->now), "duration");
    dls_fact_tick(&f, d);
    uint8_t buf[64];
    size_t n;
    check(dls_fact_encode(&f, buf, sizeof buf, &n), "encode");
    check(dls_medium_append(b->ticks, buf, n, NULL, NULL), "tick");
}

static void setup(bench *b, size_t n, const char *dir)
{
    memset(b, 0, sizeof *b);
    b->n = n;
    snprintf(b->path, sizeof b->path, "%s/bench_observe.%d.dls", dir, (int)getpid());
    uint8_t seed[32];
    memset(seed, 1, sizeof seed);
    check(dls_secret_from_seed(&b->grantor, "arbiter", DLS_KEY_ED25519, seed), "grantor");
    check(dls_keyring_new(&b->kr), "keyring");
    for (int i = 0; i < HOLDERS; i++) {
        char name[16];
        snprintf(name, sizeof name, "m-%d", i);
        memset(seed, 2 + i, sizeof seed);
        check(dls_secret_from_seed(&b->holders[i], name, DLS_KEY_MAC, seed), "holder");
        check(dls_keyring_add(b->kr, (const uint8_t *)name, strlen(name), DLS_KEY_MAC,
                              dls_secret_public(b->holders[i])),
              "keyring add");
    }
    sink *s = calloc(1, sizeof *s);
    dls_medium_info info;
    memset(&info, 0, sizeof info);
    info.kind = DLS_MEDIUM_REDIS; /* no path: an explicit lock file */
    info.retention = DLS_RETAIN_ALL;
    info.sync = DLS_SYNC_DATA;
    info.mode = DLS_OPEN_APPEND;
    memset(info.id, 0x4a, 16);
    info.name = "sink";
    check(dls_medium_wrap(&b->journal, &sink_ops, s, &info), "journal");
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.ring_capacity = 64;
    check(dls_ring_new(&b->ticks, &ms), "ticks");
    ms.sync = DLS_SYNC_NONE;
    ms.exclusive = true;
    dls_where w;
    memset(&w, 0, sizeof w);
    check(dls_medium_create(&b->medium, DLS_MEDIUM_FILE, b->path, &ms, &w), "medium");
    check(dls_resolver_new_medium(&b->tickr, dls_medium_id(b->ticks), "ticker", NULL), "tickr");
    check(dls_resolver_new_signed(&b->res, dls_medium_id(b->medium), b->kr), "resolver");
    snprintf(b->lock, sizeof b->lock, "/tmp/bench_observe.%d.lock", (int)getpid());
    dls_judge_settings st;
    dls_judge_settings_default(&st);
    st.grantor = b->grantor;
    st.journal = b->journal;
    st.journal_lock_path = b->lock;
    dls_judge_tick_source ts = {b->ticks, b->tickr, "ticker", "bench", 0};
    st.ticks = &ts;
    st.nticks = 1;
    dls_judge_medium jm = {b->medium, b->res};
    st.media = &jm;
    st.nmedia = 1;
    st.tolerance_ns = 250 * DLS_MS;
    st.cadence_ns = 1000 * DLS_MS;
    check(dls_duration_make(&st.default_duration, DLS_UNIT_H, 1), "duration");
    st.drain_budget = 0;
    dls_judge_callbacks cb = {.reclaim = reclaim, .granted = granted};
    check(dls_judge_new(&b->j, &st, &cb, b, NULL), "judge");
    b->now = 1000 * DLS_MS;
    for (size_t i = 0; i < n;) {
        for (size_t k = 0; k < 10000 && i < n; k++, i++) {
            char sub[24];
            uint8_t v[32];
            size_t vn;
            int len = snprintf(sub, sizeof sub, "s%09zu", i);
            check(dls_value_str(v, sizeof v, sub, (size_t)len, &vn), "subject");
            const char *name = dls_secret_name(b->holders[i % HOLDERS]);
            check(dls_judge_grant(b->j, (dls_bytes){v, vn},
                                  (dls_bytes){(const uint8_t *)name, strlen(name)}, 0, NULL,
                                  NULL, NULL),
                  "grant");
        }
        tick(b);
        check(dls_judge_pass(b->j, NULL), "pass");
    }
}

static void teardown(bench *b)
{
    dls_judge_del(b->j);
    dls_resolver_del(b->tickr);
    dls_resolver_del(b->res);
    dls_medium_del(b->ticks);
    dls_medium_del(b->medium);
    dls_medium_del(b->journal);
    for (int i = 0; i < HOLDERS; i++)
        dls_secret_del(b->holders[i]);
    dls_secret_del(b->grantor);
    dls_keyring_del(b->kr);
    remove(b->lock);
    remove(b->path);
}

/* `count` renewals, round-robin over the ledger (lease i+1 is holder i % 64's). */
static void renewals(bench *b, size_t count)
{
    for (size_t k = 0; k < count; k++) {
        uint64_t i = b->cursor++ % b->n;
        dls_fact f;
        dls_fact_renewal(&f, i + 1, ++b->seq);
        uint8_t fact[128], env[320];
        size_t fn, en;
        check(dls_fact_encode(&f, fact, sizeof fact, &fn), "encode");
        check(dls_envelope_seal(b->holders[i % HOLDERS], dls_medium_id(b->medium), fact, fn,
                                env, sizeof env, &en),
              "seal");
        check(dls_medium_append(b->medium, env, en, NULL, NULL), "append");
    }
}

/* ---- the clients ----------------------------------------------------------------------- */

typedef struct clients {
    int port;
    atomic_bool stop;
    atomic_ulong ok, failed;
    pthread_t t[CLIENTS];
} clients;

typedef struct client_arg {
    clients *c;
    int i;
} client_arg;

static bool get(int port, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    bool ok = false;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
        char req[256], buf[65536];
        int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
                                          "close\r\n\r\n", path);
        if (send(fd, req, (size_t)n, MSG_NOSIGNAL) == n) {
            ssize_t k, total = 0;
            char head[16] = "";
            while ((k = recv(fd, buf, sizeof buf, 0)) > 0) {
                if (!total)
                    memcpy(head, buf, k < 15 ? (size_t)k : 15);
                total += k;
            }
            ok = !strncmp(head, "HTTP/1.1 200", 12);
        }
    }
    close(fd);
    return ok;
}

static void *client_main(void *p)
{
    client_arg *a = p;
    clients *c = a->c;
    /* spread over the second */
    struct timespec ts = {0, (long)(a->i % 100) * 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
    for (unsigned k = (unsigned)a->i; !atomic_load(&c->stop); k++) {
        double t0 = bench_now_s();
        bool ok = get(c->port, k % 2 ? "/metrics" : "/status.json?limit=50");
        atomic_fetch_add(ok ? &c->ok : &c->failed, 1);
        double left = 1.0 - (bench_now_s() - t0);
        while (left > 0 && !atomic_load(&c->stop)) {
            double step = left < 0.05 ? left : 0.05;
            struct timespec s = {0, (long)(step * 1e9)};
            nanosleep(&s, NULL);
            left -= step;
        }
    }
    return NULL;
}

/* ---- phases ---------------------------------------------------------------------------- */

typedef struct stats {
    double *pass_ms;
    size_t n, cap;
    double loop_ms_sum;
    double cpu_ms_sum;        /* the judge thread's CPU in the passes */
    double publish_cpu_ms_sum;/* ... in obs_live_pass after them */
    uint64_t renewals;
    double seconds;
} stats;

static void keep(stats *s, double ms)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1024;
        s->pass_ms = realloc(s->pass_ms, s->cap * sizeof *s->pass_ms);
        if (!s->pass_ms)
            exit(1);
    }
    s->pass_ms[s->n++] = ms;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double mean(const stats *s)
{
    double sum = 0;
    for (size_t i = 0; i < s->n; i++)
        sum += s->pass_ms[i];
    return s->n ? sum / (double)s->n : 0;
}

static double p99(stats *s)
{
    if (!s->n)
        return 0;
    qsort(s->pass_ms, s->n, sizeof *s->pass_ms, cmp);
    return s->pass_ms[(size_t)((double)(s->n - 1) * 0.99)];
}

/* Ten passes a second for `secs`, each draining rate/10 renewals. */
static void phase(bench *b, stats *s, double secs, size_t rate, bool on)
{
    size_t per = rate / 10;
    double start = bench_now_s(), next = start;
    while (bench_now_s() - start < secs) {
        renewals(b, per);
        tick(b);
        dls_judge_pass_result r;
        double c0 = bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
        double t0 = bench_now_s();
        check(dls_judge_pass(b->j, &r), "pass");
        double t1 = bench_now_s();
        double c1 = bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
        s->cpu_ms_sum += (c1 - c0) * 1e3;
        if (on)
            obs_live_pass(b->obs, b->j, &r, t1 - t0, 0);
        s->publish_cpu_ms_sum += (bench_clock_s(CLOCK_THREAD_CPUTIME_ID) - c1) * 1e3;
        double t2 = bench_now_s();
        keep(s, (t1 - t0) * 1e3);
        s->loop_ms_sum += (t2 - t0) * 1e3;
        s->renewals += r.renewals;
        if (r.renewals != per) {
            fprintf(stderr, "bench_observe: a pass counted %llu renewals of %zu\n",
                    (unsigned long long)r.renewals, per);
            exit(1);
        }
        next += 0.1;
        double wait = next - bench_now_s();
        if (wait > 0) {
            struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
            nanosleep(&ts, NULL);
        }
    }
    s->seconds += bench_now_s() - start;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : getenv("DLS_BENCH_DIR") ? getenv("DLS_BENCH_DIR")
                                                                   : "/tmp";
    size_t n = getenv("DLS_BENCH_LEASES") ? strtoull(getenv("DLS_BENCH_LEASES"), NULL, 10)
                                          : 100000;
    size_t rate = getenv("DLS_BENCH_RATE") ? strtoull(getenv("DLS_BENCH_RATE"), NULL, 10)
                                           : 100000;
    double secs = getenv("DLS_BENCH_SECONDS") ? atof(getenv("DLS_BENCH_SECONDS")) : 30;
    if (n < 1000 || rate < 10 || secs <= 0) {
        fprintf(stderr, "bench_observe: DLS_BENCH_LEASES >= 1000, DLS_BENCH_RATE >= 10\n");
        return 2;
    }
    bench b;
    setup(&b, n, dir);
    const char *media[] = {"bench.dls"};
    obs_live_settings os = {.addr_port = "127.0.0.1:0", .media = media, .nmedia = 1,
                            .cadence_ns = 100 * DLS_MS, .tolerance_ns = 250 * DLS_MS};
    check(obs_live_start(&b.obs, "bench", &os), "endpoint");
    clients *c = calloc(1, sizeof *c);
    client_arg args[CLIENTS];
    c->port = (int)obs_live_port(b.obs);
    stats off = {0}, on = {0}, warm = {0};
    phase(&b, &warm, secs / 10, rate, false); /* warm-up, not counted */
    free(warm.pass_ms);
    for (int round = 0; round < 2; round++) {
        /* off, on, then on, off: neither side always comes first */
        if (round == 0)
            phase(&b, &off, secs / 2, rate, false);
        atomic_store(&c->stop, false);
        obs_live_publish(b.obs, b.j);
        for (int i = 0; i < CLIENTS; i++) {
            args[i] = (client_arg){c, i};
            if (pthread_create(&c->t[i], NULL, client_main, &args[i])) {
                fprintf(stderr, "bench_observe: cannot start a client thread\n");
                return 1;
            }
        }
        phase(&b, &on, secs / 2, rate, true);
        atomic_store(&c->stop, true);
        for (int i = 0; i < CLIENTS; i++)
            pthread_join(c->t[i], NULL);
        if (round == 1)
            phase(&b, &off, secs / 2, rate, false);
    }
    double off_mean = mean(&off), on_mean = mean(&on);
    char m[96];
    snprintf(m, sizeof m, "pass_ms_mean_http_on_%zu", n);
    bench_line("observe", m, on_mean, off_mean);
    double off_loop = off.n ? off.loop_ms_sum / (double)off.n : 0;
    snprintf(m, sizeof m, "loop_ms_per_pass_http_on_%zu", n);
    bench_line("observe", m, on.n ? on.loop_ms_sum / (double)on.n : 0, off_loop);
    snprintf(m, sizeof m, "pass_cpu_ms_mean_http_on_%zu", n);
    bench_line("observe", m, on.n ? on.cpu_ms_sum / (double)on.n : 0,
               off.n ? off.cpu_ms_sum / (double)off.n : 0);
    snprintf(m, sizeof m, "publish_cpu_ms_per_pass_%zu", n);
    bench_line("observe", m, on.n ? on.publish_cpu_ms_sum / (double)on.n : 0,
               off.n ? off.cpu_ms_sum / (double)off.n : 0);
    snprintf(m, sizeof m, "pass_ms_p99_http_on_%zu", n);
    double on99 = p99(&on);
    bench_line("observe", m, on99, p99(&off));
    bench_line("observe", "requests_per_s", (double)atomic_load(&c->ok) / on.seconds, CLIENTS);
    bench_line("observe", "requests_failed", (double)atomic_load(&c->failed), 0);
    bench_line("observe", "renewals_per_s_http_on", (double)on.renewals / on.seconds,
               (double)rate);
    obs_live_stop(b.obs);
    b.obs = NULL;
    teardown(&b);
    free(off.pass_ms);
    free(on.pass_ms);
    free(c);
    return 0;
}
