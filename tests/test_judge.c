/* Tests for the judge (judge.md): assembly, the pass (steps 1–7), the
 * causes and their order, evidence states, gaps, end, transport errors,
 * the default grant policy, the journal and its determinism, restart, and
 * the conformance vector tests/vectors/run/journal.dls reproduced byte for
 * byte. Every scenario runs on ring media and hand-written tick streams.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "daolease/attrib.h"
#include "daolease/fact.h"
#include "daolease/judge.h"
#include "daolease/judge_view.h"
#include "daolease/mark.h"
#include "daolease/medium_impl.h"
#include "daolease/stream.h"
#include "stream/internal.h"
#include "vocab/heap.h"
#include "judge/jtab.h"
#include "judge_harness.h"

#define MS DLS_MS
#define SEC (1000 * MS)
#define MAXM JH_MAXM
#define MAXH JH_MAXH

/* ---- small helpers ---------------------------------------------------------------- */

static void hex_to(const char *hex, uint8_t *out, size_t n)
{
    assert_int_equal(sodium_hex2bin(out, n, hex, 2 * n, NULL, NULL, NULL), 0);
}

static uint8_t *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(len > 0 ? (size_t)len : 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return b;
}

static const char *vectors(void)
{
    const char *v = getenv("DLS_VECTORS");
    return v ? v : DLS_TEST_SRCDIR "/vectors";
}

/* The harness (judge_harness.h): ring media of 4,096 records. */
static void h_init(harness *h, size_t nmedia, size_t nholders)
{
    jh_init(h, nmedia, nholders, NULL);
}

/* Tick to `now` and run a pass. */
static dls_judge_pass_result h_at(harness *h, uint64_t now)
{
    h_tick(h, now);
    return h_pass(h);
}

/* ---- reading the journal back ------------------------------------------------------------- */

typedef struct jrec {
    bool mark;
    bool continued;
    uint64_t pass;
    uint64_t now;
    bool late, restarted, kept, has_floor;
    uint64_t floor, from_pos; /* from_pos: the first from entry's position */
    size_t ndue, ngaps, nerrors, ndrained, nfrom;
    dls_mark_due due[16];
    dls_mark_pos drained[MAXM];
    dls_mark_pos errors[MAXM];
    dls_mark_gap gaps[MAXM];
    dls_fact_kind kind;
    uint64_t lease;
    dls_cause cause;
    char reason[64];
    char holder[64];
    uint8_t subject[64];
    size_t subject_len;
    uint64_t duration_ns;
    dls_unit unit;
    uint8_t medium[16];
    bool has_mode, has_max, has_proposal;
    dls_mode mode;
    uint64_t max_ns;
} jrec;

typedef struct jlog {
    jrec r[512];
    size_t n;
} jlog;

static void decode_record(const dls_attribution *a, jrec *out)
{
    memset(out, 0, sizeof *out);
    if (dls_mark_classify(a->fact.p, a->fact.n) == DLS_MARK_REC_MARK) {
        dls_mark_view v;
        assert_int_equal(dls_mark_decode(a->fact.p, a->fact.n, &v, NULL), 0);
        out->mark = true;
        out->continued = v.continued;
        out->pass = v.pass;
        out->now = v.now.ns;
        out->late = v.late;
        out->restarted = v.restarted;
        out->kept = v.kept;
        out->has_floor = v.has_floor;
        out->floor = v.floor;
        dls_mark_pos fp;
        while (dls_mark_next_pos(&v.from, &fp))
            if (out->nfrom++ == 0)
                out->from_pos = fp.position;
        while (out->ndue < 16 && dls_mark_next_due(&v.due, &out->due[out->ndue]))
            out->ndue++;
        while (out->ndrained < MAXM && dls_mark_next_pos(&v.drained, &out->drained[out->ndrained]))
            out->ndrained++;
        while (out->nerrors < MAXM && dls_mark_next_pos(&v.errors, &out->errors[out->nerrors]))
            out->nerrors++;
        while (out->ngaps < MAXM && dls_mark_next_gap(&v.gaps, &out->gaps[out->ngaps]))
            out->ngaps++;
        return;
    }
    dls_fact f;
    assert_int_equal(dls_fact_decode(a->fact.p, a->fact.n, &f, NULL), 0);
    out->kind = f.kind;
    out->lease = f.lease;
    out->cause = f.cause;
    snprintf(out->reason, sizeof out->reason, "%.*s", (int)f.reason.n, (const char *)f.reason.p);
    snprintf(out->holder, sizeof out->holder, "%.*s", (int)f.holder.n, (const char *)f.holder.p);
    out->subject_len = f.subject.n < 64 ? f.subject.n : 64;
    if (f.subject.p)
        memcpy(out->subject, f.subject.p, out->subject_len);
    out->duration_ns = f.duration.ns;
    out->unit = f.duration.unit;
    memcpy(out->medium, f.medium, 16);
    out->has_mode = (f.keys & DLS_K_MODE) != 0;
    out->mode = f.mode;
    out->has_max = (f.keys & DLS_K_MAX) != 0;
    out->max_ns = f.max.ns;
    out->has_proposal = (f.keys & DLS_K_PROPOSAL) != 0;
}

/* Reads every journal record, verifying each under the grantor's key. */
static void read_journal(harness *h, jlog *log)
{
    dls_medium *m;
    assert_int_equal(dls_medium_open(&m, h->journal_path, DLS_OPEN_READ, NULL, NULL), 0);
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    assert_int_equal(dls_keyring_add(kr, (const uint8_t *)"arbiter", 7, DLS_KEY_ED25519,
                                     dls_secret_public(h->grantor)),
                     0);
    dls_resolver *r;
    assert_int_equal(dls_resolver_new_signed(&r, dls_medium_id(m), kr), 0);
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    log->n = 0;
    dls_record rec;
    while (dls_cursor_next(c, &rec, NULL) == DLS_NEXT_OK) {
        dls_attribution a;
        dls_resolver_attribute(r, rec.p, rec.n, &a);
        assert_true(a.attributed); /* every record signed by the grantor */
        assert_true(log->n < 512);
        decode_record(&a, &log->r[log->n++]);
    }
    dls_cursor_del(c);
    dls_resolver_del(r);
    dls_keyring_del(kr);
    dls_medium_del(m);
}

/* The index of the first record of a kind (and lease, when non-zero)
 * after `from`, or -1. */
static int find_rec(const jlog *log, size_t from, dls_fact_kind kind, uint64_t lease)
{
    for (size_t i = from; i < log->n; i++)
        if (!log->r[i].mark && log->r[i].kind == kind && (!lease || log->r[i].lease == lease))
            return (int)i;
    return -1;
}

static size_t count_kind(const jlog *log, dls_fact_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < log->n; i++)
        n += !log->r[i].mark && log->r[i].kind == kind;
    return n;
}

/* The mark a record belongs to (the last mark before it). */
static const jrec *mark_of(const jlog *log, size_t i)
{
    for (size_t k = i + 1; k-- > 0;)
        if (log->r[k].mark && !log->r[k].continued)
            return &log->r[k];
    return NULL;
}

/* ======================================================================================== */
/* The conformance vector: tests/vectors/run/journal.dls reproduced byte for byte.           */
/* ======================================================================================== */

typedef struct src_medium {
    uint8_t id[16];
    uint8_t *rec[64];
    size_t len[64];
    size_t n;
} src_medium;

static void load_source(const char *path, src_medium *out)
{
    dls_medium *m;
    assert_int_equal(dls_medium_open(&m, path, DLS_OPEN_READ, NULL, NULL), 0);
    memcpy(out->id, dls_medium_id(m), 16);
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    dls_record rec;
    out->n = 0;
    while (dls_cursor_next(c, &rec, NULL) == DLS_NEXT_OK) {
        assert_true(out->n < 64);
        out->rec[out->n] = malloc(rec.n);
        memcpy(out->rec[out->n], rec.p, rec.n);
        out->len[out->n++] = rec.n;
    }
    dls_cursor_del(c);
    dls_medium_del(m);
}

static void free_source(src_medium *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->rec[i]);
}

typedef struct vmark {
    uint64_t pass, now;
    uint64_t pos[2];
} vmark;

/* The vector journal's marks: now and drained positions of each. */
static size_t vector_marks(const uint8_t *file, size_t n, const src_medium *src, vmark *out)
{
    size_t off = 48, count = 0;
    while (off + 8 <= n) {
        uint32_t L = (uint32_t)file[off] | (uint32_t)file[off + 1] << 8 |
                     (uint32_t)file[off + 2] << 16 | (uint32_t)file[off + 3] << 24;
        dls_attribution a;
        dls_record_classify(file + off + 8, L, &a);
        if (dls_mark_classify(a.fact.p, a.fact.n) == DLS_MARK_REC_MARK) {
            dls_mark_view v;
            assert_int_equal(dls_mark_decode(a.fact.p, a.fact.n, &v, NULL), 0);
            vmark *vm = &out[count++];
            vm->pass = v.pass;
            vm->now = v.now.ns;
            dls_mark_pos p;
            while (dls_mark_next_pos(&v.drained, &p))
                for (int k = 0; k < 2; k++)
                    if (memcmp(p.medium, src[k].id, 16) == 0)
                        vm->pos[k] = p.position;
        }
        off += 8 + L;
    }
    return count;
}

static int vector_reclaim(void *u, dls_bytes subject, uint64_t lease, dls_cause cause, bool commit)
{
    (void)u, (void)subject, (void)lease, (void)cause, (void)commit;
    return DLS_RECLAIM_DONE;
}

/* judge.md Determinism + tests/vectors/README.md "run/": an independent
 * implementation's journal for the same scenario; ours must be identical. */
static void test_vector_run_journal_reproduced(void **state)
{
    (void)state;
    char path[512];
    size_t vn;
    snprintf(path, sizeof path, "%s/run/journal.dls", vectors());
    uint8_t *vfile = read_file(path, &vn);
    assert_non_null(vfile);
    src_medium src[2];
    const char *names[2] = {"worker-east.dls", "worker-west.dls"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/run/%s", vectors(), names[k]);
        load_source(path, &src[k]);
    }
    vmark marks[32];
    size_t nmarks = vector_marks(vfile, vn, src, marks);
    assert_int_equal(nmarks, 8);

    /* the grantor: arbiter's seed from envelopes.jsonl */
    uint8_t seed[32];
    hex_to("79a59fa4edf90584f394c99b904571b5a16c27a3bd5ce369143a142d003664d3", seed, 32);
    dls_secret *arbiter;
    assert_int_equal(dls_secret_from_seed(&arbiter, "arbiter", DLS_KEY_ED25519, seed), 0);
    dls_keyring *kr;
    snprintf(path, sizeof path, "%s/run/keyring", vectors());
    assert_int_equal(dls_keyring_load(&kr, path, NULL), 0);

    char *dir = make_tmpdir();
    char jpath[256];
    snprintf(jpath, sizeof jpath, "%s/journal.dls", dir);
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.id = vfile + 16; /* the journal's medium id, from its header */
    dls_medium *journal;
    assert_int_equal(dls_medium_create(&journal, DLS_MEDIUM_FILE, jpath, &ms, NULL), 0);

    dls_medium *media[2];
    dls_resolver *res[2];
    dls_judge_medium jm[2];
    for (int k = 0; k < 2; k++) {
        dls_medium_settings rs;
        dls_medium_settings_default(&rs);
        rs.id = src[k].id;
        assert_int_equal(dls_ring_new(&media[k], &rs), 0);
        assert_int_equal(dls_resolver_new_signed(&res[k], src[k].id, kr), 0);
        jm[k] = (dls_judge_medium){media[k], res[k]};
    }
    dls_medium *tickm = ring_with_id(0xee, 64);
    dls_resolver *tickr;
    assert_int_equal(dls_resolver_new_medium(&tickr, dls_medium_id(tickm), "ticker", NULL), 0);
    dls_judge_tick_source ts = {tickm, tickr, "ticker", "boot-5b1e07c4/CLOCK_MONOTONIC", 0};

    dls_judge_settings s;
    dls_judge_settings_default(&s);
    s.grantor = arbiter;
    s.journal = journal;
    s.ticks = &ts;
    s.nticks = 1;
    s.media = jm;
    s.nmedia = 2;
    s.tolerance_ns = 250 * MS;
    s.cadence_ns = 1000 * MS;
    assert_int_equal(dls_duration_make(&s.default_duration, DLS_UNIT_S, 3), 0);
    dls_judge_callbacks cb = {.reclaim = vector_reclaim};
    dls_judge *j;
    assert_int_equal(dls_judge_new(&j, &s, &cb, NULL, NULL), 0);

    /* Passes every 800 ms from the first mark's now; before each pass the
     * media hold exactly the prefix that pass's mark says was drained (a
     * pass without a mark drained nothing new). */
    uint64_t last = marks[nmarks - 1].pass;
    size_t fed[2] = {0, 0}, mi = 0;
    for (uint64_t pass = 1; pass <= last; pass++) {
        uint64_t now = marks[0].now + (pass - 1) * 800 * MS;
        if (mi < nmarks && marks[mi].pass == pass) {
            assert_true(marks[mi].now == now);
            for (int k = 0; k < 2; k++)
                for (; fed[k] < marks[mi].pos[k]; fed[k]++)
                    assert_int_equal(dls_medium_append(media[k], src[k].rec[fed[k]],
                                                       src[k].len[fed[k]], NULL, NULL),
                                     0);
            mi++;
        }
        dls_fact f;
        dls_duration d;
        assert_int_equal(dls_duration_make(&d, DLS_UNIT_NS, now), 0);
        dls_fact_tick(&f, d);
        append_fact(tickm, &f, NULL);
        dls_judge_pass_result r;
        assert_int_equal(dls_judge_pass(j, &r), 0);
        assert_true(r.pass == pass);
    }
    dls_judge_del(j);
    dls_medium_del(journal);

    size_t on;
    uint8_t *ours = read_file(jpath, &on);
    assert_non_null(ours);
    if (on != vn || memcmp(ours, vfile, vn) != 0) {
        size_t k = 0;
        while (k < on && k < vn && ours[k] == vfile[k])
            k++;
        fprintf(stderr, "journal differs from the vector at byte %zu (ours %zu bytes, vector %zu)\n",
                k, on, vn);
    }
    assert_int_equal(on, vn);
    assert_memory_equal(ours, vfile, vn);

    free(ours);
    for (int k = 0; k < 2; k++) {
        dls_resolver_del(res[k]);
        dls_medium_del(media[k]);
        free_source(&src[k]);
    }
    dls_resolver_del(tickr);
    dls_medium_del(tickm);
    dls_keyring_del(kr);
    dls_secret_del(arbiter);
    rm_rf(dir);
    free(dir);
    free(vfile);
}

/* ======================================================================================== */
/* A fault-injecting medium: wraps a ring, can fail reads or appends, and
 * declares whatever kind, retention and sync a test needs.                                */
/* ======================================================================================== */

typedef struct fault {
    dls_medium *inner;
    bool read_error;
    bool append_error;
    long fail_at;      /* the append batch (0-based) that fails; -1: none */
    long batches;
} fault;

typedef struct fault_cursor {
    fault *f;
    dls_cursor *c;
} fault_cursor;

static int fault_batch(void *impl, const uint8_t *const *recs, const size_t *lens, size_t count,
                       uint64_t *first, dls_where *w)
{
    fault *f = impl;
    if (f->append_error || f->batches++ == f->fail_at)
        return DLS_ERR_IO;
    return dls_medium_append_batch(f->inner, recs, lens, count, first, w);
}

static int fault_cursor_new(void *impl, uint64_t from, void **out)
{
    fault_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return DLS_ERR_NOMEM;
    c->f = impl;
    if (dls_cursor_new(&c->c, c->f->inner, from)) {
        free(c);
        return DLS_ERR_NOMEM;
    }
    *out = c;
    return 0;
}

static dls_next fault_next(void *cimpl, dls_record *rec, dls_where *w)
{
    fault_cursor *c = cimpl;
    if (c->f->read_error) {
        if (w)
            w->reason = "injected transport error";
        return DLS_NEXT_ERROR;
    }
    return dls_cursor_next(c->c, rec, w);
}

static void fault_cursor_del(void *cimpl)
{
    fault_cursor *c = cimpl;
    dls_cursor_del(c->c);
    free(c);
}

static void fault_del(void *impl)
{
    fault *f = impl;
    dls_medium_del(f->inner);
    free(f);
}

static const dls_medium_ops fault_ops = {
    .kind_name = "fault",
    .append_batch = fault_batch,
    .cursor_new = fault_cursor_new,
    .cursor_next = fault_next,
    .cursor_del = fault_cursor_del,
    .del = fault_del,
};

/* A fault medium over a fresh ring with id tag, declaring kind/retention/sync. */
static dls_medium *fault_medium(uint8_t tag, dls_medium_kind kind, dls_retention ret,
                                dls_sync sync, const char *name, fault **out)
{
    fault *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->fail_at = -1;
    f->inner = ring_with_id(tag, 4096);
    dls_medium_info info;
    memset(&info, 0, sizeof info);
    info.kind = kind;
    info.retention = ret;
    info.sync = sync;
    info.mode = DLS_OPEN_APPEND;
    memcpy(info.id, dls_medium_id(f->inner), 16);
    info.name = name;
    if (kind == DLS_MEDIUM_FILE && strchr(name, '/')) {
        /* a file journal is locked through its path (judge.md Assembly rev 4) */
        int fd = open(name, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        close(fd);
    }
    dls_medium *m;
    assert_int_equal(dls_medium_wrap(&m, &fault_ops, f, &info), 0);
    if (out)
        *out = f;
    return m;
}

/* Replaces lease-fact medium i of a harness (before h_open) by a fault medium. */
static fault *h_fault_medium(harness *h, size_t i)
{
    fault *f;
    dls_resolver_del(h->res[i]);
    dls_medium_del(h->media[i]);
    h->media[i] = fault_medium((uint8_t)(0x10 + i), DLS_MEDIUM_RING, DLS_RETAIN_EVICT_OLDEST,
                               DLS_SYNC_DATA, "fault", &f);
    assert_int_equal(dls_resolver_new_signed(&h->res[i], dls_medium_id(h->media[i]), h->kr), 0);
    h->jm[i] = (dls_judge_medium){h->media[i], h->res[i]};
    return f;
}

/* ======================================================================================== */
/* Assembly (judge.md, Assembly)                                                              */
/* ======================================================================================== */

static int reclaim_done(void *u, dls_bytes s, uint64_t l, dls_cause c, bool commit)
{
    (void)u, (void)s, (void)l, (void)c, (void)commit;
    return DLS_RECLAIM_DONE;
}

static int try_new(harness *h, const dls_judge_settings *s, const char **reason)
{
    dls_judge_callbacks cb = {.reclaim = reclaim_done};
    dls_where w = {0};
    dls_judge *j = NULL;
    int rc = dls_judge_new(&j, s, &cb, h, &w);
    if (reason)
        *reason = w.reason;
    if (!rc) {
        assert_non_null(w.reason == NULL ? "" : w.reason);
        dls_judge_del(j);
    } else {
        assert_null(j);
        assert_non_null(w.reason); /* a clear error */
    }
    return rc;
}

static void test_assembly_grantor_required_and_ed25519(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    dls_judge_settings s = h.s;
    s.grantor = NULL;
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_NO_GRANTOR);
    dls_secret *mac;
    uint8_t key[32] = {1};
    assert_int_equal(dls_secret_from_seed(&mac, "arbiter", DLS_KEY_MAC, key), 0);
    s.grantor = mac;
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_KEYKIND);
    dls_secret_del(mac);
    assert_int_equal(try_new(&h, &h.s, NULL), 0);
    h_fini(&h);
}

static void test_assembly_journal_rules(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    dls_judge_settings s = h.s;
    s.journal = NULL;
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_NO_JOURNAL);
    /* an evict-oldest journal */
    dls_medium *ring = ring_with_id(0x77, 16);
    s.journal = ring;
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_RETENTION);
    dls_medium_del(ring);
    /* sync none */
    char path[300];
    snprintf(path, sizeof path, "%s/none.dls", h.dir);
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.sync = DLS_SYNC_NONE;
    dls_medium *none;
    assert_int_equal(dls_medium_create(&none, DLS_MEDIUM_FILE, path, &ms, NULL), 0);
    s.journal = none;
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_JOURNAL_SYNC);
    dls_medium_del(none);
    /* opened for reading only */
    dls_medium *ro;
    assert_int_equal(dls_medium_open(&ro, h.journal_path, DLS_OPEN_READ, NULL, NULL), 0);
    s.journal = ro;
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_STATE);
    dls_medium_del(ro);
    /* a journal that is not a file needs an explicit lock path */
    dls_medium *odd = fault_medium(0x78, DLS_MEDIUM_REDIS, DLS_RETAIN_ALL, DLS_SYNC_DATA,
                                   "redis://x", NULL);
    s.journal = odd;
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_CONFIG);
    char lock[300];
    snprintf(lock, sizeof lock, "%s/odd.lock", h.dir);
    s.journal_lock_path = lock;
    assert_int_equal(try_new(&h, &s, NULL), 0);
    dls_medium_del(odd);
    h_fini(&h);
}

