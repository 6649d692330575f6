/* Fault loops (STYLE.md convention 12): "every scenario test can rerun
 * failing allocation i ... for every i; each rerun must end in a clean
 * error, leak nothing, and leave the handle safe to delete."
 *
 * The spec asks that nothing a reader meets ends in a crash (vocabulary.md:
 * "A defective fact never crashes, blocks or corrupts a reader."), and every
 * public function documents DLS_ERR_NOMEM among its errors: an allocation
 * that fails must come back as that (or another documented) negative code,
 * never as a crash, a leak or a handle that cannot be deleted.
 *
 * The library keeps no global state and has no allocator hook, so the
 * faults are injected at link time: this program alone is linked with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc (tests/meson.build), which
 * routes every malloc/calloc/realloc call made from the objects linked into
 * it — this file and the core archive libdls_core.a — to the __wrap_*
 * functions below. They count calls and, when armed, fail the n-th by
 * answering NULL. Allocations made inside shared libraries (libsodium's
 * sodium_malloc, msgpack-c, jansson, libc's own strdup) are not counted.
 *
 * Each scenario is a function that builds everything it needs, runs, and
 * tears everything down, answering 0 or the first error. fault_loop() runs
 * it once unarmed (it must succeed and allocate at least once through the
 * wrappers), then reruns it with allocation i failing for i = 1, 2, … until
 * a rerun completes without reaching the armed allocation. Each failing
 * rerun must answer a negative code from the scenario's allowed list, every
 * handle is deleted by the scenario, and AddressSanitizer/LeakSanitizer or
 * valgrind (meson test --setup valgrind faults) confirm nothing leaks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <sodium.h>

#include "support.h"
#include "daolease/attrib.h"
#include "daolease/audit.h"
#include "daolease/error.h"
#include "daolease/fact.h"
#include "daolease/holder.h"
#include "daolease/mark.h"
#include "daolease/judge.h"
#include "daolease/stream.h"

/* ---- the allocation wrappers ----------------------------------------------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);

/* Test-program state only (the library itself stays free of globals). */
static struct {
    bool armed;        /* count (and maybe fail) allocations */
    uint64_t count;    /* allocations seen while armed */
    uint64_t fail_at;  /* fail this one (1-based); 0: none */
    bool hit;          /* the armed allocation was reached */
} F;

static bool fault_now(void)
{
    if (!F.armed)
        return false;
    F.count++;
    if (F.fail_at != 0 && F.count == F.fail_at) {
        F.hit = true;
        return true;
    }
    return false;
}

void *__wrap_malloc(size_t n)
{
    return fault_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
    return fault_now() ? NULL : __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
    /* a failed realloc leaves p untouched, as the real one does */
    return fault_now() ? NULL : __real_realloc(p, n);
}

/* ---- the loop ---------------------------------------------------------------------- */

/* A scenario answering a wrong result without an error (a fault swallowed
 * into a different outcome) answers this, which no list allows. */
#define WRONG_RESULT (wrong_line = __LINE__, -99999)
static int wrong_line; /* where the last wrong result was decided */

typedef int (*scenario_fn)(void *ctx);

static bool allowed(int rc, const int *ok, size_t nok)
{
    for (size_t i = 0; i < nok; i++)
        if (rc == ok[i])
            return true;
    return false;
}

/* Runs fn unarmed (must answer 0 after at least one counted allocation),
 * then with allocation i failing for every i until a rerun no longer reaches
 * allocation i; that last rerun must answer 0, every earlier one a code in
 * ok[]. Answers the number of allocations of the clean run. */
