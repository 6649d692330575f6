/* The judge's ledger layout (docs/judge.md, Sizing; issue 13 item 5): the
 * hash indexes with ~1.41x capacity steps (jtab, jset), subjects inline up
 * to 16 bytes or out of line beyond, the side records of lock-delays and
 * waiters (jl_subx) and of tenure caps (jl_max_ns), and the pools' freed
 * chains. White-box: a bare ledger without assembly or media. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "daolease/attrib.h"
#include "daolease/fact.h"
#include "daolease/judge.h"
#include "daolease/medium_impl.h"
#include "daolease/stream.h"
#include "judge/ckhash.h"
#include "judge/internal.h"

static uint64_t rnd_state = 0x9e3779b97f4a7c15u;
static uint32_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return (uint32_t)(rnd_state >> 16);
}

static bool eq_u32(const void *ctx, uint32_t ref, const void *key)
{
    (void)ctx;
    return ref == *(const uint32_t *)key;
}

/* The hash of ref in the models below: spread, or all in a few clusters
 * near the end of the table (so probe chains wrap around a capacity that
 * is not a power of two). */
static int g_mode;
static uint32_t model_hash(const void *ctx, uint32_t ref)
{
    (void)ctx;
    if (g_mode == 0)
        return ref * 2654435761u;
    return 0xfffffff0u - (ref % 3); /* home slot: the last one of any capacity */
}

static bool cap_ok(uint32_t cap)
{
    /* 2^k or 1.5 * 2^k, k >= 4 (docs/judge.md, Sizing) */
    if (cap < 16)
        return false;
    if ((cap & (cap - 1)) == 0)
        return true;
    return cap % 3 == 0 && ((cap / 3) & (cap / 3 - 1)) == 0;
}

/* Both indexes answer like a set model through growth across the 1.5x
 * steps, deletions by backward shift included (issue 13 item 5). */
static void test_indexes_against_model(void **state)
{
    (void)state;
    enum { N = 3000 };
    for (g_mode = 0; g_mode < 2; g_mode++) {
        jtab t = {0};
        jset s = {0};
        static bool in[N];
        memset(in, 0, sizeof in);
        size_t count = 0;
        bool saw_odd = false;
        for (int step = 0; step < 30000; step++) {
            uint32_t r = rnd() % N;
            uint32_t h = model_hash(NULL, r);
            /* grow mostly, so that several capacity steps are crossed */
            if (!in[r]) {
                assert_int_equal(jtab_insert(&t, h, r), 0);
                assert_int_equal(jset_insert(&s, h, r, model_hash, NULL), 0);
                in[r] = true;
                count++;
            } else if (rnd() % 4 == 0) {
                jtab_remove(&t, h, r);
                jset_remove(&s, h, r, model_hash, NULL);
                in[r] = false;
                count--;
            }
            assert_true(cap_ok(t.cap) && cap_ok(s.cap));
            saw_odd |= (t.cap & (t.cap - 1)) != 0 && t.cap > 64;
            assert_true((uint64_t)count * 10 <= (uint64_t)t.cap * 7);
            assert_int_equal(t.count, count);
            assert_int_equal(s.count, count);
            if (step % 211 == 0)
                for (uint32_t i = 0; i < N; i += g_mode ? 7 : 1) {
                    uint32_t hi = model_hash(NULL, i);
                    assert_true((jtab_find(&t, hi, eq_u32, NULL, &i) == i) == in[i]);
                    assert_true((jset_find(&s, hi, eq_u32, NULL, &i) == i) == in[i]);
                }
        }
        assert_true(saw_odd); /* a 1.5 * 2^k capacity was used */
        jtab_free(&t);
        jset_free(&s);
    }
}

/* A jset probe asks the caller's callback only for slots whose 6 tag bits
 * (the hash's low bits) match: entries that all share one home slot but
 * differ in those bits cost no callback on a miss (docs/judge.md, Sizing;
 * issue 17, restart at 10^6); references stop at JSET_REF_MAX. */