/* judge.md Assembly (rev 4): held by one judge at a time — the lock is on
 * the journal itself, not on a side file. */
static void test_assembly_journal_held_by_another_judge(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    dls_medium *again;
    assert_int_equal(dls_medium_open(&again, h.journal_path, DLS_OPEN_APPEND, NULL, NULL), 0);
    dls_judge_settings s = h.s;
    s.journal = again;
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_JOURNAL_LOCKED);
    char lock[300];
    snprintf(lock, sizeof lock, "%s.lock", h.journal_path);
    struct stat st;
    assert_int_equal(stat(lock, &st), -1); /* no side file any more */
    h_close_judge(&h); /* the lock ends with the judge */
    assert_int_equal(try_new(&h, &s, NULL), 0);
    dls_medium_del(again);
    h_fini(&h);
}

/* judge.md Assembly (rev 4): the lock follows the journal's inode through
 * any path — a second judge reaching it by a symlink or a hard link is
 * refused (issue 12 item 4: both used to run and both granted lease 1). */
static void test_assembly_journal_lock_follows_inode(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    char sym[300], hard[300];
    snprintf(sym, sizeof sym, "%s/by-symlink.dls", h.dir);
    snprintf(hard, sizeof hard, "%s/by-hardlink.dls", h.dir);
    assert_int_equal(symlink(h.journal_path, sym), 0);
    assert_int_equal(link(h.journal_path, hard), 0);
    const char *paths[2] = {sym, hard};
    for (int i = 0; i < 2; i++) {
        dls_medium *other;
        assert_int_equal(dls_medium_open(&other, paths[i], DLS_OPEN_APPEND, NULL, NULL), 0);
        dls_judge_settings s = h.s;
        s.journal = other;
        dls_where w = {0};
        dls_judge *j2 = NULL;
        dls_judge_callbacks cb = {.reclaim = h_reclaim};
        assert_int_equal(dls_judge_new(&j2, &s, &cb, &h, &w), DLS_ERR_JOURNAL_LOCKED);
        assert_null(j2);
        assert_non_null(w.reason);
        dls_medium_del(other);
    }
    /* once the first judge is gone, the second path works */
    h_close_judge(&h);
    dls_medium *other;
    assert_int_equal(dls_medium_open(&other, hard, DLS_OPEN_APPEND, NULL, NULL), 0);
    dls_judge_settings s = h.s;
    s.journal = other;
    assert_int_equal(try_new(&h, &s, NULL), 0);
    dls_medium_del(other);
    unlink(sym);
    unlink(hard);
    h_fini(&h);
}

static void test_assembly_ticks_rules(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    dls_judge_settings s = h.s;
    s.nticks = 0;
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_NO_TICKS);
    dls_judge_tick_source t[2] = {h.tick, h.tick};
    s = h.s;
    s.ticks = t;
    s.nticks = 1;
    t[0].resolver = NULL;
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_NORESOLVER);
    t[0].resolver = h.res[0]; /* bound to the lease-fact medium */
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_RESOLVER_MEDIUM);
    t[0] = h.tick;
    t[0].basis = NULL;
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_NO_TICKS);
    /* two tick sources on different reading bases */
    dls_medium *t2 = ring_with_id(0xef, 16);
    dls_resolver *r2;
    assert_int_equal(dls_resolver_new_medium(&r2, dls_medium_id(t2), "ticker", NULL), 0);
    t[0] = h.tick;
    t[1] = (dls_judge_tick_source){t2, r2, "ticker", "other-basis", 0};
    s.nticks = 2;
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_BASIS);
    t[1].basis = "test-basis";
    assert_int_equal(try_new(&h, &s, NULL), 0);
    dls_resolver_del(r2);
    dls_medium_del(t2);
    h_fini(&h);
}

static void test_assembly_media_rules(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 2, 1);
    dls_judge_settings s = h.s;
    dls_judge_medium jm[2] = {h.jm[0], h.jm[1]};
    s.media = jm;
    jm[1].resolver = NULL;
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_NORESOLVER);
    jm[1].resolver = h.res[0];
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_RESOLVER_MEDIUM);
    jm[1] = h.jm[0];
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_DUPLICATE);
    /* more than 1024 media */
    dls_judge_medium *many = calloc(1025, sizeof *many);
    for (size_t i = 0; i < 1025; i++)
        many[i] = h.jm[0];
    s.media = many;
    s.nmedia = 1025;
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_TOO_MANY_MEDIA);
    free(many);
    /* a medium declaring neither retention */
    dls_medium *odd = fault_medium(0x79, DLS_MEDIUM_RING, (dls_retention)9, DLS_SYNC_DATA, "odd",
                                   NULL);
    dls_resolver *odd_r;
    assert_int_equal(dls_resolver_new_signed(&odd_r, dls_medium_id(odd), h.kr), 0);
    dls_judge_medium one = {odd, odd_r};
    s.media = &one;
    s.nmedia = 1;
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_RETENTION);
    dls_resolver_del(odd_r);
    dls_medium_del(odd);
    /* zero media is a valid assembly (unsolicited grants need one, though) */
    s.nmedia = 0;
    assert_int_equal(try_new(&h, &s, NULL), 0);
    h_fini(&h);
}

static void test_assembly_terms_and_reclaim(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    dls_judge_settings s = h.s;
    s.tolerance_ns = DLS_JUDGE_UNSET;
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_CONFIG);
    s.tolerance_ns = 0; /* may be zero */
    s.cadence_ns = DLS_JUDGE_UNSET;
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_CONFIG);
    s.cadence_ns = 0;
    assert_int_equal(try_new(&h, &s, NULL), DLS_ERR_CONFIG);
    s.cadence_ns = SEC;
    assert_int_equal(try_new(&h, &s, NULL), 0);
    dls_judge_callbacks none = {0};
    dls_judge *j = NULL;
    dls_where w = {0};
    assert_int_equal(dls_judge_new(&j, &h.s, &none, NULL, &w), DLS_ERR_NO_RECLAIM);
    assert_int_equal(dls_judge_new(&j, &h.s, NULL, NULL, &w), DLS_ERR_NO_RECLAIM);
    h_fini(&h);
}

/* ======================================================================================== */
/* Step 1: ticks                                                                             */
/* ======================================================================================== */

/* judge.md: before the first tick a pass drains nothing and classifies nothing. */
static void test_step1_before_first_tick_nothing(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    h_propose(&h, 0, 0, "job/1", "p1", 0);
    dls_judge_pass_result r = h_pass(&h);
    assert_false(r.has_now);
    assert_int_equal(r.drained, 0);
    assert_int_equal(r.granted, 0);
    assert_int_equal(r.pass, 0);
    jlog log;
    read_journal(&h, &log);
    assert_int_equal(log.n, 0);
    r = h_at(&h, 10 * SEC);
    assert_true(r.has_now);
    assert_int_equal(r.pass, 1);
    assert_int_equal(r.drained, 1);
    assert_int_equal(r.granted, 1);
    h_fini(&h);
}

/* judge.md step 1: ticks only from the tick adapter (a forged huge reading
 * would reclaim everything); rule 7 per tick stream. */
static void test_step1_ticks_only_from_adapter_and_rule7(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 2);
    /* a signed tick stream: "clock" is the adapter, holder-0 is not */
    dls_secret *clock;
    uint8_t seed[32];
    memset(seed, 0x33, 32);
    assert_int_equal(dls_secret_from_seed(&clock, "clock", DLS_KEY_ED25519, seed), 0);
    dls_keyring *tkr;
    assert_int_equal(dls_keyring_new(&tkr), 0);
    assert_int_equal(dls_keyring_add(tkr, (const uint8_t *)"clock", 5, DLS_KEY_ED25519,
                                     dls_secret_public(clock)),
                     0);
    assert_int_equal(dls_keyring_add(tkr, (const uint8_t *)"holder-0", 8, DLS_KEY_ED25519,
                                     dls_secret_public(h.holders[0])),
                     0);
    dls_resolver_del(h.tickr);
    assert_int_equal(dls_resolver_new_signed(&h.tickr, dls_medium_id(h.tickm), tkr), 0);
    h.tick.resolver = h.tickr;
    h.tick.adapter = "clock";
    h_open(&h);
    dls_fact f;
    dls_duration d;
    assert_int_equal(dls_duration_make(&d, DLS_UNIT_S, 5), 0);
    dls_fact_tick(&f, d);
    append_fact(h.tickm, &f, clock);
    dls_judge_pass_result r = h_pass(&h);
    assert_true(r.has_now);
    assert_int_equal(r.now, 5 * SEC);
    h_propose(&h, 1, 0, "job/1", "p1", 0);
    r = h_pass(&h);
    assert_true(r.granted == 1);
    /* a huge reading by a party that is not the adapter: ignored */
    assert_int_equal(dls_duration_make(&d, DLS_UNIT_H, 1000000), 0);
    dls_fact_tick(&f, d);
    append_fact(h.tickm, &f, h.holders[0]);
    append_fact(h.tickm, &f, NULL); /* a bare tick on a signed stream: forged */
    r = h_pass(&h);
    assert_true(r.now == 5 * SEC);
    assert_int_equal(r.ignored_wrong_author, 1);
    assert_int_equal(r.forged, 1);
    assert_true(r.lapsed[DLS_CAUSE_SILENCE] == 0);
    /* rule 7: an older reading than one observed on the stream */
    assert_int_equal(dls_duration_make(&d, DLS_UNIT_S, 4), 0);
    dls_fact_tick(&f, d);
    append_fact(h.tickm, &f, clock);
    r = h_pass(&h);
    assert_int_equal(r.defective[7], 1);
    assert_int_equal(r.now, 5 * SEC);
    dls_keyring_del(tkr);
    dls_secret_del(clock);
    h_fini(&h);
}

/* judge.md Assembly: with several tick cursors, now is the largest reading. */
static void test_step1_now_is_largest_reading(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    dls_medium *t2 = ring_with_id(0xef, 64);
    dls_resolver *r2;
    assert_int_equal(dls_resolver_new_medium(&r2, dls_medium_id(t2), "ticker2", NULL), 0);
    dls_judge_tick_source t[2] = {h.tick, {t2, r2, "ticker2", "test-basis", 0}};
    h.s.ticks = t;
    h.s.nticks = 2;
    h_open(&h);
    h_tick(&h, 7 * SEC);
    dls_fact f;
    dls_duration d;
    assert_int_equal(dls_duration_make(&d, DLS_UNIT_S, 9), 0);
    dls_fact_tick(&f, d);
    append_fact(t2, &f, NULL);
    dls_judge_pass_result r = h_pass(&h);
    assert_true(r.now == 9 * SEC);
    h_tick(&h, 8 * SEC); /* valid on its own stream, smaller than now */
    r = h_pass(&h);
    assert_int_equal(r.now, 9 * SEC);
    assert_int_equal(r.defective[7], 0);
    h_close_judge(&h);
    dls_resolver_del(r2);
    dls_medium_del(t2);
    h_fini(&h);
}

/* judge.md step 1: retiring the last tick cursor is an error on every later pass. */
static void test_step1_last_tick_cursor_retired(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    h_tick(&h, SEC);
    assert_int_equal(dls_medium_seal(h.tickm, NULL), 0);
    dls_judge_pass_result r;
    assert_int_equal(dls_judge_pass(h.j, &r), 0); /* this pass still has its now */
    assert_true(r.has_now);
    assert_int_equal(r.now, SEC);
    assert_int_equal(dls_judge_pass(h.j, &r), DLS_ERR_TICKS_ENDED);
    assert_int_equal(dls_judge_pass(h.j, &r), DLS_ERR_TICKS_ENDED);
    h_fini(&h);
}

/* judge.md Journal: tick cursors alone owe nothing; a pass that saw
 * nothing and did nothing appends nothing. */
static void test_mark_ticks_alone_owe_nothing(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    dls_judge_pass_result r = h_at(&h, SEC);
    assert_true(r.mark); /* the first pass after a start */
    assert_true(r.restarted);
    assert_int_equal(r.pass, 1);
    r = h_at(&h, SEC + 500 * MS);
    assert_false(r.mark);
    assert_int_equal(r.pass, 2);
    assert_int_equal(r.appended, 0);
    r = h_pass(&h); /* no new tick: now stays, the pass still counts */
    assert_int_equal(r.pass, 3);
    assert_false(r.mark);
    assert_int_equal(r.now, SEC + 500 * MS);
    jlog log;
    read_journal(&h, &log);
    assert_int_equal(log.n, 1);
    assert_true(log.r[0].mark);
    assert_true(log.r[0].restarted);
    assert_int_equal(log.r[0].pass, 1);
    h_fini(&h);
}

/* judge.md Journal: "A pass that owes a mark only because it is about to
 * append (…, a grant) appends the mark immediately before that first
 * record", once. */
static void test_mark_owed_only_by_grant_precedes_it(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    h_at(&h, SEC); /* the first pass: its mark */
    val a = str_val("a"), b = str_val("b");
    dls_bytes who = {(const uint8_t *)"holder-0", 8};
    assert_int_equal(dls_judge_grant(h.j, (dls_bytes){a.b, a.n}, who, 0, NULL, NULL, NULL), 0);
    assert_int_equal(dls_judge_grant(h.j, (dls_bytes){b.b, b.n}, who, 0, NULL, NULL, NULL), 0);
    dls_judge_pass_result r = h_at(&h, 1500 * MS);
    assert_true(r.mark);
    assert_int_equal(r.granted, 2);
    assert_int_equal(r.appended, 3);
    jlog log;
    read_journal(&h, &log);
    assert_int_equal(log.n, 4);
    assert_true(log.r[1].mark);
    assert_int_equal(log.r[1].pass, 2);
    assert_int_equal(log.r[1].now, 1500 * MS);
    assert_false(log.r[1].restarted);
    assert_int_equal(log.r[1].ndue, 0);
    assert_int_equal(log.r[1].ngaps, 0);
    assert_false(log.r[2].mark);
    assert_int_equal(log.r[2].kind, DLS_FACT_GRANT);
    assert_int_equal(log.r[2].lease, 1);
    assert_false(log.r[3].mark);
    assert_int_equal(log.r[3].kind, DLS_FACT_GRANT);
    assert_int_equal(log.r[3].lease, 2);
    h_fini(&h);
}

/* ======================================================================================== */
/* Step 2: facts                                                                             */
/* ======================================================================================== */

static void raw_renewal(harness *h, size_t holder, size_t medium, uint64_t lease, uint64_t seq)
{
    dls_fact f;
    dls_fact_renewal(&f, lease, seq);
    append_fact(h->media[medium], &f, h->holders[holder]);
}

static dls_judge_lease_info lease_info(harness *h, uint64_t lease)
{
    dls_judge_lease_info info;
    assert_int_equal(dls_judge_lease(h->j, lease, &info), 0);
    return info;
}

/* judge.md step 2: a counted renewal sets the last relevant observation to
 * now and the evidence known; vocabulary.md: silence is strict. */
static void test_step2_renewal_counted(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    h_propose(&h, 0, 0, "job/1", "p1", 0);
    assert_true(h_at(&h, 1 * SEC).granted == 1);
    dls_judge_lease_info i = lease_info(&h, 1);
    assert_int_equal(i.tenure_start, SEC);
    assert_int_equal(i.last_observation, SEC);
    assert_int_equal(i.last_seq, 0);
    raw_renewal(&h, 0, 0, 1, 1);
    dls_judge_pass_result r = h_at(&h, 2 * SEC);
    assert_int_equal(r.drained, 1);
    assert_int_equal(r.late_renewals, 0);
    i = lease_info(&h, 1);
    assert_int_equal(i.last_observation, 2 * SEC);
    assert_int_equal(i.last_seq, 1);
    assert_true(i.tenure_start == SEC); /* no renewal changes the tenure start */
    assert_int_equal(i.evidence, DLS_EVIDENCE_KNOWN);
    /* exactly duration + tolerance after the observation: not yet */
    r = h_at(&h, 2 * SEC + 3250 * MS);
    assert_int_equal(r.newly_due, 0);
    assert_int_equal(r.live, 1);
    r = h_at(&h, 2 * SEC + 3250 * MS + 1);
    assert_int_equal(r.newly_due, 1);
    assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 1);
    assert_int_equal(r.live, 0);
    h_fini(&h);
}

/* attribution.md gates 1 and 2, vocabulary.md seq: renewals on another
 * medium, by another author, for an unknown lease, or replayed count for
 * nothing. */
static void test_step2_renewal_gates_and_replay(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 2, 2);
    h_open(&h);
    h_propose(&h, 0, 0, "job/1", "p1", 0);
    h_at(&h, SEC);
    raw_renewal(&h, 0, 1, 1, 1); /* right holder, another medium */
    raw_renewal(&h, 1, 0, 1, 1); /* another holder's signature */
    raw_renewal(&h, 0, 0, 99, 1); /* unknown lease */
    dls_judge_pass_result r = h_at(&h, 2 * SEC);
    assert_int_equal(r.ignored_misplaced, 1);
    assert_int_equal(r.ignored_wrong_author, 1);
    assert_int_equal(r.ignored_unknown_lease, 1);
    assert_true(lease_info(&h, 1).last_observation == SEC);
    raw_renewal(&h, 0, 0, 1, 5);
    raw_renewal(&h, 0, 0, 1, 5); /* a copy */
    raw_renewal(&h, 0, 0, 1, 4); /* older */
    r = h_at(&h, 3 * SEC);
    assert_true(r.ignored_replayed == 2);
    dls_judge_lease_info i = lease_info(&h, 1);
    assert_int_equal(i.last_seq, 5);
    assert_int_equal(i.last_observation, 3 * SEC);
    /* silence is measured as though the ignored ones never arrived */
    r = h_at(&h, 6 * SEC + 250 * MS + 1);
    assert_true(r.lapsed[DLS_CAUSE_SILENCE] == 1);
    h_fini(&h);
}

/* attribution.md: records attributed to nobody are forged; vocabulary.md:
 * defective facts are counted by rule and establish nothing. */
static void test_step2_forged_and_defective_counted(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    dls_fact f;
    dls_fact_renewal(&f, 1, 1);
    append_fact(h.media[0], &f, NULL); /* bare fact on a signed medium */
    dls_secret *stranger;
    uint8_t seed[32];
    memset(seed, 0x99, sizeof seed);
    assert_int_equal(dls_secret_from_seed(&stranger, "stranger", DLS_KEY_ED25519, seed), 0);
    append_fact(h.media[0], &f, stranger); /* an author not in the keyring */
    /* {"dao.lease/event": "renewal", "dao.lease/lease": 1}: seq missing */
    uint8_t bad[64];
    size_t n = 0;
    bad[n++] = 0x82;
    bad[n++] = 0xaf;
    memcpy(bad + n, "dao.lease/event", 15);
    n += 15;
    bad[n++] = 0xa7;
    memcpy(bad + n, "renewal", 7);
    n += 7;
    bad[n++] = 0xaf;
    memcpy(bad + n, "dao.lease/lease", 15);
    n += 15;
    bad[n++] = 0x01;
    uint8_t env[256];
    size_t en;
    assert_int_equal(dls_envelope_seal(h.holders[0], dls_medium_id(h.media[0]), bad, n, env,
                                       sizeof env, &en),
                     0);
    assert_int_equal(dls_medium_append(h.media[0], env, en, NULL, NULL), 0);
    /* {"x": 1}: not a lease fact */
    const uint8_t other[] = {0x81, 0xa1, 'x', 0x01};
    assert_int_equal(dls_envelope_seal(h.holders[0], dls_medium_id(h.media[0]), other,
                                       sizeof other, env, sizeof env, &en),
                     0);
    assert_int_equal(dls_medium_append(h.media[0], env, en, NULL, NULL), 0);
    dls_judge_pass_result r = h_at(&h, SEC);
    assert_int_equal(r.drained, 4);
    assert_int_equal(r.forged, 2);
    assert_int_equal(r.defective[3], 1);
    assert_int_equal(r.not_lease, 1);
    assert_true(r.mark); /* the cursor moved */
    dls_secret_del(stranger);
    h_fini(&h);
}

/* judge.md step 2 / step 5: a valid release from the holder marks the lease
 * released; the reclaim is told commit; a second release is rule 6. */
static void test_step2_release_commit_and_rule6(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 2);
    h_open(&h);
    h_propose(&h, 0, 0, "job/1", "p1", 0);
    h_at(&h, SEC);
    h_release(&h, 1, 0, 1, true); /* another party's release establishes nothing */
    dls_judge_pass_result r = h_at(&h, 2 * SEC);
    assert_int_equal(r.ignored_wrong_author, 1);
    assert_int_equal(r.newly_due, 0);
    assert_false(lease_info(&h, 1).released);
    h.answer = DLS_RECLAIM_NOT_YET;
    h_release(&h, 0, 0, 1, true);
    h_release(&h, 0, 0, 1, false);
    r = h_at(&h, 3 * SEC);
    assert_int_equal(r.defective[6], 1);
    assert_int_equal(r.newly_due, 1);
    assert_int_equal(r.pending, 1);
    assert_int_equal(h.ncalls, 1);
    assert_int_equal(h.calls[0].lease, 1);
    assert_int_equal(h.calls[0].cause, DLS_CAUSE_RELEASE);
    assert_true(h.calls[0].commit);
    dls_judge_lease_info i = lease_info(&h, 1);
    assert_true(i.released);
    assert_true(i.commit);
    assert_true(i.pending);
    assert_int_equal(i.cause, DLS_CAUSE_RELEASE);
    h.answer = DLS_RECLAIM_DONE;
    r = h_at(&h, 4 * SEC);
    assert_int_equal(r.lapsed[DLS_CAUSE_RELEASE], 1);
    assert_true(h.calls[1].commit);
    h_fini(&h);
}

