/* Attribution throughput: verified envelopes per second through
 * dls_resolver_attribute (classification, keyring lookup, M in the scratch
 * buffer, verification) against the raw libsodium call on the same message
 * (crypto_sign_verify_detached / crypto_auth_verify), in the same run:
 * short slices of the two alternate within each round, so both see the same
 * machine load; value and baseline are medians over rounds, ratio the median
 * of the per-round ratios. The batch metrics count facts of a 64-fact batch
 * envelope (one verification each) against one raw verification of a
 * single envelope's M. JSON Lines on stdout:
 *   {"bench":"attrib","metric":…,"value":…,"baseline":…,"ratio":…,"fact_bytes":…}
 * Usage: bench_attrib [ROUND_MS (200)] [ROUNDS (7)] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "daolease/attrib.h"
#include "common.h"

typedef struct setup {
    dls_key_kind kind;
    size_t batch;        /* 0: single envelopes; else facts per batch envelope */
    dls_resolver *r;
    uint8_t *env, *m;
    size_t env_n, m_n;
    uint8_t tag[64];
    uint8_t key[32];
} setup;

static volatile unsigned sink;

/* One slice of `n` operations of one variant; answers its seconds. */
static double slice(const setup *s, int attributed, int n)
{
    unsigned ok = 0;
    double t0 = bench_now_s();
    for (int i = 0; i < n; i++) {
        if (attributed && s->batch) {
            /* one verification, then every fact with its index */
            dls_attribution a;
            dls_facts it;
            dls_bytes f;
            dls_resolver_attribute_facts(s->r, s->env, s->env_n, &a, &it);
            size_t k = 0;
            while (dls_facts_next(&it, &f, NULL))
                k += f.n != 0;
            ok += a.attributed && k == s->batch;
        } else if (attributed) {
            dls_attribution a;
            dls_resolver_attribute(s->r, s->env, s->env_n, &a);
            ok += a.attributed;
        } else if (s->kind == DLS_KEY_ED25519) {
            ok += crypto_sign_verify_detached(s->tag, s->m, s->m_n, s->key) == 0;
        } else {
            ok += crypto_auth_verify(s->tag, s->m, s->m_n, s->key) == 0;
        }
    }
    double t = bench_now_s() - t0;
    if (ok != (unsigned)n) {
        fprintf(stderr, "bench_attrib: a verification failed\n");
        exit(1);
    }
    sink += ok;
    return t;
}

/* One round of about 2 * secs: slices of the two variants interleaved, so
 * that both see the same machine load. Answers ops/s of each. */