static unsigned g_eq_calls;
static bool eq_counted(const void *ctx, uint32_t ref, const void *key)
{
    g_eq_calls++;
    return eq_u32(ctx, ref, key);
}
static uint32_t tag_hash(const void *ctx, uint32_t ref)
{
    (void)ctx;
    return 0x80000000u | (ref % 64); /* one home, 64 tags */
}
static void test_jset_tags_skip_callbacks(void **state)
{
    (void)state;
    jset s = {0};
    for (uint32_t r = 0; r < 63; r++) /* tags 0 ... 62 */
        assert_int_equal(jset_insert(&s, tag_hash(NULL, r), r, tag_hash, NULL), 0);
    g_eq_calls = 0;
    uint32_t absent = 63; /* tag 63: no entry has it */
    assert_int_equal(jset_find(&s, tag_hash(NULL, absent), eq_counted, NULL, &absent), JNIL);
    assert_int_equal(g_eq_calls, 0);
    for (uint32_t r = 0; r < 63; r++) {
        g_eq_calls = 0;
        uint32_t h = tag_hash(NULL, r);
        assert_int_equal(jset_find(&s, h, eq_counted, NULL, &r), r);
        assert_int_equal(g_eq_calls, 1); /* only the entry with its tag */
    }
    /* a key of a present tag but absent: one callback, for that entry */
    uint32_t other = 64 + 5, h = tag_hash(NULL, other);
    g_eq_calls = 0;
    assert_int_equal(jset_find(&s, h, eq_counted, NULL, &other), JNIL);
    assert_int_equal(g_eq_calls, 1);
    /* removal by backward shift keeps the tags: every other entry found */
    jset_remove(&s, tag_hash(NULL, 10), 10, tag_hash, NULL);
    for (uint32_t r = 0; r < 63; r++) {
        uint32_t hr = tag_hash(NULL, r);
        assert_int_equal(jset_find(&s, hr, eq_u32, NULL, &r), r == 10 ? JNIL : r);
    }
    assert_int_equal(jset_insert(&s, 7, JSET_REF_MAX, tag_hash, NULL), DLS_ERR_NOMEM);
    assert_int_equal(jset_insert(&s, 7, JSET_REF_MAX - 1, tag_hash, NULL), 0);
    uint32_t big = JSET_REF_MAX - 1;
    assert_int_equal(jset_find(&s, 7, eq_u32, NULL, &big), big);
    jset_free(&s);
}

/* jtab_insert_bulk (restart from a checkpoint, docs/judge.md Sizing):
 * slots inserted at once into a table that already holds some are all
 * found, with the capacity one-by-one inserts would reach, and hashes
 * that cluster at the table's end (probe chains wrapping) included. */
static void test_jtab_bulk_matches_inserts(void **state)
{
    (void)state;
    enum { OLD = 1000, N = 20000 };
    for (int mode = 0; mode < 2; mode++) {
        jtab one = {0}, bulk = {0};
        uint64_t *slots = malloc(N * sizeof *slots);
        assert_non_null(slots);
        for (uint32_t r = 0; r < OLD + N; r++) {
            uint32_t h = mode ? 0xffffff00u + (r % 200) : rnd();
            assert_int_equal(jtab_insert(&one, h, r), 0);
            if (r < OLD)
                assert_int_equal(jtab_insert(&bulk, h, r), 0);
            else
                slots[r - OLD] = jtab_slot(h, r);
        }
        assert_int_equal(jtab_insert_bulk(&bulk, slots, N), 0);
        assert_int_equal(bulk.count, OLD + N);
        assert_int_equal(bulk.cap, one.cap);
        /* the same set of slots, wherever each landed */
        uint64_t sum_one = 0, sum_bulk = 0;
        for (uint32_t i = 0; i < one.cap; i++) {
            sum_one += one.slots[i] * 0x9e3779b97f4a7c15u;
            sum_bulk += bulk.slots[i] * 0x9e3779b97f4a7c15u;
        }
        assert_true(sum_one == sum_bulk);
        for (uint32_t i = 0; i < one.cap; i++) {
            uint64_t sl = bulk.slots[i];
            if (!sl)
                continue;
            uint32_t ref = (uint32_t)sl - 1u;
            assert_int_equal(jtab_find(&bulk, (uint32_t)(sl >> 32), eq_u32, NULL, &ref), ref);
        }
        free(slots);
        jtab_free(&one);
        jtab_free(&bulk);
    }
}

