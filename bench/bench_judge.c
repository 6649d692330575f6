/* bench_judge — the cost of a judge pass as the ledger grows (judge.md: a
 * pass costs O(facts drained + leases due · log n), never a scan of the
 * ledger).
 *
 * For 10^3, 10^4, 10^5 and 10^6 live leases (DLS_BENCH_MAX caps the
 * largest), one judge holds the leases (each with its own subject); then
 * passes each drain 10,000 renewals signed with MAC keys, then 10,000
 * signed with Ed25519. Prints JSON Lines:
 *
 *   pass_ms_<n>_<kind>        mean pass time; baseline: the same at 10^3
 *                             (target: ratio <= 1.5 at 10^6)
 *   renewals_per_s_<n>_<kind> baseline: the raw verify rate of the same
 *                             primitive measured in this run (target for
 *                             Ed25519: ratio >= 0.9)
 *   bytes_per_lease_<n>       the ledger's bytes per live lease (subject
 *                             bytes included); baseline 256 (target <= 1)
 *   rss_bytes_per_lease_<n>   the process's resident growth per lease
 *
 * Renewals are signed and appended before the clock starts: only the pass
 * is timed. The journal is a medium that keeps nothing (the benchmark is not
 * about the disk). Benchmarks may read the clock; the library never does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "daolease/attrib.h"
#include "daolease/fact.h"
#include "daolease/judge.h"
#include "daolease/medium_impl.h"
#include "daolease/stream.h"

#define RENEWALS 10000
#define PASSES 10
#define HOLDERS 64
#define MS DLS_MS

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return rss * 4096;
}

static void line(const char *metric, double value, double baseline)
{
    printf("{\"bench\": \"judge\", \"metric\": \"%s\", \"value\": %.6g, \"baseline\": %.6g, "
           "\"ratio\": %.4g}\n",
           metric, value, baseline, baseline != 0 ? value / baseline : 0.0);
    fflush(stdout);
}

static void check(int rc, const char *what)
{
    if (rc) {
        fprintf(stderr, "bench_judge: %s: %s\n", what, dls_strerror(rc));
        exit(1);
    }
}

/* ---- a journal that keeps nothing ------------------------------------------------------ */

typedef struct sink {
    uint64_t next;
} sink;

static int sink_batch(void *impl, const uint8_t *const *recs, const size_t *lens, size_t count,
                      uint64_t *first, dls_where *w)
{
    (void)recs, (void)lens, (void)w;
    sink *s = impl;
    *first = s->next;
    s->next += count;
    return 0;
}

static int sink_cursor_new(void *impl, uint64_t from, void **out)
{
    (void)impl, (void)from;
    *out = malloc(1);
    return *out ? 0 : DLS_ERR_NOMEM;
}

static dls_next sink_next(void *c, dls_record *rec, dls_where *w)
{
    (void)c, (void)rec, (void)w;
    return DLS_NEXT_BLOCKED;
}

static void sink_cursor_del(void *c) { free(c); }
static void sink_del(void *impl) { free(impl); }

static const dls_medium_ops sink_ops = {
    .kind_name = "sink",
    .append_batch = sink_batch,
    .cursor_new = sink_cursor_new,
    .cursor_next = sink_next,
    .cursor_del = sink_cursor_del,
    .del = sink_del,
};

/* ---- the world ------------------------------------------------------------------------------ */

typedef struct bench {
    dls_secret *grantor;
    dls_secret *holders[2][HOLDERS]; /* [0]: MAC, [1]: Ed25519 */
    dls_keyring *kr;
    dls_medium *journal, *ticks, *medium;
    dls_resolver *tickr, *res;
    dls_judge *j;
    uint64_t now;
    char lock[64];
} bench;

static int reclaim(void *u, dls_bytes s, uint64_t l, dls_cause c, bool commit)
{
    (void)u, (void)s, (void)l, (void)c, (void)commit;
    return DLS_RECLAIM_DONE;
}

static void tick(bench *b)
{
    b->now += 10 * MS;
    dls_fact f;
    dls_duration d;
    check(dls_duration_make(&d, DLS_UNIT_NS, b->now), "duration");
    dls_fact_tick(&f, d);
    uint8_t buf[64];
    size_t n;
    check(dls_fact_encode(&f, buf, sizeof buf, &n), "encode");
    check(dls_medium_append(b->ticks, buf, n, NULL, NULL), "tick");
}

static void pass(bench *b, dls_judge_pass_result *r)
{
    tick(b);
    check(dls_judge_pass(b->j, r), "pass");
}

