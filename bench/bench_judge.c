/* bench_judge — the cost of a judge pass as the ledger grows (judge.md: a
 * pass costs O(facts drained + leases due · log n), never a scan of the
 * ledger). Issue 13, Measure.
 *
 * For 10^3, 10^4, 10^5 and 10^6 live leases (DLS_BENCH_MAX caps the
 * largest; DLS_BENCH_ENDS=1 runs only 10^3 and the largest), one judge holds the leases (each with its own subject, 11
 * bytes); then passes each drain 10,000 renewals from a file medium (the
 * stream's CRC checked by the cursor) in DIR (argv[1], $DLS_BENCH_DIR or
 * /tmp): MAC envelopes (10 passes), Ed25519 envelopes (3 passes), Ed25519
 * batch envelopes of 64 (10 passes), MAC batch envelopes of 64 (10 passes;
 * attribution.md rev 4 allows `dao.env/mac` over M_batch). Kinds, in that
 * order: mac, ed25519, ed25519_batch64, mac_batch64. Prints JSON Lines:
 *
 *   pass_ms_<n>_<kind>        mean pass time; baseline: the same at 10^3
 *                             (target: ratio <= 1.5 at 10^6)
 *   renewals_per_s_<n>_mac    baseline: raw crypto_auth_verify (the keyring's
 *                             MAC, HMAC-SHA-512-256) on the same M bytes the
 *                             renewals carry, timed after each pass
 *                             (target: >= 1.0M/s at 10^6)
 *   renewals_per_s_<n>_ed25519_batch64  baseline: raw Ed25519 verifies/s of
 *                             the same M_batch bytes, timed after each pass
 *                             (target: value >= 1.0M/s and ratio >= 40)
 *   renewals_per_s_<n>_mac_batch64  baseline: raw crypto_auth_verify (as for
 *                             mac) of the same M_batch bytes, timed after
 *                             each pass: verified batches/s, so the ratio is
 *                             renewals per raw MAC verify of one M_batch
 *   renewals_per_s_<n>_ed25519  baseline: raw Ed25519 verifies/s of a
 *                             120-byte message (before the runs)
 *   bytes_per_lease_<n>       the ledger's bytes per live lease (subject
 *                             bytes included); baseline 160 (target <= 1)
 *   rss_bytes_per_lease_<n>   the process's resident growth per lease;
 *                             baseline 200 (target <= 1)
 *
 * Every pass must drain and count every renewal (no defective, forged,
 * ignored or replayed fact; each lease's last counted seq is the last one
 * appended), or the program fails with exit status 1.
 *
 * Environment: DLS_BENCH_KINDS (some kinds, by name), DLS_BENCH_REPEAT
 * (each kind's passes that many times), DLS_BENCH_PERF_CTL (a perf
 * --control fifo enabled around the largest size's timed passes only).
 *
 * Renewals are signed and appended before the clock starts: only the pass
 * is timed. The journal is a medium that keeps nothing (the benchmark is not
 * about the disk). Benchmarks may read the clock; the library never does.
 */
#include <stdbool.h>
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
#include "common.h"
#include "sink.h"

#define RENEWALS 10000
#define PASSES 10
#define HOLDERS 64

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

static void check(int rc, const char *what)
{
    if (rc) {
        fprintf(stderr, "bench_judge: %s: %s\n", what, dls_strerror(rc));
        exit(1);
    }
}

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
    char path[256];
} bench;

static int reclaim(void *u, dls_bytes s, uint64_t l, dls_cause c, bool commit)
{
    (void)u, (void)s, (void)l, (void)c, (void)commit;
    return DLS_RECLAIM_DONE;
}