/* vocabulary.md seq: a proposal whose seq does not exceed its author's last
 * on that medium is a replay; another medium has its own seq. */
static void test_step2_proposal_replay_per_author_and_medium(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 2, 1);
    h_open(&h);
    dls_fact f;
    val s = str_val("job/1"), p = str_val("p1"), s2 = str_val("job/2"), p2 = str_val("p2");
    dls_fact_proposal(&f, (dls_bytes){p.b, p.n}, (dls_bytes){s.b, s.n}, 3);
    append_fact(h.media[0], &f, h.holders[0]);
    append_fact(h.media[0], &f, h.holders[0]); /* copied back onto the medium */
    dls_fact_proposal(&f, (dls_bytes){p2.b, p2.n}, (dls_bytes){s2.b, s2.n}, 3);
    append_fact(h.media[1], &f, h.holders[0]); /* seq 3 on another medium counts */
    dls_judge_pass_result r = h_at(&h, SEC);
    assert_int_equal(r.ignored_replayed, 1);
    assert_int_equal(r.granted, 2);
    /* registration: the grant names the medium the proposal arrived on */
    assert_int_equal(lease_info(&h, 1).medium, 0);
    assert_int_equal(lease_info(&h, 2).medium, 1);
    h_fini(&h);
}

static void h_ring_capacity(harness *h, size_t i, size_t cap)
{
    dls_resolver_del(h->res[i]);
    dls_medium_del(h->media[i]);
    h->media[i] = ring_with_id((uint8_t)(0x10 + i), cap);
    assert_int_equal(dls_resolver_new_signed(&h->res[i], dls_medium_id(h->media[i]), h->kr), 0);
    h->jm[i] = (dls_judge_medium){h->media[i], h->res[i]};
}

/* judge.md step 2: a gap marks every lease registered on the medium unknown
 * with now as its resumed reading; silence then needs both now − last
 * observation > duration + tolerance and now − resumed > duration. */
static void test_step2_gap_unknown_second_condition_binds(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 2, 2);
    h_ring_capacity(&h, 0, 4);
    h_open(&h);
    h_propose(&h, 0, 0, "job/1", "p1", 0);
    h_propose(&h, 1, 1, "job/2", "p2", 0); /* on the other medium: unaffected */
    h_at(&h, SEC);
    raw_renewal(&h, 0, 0, 1, 1);
    raw_renewal(&h, 1, 1, 2, 1);
    h_at(&h, 2 * SEC);
    for (int k = 0; k < 6; k++)
        raw_renewal(&h, 0, 0, 77, (uint64_t)k + 1); /* evicts unread records */
    dls_judge_pass_result r = h_at(&h, 3 * SEC);
    assert_int_equal(r.gaps, 1);
    assert_true(r.mark);
    dls_judge_lease_info i = lease_info(&h, 1);
    assert_int_equal(i.evidence, DLS_EVIDENCE_UNKNOWN);
    assert_int_equal(i.resumed, 3 * SEC);
    assert_int_equal(i.last_observation, 2 * SEC);
    assert_int_equal(lease_info(&h, 2).evidence, DLS_EVIDENCE_KNOWN);
    /* lease 2 (known) lapses at 2 + 3.25 s; lease 1 needs now − 3 s > 3 s too */
    r = h_at(&h, 5250 * MS + 1);
    assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 1);
    assert_int_equal(r.live, 1);
    r = h_at(&h, 6 * SEC);
    assert_int_equal(r.newly_due, 0);
    assert_int_equal(r.live, 1);
    r = h_at(&h, 6 * SEC + 1);
    assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 1);
    assert_int_equal(r.live, 0);
    jlog log;
    read_journal(&h, &log);
    int found = 0;
    for (size_t k = 0; k < log.n; k++)
        if (log.r[k].mark && log.r[k].ngaps == 1) {
            assert_memory_equal(log.r[k].gaps[0].medium, dls_medium_id(h.media[0]), 16);
            assert_int_equal(log.r[k].gaps[0].from, 2);
            assert_int_equal(log.r[k].gaps[0].to, 4);
            found++;
        }
    assert_int_equal(found, 1);
    h_fini(&h);
}

/* The first condition binds when the gap came soon after the observation. */
static void test_step2_gap_unknown_first_condition_binds(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_ring_capacity(&h, 0, 2);
    h_open(&h);
    h_propose(&h, 0, 0, "job/1", "p1", 0);
    h_at(&h, SEC);
    raw_renewal(&h, 0, 0, 1, 1);
    h_at(&h, 2 * SEC);
    for (int k = 0; k < 4; k++)
        raw_renewal(&h, 0, 0, 77, (uint64_t)k + 1);
    h_at(&h, 2100 * MS); /* gap: resumed 2.1 s */
    assert_int_equal(lease_info(&h, 1).evidence, DLS_EVIDENCE_UNKNOWN);
    dls_judge_pass_result r = h_at(&h, 5100 * MS + 1); /* second holds, first not */
    assert_true(r.newly_due == 0);
    r = h_at(&h, 5250 * MS);
    assert_true(r.newly_due == 0);
    r = h_at(&h, 5250 * MS + 1);
    assert_true(r.lapsed[DLS_CAUSE_SILENCE] == 1);
    h_fini(&h);
}

/* A renewal after the gap makes the evidence known again. */
static void test_step2_gap_then_renewal_known(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_ring_capacity(&h, 0, 2);
    h_open(&h);
    h_propose(&h, 0, 0, "job/1", "p1", 0);
    h_at(&h, SEC);
    for (int k = 0; k < 3; k++)
        raw_renewal(&h, 0, 0, 77, (uint64_t)k + 1);
    raw_renewal(&h, 0, 0, 1, 1); /* retained after the gap */
    dls_judge_pass_result r = h_at(&h, 2 * SEC);
    assert_true(r.gaps == 1);
    dls_judge_lease_info i = lease_info(&h, 1);
    assert_int_equal(i.evidence, DLS_EVIDENCE_KNOWN);
    assert_int_equal(i.last_observation, 2 * SEC);
    h_fini(&h);
}

/* stream-format.md end / judge.md step 2: end retires the cursor; drained
 * lists it at its seal; its leases fall silent. */
static void test_step2_end_retires_medium(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    h_propose(&h, 0, 0, "job/1", "p1", 0);
    h_at(&h, SEC);
    raw_renewal(&h, 0, 0, 1, 1);
    assert_int_equal(dls_medium_seal(h.media[0], NULL), 0);
    dls_judge_pass_result r = h_at(&h, 2 * SEC);
    assert_int_equal(r.drained, 1);
    assert_int_equal(r.transport_errors, 0);
    r = h_at(&h, 5250 * MS + 1);
    assert_true(r.lapsed[DLS_CAUSE_SILENCE] == 1);
    jlog log;
    read_journal(&h, &log);
    const jrec *last = NULL;
    for (size_t k = 0; k < log.n; k++)
        if (log.r[k].mark)
            last = &log.r[k];
    assert_non_null(last);
    assert_true(last->ndrained == 1); /* the seal's position */
    assert_true(last->drained[0].position == 2);
    h_fini(&h);
}

/* judge.md step 2: transport-error stops that medium for the pass, is
 * reported in errors, suspends silence judgement of its leases only — and
 * only until the failure has lasted duration + tolerance. */
static void test_step2_transport_error_scoped_and_bounded(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 2, 2);
    fault *f = h_fault_medium(&h, 0);
    h_open(&h);
    h_propose(&h, 0, 0, "job/a", "pa", 0);
    h_propose(&h, 1, 1, "job/b", "pb", 0);
    h_at(&h, SEC);
    f->read_error = true;
    dls_judge_pass_result r = h_at(&h, 2 * SEC);
    assert_int_equal(r.transport_errors, 1);
    assert_true(r.mark);
    r = h_at(&h, 4250 * MS + 1); /* b is silent: reclaimed although a's medium fails */
    assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 1);
    assert_int_equal(r.live, 1);
    assert_true(h.calls[0].lease == 2);
    r = h_at(&h, 5250 * MS); /* a: the failure began at 2 s; not yet d + tol */
    assert_int_equal(r.newly_due, 0);
    assert_int_equal(r.live, 1);
    r = h_at(&h, 5250 * MS + 1);
    assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 1);
    assert_int_equal(r.live, 0);
    jlog log;
    read_journal(&h, &log);
    size_t with_errors = 0;
    for (size_t k = 0; k < log.n; k++)
        if (log.r[k].mark && log.r[k].nerrors) {
            assert_memory_equal(log.r[k].errors[0].medium, dls_medium_id(h.media[0]), 16);
            assert_true(log.r[k].errors[0].position == 1);
            with_errors++;
        }
    assert_int_equal(with_errors, 4); /* every failing pass owes a mark */
    h_fini(&h);
}

/* A medium that recovers resumes judgement on what it delivers. */
static void test_step2_transport_error_recovery(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    fault *f = h_fault_medium(&h, 0);
    h_open(&h);
    h_propose(&h, 0, 0, "job/a", "pa", 0);
    h_at(&h, SEC);
    f->read_error = true;
    raw_renewal(&h, 0, 0, 1, 1); /* written, not readable */
    h_at(&h, 2 * SEC);
    dls_judge_pass_result r = h_at(&h, 4500 * MS); /* silence would hold; suspended */
    assert_true(r.newly_due == 0);
    f->read_error = false;
    r = h_at(&h, 4600 * MS);
    assert_int_equal(r.drained, 1);
    assert_int_equal(r.newly_due, 0);
    assert_true(lease_info(&h, 1).last_observation == 4600 * MS);
    h_fini(&h);
}

/* judge.md step 2: a medium cut short by the drain budget counts as failing
 * and is listed in errors. */
static void test_step2_drain_budget_counts_as_failing(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h.s.drain_budget = 2;
    h_open(&h);
    h_propose(&h, 0, 0, "job/a", "pa", 0);
    for (int k = 0; k < 3; k++)
        raw_renewal(&h, 0, 0, 9, (uint64_t)k + 1);
    dls_judge_pass_result r = h_at(&h, SEC);
    assert_int_equal(r.drained, 2);
    assert_int_equal(r.budget_cuts, 1);
    assert_int_equal(r.transport_errors, 1);
    r = h_at(&h, 2 * SEC);
    assert_int_equal(r.drained, 2);
    /* judge.md rev 4 step 2: the judge looks one record ahead — a medium
     * blocked right after the budget is used up counts as drained */
    assert_int_equal(r.budget_cuts, 0);
    assert_int_equal(r.behind, 0);
    r = h_at(&h, 3 * SEC);
    assert_int_equal(r.drained, 0);
    assert_int_equal(r.budget_cuts, 0);
    jlog log;
    read_journal(&h, &log);
    assert_true(log.r[0].mark);
    assert_int_equal(log.r[0].nerrors, 1);
    assert_int_equal(log.r[0].errors[0].position, 2);
    h_fini(&h);
}

/* Encodes `count` renewals of `lease`, seqs from `seq` on, into
 * facts[i] and fb[i] (the slices a batch envelope takes). */
static void encode_renewals(uint64_t lease, uint64_t seq, size_t count, uint8_t (*facts)[64],
                            dls_bytes *fb)
{
    for (size_t i = 0; i < count; i++) {
        dls_fact f;
        dls_fact_renewal(&f, lease, seq + i);
        assert_int_equal(dls_fact_encode(&f, facts[i], sizeof facts[i], &fb[i].n), 0);
        fb[i].p = facts[i];
    }
}

/* Appends one batch envelope of `count` renewals of lease 9 by holder 0
 * (attribution.md rev 4), seqs from *seq on. */
static void h_batch(harness *h, size_t count, uint64_t *seq)
{
    uint8_t facts[64][64];
    dls_bytes fb[64];
    assert_true(count <= 64);
    encode_renewals(9, *seq, count, facts, fb);
    *seq += count;
    static uint8_t env[65536];
    size_t n;
    assert_int_equal(dls_batch_seal(h->holders[0], dls_medium_id(h->media[0]), fb, count, env,
                                    sizeof env, &n),
                     0);
    assert_int_equal(dls_medium_append(h->media[0], env, n, NULL, NULL), 0);
}

/* judge.md rev 4 step 2 (issue 13 item 6): the drain budget counts facts —
 * each fact of a batch envelope one — and never splits a batch: a batch
 * that would pass the rest of the budget waits for the next pass (the
 * mark's drained position stops before it and the medium is listed in
 * errors: behind) unless it is the first record of the pass. */
static void test_step2_drain_budget_counts_facts_never_splits_batch(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h.s.drain_budget = 5;
    h_open(&h);
    uint64_t seq = 1;
    h_batch(&h, 3, &seq); /* position 0: 3 facts */
    h_batch(&h, 3, &seq); /* position 1: 3 more would make 6 > 5 */
    dls_judge_pass_result r = h_at(&h, SEC);
    assert_int_equal(r.drained, 1);
    assert_int_equal(r.facts, 3);
    assert_int_equal(r.batches, 1);
    assert_int_equal(r.behind, 1);
    assert_int_equal(r.transport_errors, 1); /* cut short: failing, like an error */
    assert_int_equal(r.ignored_unknown_lease, 3); /* each fact counted as if alone */
    h_batch(&h, 8, &seq); /* position 2: larger than the whole budget */
    r = h_at(&h, 2 * SEC);
    assert_int_equal(r.drained, 1); /* the held batch; the next one would pass 5 */
    assert_int_equal(r.facts, 3);
    assert_int_equal(r.behind, 1);
    r = h_at(&h, 3 * SEC);
    assert_int_equal(r.drained, 1); /* first of its pass: taken whole, never split */
    assert_int_equal(r.facts, 8);
    assert_int_equal(r.behind, 0);
    jlog log;
    read_journal(&h, &log);
    size_t marks = 0;
    uint64_t drained[3] = {0};
    size_t nerr[3] = {0};
    for (size_t i = 0; i < log.n && marks < 3; i++)
        if (log.r[i].mark && !log.r[i].continued) {
            drained[marks] = log.r[i].drained[0].position;
            nerr[marks++] = log.r[i].nerrors;
        }
    assert_int_equal(marks, 3);
    assert_int_equal(drained[0], 1); /* stops before the held batch */
    assert_int_equal(nerr[0], 1);
    assert_int_equal(drained[1], 2);
    assert_int_equal(nerr[1], 1);
    assert_int_equal(drained[2], 3);
    assert_int_equal(nerr[2], 0);
    h_fini(&h);
}

/* attribution.md rev 4 (issue 13 item 1, judge side): a batch envelope of
 * one holder's renewals is verified once and each fact counts as if alone —
 * the lease's seq and last observation advance; a batch that does not
 * verify is one forged record and counts nothing. */
static void test_step2_batch_renewals_count_each_fact(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 2);
    h_open(&h);
    h_propose(&h, 0, 0, "job/b", "p", 0);
    assert_int_equal(h_at(&h, SEC).granted, 1);
    uint8_t facts[2][64];
    dls_bytes fb[2];
    encode_renewals(1, 1, 2, facts, fb);
    static uint8_t env[4096];
    size_t n;
    assert_int_equal(dls_batch_seal(h.holders[0], dls_medium_id(h.media[0]), fb, 2, env,
                                    sizeof env, &n),
                     0);
    assert_int_equal(dls_medium_append(h.media[0], env, n, NULL, NULL), 0);
    env[n - 1] ^= 1; /* the same batch with a broken signature */
    assert_int_equal(dls_medium_append(h.media[0], env, n, NULL, NULL), 0);
    dls_judge_pass_result r = h_at(&h, 2 * SEC);
    assert_int_equal(r.drained, 2);
    assert_int_equal(r.facts, 4); /* as carried: the budget's count, verified or not */
    assert_int_equal(r.batches, 1); /* attributed */
    assert_int_equal(r.forged, 1);
    assert_int_equal(r.ignored_replayed, 0);
    dls_judge_lease_info i = lease_info(&h, 1);
    assert_int_equal(i.last_seq, 2);
    assert_int_equal(i.last_observation, 2 * SEC);
    h_fini(&h);
}

/* attribution.md rev 4 ("Batch envelopes": signed or MACed over M_batch)
 * with MAC keys (issue 13: the MAC-attributed batches bench_judge and
 * bench_e2e measure): a holder's MAC batch is verified once and each of its
 * facts counts; the same batch with its tag flipped, or MACed under another
 * key in the holder's name, is one forged record and counts nothing. */
static void test_step2_mac_batch_counts_each_fact(void **state)
{
    (void)state;
    harness h;
    jh_options o = {.mac_holders = true};
    jh_init(&h, 1, 2, &o);
    h_open(&h);
    h_propose(&h, 0, 0, "job/m", "p", 0); /* a MAC envelope */
    assert_int_equal(h_at(&h, SEC).granted, 1);
    uint8_t facts[3][64];
    dls_bytes fb[3];
    encode_renewals(1, 1, 3, facts, fb);
    static uint8_t env[4096], other[4096];
    size_t n, on;
    assert_int_equal(dls_batch_seal(h.holders[0], dls_medium_id(h.media[0]), fb, 3, env,
                                    sizeof env, &n),
                     0);
    /* the same facts under another MAC key, in holder-0's name */
    uint8_t seed[32];
    memset(seed, 0x99, sizeof seed);
    dls_secret *impostor;
    assert_int_equal(dls_secret_from_seed(&impostor, "holder-0", DLS_KEY_MAC, seed), 0);
    assert_int_equal(dls_batch_seal(impostor, dls_medium_id(h.media[0]), fb, 3, other,
                                    sizeof other, &on),
                     0);
    dls_secret_del(impostor);
    assert_int_equal(dls_medium_append(h.media[0], other, on, NULL, NULL), 0);
    env[n - 1] ^= 1;
    assert_int_equal(dls_medium_append(h.media[0], env, n, NULL, NULL), 0);
    env[n - 1] ^= 1;
    assert_int_equal(dls_medium_append(h.media[0], env, n, NULL, NULL), 0);
    dls_judge_pass_result r = h_at(&h, 2 * SEC);
    assert_int_equal(r.drained, 3);
    assert_int_equal(r.batches, 1); /* only the true one attributed */
    assert_int_equal(r.forged, 2);
    assert_int_equal(r.ignored_replayed, 0);
    dls_judge_lease_info i = lease_info(&h, 1);
    assert_int_equal(i.last_seq, 3);
    assert_int_equal(i.last_observation, 2 * SEC);
    h_fini(&h);
}

/* attribution.md rev 4 (each fact of a batch counts at (position, index),
 * in order) across the judge's runs of 16 facts (issue 13 item 4: the facts
 * of a run are decoded and their lookups prefetched before any is applied):
 * a replayed seq, an unknown lease and a defective fact in the second and
 * third runs count exactly as if the facts stood alone, and later renewals
 * of the same lease still see the seq of earlier ones. */
static void test_step2_batch_runs_count_in_order(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 2);
    h_open(&h);
    h_propose(&h, 0, 0, "job/r", "p", 0);
    assert_int_equal(h_at(&h, SEC).granted, 1);
    enum { N = 40 };
    uint8_t facts[N][64];
    dls_bytes fb[N];
    for (int i = 0; i < N; i++) {
        dls_fact f;
        if (i == 16)
            dls_fact_renewal(&f, 1, 5); /* first of run 2: seq 5 counted in run 1 */
        else if (i == 31)
            dls_fact_renewal(&f, 77, 100); /* a lease never granted */
        else if (i == 33)
            dls_fact_renewal(&f, 1, 33); /* seq 33 was counted at index 32 */
        else
            dls_fact_renewal(&f, 1, (uint64_t)i + 1);
        assert_int_equal(dls_fact_encode(&f, facts[i], sizeof facts[i], &fb[i].n), 0);
        fb[i].p = facts[i];
    }
    facts[20][0] = 0xc1; /* never-used msgpack byte: defective (rule 1) */
    fb[20].n = 1;
    static uint8_t env[8192];
    size_t n;
    assert_int_equal(dls_batch_seal(h.holders[0], dls_medium_id(h.media[0]), fb, N, env,
                                    sizeof env, &n),
                     0);
    assert_int_equal(dls_medium_append(h.media[0], env, n, NULL, NULL), 0);
    dls_judge_pass_result r = h_at(&h, 2 * SEC);
    assert_int_equal(r.facts, N);
    assert_int_equal(r.batches, 1);
    assert_int_equal(r.ignored_replayed, 2);      /* indices 16 and 33 */
    assert_int_equal(r.ignored_unknown_lease, 1); /* index 31 */
    uint64_t defective = 0;
    for (int k = 0; k < 8; k++)
        defective += r.defective[k];
    assert_int_equal(defective, 1); /* index 20 */
    dls_judge_lease_info i = lease_info(&h, 1);
    assert_int_equal(i.last_seq, N); /* the last fact's seq */
    assert_int_equal(i.last_observation, 2 * SEC);
    h_fini(&h);
}