static void round_of(const setup *s, double secs, double *attr_rate, double *raw_rate)
{
    int n = s->kind == DLS_KEY_ED25519 ? 8 : 256;
    double ta = 0, tr = 0;
    unsigned long ops = 0;
    while (ta + tr < 2 * secs) {
        ta += slice(s, 1, n);
        tr += slice(s, 0, n);
        ops += (unsigned long)n;
    }
    /* a batch attributes s->batch facts per verification */
    *attr_rate = (double)ops * (double)(s->batch ? s->batch : 1) / ta;
    *raw_rate = (double)ops / tr;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void bench(dls_key_kind kind, size_t fact_n, size_t batch, double secs, int rounds)
{
    static const uint8_t medium[16] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
    uint8_t seed[32];
    memset(seed, 0x5a, sizeof seed);
    dls_secret *sec;
    dls_keyring *kr;
    setup s = {.kind = kind, .batch = batch};
    if (dls_secret_from_seed(&sec, "worker-east", kind, seed) || dls_keyring_new(&kr))
        exit(1);
    /* a keyring of realistic size: the lookup is O(1) anyway */
    for (int i = 0; i < 256; i++) {
        char name[32];
        uint8_t k[32] = {(uint8_t)i};
        int n = snprintf(name, sizeof name, "party-%d", i);
        if (dls_keyring_add(kr, (const uint8_t *)name, (size_t)n, DLS_KEY_ED25519, k))
            exit(1);
    }
    if (dls_keyring_add(kr, (const uint8_t *)"worker-east", 11, kind, dls_secret_public(sec)) ||
        dls_resolver_new_signed(&s.r, medium, kr))
        exit(1);
    uint8_t *fact = malloc(fact_n);
    for (size_t i = 0; i < fact_n; i++)
        fact[i] = (uint8_t)(i * 31 + 7);
    s.env = malloc(DLS_BATCH_RECORD_MAX);
    s.m = malloc(DLS_MESSAGE_MAX);
    if (dls_envelope_seal(sec, medium, fact, fact_n, s.env, fact_n + DLS_ENVELOPE_OVERHEAD_MAX,
                          &s.env_n) ||
        dls_envelope_message(medium, (const uint8_t *)"worker-east", 11, fact, fact_n, s.m,
                             DLS_MESSAGE_MAX, &s.m_n))
        exit(1);
    /* the baseline verifies the single envelope's M; the tag is its own */
    size_t tag_n0 = kind == DLS_KEY_ED25519 ? 64 : 32;
    memcpy(s.tag, s.env + s.env_n - tag_n0, tag_n0);
    if (batch) { /* the value side reads one batch of `batch` such facts */
        dls_bytes facts[64];
        for (size_t i = 0; i < batch; i++)
            facts[i] = (dls_bytes){fact, fact_n};
        if (batch > 64 || dls_batch_seal(sec, medium, facts, batch, s.env, DLS_BATCH_RECORD_MAX,
                                         &s.env_n))
            exit(1);
    }
    memcpy(s.key, dls_secret_public(sec), 32);

    double *v = calloc((size_t)rounds, sizeof *v), *b = calloc((size_t)rounds, sizeof *b);
    double *q = calloc((size_t)rounds, sizeof *q), w1, w2;
    round_of(&s, secs / 4, &w1, &w2); /* warm up */
    for (int i = 0; i < rounds; i++) {
        round_of(&s, secs, &v[i], &b[i]);
        q[i] = v[i] / b[i];
    }
    qsort(v, (size_t)rounds, sizeof *v, cmp_d);
    qsort(b, (size_t)rounds, sizeof *b, cmp_d);
    qsort(q, (size_t)rounds, sizeof *q, cmp_d);
    double value = v[rounds / 2], base = b[rounds / 2], ratio = q[rounds / 2];
    char metric[64];
    if (batch)
        snprintf(metric, sizeof metric, "%s_batch%zu_verified_facts_per_s",
                 kind == DLS_KEY_ED25519 ? "ed25519" : "mac", batch);
    else
        snprintf(metric, sizeof metric, "%s_verified_envelopes_per_s",
                 kind == DLS_KEY_ED25519 ? "ed25519" : "mac");
    printf("{\"bench\":\"attrib\",\"metric\":\"%s\",\"value\":%.0f,"
           "\"baseline\":%.0f,\"ratio\":%.3f,\"fact_bytes\":%zu,\"baseline_is\":\"%s\"}\n",
           metric, value, base, ratio, fact_n,
           kind == DLS_KEY_ED25519 ? "crypto_sign_verify_detached" : "crypto_auth_verify");
    fflush(stdout);
    free(v);
    free(b);
    free(q);
    free(fact);
    free(s.env);
    free(s.m);
    dls_resolver_del(s.r);
    dls_keyring_del(kr);
    dls_secret_del(sec);
}

int main(int argc, char **argv)
{
    double secs = (argc > 1 ? atof(argv[1]) : 200) / 1000.0;
    int rounds = argc > 2 ? atoi(argv[2]) : 7;
    if (secs <= 0 || rounds < 1 || sodium_init() < 0)
        return 2;
    const size_t sizes[] = {48, 512, 4096};
    for (size_t i = 0; i < 3; i++)
        bench(DLS_KEY_ED25519, sizes[i], 0, secs, rounds);
    for (size_t i = 0; i < 3; i++)
        bench(DLS_KEY_MAC, sizes[i], 0, secs, rounds);
    /* batch envelopes of 64 renewal-sized facts: facts/s against one raw
     * verification per record (issue 13: Ed25519 with batches of 64 at
     * ≥ 40× the raw verify rate) */
    bench(DLS_KEY_ED25519, 48, 64, secs, rounds);
    bench(DLS_KEY_MAC, 48, 64, secs, rounds);
    return 0;
}