static void tick(bench *b)
{
    b->now += 10 * DLS_MS;
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
    char path[sizeof b->path];
    memcpy(path, b->path, sizeof path);
    memset(b, 0, sizeof *b);
    memcpy(b->path, path, sizeof path);
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
    ms.sync = DLS_SYNC_NONE; /* the page cache: the pass, not the disk, is measured */
    ms.exclusive = true;
    dls_where w;
    memset(&w, 0, sizeof w);
    check(dls_medium_create(&b->medium, DLS_MEDIUM_FILE, b->path, &ms, &w), "medium");
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
    st.tolerance_ns = 250 * DLS_MS;
    st.cadence_ns = 1000 * DLS_MS;
    check(dls_duration_make(&st.default_duration, DLS_UNIT_H, 1), "duration");
    st.drain_budget = 0;
    dls_judge_callbacks cb = {.reclaim = reclaim};
    check(dls_judge_new(&b->j, &st, &cb, NULL, NULL), "judge");
    b->now = 1000 * DLS_MS;
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
    remove(b->path);
}

/* ---- renewals and their baselines ------------------------------------------------------ */

/* What one batch of appended renewals carries, for the interleaved raw
 * baseline: the exact message bytes the resolver verifies (M or M_batch),
 * with a tag / signature over them. */
typedef struct raw_set {
    size_t count, slot;
    uint8_t *msg;          /* count slots of `slot` bytes */
    size_t *len;
    uint8_t (*tag)[64];
    const uint8_t **key;   /* MAC key of each (borrowed from the secret) */
    uint8_t pk[32], sk[64];/* Ed25519: a key pair of the bench's own */
} raw_set;

#define BATCH 64

static void raw_set_init(raw_set *s, size_t slots, size_t slot)
{
    memset(s, 0, sizeof *s);
    s->slot = slot;
    s->msg = malloc(slots * slot);
    s->len = malloc(slots * sizeof *s->len);
    s->tag = malloc(slots * sizeof *s->tag);
    s->key = malloc(slots * sizeof *s->key);
    if (!s->msg || !s->len || !s->tag || !s->key) {
        fprintf(stderr, "bench_judge: out of memory\n");
        exit(1);
    }
    crypto_sign_keypair(s->pk, s->sk);
}

static void raw_set_free(raw_set *s)
{
    free(s->msg), free(s->len), free(s->tag), free(s->key);
}

/* The raw primitive over the set; returns seconds and fails loudly if a
 * verification fails (the baseline must do the same work). */
static double raw_time(const raw_set *s, int ed)
{
    size_t ok = 0;
    double t0 = bench_now_s();
    for (size_t i = 0; i < s->count; i++)
        ok += ed ? crypto_sign_verify_detached(s->tag[i], s->msg + i * s->slot, s->len[i],
                                               s->pk) == 0
                 : crypto_auth_verify(s->tag[i], s->msg + i * s->slot, s->len[i],
                                      s->key[i]) == 0;
    double t = bench_now_s() - t0;
    if (ok != s->count) {
        fprintf(stderr, "bench_judge: raw baseline failed to verify\n");
        exit(1);
    }
    return t;
}

static void append(bench *b, const uint8_t *rec, size_t n)
{
    dls_where w;
    memset(&w, 0, sizeof w);
    check(dls_medium_append(b->medium, rec, n, NULL, &w), "append");
}

/* The i-th lease (0-based) of a kind: grant index 2i + kind, lease id
 * 2i + kind + 1, holder i % HOLDERS. */
static uint64_t lease_of(uint64_t i, int kind) { return 2 * i + (uint64_t)kind + 1; }
static size_t leases_of_kind(size_t n, int kind) { return (n + 1 - (size_t)kind) / 2; }

/* RENEWALS single-envelope renewals of MAC (kind 0) or Ed25519 (kind 1)
 * leases, round-robin over the ledger; fills the raw set with each M. */