/* judge.md rev 4, Checkpoints, Commit: the digest hashed beside the
 * caller (judge/ckhash.c: chunks handed to a second thread once there is
 * more than one) equals BLAKE2b-256 over the payloads each preceded by its
 * length (4 bytes LE), computed in one call — for no payload, a few
 * (no thread), and ~10 MiB of payloads of every size up to a record's
 * largest (chunks handed over, a payload that does not fit the chunk's
 * end). */
static void test_ckhash_equals_one_pass(void **state)
{
    (void)state;
    static const size_t totals[] = {0, 3, 12000};
    uint8_t *payload = malloc(65536);
    assert_non_null(payload);
    for (size_t i = 0; i < 65536; i++)
        payload[i] = (uint8_t)(i * 131u + 7u);
    for (size_t t = 0; t < sizeof totals / sizeof totals[0]; t++) {
        dls_ckhash *h;
        assert_int_equal(dls_ckhash_new(&h), 0);
        crypto_generichash_state ref;
        crypto_generichash_init(&ref, NULL, 0, 32);
        size_t bytes = 0;
        for (size_t k = 0; k < totals[t]; k++) {
            size_t n = k % 97 == 0 ? 65536 - (k % 5) : 1 + rnd() % 300;
            const uint8_t *p = payload + (65536 - n) / 2;
            assert_int_equal(dls_ckhash_add(h, p, n), 0);
            uint8_t le[4] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
            crypto_generichash_update(&ref, le, 4);
            crypto_generichash_update(&ref, p, n);
            bytes += 4 + n;
        }
        if (t == 2)
            assert_true(bytes > (8u << 20)); /* more than two chunks */
        uint8_t got[32], want[32];
        dls_ckhash_final(h, got);
        crypto_generichash_final(&ref, want, 32);
        assert_memory_equal(got, want, 32);
    }
    /* abandoned part way: nothing leaks, no digest */
    dls_ckhash *h;
    assert_int_equal(dls_ckhash_new(&h), 0);
    for (int k = 0; k < 200; k++)
        assert_int_equal(dls_ckhash_add(h, payload, 65536), 0);
    dls_ckhash_final(h, NULL);
    free(payload);
}

/* The capacity after growing past 10^6 * 0.7 entries is 1.5 * 2^20, not
 * 2^21 (the Sizing figure). */
static void test_index_capacity_at_a_million(void **state)
{
    (void)state;
    jtab t = {0};
    for (uint32_t i = 0; i < 1000000; i++)
        assert_int_equal(jtab_insert(&t, i * 2654435761u, i), 0);
    assert_int_equal(t.cap, 3u << 19);
    jtab_free(&t);
}

/* docs/judge.md, Sizing (restart from a checkpoint): reserving n entries
 * gives, in one step, exactly the capacity n inserts would grow to, so a
 * restart that knows its count rehashes nothing and uses no more memory;
 * every entry is still found; a reserve below the count changes nothing. */
static void test_reserve_matches_growth(void **state)
{
    (void)state;
    static const uint32_t ns[] = {1, 11, 12, 100, 1000, 70001, 300000};
    g_mode = 0; /* spread hashes */
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        uint32_t n = ns[k];
        jtab grown = {0}, t = {0};
        jset s = {0};
        for (uint32_t i = 0; i < n; i++)
            assert_int_equal(jtab_insert(&grown, rnd(), i), 0);
        assert_int_equal(jtab_reserve(&t, n), 0);
        assert_int_equal(jset_reserve(&s, n, model_hash, NULL), 0);
        assert_int_equal(t.cap, grown.cap);
        assert_int_equal(s.cap, grown.cap);
        uint32_t cap = t.cap;
        for (uint32_t i = 0; i < n; i++) {
            assert_int_equal(jtab_insert(&t, model_hash(NULL, i), i), 0);
            assert_int_equal(jset_insert(&s, model_hash(NULL, i), i, model_hash, NULL), 0);
        }
        assert_int_equal(t.cap, cap); /* no growth */
        assert_int_equal(s.cap, cap);
        for (uint32_t i = 0; i < n; i += 1 + n / 64) {
            assert_int_equal(jtab_find(&t, model_hash(NULL, i), eq_u32, NULL, &i), i);
            assert_int_equal(jset_find(&s, model_hash(NULL, i), eq_u32, NULL, &i), i);
        }
        assert_int_equal(jtab_reserve(&t, n / 2), 0);
        assert_int_equal(t.cap, cap);
        jtab_free(&grown);
        jtab_free(&t);
        jset_free(&s);
    }
}