/* judge.md rev 4 step 2 (issue 13 item 6): holders outpace the judge 3x
 * for 10 s — each pass drains at most the budget (bounded work), the medium
 * is behind and listed in errors, nobody is reclaimed early (the holder's
 * renewals, read late, are stamped with the later now), and the judge
 * catches up once the flood stops. Counted in facts, never timed. */
static void test_step2_overload_bounded_no_early_reclaim(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 2);
    h.s.drain_budget = 30;
    h_open(&h);
    h_propose(&h, 0, 0, "job/o", "p", 0);
    assert_int_equal(h_at(&h, SEC).granted, 1);
    uint64_t filler = 0, behind_passes = 0;
    for (uint64_t t = 2; t <= 11; t++) { /* 10 s of flood: 90 facts a second */
        h_renew(&h, 0, 0, 1);
        for (int k = 0; k < 89; k++)
            raw_renewal(&h, 1, 0, 1, ++filler); /* holder-1 naming lease 1: ignored */
        dls_judge_pass_result r = h_at(&h, t * SEC);
        assert_true(r.facts <= 30); /* bounded by the budget */
        assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 0);
        assert_int_equal(r.newly_due, 0);
        behind_passes += r.behind;
    }
    assert_int_equal(behind_passes, 10);
    uint64_t t = 12;
    for (; t < 60; t++) { /* the flood stops; the holder renews on */
        h_renew(&h, 0, 0, 1);
        dls_judge_pass_result r = h_at(&h, t * SEC);
        assert_true(r.facts <= 30);
        assert_int_equal(r.newly_due, 0); /* never reclaimed early */
        if (!r.behind)
            break; /* caught up */
    }
    assert_true(t < 60);
    assert_int_equal(dls_judge_live(h.j), 1);
    h_fini(&h);
}

/* ======================================================================================== */
/* Step 3: classification and the cause order                                                */
/* ======================================================================================== */

/* judge.md step 3: release before cap before policy before silence. */
static void test_step3_cause_order_release_cap_policy(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 3);
    assert_int_equal(dls_duration_make(&h.s.tenure_max, DLS_UNIT_S, 2), 0);
    h_open(&h);
    h_propose(&h, 0, 0, "job/a", "pa", 0);
    h_propose(&h, 1, 0, "job/b", "pb", 0);
    h_propose(&h, 2, 0, "job/c", "pc", 0);
    h_at(&h, SEC);
    /* at 5 s: cap (> 2 s + 0.25 s) and silence (> 3.25 s) hold for all */
    h_release(&h, 0, 0, 1, false);
    assert_int_equal(dls_judge_end(h.j, 1), 0);
    assert_int_equal(dls_judge_end(h.j, 2), 0);
    dls_judge_pass_result r = h_at(&h, 5 * SEC);
    assert_int_equal(r.lapsed[DLS_CAUSE_RELEASE], 1);
    assert_int_equal(r.lapsed[DLS_CAUSE_CAP], 2);
    jlog log;
    read_journal(&h, &log);
    int m = find_rec(&log, 0, DLS_FACT_RECLAIM, 0);
    assert_true(m > 0);
    const jrec *mk = mark_of(&log, (size_t)m);
    assert_true(mk->ndue == 3);
    assert_true(mk->due[0].lease == 1);
    assert_true(mk->due[0].cause == DLS_CAUSE_RELEASE);
    assert_true(mk->due[1].lease == 2);
    assert_true(mk->due[1].cause == DLS_CAUSE_CAP);
    assert_true(mk->due[2].lease == 3);
    assert_true(mk->due[2].cause == DLS_CAUSE_CAP);
    /* grants carry the cap as max */
    int g = find_rec(&log, 0, DLS_FACT_GRANT, 1);
    assert_true(log.r[g].has_max);
    assert_int_equal(log.r[g].max_ns, 2 * SEC);
    h_fini(&h);
}

static void test_step3_cause_order_policy_before_silence(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 2);
    h_open(&h);
    h_propose(&h, 0, 0, "job/a", "pa", 0);
    h_propose(&h, 1, 0, "job/b", "pb", 0);
    h_at(&h, SEC);
    assert_int_equal(dls_judge_end(h.j, 1), 0);
    assert_int_equal(dls_judge_end(h.j, 77), DLS_ERR_UNKNOWN_LEASE);
    dls_judge_pass_result r = h_at(&h, 5 * SEC);
    assert_int_equal(r.lapsed[DLS_CAUSE_POLICY], 1);
    assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 1);
    assert_int_equal(h.calls[0].lease, 1);
    assert_int_equal(h.calls[0].cause, DLS_CAUSE_POLICY);
    assert_int_equal(h.calls[1].lease, 2);
    assert_int_equal(h.calls[1].cause, DLS_CAUSE_SILENCE);
    h_fini(&h);
}

/* judge.md step 3: cap at max + tolerance after the tenure start; renewals
 * cannot help. */
static void test_step3_cap_despite_renewals(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    assert_int_equal(dls_duration_make(&h.s.tenure_max, DLS_UNIT_S, 4), 0);
    h_open(&h);
    h_propose(&h, 0, 0, "job/a", "pa", 0);
    h_at(&h, SEC);
    for (uint64_t t = 2; t <= 5; t++) {
        h_renew(&h, 0, 0, 1);
        assert_true(h_at(&h, t * SEC).newly_due == 0);
    }
    h_renew(&h, 0, 0, 1);
    dls_judge_pass_result r = h_at(&h, 5250 * MS);
    assert_true(r.newly_due == 0);
    h_renew(&h, 0, 0, 1);
    r = h_at(&h, 5250 * MS + 1);
    assert_true(r.lapsed[DLS_CAUSE_CAP] == 1);
    h_fini(&h);
}

/* judge.md step 3: a pending lease keeps its cause; counted renewals are
 * counted whatever else holds; the due list names it once. */
static void test_step3_pending_keeps_cause(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    h_propose(&h, 0, 0, "job/a", "pa", 0);
    h_at(&h, SEC);
    h.answer = DLS_RECLAIM_NOT_YET;
    assert_int_equal(dls_judge_end(h.j, 1), 0);
    dls_judge_pass_result r = h_at(&h, 2 * SEC);
    assert_int_equal(r.newly_due, 1);
    assert_int_equal(r.pending, 1);
    assert_int_equal(r.reclaim_failed, 1);
    assert_true(r.next_due <= 2 * SEC); /* retry at the next opportunity */
    h_renew(&h, 0, 0, 1);
    h_release(&h, 0, 0, 1, true);
    h.answer = DLS_RECLAIM_FAILED;
    r = h_at(&h, 6 * SEC); /* release and silence hold now: the cause stays policy */
    assert_int_equal(r.newly_due, 0);
    assert_int_equal(r.pending, 1);
    dls_judge_lease_info i = lease_info(&h, 1);
    assert_true(i.pending);
    assert_int_equal(i.cause, DLS_CAUSE_POLICY);
    assert_int_equal(i.last_seq, 1);
    assert_true(i.released);
    assert_int_equal(h.calls[1].cause, DLS_CAUSE_POLICY);
    assert_false(h.calls[1].commit);
    h.answer = DLS_RECLAIM_DONE;
    r = h_at(&h, 7 * SEC);
    assert_int_equal(r.lapsed[DLS_CAUSE_POLICY], 1);
    assert_int_equal(r.live, 0);
    jlog log;
    read_journal(&h, &log);
    size_t dues = 0;
    for (size_t k = 0; k < log.n; k++)
        dues += log.r[k].mark ? log.r[k].ndue : 0;
    assert_int_equal(dues, 1);
    int l = find_rec(&log, 0, DLS_FACT_RECLAIM, 1);
    assert_true(l > 0);
    assert_int_equal(log.r[l].cause, DLS_CAUSE_POLICY);
    /* the lapsed record belongs to a mark appended just before it (owed
     * only because of the append), which carries no due */
    assert_true(log.r[l - 1].mark);
    assert_int_equal(log.r[l - 1].ndue, 0);
    assert_int_equal(log.r[l - 1].now, 7 * SEC);
    h_fini(&h);
}

/* judge.md Counters (docs/observe.md): renewals counted (a replay is not),
 * a late reclaim — due at one pass, lapsed at a later one after its reclaim
 * answered not yet — and the judge view of each medium: records and facts
 * drained, gaps, position. */
static void test_counters_renewals_late_reclaims_media(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 2, 1);
    h_open(&h);
    h_propose(&h, 0, 0, "job/a", "pa", 0);
    h_propose(&h, 0, 1, "job/b", "pb", 0);
    dls_judge_pass_result r = h_at(&h, SEC);
    assert_int_equal(r.granted, 2);
    assert_int_equal(r.renewals, 0);
    h_renew(&h, 0, 0, 1);
    h_renew(&h, 0, 0, 1);
    r = h_at(&h, 2 * SEC);
    assert_int_equal(r.renewals, 2);
    assert_int_equal(r.late_reclaims, 0);
    dls_judge_medium_view v0, v1;
    assert_int_equal(dls_judge_medium_view_of(h.j, 0, &v0), 0);
    assert_int_equal(dls_judge_medium_view_of(h.j, 1, &v1), 0);
    assert_int_equal(v0.drained, 3); /* a proposal, two renewals */
    assert_int_equal(v0.facts, 3);
    assert_int_equal(v1.drained, 1);
    assert_int_equal(v0.gaps, 0);
    assert_false(v0.failing);
    assert_true(v0.position > v1.position);
    assert_int_equal(dls_judge_medium_view_of(h.j, 2, &v0), DLS_ERR_INVAL);
    assert_int_equal(dls_judge_medium_view_of(NULL, 0, &v0), DLS_ERR_INVAL);
    h.answer = DLS_RECLAIM_NOT_YET;
    h_release(&h, 0, 0, 1, false);
    r = h_at(&h, 3 * SEC);
    assert_int_equal(r.pending, 1);
    assert_int_equal(r.reclaim_failed, 1);
    assert_int_equal(r.lapsed[DLS_CAUSE_RELEASE], 0);
    h.answer = DLS_RECLAIM_DONE;
    h_release(&h, 0, 1, 2, false); /* due and done at once: not late */
    r = h_at(&h, 4 * SEC);
    assert_int_equal(r.lapsed[DLS_CAUSE_RELEASE], 2);
    assert_int_equal(r.late_reclaims, 1);
    assert_int_equal(r.renewals, 0);
    h_fini(&h);
}

/* judge.md Counters: late renewals and cadence overruns. */
static void test_step3_late_renewals_and_cadence_overrun(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    h_propose(&h, 0, 0, "job/a", "pa", 0);
    h_at(&h, SEC);
    h_at(&h, 2 * SEC);
    h_renew(&h, 0, 0, 1);
    dls_judge_pass_result r = h_at(&h, 2500 * MS); /* exactly half: not late */
    assert_int_equal(r.late_renewals, 0);
    assert_false(r.cadence_overrun);
    h_renew(&h, 0, 0, 1);
    r = h_at(&h, 4 * SEC + 1); /* 1.5 s + 1 ns after: late; 1.5 s > cadence */
    assert_int_equal(r.late_renewals, 1);
    assert_true(r.cadence_overrun);
    assert_true(r.mark);
    r = h_at(&h, 5 * SEC + 1); /* exactly the cadence: no overrun, nothing owed */
    assert_false(r.cadence_overrun);
    assert_false(r.mark);
    r = h_at(&h, 6 * SEC + 2); /* an overrun alone owes a mark */
    assert_true(r.cadence_overrun);
    assert_true(r.mark);
    assert_int_equal(r.drained, 0);
    jlog log;
    read_journal(&h, &log);
    size_t late = 0;
    for (size_t k = 0; k < log.n; k++)
        late += log.r[k].mark && log.r[k].late;
    assert_int_equal(late, 2);
    h_fini(&h);
}

/* ======================================================================================== */
/* Steps 4–6: mark, reclaim, record                                                           */
/* ======================================================================================== */

typedef struct mark_probe {
    harness *h;
    bool saw_due_mark;
    size_t calls;
} mark_probe;

static int probe_reclaim(void *u, dls_bytes s, uint64_t lease, dls_cause c, bool commit)
{
    mark_probe *p = u;
    (void)s, (void)commit;
    jlog *log = malloc(sizeof *log);
    read_journal(p->h, log);
    /* the mark naming this lease as due is on the journal before the act */
    for (size_t k = 0; k < log->n; k++)
        if (log->r[k].mark)
            for (size_t d = 0; d < log->r[k].ndue; d++)
                if (log->r[k].due[d].lease == lease && log->r[k].due[d].cause == c)
                    p->saw_due_mark = true;
    assert_int_equal(find_rec(log, 0, DLS_FACT_RECLAIM, lease), -1); /* never before the act */
    free(log);
    p->calls++;
    return DLS_RECLAIM_DONE;
}

/* judge.md step 4: the mark is written before any act. */
static void test_step4_mark_before_reclaim(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    mark_probe p = {&h, false, 0};
    dls_judge_callbacks cb = {.reclaim = probe_reclaim};
    assert_int_equal(dls_judge_new(&h.j, &h.s, &cb, &p, NULL), 0);
    h_propose(&h, 0, 0, "job/a", "pa", 0);
    h_at(&h, SEC);
    dls_judge_pass_result r = h_at(&h, 5 * SEC);
    assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 1);
    assert_int_equal(p.calls, 1);
    assert_true(p.saw_due_mark);
    h_fini(&h);
}

/* judge.md step 4: a lease newly due owes a mark even if its reclaim fails;
 * a pass retrying a failing reclaim appends nothing. */
static void test_step4_due_owes_mark_even_if_reclaim_fails(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    h_propose(&h, 0, 0, "job/a", "pa", 0);
    h_at(&h, SEC);
    h.answer = DLS_RECLAIM_FAILED;
    dls_judge_pass_result r = h_at(&h, 5 * SEC);
    assert_true(r.mark);
    assert_int_equal(r.newly_due, 1);
    assert_int_equal(r.pending, 1);
    assert_int_equal(r.appended, 1);
    r = h_at(&h, 5500 * MS);
    assert_false(r.mark);
    assert_int_equal(r.appended, 0);
    assert_int_equal(r.pending, 1);
    h_fini(&h);
}

static int reenter_reclaim(void *u, dls_bytes s, uint64_t lease, dls_cause c, bool commit)
{
    harness *h = u;
    (void)s, (void)c, (void)commit;
    dls_judge_pass_result r;
    h->reenter_rc = dls_judge_pass(h->j, &r);
    assert_int_equal(dls_judge_end(h->j, lease), DLS_ERR_REENTRANT);
    val sub = str_val("x");
    assert_int_equal(dls_judge_grant(h->j, (dls_bytes){sub.b, sub.n},
                                     (dls_bytes){(const uint8_t *)"holder-0", 8}, 0, NULL, NULL,
                                     NULL),
                     DLS_ERR_REENTRANT);
    h->calls[h->ncalls++] = (reclaim_call){lease, c, commit, h->now};
    return DLS_RECLAIM_DONE;
}

/* judge.md Assembly: calling back into the judge from reclaim is an error. */
static void test_step5_reclaim_reentrancy_refused(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    dls_judge_callbacks cb = {.reclaim = reenter_reclaim};
    assert_int_equal(dls_judge_new(&h.j, &h.s, &cb, &h, NULL), 0);
    h_propose(&h, 0, 0, "job/a", "pa", 0);
    h_at(&h, SEC);
    dls_judge_pass_result r = h_at(&h, 5 * SEC);
    assert_int_equal(h.reenter_rc, DLS_ERR_REENTRANT);
    assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 1);
    assert_int_equal(h.ncalls, 1);
    h_fini(&h);
}

/* judge.md Determinism: due, reclaim calls and lapsed records go in
 * ascending lease id; step 6: lapsed only after the reclaim succeeded. */
static void test_step5_6_ascending_ids_and_lapsed_after_act(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 4);
    h_open(&h);
    for (size_t k = 0; k < 4; k++) {
        char sub[16], prop[16];
        snprintf(sub, sizeof sub, "job/%zu", k);
        snprintf(prop, sizeof prop, "p%zu", k);
        h_propose(&h, 3 - k, 0, sub, prop, 0);
    }
    h_at(&h, SEC);
    h.refuse_lease = 3;
    h_release(&h, 3, 0, 1, false); /* lease 1 by release, the others by silence */
    dls_judge_pass_result r = h_at(&h, 5 * SEC);
    assert_int_equal(r.newly_due, 4);
    assert_int_equal(r.pending, 1);
    for (size_t k = 0; k < 4; k++)
        assert_true(h.calls[k].lease == k + 1);
    jlog log;
    read_journal(&h, &log);
    uint64_t prev = 0;
    size_t lapsed = 0;
    for (size_t k = 0; k < log.n; k++)
        if (!log.r[k].mark && log.r[k].kind == DLS_FACT_RECLAIM) {
            assert_true(log.r[k].lease > prev);
            assert_int_not_equal(log.r[k].lease, 3);
            prev = log.r[k].lease;
            lapsed++;
        }
    assert_int_equal(lapsed, 3);
    assert_int_equal(dls_judge_lease(h.j, 3, &(dls_judge_lease_info){0}), 0);
    h_fini(&h);
}

/* ======================================================================================== */
/* Step 7 and the default grant policy                                                       */
/* ======================================================================================== */

/* Grant policy: exclusive FIFO; the bound is fixed at arrival (largest
 * remaining term); a freed subject serves its waiters in queue order. */
static void test_policy_exclusive_fifo_bound_at_arrival(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 3);
    h_open(&h);
    h_propose(&h, 0, 0, "job", "p0", 0);
    h_at(&h, SEC); /* lease 1 */
    h_propose(&h, 1, 0, "job", "p1", 0);
    dls_judge_pass_result r = h_at(&h, 2 * SEC); /* bound 3.25 − 1 = 2.25 s */
    assert_int_equal(r.waiting, 1);
    assert_int_equal(r.granted, 0);
    assert_int_equal(r.refused, 0);
    assert_true(r.next_due <= 4250 * MS + 1);
    h_propose(&h, 2, 0, "job", "p2", 0);
    r = h_at(&h, 2500 * MS); /* bound 3.25 − 1.5 = 1.75 s: refusal after 4.25 s */
    assert_true(r.waiting == 2);
    h_release(&h, 0, 0, 1, false);
    r = h_at(&h, 3 * SEC); /* lease 1 released: the first waiter gets lease 2 */
    assert_int_equal(r.lapsed[DLS_CAUSE_RELEASE], 1);
    assert_int_equal(r.granted, 1);
    assert_int_equal(r.waiting, 1);
    dls_judge_lease_info i = lease_info(&h, 2);
    assert_memory_equal(i.holder.p, "holder-1", 8);
    assert_true(i.tenure_start == 3 * SEC);
    /* admitting holder-1 did not extend holder-2's bound */
    r = h_at(&h, 4250 * MS);
    assert_int_equal(r.refused, 0);
    assert_int_equal(r.waiting, 1);
    r = h_at(&h, 4250 * MS + 1);
    assert_int_equal(r.refused, 1);
    assert_int_equal(r.waiting, 0);
    jlog log;
    read_journal(&h, &log);
    int k = find_rec(&log, 0, DLS_FACT_REFUSAL, 0);
    assert_true(k > 0);
    assert_string_equal(log.r[k].reason, "unavailable");
    assert_string_equal(log.r[k].holder, "holder-2");
    h_fini(&h);
}

/* Step 7: a waiter whose bound elapsed in this very pass is granted when
 * its subject freed in that pass. */
static void test_policy_waiter_granted_when_freed_as_bound_elapses(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 2);
    h_open(&h);
    h_propose(&h, 0, 0, "job", "p0", 0);
    h_at(&h, SEC);
    h_propose(&h, 1, 0, "job", "p1", 2500);
    h_at(&h, 2 * SEC); /* bound 2.25 s: elapses after 4.25 s, when lease 1 falls silent */
    dls_judge_pass_result r = h_at(&h, 4500 * MS);
    assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 1);
    assert_int_equal(r.granted, 1);
    assert_int_equal(r.refused, 0);
    jlog log;
    read_journal(&h, &log);
    int g = find_rec(&log, 0, DLS_FACT_GRANT, 2);
    assert_true(g > 0);
    assert_string_equal(log.r[g].holder, "holder-1");
    assert_int_equal(log.r[g].duration_ns, 2500 * MS);
    assert_int_equal(log.r[g].unit, DLS_UNIT_MS);
    assert_true(mark_of(&log, (size_t)g)->now == 4500 * MS); /* stamped with this pass's now */
    h_fini(&h);
}