static void renewals_single(bench *b, size_t n, int kind, uint64_t *cursor, uint64_t *seq,
                            uint64_t *expect, raw_set *raw)
{
    raw->count = 0;
    for (size_t k = 0; k < RENEWALS; k++) {
        uint64_t i = (*cursor)++ % leases_of_kind(n, kind);
        uint64_t lease = lease_of(i, kind);
        const dls_secret *h = b->holders[kind][i % HOLDERS];
        dls_fact f;
        dls_fact_renewal(&f, lease, ++*seq);
        expect[lease] = *seq;
        uint8_t fact[128], env[320];
        size_t fn, en;
        check(dls_fact_encode(&f, fact, sizeof fact, &fn), "encode");
        check(dls_envelope_seal(h, dls_medium_id(b->medium), fact, fn, env, sizeof env, &en),
              "seal");
        append(b, env, en);
        if (kind == 0) {
            size_t r = raw->count++;
            const char *name = dls_secret_name(h);
            uint8_t *m = raw->msg + r * raw->slot;
            check(dls_envelope_message(dls_medium_id(b->medium), (const uint8_t *)name,
                                       strlen(name), fact, fn, m, raw->slot, &raw->len[r]),
                  "message");
            raw->key[r] = dls_secret_public(h);
            crypto_auth(raw->tag[r], m, raw->len[r], raw->key[r]);
            /* the same bytes the resolver verifies: the tag is the envelope's */
            if (!memmem(env, en, raw->tag[r], crypto_auth_BYTES)) {
                fprintf(stderr, "bench_judge: raw MAC baseline is not over M\n");
                exit(1);
            }
        }
    }
}

/* RENEWALS renewals of MAC (kind 0) or Ed25519 (kind 1) leases in batch
 * envelopes of BATCH facts, each batch from one holder over that holder's
 * leases (round-robin per holder); fills the raw set with each M_batch (and,
 * for MAC, the holder's key and the envelope's own tag). Returns the records
 * appended. */
static size_t renewals_batch(bench *b, size_t n, int kind, uint64_t *hcursor, uint64_t *seq,
                             uint64_t *expect, raw_set *raw)
{
    size_t ne = leases_of_kind(n, kind), records = 0;
    raw->count = 0;
    static uint8_t facts[BATCH][128];
    static uint8_t env[DLS_BATCH_RECORD_MAX];
    for (size_t k = 0, bi = 0; k < RENEWALS; bi++) {
        size_t h = bi % HOLDERS;
        size_t nh = (ne - h + HOLDERS - 1) / HOLDERS; /* leases of holder h */
        dls_bytes fb[BATCH];
        size_t c = 0;
        for (; c < BATCH && k < RENEWALS; c++, k++) {
            uint64_t i = h + HOLDERS * (hcursor[h]++ % nh);
            uint64_t lease = lease_of(i, kind);
            dls_fact f;
            dls_fact_renewal(&f, lease, ++*seq);
            expect[lease] = *seq;
            size_t fn;
            check(dls_fact_encode(&f, facts[c], sizeof facts[c], &fn), "encode");
            fb[c] = (dls_bytes){facts[c], fn};
        }
        const dls_secret *s = b->holders[kind][h];
        size_t en;
        check(dls_batch_seal(s, dls_medium_id(b->medium), fb, c, env, sizeof env, &en), "batch");
        append(b, env, en);
        records++;
        size_t r = raw->count++;
        const char *name = dls_secret_name(s);
        uint8_t *m = raw->msg + r * raw->slot;
        check(dls_batch_message(dls_medium_id(b->medium), (const uint8_t *)name, strlen(name), fb,
                                c, m, raw->slot, &raw->len[r]),
              "batch message");
        if (kind == 1) {
            crypto_sign_detached(raw->tag[r], NULL, m, raw->len[r], raw->sk);
            continue;
        }
        raw->key[r] = dls_secret_public(s);
        crypto_auth(raw->tag[r], m, raw->len[r], raw->key[r]);
        /* the same bytes the resolver verifies: the tag is the envelope's */
        if (!memmem(env, en, raw->tag[r], crypto_auth_BYTES)) {
            fprintf(stderr, "bench_judge: raw MAC baseline is not over M_batch\n");
            exit(1);
        }
    }
    return records;
}

/* Every renewal appended was counted: each lease's last counted seq is the
 * last seq the bench gave it (issue 13, Measure: "checks every renewal was
 * counted"). */