static dls_judge *bare_judge(void)
{
    dls_judge *j = calloc(1, sizeof *j);
    assert_non_null(j);
    randombytes_buf(j->hkey, sizeof j->hkey);
    jl_ledger_init(j);
    return j;
}

static void bare_del(dls_judge *j)
{
    jl_ledger_free(j);
    jvec_free(&j->pending);
    free(j);
}

/* docs/judge.md, Sizing: the entries' sizes the figures are made of. */
static void test_entry_sizes(void **state)
{
    (void)state;
    assert_int_equal(sizeof(jl_lease), 80);
    assert_int_equal(sizeof(jl_subject), 36);
}

/* Subjects of up to 16 bytes live in the entry, longer ones out of line;
 * both read back byte for byte, are found, and are freed (only the
 * out-of-line bytes count in subject_bytes). */
static void test_subjects_inline_and_out_of_line(void **state)
{
    (void)state;
    dls_judge *j = bare_judge();
    static uint8_t big[DLS_SUBJECT_MAX];
    randombytes_buf(big, sizeof big);
    const size_t lens[] = {1, 15, 16, 17, 100, DLS_SUBJECT_MAX};
    enum { K = sizeof lens / sizeof lens[0] };
    uint32_t idx[K];
    size_t out_of_line = 0;
    for (size_t k = 0; k < K; k++) {
        uint8_t *p = big + k; /* distinct bytes per subject */
        size_t n = lens[k] + k <= sizeof big ? lens[k] : sizeof big - k;
        assert_int_equal(jl_subject_get(j, p, n, &idx[k]), 0);
        const jl_subject *s = jl_subject_at(j, idx[k]);
        assert_int_equal(s->len, n);
        assert_memory_equal(jl_subject_bytes(s), p, n);
        assert_true((jl_subject_bytes(s) == s->b) == (n <= JL_SUBJECT_INLINE));
        if (n > JL_SUBJECT_INLINE)
            out_of_line += n;
        uint32_t again;
        assert_int_equal(jl_subject_get(j, p, n, &again), 0);
        assert_int_equal(again, idx[k]);
    }
    assert_int_equal(j->subject_bytes, out_of_line);
    for (size_t k = 0; k < K; k++) {
        const jl_subject *s = jl_subject_at(j, idx[k]);
        uint8_t copy[DLS_SUBJECT_MAX];
        size_t n = s->len;
        memcpy(copy, jl_subject_bytes(s), n);
        assert_int_equal(jl_subject_find(j, copy, n), idx[k]);
        jl_subject_release(j, idx[k]);
        assert_int_equal(jl_subject_find(j, copy, n), JNIL);
        for (size_t m = k + 1; m < K; m++) { /* the others still answer */
            const jl_subject *o = jl_subject_at(j, idx[m]);
            assert_int_equal(jl_subject_find(j, jl_subject_bytes(o), o->len), idx[m]);
        }
    }
    assert_int_equal(j->subject_bytes, 0);
    assert_int_equal(j->subjects.used, 0);
    bare_del(j);
}

/* A subject's lock-delay and waiters read as none until its side record is
 * made; releasing the subject frees the record; a freed slot is reused. */