/* Grant policy: shared proposals granted together; FIFO holds later shared
 * ones behind a waiting exclusive; a refusal releases them in that pass. */
static void test_policy_shared_and_release_by_refusal(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 4);
    h_open(&h);
    dls_mode sh = DLS_MODE_SHARED, ex = DLS_MODE_EXCLUSIVE;
    h_propose_full(&h, 0, 0, "doc", "s0", 0, &sh);
    h_propose_full(&h, 1, 0, "doc", "s1", 0, &sh);
    dls_judge_pass_result r = h_at(&h, SEC);
    assert_true(r.granted == 2);
    h_renew(&h, 0, 0, 1);
    h_renew(&h, 1, 0, 2);
    h_propose_full(&h, 2, 0, "doc", "x2", 0, &ex); /* waits: bound 3.25 s from 2 s */
    r = h_at(&h, 2 * SEC);
    assert_int_equal(r.granted, 0);
    assert_int_equal(r.waiting, 1);
    h_propose_full(&h, 3, 0, "doc", "s3", 0, &sh); /* shared, behind the exclusive */
    for (int t = 3; t <= 5; t++) {
        h_renew(&h, 0, 0, 1);
        h_renew(&h, 1, 0, 2);
        r = h_at(&h, (uint64_t)t * SEC);
        assert_true(r.granted == 0);
    }
    assert_true(r.waiting == 2);
    /* after 5.25 s the exclusive waiter's bound elapsed: it is refused and
     * the shared one behind it granted in the same pass */
    h_renew(&h, 0, 0, 1);
    h_renew(&h, 1, 0, 2);
    r = h_at(&h, 5250 * MS + 1);
    assert_int_equal(r.refused, 1);
    assert_int_equal(r.granted, 1);
    assert_int_equal(r.waiting, 0);
    jlog log;
    read_journal(&h, &log);
    int f = find_rec(&log, 0, DLS_FACT_REFUSAL, 0);
    int g = find_rec(&log, 0, DLS_FACT_GRANT, 3);
    assert_true(f > 0);
    assert_true(g > f);
    assert_string_equal(log.r[g].holder, "holder-3");
    assert_true(log.r[g].has_mode);
    assert_int_equal(log.r[g].mode, DLS_MODE_SHARED);
    h_fini(&h);
}

/* Grant policy: a party that holds or waits is refused "reentrant". */
static void test_policy_reentrant_refused(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 2);
    h_open(&h);
    h_propose(&h, 0, 0, "job", "p0", 0);
    h_at(&h, SEC);
    h_propose(&h, 0, 0, "job", "p0b", 0); /* holds */
    h_propose(&h, 1, 0, "job", "p1", 0);  /* waits */
    h_propose(&h, 1, 0, "job", "p1b", 0); /* waits already */
    dls_judge_pass_result r = h_at(&h, 2 * SEC);
    assert_int_equal(r.refused, 2);
    assert_int_equal(r.waiting, 1);
    jlog log;
    read_journal(&h, &log);
    size_t reent = 0;
    for (size_t k = 0; k < log.n; k++)
        reent += !log.r[k].mark && log.r[k].kind == DLS_FACT_REFUSAL &&
                 strcmp(log.r[k].reason, "reentrant") == 0;
    assert_int_equal(reent, 2);
    assert_int_equal(count_kind(&log, DLS_FACT_REFUSAL), 2);
    h_fini(&h);
}

/* Grant policy: the ask clipped to the owner's min and max, in the unit of
 * the bound it was clipped to; the default when there is no ask; mode only
 * when the proposal had it. */
static void test_policy_duration_clipping_and_mode(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    assert_int_equal(dls_duration_make(&h.s.min_duration, DLS_UNIT_MS, 500), 0);
    assert_int_equal(dls_duration_make(&h.s.max_duration, DLS_UNIT_S, 5), 0);
    h_open(&h);
    dls_mode ex = DLS_MODE_EXCLUSIVE;
    h_propose(&h, 0, 0, "a", "pa", 100);
    h_propose(&h, 0, 0, "b", "pb", 10000);
    h_propose(&h, 0, 0, "c", "pc", 2500);
    h_propose_full(&h, 0, 0, "d", "pd", 0, &ex);
    h_at(&h, SEC);
    jlog log;
    read_journal(&h, &log);
    const jrec *g[4];
    for (int k = 0; k < 4; k++)
        g[k] = &log.r[find_rec(&log, 0, DLS_FACT_GRANT, (uint64_t)k + 1)];
    assert_true(g[0]->duration_ns == 500 * MS);
    assert_true(g[0]->unit == DLS_UNIT_MS);
    assert_true(g[1]->duration_ns == 5 * SEC);
    assert_true(g[1]->unit == DLS_UNIT_S);
    assert_true(g[2]->duration_ns == 2500 * MS);
    assert_true(g[2]->unit == DLS_UNIT_MS);
    assert_true(g[3]->duration_ns == 3 * SEC);
    assert_true(g[3]->unit == DLS_UNIT_S);
    assert_false(g[0]->has_mode);
    assert_true(g[3]->has_mode);
    assert_true(g[3]->mode == DLS_MODE_EXCLUSIVE);
    assert_false(g[0]->has_max);
    assert_true(g[0]->has_proposal);
    assert_memory_equal(g[0]->medium, dls_medium_id(h.media[0]), 16);
    h_fini(&h);
}

/* Grant policy: lock-delay after silence (waiters whose bound elapses
 * during it are refused; the subject frees when it ends), none after a
 * release. */
static void test_policy_lock_delay_after_silence_not_release(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 3);
    h.s.lock_delay_ns = SEC;
    h_open(&h);
    h_propose(&h, 0, 0, "job", "p0", 0);
    h_propose(&h, 0, 0, "rel", "r0", 0);
    h_at(&h, SEC); /* leases 1 (job) and 2 (rel) */
    h_propose(&h, 1, 0, "job", "p1", 0);
    h_propose(&h, 1, 0, "rel", "r1", 0);
    h_renew(&h, 0, 0, 2);
    h_at(&h, 4 * SEC); /* waiters: job bound 0.25 s, rel bound 3.25 s */
    h_release(&h, 0, 0, 2, false);
    dls_judge_pass_result r = h_at(&h, 4500 * MS);
    /* job: lease 1 silent → reclaimed, delay until 5.5 s, its waiter's bound
     * elapsed during the delay → refused; rel: released → no delay → granted */
    assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 1);
    assert_int_equal(r.lapsed[DLS_CAUSE_RELEASE], 1);
    assert_int_equal(r.refused, 1);
    assert_int_equal(r.granted, 1);
    h_propose(&h, 2, 0, "job", "p2", 0); /* waits for the rest of the delay */
    r = h_at(&h, 4600 * MS);
    assert_int_equal(r.waiting, 1);
    assert_int_equal(r.granted, 0);
    r = h_at(&h, 5500 * MS);
    assert_true(r.granted == 0);
    r = h_at(&h, 5500 * MS + 1);
    assert_int_equal(r.granted, 1);
    assert_int_equal(r.waiting, 0);
    h_fini(&h);
}

/* judge.md, The pass: "the next reading at which anything can fall due".
 * A lease popped on a stale lower bound while its medium fails, whose
 * silence does not hold yet, keeps its true deadline: were the medium to
 * recover, it falls due then, not at the end of the suspension. */
static void test_next_due_suspended_lease_not_later(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    fault *f = h_fault_medium(&h, 0);
    h_open(&h);
    h_propose(&h, 0, 0, "job/a", "pa", 0);
    h_at(&h, SEC); /* lease 1: deadline 4.25 s + 1 */
    h_renew(&h, 0, 0, 1);
    h_at(&h, 4 * SEC); /* silence now at 7.25 s + 1; the heap's bound is stale */
    f->read_error = true;
    dls_judge_pass_result r = h_at(&h, 4500 * MS); /* the run of failures begins */
    assert_int_equal(r.transport_errors, 1);
    assert_int_equal(r.newly_due, 0);
    assert_true(r.next_due <= 7250 * MS + 1);
    /* still failing when silence holds: suspended until 4.5 + 3.25 s */
    r = h_at(&h, 7250 * MS + 1);
    assert_true(r.newly_due == 0);
    assert_true(r.next_due == 7750 * MS + 1);
    r = h_at(&h, 7750 * MS + 1);
    assert_true(r.lapsed[DLS_CAUSE_SILENCE] == 1);
    h_fini(&h);
}

/* judge.md, Grant policy: "With a lock-delay the subject frees when the
 * delay ends (step 7 then serves its waiters); waiters whose bound elapses
 * during the delay are refused" — also when no pass ran between the bound
 * and the end of the delay. */
static void test_policy_lock_delay_bound_elapsed_during_delay_refused(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 2);
    h.s.lock_delay_ns = SEC;
    assert_int_equal(dls_duration_make(&h.s.tenure_max, DLS_UNIT_S, 2), 0);
    h_open(&h);
    h_propose(&h, 0, 0, "job", "p0", 0);
    h_at(&h, SEC); /* lease 1: cap after 3.25 s, silence after 4.25 s */
    h_propose(&h, 1, 0, "job", "p1", 0);
    dls_judge_pass_result r = h_at(&h, 1500 * MS); /* bound 2.75 s: elapses after 4.25 s */
    assert_true(r.waiting == 1);
    r = h_at(&h, 3500 * MS); /* cap: reclaimed, delay until 4.5 s */
    assert_int_equal(r.lapsed[DLS_CAUSE_CAP], 1);
    assert_int_equal(r.refused, 0);
    assert_int_equal(r.waiting, 1);
    r = h_at(&h, 5 * SEC); /* the delay ended, but the bound elapsed during it */
    assert_int_equal(r.granted, 0);
    assert_int_equal(r.refused, 1);
    assert_int_equal(r.waiting, 0);
    jlog log;
    read_journal(&h, &log);
    int k = find_rec(&log, 0, DLS_FACT_REFUSAL, 0);
    assert_true(k > 0);
    assert_string_equal(log.r[k].reason, "unavailable");
    assert_int_equal(count_kind(&log, DLS_FACT_GRANT), 1);
    h_fini(&h);
}

/* judge.md, Grant policy: the bound fixed at arrival is the largest
 * remaining term, "for unknown evidence, the larger of that and duration −
 * (now − resumed reading); zero for a pending lease". */
static void test_policy_bound_unknown_larger_pending_zero(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 2, 3);
    h_ring_capacity(&h, 0, 2);
    h_open(&h);
    h_propose(&h, 0, 0, "job", "p0", 0);
    h_propose(&h, 0, 1, "other", "q0", 0);
    h_at(&h, SEC); /* lease 1 (job, medium 0), lease 2 (other, medium 1) */
    for (int k = 0; k < 3; k++)
        raw_renewal(&h, 0, 0, 77, (uint64_t)k + 1); /* evicts unread: a gap */
    h_propose(&h, 1, 1, "job", "p1", 0);
    dls_judge_pass_result r = h_at(&h, 3500 * MS);
    assert_int_equal(r.gaps, 1);
    assert_int_equal(r.waiting, 1);
    /* known: 3.25 − 2.5 = 0.75 s; unknown: 3 − 0 = 3 s → refusal after 6.5 s */
    r = h_at(&h, 5 * SEC); /* (lease 2, silent on medium 1, lapses) */
    assert_int_equal(r.refused, 0);
    assert_int_equal(r.waiting, 1);
    r = h_at(&h, 6500 * MS);
    assert_int_equal(r.refused, 0);
    assert_int_equal(r.waiting, 1);
    assert_int_equal(r.live, 1);
    /* lease 1 falls silent at the same reading: the subject frees in time */
    r = h_at(&h, 6500 * MS + 1);
    assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 1);
    assert_int_equal(r.granted, 1);
    assert_int_equal(r.refused, 0);
    /* a pending lease leaves a waiter no term at all */
    h.answer = DLS_RECLAIM_NOT_YET;
    assert_int_equal(dls_judge_end(h.j, 3), 0);
    r = h_at(&h, 7 * SEC);
    assert_true(r.pending == 1);
    h_propose(&h, 2, 1, "job", "p2", 0);
    r = h_at(&h, 7100 * MS);
    assert_int_equal(r.waiting, 1);
    assert_int_equal(r.refused, 0);
    r = h_at(&h, 7100 * MS + 1);
    assert_int_equal(r.refused, 1);
    assert_int_equal(r.waiting, 0);
    h_fini(&h);
}

static void unsolicited_cb(void *u, uint64_t ticket, uint64_t lease, int error)
{
    harness *h = u;
    h->calls[h->ncalls++] = (reclaim_call){lease, (dls_cause)0, error != 0, ticket};
}

/* Grant policy: an owner-requested unsolicited grant for a held subject is
 * not authored; the owner gets an error. */
static void test_policy_unsolicited_grants(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 2, 2);
    dls_judge_callbacks cb = {.reclaim = h_reclaim, .unsolicited = unsolicited_cb};
    assert_int_equal(dls_judge_new(&h.j, &h.s, &cb, &h, NULL), 0);
    val a = str_val("a"), b = str_val("b");
    dls_bytes w1 = {(const uint8_t *)"holder-1", 8};
    uint64_t t1, t2;
    assert_int_equal(dls_judge_grant(h.j, (dls_bytes){a.b, a.n}, w1, 1, NULL, NULL, &t1), 0);
    assert_int_equal(dls_judge_grant(h.j, (dls_bytes){b.b, b.n}, w1, 1, NULL, NULL, &t2), 0);
    h_propose(&h, 0, 0, "b", "pb", 0); /* b becomes held before the request's turn */
    dls_judge_pass_result r = h_at(&h, SEC);
    assert_true(r.granted == 2);
    assert_int_equal(h.ncalls, 2);
    assert_int_equal(h.calls[0].pass_now, t1);
    assert_int_equal(h.calls[0].lease, 2);
    assert_false(h.calls[0].commit);
    assert_int_equal(h.calls[1].pass_now, t2); /* DLS_ERR_HELD */
    assert_true(h.calls[1].commit);
    assert_int_equal(dls_judge_grant(h.j, (dls_bytes){a.b, a.n}, w1, 1, NULL, NULL, NULL),
                     DLS_ERR_HELD);
    assert_int_equal(dls_judge_grant(h.j, (dls_bytes){a.b, a.n}, w1, 7, NULL, NULL, NULL),
                     DLS_ERR_INVAL);
    jlog log;
    read_journal(&h, &log);
    int g = find_rec(&log, 0, DLS_FACT_GRANT, 2);
    assert_true(g > 0);
    assert_false(log.r[g].has_proposal);
    assert_memory_equal(log.r[g].medium, dls_medium_id(h.media[1]), 16); /* registered */
    h_fini(&h);
}

typedef struct told_probe {
    harness *h;
    size_t calls;
    bool grant_on_journal;
} told_probe;

static void told_after_append(void *u, uint64_t ticket, uint64_t lease, int error)
{
    told_probe *p = u;
    (void)ticket;
    p->calls++;
    if (error)
        return;
    jlog *log = malloc(sizeof *log);
    read_journal(p->h, log);
    p->grant_on_journal = find_rec(log, 0, DLS_FACT_GRANT, lease) >= 0;
    free(log);
}

/* judge.md, Ledger: "A lease enters when its grant record was appended to
 * the journal ok": the owner learns an unsolicited grant's lease id only
 * once its grant is on the journal (a failed append would let a restarted
 * judge mint that id again). */
static void test_policy_unsolicited_told_after_append(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    told_probe p = {&h, 0, false};
    dls_judge_callbacks cb = {.reclaim = h_reclaim, .unsolicited = told_after_append};
    assert_int_equal(dls_judge_new(&h.j, &h.s, &cb, &p, NULL), 0);
    val a = str_val("a");
    assert_int_equal(dls_judge_grant(h.j, (dls_bytes){a.b, a.n},
                                     (dls_bytes){(const uint8_t *)"holder-0", 8}, 0, NULL, NULL,
                                     NULL),
                     0);
    dls_judge_pass_result r = h_at(&h, SEC);
    assert_int_equal(r.granted, 1);
    assert_int_equal(p.calls, 1);
    assert_true(p.grant_on_journal);
    h_fini(&h);
}

/* Determinism, step 7: freed subjects' waiters, then refusals, then this
 * pass's proposals, then unsolicited grants. */
static void test_policy_step7_order(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 4);
    h_open(&h);
    h_propose(&h, 0, 0, "freed", "f0", 0);
    h_propose(&h, 0, 0, "held", "h0", 0);
    h_at(&h, SEC); /* 1: freed, 2: held */
    for (int t = 2; t <= 7; t++) {
        h_renew(&h, 0, 0, 1);
        h_renew(&h, 0, 0, 2);
        if (t == 4) { /* waiters; both bounds 3.25 s */
            h_propose(&h, 1, 0, "freed", "f1", 0);
            h_propose(&h, 2, 0, "held", "h2", 0);
        }
        h_at(&h, (uint64_t)t * SEC);
    }
    h_release(&h, 0, 0, 1, false);
    h_renew(&h, 0, 0, 2);
    h_propose(&h, 3, 0, "new", "n3", 0);
    val u = str_val("unsol");
    assert_int_equal(dls_judge_grant(h.j, (dls_bytes){u.b, u.n},
                                     (dls_bytes){(const uint8_t *)"holder-3", 8}, 0, NULL, NULL,
                                     NULL),
                     0);
    dls_judge_pass_result r = h_at(&h, 7250 * MS + 1);
    assert_int_equal(r.granted, 3);
    assert_int_equal(r.refused, 1);
    assert_int_equal(r.lapsed[DLS_CAUSE_RELEASE], 1);
    jlog log;
    read_journal(&h, &log);
    size_t k = log.n - 6;
    assert_true(log.r[k].mark);
    assert_int_equal(log.r[k].ndue, 1);
    assert_int_equal(log.r[k + 1].kind, DLS_FACT_RECLAIM);
    assert_int_equal(log.r[k + 1].lease, 1);
    assert_int_equal(log.r[k + 2].kind, DLS_FACT_GRANT);
    assert_string_equal(log.r[k + 2].holder, "holder-1");
    assert_int_equal(log.r[k + 3].kind, DLS_FACT_REFUSAL);
    assert_string_equal(log.r[k + 3].holder, "holder-2");
    assert_int_equal(log.r[k + 4].kind, DLS_FACT_GRANT);
    assert_true(log.r[k + 4].has_proposal);
    assert_string_equal(log.r[k + 4].holder, "holder-3");
    assert_int_equal(log.r[k + 5].kind, DLS_FACT_GRANT);
    assert_false(log.r[k + 5].has_proposal);
    /* lease ids are the highest minted + 1 */
    assert_int_equal(log.r[k + 2].lease, 3);
    assert_int_equal(log.r[k + 4].lease, 4);
    assert_int_equal(log.r[k + 5].lease, 5);
    h_fini(&h);
}

static int closed_policy(void *u, const dls_judge_ask *a, dls_judge_answer *ans)
{
    (void)u;
    if (a->subject.n >= 2 && a->subject.p[1] == 'x') {
        ans->verdict = DLS_JUDGE_REFUSE;
        ans->reason = "closed";
    } else {
        ans->verdict = DLS_JUDGE_GRANT; /* even when held: the judge keeps exclusivity */
        assert_int_equal(dls_duration_make(&ans->duration, DLS_UNIT_S, 9), 0);
    }
    return 0;
}

/* Grant policy: an owner-supplied policy replaces the default; the journal
 * rules (and exclusivity) still apply. */
static void test_policy_owner_supplied(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 2);
    dls_judge_callbacks cb = {.reclaim = h_reclaim, .policy = closed_policy};
    assert_int_equal(dls_judge_new(&h.j, &h.s, &cb, &h, NULL), 0);
    h_propose(&h, 0, 0, "x", "px", 0);
    h_propose(&h, 0, 0, "job", "pj", 0);
    h_propose(&h, 1, 0, "job", "pj1", 0);
    dls_judge_pass_result r = h_at(&h, SEC);
    assert_int_equal(r.refused, 1);
    assert_int_equal(r.granted, 1);
    assert_int_equal(r.waiting, 1);
    jlog log;
    read_journal(&h, &log);
    int f = find_rec(&log, 0, DLS_FACT_REFUSAL, 0);
    assert_true(strcmp(log.r[f].reason, "closed") == 0);
    int g = find_rec(&log, 0, DLS_FACT_GRANT, 1);
    assert_true(log.r[g].duration_ns == 9 * SEC);
    h_fini(&h);
}

/* ======================================================================================== */
/* The journal                                                                                 */
/* ======================================================================================== */

static ssize_t enospc_pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    (void)fd, (void)iov, (void)cnt, (void)off;
    errno = ENOSPC;
    return -1;
}

/* judge.md Failure of the journal: a full disk stops the judge, and the
 * owner can say why and where — dls_judge_journal_failure answers the
 * medium's code (DLS_ERR_IO) with errno ENOSPC and the byte offset the
 * append began at (the journal's size), for the CLI's one line. Before:
 * only "journal write or sync failed (fatal)". */