static void setup(bench *b, size_t n)
{
    memset(b, 0, sizeof *b);
    uint8_t seed[32];
    memset(seed, 1, sizeof seed);
    check(dls_secret_from_seed(&b->grantor, "arbiter", DLS_KEY_ED25519, seed), "grantor");
    check(dls_keyring_new(&b->kr), "keyring");
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < HOLDERS; i++) {
            char name[16];
            snprintf(name, sizeof name, "%c-%d", k ? 'e' : 'm', i);
            memset(seed, 2 + i + 64 * k, sizeof seed);
            dls_key_kind kind = k ? DLS_KEY_ED25519 : DLS_KEY_MAC;
            check(dls_secret_from_seed(&b->holders[k][i], name, kind, seed), "holder");
            check(dls_keyring_add(b->kr, (const uint8_t *)name, strlen(name), kind,
                                  dls_secret_public(b->holders[k][i])),
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
    ms.ring_capacity = 2 * RENEWALS;
    check(dls_ring_new(&b->medium, &ms), "medium");
    check(dls_resolver_new_medium(&b->tickr, dls_medium_id(b->ticks), "ticker", NULL), "tickr");
    check(dls_resolver_new_signed(&b->res, dls_medium_id(b->medium), b->kr), "resolver");
    snprintf(b->lock, sizeof b->lock, "/tmp/bench_judge.%d.lock", (int)getpid());
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
    st.tolerance_ns = 250 * MS;
    st.cadence_ns = 1000 * MS;
    check(dls_duration_make(&st.default_duration, DLS_UNIT_H, 1), "duration");
    st.drain_budget = 0;
    dls_judge_callbacks cb = {.reclaim = reclaim};
    check(dls_judge_new(&b->j, &st, &cb, NULL, NULL), "judge");
    b->now = 1000 * MS;
    /* n unsolicited grants, 10,000 a pass: lease i to holder i % 128 */
    for (size_t i = 0; i < n;) {
        for (size_t k = 0; k < RENEWALS && i < n; k++, i++) {
            char sub[24];
            uint8_t v[32];
            size_t vn;
            int len = snprintf(sub, sizeof sub, "s%09zu", i);
            check(dls_value_str(v, sizeof v, sub, (size_t)len, &vn), "subject");
            const dls_secret *h = b->holders[i % 2][(i / 2) % HOLDERS];
            const char *name = dls_secret_name(h);
            check(dls_judge_grant(b->j, (dls_bytes){v, vn},
                                  (dls_bytes){(const uint8_t *)name, strlen(name)}, 0, NULL, NULL,
                                  NULL),
                  "grant");
        }
        dls_judge_pass_result r;
        pass(b, &r);
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
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < HOLDERS; i++)
            dls_secret_del(b->holders[k][i]);
    dls_secret_del(b->grantor);
    dls_keyring_del(b->kr);
    remove(b->lock);
}

/* Appends RENEWALS renewals of leases of one kind (MAC: odd ids, Ed25519:
 * even ids), round-robin over the ledger. */
static void renewals(bench *b, size_t n, int kind, uint64_t *cursor, uint64_t *seq)
{
    for (size_t k = 0; k < RENEWALS; k++) {
        uint64_t i = (*cursor)++ % ((n + 1 - (size_t)kind) / 2); /* i-th lease of this kind */
        uint64_t idx = 2 * i + (uint64_t)kind;                   /* its grant index */
        uint64_t lease = idx + 1;
        const dls_secret *h = b->holders[kind][(idx / 2) % HOLDERS];
        dls_fact f;
        dls_fact_renewal(&f, lease, ++*seq);
        uint8_t fact[128], env[320];
        size_t fn, en;
        check(dls_fact_encode(&f, fact, sizeof fact, &fn), "encode");
        check(dls_envelope_seal(h, dls_medium_id(b->medium), fact, fn, env, sizeof env, &en),
              "seal");
        check(dls_medium_append(b->medium, env, en, NULL, NULL), "append");
    }
}

/* The raw verify rate of one primitive on envelope-sized messages. */
static double raw_verify_rate(int kind)
{
    uint8_t msg[120], pk[32], sk[64], sig[64], key[32], mac[32];
    memset(msg, 7, sizeof msg);
    crypto_sign_keypair(pk, sk);
    crypto_sign_detached(sig, NULL, msg, sizeof msg, sk);
    crypto_auth_keygen(key);
    crypto_auth(mac, msg, sizeof msg, key);
    const int N = kind ? 20000 : 200000;
    volatile int ok = 0;
    double t0 = now_s();
    for (int i = 0; i < N; i++)
        ok += kind ? crypto_sign_verify_detached(sig, msg, sizeof msg, pk) == 0
                   : crypto_auth_verify(mac, msg, sizeof msg, key) == 0;
    double t = now_s() - t0;
    return ok == N ? N / t : 0;
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    size_t max = 1000000;
    const char *env = getenv("DLS_BENCH_MAX");
    if (env)
        max = strtoull(env, NULL, 0);
    double raw[2] = {raw_verify_rate(0), raw_verify_rate(1)};
    line("raw_mac_verify_per_s", raw[0], raw[0]);
    line("raw_ed25519_verify_per_s", raw[1], raw[1]);
    double base_ms[2] = {0, 0};
    for (size_t n = 1000; n <= max; n *= 10) {
        bench b;
        long rss0 = rss_bytes();
        setup(&b, n);
        long rss1 = rss_bytes();
        char m[64];
        snprintf(m, sizeof m, "bytes_per_lease_%zu", n);
        line(m, (double)dls_judge_memory(b.j) / (double)n, 256);
        snprintf(m, sizeof m, "rss_bytes_per_lease_%zu", n);
        line(m, (double)(rss1 - rss0) / (double)n, 256);
        uint64_t cursor[2] = {0, 0}, seq = 0;
        for (int kind = 0; kind < 2; kind++) {
            double total = 0;
            for (int p = 0; p < PASSES; p++) {
                renewals(&b, n, kind, &cursor[kind], &seq);
                tick(&b);
                dls_judge_pass_result r;
                double t0 = now_s();
                check(dls_judge_pass(b.j, &r), "pass");
                total += now_s() - t0;
                if (r.drained != RENEWALS || r.late_renewals > RENEWALS || r.forged) {
                    fprintf(stderr, "bench_judge: unexpected pass (%llu drained)\n",
                            (unsigned long long)r.drained);
                    return 1;
                }
            }
            double ms = total / PASSES * 1e3;
            if (n == 1000)
                base_ms[kind] = ms;
            const char *k = kind ? "ed25519" : "mac";
            snprintf(m, sizeof m, "pass_ms_%zu_%s", n, k);
            line(m, ms, base_ms[kind]);
            snprintf(m, sizeof m, "renewals_per_s_%zu_%s", n, k);
            line(m, RENEWALS / (ms / 1e3), raw[kind]);
        }
        teardown(&b);
    }
    return 0;
}