static void test_subject_side_record(void **state)
{
    (void)state;
    dls_judge *j = bare_judge();
    uint32_t s;
    assert_int_equal(jl_subject_get(j, (const uint8_t *)"\xa3job", 4, &s), 0);
    const jl_subx *none = jl_subx_peek(j, jl_subject_at(j, s));
    assert_int_equal(none->nwaiters, 0);
    assert_null(none->whead);
    assert_int_equal(none->delay_lease, 0);
    assert_int_equal(none->delay_pos, JNIL);
    jl_subx *x = jl_subx_get(j, s);
    assert_non_null(x);
    assert_int_equal(x->delay_pos, JNIL);
    x->delay_start = 5;
    x->delay_lease = 9;
    assert_ptr_equal(jl_subx_get(j, s), x);
    assert_int_equal(jl_subx_peek(j, jl_subject_at(j, s))->delay_lease, 9);
    assert_int_equal(j->subx.used, 1);
    jl_subject_release(j, s);
    assert_int_equal(j->subx.used, 0);
    assert_int_equal(j->subjects.used, 0);
    uint32_t s2;
    assert_int_equal(jl_subject_get(j, (const uint8_t *)"\xa3job", 4, &s2), 0);
    assert_int_equal(s2, s); /* the freed chain hands the slot back */
    assert_int_equal(jl_subject_at(j, s2)->x, JNIL);
    jl_subject_release(j, s2);
    bare_del(j);
}

/* Tenure caps live in a side table by lease id: each lease answers its own
 * cap (0 without one) whatever the order of removals (the last entry moves
 * into a removed one's place). */
static void test_caps_side_table(void **state)
{
    (void)state;
    dls_judge *j = bare_judge();
    uint32_t s, party;
    assert_int_equal(jl_subject_get(j, (const uint8_t *)"\xa1s", 2, &s), 0);
    assert_int_equal(jl_party_get(j, (const uint8_t *)"h", 1, &party), 0);
    enum { N = 200 };
    uint32_t idx[N];
    bool live[N];
    for (uint32_t i = 0; i < N; i++) {
        jl_terms t = {0};
        t.id = 1000 + i;
        t.subject = s;
        t.holder = party;
        t.mode = DLS_MODE_SHARED;
        t.duration_ns = DLS_MS;
        t.max_ns = i % 3 ? (uint64_t)(i + 1) * DLS_MS : 0;
        t.medium = JL_NO_MEDIUM;
        t.now = 1;
        assert_int_equal(jl_lease_add(j, &t, &idx[i]), 0);
        live[i] = true;
    }
    for (int round = 0; round < N; round++) {
        uint32_t i = rnd() % N;
        if (live[i]) {
            jl_lease_remove(j, idx[i]);
            live[i] = false;
        }
        for (uint32_t k = 0; k < N; k++)
            if (live[k]) {
                const jl_lease *l = jl_lease_at(j, idx[k]);
                assert_int_equal(l->id, 1000 + k);
                assert_int_equal(jl_max_ns(j, l), k % 3 ? (uint64_t)(k + 1) * DLS_MS : 0);
                assert_int_equal(jl_lease_find(j, 1000 + k), idx[k]);
            } else {
                assert_int_equal(jl_lease_find(j, 1000 + k), JNIL);
            }
    }
    for (uint32_t k = 0; k < N; k++)
        if (live[k])
            jl_lease_remove(j, idx[k]);
    assert_int_equal(j->capped.n, 0);
    assert_int_equal(j->leases.used, 0);
    jl_subject_release(j, s);
    bare_del(j);
}

/* ---- step 2's runs of records (judge/apply.c ja_run_add) -------------------- */

/* A scripted medium: its cursor yields the records appended so far and a
 * gap wherever one was scripted, then blocks. A journal of the same kind
 * keeps nothing. */
typedef struct script {
    uint8_t *recs[64];
    size_t lens[64];
    bool gap[64]; /* the entry is a gap (skips one position) */
    size_t n;
} script;

typedef struct script_cursor {
    script *s;
    size_t next;
    uint64_t pos;
} script_cursor;

static int sc_append(void *impl, const uint8_t *const *recs, const size_t *lens, size_t count,
                     uint64_t *first, dls_where *w)
{
    (void)recs, (void)lens, (void)w;
    script *s = impl;
    *first = s->n;
    s->n += count; /* a journal: kept as positions only */
    return 0;
}

static int sc_cursor_new(void *impl, uint64_t from, void **out)
{
    (void)from;
    script_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return DLS_ERR_NOMEM;
    c->s = impl;
    *out = c;
    return 0;
}