static void test_journal_enospc_named(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    h_propose(&h, 0, 0, "job", "p", 0);
    h_tick(&h, SEC);
    dls_judge_pass_result r;
    assert_int_equal(dls_judge_pass(h.j, &r), 0);
    dls_where w = {0};
    assert_int_equal(dls_judge_journal_failure(h.j, &w), 0);
    struct stat st;
    assert_int_equal(stat(h.journal_path, &st), 0);
    static const dls_st_io full = {enospc_pwritev, fdatasync, ftruncate};
    dls_st_set_io(h.journal, &full);
    h_propose(&h, 0, 0, "job2", "p2", 0);
    h_tick(&h, 2 * SEC);
    assert_int_equal(dls_judge_pass(h.j, &r), DLS_ERR_JOURNAL_WRITE);
    assert_int_equal(dls_judge_journal_failure(h.j, &w), DLS_ERR_IO);
    assert_int_equal(w.sys_errno, ENOSPC);
    assert_true(w.offset == (uint64_t)st.st_size);
    assert_non_null(w.reason);
    dls_st_set_io(h.journal, &dls_st_io_sys);
    h_fini(&h);
}

/* judge.md Failure of the journal: any failed write is fatal; the handle
 * then refuses everything but _del. */
static void test_journal_write_failure_fatal(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    fault *f;
    char name[300];
    snprintf(name, sizeof name, "%s/faulty", h.dir);
    dls_medium *jm = fault_medium(0x55, DLS_MEDIUM_FILE, DLS_RETAIN_ALL, DLS_SYNC_DATA, name, &f);
    h.s.journal = jm;
    h_open(&h);
    h_propose(&h, 0, 0, "job", "p", 0);
    h_tick(&h, SEC);
    f->append_error = true;
    dls_judge_pass_result r;
    assert_int_equal(dls_judge_pass(h.j, &r), DLS_ERR_JOURNAL_WRITE);
    assert_true(dls_err_is_fatal(DLS_ERR_JOURNAL_WRITE));
    f->append_error = false;
    assert_int_equal(dls_judge_pass(h.j, &r), DLS_ERR_FATAL);
    assert_int_equal(dls_judge_end(h.j, 1), DLS_ERR_FATAL);
    /* issue 14 item 5: one meaning of fatal — every call on a poisoned
     * handle answers a code in the fatal range, and the codes a failed step
     * answers (out of memory included) are all fatal */
    uint64_t ticket = 0;
    assert_int_equal(dls_judge_grant(h.j, (dls_bytes){(const uint8_t *)"\xa1x", 2},
                                     (dls_bytes){(const uint8_t *)"h", 1}, 0, NULL, NULL,
                                     &ticket),
                     DLS_ERR_FATAL);
    assert_int_equal(dls_judge_lost_ledger(h.j, NULL, 0, NULL), DLS_ERR_FATAL);
    assert_true(dls_err_is_fatal(DLS_ERR_FATAL));
    assert_true(dls_err_is_fatal(DLS_ERR_FATAL_NOMEM));
    assert_true(dls_err_is_fatal(DLS_ERR_FATAL_STEP));
    assert_false(dls_err_is_fatal(DLS_ERR_NOMEM));
    h_close_judge(&h);
    dls_medium_del(jm);
    h_fini(&h);
}

/* STYLE fault loops / judge.md Failure of the journal: fail the i-th journal
 * append for every i of a scenario: the pass ends in the fatal error, the
 * handle is safe to delete, and a restart replays exactly what landed. */
static void test_journal_write_failure_every_append(void **state)
{
    (void)state;
    for (long fail_at = 0;; fail_at++) {
        harness h;
        h_init(&h, 1, 2);
        fault *f;
        char name[300];
        snprintf(name, sizeof name, "%s/faulty", h.dir);
        dls_medium *jm =
            fault_medium(0x55, DLS_MEDIUM_FILE, DLS_RETAIN_ALL, DLS_SYNC_DATA, name, &f);
        f->fail_at = fail_at;
        h.s.journal = jm;
        h_open(&h);
        bool failed = false;
        uint64_t t = SEC;
        for (int step = 0; step < 8 && !failed; step++, t += SEC) {
            if (step == 0) {
                h_propose(&h, 0, 0, "a", "pa", 0);
                h_propose(&h, 1, 0, "a", "pb", 0);
            }
            if (step == 2)
                h_release(&h, 0, 0, 1, true);
            h_tick(&h, t);
            dls_judge_pass_result r;
            int rc = dls_judge_pass(h.j, &r);
            if (rc) {
                assert_int_equal(rc, DLS_ERR_JOURNAL_WRITE);
                assert_int_equal(dls_judge_pass(h.j, &r), DLS_ERR_FATAL);
                failed = true;
            }
        }
        long batches = f->batches;
        h_close_judge(&h);
        /* restart on what landed: every lease it knows had its grant land */
        f->fail_at = -1;
        h_open(&h);
        size_t live = dls_judge_live(h.j);
        assert_true(live <= 2);
        for (uint64_t l = 1; l <= dls_judge_highest_lease(h.j); l++) {
            dls_judge_lease_info i;
            if (dls_judge_lease(h.j, l, &i) == 0)
                assert_true(i.tenure_start <= t);
        }
        h_tick(&h, t + SEC);
        dls_judge_pass_result r;
        assert_int_equal(dls_judge_pass(h.j, &r), 0);
        assert_true(r.restarted);
        h_close_judge(&h);
        dls_medium_del(jm);
        h_fini(&h);
        if (!failed) {
            assert_true(fail_at >= batches); /* every append index was tried */
            break;
        }
    }
}

/* judge.md Journal: grants, refusals, lapsed and marks, every field. */
static void test_journal_record_fields(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 2, 2);
    h_open(&h);
    h_propose(&h, 0, 1, "job", "p0", 4000);
    dls_judge_pass_result r = h_at(&h, 1500 * MS);
    assert_true(r.granted == 1);
    jlog log;
    read_journal(&h, &log);
    assert_int_equal(log.n, 2);
    const jrec *m = &log.r[0], *g = &log.r[1];
    assert_true(m->mark);
    assert_true(m->pass == 1);
    assert_true(m->now == 1500 * MS);
    assert_true(m->restarted);
    assert_false(m->late);
    assert_int_equal(m->ndrained, 2); /* every medium, assembly order */
    assert_memory_equal(m->drained[0].medium, dls_medium_id(h.media[0]), 16);
    assert_memory_equal(m->drained[1].medium, dls_medium_id(h.media[1]), 16);
    assert_true(m->drained[0].position == 0);
    assert_true(m->drained[1].position == 1);
    assert_true(g->kind == DLS_FACT_GRANT);
    assert_true(g->lease == 1);
    assert_true(strcmp(g->holder, "holder-0") == 0);
    val s = str_val("job");
    assert_true(g->subject_len == s.n);
    assert_memory_equal(g->subject, s.b, s.n);
    assert_true(g->duration_ns == 4 * SEC);
    assert_true(g->unit == DLS_UNIT_MS);
    assert_memory_equal(g->medium, dls_medium_id(h.media[1]), 16);
    /* the mark's durations use the coarsest exact unit: checked on the bytes */
    dls_medium *jmed;
    assert_int_equal(dls_medium_open(&jmed, h.journal_path, DLS_OPEN_READ, NULL, NULL), 0);
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, jmed, 0), 0);
    dls_record rec;
    assert_int_equal(dls_cursor_next(c, &rec, NULL), DLS_NEXT_OK);
    dls_attribution a;
    dls_record_classify(rec.p, rec.n, &a);
    dls_mark_view v;
    assert_int_equal(dls_mark_decode(a.fact.p, a.fact.n, &v, NULL), 0);
    assert_int_equal(v.now.unit, DLS_UNIT_MS);
    assert_int_equal(v.now.magnitude, 1500);
    assert_int_equal(v.tolerance.unit, DLS_UNIT_MS);
    assert_int_equal(v.cadence.unit, DLS_UNIT_S);
    assert_int_equal(v.basis.n, 10);
    assert_true(memcmp(v.basis.p, "test-basis", 10) == 0);
    dls_cursor_del(c);
    dls_medium_del(jmed);
    h_fini(&h);
}

/* A fixed scenario for the determinism test: returns the journal bytes. */
static uint8_t *scenario_journal(const uint8_t key[16], size_t *n)
{
    harness h;
    h_init(&h, 3, 6);
    memcpy(h.hash_key, key, 16);
    h_ring_capacity(&h, 2, 8);
    h_open(&h);
    dls_mode sh = DLS_MODE_SHARED;
    for (int t = 1; t <= 40; t++) {
        size_t who = (size_t)(t * 7) % 6, med = (size_t)t % 3;
        char sub[16], prop[16];
        snprintf(sub, sizeof sub, "s%d", t % 5);
        snprintf(prop, sizeof prop, "p%d", t);
        if (t % 4 == 0)
            h_propose_full(&h, who, med, sub, prop, (uint64_t)(1000 + t * 37), &sh);
        else
            h_propose(&h, who, med, sub, prop, t % 3 ? 0 : (uint64_t)(2000 + t * 11));
        for (uint64_t l = 1; l <= dls_judge_highest_lease(h.j); l++)
            if ((l + (uint64_t)t) % 3 == 0) {
                dls_judge_lease_info i;
                if (dls_judge_lease(h.j, l, &i) == 0) {
                    size_t hi = (size_t)(i.holder.p[7] - '0');
                    h_renew(&h, hi, i.medium, l);
                    if ((l * (uint64_t)t) % 29 == 0)
                        h_release(&h, hi, i.medium, l, t % 2);
                }
            }
        if (t % 9 == 0 && dls_judge_highest_lease(h.j) > 0)
            (void)dls_judge_end(h.j, dls_judge_highest_lease(h.j));
        if (t % 11 == 0)
            for (int k = 0; k < 12; k++)
                raw_renewal(&h, 0, 2, 999, (uint64_t)(t * 100 + k));
        h.answer = t % 6 == 0 ? DLS_RECLAIM_NOT_YET : DLS_RECLAIM_DONE;
        h_at(&h, (uint64_t)t * 700 * MS);
    }
    h_close_judge(&h);
    uint8_t *b = read_file(h.journal_path, n);
    h_fini(&h);
    return b;
}

/* judge.md Determinism: one scenario under two hash seeds, byte for byte. */
static void test_determinism_two_hash_seeds(void **state)
{
    (void)state;
    uint8_t k1[16], k2[16];
    memset(k1, 0x01, 16);
    memset(k2, 0xfe, 16);
    size_t n1, n2;
    uint8_t *a = scenario_journal(k1, &n1);
    uint8_t *b = scenario_journal(k2, &n2);
    assert_true(n1 > 10000); /* the scenario did something */
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, n1);
    free(a);
    free(b);
}

/* judge.md Journal: lists that do not fit one record continue in records
 * {"pass": n, "continued": true, …} immediately after it. */
static void test_journal_mark_continued_records(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_ring_capacity(&h, 0, 8192);
    h_open(&h);
    const size_t N = 6000;
    for (size_t k = 0; k < N; k++) {
        char sub[16], prop[16];
        snprintf(sub, sizeof sub, "s%05zu", k);
        snprintf(prop, sizeof prop, "p%05zu", k);
        h_propose(&h, 0, 0, sub, prop, 0);
    }
    dls_judge_pass_result r = h_at(&h, SEC);
    assert_true(r.granted == N);
    r = h_at(&h, 5 * SEC);
    assert_int_equal(r.newly_due, N);
    assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], N);
    dls_medium *jm;
    assert_int_equal(dls_medium_open(&jm, h.journal_path, DLS_OPEN_READ, NULL, NULL), 0);
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, jm, 0), 0);
    dls_record rec;
    size_t marks = 0, continued = 0, due = 0, lapsed = 0;
    uint64_t prev_due = 0;
    bool in_pass2 = false;
    while (dls_cursor_next(c, &rec, NULL) == DLS_NEXT_OK) {
        assert_true(rec.n <= DLS_RECORD_MAX);
        dls_attribution a;
        dls_record_classify(rec.p, rec.n, &a);
        if (dls_mark_classify(a.fact.p, a.fact.n) != DLS_MARK_REC_MARK) {
            assert_true(!in_pass2 || due == N); /* lapsed only after the whole mark */
            dls_fact f;
            assert_int_equal(dls_fact_decode(a.fact.p, a.fact.n, &f, NULL), 0);
            lapsed += f.kind == DLS_FACT_RECLAIM;
            continue;
        }
        dls_mark_view v;
        assert_int_equal(dls_mark_decode(a.fact.p, a.fact.n, &v, NULL), 0);
        if (v.continued) {
            assert_true(in_pass2);
            assert_int_equal(v.pass, 2);
            continued++;
        } else {
            marks++;
            in_pass2 = v.pass == 2;
        }
        dls_mark_due d;
        while (dls_mark_next_due(&v.due, &d)) {
            assert_int_equal(d.lease, prev_due + 1);
            assert_int_equal(d.cause, DLS_CAUSE_SILENCE);
            prev_due = d.lease;
            due++;
        }
    }
    assert_int_equal(marks, 2);
    assert_true(continued >= 1);
    assert_int_equal(due, N);
    assert_int_equal(lapsed, N);
    dls_cursor_del(c);
    dls_medium_del(jm);
    h_fini(&h);
}

/* ======================================================================================== */
/* Restart                                                                                       */
/* ======================================================================================== */

static void h_restart(harness *h)
{
    h_close_judge(h);
    h_open(h);
}

/* judge.md Restart: the journal is the persisted ledger — seq, release,
 * last observation, pending cause, highest lease id, last pass; cursors
 * resume at the last mark; pending reclaims retried; unanswered proposals
 * answered again. Revision 4: a restart does not re-arm silence — a
 * recovered lease keeps its last relevant observation and stays known
 * (issue 12 item 17). */
static void test_restart_recovers_ledger(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 4);
    h_open(&h);
    h_propose(&h, 0, 0, "job/a", "pa", 0);
    h_propose(&h, 1, 0, "job/b", "pb", 0);
    h_at(&h, SEC);
    h.answer = DLS_RECLAIM_NOT_YET;
    h_renew(&h, 0, 0, 1);
    h_release(&h, 1, 0, 2, true);
    h_propose(&h, 2, 0, "job/a", "pa2", 0); /* waits for lease 1 */
    dls_judge_pass_result r = h_at(&h, 2 * SEC);
    assert_int_equal(r.pending, 1);
    assert_int_equal(r.waiting, 1);
    raw_renewal(&h, 0, 0, 1, 2);
    h_at(&h, 2500 * MS);
    h_propose(&h, 3, 0, "job/c", "pc", 0); /* not drained before the stop */

    h.answer = DLS_RECLAIM_DONE;
    h.ncalls = 0;
    h_restart(&h);
    assert_int_equal(dls_judge_last_pass(h.j), 3);
    assert_int_equal(dls_judge_highest_lease(h.j), 2);
    assert_int_equal(dls_judge_live(h.j), 2);
    dls_judge_lease_info i = lease_info(&h, 1);
    assert_int_equal(i.last_seq, 2);
    assert_int_equal(i.last_observation, 2500 * MS);
    assert_int_equal(i.tenure_start, SEC);
    assert_int_equal(i.evidence, DLS_EVIDENCE_UNKNOWN);
    i = lease_info(&h, 2);
    assert_true(i.pending);
    assert_int_equal(i.cause, DLS_CAUSE_RELEASE);
    assert_true(i.released);
    assert_true(i.commit);

    raw_renewal(&h, 0, 0, 1, 2); /* a copy of the last counted renewal */
    r = h_at(&h, 3 * SEC);
    assert_int_equal(r.pass, 4);
    assert_true(r.restarted);
    assert_true(r.mark);
    assert_int_equal(r.ignored_replayed, 1); /* from the last mark's position */
    assert_int_equal(r.drained, 2);
    assert_int_equal(r.lapsed[DLS_CAUSE_RELEASE], 1);
    assert_int_equal(h.ncalls, 1);
    assert_true(h.calls[0].commit);
    assert_int_equal(r.granted, 1); /* lease 3 for job/c; pa2 waits again */
    assert_int_equal(r.waiting, 1);
    i = lease_info(&h, 1);
    assert_int_equal(i.evidence, DLS_EVIDENCE_KNOWN);
    assert_int_equal(i.last_observation, 2500 * MS);
    assert_int_equal(dls_judge_highest_lease(h.j), 3);
    /* silence: now − 2.5 > 3.25, the recovered observation (not re-armed
     * at the restart's now of 3 s, which would wait until 6 s) */
    h_renew(&h, 3, 0, 3);
    r = h_at(&h, 5750 * MS);
    assert_int_equal(r.newly_due, 0);
    h_renew(&h, 3, 0, 3);
    r = h_at(&h, 5750 * MS + 1);
    assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 1);
    assert_int_equal(r.granted, 1); /* pa2 served */
    jlog log;
    read_journal(&h, &log);
    int g = find_rec(&log, 0, DLS_FACT_GRANT, 4);
    assert_true(g > 0);
    assert_string_equal(log.r[g].holder, "holder-2");
    size_t restarted = 0;
    for (size_t k = 0; k < log.n; k++)
        restarted += log.r[k].mark && log.r[k].restarted;
    assert_int_equal(restarted, 2);
    h_fini(&h);
}

/* Appends a grantor-signed record holding `map` (msgpack bytes). */
static void append_signed_raw(harness *h, const uint8_t *map, size_t n)
{
    uint8_t env[DLS_FACT_MAX + 256];
    size_t en;
    assert_int_equal(dls_envelope_seal(h->grantor, dls_medium_id(h->journal), map, n, env,
                                       sizeof env, &en), 0);
    assert_int_equal(dls_medium_append(h->journal, env, en, NULL, NULL), 0);
}

/* Appends a grantor-signed pass mark. */
static void append_mark(harness *h, uint64_t pass, uint64_t now, const char *basis,
                        bool restarted)
{
    dls_mark m;
    memset(&m, 0, sizeof m);
    m.pass = pass;
    m.now_ns = now;
    m.basis = (dls_bytes){(const uint8_t *)basis, strlen(basis)};
    m.tolerance_ns = h->s.tolerance_ns;
    m.cadence_ns = h->s.cadence_ns;
    m.restarted = restarted;
    dls_mark_writer wr = {0};
    uint8_t buf[4096];
    size_t n;
    assert_int_equal(dls_mark_encode_next(&m, &wr, buf, sizeof buf, &n), 1);
    append_signed_raw(h, buf, n);
}

/* judge.md Restart ("the same replay an audit performs") and vocabulary.md
 * ("Keys not named here are ignored by readers"): a grantor-signed map that
 * is neither a pass mark nor a lease fact is ignored on replay, as the audit
 * ignores it. */
static void test_restart_ignores_other_grantor_maps(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    h_propose(&h, 0, 0, "job/a", "pa", 0);
    h_at(&h, SEC);
    h_close_judge(&h);
    const uint8_t other[] = {0x81, 0xa9, 'x', '.', 'f', 'u', 't', 'u', 'r', 'e', '/', 0x01};
    append_signed_raw(&h, other, sizeof other);
    h_open(&h);
    assert_int_equal(dls_judge_live(h.j), 1);
    h_fini(&h);
}

/* judge.md Audit replay ("journal forged or malformed": drained positions
 * going backwards; now going backwards within one basis; a basis change on a
 * mark without restarted): a judge does not resume from a journal the audit
 * would call malformed. */
static void test_restart_refuses_malformed_journal_structure(void **state)
{
    (void)state;
    for (int fault = 0; fault < 3; fault++) {
        harness h;
        h_init(&h, 1, 1);
        h_open(&h);
        h_propose(&h, 0, 0, "job/a", "pa", 0);
        h_at(&h, 5 * SEC);
        h_renew(&h, 0, 0, 1);
        h_at(&h, 6 * SEC);
        h_close_judge(&h);
        if (fault == 0) {
            append_mark(&h, 10, 4 * SEC, "test-basis", false); /* now backwards */
        } else if (fault == 1) {
            append_mark(&h, 10, 7 * SEC, "other-basis", false); /* basis change */
        } else {
            dls_mark m;
            memset(&m, 0, sizeof m);
            dls_mark_pos back = {{0}, 0};
            memcpy(back.medium, dls_medium_id(h.media[0]), DLS_MEDIUM_ID_LEN);
            m.pass = 10;
            m.now_ns = 7 * SEC;
            m.basis = (dls_bytes){(const uint8_t *)"test-basis", 10};
            m.tolerance_ns = h.s.tolerance_ns;
            m.cadence_ns = h.s.cadence_ns;
            m.drained = &back; /* position 0: before what was drained */
            m.n_drained = 1;
            dls_mark_writer wr = {0};
            uint8_t buf[4096];
            size_t n;
            assert_int_equal(dls_mark_encode_next(&m, &wr, buf, sizeof buf, &n), 1);
            append_signed_raw(&h, buf, n);
        }
        dls_where w = {0};
        assert_int_equal(h_try_open(&h, &w), DLS_ERR_JOURNAL);
        assert_non_null(w.reason);
        h_fini(&h);
    }
}