static uint64_t fault_loop(const char *name, scenario_fn fn, void *ctx, const int *ok,
                           size_t nok)
{
    F = (__typeof__(F)){.armed = true};
    int rc = fn(ctx);
    F.armed = false;
    if (rc)
        fprintf(stderr, "%s: clean run answered %s (%d)\n", name, dls_strerror(rc), rc);
    assert_int_equal(rc, 0);
    uint64_t total = F.count;
    /* the wrap really reaches the core archive's allocations */
    assert_true(total > 0);
    uint64_t failed = 0;
    uint64_t by_code[8] = {0}; /* reruns per allowed code, in ok[] order */
    for (uint64_t i = 1;; i++) {
        F = (__typeof__(F)){.armed = true, .fail_at = i};
        rc = fn(ctx);
        F.armed = false;
        if (!F.hit) {
            /* completed without reaching allocation i */
            if (rc)
                fprintf(stderr, "%s: run past the last allocation answered %d\n", name, rc);
            assert_int_equal(rc, 0);
            break;
        }
        failed++;
        if (!allowed(rc, ok, nok)) {
            fprintf(stderr, "%s: allocation %" PRIu64 " failed: answered %s (%d, line %d)\n",
                    name, i, rc ? dls_strerror(rc) : "success", rc, wrong_line);
            fail();
        }
        for (size_t k = 0; k < nok && k < 8; k++)
            by_code[k] += rc == ok[k];
        assert_true(i <= total + 1000); /* the loop ends */
    }
    fprintf(stderr, "%s: %" PRIu64 " allocations, %" PRIu64 " fault reruns:", name, total,
            failed);
    for (size_t k = 0; k < nok && k < 8; k++)
        fprintf(stderr, " %" PRIu64 " x %s", by_code[k], dls_strerror(ok[k]));
    fprintf(stderr, "\n");
    return total;
}

#define TRY(x)                                                                           \
    do {                                                                                 \
        rc = (x);                                                                        \
        if (rc)                                                                          \
            goto out;                                                                    \
    } while (0)

/* ---- helpers (used unarmed) ------------------------------------------------------------ */

static const char *vectors(void)
{
    const char *v = getenv("DLS_VECTORS");
    return v ? v : DLS_TEST_SRCDIR "/vectors";
}

static void vpath(char *buf, size_t cap, const char *rel)
{
    int n = snprintf(buf, cap, "%s/%s", vectors(), rel);
    assert_true(n > 0 && (size_t)n < cap);
}