static dls_next sc_next(void *cv, dls_record *rec, dls_where *w)
{
    (void)w;
    script_cursor *c = cv;
    if (c->next >= c->s->n || (!c->s->lens[c->next] && !c->s->gap[c->next]))
        return DLS_NEXT_BLOCKED;
    size_t i = c->next++;
    if (c->s->gap[i]) {
        rec->gap_from = c->pos;
        c->pos++;
        rec->position = c->pos;
        return DLS_NEXT_GAP;
    }
    rec->position = c->pos++;
    rec->p = c->s->recs[i];
    rec->n = c->s->lens[i];
    return DLS_NEXT_OK;
}

static void sc_cursor_del(void *c) { free(c); }
static void sc_del(void *impl)
{
    script *s = impl;
    for (size_t i = 0; i < 64; i++)
        free(s->recs[i]);
    free(s);
}

static const dls_medium_ops script_ops = {
    .kind_name = "script",
    .append_batch = sc_append,
    .cursor_new = sc_cursor_new,
    .cursor_next = sc_next,
    .cursor_del = sc_cursor_del,
    .del = sc_del,
};

static dls_medium *script_medium(script **out, uint8_t idbyte)
{
    script *s = calloc(1, sizeof *s);
    assert_non_null(s);
    dls_medium_info info;
    memset(&info, 0, sizeof info);
    info.kind = DLS_MEDIUM_REDIS;
    info.retention = DLS_RETAIN_ALL;
    info.sync = DLS_SYNC_DATA;
    info.mode = DLS_OPEN_APPEND;
    memset(info.id, idbyte, sizeof info.id);
    info.name = "script";
    dls_medium *m;
    assert_int_equal(dls_medium_wrap(&m, &script_ops, s, &info), 0);
    *out = s;
    return m;
}

static int reclaim_done(void *u, dls_bytes s, uint64_t l, dls_cause c, bool commit)
{
    (void)u, (void)s, (void)l, (void)c, (void)commit;
    return DLS_RECLAIM_DONE;
}

static void tick_at(dls_medium *ticks, uint64_t now)
{
    dls_fact f;
    dls_duration d;
    assert_int_equal(dls_duration_make(&d, DLS_UNIT_NS, now), 0);
    dls_fact_tick(&f, d);
    uint8_t buf[64];
    size_t n;
    assert_int_equal(dls_fact_encode(&f, buf, sizeof buf, &n), 0);
    assert_int_equal(dls_medium_append(ticks, buf, n, NULL, NULL), 0);
}

/* judge.md step 2 and its gaps; issue 13 item 4: the live pass applies
 * single-fact records in runs of JA_RUN, yet every record counts in read
 * order: 20 renewals (a full run, then 4 more) read before a gap are
 * applied before it (their leases' evidence is unknown after it), the one
 * after the gap after it (known), and every seq is counted. */