static void check_counted(bench *b, size_t n, const uint64_t *expect)
{
    size_t bad = 0;
    for (uint64_t id = 1; id <= n; id++) {
        if (!expect[id])
            continue;
        dls_judge_lease_info li;
        if (dls_judge_lease(b->j, id, &li) != 0 || li.last_seq != expect[id])
            bad++;
    }
    if (bad) {
        fprintf(stderr, "bench_judge: %zu leases missed renewals at n=%zu\n", bad, n);
        exit(1);
    }
}

static void check_pass(const dls_judge_pass_result *r, size_t records, size_t facts)
{
    uint64_t defective = 0;
    for (int i = 0; i < 8; i++)
        defective += r->defective[i];
    if (r->drained != records || r->facts != facts || r->forged || defective ||
        r->ignored_misplaced || r->ignored_wrong_author || r->ignored_replayed ||
        r->ignored_unknown_lease || r->behind || r->transport_errors) {
        fprintf(stderr,
                "bench_judge: renewals not all counted (drained %llu of %zu records, %llu of %zu "
                "facts, forged %llu, defective %llu, ignored %llu/%llu/%llu/%llu)\n",
                (unsigned long long)r->drained, records, (unsigned long long)r->facts, facts,
                (unsigned long long)r->forged, (unsigned long long)defective,
                (unsigned long long)r->ignored_misplaced,
                (unsigned long long)r->ignored_wrong_author,
                (unsigned long long)r->ignored_replayed,
                (unsigned long long)r->ignored_unknown_lease);
        exit(1);
    }
}

static bool g_largest; /* the largest size is running */
static void perf_ctl(bool largest, const char *what);

static double timed_pass(bench *b, size_t records, size_t facts)
{
    tick(b);
    dls_judge_pass_result r;
    perf_ctl(g_largest, "enable");
    double t0 = bench_now_s();
    check(dls_judge_pass(b->j, &r), "pass");
    double t = bench_now_s() - t0;
    perf_ctl(g_largest, "disable");
    check_pass(&r, records, facts);
    return t;
}

/* The raw Ed25519 verify rate on an envelope-sized message. */
static double raw_verify_rate(void)
{
    uint8_t msg[120], pk[32], sk[64], sig[64];
    memset(msg, 7, sizeof msg);
    crypto_sign_keypair(pk, sk);
    crypto_sign_detached(sig, NULL, msg, sizeof msg, sk);
    const int N = 20000;
    volatile int ok = 0;
    double t0 = bench_now_s();
    for (int i = 0; i < N; i++)
        ok += crypto_sign_verify_detached(sig, msg, sizeof msg, pk) == 0;
    double t = bench_now_s() - t0;
    return ok == N ? N / t : 0;
}

enum { K_MAC, K_ED, K_ED_BATCH, K_MAC_BATCH, NKINDS };
static const char *const kind_name[NKINDS] = {"mac", "ed25519", "ed25519_batch64",
                                              "mac_batch64"};
static const int kind_passes[NKINDS] = {PASSES, 3, PASSES, PASSES};
static bool kind_batched(int kind) { return kind == K_ED_BATCH || kind == K_MAC_BATCH; }

/* DLS_BENCH_KINDS: the kinds to run, by name, comma-separated (default
 * all). DLS_BENCH_PERF_CTL: a `perf record --control fifo:` path, told to
 * enable recording around the largest size's timed passes only. */
static bool kind_wanted(int kind)
{
    const char *k = getenv("DLS_BENCH_KINDS");
    if (!k)
        return true;
    size_t n = strlen(kind_name[kind]);
    for (const char *p = k; (p = strstr(p, kind_name[kind])) != NULL; p += n)
        if ((p == k || p[-1] == ',') && (p[n] == ',' || p[n] == 0))
            return true;
    return false;
}

static void perf_ctl(bool largest, const char *what)
{
    const char *path = getenv("DLS_BENCH_PERF_CTL");
    if (!path || !largest)
        return;
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%s\n", what);
        fclose(f);
    }
}