static char *read_text(const char *rel, size_t *n)
{
    char path[1024];
    vpath(path, sizeof path, rel);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    assert_true(len >= 0);
    assert_int_equal(fseek(f, 0, SEEK_SET), 0);
    char *b = __real_malloc((size_t)len + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    b[len] = 0;
    *n = (size_t)len;
    return b;
}

/* Removes the files of a flat temporary directory, then the directory. */
static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* ---- 1. keyring parse, resolver, attribution (attribution.md) ---------------------------- */

typedef struct attrib_ctx {
    char *run_keyring, *stream_keyring;
    size_t run_n, stream_n;
    char three[1024];
} attrib_ctx;

static int sc_attrib(void *vctx)
{
    attrib_ctx *c = vctx;
    dls_keyring *run_kr = NULL, *kr = NULL;
    dls_medium *m = NULL;
    dls_cursor *cur = NULL;
    dls_resolver *r = NULL;
    int rc;
    TRY(dls_keyring_parse(&run_kr, c->run_keyring, c->run_n, NULL));
    if (dls_keyring_count(run_kr) == 0) {
        rc = WRONG_RESULT;
        goto out;
    }
    TRY(dls_keyring_parse(&kr, c->stream_keyring, c->stream_n, NULL));
    TRY(dls_medium_open(&m, c->three, DLS_OPEN_READ, NULL, NULL));
    TRY(dls_resolver_new_signed(&r, dls_medium_id(m), kr));
    TRY(dls_cursor_new(&cur, m, 0));
    /* three.expect.jsonl: a bare tick (bare-fact), worker-east's envelope
     * (verified), the seal */
    size_t records = 0, verified = 0;
    bool end = false;
    while (!end) {
        dls_record rec;
        dls_next nx = dls_cursor_next(cur, &rec, NULL);
        switch (nx) {
        case DLS_NEXT_OK: {
            dls_attribution a;
            dls_resolver_attribute(r, rec.p, rec.n, &a);
            records++;
            if (a.attributed)
                verified++;
            break;
        }
        case DLS_NEXT_END:
            end = true;
            break;
        case DLS_NEXT_ERROR:
            rc = DLS_ERR_TRANSPORT;
            goto out;
        default:
            rc = WRONG_RESULT;
            goto out;
        }
    }
    if (records != 2 || verified != 1)
        rc = WRONG_RESULT;
out:
    dls_cursor_del(cur);
    dls_resolver_del(r);
    dls_medium_del(m);
    dls_keyring_del(kr);
    dls_keyring_del(run_kr);
    return rc;
}

static void test_fault_attribution(void **state)
{
    (void)state;
    attrib_ctx c;
    c.run_keyring = read_text("run/keyring", &c.run_n);
    c.stream_keyring = read_text("stream/keyring", &c.stream_n);
    vpath(c.three, sizeof c.three, "stream/three.dls");
    const int ok[] = {DLS_ERR_NOMEM, DLS_ERR_TRANSPORT};
    fault_loop("attribution", sc_attrib, &c, ok, sizeof ok / sizeof ok[0]);
    free(c.run_keyring);
    free(c.stream_keyring);
}

/* ---- 2. rule 6 (vocabulary.md, rule 6) ------------------------------------------------------ */

#define R6_MAX 8
#define R6_CTX 4

typedef struct r6_vec {
    uint8_t fact[4096];
    size_t n;
    uint8_t ctx[R6_CTX][4096];
    size_t ctx_n[R6_CTX];
    size_t nctx;
} r6_vec;

typedef struct r6_ctx {
    r6_vec v[R6_MAX];
    size_t nv;
} r6_ctx;

static int sc_rule6(void *vctx)
{
    r6_ctx *c = vctx;
    dls_rule6 *r = NULL;
    int rc;
    for (size_t i = 0; i < c->nv; i++) {
        const r6_vec *v = &c->v[i];
        TRY(dls_rule6_new(&r));
        dls_fact f;
        for (size_t k = 0; k < v->nctx; k++) {
            if (dls_fact_decode(v->ctx[k], v->ctx_n[k], &f, NULL)) {
                rc = WRONG_RESULT;
                goto out;
            }
            TRY(dls_rule6_observe(r, &f));
        }
        if (dls_fact_decode(v->fact, v->n, &f, NULL)) {
            rc = WRONG_RESULT;
            goto out;
        }
        rc = dls_rule6_observe(r, &f);
        if (rc == DLS_ERR_NOMEM)
            goto out;
        /* the vector's fact contradicts its context: defective */
        if (rc != DLS_ERR_RULE6) {
            rc = WRONG_RESULT;
            goto out;
        }
        /* many distinct leases grow the tables (doubling) */
        for (uint64_t lease = 1000; lease < 1100; lease++) {
            dls_fact rel;
            dls_fact_release(&rel, lease, false);
            TRY(dls_rule6_observe(r, &rel));
        }
        dls_rule6_del(r);
        r = NULL;
    }
    rc = 0;
out:
    dls_rule6_del(r);
    return rc;
}

static void test_fault_rule6(void **state)
{
    (void)state;
    r6_ctx *c = calloc(1, sizeof *c);
    assert_non_null(c);
    char path[1024];
    vpath(path, sizeof path, "vocabulary.jsonl");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[65536];
    while (fgets(line, sizeof line, f) && c->nv < R6_MAX) {
        /* (jansson refuses the integers above INT64_MAX of some rule 3
         * vectors; none of them is a rule 6 vector) */
        json_t *o = json_loads(line, 0, NULL);
        if (!o)
            continue;
        json_t *rule = json_object_get(o, "rule");
        json_t *ctx = json_object_get(o, "context_hex");
        if (json_is_integer(rule) && json_integer_value(rule) == 6 && json_array_size(ctx) > 0 &&
            json_array_size(ctx) <= R6_CTX) {
            r6_vec *v = &c->v[c->nv++];
            v->n = test_unhex(json_string_value(json_object_get(o, "msgpack_hex")), v->fact,
                         sizeof v->fact);
            for (size_t k = 0; k < json_array_size(ctx); k++)
                v->ctx_n[k] = test_unhex(json_string_value(json_array_get(ctx, k)), v->ctx[k],
                                    sizeof v->ctx[k]);
            v->nctx = json_array_size(ctx);
        }
        json_decref(o);
    }
    fclose(f);
    assert_true(c->nv >= 1);
    const int ok[] = {DLS_ERR_NOMEM};
    fault_loop("rule6", sc_rule6, c, ok, sizeof ok / sizeof ok[0]);
    free(c);
}

/* ---- 3. ring medium, cursor, appends (streams.md) ------------------------------------------------ */

/* The next record must be `want`: a cursor whose buffer could not grow
 * answers DLS_NEXT_ERROR (streams.md: transport-error, cursor unchanged),
 * a clean reported outcome counted as DLS_ERR_TRANSPORT. */
static int want_next(dls_cursor *c, dls_next want, dls_record *r)
{
    dls_next nx = dls_cursor_next(c, r, NULL);
    if (nx == want)
        return 0;
    return nx == DLS_NEXT_ERROR ? DLS_ERR_TRANSPORT : WRONG_RESULT;
}

static int sc_ring(void *vctx)
{
    (void)vctx;
    dls_medium *m = NULL;
    dls_cursor *c1 = NULL, *c2 = NULL;
    int rc;
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.ring_capacity = 8;
    TRY(dls_ring_new(&m, &ms));
    TRY(dls_cursor_new(&c1, m, 0));
    /* records: fixmap {"k": i} */
    for (unsigned i = 0; i < 12; i++) {
        uint8_t rec[4] = {0x81, 0xa1, 'k', (uint8_t)(i & 0x7f)};
        uint64_t pos;
        TRY(dls_medium_append(m, rec, sizeof rec, &pos, NULL));
        if (pos != i) {
            rc = WRONG_RESULT;
            goto out;
        }
        if (i == 3) {
            dls_record r;
            TRY(want_next(c1, DLS_NEXT_OK, &r));
            if (r.position != 0) {
                rc = WRONG_RESULT;
                goto out;
            }
        }
    }
    const uint8_t *recs[3];
    size_t lens[3];
    uint8_t b[3][4];
    for (unsigned i = 0; i < 3; i++) {
        memcpy(b[i], (uint8_t[]){0x81, 0xa1, 'b', (uint8_t)i}, 4);
        recs[i] = b[i];
        lens[i] = 4;
    }
    uint64_t first;
    TRY(dls_medium_append_batch(m, recs, lens, 3, &first, NULL));
    /* c1 stood at 1; 15 records in a ring of 8: a gap to 7 */
    dls_record r;
    TRY(want_next(c1, DLS_NEXT_GAP, &r));
    if (r.position != 7) {
        rc = WRONG_RESULT;
        goto out;
    }
    TRY(dls_cursor_new(&c2, m, 10));
    size_t seen = 0;
    dls_next nx;
    while ((nx = dls_cursor_next(c2, &r, NULL)) == DLS_NEXT_OK)
        seen++;
    if (nx == DLS_NEXT_ERROR) {
        rc = DLS_ERR_TRANSPORT;
        goto out;
    }
    if (nx != DLS_NEXT_BLOCKED || seen != 5) {
        rc = WRONG_RESULT;
        goto out;
    }
    TRY(dls_medium_seal(m, NULL));
    rc = want_next(c2, DLS_NEXT_END, &r);
out:
    dls_cursor_del(c1);
    dls_cursor_del(c2);
    dls_medium_del(m);
    return rc;
}

static void test_fault_ring(void **state)
{
    (void)state;
    const int ok[] = {DLS_ERR_NOMEM, DLS_ERR_TRANSPORT};
    fault_loop("ring", sc_ring, NULL, ok, sizeof ok / sizeof ok[0]);
}

/* ---- 4. the judge (judge.md) on ring media and a file journal ------------------------------------ */

typedef struct judge_ctx {
    char base[256];      /* a temporary directory holding one dir per rerun */
    unsigned run;
    size_t reclaims;
} judge_ctx;

static int j_reclaim(void *u, dls_bytes subject, uint64_t lease, dls_cause cause, bool commit)
{
    judge_ctx *c = u;
    (void)subject, (void)lease, (void)cause, (void)commit;
    c->reclaims++;
    return DLS_RECLAIM_DONE;
}

static int append_fact(dls_medium *m, const dls_fact *f, const dls_secret *signer)
{
    uint8_t fact[DLS_FACT_MAX], env[DLS_FACT_MAX + 256];
    size_t n, en;
    int rc = dls_fact_encode(f, fact, sizeof fact, &n);
    if (rc)
        return rc;
    if (!signer)
        return dls_medium_append(m, fact, n, NULL, NULL);
    rc = dls_envelope_seal(signer, dls_medium_id(m), fact, n, env, sizeof env, &en);
    return rc ? rc : dls_medium_append(m, env, en, NULL, NULL);
}

static int tick(dls_medium *tm, uint64_t ms)
{
    dls_fact f;
    dls_duration d;
    int rc = dls_duration_make(&d, DLS_UNIT_MS, ms);
    if (rc)
        return rc;
    dls_fact_tick(&f, d);
    return append_fact(tm, &f, NULL);
}

/* One pass, expected to observe the tick of reading `now_ms`. A lease-fact
 * cursor that cannot read on (its buffer could not grow) is a transport
 * error of that medium for the pass (judge.md, The pass, step 2), not a
 * fatal one. A tick cursor failing likewise is treated as blocked (step 1
 * says nothing of it; the pass result does not count it): the pass then
 * runs on an older now. Both are clean outcomes whose results differ from
 * the clean run's: counted as DLS_ERR_TRANSPORT. */
static int pass(dls_judge *j, dls_judge_pass_result *pr, uint64_t now_ms)
{
    int rc = dls_judge_pass(j, pr);
    if (rc == DLS_ERR_NOMEM)
        return WRONG_RESULT; /* issue 14 item 5: a poisoning failure answers a fatal code */
    if (dls_err_is_fatal(rc)) {
        /* judge.md: an allocation failure in a pass (DLS_ERR_FATAL_NOMEM)
         * or a failed journal append is fatal; every later call answers
         * DLS_ERR_FATAL and the handle stays deletable */
        dls_judge_pass_result again;
        if (dls_judge_pass(j, &again) != DLS_ERR_FATAL)
            return WRONG_RESULT;
        return rc;
    }
    if (rc == 0 && (pr->transport_errors || !pr->has_now || pr->now != now_ms * DLS_MS))
        rc = DLS_ERR_TRANSPORT;
    return rc;
}

static int sc_judge(void *vctx)
{
    judge_ctx *c = vctx;
    char dir[512], jpath[600];
    snprintf(dir, sizeof dir, "%s/r%u", c->base, c->run++);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(jpath, sizeof jpath, "%s/journal.dls", dir);
    c->reclaims = 0;

    dls_secret *grantor = NULL, *holder = NULL;
    dls_keyring *kr = NULL;
    dls_medium *journal = NULL, *tickm = NULL, *lm = NULL;
    dls_resolver *tickr = NULL, *lr = NULL;
    dls_judge *j = NULL;
    int rc;
    uint8_t seed[32];
    memset(seed, 7, sizeof seed);
    TRY(dls_secret_from_seed(&grantor, "arbiter", DLS_KEY_ED25519, seed));
    memset(seed, 0x40, sizeof seed);
    TRY(dls_secret_from_seed(&holder, "holder-0", DLS_KEY_ED25519, seed));
    TRY(dls_keyring_new(&kr));
    TRY(dls_keyring_add(kr, (const uint8_t *)"holder-0", 8, DLS_KEY_ED25519,
                        dls_secret_public(holder)));
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    uint8_t jid[16], tid[16], lid[16];
    memset(jid, 0x4a, sizeof jid);
    memset(tid, 0xee, sizeof tid);
    memset(lid, 0x10, sizeof lid);
    ms.id = jid;
    TRY(dls_medium_create(&journal, DLS_MEDIUM_FILE, jpath, &ms, NULL));
    ms.ring_capacity = 64;
    ms.id = tid;
    TRY(dls_ring_new(&tickm, &ms));
    ms.id = lid;
    TRY(dls_ring_new(&lm, &ms));
    TRY(dls_resolver_new_medium(&tickr, dls_medium_id(tickm), "ticker", NULL));
    TRY(dls_resolver_new_signed(&lr, dls_medium_id(lm), kr));

    dls_judge_settings s;
    dls_judge_settings_default(&s);
    dls_judge_tick_source ts = {tickm, tickr, "ticker", "test-basis", 0};
    dls_judge_medium jm = {lm, lr};
    uint8_t hash_key[16];
    memset(hash_key, 0x5a, sizeof hash_key);
    s.grantor = grantor;
    s.journal = journal;
    s.ticks = &ts;
    s.nticks = 1;
    s.media = &jm;
    s.nmedia = 1;
    s.tolerance_ns = 250 * DLS_MS;
    s.cadence_ns = 1000 * DLS_MS;
    s.hash_key = hash_key;
    TRY(dls_duration_make(&s.default_duration, DLS_UNIT_S, 3));
    dls_judge_callbacks cb = {.reclaim = j_reclaim};
    TRY(dls_judge_new(&j, &s, &cb, c, NULL));

    /* a proposal, granted at the first pass */
    dls_fact f;
    uint8_t sb[32], pb[32];
    size_t sn, pn;
    TRY(dls_value_str(sb, sizeof sb, "queue/a", 7, &sn));
    TRY(dls_value_str(pb, sizeof pb, "p-1", 3, &pn));
    dls_fact_proposal(&f, (dls_bytes){pb, pn}, (dls_bytes){sb, sn}, 1);
    TRY(append_fact(lm, &f, holder));
    TRY(tick(tickm, 1000));
    dls_judge_pass_result pr;
    TRY(pass(j, &pr, 1000));
    if (pr.granted != 1) {
        rc = WRONG_RESULT;
        goto out;
    }
    uint64_t lease = dls_judge_highest_lease(j);
    /* renewals keep it alive over several passes */
    for (uint64_t k = 1; k <= 3; k++) {
        dls_fact_renewal(&f, lease, k);
        TRY(append_fact(lm, &f, holder));
        TRY(tick(tickm, 1000 + 1000 * k));
        TRY(pass(j, &pr, 1000 + 1000 * k));
        if (pr.live != 1) {
            rc = WRONG_RESULT;
            goto out;
        }
    }
    /* silence: the lease lapses and is reclaimed */
    TRY(tick(tickm, 20000));
    TRY(pass(j, &pr, 20000));
    TRY(tick(tickm, 21000));
    TRY(pass(j, &pr, 21000));
    if (c->reclaims != 1 || pr.live != 0)
        rc = WRONG_RESULT;
out:
    dls_judge_del(j);
    dls_resolver_del(lr);
    dls_resolver_del(tickr);
    dls_medium_del(lm);
    dls_medium_del(tickm);
    dls_medium_del(journal);
    dls_keyring_del(kr);
    dls_secret_del(holder);
    dls_secret_del(grantor);
    rm_dir(dir);
    return rc;
}

static void test_fault_judge(void **state)
{
    (void)state;
    judge_ctx c = {0};
    snprintf(c.base, sizeof c.base, "/tmp/dls-faults-XXXXXX");
    assert_non_null(mkdtemp(c.base));
    /* judge.md: a failed journal append is DLS_ERR_JOURNAL_WRITE (fatal) */
    const int ok[] = {DLS_ERR_NOMEM, DLS_ERR_FATAL, DLS_ERR_JOURNAL_WRITE, DLS_ERR_TRANSPORT,
                      DLS_ERR_FATAL_NOMEM};
    fault_loop("judge", sc_judge, &c, ok, sizeof ok / sizeof ok[0]);
    assert_int_equal(rmdir(c.base), 0);
}

/* ---- 4b. the holder (holder.md): grants observed, one batch of renewals,
 * a pass mark confirming them -------------------------------------------------- */

/* One step; a cursor that could not read on (its buffer could not grow)
 * answers transport-error in the result: counted as DLS_ERR_TRANSPORT. */
static int holder_step(dls_holder *h, dls_holder_result *r)
{
    int rc = dls_holder_step(h, r);
    if (rc == 0 && (r->tick_error || r->journal_error))
        rc = DLS_ERR_TRANSPORT;
    /* a renewal whose append failed (the batch envelope's M_batch could not
     * be allocated) is reported in its event: the step's outcome */
    for (size_t i = 0; rc == 0 && i < r->n_events; i++)
        if (r->events[i].kind == DLS_HOLDER_RENEWAL_FAILED)
            rc = r->events[i].error;
    return rc;
}

static int sc_holder(void *vctx)
{
    (void)vctx;
    dls_secret *grantor = NULL, *agent = NULL;
    dls_keyring *kr = NULL;
    dls_medium *journal = NULL, *tickm = NULL, *hm = NULL;
    dls_resolver *jr = NULL, *tr = NULL;
    dls_cursor *jc = NULL, *tc = NULL;
    dls_holder *h = NULL;
    int rc;
    uint8_t seed[32];
    memset(seed, 7, sizeof seed);
    TRY(dls_secret_from_seed(&grantor, "arbiter", DLS_KEY_ED25519, seed));
    memset(seed, 0x41, sizeof seed);
    TRY(dls_secret_from_seed(&agent, "agent-1", DLS_KEY_ED25519, seed));
    TRY(dls_keyring_new(&kr));
    TRY(dls_keyring_add(kr, (const uint8_t *)"arbiter", 7, DLS_KEY_ED25519,
                        dls_secret_public(grantor)));
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.ring_capacity = 64;
    TRY(dls_ring_new(&journal, &ms));
    TRY(dls_ring_new(&tickm, &ms));
    TRY(dls_ring_new(&hm, &ms));
    TRY(dls_resolver_new_signed(&jr, dls_medium_id(journal), kr));
    TRY(dls_resolver_new_medium(&tr, dls_medium_id(tickm), "ticker", NULL));
    TRY(dls_cursor_new(&jc, journal, 0));
    TRY(dls_cursor_new(&tc, tickm, 0));
    dls_holder_parts parts = {
        .name = "agent-1", .secret = agent, .medium = hm, .grantor = "arbiter",
        .journal = jc, .journal_resolver = jr, .ticks = tc, .tick_resolver = tr,
        .tick_party = "ticker",
    };
    dls_holder_settings s;
    dls_holder_settings_default(&s);
    s.batch_max = 8;
    TRY(dls_holder_new(&h, &parts, &s, NULL, NULL, NULL));
    /* three unsolicited grants, observed at 1 s */
    uint8_t sb[32];
    size_t sn;
    TRY(dls_value_str(sb, sizeof sb, "queue/a", 7, &sn));
    for (uint64_t id = 1; id <= 3; id++) {
        dls_fact g;
        dls_duration d;
        TRY(dls_duration_make(&d, DLS_UNIT_S, 3));
        dls_fact_grant(&g, id, (dls_bytes){sb, sn}, (dls_bytes){(const uint8_t *)"agent-1", 7},
                       d, dls_medium_id(hm));
        TRY(append_fact(journal, &g, grantor));
    }
    TRY(tick(tickm, 1000));
    dls_holder_result r;
    TRY(holder_step(h, &r));
    if (r.n_events != 3) {
        rc = WRONG_RESULT;
        goto out;
    }
    /* at 2 s all three renew in one batch envelope */
    TRY(tick(tickm, 2000));
    TRY(holder_step(h, &r));
    if (r.appends != 1 || r.n_events != 3) {
        rc = WRONG_RESULT;
        goto out;
    }
    /* a mark drains past it: every renewal confirmed, bounds at 5 s */
    dls_holder_lease li;
    TRY(dls_holder_lease_info(h, 3, &li));
    dls_mark_pos dp;
    memcpy(dp.medium, dls_medium_id(hm), DLS_MEDIUM_ID_LEN);
    dp.position = li.last_position + 1;
    dls_mark m = {.pass = 1, .now_ns = 2000 * DLS_MS, .basis = {(const uint8_t *)"b", 1},
                  .tolerance_ns = 250 * DLS_MS, .cadence_ns = 100 * DLS_MS,
                  .drained = &dp, .n_drained = 1};
    dls_mark_writer wr = {0};
    uint8_t mb[256], env[512];
    size_t mn, en;
    if (dls_mark_encode_next(&m, &wr, mb, sizeof mb, &mn) != 1) {
        rc = WRONG_RESULT;
        goto out;
    }
    TRY(dls_envelope_seal(grantor, dls_medium_id(journal), mb, mn, env, sizeof env, &en));
    TRY(dls_medium_append(journal, env, en, NULL, NULL));
    TRY(tick(tickm, 2100));
    TRY(holder_step(h, &r));
    for (uint64_t id = 1; id <= 3; id++) {
        TRY(dls_holder_lease_info(h, id, &li));
        if (!li.confirmed || li.bound != 5000 * DLS_MS) {
            rc = WRONG_RESULT;
            goto out;
        }
    }
out:
    dls_holder_del(h);
    dls_cursor_del(tc);
    dls_cursor_del(jc);
    dls_resolver_del(tr);
    dls_resolver_del(jr);
    dls_medium_del(hm);
    dls_medium_del(tickm);
    dls_medium_del(journal);
    dls_keyring_del(kr);
    dls_secret_del(agent);
    dls_secret_del(grantor);
    return rc;
}

static void test_fault_holder(void **state)
{
    (void)state;
    /* holder.h: assembly and the step answer DLS_ERR_NOMEM (a step whose
     * events could not all be recorded still completed) */
    const int ok[] = {DLS_ERR_NOMEM, DLS_ERR_TRANSPORT};
    fault_loop("holder", sc_holder, NULL, ok, sizeof ok / sizeof ok[0]);
}

/* ---- 5. the audit (audit.md) over tests/vectors/run ------------------------------------------------- */

typedef struct audit_ctx {
    char journal[1024], east[1024], west[1024], keyring[1024];
    int exit_status;    /* of the clean run, compared on later clean runs */
    size_t leases;
} audit_ctx;

static int sc_audit(void *vctx)
{
    audit_ctx *c = vctx;
    dls_medium *j = NULL, *e = NULL, *w = NULL;
    dls_keyring *kr = NULL;
    dls_audit *a = NULL;
    int rc;
    TRY(dls_keyring_load(&kr, c->keyring, NULL));
    TRY(dls_medium_open(&j, c->journal, DLS_OPEN_READ, NULL, NULL));
    TRY(dls_medium_open(&e, c->east, DLS_OPEN_READ, NULL, NULL));
    TRY(dls_medium_open(&w, c->west, DLS_OPEN_READ, NULL, NULL));
    dls_audit_medium am[2] = {{e, NULL}, {w, NULL}};
    TRY(dls_audit_run(&a, NULL, j, "arbiter", kr, am, 2, NULL));
    const dls_audit_summary *s = dls_audit_summary_of(a);
    if (s->incomplete) {
        /* a cursor that could not read on (its allocation failed) counts
         * as a transport error: a clean, reported outcome */
        rc = DLS_ERR_TRANSPORT;
        goto out;
    }
    if (c->leases == 0) {
        c->leases = dls_audit_lease_count(a);
        c->exit_status = dls_audit_exit_status(a);
    } else if (c->leases != dls_audit_lease_count(a) ||
               c->exit_status != dls_audit_exit_status(a)) {
        rc = WRONG_RESULT;
    }
out:
    dls_audit_del(a);
    dls_medium_del(w);
    dls_medium_del(e);
    dls_medium_del(j);
    dls_keyring_del(kr);
    return rc;
}

static void test_fault_audit(void **state)
{
    (void)state;
    audit_ctx c = {0};
    vpath(c.journal, sizeof c.journal, "run/journal.dls");
    vpath(c.east, sizeof c.east, "run/worker-east.dls");
    vpath(c.west, sizeof c.west, "run/worker-west.dls");
    vpath(c.keyring, sizeof c.keyring, "run/keyring");
    const int ok[] = {DLS_ERR_NOMEM, DLS_ERR_TRANSPORT};
    fault_loop("audit", sc_audit, &c, ok, sizeof ok / sizeof ok[0]);
    assert_true(c.leases > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault_attribution),
        cmocka_unit_test(test_fault_rule6),
        cmocka_unit_test(test_fault_ring),
        cmocka_unit_test(test_fault_judge),
        cmocka_unit_test(test_fault_holder),
        cmocka_unit_test(test_fault_audit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