static void test_runs_flush_before_gap(void **state)
{
    (void)state;
    enum { L = 21 };
    uint8_t seed[32];
    memset(seed, 1, sizeof seed);
    dls_secret *grantor, *holder;
    assert_int_equal(dls_secret_from_seed(&grantor, "arbiter", DLS_KEY_ED25519, seed), 0);
    memset(seed, 2, sizeof seed);
    assert_int_equal(dls_secret_from_seed(&holder, "m", DLS_KEY_MAC, seed), 0);
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    assert_int_equal(dls_keyring_add(kr, (const uint8_t *)"m", 1, DLS_KEY_MAC,
                                     dls_secret_public(holder)), 0);
    script *js, *ms;
    dls_medium *journal = script_medium(&js, 0x4a), *medium = script_medium(&ms, 0x4b);
    dls_medium_settings mset;
    dls_medium_settings_default(&mset);
    mset.ring_capacity = 64;
    dls_medium *ticks;
    assert_int_equal(dls_ring_new(&ticks, &mset), 0);
    dls_resolver *tickr, *res;
    assert_int_equal(dls_resolver_new_medium(&tickr, dls_medium_id(ticks), "ticker", NULL), 0);
    assert_int_equal(dls_resolver_new_signed(&res, dls_medium_id(medium), kr), 0);
    char lock[64];
    snprintf(lock, sizeof lock, "/tmp/test_ledger.%d.lock", (int)getpid());
    dls_judge_settings st;
    dls_judge_settings_default(&st);
    st.grantor = grantor;
    st.journal = journal;
    st.journal_lock_path = lock;
    dls_judge_tick_source ts = {ticks, tickr, "ticker", "test", 0};
    st.ticks = &ts;
    st.nticks = 1;
    dls_judge_medium jm = {medium, res};
    st.media = &jm;
    st.nmedia = 1;
    st.tolerance_ns = 250 * DLS_MS;
    st.cadence_ns = 1000 * DLS_MS;
    st.drain_budget = 0;
    assert_int_equal(dls_duration_make(&st.default_duration, DLS_UNIT_H, 1), 0);
    dls_judge_callbacks cb = {.reclaim = reclaim_done};
    dls_judge *j;
    assert_int_equal(dls_judge_new(&j, &st, &cb, NULL, NULL), 0);
    for (int i = 0; i < L; i++) {
        uint8_t v[32];
        char sub[16];
        size_t vn;
        int len = snprintf(sub, sizeof sub, "s%02d", i);
        assert_int_equal(dls_value_str(v, sizeof v, sub, (size_t)len, &vn), 0);
        assert_int_equal(dls_judge_grant(j, (dls_bytes){v, vn}, (dls_bytes){(const uint8_t *)"m", 1},
                                         0, NULL, NULL, NULL), 0);
    }
    dls_judge_pass_result r;
    tick_at(ticks, 1000 * DLS_MS);
    assert_int_equal(dls_judge_pass(j, &r), 0);
    assert_int_equal(r.live, L);
    /* leases 1..20 renewed, a gap, lease 21 renewed */
    for (uint64_t id = 1; id <= L; id++) {
        size_t i = ms->n++;
        if (id == L) {
            ms->gap[i] = true;
            i = ms->n++;
        }
        dls_fact f;
        dls_fact_renewal(&f, id, 7);
        uint8_t fact[128];
        size_t fn, en;
        assert_int_equal(dls_fact_encode(&f, fact, sizeof fact, &fn), 0);
        ms->recs[i] = malloc(320);
        assert_non_null(ms->recs[i]);
        assert_int_equal(dls_envelope_seal(holder, dls_medium_id(medium), fact, fn, ms->recs[i],
                                           320, &en), 0);
        ms->lens[i] = en;
    }
    tick_at(ticks, 2000 * DLS_MS);
    assert_int_equal(dls_judge_pass(j, &r), 0);
    assert_int_equal(r.drained, L);
    assert_int_equal(r.gaps, 1);
    assert_int_equal(r.forged, 0);
    for (uint64_t id = 1; id <= L; id++) {
        dls_judge_lease_info info;
        assert_int_equal(dls_judge_lease(j, id, &info), 0);
        assert_int_equal(info.last_seq, 7);
        assert_int_equal(info.last_observation, 2000 * DLS_MS);
        assert_int_equal(info.evidence, id < L ? DLS_EVIDENCE_UNKNOWN : DLS_EVIDENCE_KNOWN);
    }
    dls_judge_del(j);
    dls_resolver_del(tickr);
    dls_resolver_del(res);
    dls_medium_del(ticks);
    dls_medium_del(medium);
    dls_medium_del(journal);
    dls_keyring_del(kr);
    dls_secret_del(grantor);
    dls_secret_del(holder);
    unlink(lock);
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_indexes_against_model),
        cmocka_unit_test(test_index_capacity_at_a_million),
        cmocka_unit_test(test_jset_tags_skip_callbacks),
        cmocka_unit_test(test_jtab_bulk_matches_inserts),
        cmocka_unit_test(test_ckhash_equals_one_pass),
        cmocka_unit_test(test_reserve_matches_growth),
        cmocka_unit_test(test_entry_sizes),
        cmocka_unit_test(test_subjects_inline_and_out_of_line),
        cmocka_unit_test(test_subject_side_record),
        cmocka_unit_test(test_caps_side_table),
        cmocka_unit_test(test_runs_flush_before_gap),
    };
    return cmocka_run_group_tests_name("ledger", tests, NULL, NULL);
}