int main(int argc, char **argv)
{
    if (sodium_init() < 0)
        return 1;
    size_t max = 1000000;
    const char *env = getenv("DLS_BENCH_MAX");
    if (env)
        max = strtoull(env, NULL, 0);
    const char *dir = argc > 1 ? argv[1] : getenv("DLS_BENCH_DIR");
    if (!dir)
        dir = "/tmp";
    double raw_ed = raw_verify_rate();
    bench_line("judge", "raw_ed25519_verify_per_s", raw_ed, raw_ed);
    double base_ms[NKINDS] = {0};
    raw_set raw_mac, raw_batch; /* allocated before the first RSS reading */
    raw_set_init(&raw_mac, RENEWALS, 512);
    raw_set_init(&raw_batch, RENEWALS / BATCH + 1, DLS_BATCH_MESSAGE_MAX);
    /* DLS_BENCH_REPEAT: each kind runs that many times its passes */
    int repeat = getenv("DLS_BENCH_REPEAT") ? atoi(getenv("DLS_BENCH_REPEAT")) : 1;
    if (repeat < 1)
        repeat = 1;
    bool ends = getenv("DLS_BENCH_ENDS") != NULL; /* only 10^3 and the largest */
    for (size_t n = 1000; n <= max; n *= 10) {
        if (ends && n != 1000 && n * 10 <= max)
            continue;
        bench b;
        snprintf(b.path, sizeof b.path, "%s/bench_judge.%d.%zu.dls", dir, (int)getpid(), n);
        long rss0 = rss_bytes();
        setup(&b, n);
        long rss1 = rss_bytes();
        char m[64];
        snprintf(m, sizeof m, "bytes_per_lease_%zu", n);
        bench_line("judge", m, (double)dls_judge_memory(b.j) / (double)n, 160);
        snprintf(m, sizeof m, "rss_bytes_per_lease_%zu", n);
        bench_line("judge", m, (double)(rss1 - rss0) / (double)n, 200);
        uint64_t *expect = calloc(n + 1, sizeof *expect);
        uint64_t *hcursor = calloc(2 * HOLDERS, sizeof *hcursor); /* [kind][holder] */
        if (!expect || !hcursor)
            return 1;
        uint64_t cursor[2] = {0, 0}, seq = 0;
        g_largest = n == max;
        for (int kind = 0; kind < NKINDS; kind++) {
            if (!kind_wanted(kind))
                continue;
            raw_set *raw = kind_batched(kind) ? &raw_batch : &raw_mac;
            int akind = kind == K_ED || kind == K_ED_BATCH; /* 0 MAC, 1 Ed25519 */
            double total = 0, raw_total = 0;
            size_t raw_count = 0;
            int passes = kind_passes[kind] * repeat;
            for (int p = 0; p < passes; p++) {
                if (kind_batched(kind)) {
                    size_t recs = renewals_batch(&b, n, akind, hcursor + akind * HOLDERS, &seq,
                                                 expect, raw);
                    total += timed_pass(&b, recs, RENEWALS);
                } else {
                    renewals_single(&b, n, akind, &cursor[akind], &seq, expect, raw);
                    total += timed_pass(&b, RENEWALS, RENEWALS);
                }
                /* the raw baseline, interleaved with the passes (MAC: the
                 * same M bytes; batches: the same M_batch bytes, Ed25519
                 * or MAC as the batches are) */
                if (kind != K_ED) {
                    raw_total += raw_time(raw, akind);
                    raw_count += raw->count;
                }
            }
            check_counted(&b, n, expect);
            double ms = total / passes * 1e3;
            if (n == 1000)
                base_ms[kind] = ms;
            snprintf(m, sizeof m, "pass_ms_%zu_%s", n, kind_name[kind]);
            bench_line("judge", m, ms, base_ms[kind]);
            snprintf(m, sizeof m, "renewals_per_s_%zu_%s", n, kind_name[kind]);
            double rate = RENEWALS / (ms / 1e3);
            bench_line("judge", m, rate, kind == K_ED ? raw_ed : raw_count / raw_total);
        }
        free(expect);
        free(hcursor);
        teardown(&b);
    }
    raw_set_free(&raw_mac);
    raw_set_free(&raw_batch);
    return 0;
}