/* judge.md The pass, step 1 ("the newest reading drained — or the newest
 * previously observed — is now") and Audit replay (now never goes backwards
 * within one basis): after a restart, ticks older than the last mark's now
 * do not take now backwards. */
static void test_restart_now_never_goes_backwards(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    h_propose(&h, 0, 0, "job/a", "pa", 0);
    h_at(&h, 10 * SEC);
    h_restart(&h);
    h_propose(&h, 0, 0, "job/b", "pb", 0);
    dls_judge_pass_result r = h_at(&h, 9 * SEC); /* an older reading, same basis */
    assert_true(!r.has_now || r.now >= 10 * SEC);
    jlog log;
    read_journal(&h, &log);
    uint64_t last = 0;
    for (size_t k = 0; k < log.n; k++)
        if (log.r[k].mark) {
            assert_true(log.r[k].now >= last);
            last = log.r[k].now;
        }
    h_fini(&h);
}

/* judge.md Restart: a cadence overrun after a restart is judged against the
 * last mark's now on the same basis. */
static void test_restart_cadence_against_last_mark(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    h_at(&h, SEC);
    h_restart(&h);
    dls_judge_pass_result r = h_at(&h, 2 * SEC + 1);
    assert_true(r.restarted);
    assert_true(r.cadence_overrun);
    assert_int_equal(r.pass, 2);
    h_restart(&h);
    r = h_at(&h, 2500 * MS);
    assert_true(r.restarted);
    assert_false(r.cadence_overrun);
    assert_int_equal(r.pass, 3);
    h_fini(&h);
}

/* judge.md Restart, basis change: recovered leases are rebased to the first
 * new reading and their evidence is unknown. */
static void test_restart_basis_change_rebases(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    h_propose(&h, 0, 0, "job", "p", 0);
    h_at(&h, 100 * SEC);
    h_renew(&h, 0, 0, 1);
    h_at(&h, 101 * SEC);
    h_close_judge(&h);
    /* the machine rebooted: a new basis, readings start low again */
    dls_medium_del(h.tickm);
    dls_resolver_del(h.tickr);
    h.tickm = ring_with_id(0xed, 64);
    assert_int_equal(dls_resolver_new_medium(&h.tickr, dls_medium_id(h.tickm), "ticker", NULL), 0);
    h.tick = (dls_judge_tick_source){h.tickm, h.tickr, "ticker", "test-basis-2", 0};
    h_open(&h);
    dls_judge_pass_result r = h_at(&h, 2 * SEC);
    assert_true(r.restarted);
    assert_false(r.cadence_overrun);
    assert_int_equal(r.newly_due, 0);
    dls_judge_lease_info i = lease_info(&h, 1);
    assert_int_equal(i.tenure_start, 2 * SEC);
    assert_int_equal(i.last_observation, 2 * SEC);
    assert_int_equal(i.evidence, DLS_EVIDENCE_UNKNOWN);
    assert_int_equal(i.resumed, 2 * SEC);
    assert_int_equal(i.last_seq, 1);
    r = h_at(&h, 5250 * MS + 1);
    assert_true(r.lapsed[DLS_CAUSE_SILENCE] == 1);
    h_fini(&h);
}

/* judge.md Restart: the journal replays only when every record is the
 * grantor's. */
static void test_restart_refuses_foreign_record(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    h_at(&h, SEC);
    h_close_judge(&h);
    dls_fact f;
    dls_fact_reclaim(&f, 1, DLS_CAUSE_SILENCE);
    append_fact(h.journal, &f, h.holders[0]);
    dls_where w = {0};
    assert_int_equal(h_try_open(&h, &w), DLS_ERR_JOURNAL);
    assert_int_equal(w.offset, 1);
    assert_true(w.reason != NULL);
    h_fini(&h);
}

/* judge.md Restart, lost ledger: reclaim first, then grant afresh on a new
 * journal; a resource whose reclaim is not done is not re-granted. */
static void test_restart_lost_ledger(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 2, 2);
    h.refuse_lease = 9;
    h_open(&h);
    val a = str_val("disk-a"), b = str_val("disk-b");
    dls_judge_possession items[2] = {
        {{a.b, a.n}, {(const uint8_t *)"holder-0", 8}, 7, 0, NULL},
        {{b.b, b.n}, {(const uint8_t *)"holder-1", 8}, 9, 1, NULL},
    };
    int status[2];
    assert_int_equal(dls_judge_lost_ledger(h.j, items, 2, status), 0);
    assert_int_equal(status[0], DLS_RECLAIM_DONE);
    assert_int_equal(status[1], DLS_RECLAIM_FAILED);
    assert_int_equal(h.ncalls, 2);
    assert_int_equal(h.calls[0].lease, 7);
    assert_int_equal(h.calls[0].cause, DLS_CAUSE_POLICY);
    dls_judge_pass_result r = h_at(&h, SEC);
    assert_true(r.granted == 1);
    dls_judge_lease_info i = lease_info(&h, 1);
    assert_memory_equal(i.holder.p, "holder-0", 8);
    assert_int_equal(i.subject.n, a.n);
    assert_true(memcmp(i.subject.p, a.b, a.n) == 0);
    assert_int_equal(dls_judge_lost_ledger(h.j, items, 1, NULL), DLS_ERR_STATE);
    h_restart(&h); /* a judge with a journal has its ledger */
    assert_int_equal(dls_judge_lost_ledger(h.j, items, 1, NULL), DLS_ERR_STATE);
    h_fini(&h);
}

/* A proposal with an explicit seq: a holder's own, or a copy of one (the
 * same signed bytes: Ed25519 signatures are deterministic). */
static void raw_proposal(harness *h, size_t holder, size_t medium, const char *subject,
                         const char *prop, uint64_t seq)
{
    dls_fact f;
    val s = str_val(subject), p = str_val(prop);
    dls_fact_proposal(&f, (dls_bytes){p.b, p.n}, (dls_bytes){s.b, s.n}, seq);
    append_fact(h->media[medium], &f, h->holders[holder]);
}

static size_t count_refusals(const jlog *log, const char *reason)
{
    size_t n = 0;
    for (size_t k = 0; k < log->n; k++)
        n += !log->r[k].mark && log->r[k].kind == DLS_FACT_REFUSAL &&
             strcmp(log->r[k].reason, reason) == 0;
    return n;
}

/* attribution.md Replay: "A proposal counts only if its seq exceeds the last
 * counted proposal seq of its author on that medium"; vocabulary.md seq: a
 * proposal whose seq is not greater "is a replay and counts for nothing",
 * and "A holder never reuses a proposal id". judge.md Restart: the judge
 * rebuilds its ledger by replay. When the replay cannot read a medium's
 * older records (evicted), the journal's grants and refusals still name the
 * proposals answered: a copy of one — read during the replay or appended
 * after the restart — is a replay, never answered again; a new proposal of
 * the same author still counts. */
static void test_restart_evicted_answered_proposal_not_answered_again(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 2);
    h_ring_capacity(&h, 0, 2);
    h_open(&h);
    raw_proposal(&h, 0, 0, "job/a", "pa", 1);
    assert_true(h_at(&h, SEC).granted == 1); /* lease 1 */
    raw_proposal(&h, 0, 0, "job/a", "pr", 2);
    assert_true(h_at(&h, 2 * SEC).refused == 1); /* reentrant */
    h_release(&h, 0, 0, 1, false);
    assert_true(h_at(&h, 3 * SEC).lapsed[DLS_CAUSE_RELEASE] == 1);
    /* fillers that evict pa: renewals naming lease 1 (lapsed), never an id
     * above the journal's (that would be evidence of a lost journal) */
    raw_renewal(&h, 1, 0, 1, 1);
    raw_renewal(&h, 1, 0, 1, 2);
    h_at(&h, 4 * SEC);
    raw_proposal(&h, 0, 0, "job/a", "pa", 1); /* a copy, kept while pa is evicted */
    raw_renewal(&h, 1, 0, 1, 3);
    dls_judge_pass_result r = h_at(&h, 5 * SEC);
    assert_int_equal(r.ignored_replayed, 1);
    assert_int_equal(r.granted, 0);

    h_restart(&h); /* pa, pr and the release were evicted: a gap in replay */
    raw_proposal(&h, 0, 0, "job/a", "pa", 1);
    raw_proposal(&h, 0, 0, "job/a", "pr", 2);
    r = h_at(&h, 6 * SEC);
    assert_true(r.restarted);
    assert_int_equal(r.drained, 2);
    assert_int_equal(r.ignored_replayed, 2);
    assert_int_equal(r.granted, 0);
    assert_int_equal(r.refused, 0);
    assert_int_equal(r.waiting, 0);
    assert_int_equal(dls_judge_live(h.j), 0);
    raw_proposal(&h, 0, 0, "job/a", "pb", 3); /* a new proposal counts */
    r = h_at(&h, 7 * SEC);
    assert_int_equal(r.granted, 1);
    assert_int_equal(r.ignored_replayed, 0);
    jlog log;
    read_journal(&h, &log);
    assert_int_equal(count_kind(&log, DLS_FACT_GRANT), 2);
    assert_int_equal(count_kind(&log, DLS_FACT_REFUSAL), 1);
    h_fini(&h);
}

/* The same rules (attribution.md Replay; vocabulary.md seq) when the
 * medium answers transport-error during the replay: the records drained
 * before the restart cannot be read, the journal's answers still stand. */
static void test_restart_unreadable_medium_answered_proposal_not_answered_again(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    fault *f = h_fault_medium(&h, 0);
    h_open(&h);
    raw_proposal(&h, 0, 0, "job/a", "pa", 1);
    assert_true(h_at(&h, SEC).granted == 1);
    raw_proposal(&h, 0, 0, "job/a", "pr", 2);
    assert_true(h_at(&h, 2 * SEC).refused == 1);
    h_release(&h, 0, 0, 1, false);
    assert_true(h_at(&h, 3 * SEC).lapsed[DLS_CAUSE_RELEASE] == 1);
    f->read_error = true;
    h_restart(&h);
    f->read_error = false;
    raw_proposal(&h, 0, 0, "job/a", "pa", 1);
    raw_proposal(&h, 0, 0, "job/a", "pr", 2);
    dls_judge_pass_result r = h_at(&h, 4 * SEC);
    assert_true(r.restarted);
    assert_int_equal(r.drained, 2);
    assert_int_equal(r.ignored_replayed, 2);
    assert_int_equal(r.granted, 0);
    assert_int_equal(r.refused, 0);
    raw_proposal(&h, 0, 0, "job/a", "pb", 3);
    assert_true(h_at(&h, 5 * SEC).granted == 1);
    h_fini(&h);
}

/* judge.md Restart: the judge "answers again, as newly arrived, proposals
 * that were drained but never answered" — also on a medium whose older
 * records were evicted. A waiter whose own record was evicted is unknown to
 * the restarted judge: a copy of it is answered (its first answer), and
 * that copy must not make the author's answered proposals count again: pe
 * (seq 2, refused while px waited) stays a replay after px's copy (seq 1)
 * counts (vocabulary.md seq; a holder never reuses a proposal id). */
static void test_restart_evicted_waiters_answered_once(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 3);
    h_ring_capacity(&h, 0, 3);
    h_open(&h);
    raw_proposal(&h, 1, 0, "job/w", "p1", 1);
    assert_true(h_at(&h, SEC).granted == 1); /* lease 1 to holder-1 */
    raw_proposal(&h, 0, 0, "job/w", "px", 1);
    assert_true(h_at(&h, 1500 * MS).waiting == 1);
    raw_proposal(&h, 0, 0, "job/w", "pe", 2);
    assert_true(h_at(&h, 2 * SEC).refused == 1); /* reentrant */
    raw_renewal(&h, 2, 0, 1, 1); /* fillers naming a lease the journal granted */
    raw_renewal(&h, 2, 0, 1, 2);
    raw_proposal(&h, 2, 0, "job/w", "pw", 1);
    assert_true(h_at(&h, 2500 * MS).waiting == 2);

    h_restart(&h); /* only pw is still on the medium */
    raw_proposal(&h, 1, 0, "job/w", "p1", 1); /* answered: a grant */
    raw_proposal(&h, 0, 0, "job/w", "px", 1); /* never answered */
    raw_proposal(&h, 0, 0, "job/w", "pe", 2); /* answered: a refusal */
    dls_judge_pass_result r = h_at(&h, 3 * SEC);
    assert_true(r.restarted);
    assert_int_equal(r.drained, 3);
    assert_int_equal(r.ignored_replayed, 2);
    assert_int_equal(r.granted, 0); /* pw again, px */
    assert_int_equal(r.refused, 0);
    assert_int_equal(r.waiting, 2);
    h_release(&h, 1, 0, 1, false);
    r = h_at(&h, 3500 * MS);
    assert_int_equal(r.lapsed[DLS_CAUSE_RELEASE], 1);
    assert_int_equal(r.granted, 1);
    assert_int_equal(r.waiting, 1);
    jlog log;
    read_journal(&h, &log);
    int g = find_rec(&log, 0, DLS_FACT_GRANT, 2);
    assert_true(g > 0); /* pw first */
    assert_string_equal(log.r[g].holder, "holder-2");
    assert_int_equal(count_kind(&log, DLS_FACT_REFUSAL), 1);
    assert_int_equal(count_refusals(&log, "reentrant"), 1);
    h_fini(&h);
}


/* ======================================================================================== */
/* The pure parts: the deadline heap and the hash index                                      */
/* ======================================================================================== */

static uint64_t t_rng = 88172645463325252ull;
static uint64_t t_rnd(void)
{
    t_rng ^= t_rng << 13;
    t_rng ^= t_rng >> 7;
    t_rng ^= t_rng << 17;
    return t_rng;
}

typedef struct heap_model {
    uint32_t pos[512];
} heap_model;

static void model_moved(void *ctx, uint32_t ref, uint32_t pos)
{
    ((heap_model *)ctx)->pos[ref] = pos;
}

/* judge.md: "a heap with one entry per lease holding a lower bound of its
 * deadline ... on pop, recompute and re-push if later": pushes, key changes
 * both ways and removals against a naive model. */
static void test_heap_against_model(void **state)
{
    (void)state;
    heap_model m;
    dls_heap h;
    dls_heap_init(&h, model_moved, &m);
    uint64_t key[512];
    bool in[512] = {0};
    for (int step = 0; step < 20000; step++) {
        uint32_t r = (uint32_t)(t_rnd() % 512);
        uint64_t k = t_rnd() % 1000;
        if (!in[r]) {
            assert_int_equal(dls_heap_push(&h, k, r), 0);
            in[r] = true;
            key[r] = k;
        } else if (t_rnd() % 3 == 0) {
            dls_heap_remove(&h, m.pos[r]);
            in[r] = false;
        } else {
            dls_heap_update(&h, m.pos[r], k);
            key[r] = k;
        }
        if (h.n) {
            uint64_t min = UINT64_MAX;
            uint32_t minr = 0;
            for (uint32_t i = 0; i < 512; i++)
                if (in[i] && (key[i] < min || (key[i] == min && i < minr))) {
                    min = key[i];
                    minr = i;
                }
            assert_int_equal(dls_heap_top_key(&h), min);
            assert_int_equal(dls_heap_top_ref(&h), minr);
        }
        for (uint32_t i = 0; i < 512; i++) {
            if (in[i]) {
                assert_int_equal(h.ref[m.pos[i]], i);
                assert_int_equal(h.key[m.pos[i]], key[i]);
            }
        }
    }
    dls_heap_free(&h);
}

static bool eq_u32(const void *ctx, uint32_t ref, const void *key)
{
    (void)ctx;
    return ref == *(const uint32_t *)key;
}

/* The hash index: finds what was inserted, forgets what was removed, even
 * with every key colliding (backward-shift deletion keeps probe chains). */
static void test_hash_index_against_model(void **state)
{
    (void)state;
    for (int collide = 0; collide < 2; collide++) {
        jtab t = {0};
        bool in[2000] = {0};
        for (int step = 0; step < 20000; step++) {
            uint32_t r = (uint32_t)(t_rnd() % 2000);
            uint32_t hsh = collide ? 7u : r * 2654435761u;
            if (!in[r]) {
                assert_int_equal(jtab_insert(&t, hsh, r), 0);
                in[r] = true;
            } else {
                jtab_remove(&t, hsh, r);
                in[r] = false;
            }
            if (step % 97 == 0)
                for (uint32_t i = 0; i < 2000; i += collide ? 37 : 1) {
                    uint32_t hi = collide ? 7u : i * 2654435761u;
                    assert_true((jtab_find(&t, hi, eq_u32, NULL, &i) == i) == in[i]);
                }
        }
        jtab_free(&t);
    }
}

/* vocabulary.md Durations: sums stay exact below 2^64; a duration near
 * 2^63 ns is never due early and the arithmetic never wraps. */
static void test_step3_huge_durations_exact(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    dls_fact f;
    val s = str_val("job"), p = str_val("p");
    dls_fact_proposal(&f, (dls_bytes){p.b, p.n}, (dls_bytes){s.b, s.n}, 1);
    assert_int_equal(dls_duration_make(&f.duration, DLS_UNIT_H, 2562047), 0);
    f.keys |= DLS_K_DURATION;
    append_fact(h.media[0], &f, h.holders[0]);
    dls_judge_pass_result r = h_at(&h, SEC);
    assert_true(r.granted == 1);
    assert_true(r.next_due == SEC + 2562047ull * 3600 * SEC + 250 * MS + 1);
    r = h_at(&h, 1000000 * SEC);
    assert_true(r.newly_due == 0);
    r = h_at(&h, DLS_NS_MAX); /* 2^63 − 1 − 1 s > d + tol: silence, exactly */
    assert_true(r.lapsed[DLS_CAUSE_SILENCE] == 1);
    h_fini(&h);
}

/* ======================================================================================== */

/* ======================================================================================== */
/* Restart, revision 4: kept observations, lost ledgers, short journals                      */
/* ======================================================================================== */

/* Runs: grant of lease 1 at 1 s, a renewal drained at 1.5 s, then the
 * holder dies; passes every 250 ms from 2 s, with a restart at 3 s when
 * `restart`. Answers the now of the pass that reclaimed lease 1. */
static uint64_t dead_holder_reclaimed_at(bool restart)
{
    harness h;
    h_init(&h, 1, 1);
    h_open(&h);
    h_propose(&h, 0, 0, "job/dead", "p", 0);
    dls_judge_pass_result r = h_at(&h, SEC);
    assert_int_equal(r.granted, 1);
    h_renew(&h, 0, 0, 1);
    h_at(&h, 1500 * MS);
    uint64_t at = 0;
    for (uint64_t now = 2 * SEC; now <= 8 * SEC && !at; now += 250 * MS) {
        if (restart && now == 3 * SEC)
            h_restart(&h);
        for (int k = 0; k < 2 && !at; k++) { /* at now, then 1 ns later */
            r = h_at(&h, now + (uint64_t)k);
            if (r.lapsed[DLS_CAUSE_SILENCE])
                at = now + (uint64_t)k;
        }
    }
    if (restart) {
        /* the first mark after the restart says the rule it followed */
        jlog log;
        read_journal(&h, &log);
        size_t kept = 0, restarted = 0;
        for (size_t i = 0; i < log.n; i++) {
            restarted += log.r[i].mark && log.r[i].restarted;
            kept += log.r[i].mark && log.r[i].kept;
        }
        assert_int_equal(restarted, 2); /* the new journal's first pass, the restart */
        assert_int_equal(kept, 1);      /* only the restart recovered a live lease */
    }
    h_fini(&h);
    return at;
}

/* judge.md Restart (rev 4): a restart does not re-arm silence — a dead
 * holder's lease is reclaimed at the same pass with or without a restart
 * in between (same basis, clean resume); the first mark carries kept.
 * Issue 12 item 17 (before: the restart made it unknown at 3 s and it was
 * reclaimed only after 6 s). */
static void test_restart_does_not_rearm_silence(void **state)
{
    (void)state;
    uint64_t plain = dead_holder_reclaimed_at(false);
    uint64_t restarted = dead_holder_reclaimed_at(true);
    assert_int_equal(plain, 4750 * MS + 1); /* 1.5 s + 3 s + 250 ms, strictly after */
    assert_int_equal(restarted, plain);
}

/* judge.md Restart (rev 4): a recovered lease whose registered medium
 * answers gap where the judge resumes it becomes unknown with the first
 * pass's now as resumed reading: silence then also waits a duration from
 * that reading. Issue 12 item 17. */
static void test_restart_gap_at_resume_waits_from_resumed(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 2);
    h_ring_capacity(&h, 0, 2);
    h_open(&h);
    h_propose(&h, 0, 0, "job/g", "p", 0);
    assert_int_equal(h_at(&h, SEC).granted, 1);
    h_renew(&h, 0, 0, 1);
    h_at(&h, 1500 * MS);
    h_close_judge(&h);
    /* while the judge is down, three records evict unread ones */
    for (uint64_t k = 1; k <= 3; k++)
        raw_renewal(&h, 1, 0, 1, k); /* holder-1 naming lease 1: ignored */
    h_open(&h);
    dls_judge_pass_result r = h_at(&h, 3 * SEC);
    assert_true(r.restarted);
    assert_int_equal(r.gaps, 1);
    dls_judge_lease_info i = lease_info(&h, 1);
    assert_int_equal(i.evidence, DLS_EVIDENCE_UNKNOWN);
    assert_int_equal(i.resumed, 3 * SEC);
    assert_int_equal(i.last_observation, 1500 * MS);
    r = h_at(&h, 4750 * MS + 1); /* silence holds, but not a duration since 3 s */
    assert_int_equal(r.newly_due, 0);
    r = h_at(&h, 6 * SEC);
    assert_int_equal(r.newly_due, 0);
    r = h_at(&h, 6 * SEC + 1);
    assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 1);
    h_fini(&h);
}

/* judge.md Restart (rev 4): the same when the medium answers
 * transport-error where the judge resumes it. Issue 12 item 17. */
static void test_restart_error_at_resume_waits_from_resumed(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    fault *f = h_fault_medium(&h, 0);
    h_open(&h);
    h_propose(&h, 0, 0, "job/e", "p", 0);
    assert_int_equal(h_at(&h, SEC).granted, 1);
    h_renew(&h, 0, 0, 1);
    h_at(&h, 1500 * MS);
    h_restart(&h);
    f->read_error = true;
    dls_judge_pass_result r = h_at(&h, 3 * SEC);
    assert_int_equal(r.transport_errors, 1);
    f->read_error = false;
    dls_judge_lease_info i = lease_info(&h, 1);
    assert_int_equal(i.evidence, DLS_EVIDENCE_UNKNOWN);
    assert_int_equal(i.resumed, 3 * SEC);
    r = h_at(&h, 4750 * MS + 1);
    assert_int_equal(r.newly_due, 0);
    r = h_at(&h, 6 * SEC + 1);
    assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 1);
    h_fini(&h);
}

/* judge.md Restart (rev 4): "a medium's unbroken run of failing passes
 * continues across a restart (rebuilt from the marks' errors)" — the
 * bounded suspension of silence judgement counts from the run's first
 * pass, not from the restart, so a broken medium and a restarting judge
 * cannot freeze reclamation together. */
static void test_restart_failing_run_continues(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    fault *f = h_fault_medium(&h, 0);
    h_open(&h);
    h_propose(&h, 0, 0, "job/f", "p", 0);
    assert_int_equal(h_at(&h, SEC).granted, 1); /* last observation 1 s */
    f->read_error = true;
    assert_int_equal(h_at(&h, 2 * SEC).transport_errors, 1); /* the run starts at 2 s */
    assert_int_equal(h_at(&h, 3 * SEC).transport_errors, 1);
    h_restart(&h);
    dls_judge_pass_result r = h_at(&h, 4 * SEC);
    assert_int_equal(r.transport_errors, 1);
    assert_int_equal(r.newly_due, 0);
    /* failing where the judge resumed it: unknown, resumed at 4 s, so
     * silence also waits until now − 4 s > 3 s */
    assert_int_equal(lease_info(&h, 1).resumed, 4 * SEC);
    r = h_at(&h, 7 * SEC);
    assert_int_equal(r.newly_due, 0);
    r = h_at(&h, 7 * SEC + 1);
    /* and the suspension ended 3.25 s after the run's first pass (2 s):
     * judged on the evidence read before the failure — a run restarted at
     * the restart would hold it until 7.25 s */
    assert_int_equal(r.transport_errors, 1);
    assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 1);
    h_fini(&h);
}

/* stream-format.md Readers and judge.md Restart (issue 12 item 3): a
 * restarted judge resumes each medium at the drained position its journal
 * recorded and detects a medium that now ends before it (a file cut back
 * to its header) — transport-error at the first pass, as a running judge
 * answers when its file shrinks — instead of reading records appended
 * later at positions it had already drained. The lease on it is then
 * unknown from the resumed reading (Restart rev 4), never reclaimed early. */
static void test_restart_detects_medium_cut_back(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    char path[600];
    snprintf(path, sizeof path, "%s/m0.dls", h.dir);
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    uint8_t id[16];
    memcpy(id, dls_medium_id(h.media[0]), sizeof id);
    ms.id = id;
    dls_medium_del(h.media[0]);
    assert_int_equal(dls_medium_create(&h.media[0], DLS_MEDIUM_FILE, path, &ms, NULL), 0);
    h.jm[0].medium = h.media[0];
    h_open(&h);
    h_propose(&h, 0, 0, "job/cut", "p", 0);
    assert_int_equal(h_at(&h, SEC).granted, 1);
    h_renew(&h, 0, 0, 1);
    assert_int_equal(h_at(&h, 1500 * MS).transport_errors, 0); /* drained to 2 */
    h_close_judge(&h);
    dls_medium_del(h.media[0]);
    assert_int_equal(truncate(path, DLS_STREAM_HEADER_LEN), 0);
    assert_int_equal(dls_medium_open(&h.media[0], path, DLS_OPEN_APPEND, &ms, NULL), 0);
    h.jm[0].medium = h.media[0];
    h_open(&h);
    dls_judge_pass_result r = h_at(&h, 2 * SEC);
    assert_int_equal(r.transport_errors, 1);
    assert_int_equal(lease_info(&h, 1).evidence, DLS_EVIDENCE_UNKNOWN);
    assert_int_equal(lease_info(&h, 1).resumed, 2 * SEC);
    /* still refused at the next pass: the cursor does not skip ahead */
    assert_int_equal(h_at(&h, 2500 * MS).transport_errors, 1);
    h_fini(&h);
}

/* Appends a grantor-signed restarted mark (revision 3 when !kept) whose
 * drained list names medium 0 at `pos`. */
static void append_restart_mark(harness *h, uint64_t pass, uint64_t now, uint64_t pos, bool kept)
{
    dls_mark m;
    memset(&m, 0, sizeof m);
    m.pass = pass;
    m.now_ns = now;
    m.basis = (dls_bytes){(const uint8_t *)"test-basis", 10};
    m.tolerance_ns = h->s.tolerance_ns;
    m.cadence_ns = h->s.cadence_ns;
    m.restarted = true;
    m.kept = kept;
    dls_mark_pos d;
    memcpy(d.medium, dls_medium_id(h->media[0]), 16);
    d.position = pos;
    m.drained = &d;
    m.n_drained = 1;
    dls_mark_writer wr = {0};
    uint8_t buf[4096];
    size_t n;
    assert_int_equal(dls_mark_encode_next(&m, &wr, buf, sizeof buf, &n), 1);
    append_signed_raw(h, buf, n);
}

/* judge.md Restart (rev 4): "a restarted mark without kept — a revision-3
 * journal — means every recovered lease was re-armed, and replay follows
 * that older rule there"; with kept, the observation stands. */
static void test_restart_replays_rev3_restart_with_old_rule(void **state)
{
    (void)state;
    for (int kept = 0; kept < 2; kept++) {
        harness h;
        h_init(&h, 1, 1);
        h_open(&h);
        h_propose(&h, 0, 0, "job/r3", "p", 0);
        assert_int_equal(h_at(&h, SEC).granted, 1);
        h_renew(&h, 0, 0, 1);
        h_at(&h, 1500 * MS); /* pass 2; medium 0 drained to 2 */
        h_close_judge(&h);
        append_restart_mark(&h, 3, 2 * SEC, 2, kept); /* an older judge's restart at 2 s */
        h_open(&h);
        dls_judge_pass_result r = h_at(&h, 4750 * MS + 1);
        if (kept) {
            assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 1); /* 1.5 s + 3.25 s */
        } else {
            assert_int_equal(r.newly_due, 0); /* re-armed at 2 s: not before 5 s */
            r = h_at(&h, 5 * SEC + 1);
            assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 1);
        }
        h_fini(&h);
    }
}

/* judge.md Restart, Lost ledger (rev 4): a new journal after a lost one
 * mints ids above the floor and reads each medium from its starting
 * position (default: its end), so proposals written for the old journal
 * are not answered; both are in the first mark (floor, from) and a restart
 * replay honours them. Issue 12 item 6. */
static void test_restart_lost_ledger_floor_and_from(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 2);
    h_propose(&h, 0, 0, "job/old", "p-old", 0); /* answered by the lost journal */
    raw_renewal(&h, 1, 0, 5, 9);                /* lease 5 of the lost journal */
    h.s.lost_ledger = true;
    h.s.lease_floor = 7;
    h_open(&h);
    assert_int_equal(dls_judge_highest_lease(h.j), 7);
    dls_judge_pass_result r = h_at(&h, SEC);
    assert_true(r.restarted);
    assert_true(r.mark);
    assert_int_equal(r.drained, 0); /* read from the end */
    assert_int_equal(r.granted, 0);
    h_propose(&h, 0, 0, "job/new", "p-new", 0);
    r = h_at(&h, 2 * SEC);
    assert_int_equal(r.granted, 1);
    assert_int_equal(dls_judge_highest_lease(h.j), 8); /* floor + 1 */
    jlog log;
    read_journal(&h, &log);
    assert_true(log.r[0].mark);
    assert_true(log.r[0].restarted);
    assert_true(log.r[0].has_floor);
    assert_int_equal(log.r[0].floor, 7);
    assert_int_equal(log.r[0].nfrom, 1);
    assert_int_equal(log.r[0].from_pos, 2);
    assert_int_equal(log.r[1].mark, true); /* later marks carry no floor */
    assert_false(log.r[1].has_floor);
    /* a restart replays from `from` with the floor: the old proposal is
     * still not answered, the next id is 9 */
    h.s.lost_ledger = false;
    h_restart(&h);
    assert_int_equal(dls_judge_highest_lease(h.j), 8);
    h_propose(&h, 1, 0, "job/other", "p-2", 0);
    r = h_at(&h, 3 * SEC);
    assert_int_equal(r.granted, 1);
    assert_int_equal(dls_judge_highest_lease(h.j), 9);
    read_journal(&h, &log);
    assert_int_equal(count_kind(&log, DLS_FACT_GRANT), 2);
    assert_int_equal(count_kind(&log, DLS_FACT_REFUSAL), 0);
    h_fini(&h);
}

/* Replaces the harness's journal by a new, empty one at the same path. */
static void h_new_journal(harness *h, bool truncate_only)
{
    h_close_judge(h);
    dls_medium_del(h->journal);
    if (truncate_only) {
        assert_int_equal(truncate(h->journal_path, 48), 0); /* cut back to its header */
        assert_int_equal(dls_medium_open(&h->journal, h->journal_path, DLS_OPEN_APPEND, NULL,
                                         NULL),
                         0);
    } else {
        assert_int_equal(unlink(h->journal_path), 0);
        assert_int_equal(dls_medium_create(&h->journal, DLS_MEDIUM_FILE, h->journal_path, NULL,
                                           NULL),
                         0);
    }
    h->s.journal = h->journal;
}

/* judge.md Restart; issue 12 item 5: a journal shorter than the holders'
 * evidence (a verified renewal for a lease id above every id it granted)
 * is refused at restart, pointing at the lost-ledger procedure — a journal
 * deleted, or cut back to its header, must not re-grant from id 1. With
 * the lost-ledger settings (floor at or above the evidence) it starts. */
static void test_restart_refuses_journal_shorter_than_evidence(void **state)
{
    (void)state;
    for (int cut = 0; cut < 2; cut++) {
        harness h;
        h_init(&h, 1, 1);
        h_open(&h);
        h_propose(&h, 0, 0, "job/s", "p", 0);
        assert_int_equal(h_at(&h, SEC).granted, 1);
        h_renew(&h, 0, 0, 1);
        h_at(&h, 1500 * MS);
        h_new_journal(&h, cut == 1);
        dls_where w = {0};
        assert_int_equal(h_try_open(&h, &w), DLS_ERR_JOURNAL_SHORT);
        assert_null(h.j);
        assert_non_null(w.reason);
        assert_non_null(strstr(w.reason, "lost-ledger"));
        assert_int_equal(w.offset, 0); /* the medium's index */
        h.s.lost_ledger = true;
        h.s.lease_floor = 1;
        h_open(&h); /* from the end, above the floor: nothing to refuse */
        h_propose(&h, 0, 0, "job/s2", "p2", 0);
        assert_int_equal(h_at(&h, 2 * SEC).granted, 1);
        assert_int_equal(dls_judge_highest_lease(h.j), 2);
        h_fini(&h);
    }
}

/* issue 12 item 12: the journal listed as a lease-fact medium is refused
 * at assembly. */
static void test_assembly_refuses_journal_as_medium(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 1);
    dls_resolver *jr;
    assert_int_equal(dls_resolver_new_signed(&jr, dls_medium_id(h.journal), h.kr), 0);
    dls_judge_medium jm[2] = {h.jm[0], {h.journal, jr}};
    dls_judge_settings s = h.s;
    s.media = jm;
    s.nmedia = 2;
    const char *reason = NULL;
    assert_int_equal(try_new(&h, &s, &reason), DLS_ERR_CONFIG);
    assert_non_null(reason);
    assert_non_null(strstr(reason, "journal"));
    dls_resolver_del(jr);
    h_fini(&h);
}

/* judge.md Journal (rev 4 keys): kept, floor and from ride on the first
 * record and round-trip; floor without from, kept without restarted and
 * either on a continuation are malformed. */
static void test_mark_rev4_keys_roundtrip(void **state)
{
    (void)state;
    dls_mark m;
    memset(&m, 0, sizeof m);
    m.pass = 1;
    m.basis = (dls_bytes){(const uint8_t *)"b", 1};
    m.cadence_ns = SEC;
    m.restarted = true;
    m.kept = true;
    dls_mark_pos from[2];
    memset(from, 0x21, sizeof from);
    from[0].position = 5;
    from[1].position = 70000;
    m.has_floor = true;
    m.floor = 41;
    m.from = from;
    m.n_from = 2;
    m.drained = from;
    m.n_drained = 2;
    uint8_t buf[512];
    size_t n;
    dls_mark_writer wr = {0};
    assert_int_equal(dls_mark_encode_next(&m, &wr, buf, sizeof buf, &n), 1);
    dls_mark_view v;
    assert_int_equal(dls_mark_decode(buf, n, &v, NULL), 0);
    assert_true(v.restarted);
    assert_true(v.kept);
    assert_true(v.has_floor);
    assert_int_equal(v.floor, 41);
    dls_mark_pos p;
    assert_true(dls_mark_next_pos(&v.from, &p));
    assert_int_equal(p.position, 5);
    assert_true(dls_mark_next_pos(&v.from, &p));
    assert_int_equal(p.position, 70000);
    assert_false(dls_mark_next_pos(&v.from, &p));
    /* kept without restarted */
    m.restarted = false;
    m.has_floor = false;
    m.n_from = 0;
    memset(&wr, 0, sizeof wr);
    assert_int_equal(dls_mark_encode_next(&m, &wr, buf, sizeof buf, &n), 1);
    assert_int_equal(dls_mark_decode(buf, n, &v, NULL), DLS_ERR_MARK);
    /* from without floor is refused by the writer */
    m.restarted = true;
    m.n_from = 2;
    memset(&wr, 0, sizeof wr);
    assert_int_equal(dls_mark_encode_next(&m, &wr, buf, sizeof buf, &n), DLS_ERR_INVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vector_run_journal_reproduced),
        cmocka_unit_test(test_heap_against_model),
        cmocka_unit_test(test_hash_index_against_model),
        cmocka_unit_test(test_step3_huge_durations_exact),
        cmocka_unit_test(test_assembly_grantor_required_and_ed25519),
        cmocka_unit_test(test_assembly_journal_rules),
        cmocka_unit_test(test_assembly_journal_held_by_another_judge),
        cmocka_unit_test(test_assembly_journal_lock_follows_inode),
        cmocka_unit_test(test_assembly_ticks_rules),
        cmocka_unit_test(test_assembly_media_rules),
        cmocka_unit_test(test_assembly_terms_and_reclaim),
        cmocka_unit_test(test_step1_before_first_tick_nothing),
        cmocka_unit_test(test_step1_ticks_only_from_adapter_and_rule7),
        cmocka_unit_test(test_step1_now_is_largest_reading),
        cmocka_unit_test(test_step1_last_tick_cursor_retired),
        cmocka_unit_test(test_mark_ticks_alone_owe_nothing),
        cmocka_unit_test(test_mark_owed_only_by_grant_precedes_it),
        cmocka_unit_test(test_step2_renewal_counted),
        cmocka_unit_test(test_step2_renewal_gates_and_replay),
        cmocka_unit_test(test_step2_forged_and_defective_counted),
        cmocka_unit_test(test_step2_release_commit_and_rule6),
        cmocka_unit_test(test_step2_proposal_replay_per_author_and_medium),
        cmocka_unit_test(test_step2_gap_unknown_second_condition_binds),
        cmocka_unit_test(test_step2_gap_unknown_first_condition_binds),
        cmocka_unit_test(test_step2_gap_then_renewal_known),
        cmocka_unit_test(test_step2_end_retires_medium),
        cmocka_unit_test(test_step2_transport_error_scoped_and_bounded),
        cmocka_unit_test(test_step2_transport_error_recovery),
        cmocka_unit_test(test_step2_drain_budget_counts_as_failing),
        cmocka_unit_test(test_step2_drain_budget_counts_facts_never_splits_batch),
        cmocka_unit_test(test_step2_batch_renewals_count_each_fact),
        cmocka_unit_test(test_step2_mac_batch_counts_each_fact),
        cmocka_unit_test(test_step2_batch_runs_count_in_order),
        cmocka_unit_test(test_step2_overload_bounded_no_early_reclaim),
        cmocka_unit_test(test_step3_cause_order_release_cap_policy),
        cmocka_unit_test(test_step3_cause_order_policy_before_silence),
        cmocka_unit_test(test_step3_cap_despite_renewals),
        cmocka_unit_test(test_step3_pending_keeps_cause),
        cmocka_unit_test(test_step3_late_renewals_and_cadence_overrun),
        cmocka_unit_test(test_counters_renewals_late_reclaims_media),
        cmocka_unit_test(test_step4_mark_before_reclaim),
        cmocka_unit_test(test_step4_due_owes_mark_even_if_reclaim_fails),
        cmocka_unit_test(test_step5_reclaim_reentrancy_refused),
        cmocka_unit_test(test_step5_6_ascending_ids_and_lapsed_after_act),
        cmocka_unit_test(test_policy_exclusive_fifo_bound_at_arrival),
        cmocka_unit_test(test_policy_waiter_granted_when_freed_as_bound_elapses),
        cmocka_unit_test(test_policy_shared_and_release_by_refusal),
        cmocka_unit_test(test_policy_reentrant_refused),
        cmocka_unit_test(test_policy_duration_clipping_and_mode),
        cmocka_unit_test(test_policy_lock_delay_after_silence_not_release),
        cmocka_unit_test(test_next_due_suspended_lease_not_later),
        cmocka_unit_test(test_policy_lock_delay_bound_elapsed_during_delay_refused),
        cmocka_unit_test(test_policy_bound_unknown_larger_pending_zero),
        cmocka_unit_test(test_policy_unsolicited_grants),
        cmocka_unit_test(test_policy_unsolicited_told_after_append),
        cmocka_unit_test(test_policy_step7_order),
        cmocka_unit_test(test_policy_owner_supplied),
        cmocka_unit_test(test_journal_write_failure_fatal),
        cmocka_unit_test(test_journal_enospc_named),
        cmocka_unit_test(test_journal_write_failure_every_append),
        cmocka_unit_test(test_journal_record_fields),
        cmocka_unit_test(test_journal_mark_continued_records),
        cmocka_unit_test(test_determinism_two_hash_seeds),
        cmocka_unit_test(test_restart_recovers_ledger),
        cmocka_unit_test(test_restart_ignores_other_grantor_maps),
        cmocka_unit_test(test_restart_refuses_malformed_journal_structure),
        cmocka_unit_test(test_restart_now_never_goes_backwards),
        cmocka_unit_test(test_restart_cadence_against_last_mark),
        cmocka_unit_test(test_restart_basis_change_rebases),
        cmocka_unit_test(test_restart_refuses_foreign_record),
        cmocka_unit_test(test_restart_lost_ledger),
        cmocka_unit_test(test_restart_evicted_answered_proposal_not_answered_again),
        cmocka_unit_test(test_restart_unreadable_medium_answered_proposal_not_answered_again),
        cmocka_unit_test(test_restart_evicted_waiters_answered_once),
        cmocka_unit_test(test_restart_does_not_rearm_silence),
        cmocka_unit_test(test_restart_gap_at_resume_waits_from_resumed),
        cmocka_unit_test(test_restart_error_at_resume_waits_from_resumed),
        cmocka_unit_test(test_restart_failing_run_continues),
        cmocka_unit_test(test_restart_detects_medium_cut_back),
        cmocka_unit_test(test_restart_replays_rev3_restart_with_old_rule),
        cmocka_unit_test(test_restart_lost_ledger_floor_and_from),
        cmocka_unit_test(test_restart_refuses_journal_shorter_than_evidence),
        cmocka_unit_test(test_assembly_refuses_journal_as_medium),
        cmocka_unit_test(test_mark_rev4_keys_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
