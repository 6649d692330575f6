/* Checkpoints (judge.md rev 4, Checkpoints; issue 17): a checkpoint is
 * written deterministically in the records and key order judge.md fixes;
 * restart loads the newest committed one whose digest matches and replays
 * only the journal after it; it falls back to an older one, then to full
 * replay only when the journal is retained from position 0, else refuses;
 * a restart from a checkpoint and one by full replay give the same ledger.
 *
 * The harness is test_judge.c's (ring media, a file journal) with the
 * journal wrapped so a test can see where restart reads it from and can
 * make its older records unreadable (deleted segments).
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
#include <signal.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "daolease/attrib.h"
#include "daolease/audit.h"
#include "daolease/checkpoint.h"
#include "daolease/fact.h"
#include "daolease/judge.h"
#include "daolease/medium_impl.h"
#include "daolease/stream.h"
#include "judge/checkpoint_hooks.h" /* a checkpoint file that cannot be opened */
#include "judge/internal.h" /* a lease's evidence flag (same()) */
#include "judge_harness.h"

#define MS 1000000ull
#define MAXM JH_MAXM
#define MAXH JH_MAXH

static dls_medium *wrap_journal(harness *h, dls_medium *inner);

/* The harness (judge_harness.h) with the journal wrapped (below), ring
 * media of 65,536 records and the journal lock path set. */
static void h_init(harness *h, size_t nmedia, size_t nholders)
{
    jh_options o = {.ring_capacity = 65536, .wrap_journal = wrap_journal, .lock = true};
    jh_init(h, nmedia, nholders, &o);
}

#define JW(h) ((struct jwrap *)(h)->user)

/* ---- the journal, wrapped ------------------------------------------------------------------ */

/* Records where restart reads the journal from (`min_from`: the lowest
 * position a cursor was made at) and, with `cut`, answers a cursor made
 * below it with a gap first (the journal's older segments deleted). */
typedef struct jwrap {
    dls_medium *inner;
    uint64_t min_from;
    uint64_t cut;
} jwrap;

typedef struct jwrap_cursor {
    jwrap *w;
    dls_cursor *c;
    bool gap;
} jwrap_cursor;

static int jw_batch(void *impl, const uint8_t *const *recs, const size_t *lens, size_t count,
                    uint64_t *first, dls_where *w)
{
    return dls_medium_append_batch(((jwrap *)impl)->inner, recs, lens, count, first, w);
}

static int jw_cursor_new(void *impl, uint64_t from, void **out)
{
    jwrap_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return DLS_ERR_NOMEM;
    c->w = impl;
    if (from < c->w->min_from)
        c->w->min_from = from;
    c->gap = from < c->w->cut;
    if (dls_cursor_new(&c->c, c->w->inner, c->gap ? c->w->cut : from)) {
        free(c);
        return DLS_ERR_NOMEM;
    }
    *out = c;
    return 0;
}

static dls_next jw_next(void *cimpl, dls_record *rec, dls_where *w)
{
    jwrap_cursor *c = cimpl;
    if (c->gap) {
        c->gap = false;
        memset(rec, 0, sizeof *rec);
        return DLS_NEXT_GAP;
    }
    return dls_cursor_next(c->c, rec, w);
}

static void jw_cursor_del(void *cimpl)
{
    jwrap_cursor *c = cimpl;
    dls_cursor_del(c->c);
    free(c);
}

static void jw_del(void *impl)
{
    jwrap *w = impl;
    dls_medium_del(w->inner);
    free(w);
}

static const dls_medium_ops jw_ops = {
    .kind_name = "file",
    .append_batch = jw_batch,
    .cursor_new = jw_cursor_new,
    .cursor_next = jw_next,
    .cursor_del = jw_cursor_del,
    .del = jw_del,
};

static dls_medium *wrap_journal(harness *h, dls_medium *inner)
{
    jwrap *w = calloc(1, sizeof *w);
    assert_non_null(w);
    w->inner = inner;
    w->min_from = UINT64_MAX;
    dls_medium_info info;
    memset(&info, 0, sizeof info);
    info.kind = DLS_MEDIUM_FILE;
    info.retention = DLS_RETAIN_ALL;
    info.sync = DLS_SYNC_DATA;
    info.mode = DLS_OPEN_APPEND;
    memcpy(info.id, dls_medium_id(inner), 16);
    info.name = h->journal_path;
    dls_medium *m;
    assert_int_equal(dls_medium_wrap(&m, &jw_ops, w, &info), 0);
    h->user = w;
    return m;
}

/* Closes and reopens the journal (after the file was changed under it). */
static void reopen_journal(harness *h)
{
    dls_medium_del(h->journal);
    dls_medium *inner;
    assert_int_equal(dls_medium_open(&inner, h->journal_path, DLS_OPEN_APPEND, NULL, NULL), 0);
    h->journal = wrap_journal(h, inner);
    h->s.journal = h->journal;
}

/* ---- a random workload ----------------------------------------------------------------------- */

static uint64_t rng;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

#define NHOLD 6
#define NSUBJ 10

static uint64_t props_made;

/* One step: holders propose, renew (most of the time) and release, then a
 * pass 400 ms later. Whom to renew is read off the judge's ledger. */
static void step(harness *h)
{
    for (size_t i = 0; i < NHOLD; i++) {
        if (rnd() % 10 < 3) {
            char subj[16], prop[32];
            snprintf(subj, sizeof subj, "subject-%02u", (unsigned)(rnd() % NSUBJ));
            snprintf(prop, sizeof prop, "p-%zu-%llu", i, (unsigned long long)++props_made);
            h_propose(h, i, i % h->nmedia, subj, prop, rnd() % 2 ? 2000 : 0);
        }
    }
    uint64_t top = dls_judge_highest_lease(h->j);
    for (uint64_t id = 1; id <= top; id++) {
        dls_judge_lease_info li;
        if (dls_judge_lease(h->j, id, &li) != 0 || li.medium == DLS_JUDGE_NO_MEDIUM)
            continue;
        size_t holder = (size_t)(li.holder.p[li.holder.n - 1] - '0');
        uint64_t r = rnd() % 100;
        if (r < 3)
            h_release(h, holder, li.medium, id, r == 0);
        else if (r < 85)
            h_renew(h, holder, li.medium, id);
    }
    h_tick(h, h->now + 400 * MS);
    h_pass(h);
}

/* ---- the ledger, field by field ---------------------------------------------------------------- */

typedef struct lsnap {
    bool present;
    bool unknown_flag;      /* JL_UNKNOWN: `resumed` means something */
    dls_judge_lease_info i;
    uint8_t subject[80], holder[80];
} lsnap;

typedef struct snap {
    uint64_t highest, last_pass;
    size_t live;
    size_t n;
    lsnap *l;
} snap;

static void take(harness *h, snap *s)
{
    s->highest = dls_judge_highest_lease(h->j);
    s->last_pass = dls_judge_last_pass(h->j);
    s->live = dls_judge_live(h->j);
    s->n = s->highest + 1;
    s->l = calloc(s->n, sizeof *s->l);
    assert_non_null(s->l);
    for (uint64_t id = 1; id <= s->highest; id++) {
        lsnap *x = &s->l[id];
        if (dls_judge_lease(h->j, id, &x->i) != 0)
            continue;
        x->present = true;
        uint32_t ix = jl_lease_find(h->j, id);
        x->unknown_flag = ix != JNIL && (jl_lease_at(h->j, ix)->flags & JL_UNKNOWN);
        assert_true(x->i.subject.n <= sizeof x->subject);
        assert_true(x->i.holder.n <= sizeof x->holder);
        memcpy(x->subject, x->i.subject.p, x->i.subject.n);
        memcpy(x->holder, x->i.holder.p, x->i.holder.n);
        x->i.subject.p = x->subject;
        x->i.holder.p = x->holder;
    }
}

/* judge.md rev 4, Checkpoints: "a judge started from the checkpoint and
 * one started by full replay" recover the same ledger. */
static void same(const snap *a, const snap *b)
{
    assert_int_equal(a->highest, b->highest);
    assert_int_equal(a->last_pass, b->last_pass);
    assert_int_equal(a->live, b->live);
    for (size_t id = 1; id < a->n; id++) {
        const lsnap *x = &a->l[id], *y = &b->l[id];
        assert_int_equal(x->present, y->present);
        if (!x->present)
            continue;
        assert_int_equal(x->i.lease, y->i.lease);
        assert_int_equal(x->i.subject.n, y->i.subject.n);
        assert_memory_equal(x->subject, y->subject, x->i.subject.n);
        assert_int_equal(x->i.holder.n, y->i.holder.n);
        assert_memory_equal(x->holder, y->holder, x->i.holder.n);
        assert_int_equal(x->i.mode, y->i.mode);
        assert_int_equal(x->i.duration_ns, y->i.duration_ns);
        assert_int_equal(x->i.max_ns, y->i.max_ns);
        assert_int_equal(x->i.medium, y->i.medium);
        assert_int_equal(x->i.tenure_start, y->i.tenure_start);
        assert_int_equal(x->i.last_observation, y->i.last_observation);
        assert_int_equal(x->i.last_seq, y->i.last_seq);
        assert_int_equal(x->i.released, y->i.released);
        assert_int_equal(x->i.commit, y->i.commit);
        assert_int_equal(x->i.ended, y->i.ended);
        assert_int_equal(x->i.evidence, y->i.evidence);
        /* the resumed reading matters only while evidence is unknown (a
         * renewal clears it and leaves the old value in the field) */
        assert_int_equal(x->unknown_flag, y->unknown_flag);
        if (x->unknown_flag)
            assert_int_equal(x->i.resumed, y->i.resumed);
        assert_int_equal(x->i.pending, y->i.pending);
        assert_int_equal(x->i.cause, y->i.cause);
    }
}

static void snap_free(snap *s)
{
    free(s->l);
    s->l = NULL;
}

static void checkpoint(harness *h, dls_judge_checkpoint_info *info)
{
    dls_where w = {0};
    int rc = dls_judge_checkpoint(h->j, h->ckpt_dir, info, &w);
    if (rc)
        fprintf(stderr, "checkpoint: %s (%s)\n", dls_strerror(rc), w.reason ? w.reason : "");
    assert_int_equal(rc, 0);
}

static void restart(harness *h, bool from_checkpoint)
{
    h_close_judge(h);
    h->s.checkpoint_dir = from_checkpoint ? h->ckpt_dir : NULL;
    JW(h)->min_from = UINT64_MAX;
    h_open(h);
}

/* The payloads of a checkpoint file, back to back with their lengths. */
static uint8_t *payloads(const char *path, size_t *n)
{
    dls_medium *m;
    assert_int_equal(dls_medium_open(&m, path, DLS_OPEN_READ, NULL, NULL), 0);
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    uint8_t *out = NULL;
    *n = 0;
    dls_record rec;
    while (dls_cursor_next(c, &rec, NULL) == DLS_NEXT_OK) {
        out = realloc(out, *n + rec.n + 4);
        assert_non_null(out);
        uint32_t l = (uint32_t)rec.n;
        memcpy(out + *n, &l, 4);
        memcpy(out + *n + 4, rec.p, rec.n);
        *n += rec.n + 4;
    }
    dls_cursor_del(c);
    dls_medium_del(m);
    return out;
}

static void ckpt_path(const harness *h, uint64_t pass, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%020llu.dls", h->ckpt_dir, (unsigned long long)pass);
}

/* ---- tests ---------------------------------------------------------------------------------- */

/* judge.md rev 4, Checkpoints + Determinism (nothing written comes from a
 * hash table's order); issue 17 item 1: one workload under two hash seeds
 * writes the same checkpoint payloads and digest, and the digest is the
 * BLAKE2b-256 of the payloads each preceded by its length (4 bytes LE). */
static void test_checkpoint_deterministic_two_seeds(void **state)
{
    (void)state;
    uint8_t *pl[2];
    size_t pn[2];
    uint8_t dg[2][32];
    uint64_t recs[2];
    for (int run = 0; run < 2; run++) {
        harness h;
        h_init(&h, 2, NHOLD);
        memset(h.hash_key, run ? 0xa5 : 0x5a, sizeof h.hash_key);
        h_open(&h);
        rng = 88172645463325252ull;
        props_made = 0;
        h_tick(&h, 1000 * MS);
        h_pass(&h);
        for (int i = 0; i < 120; i++)
            step(&h);
        dls_judge_checkpoint_info info;
        checkpoint(&h, &info);
        assert_true(info.records > 1);
        assert_true(dls_judge_live(h.j) > 0);
        memcpy(dg[run], info.digest, 32);
        recs[run] = info.records;
        char path[512];
        ckpt_path(&h, info.pass, path, sizeof path);
        pl[run] = payloads(path, &pn[run]);
        /* the digest recomputed from the file */
        uint8_t d[32];
        assert_int_equal(crypto_generichash(d, 32, pl[run], pn[run], NULL, 0), 0);
        assert_memory_equal(d, info.digest, 32);
        h_fini(&h);
    }
    assert_int_equal(recs[0], recs[1]);
    assert_int_equal(pn[0], pn[1]);
    assert_memory_equal(pl[0], pl[1], pn[0]);
    assert_memory_equal(dg[0], dg[1], 32);
    free(pl[0]);
    free(pl[1]);
}

/* judge.md rev 4, Checkpoints: records in the order header, leases by
 * ascending id, waiters, delays, authors; every record decodes with the
 * keys in judge.md's order (dls_ckpt_decode refuses any other order). */
static void test_checkpoint_record_order(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 2, NHOLD);
    h_open(&h);
    rng = 0x1234567;
    h_tick(&h, 1000 * MS);
    h_pass(&h);
    for (int i = 0; i < 60; i++)
        step(&h);
    dls_judge_checkpoint_info info;
    checkpoint(&h, &info);
    char path[512];
    ckpt_path(&h, info.pass, path, sizeof path);
    dls_medium *m;
    assert_int_equal(dls_medium_open(&m, path, DLS_OPEN_READ, NULL, NULL), 0);
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    dls_record rec;
    int last_kind = 0;
    uint64_t last_id = 0, n = 0, leases = 0, kinds[8] = {0};
    while (dls_cursor_next(c, &rec, NULL) == DLS_NEXT_OK) {
        dls_ckpt_rec r;
        dls_where w = {0};
        assert_int_equal(dls_ckpt_decode(rec.p, rec.n, &r, &w), 0);
        if (n == 0) {
            assert_int_equal(r.kind, DLS_CKPT_HEADER);
            assert_int_equal(r.pass, info.pass);
            assert_int_equal(r.journal_next, info.journal_next);
            assert_int_equal(r.highest, dls_judge_highest_lease(h.j));
            assert_int_equal(r.nmedia, 2);
        } else {
            assert_true((int)r.kind >= last_kind);
        }
        kinds[r.kind]++;
        if (r.kind == DLS_CKPT_LEASE) {
            assert_true(r.id > last_id);
            last_id = r.id;
            leases++;
        }
        last_kind = (int)r.kind;
        n++;
    }
    assert_int_equal(n, info.records);
    assert_int_equal(leases, dls_judge_live(h.j));
    assert_true(kinds[DLS_CKPT_WAITER] > 0); /* the workload queues waiters */
    assert_true(kinds[DLS_CKPT_AUTHOR] >= NHOLD);
    dls_cursor_del(c);
    dls_medium_del(m);
    /* the commit record: checkpoint n, digest, records */
    assert_true(info.commit_position >= info.journal_next);
    h_fini(&h);
}

/* ---- a medium that can answer transport-error (from test_judge.c) ------------------------ */

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
    f->inner = ring_with_id(tag, 65536);
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

/* judge.md rev 4, Checkpoints, Restart; issue 17 item 2: restart from the
 * newest committed checkpoint reads the journal from its journal_next
 * (never from 0), and gives the ledger full replay gives, field by field,
 * at many points of a random run (checkpoints every 7 passes). With
 * `faults`, medium 1 answers transport-error for 3 passes in every 20
 * (failing runs continue across restarts: judge.md step 2) and lock-delays
 * are on. */
static void equivalence_run(bool faults)
{
    harness h;
    h_init(&h, 2, NHOLD);
    fault *f = faults ? h_fault_medium(&h, 1) : NULL;
    if (faults)
        h.s.lock_delay_ns = 1500 * MS;
    h_open(&h);
    rng = faults ? 0x0123456789abcdefull : 0x9e3779b97f4a7c15ull;
    h_tick(&h, 1000 * MS);
    h_pass(&h);
    uint64_t next_expected = 0;
    int compared = 0;
    for (int i = 1; i <= 300; i++) {
        if (f)
            f->read_error = i % 20 >= 17;
        step(&h);
        if (i % 7 == 0) {
            dls_judge_checkpoint_info info;
            checkpoint(&h, &info);
            next_expected = info.journal_next;
        }
        if (i % 23 == 0 && next_expected) {
            if (f) /* both restarts read the media whole */
                f->read_error = false;
            restart(&h, true);
            assert_true(JW(&h)->min_from >= next_expected); /* never from the start */
            snap a, b;
            take(&h, &a);
            restart(&h, false);
            assert_int_equal(JW(&h)->min_from, 0);
            take(&h, &b);
            same(&a, &b);
            snap_free(&a);
            snap_free(&b);
            compared++;
            if (i % 2) /* carry on from either kind of restart */
                restart(&h, true);
        }
    }
    assert_true(compared >= 10);
    h_fini(&h);
}

static void test_restart_checkpoint_equals_full_replay(void **state)
{
    (void)state;
    equivalence_run(false);
}

static void test_restart_checkpoint_equals_full_replay_failing_medium(void **state)
{
    (void)state;
    equivalence_run(true);
}

/* Helper: a run with two checkpoints A (older) and B (newest); returns
 * their infos; the judge is closed. */
static void two_checkpoints(harness *h, dls_judge_checkpoint_info *a, dls_judge_checkpoint_info *b)
{
    h_init(h, 2, NHOLD);
    h_open(h);
    rng = 0x2545f4914f6cdd1dull;
    h_tick(h, 1000 * MS);
    h_pass(h);
    for (int i = 0; i < 40; i++)
        step(h);
    checkpoint(h, a);
    for (int i = 0; i < 40; i++)
        step(h);
    checkpoint(h, b);
    for (int i = 0; i < 10; i++)
        step(h);
    h_close_judge(h);
}

static void expect_restart_from(harness *h, uint64_t journal_next)
{
    restart(h, true);
    assert_int_equal(JW(h)->min_from, journal_next);
    snap a, b;
    take(h, &a);
    restart(h, false);
    take(h, &b);
    same(&a, &b);
    snap_free(&a);
    snap_free(&b);
}

/* judge.md, Checkpoints: the restart says what it skipped and why, and
 * what it loaded (dls_judge_checkpoint_notes, for the owner's warning):
 * newest first, `skipped` skipped with a reason holding `why`, then
 * `loaded` loaded. */
static void expect_notes(harness *h, uint64_t skipped, const char *why, uint64_t loaded)
{
    restart(h, true);
    size_t n = 0;
    const dls_judge_ckpt_note *v = dls_judge_checkpoint_notes(h->j, &n);
    assert_int_equal(n, 2);
    assert_true(v[0].pass == skipped && !v[0].loaded && v[0].why != NULL);
    if (!strstr(v[0].why, why))
        fail_msg("checkpoint %llu skipped for \"%s\", want \"%s\"",
                 (unsigned long long)skipped, v[0].why, why);
    assert_true(v[1].pass == loaded && v[1].loaded && v[1].why == NULL);
}

/* judge.md rev 4, Checkpoints: "Fall back to an older checkpoint"; a torn
 * checkpoint (its file cut short, as by kill -9 while writing) does not
 * exist. Issue 17 items 2 and 5. */
static void test_restart_falls_back_on_torn_newest(void **state)
{
    (void)state;
    harness h;
    dls_judge_checkpoint_info a, b;
    two_checkpoints(&h, &a, &b);
    expect_restart_from(&h, b.journal_next);
    h_close_judge(&h);
    char path[512];
    ckpt_path(&h, b.pass, path, sizeof path);
    assert_int_equal(truncate(path, (off_t)(b.bytes - 7)), 0);
    expect_restart_from(&h, a.journal_next);
    expect_notes(&h, b.pass, "damaged", a.pass);
    h_fini(&h);
}

/* judge.md rev 4, Checkpoints: "A checkpoint without that record ... does
 * not exist": the newest is durable but its commit record never reached
 * the journal (the judge died between the two). */
static void test_restart_ignores_uncommitted(void **state)
{
    (void)state;
    harness h;
    dls_judge_checkpoint_info a, b;
    h_init(&h, 2, NHOLD);
    h_open(&h);
    rng = 0x77;
    h_tick(&h, 1000 * MS);
    h_pass(&h);
    for (int i = 0; i < 30; i++)
        step(&h);
    checkpoint(&h, &a);
    for (int i = 0; i < 30; i++)
        step(&h);
    struct stat st;
    assert_int_equal(stat(h.journal_path, &st), 0);
    checkpoint(&h, &b);
    h_close_judge(&h);
    assert_int_equal(truncate(h.journal_path, st.st_size), 0); /* the commit record gone */
    reopen_journal(&h);
    char path[512];
    ckpt_path(&h, b.pass, path, sizeof path);
    assert_int_equal(access(path, F_OK), 0); /* the file is there, complete */
    expect_restart_from(&h, a.journal_next);
    expect_notes(&h, b.pass, "no commit record", a.pass);
    h_fini(&h);
}

/* judge.md rev 4, Checkpoints: "or whose digest differs, does not exist":
 * a planted checkpoint with one value changed (a well-formed file, a good
 * CRC) is skipped for the older one. */
static void test_restart_ignores_digest_mismatch(void **state)
{
    (void)state;
    harness h;
    dls_judge_checkpoint_info a, b;
    two_checkpoints(&h, &a, &b);
    char path[512];
    ckpt_path(&h, b.pass, path, sizeof path);
    /* rewrite B with its last record's final byte changed */
    size_t n;
    uint8_t *pl = payloads(path, &n);
    assert_int_equal(unlink(path), 0);
    dls_medium *m;
    assert_int_equal(dls_medium_create(&m, DLS_MEDIUM_FILE, path, NULL, NULL), 0);
    size_t off = 0;
    while (off < n) {
        uint32_t l;
        memcpy(&l, pl + off, 4);
        if (off + 4 + l == n) {
            uint8_t *last = pl + off + 4 + l - 1; /* a uint (seq) or nil/bool */
            if (*last < 0x7f)
                (*last)++;
        }
        assert_int_equal(dls_medium_append(m, pl + off + 4, l, NULL, NULL), 0);
        off += 4 + l;
    }
    dls_medium_del(m);
    free(pl);
    expect_restart_from(&h, a.journal_next);
    expect_notes(&h, b.pass, "differ from the digest", a.pass);
    h_fini(&h);
}

/* judge.md rev 4, Checkpoints: a checkpoint whose records differ from its
 * commit record's count does not exist. A file grown past its committed
 * count (its records, then 5,000 more copies of its last one) is skipped for
 * the older checkpoint; restart stops loading it at the committed count
 * (judge/checkpoint_load.c), so a grown or planted file costs no more
 * memory than the real one (bad input: never an unbounded allocation). */
static void test_restart_ignores_grown_checkpoint(void **state)
{
    (void)state;
    harness h;
    dls_judge_checkpoint_info a, b;
    two_checkpoints(&h, &a, &b);
    char path[512];
    ckpt_path(&h, b.pass, path, sizeof path);
    size_t n;
    uint8_t *pl = payloads(path, &n);
    assert_int_equal(unlink(path), 0);
    dls_medium *m;
    assert_int_equal(dls_medium_create(&m, DLS_MEDIUM_FILE, path, NULL, NULL), 0);
    size_t off = 0, last = 0;
    uint32_t l = 0;
    while (off < n) {
        memcpy(&l, pl + off, 4);
        assert_int_equal(dls_medium_append(m, pl + off + 4, l, NULL, NULL), 0);
        last = off;
        off += 4 + l;
    }
    memcpy(&l, pl + last, 4);
    for (int k = 0; k < 5000; k++)
        assert_int_equal(dls_medium_append(m, pl + last + 4, l, NULL, NULL), 0);
    dls_medium_del(m);
    free(pl);
    expect_restart_from(&h, a.journal_next);
    expect_notes(&h, b.pass, "more records than its commit record counts", a.pass);
    h_fini(&h);
}

/* judge.md rev 4, Checkpoints, Restart + Retention: the journal's records
 * before the checkpoint's journal_next are gone (segments deleted): restart
 * from the checkpoint works; with no usable checkpoint the judge refuses to
 * start (full replay would forget live leases). Issue 17 item 2. */
static void test_restart_refuses_without_history(void **state)
{
    (void)state;
    harness h;
    dls_judge_checkpoint_info a, b;
    two_checkpoints(&h, &a, &b);
    JW(&h)->cut = a.journal_next;
    {
        restart(&h, true);
        assert_int_equal(JW(&h)->min_from, b.journal_next);
        h_close_judge(&h);
    }
    /* no checkpoint at all */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", h.ckpt_dir);
    assert_int_equal(system(cmd), 0);
    h.s.checkpoint_dir = h.ckpt_dir;
    dls_where w = {0};
    assert_int_equal(h_try_open(&h, &w), DLS_ERR_JOURNAL);
    assert_null(h.j);
    assert_non_null(w.reason);
    assert_non_null(strstr(w.reason, "not retained from position 0"));
    /* and without the cut, full replay from position 0 is the fallback */
    JW(&h)->cut = 0;
    h_open(&h);
    assert_int_equal(JW(&h)->min_from, 0);
    h_fini(&h);
}

/* judge.md rev 4, Checkpoints, Retention: a lease-fact medium that evicted
 * records before the checkpoint's drained positions makes no lease
 * unknown at restart (the checkpoint's media are read from there). */
static void test_restart_media_evicted_before_checkpoint(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, NHOLD);
    /* a small ring: it evicts what the judge drained long ago */
    dls_resolver_del(h.res[0]);
    dls_medium_del(h.media[0]);
    h.media[0] = ring_with_id(0x10, 64);
    assert_int_equal(dls_resolver_new_signed(&h.res[0], dls_medium_id(h.media[0]), h.kr), 0);
    h.jm[0] = (dls_judge_medium){h.media[0], h.res[0]};
    h_open(&h);
    rng = 0x5151;
    h_tick(&h, 1000 * MS);
    h_pass(&h);
    for (int i = 0; i < 80; i++)
        step(&h);
    dls_judge_checkpoint_info info;
    checkpoint(&h, &info);
    assert_true(dls_judge_live(h.j) > 0);
    restart(&h, true);
    uint64_t top = dls_judge_highest_lease(h.j);
    size_t known = 0;
    for (uint64_t id = 1; id <= top; id++) {
        dls_judge_lease_info li;
        if (dls_judge_lease(h.j, id, &li) == 0)
            known += li.evidence == DLS_EVIDENCE_UNKNOWN ? 0 : 1;
    }
    /* recovered leases read as unknown until the first pass; after it they
     * are known again (the medium is read from the drained position) */
    step(&h);
    known = 0;
    size_t live = 0;
    top = dls_judge_highest_lease(h.j);
    for (uint64_t id = 1; id <= top; id++) {
        dls_judge_lease_info li;
        if (dls_judge_lease(h.j, id, &li) == 0) {
            live++;
            known += li.evidence == DLS_EVIDENCE_KNOWN;
        }
    }
    assert_true(live > 0);
    assert_int_equal(known, live);
    h_fini(&h);
}

/* Issue 17 item 1: a second checkpoint with no pass mark since writes
 * nothing; before any pass since start there is nothing to write. */
static void test_checkpoint_states(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 1, 2);
    h_open(&h);
    dls_judge_checkpoint_info info;
    assert_int_equal(dls_judge_checkpoint(h.j, h.ckpt_dir, &info, NULL), DLS_ERR_STATE);
    h_tick(&h, 1000 * MS);
    h_pass(&h);
    checkpoint(&h, &info);
    assert_true(info.records >= 1);
    checkpoint(&h, &info);
    assert_int_equal(info.records, 0);
    assert_int_equal(dls_judge_checkpoint(NULL, NULL, NULL, NULL), DLS_ERR_INVAL);
    h_fini(&h);
}


/* ---- kill -9 while writing checkpoints (issue 17 item 5) ------------------------------------ */

typedef struct kworld {
    char dir[256], journal[300], medium[300], ckdir[300], lock[300];
    dls_secret *grantor, *holder;
    dls_keyring *kr;
    dls_medium *j, *m, *tick;
    dls_resolver *mr, *tr;
    dls_judge_settings s;
    dls_judge_tick_source ts;
    dls_judge_medium jm;
    dls_judge *judge;
    uint64_t seq;
} kworld;

static int k_reclaim(void *u, dls_bytes subject, uint64_t lease, dls_cause cause, bool commit)
{
    (void)u, (void)subject, (void)lease, (void)cause, (void)commit;
    return DLS_RECLAIM_DONE;
}

/* Opens (creating on the first round) the journal and the medium, and
 * starts a judge restarting from checkpoints or not. 0 or the error. */
static int k_open(kworld *k, bool from_checkpoint)
{
    uint8_t seed[32];
    memset(seed, 7, sizeof seed);
    if (dls_secret_from_seed(&k->grantor, "arbiter", DLS_KEY_ED25519, seed))
        return -1;
    memset(seed, 0x41, sizeof seed);
    if (dls_secret_from_seed(&k->holder, "holder-1", DLS_KEY_ED25519, seed) ||
        dls_keyring_new(&k->kr) ||
        dls_keyring_add(k->kr, (const uint8_t *)"holder-1", 8, DLS_KEY_ED25519,
                        dls_secret_public(k->holder)))
        return -1;
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    bool fresh = access(k->journal, F_OK) != 0;
    int rc = fresh ? dls_medium_create(&k->j, DLS_MEDIUM_FILE, k->journal, &ms, NULL)
                   : dls_medium_open(&k->j, k->journal, DLS_OPEN_APPEND, &ms, NULL);
    if (rc)
        return rc;
    ms.sync = DLS_SYNC_NONE; /* a process kill keeps the page cache */
    rc = fresh ? dls_medium_create(&k->m, DLS_MEDIUM_FILE, k->medium, &ms, NULL)
               : dls_medium_open(&k->m, k->medium, DLS_OPEN_APPEND, &ms, NULL);
    if (rc)
        return rc;
    dls_medium_settings rs;
    dls_medium_settings_default(&rs);
    if (dls_ring_new(&k->tick, &rs) ||
        dls_resolver_new_medium(&k->tr, dls_medium_id(k->tick), "ticker", NULL) ||
        dls_resolver_new_signed(&k->mr, dls_medium_id(k->m), k->kr))
        return -1;
    k->jm = (dls_judge_medium){k->m, k->mr};
    dls_judge_settings_default(&k->s);
    k->s.grantor = k->grantor;
    k->s.journal = k->j;
    k->ts = (dls_judge_tick_source){k->tick, k->tr, "ticker", "kill-basis", 0};
    k->s.ticks = &k->ts;
    k->s.nticks = 1;
    k->s.media = &k->jm;
    k->s.nmedia = 1;
    k->s.tolerance_ns = 250 * MS;
    k->s.cadence_ns = 1000 * MS;
    dls_duration_make(&k->s.default_duration, DLS_UNIT_H, 1);
    k->s.checkpoint_dir = from_checkpoint ? k->ckdir : NULL;
    dls_judge_callbacks cb = {.reclaim = k_reclaim};
    return dls_judge_new(&k->judge, &k->s, &cb, NULL, NULL);
}

static void k_close(kworld *k)
{
    dls_judge_del(k->judge);
    dls_resolver_del(k->mr);
    dls_resolver_del(k->tr);
    dls_medium_del(k->tick);
    dls_medium_del(k->m);
    dls_medium_del(k->j);
    dls_keyring_del(k->kr);
    dls_secret_del(k->grantor);
    dls_secret_del(k->holder);
    k->judge = NULL;
    k->mr = k->tr = NULL;
    k->tick = k->m = k->j = NULL;
    k->kr = NULL;
    k->grantor = k->holder = NULL;
}

static void k_propose(kworld *k, uint64_t n)
{
    char subj[32], prop[32];
    snprintf(subj, sizeof subj, "s-%016llu", (unsigned long long)n);
    snprintf(prop, sizeof prop, "p-%llu", (unsigned long long)n);
    val sv = str_val(subj), pv = str_val(prop);
    dls_fact f;
    /* proposal seqs must rise across rounds: n rises with the medium */
    dls_fact_proposal(&f, (dls_bytes){pv.b, pv.n}, (dls_bytes){sv.b, sv.n}, n);
    append_fact(k->m, &f, k->holder);
}

/* The child: passes and checkpoints in a loop until killed. */
static void k_child(kworld *k, uint64_t base, uint64_t first_batch, int ready)
{
    if (k_open(k, true))
        _exit(3);
    uint64_t n = base, now = 1000 * MS + base * MS;
    for (uint64_t i = 0; i < first_batch; i++)
        k_propose(k, ++n);
    for (;;) {
        k_propose(k, ++n);
        dls_fact f;
        dls_duration d;
        dls_duration_make(&d, DLS_UNIT_NS, now += MS);
        dls_fact_tick(&f, d);
        append_fact(k->tick, &f, NULL);
        dls_judge_pass_result r;
        if (dls_judge_pass(k->judge, &r))
            _exit(4);
        int rc = dls_judge_checkpoint(k->judge, k->ckdir, NULL, NULL);
        if (rc && rc != DLS_ERR_STATE)
            _exit(5);
        if (ready >= 0) { /* the first checkpoint is committed */
            if (write(ready, "r", 1) != 1)
                _exit(6);
            close(ready);
            ready = -1;
        }
    }
}

static size_t k_snap(kworld *k, snap *out)
{
    harness h;
    memset(&h, 0, sizeof h);
    h.j = k->judge;
    take(&h, out);
    return out->live;
}

static void kill_rounds(unsigned rounds)
{
    kworld k;
    memset(&k, 0, sizeof k);
    char *d = make_tmpdir();
    snprintf(k.dir, sizeof k.dir, "%s", d);
    snprintf(k.journal, sizeof k.journal, "%s/journal.dls", d);
    snprintf(k.medium, sizeof k.medium, "%s/medium.dls", d);
    snprintf(k.ckdir, sizeof k.ckdir, "%s/journal.dls.ckpt", d);
    unsigned torn = 0, uncommitted = 0;
    uint64_t seed = 0x1234;
    uint64_t base = 0;
    for (unsigned round = 0; round < rounds; round++) {
        int pfd[2];
        assert_int_equal(pipe(pfd), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(pfd[0]);
            k_child(&k, base, round == 0 ? 4000 : 0, pfd[1]);
        }
        close(pfd[1]);
        char c;
        assert_int_equal(read(pfd[0], &c, 1), 1);
        close(pfd[0]);
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        usleep((useconds_t)((seed >> 33) % 60000));
        kill(pid, SIGKILL);
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFSIGNALED(st)); /* it was still running: not an early exit */
        /* what the kill left: a .tmp (torn write) or a newest .dls whose
         * commit is missing (counted by whether restart skips it) */
        char cmd[600];
        snprintf(cmd, sizeof cmd, "ls %s/*.tmp >/dev/null 2>&1", k.ckdir);
        torn += system(cmd) == 0;
        /* judge.md rev 4, Checkpoints: the next restart is correct — the
         * ledger from the newest committed checkpoint equals full replay */
        assert_int_equal(k_open(&k, true), 0);
        snap a, b;
        k_snap(&k, &a);
        uint64_t ck = dls_judge_last_pass(k.judge);
        k_close(&k);
        assert_int_equal(k_open(&k, false), 0);
        k_snap(&k, &b);
        same(&a, &b);
        assert_true(a.live >= 1);
        base = a.highest + 1000; /* proposals above anything used */
        (void)ck;
        snap_free(&a);
        snap_free(&b);
        k_close(&k);
    }
    (void)uncommitted;
    fprintf(stderr, "kill rounds %u, killed with a torn checkpoint write %u\n", rounds, torn);
    rm_rf(d);
    free(d);
}

/* judge.md rev 4, Checkpoints ("a checkpoint without that record ... does
 * not exist"); issue 17 item 5: kill -9 the judge at random moments while
 * it passes and checkpoints in a loop (DLS_CKPT_KILLS rounds, default 4;
 * scripts/kill_checkpoint.sh runs hundreds): every restart from the
 * checkpoints gives the ledger full replay gives. */
static void test_kill_while_checkpointing(void **state)
{
    (void)state;
    const char *e = getenv("DLS_CKPT_KILLS");
    unsigned rounds = e ? (unsigned)strtoul(e, NULL, 10) : 4;
    kill_rounds(rounds ? rounds : 1);
}

/* ---- the CLI judge's checkpoint_every (issue 17 item 1) -------------------------------------- */

static int sh(const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd);
}

/* docs/config.md checkpoint_every / keep_checkpoints: a `daolease judge`
 * with a holder writes checkpoints every 3 passes, keeps the newest 2
 * (older ones and no .tmp left), each committed on the journal; a second
 * judge restarts from them and carries on. */
static void test_cli_checkpoint_every(void **state)
{
    (void)state;
    const char *bin = getenv("DAOLEASE_BIN");
    if (!bin)
        skip();
    char *d = make_tmpdir();
    assert_int_equal(sh("cd %s && for p in arbiter a1; do %s keygen $p >> keyring; done && "
                        "%s stream create a1.dls > /dev/null", d, bin, bin), 0);
    assert_int_equal(
        sh("cd %s && printf '%%s' '{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", "
           "\"keyring\": \"keyring\", \"journal\": \"journal.dls\", \"media\": [\"a1.dls\"], "
           "\"duration\": {\"s\": 1}, \"tolerance\": {\"ms\": 250}, \"cadence\": {\"ms\": 100}, "
           "\"create_journal\": true, \"checkpoint_every\": {\"passes\": 3}, "
           "\"keep_checkpoints\": 2}' > judge.json && "
           "printf '%%s' '{\"party\": \"a1\", \"key\": \"a1.secret\", \"keyring\": \"keyring\", "
           "\"grantor\": \"arbiter\", \"journal\": \"journal.dls\", \"medium\": \"a1.dls\", "
           "\"duration\": {\"s\": 1}}' > run.json", d), 0);
    assert_int_equal(sh("cd %s && { %s judge --config judge.json --passes 60 > j1.out 2> j1.err & "
                        "echo $! > j1.pid; } && sleep 0.5 && %s run --config run.json --subject s1 "
                        "-- sleep 2 > run.out 2>&1; "
                        "while kill -0 $(cat j1.pid) 2>/dev/null; do sleep 0.1; done",
                        d, bin, bin), 0);
    /* two kept, no leftovers */
    assert_int_equal(sh("cd %s && test $(ls journal.dls.ckpt | grep -c '\\.dls$') -eq 2 && "
                        "! ls journal.dls.ckpt | grep -q tmp", d), 0);
    /* each kept checkpoint is committed on the journal */
    assert_int_equal(sh("cd %s && %s dump journal.dls --keyring keyring --json | "
                        "grep -c dao.judge/checkpoint > commits && test $(cat commits) -ge 2", d,
                        bin), 0);
    /* a restart from them runs */
    assert_int_equal(sh("cd %s && %s judge --config judge.json --passes 5 > j2.out 2> j2.err", d,
                        bin), 0);
    /* judge.md, Checkpoints: a bit flipped in the newest checkpoint (a byte
     * of its header record's key: its CRC fails) — the audit reports it as
     * damaged and finds no failure (exit 0); the judge restarts from the
     * older one and says in one stderr line which it skipped, why, and
     * which it loaded. Before: the judge said nothing and the audit failed
     * with a `journal` failure ("differs from the replay"). */
    assert_int_equal(sh("cd %s && ls journal.dls.ckpt/*.dls | sort | tail -1 > newest && "
                        "ls journal.dls.ckpt/*.dls | sort | head -1 > oldest && "
                        "printf '\\377' | dd of=$(cat newest) bs=1 seek=60 conv=notrunc "
                        "2> /dev/null", d), 0);
    assert_int_equal(sh("cd %s && %s audit --journal journal.dls --grantor arbiter --keyring "
                        "keyring --media a1.dls > audit.out 2> audit.err", d, bin), 0);
    assert_int_equal(sh("cd %s && grep -q '1 damaged (reported, not a failure)' audit.out && "
                        "grep -q \"checkpoint $(basename $(cat newest) .dls | sed 's/^0*//') is "
                        "damaged\" audit.out", d), 0);
    assert_int_equal(sh("cd %s && %s judge --config judge.json --passes 1 > j3.out 2> j3.err", d,
                        bin), 0);
    assert_int_equal(sh("cd %s && test $(wc -l < j3.err) -eq 1 && grep -q \"warning: skipped "
                        "checkpoint $(basename $(cat newest)) (its header record is unreadable\" "
                        "j3.err && grep -q \"; loaded $(basename $(cat oldest))$\" j3.err", d),
                     0);
    rm_rf(d);
    free(d);
}

/* ---- the audit checks checkpoints (issue 17 item 4) -------------------------------------------- */

static const dls_audit_summary *audit_with(harness *h, dls_audit **a, const char *ckdir)
{
    dls_audit_settings set;
    dls_audit_settings_default(&set);
    set.checkpoints = ckdir;
    dls_audit_medium am[MAXM];
    for (size_t i = 0; i < h->nmedia; i++)
        am[i] = (dls_audit_medium){h->media[i], NULL};
    dls_keyring *kr; /* the holders' and the grantor's keys */
    assert_int_equal(dls_keyring_new(&kr), 0);
    assert_int_equal(dls_keyring_add(kr, (const uint8_t *)"arbiter", 7, DLS_KEY_ED25519,
                                     dls_secret_public(h->grantor)),
                     0);
    for (size_t i = 0; i < MAXH && h->holders[i]; i++) {
        const char *name = dls_secret_name(h->holders[i]);
        assert_int_equal(dls_keyring_add(kr, (const uint8_t *)name, strlen(name),
                                         DLS_KEY_ED25519, dls_secret_public(h->holders[i])),
                         0);
    }
    dls_where w = {0};
    int rc = dls_audit_run(a, &set, h->journal, "arbiter", kr, am, h->nmedia, &w);
    dls_keyring_del(kr);
    if (rc)
        fprintf(stderr, "audit: %s (%s)\n", dls_strerror(rc), w.reason ? w.reason : "");
    assert_int_equal(rc, 0);
    return dls_audit_summary_of(*a);
}

static bool detail_has(const dls_audit_summary *s, const char *needle)
{
    for (size_t i = 0; i < s->n_failure_details; i++)
        if (strstr(s->failure_details[i], needle))
            return true;
    return false;
}

static bool warning_has(const dls_audit_summary *s, const char *needle)
{
    for (size_t i = 0; i < s->n_warnings; i++)
        if (strstr(s->warnings[i], needle))
            return true;
    return false;
}

/* Rewrites checkpoint `path` with the first lease record's seq changed
 * (a well-formed file with other contents); answers its new digest. */
static void plant_seq(const char *path, uint8_t digest[32], uint64_t *records)
{
    size_t n;
    uint8_t *pl = payloads(path, &n);
    static const uint8_t key[] = "\xac" "dao.ckpt/seq";
    bool done = false;
    for (size_t off = 0; off < n && !done;) {
        uint32_t l;
        memcpy(&l, pl + off, 4);
        uint8_t *r = pl + off + 4;
        bool lease = l > 16 && memcmp(r + 1, "\xae" "dao.ckpt/lease", 15) == 0;
        for (size_t i = 0; lease && i + 13 < l; i++)
            if (memcmp(r + i, key, 13) == 0 && r[i + 13] < 0x7f) {
                r[i + 13]++;
                done = true;
                break;
            }
        off += 4 + l;
    }
    assert_true(done);
    assert_int_equal(unlink(path), 0);
    dls_medium *m;
    assert_int_equal(dls_medium_create(&m, DLS_MEDIUM_FILE, path, NULL, NULL), 0);
    *records = 0;
    for (size_t off = 0; off < n;) {
        uint32_t l;
        memcpy(&l, pl + off, 4);
        assert_int_equal(dls_medium_append(m, pl + off + 4, l, NULL, NULL), 0);
        off += 4 + l;
        ++*records;
    }
    dls_medium_del(m);
    assert_int_equal(crypto_generichash(digest, 32, pl, n, NULL, 0), 0);
    free(pl);
}

/* judge.md rev 4, Checkpoints, Audit: with the full history the audit
 * recomputes the state at each checkpoint and compares; a clean run's
 * checkpoints all agree; a planted file whose digest is not the commit's
 * is a `journal` failure; a checkpoint committed with a matching digest
 * but a lease's counted seq changed is a `journal` failure (the
 * recomputation, not only the digest, catches it). */
static void test_audit_checks_checkpoints(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 2, NHOLD);
    h_open(&h);
    rng = 0xfeedbeef;
    h_tick(&h, 1000 * MS);
    h_pass(&h);
    unsigned written = 0;
    dls_judge_checkpoint_info info;
    for (int i = 1; i <= 60; i++) {
        step(&h);
        if (i % 7 == 0) {
            checkpoint(&h, &info);
            written += info.records > 0;
        }
    }
    checkpoint(&h, &info);
    written += info.records > 0;
    assert_true(dls_judge_live(h.j) > 0);
    h_close_judge(&h);

    dls_audit *a;
    const dls_audit_summary *s = audit_with(&h, &a, h.ckpt_dir);
    assert_int_equal(s->checkpoints_checked, written);
    assert_int_equal(s->checkpoints_mismatch, 0);
    assert_int_equal(dls_audit_exit_status(a), 0);
    dls_audit_del(a);

    /* a planted checkpoint, then a commit record made for it */
    char path[512];
    ckpt_path(&h, info.pass, path, sizeof path);
    uint8_t digest[32];
    uint64_t records;
    plant_seq(path, digest, &records);
    uint8_t fact[128], env[512];
    size_t fn = 0, en = 0;
    {
        /* {"dao.judge/checkpoint": n, "dao.judge/digest": bin 32, "dao.judge/records": r} */
        uint8_t *p = fact;
        *p++ = 0x83;
        *p++ = 0xb4; memcpy(p, "dao.judge/checkpoint", 20); p += 20;
        *p++ = 0xcf; for (int k = 7; k >= 0; k--) *p++ = (uint8_t)(info.pass >> (8 * k));
        *p++ = 0xb0; memcpy(p, "dao.judge/digest", 16); p += 16;
        *p++ = 0xc4; *p++ = 32; memcpy(p, digest, 32); p += 32;
        *p++ = 0xb1; memcpy(p, "dao.judge/records", 17); p += 17;
        *p++ = 0xcf; for (int k = 7; k >= 0; k--) *p++ = (uint8_t)(records >> (8 * k));
        fn = (size_t)(p - fact);
    }
    uint64_t pn = 0, rn = 0;
    assert_int_equal(dls_ckpt_commit_decode(fact, fn, &pn, NULL, &rn), 1);
    assert_int_equal(pn, info.pass);
    assert_int_equal(dls_envelope_seal(h.grantor, dls_medium_id(h.journal), fact, fn, env,
                                       sizeof env, &en),
                     0);
    assert_int_equal(dls_medium_append(h.journal, env, en, NULL, NULL), 0);
    s = audit_with(&h, &a, h.ckpt_dir);
    assert_int_equal(dls_audit_exit_status(a), 1);
    /* judge.md, Checkpoints: the first commit's file differs from its
     * digest — not that checkpoint, reported as damaged, no failure; the
     * second commit matches the planted file, which differs from the
     * replay (seq): the one failure */
    assert_int_equal(s->checkpoints_mismatch, 1);
    assert_int_equal(s->checkpoints_damaged, 1);
    assert_false(detail_has(s, "its digest or record count"));
    assert_true(warning_has(s, "is damaged: its digest or record count"));
    assert_true(detail_has(s, "last counted seq"));
    dls_audit_del(a);
    h_fini(&h);
}

/* judge.md rev 4, Checkpoints + Determinism; issue 17 item 1 ("insertion
 * orders"): two judges with the same history, one restarted from a
 * checkpoint (its ledger rebuilt from live leases only, in id order) and
 * one by full replay (every subject and party interned in history order),
 * then given the same inputs, write the same journal bytes and the same
 * checkpoint bytes. */
static void test_checkpoint_same_after_either_restart(void **state)
{
    (void)state;
    harness hs[2];
    uint8_t *pl[2];
    size_t pn[2];
    for (int k = 0; k < 2; k++) {
        harness *h = &hs[k];
        h_init(h, 2, NHOLD);
        h_open(h);
        rng = 0xabcdef12345ull;
        props_made = 0;
        h_tick(h, 1000 * MS);
        h_pass(h);
        for (int i = 0; i < 70; i++)
            step(h);
        dls_judge_checkpoint_info info;
        checkpoint(h, &info);
        restart(h, k == 0); /* A from the checkpoint, B by full replay */
    }
    for (int k = 0; k < 2; k++) {
        harness *h = &hs[k];
        rng = 0x5eed5eedull;
        props_made = 1000;
        for (int i = 0; i < 40; i++)
            step(h);
        dls_judge_checkpoint_info info;
        checkpoint(h, &info);
        char path[512];
        ckpt_path(h, info.pass, path, sizeof path);
        pl[k] = payloads(path, &pn[k]);
        h_close_judge(h);
    }
    assert_int_equal(pn[0], pn[1]);
    assert_memory_equal(pl[0], pl[1], pn[0]);
    size_t jn[2];
    uint8_t *jb[2];
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen(hs[k].journal_path, "rb");
        assert_non_null(f);
        jb[k] = malloc(1 << 22);
        assert_non_null(jb[k]);
        jn[k] = fread(jb[k], 1, 1 << 22, f);
        fclose(f);
    }
    assert_int_equal(jn[0], jn[1]);
    assert_memory_equal(jb[0], jb[1], jn[0]);
    for (int k = 0; k < 2; k++) {
        free(pl[k]);
        free(jb[k]);
        h_fini(&hs[k]);
    }
}

/* ---- retention: a journal that does not grow forever (issue 17 item 3) ---------------------- */

/* A segmented medium at dir/name with these bounds (0: none). */
static dls_medium *seg_medium(const char *dir, const char *name, uint8_t tag, uint64_t seg_bytes,
                              uint64_t retain_segments, dls_sync sync, bool exclusive)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    uint8_t id[16];
    memset(id, tag, sizeof id);
    ms.id = id;
    ms.segment_bytes = seg_bytes;
    ms.retain_segments = retain_segments;
    ms.sync = sync;
    ms.exclusive = exclusive;
    dls_medium *m;
    dls_where w = {0};
    int rc = dls_medium_create(&m, DLS_MEDIUM_SEGMENTED, path, &ms, &w);
    if (rc)
        fprintf(stderr, "create %s: %s (%s)\n", path, dls_strerror(rc), w.reason ? w.reason : "");
    assert_int_equal(rc, 0);
    return m;
}

/* The segment bases of a segmented directory, ascending; the count. */
static size_t seg_bases(const char *path, uint64_t *out, size_t cap)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -E '^[0-9]{20}\\.seg$' | sort", path);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    size_t n = 0;
    unsigned long long b;
    while (fscanf(f, "%20llu.seg\n", &b) == 1) {
        if (n < cap)
            out[n] = b;
        n++;
    }
    pclose(f);
    return n;
}

/* Bytes of every file in a directory (a segmented journal on disk). */
static uint64_t dir_bytes(const char *path)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "find '%s' -maxdepth 1 -type f -printf '%%s\\n'", path);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    uint64_t sum = 0;
    unsigned long long b;
    while (fscanf(f, "%llu\n", &b) == 1)
        sum += b;
    pclose(f);
    return sum;
}

static void append_n(dls_medium *m, unsigned n, unsigned start)
{
    for (unsigned i = 0; i < n; i++) {
        uint8_t rec[64];
        int len = snprintf((char *)rec + 1, sizeof rec - 1, "record-%06u", start + i);
        rec[0] = (uint8_t)(0xa0 | len); /* a msgpack fixstr: any payload will do */
        assert_int_equal(dls_medium_append(m, rec, (size_t)len + 1, NULL, NULL), 0);
    }
}

/* stream-format.md (segmented: a cursor before the oldest retained segment
 * answers gap; rev 4: a segment missing between two retained ones is
 * corruption, issue 12 item 1); issue 17 item 3: dls_medium_trim deletes
 * whole segments before a position, oldest first, never the newest, and
 * readers see it as eviction at the front — a gap, never a hole; other
 * kinds answer DLS_ERR_RETENTION; dls_medium_evicts tells a medium that
 * drops records on its own from one only its owner trims. */
static void test_trim_segments_front_is_gap(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    dls_medium *m = seg_medium(dir, "seg", 0x31, 256, 0, DLS_SYNC_NONE, false);
    char path[400];
    snprintf(path, sizeof path, "%s/seg", dir);
    append_n(m, 100, 0);
    uint64_t b[64];
    size_t n = seg_bases(path, b, 64);
    assert_true(n >= 6 && n <= 64);
    /* a reader inside the first segment, and one resumed there */
    dls_cursor *c0, *cr;
    dls_record r;
    assert_int_equal(dls_cursor_new(&c0, m, 0), 0);
    assert_int_equal(dls_cursor_next(c0, &r, NULL), DLS_NEXT_OK);
    assert_int_equal(dls_cursor_resume(&cr, m, 1), 0);
    /* trim before the third segment's base + 1: the first two go (their
     * successors' bases are at most that), the third holds the position */
    uint64_t oldest = 0;
    dls_where w = {0};
    assert_int_equal(dls_medium_trim(m, b[2] + 1, &oldest, &w), 0);
    assert_int_equal(oldest, b[2]);
    uint64_t b2[64];
    assert_int_equal(seg_bases(path, b2, 64), n - 2);
    assert_int_equal(b2[0], b[2]);
    /* trimming before a position inside the oldest segment deletes nothing */
    assert_int_equal(dls_medium_trim(m, b[2] + 1, &oldest, NULL), 0);
    assert_int_equal(seg_bases(path, b2, 64), n - 2);
    /* readers: a gap to the oldest retained, then every record in order */
    /* (a reader inside a deleted segment may finish what its descriptor
     * still reads; then the gap) */
    uint64_t expect = 1;
    dls_next a;
    while ((a = dls_cursor_next(c0, &r, NULL)) == DLS_NEXT_OK)
        assert_int_equal(r.position, expect++);
    assert_int_equal(a, DLS_NEXT_GAP);
    assert_int_equal(r.gap_from, expect);
    assert_true(expect <= b[1]);
    assert_int_equal(r.position, b[2]);
    expect = b[2];
    while ((a = dls_cursor_next(c0, &r, NULL)) == DLS_NEXT_OK)
        assert_int_equal(r.position, expect++);
    assert_int_equal(a, DLS_NEXT_BLOCKED);
    assert_int_equal(expect, 100);
    assert_int_equal(dls_cursor_next(cr, &r, NULL), DLS_NEXT_GAP); /* evicted, not shrunk */
    assert_int_equal(r.position, b[2]);
    dls_cursor_del(cr);
    dls_cursor *cn;
    assert_int_equal(dls_cursor_new(&cn, m, 0), 0);
    assert_int_equal(dls_cursor_next(cn, &r, NULL), DLS_NEXT_GAP);
    dls_cursor_del(cn);
    /* the newest segment is never deleted, whatever the position */
    assert_int_equal(dls_medium_trim(m, UINT64_MAX, &oldest, NULL), 0);
    assert_int_equal(seg_bases(path, b2, 64), 1);
    assert_int_equal(oldest, b[n - 1]);
    /* appends go on; a new writer opens the trimmed medium (no hole) */
    append_n(m, 10, 100);
    dls_cursor_del(c0);
    dls_medium_del(m);
    assert_int_equal(dls_medium_open(&m, path, DLS_OPEN_APPEND, NULL, NULL), 0);
    assert_false(dls_medium_evicts(m)); /* no bound: only its owner trims it */
    append_n(m, 40, 110);
    /* a segment deleted in the middle is still a hole: corruption */
    n = seg_bases(path, b, 64);
    assert_true(n >= 3);
    char mid[500];
    snprintf(mid, sizeof mid, "%s/%020llu.seg", path, (unsigned long long)b[1]);
    assert_int_equal(unlink(mid), 0);
    assert_int_equal(dls_cursor_new(&c0, m, b[0]), 0);
    while ((a = dls_cursor_next(c0, &r, NULL)) == DLS_NEXT_OK)
        ;
    assert_int_equal(a, DLS_NEXT_ERROR);
    dls_cursor_del(c0);
    dls_medium_del(m);
    /* a reader cannot trim; other kinds cannot */
    assert_int_equal(dls_medium_open(&m, path, DLS_OPEN_READ, NULL, NULL), 0);
    assert_int_equal(dls_medium_trim(m, 5, NULL, NULL), DLS_ERR_STATE);
    assert_true(dls_medium_evicts(m)); /* a reader does not know the writer's bounds */
    dls_medium_del(m);
    dls_medium *bounded = seg_medium(dir, "bounded", 0x32, 256, 3, DLS_SYNC_NONE, false);
    assert_true(dls_medium_evicts(bounded));
    dls_medium_del(bounded);
    dls_medium *ring = ring_with_id(0x33, 8);
    assert_true(dls_medium_evicts(ring));
    memset(&w, 0, sizeof w);
    assert_int_equal(dls_medium_trim(ring, 1, NULL, &w), DLS_ERR_RETENTION);
    assert_non_null(w.reason);
    dls_medium_del(ring);
    snprintf(path, sizeof path, "%s/plain.dls", dir);
    dls_medium *file;
    assert_int_equal(dls_medium_create(&file, DLS_MEDIUM_FILE, path, NULL, NULL), 0);
    assert_false(dls_medium_evicts(file));
    assert_int_equal(dls_medium_trim(file, 1, NULL, NULL), DLS_ERR_RETENTION);
    dls_medium_del(file);
    rm_rf(dir);
    free(dir);
}

/* A harness whose journal is a segmented medium without a bound (no
 * wrapper: the judge trims it itself). */
static void h_init_segmented(harness *h, size_t nmedia, size_t nholders, uint64_t seg_bytes)
{
    h_init(h, nmedia, nholders);
    dls_medium_del(h->journal); /* the file journal h_init made */
    h->user = NULL;
    snprintf(h->journal_path, sizeof h->journal_path, "%s/journal.seg", h->dir);
    h->journal = seg_medium(h->dir, "journal.seg", 0x4b, seg_bytes, 0, DLS_SYNC_DATA, true);
    h->s.journal = h->journal;
    h->s.journal_lock_path = NULL; /* the judge flocks the directory itself */
    snprintf(h->ckpt_dir, sizeof h->ckpt_dir, "%s/journal.seg.ckpt", h->dir);
}

static void h_restart_seg(harness *h, bool from_checkpoint)
{
    h_close_judge(h);
    h->s.checkpoint_dir = from_checkpoint ? h->ckpt_dir : NULL;
    h_open(h);
}

/* The least journal_next among the checkpoints in h's folder. */
static uint64_t least_next(harness *h, size_t *count)
{
    jvec list = {0};
    assert_int_equal(jc_list_dir(h->ckpt_dir, &list), 0);
    uint64_t least = UINT64_MAX;
    for (size_t i = 0; i < list.n; i++) {
        char p[400];
        ckpt_path(h, JVEC_AT(list, uint64_t, i), p, sizeof p);
        dls_medium *m;
        assert_int_equal(dls_medium_open(&m, p, DLS_OPEN_READ, NULL, NULL), 0);
        dls_cursor *c;
        assert_int_equal(dls_cursor_new(&c, m, 0), 0);
        dls_record rec;
        dls_ckpt_rec r;
        assert_int_equal(dls_cursor_next(c, &rec, NULL), DLS_NEXT_OK);
        assert_int_equal(dls_ckpt_decode(rec.p, rec.n, &r, NULL), 0);
        if (r.journal_next < least)
            least = r.journal_next;
        dls_cursor_del(c);
        dls_medium_del(m);
    }
    *count = list.n;
    jvec_free(&list);
    return least;
}

/* judge.md rev 4, Assembly ("an evict-oldest journal is refused, unless it
 * evicts only what checkpoints cover") and Checkpoints, Retention; issue 17
 * item 3: a segmented journal without a bound is accepted (a bounded one
 * refused), dls_judge_trim_journal deletes its whole segments before the
 * least journal_next of the kept committed checkpoints and nothing while
 * there is none; restart then loads a checkpoint (the newest, or the older
 * kept one when the newest is gone) and full replay is refused. */
static void test_judge_trims_segmented_journal(void **state)
{
    (void)state;
    harness h;
    h_init_segmented(&h, 2, NHOLD, 2048);
    /* a bounded segmented journal would drop records on its own */
    dls_medium *bounded = seg_medium(h.dir, "bounded.seg", 0x4c, 2048, 4, DLS_SYNC_DATA, true);
    dls_judge_settings keep = h.s;
    h.s.journal = bounded;
    dls_where w = {0};
    assert_int_equal(h_try_open(&h, &w), DLS_ERR_RETENTION);
    h.s = keep;
    dls_medium_del(bounded);
    h_open(&h);
    rng = 0x7e57;
    h_tick(&h, 1000 * MS);
    h_pass(&h);
    /* no committed checkpoint yet: nothing trimmed */
    uint64_t before = 1, oldest = 1;
    assert_int_equal(dls_judge_trim_journal(h.j, h.ckpt_dir, &before, &oldest, NULL), 0);
    assert_int_equal(before, 0);
    uint64_t first_base[4];
    assert_int_equal(seg_bases(h.journal_path, first_base, 4) >= 1, 1);
    assert_int_equal(first_base[0], 0);
    dls_judge_checkpoint_info info;
    uint64_t trims = 0;
    for (int round = 0; round < 12; round++) {
        for (int i = 0; i < 8; i++)
            step(&h);
        checkpoint(&h, &info);
        assert_int_equal(dls_judge_prune_checkpoints(h.j, h.ckpt_dir, 2, NULL, NULL), 0);
        size_t kept;
        uint64_t least = least_next(&h, &kept);
        memset(&w, 0, sizeof w);
        int rc = dls_judge_trim_journal(h.j, h.ckpt_dir, &before, &oldest, &w);
        if (rc)
            fprintf(stderr, "trim: %s (%s)\n", dls_strerror(rc), w.reason ? w.reason : "");
        assert_int_equal(rc, 0);
        if (kept < 2) { /* one checkpoint and no fallback: nothing trimmed */
            assert_int_equal(before, 0);
            continue;
        }
        assert_int_equal(before, least);
        assert_true(oldest <= least); /* the segment holding it stays */
        uint64_t bases[256];
        size_t n = seg_bases(h.journal_path, bases, 256);
        assert_int_equal(bases[0], oldest);
        /* whole segments: the next one starts after the position */
        assert_true(n == 1 || bases[1] > least);
        trims += oldest > 0;
    }
    assert_true(trims > 0);
    uint64_t highest = dls_judge_highest_lease(h.j), last = dls_judge_last_pass(h.j);
    size_t live = dls_judge_live(h.j);
    /* restart: from the newest checkpoint */
    h_restart_seg(&h, true);
    snap a, b;
    take(&h, &a);
    assert_int_equal(a.highest, highest);
    assert_int_equal(a.last_pass, last);
    assert_int_equal(a.live, live);
    /* full replay is refused: the journal is not retained from 0 */
    h_close_judge(&h);
    h.s.checkpoint_dir = NULL;
    memset(&w, 0, sizeof w);
    assert_int_equal(h_try_open(&h, &w), DLS_ERR_JOURNAL);
    /* the newest checkpoint gone: the older kept one still finds its
     * journal (the trim kept what follows it) */
    jvec list = {0};
    assert_int_equal(jc_list_dir(h.ckpt_dir, &list), 0);
    assert_int_equal(list.n, 2);
    char p[400];
    ckpt_path(&h, JVEC_AT(list, uint64_t, 0), p, sizeof p);
    assert_int_equal(unlink(p), 0);
    jvec_free(&list);
    h_restart_seg(&h, true);
    take(&h, &b);
    same(&a, &b);
    snap_free(&b);
    snap_free(&a);
    /* a file journal cannot be trimmed */
    harness f;
    h_init(&f, 1, 2);
    h_open(&f);
    assert_int_equal(dls_judge_trim_journal(f.j, f.ckpt_dir, NULL, NULL, NULL),
                     DLS_ERR_RETENTION);
    h_fini(&f);
    h_fini(&h);
}

/* judge.md rev 4, Checkpoints, Retention ("a lease-fact medium may evict
 * records before that checkpoint's drained positions without any lease
 * becoming unknown at restart"); issue 17 item 3: segmented lease-fact
 * media bounded to a few segments evict what the judge drained long ago;
 * a restart from the checkpoint reads them from its drained positions —
 * nothing lost (the replay's any_lost stays false), no lease unknown after
 * the first pass, none reclaimed — while a full replay of the same journal
 * meets the eviction (the contrast: the test can fail). */
static void test_restart_segmented_media_evicted(void **state)
{
    (void)state;
    harness h;
    h_init(&h, 2, NHOLD);
    for (size_t i = 0; i < 2; i++) {
        dls_resolver_del(h.res[i]);
        dls_medium_del(h.media[i]);
        char name[32];
        snprintf(name, sizeof name, "facts-%zu", i);
        h.media[i] = seg_medium(h.dir, name, (uint8_t)(0x10 + i), 1024, 3, DLS_SYNC_NONE, false);
        assert_int_equal(dls_resolver_new_signed(&h.res[i], dls_medium_id(h.media[i]), h.kr), 0);
        h.jm[i] = (dls_judge_medium){h.media[i], h.res[i]};
    }
    h_open(&h);
    rng = 0x3e3e;
    h_tick(&h, 1000 * MS);
    h_pass(&h);
    for (int i = 0; i < 60; i++)
        step(&h);
    dls_judge_checkpoint_info info;
    checkpoint(&h, &info);
    for (int i = 0; i < 3; i++)
        step(&h);
    checkpoint(&h, &info);
    assert_true(dls_judge_live(h.j) > 0);
    /* both media evicted records the judge drained: their oldest segment
     * starts above 0 (and below the checkpoints' drained positions) */
    for (size_t i = 0; i < 2; i++) {
        char path[400];
        snprintf(path, sizeof path, "%s/facts-%zu", h.dir, i);
        uint64_t b[8];
        assert_true(seg_bases(path, b, 8) <= 3);
        assert_true(b[0] > 0);
    }
    size_t calls = h.ncalls;
    restart(&h, true);
    for (size_t i = 0; i < 2; i++)
        assert_false(h.j->media[i].lost);
    step(&h);
    uint64_t top = dls_judge_highest_lease(h.j);
    size_t live = 0, known = 0;
    for (uint64_t id = 1; id <= top; id++) {
        dls_judge_lease_info li;
        if (dls_judge_lease(h.j, id, &li) == 0) {
            live++;
            known += li.evidence == DLS_EVIDENCE_KNOWN;
        }
    }
    assert_true(live > 0);
    assert_int_equal(known, live);
    for (size_t k = calls; k < h.ncalls; k++)
        assert_int_not_equal(h.calls[k].cause, DLS_CAUSE_SILENCE);
    /* the contrast: full replay of the whole journal meets the eviction */
    restart(&h, false);
    assert_true(h.j->media[0].lost || h.j->media[1].lost);
    h_fini(&h);
}

/* docs/config.md journal_segment_bytes, docs/checkpoints.md Retention (the
 * CLI judge): `daolease judge --create` makes a segmented journal, and
 * after each checkpoint and prune it trims it — the oldest segment left
 * is no longer the first — while a holder renews through it; a restart
 * from the checkpoints then runs. */
static void test_cli_trims_segmented_journal(void **state)
{
    (void)state;
    const char *bin = getenv("DAOLEASE_BIN");
    if (!bin)
        skip();
    char *d = make_tmpdir();
    assert_int_equal(sh("cd %s && for p in arbiter a1; do %s keygen $p >> keyring; done && "
                        "%s stream create a1.dls > /dev/null", d, bin, bin), 0);
    assert_int_equal(
        sh("cd %s && printf '%%s' '{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", "
           "\"keyring\": \"keyring\", \"journal\": \"journal.seg\", \"media\": [\"a1.dls\"], "
           "\"duration\": {\"ms\": 600}, \"tolerance\": {\"ms\": 250}, "
           "\"cadence\": {\"ms\": 100}, \"create_journal\": true, "
           "\"journal_segment_bytes\": 4096, \"checkpoint_every\": {\"passes\": 2}, "
           "\"keep_checkpoints\": 2}' > judge.json && "
           "printf '%%s' '{\"party\": \"a1\", \"key\": \"a1.secret\", \"keyring\": \"keyring\", "
           "\"grantor\": \"arbiter\", \"journal\": \"journal.seg\", \"medium\": \"a1.dls\", "
           "\"duration\": {\"ms\": 600}}' > run.json", d), 0);
    assert_int_equal(sh("cd %s && { %s judge --config judge.json --passes 140 > j1.out 2> j1.err & "
                        "echo $! > j1.pid; } && sleep 0.5 && %s run --config run.json --subject s1 "
                        "-- sleep 4 > run.out 2>&1; "
                        "while kill -0 $(cat j1.pid) 2>/dev/null; do sleep 0.1; done",
                        d, bin, bin), 0);
    /* a segmented journal, trimmed: its first segment is gone */
    assert_int_equal(sh("cd %s && test -f journal.seg/medium.id && "
                        "! test -e journal.seg/00000000000000000000.seg && "
                        "test $(ls journal.dls.ckpt journal.seg.ckpt 2>/dev/null | "
                        "grep -c '\\.dls$') -eq 2 && ! grep -q trimming j1.err", d), 0);
    /* a restart from the checkpoints runs (full replay would be refused) */
    assert_int_equal(sh("cd %s && %s judge --config judge.json --passes 5 > j2.out 2> j2.err", d,
                        bin), 0);
    rm_rf(d);
    free(d);
}

/* judge.md rev 4, Checkpoints, Retention ("the oldest committed checkpoint
 * it keeps"); issue 17 item 3: a checkpoint file left uncommitted (a crash
 * between its rename and its commit record) does not count toward `keep`:
 * dls_judge_prune_checkpoints keeps the newest two committed ones and
 * deletes it, where counting files (dls_checkpoint_prune) would keep it and
 * delete the older committed one, leaving one usable checkpoint. */
static void test_prune_keeps_committed_only(void **state)
{
    (void)state;
    harness h;
    dls_judge_checkpoint_info a, b, c, d;
    h_init(&h, 2, NHOLD);
    h_open(&h);
    rng = 0x9191;
    h_tick(&h, 1000 * MS);
    h_pass(&h);
    for (int i = 0; i < 10; i++)
        step(&h);
    checkpoint(&h, &a);
    for (int i = 0; i < 10; i++)
        step(&h);
    checkpoint(&h, &b);
    for (int i = 0; i < 10; i++)
        step(&h);
    struct stat st;
    assert_int_equal(stat(h.journal_path, &st), 0);
    checkpoint(&h, &c);
    h_close_judge(&h);
    assert_int_equal(truncate(h.journal_path, st.st_size), 0); /* c's commit record gone */
    reopen_journal(&h);
    restart(&h, true); /* from b */
    assert_int_equal(JW(&h)->min_from, b.journal_next);
    for (int i = 0; i < 10; i++)
        step(&h);
    checkpoint(&h, &d);
    assert_true(a.pass < b.pass && b.pass < c.pass && c.pass < d.pass);
    size_t deleted = 0;
    dls_where w = {0};
    assert_int_equal(dls_judge_prune_checkpoints(h.j, h.ckpt_dir, 2, &deleted, &w), 0);
    assert_int_equal(deleted, 2);
    char p[512];
    uint64_t gone[2] = {a.pass, c.pass}, kept[2] = {b.pass, d.pass};
    for (int i = 0; i < 2; i++) {
        ckpt_path(&h, gone[i], p, sizeof p);
        assert_int_not_equal(access(p, F_OK), 0);
        ckpt_path(&h, kept[i], p, sizeof p);
        assert_int_equal(access(p, F_OK), 0);
    }
    /* both kept ones restart: d, and b with d gone */
    expect_restart_from(&h, d.journal_next);
    ckpt_path(&h, d.pass, p, sizeof p);
    assert_int_equal(unlink(p), 0);
    expect_restart_from(&h, b.journal_next);
    assert_int_equal(dls_judge_prune_checkpoints(h.j, h.ckpt_dir, 1, NULL, NULL),
                     DLS_ERR_CONFIG);
    h_fini(&h);
}

/* ---- the soak: 10^6 renewals in scripts/soak_checkpoint.sh, fewer here ---------------------- */

/* One judge with checkpoints, a trimmed segmented journal and restarts at
 * random points, beside an uninterrupted reference judge (a file journal,
 * never restarted) reading the same media and ticks. Holders own one
 * segmented lease-fact medium each (bounded: they evict what was drained
 * long ago) and renew every live lease every step. */
typedef struct soak {
    char *dir;
    char jpath[300], ckdir[320], refpath[300];
    dls_secret *grantor;
    dls_medium *journal, *refj, *tick, *media[2];
    dls_resolver *tickr, *res[2];
    dls_judge_tick_source ts;
    dls_judge_medium jm[2];
    dls_judge_settings s, rs;
    dls_judge *j, *ref;
    uint64_t now;
    uint64_t pseq[2];
    uint64_t *rseq;         /* per lease id: the last renewal seq acknowledged by the medium */
    uint8_t *rmed;          /* per lease id: its medium + 1 (0: not ours or gone) */
    uint64_t cap;
    uint64_t silence;       /* silence reclaims (of either judge) */
    uint64_t reclaims;
    uint64_t seg_bytes;
} soak;

static int soak_reclaim(void *u, dls_bytes subject, uint64_t lease, dls_cause cause, bool commit)
{
    soak *k = u;
    (void)subject, (void)lease, (void)commit;
    k->reclaims++;
    k->silence += cause == DLS_CAUSE_SILENCE;
    return DLS_RECLAIM_DONE;
}

static void soak_open_journal(soak *k)
{
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.exclusive = true;
    ms.sync = DLS_SYNC_DATA;
    dls_where w = {0};
    int rc = dls_medium_open(&k->journal, k->jpath, DLS_OPEN_APPEND, &ms, &w);
    if (rc)
        fprintf(stderr, "journal: %s (%s)\n", dls_strerror(rc), w.reason ? w.reason : "");
    assert_int_equal(rc, 0);
    k->s.journal = k->journal;
}

static void soak_new(soak *k, dls_judge **out, dls_judge_settings *s)
{
    dls_judge_callbacks cb = {.reclaim = soak_reclaim};
    dls_where w = {0};
    int rc = dls_judge_new(out, s, &cb, k, &w);
    if (rc)
        fprintf(stderr, "dls_judge_new: %s (%s)\n", dls_strerror(rc), w.reason ? w.reason : "");
    assert_int_equal(rc, 0);
}

static void soak_init(soak *k, uint64_t seg_bytes, uint64_t cap)
{
    memset(k, 0, sizeof *k);
    /* DLS_SOAK_DIR (the script: a disk), else /dev/shm when there is one:
     * the suite's soak is about retention, not fsync latency */
    const char *base = getenv("DLS_SOAK_DIR");
    struct stat st;
    if (!base || !*base)
        base = stat("/dev/shm", &st) == 0 && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    size_t bl = strlen(base) + 32;
    k->dir = malloc(bl);
    assert_non_null(k->dir);
    snprintf(k->dir, bl, "%s/dls-soak-XXXXXX", base);
    assert_non_null(mkdtemp(k->dir));
    k->seg_bytes = seg_bytes;
    snprintf(k->jpath, sizeof k->jpath, "%s/journal.seg", k->dir);
    snprintf(k->ckdir, sizeof k->ckdir, "%s/journal.seg.ckpt", k->dir);
    snprintf(k->refpath, sizeof k->refpath, "%s/reference.dls", k->dir);
    uint8_t seed[32];
    memset(seed, 7, sizeof seed);
    assert_int_equal(dls_secret_from_seed(&k->grantor, "arbiter", DLS_KEY_ED25519, seed), 0);
    dls_medium_del(seg_medium(k->dir, "journal.seg", 0x4d, seg_bytes, 0, DLS_SYNC_DATA, false));
    soak_open_journal(k);
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    uint8_t rid[16];
    memset(rid, 0x4e, sizeof rid);
    ms.id = rid;
    assert_int_equal(dls_medium_create(&k->refj, DLS_MEDIUM_FILE, k->refpath, &ms, NULL), 0);
    k->tick = ring_with_id(0xee, 1 << 16);
    assert_int_equal(dls_resolver_new_medium(&k->tickr, dls_medium_id(k->tick), "ticker", NULL),
                     0);
    for (size_t i = 0; i < 2; i++) {
        char name[32], party[16];
        snprintf(name, sizeof name, "facts-%zu", i);
        snprintf(party, sizeof party, "holder-%zu", i);
        /* 64 KiB segments, 6 kept: hundreds of steps' renewals in the suite */
        k->media[i] = seg_medium(k->dir, name, (uint8_t)(0x20 + i), 64 << 10, 6, DLS_SYNC_NONE,
                                 false);
        assert_int_equal(dls_resolver_new_medium(&k->res[i], dls_medium_id(k->media[i]), party,
                                                 NULL),
                         0);
        k->jm[i] = (dls_judge_medium){k->media[i], k->res[i]};
    }
    k->ts = (dls_judge_tick_source){k->tick, k->tickr, "ticker", "soak-basis", 0};
    dls_judge_settings_default(&k->s);
    k->s.grantor = k->grantor;
    k->s.journal = k->journal;
    k->s.ticks = &k->ts;
    k->s.nticks = 1;
    k->s.media = k->jm;
    k->s.nmedia = 2;
    k->s.tolerance_ns = 250 * MS;
    k->s.cadence_ns = 1000 * MS;
    k->s.drain_budget = 1u << 20;
    assert_int_equal(dls_duration_make(&k->s.default_duration, DLS_UNIT_S, 3), 0);
    k->s.checkpoint_dir = k->ckdir;
    k->rs = k->s;
    k->rs.journal = k->refj;
    k->rs.checkpoint_dir = NULL;
    k->cap = cap;
    k->rseq = calloc(cap, sizeof *k->rseq);
    k->rmed = calloc(cap, 1);
    assert_non_null(k->rseq);
    assert_non_null(k->rmed);
    soak_new(k, &k->j, &k->s);
    soak_new(k, &k->ref, &k->rs);
}

static void soak_fini(soak *k)
{
    dls_judge_del(k->j);
    dls_judge_del(k->ref);
    dls_medium_del(k->journal);
    dls_medium_del(k->refj);
    for (size_t i = 0; i < 2; i++) {
        dls_resolver_del(k->res[i]);
        dls_medium_del(k->media[i]);
    }
    dls_resolver_del(k->tickr);
    dls_medium_del(k->tick);
    dls_secret_del(k->grantor);
    free(k->rseq);
    free(k->rmed);
    rm_rf(k->dir);
    free(k->dir);
}

static void soak_fact(soak *k, size_t mi, const dls_fact *f)
{
    append_fact(k->media[mi], f, NULL); /* bare: the medium's resolver names the holder */
}

static void soak_propose(soak *k, size_t mi, uint64_t subject)
{
    char subj[32], prop[32];
    snprintf(subj, sizeof subj, "subject-%llu", (unsigned long long)subject);
    snprintf(prop, sizeof prop, "p-%llu", (unsigned long long)subject);
    val s = str_val(subj), p = str_val(prop);
    dls_fact f;
    dls_fact_proposal(&f, (dls_bytes){p.b, p.n}, (dls_bytes){s.b, s.n}, ++k->pseq[mi]);
    soak_fact(k, mi, &f);
}

/* Both judges pass at the same now; ledgers then agree (checked by the
 * caller where comparable). */
static void soak_pass(soak *k)
{
    dls_fact f;
    dls_duration d;
    k->now += 400 * MS;
    assert_int_equal(dls_duration_make(&d, DLS_UNIT_NS, k->now), 0);
    dls_fact_tick(&f, d);
    append_fact(k->tick, &f, NULL);
    dls_judge_pass_result r;
    assert_int_equal(dls_judge_pass(k->j, &r), 0);
    assert_int_equal(dls_judge_pass(k->ref, &r), 0);
}

/* A restart of the judge with checkpoints (the journal reopened too, as a
 * new process would). */
static void soak_restart(soak *k)
{
    dls_judge_del(k->j);
    k->j = NULL;
    dls_medium_del(k->journal);
    soak_open_journal(k);
    soak_new(k, &k->j, &k->s);
}

/* judge.md, Restart and Checkpoints: every acknowledged renewal counted
 * (last seq), no lease lost, and the ledger equal to the reference's. */
static void soak_check(soak *k)
{
    harness a, b; /* take() reads only .j */
    a.j = k->j;
    b.j = k->ref;
    snap x, y;
    take(&a, &x);
    take(&b, &y);
    same(&x, &y);
    for (uint64_t id = 1; id < k->cap && id <= x.highest; id++) {
        if (!k->rmed[id])
            continue;
        assert_true(x.l[id].present);
        assert_int_equal(x.l[id].i.last_seq, k->rseq[id]);
    }
    snap_free(&x);
    snap_free(&y);
}

/* Registers the leases granted since `from` (ids above it). */
static void soak_learn(soak *k, uint64_t from)
{
    uint64_t top = dls_judge_highest_lease(k->j);
    assert_true(top < k->cap);
    for (uint64_t id = from + 1; id <= top; id++) {
        dls_judge_lease_info li;
        assert_int_equal(dls_judge_lease(k->j, id, &li), 0);
        assert_true(li.medium < 2);
        k->rmed[id] = (uint8_t)(li.medium + 1);
    }
}

static void soak_audit(soak *k, uint64_t *start, uint64_t *not_audited_to);

typedef struct soak_figures {
    uint64_t renewals, steps, restarts, checkpoints, trims;
    uint64_t journal_max, journal_written, bound, b_step, b_first;
    uint64_t steady_max, steady_bound; /* once the first pass's segments are trimmed */
    uint64_t refused_full_replay;
} soak_figures;

/* The soak (issue 17 item 3): `leases` live leases renewed every step for
 * `steps` steps, a checkpoint every `every` steps (prune keep 2, then
 * trim), restarts at random points (`restart_in`: one step in that many,
 * seeded). */
static void soak_run(uint64_t leases, uint64_t steps, uint64_t every, uint64_t seg_bytes,
                     uint64_t restart_in, uint64_t seed, soak_figures *fig)
{
    soak k;
    memset(fig, 0, sizeof *fig);
    soak_init(&k, seg_bytes, leases + steps + 16);
    rng = seed ? seed : 1;
    fprintf(stderr, "soak: seed %llu, %llu leases, %llu steps, checkpoint every %llu, "
                    "segments %llu bytes\n",
            (unsigned long long)seed, (unsigned long long)leases, (unsigned long long)steps,
            (unsigned long long)every, (unsigned long long)seg_bytes);
    for (uint64_t i = 0; i < leases; i++)
        soak_propose(&k, i % 2, i);
    uint64_t empty = dir_bytes(k.jpath);
    soak_pass(&k);
    fig->b_first = dir_bytes(k.jpath) - empty; /* the initial grants, one burst */
    uint64_t bases[1024];
    size_t nb = seg_bases(k.jpath, bases, 1024);
    assert_true(nb >= 1 && nb <= 1024);
    uint64_t burst_base = bases[nb - 1]; /* the burst is gone once this segment is */
    bool steady = false;
    soak_learn(&k, 0);
    assert_int_equal(dls_judge_live(k.j), leases);
    uint64_t next_subject = leases, since = 0;
    const size_t keep = 2;
    uint64_t size_before = dir_bytes(k.jpath);
    for (uint64_t step = 0; step < steps; step++) {
        /* restarts at random points of the step (seeded) */
        uint64_t where = rnd() % restart_in < 1 ? rnd() % 4 : 4;
        for (uint64_t id = 1; id < k.cap; id++) {
            if (!k.rmed[id])
                continue;
            dls_fact f;
            dls_fact_renewal(&f, id, ++k.rseq[id]);
            soak_fact(&k, k.rmed[id] - 1u, &f);
            fig->renewals++;
        }
        /* churn: one release, one new subject (grants across checkpoints) */
        uint64_t top = dls_judge_highest_lease(k.j);
        if (step % 3 == 0) {
            uint64_t victim = 1 + rnd() % top;
            if (k.rmed[victim]) {
                dls_fact f;
                dls_fact_release(&f, victim, false);
                soak_fact(&k, k.rmed[victim] - 1u, &f);
                k.rmed[victim] = 0;
                soak_propose(&k, next_subject % 2, next_subject);
                next_subject++;
            }
        }
        if (where == 0) { /* renewals written while the judge is down */
            soak_restart(&k);
            fig->restarts++;
        }
        uint64_t s0 = dir_bytes(k.jpath);
        soak_pass(&k);
        soak_learn(&k, top);
        soak_check(&k); /* after a pass: a recovered lease is unknown until one */
        if (where == 1) { /* between a pass and a checkpoint */
            soak_restart(&k);
            fig->restarts++;
        }
        dls_judge_checkpoint_info info;
        dls_where w = {0};
        int rc = 0;
        if (++since >= every &&
            (rc = dls_judge_checkpoint(k.j, k.ckdir, &info, &w)) == DLS_ERR_STATE)
            since = every - 1; /* restarted, no pass since: at the next step (as the CLI) */
        if (since >= every) {
            since = 0;
            if (rc)
                fprintf(stderr, "checkpoint: %s (%s)\n", dls_strerror(rc),
                        w.reason ? w.reason : "");
            assert_int_equal(rc, 0);
            fig->checkpoints += info.records > 0;
            if (where == 2) { /* checkpoint written, not yet pruned nor trimmed */
                soak_restart(&k);
                fig->restarts++;
            }
            uint64_t s1 = dir_bytes(k.jpath);
            fig->journal_written += s1 > s0 ? s1 - s0 : 0;
            if (s1 - s0 > fig->b_step && s1 > s0)
                fig->b_step = s1 - s0;
            if (s1 > fig->journal_max)
                fig->journal_max = s1;
            if (steady && s1 > fig->steady_max)
                fig->steady_max = s1;
            assert_int_equal(dls_judge_prune_checkpoints(k.j, k.ckdir, keep, NULL, NULL), 0);
            uint64_t before = 0, oldest = 0;
            rc = dls_judge_trim_journal(k.j, k.ckdir, &before, &oldest, &w);
            assert_int_equal(rc, 0);
            fig->trims += before > 0;
            steady |= oldest > burst_base;
            if (where == 3) { /* just after a trim */
                soak_restart(&k);
                fig->restarts++;
            }
            if (oldest > 0 && !fig->refused_full_replay) {
                /* judge.md rev 4, Checkpoints, Restart: full replay of a
                 * trimmed journal is refused (it would forget leases) */
                dls_judge_del(k.j);
                k.j = NULL;
                k.s.checkpoint_dir = NULL;
                dls_judge_callbacks cb = {.reclaim = soak_reclaim};
                dls_judge *bad = NULL;
                assert_int_equal(dls_judge_new(&bad, &k.s, &cb, &k, NULL), DLS_ERR_JOURNAL);
                assert_null(bad);
                k.s.checkpoint_dir = k.ckdir;
                soak_new(&k, &k.j, &k.s);
                fig->refused_full_replay = 1;
                fig->restarts++;
            }
            size_before = dir_bytes(k.jpath);
        } else {
            uint64_t s1 = dir_bytes(k.jpath);
            fig->journal_written += s1 > s0 ? s1 - s0 : 0;
            if (s1 > s0 && s1 - s0 > fig->b_step)
                fig->b_step = s1 - s0;
            if (s1 > fig->journal_max)
                fig->journal_max = s1;
            if (steady && s1 > fig->steady_max)
                fig->steady_max = s1;
        }
        fig->steps++;
    }
    (void)size_before;
    uint64_t top = dls_judge_highest_lease(k.j);
    soak_pass(&k); /* the last step may have ended with a restart */
    soak_learn(&k, top);
    soak_check(&k);
    /* no early reclaim: every reclaim answered a release */
    assert_int_equal(k.silence, 0);
    /* the bound (docs/checkpoints.md, Retention): the segment holding the
     * trim point (S) + the journal since the oldest kept checkpoint and
     * until the next trim — keep intervals of `every` steps and one step
     * more (a checkpoint postponed by a restart) of at most b_step bytes
     * each — + the first pass's burst of grants until a trim passes it + S
     * for segment headers and medium.id / medium.bounds */
    fig->steady_bound = 2 * seg_bytes + (keep * every + 1) * fig->b_step;
    fig->bound = fig->steady_bound + fig->b_first;
    fprintf(stderr,
            "soak: renewals %llu, steps %llu, restarts %llu, checkpoints %llu, trims %llu, "
            "journal bytes max %llu (bound %llu = 2*%llu + %llu + (%zu*%llu+1)*%llu), journal "
            "bytes written %llu\n",
            (unsigned long long)fig->renewals, (unsigned long long)fig->steps,
            (unsigned long long)fig->restarts, (unsigned long long)fig->checkpoints,
            (unsigned long long)fig->trims, (unsigned long long)fig->journal_max,
            (unsigned long long)fig->bound, (unsigned long long)seg_bytes,
            (unsigned long long)fig->b_first, keep,
            (unsigned long long)every, (unsigned long long)fig->b_step,
            (unsigned long long)fig->journal_written);
    fprintf(stderr, "soak: after the first pass's segments were trimmed: journal bytes max %llu "
                    "(bound %llu)\n",
            (unsigned long long)fig->steady_max, (unsigned long long)fig->steady_bound);
    assert_true(fig->journal_max <= fig->bound);
    assert_true(steady);
    assert_true(fig->steady_max <= fig->steady_bound);
    /* every checkpoint but the first (a trim waits for two committed, so a
     * restart has a fallback) was followed by a trim, restarted or not (the
     * trim reads the commits on the journal) */
    assert_int_equal(fig->trims + 1, fig->checkpoints);
    /* bounded, not merely small: the run wrote well past the steady bound */
    assert_true(fig->journal_written > 2 * fig->steady_bound);
    uint64_t start = 0, upto = 0;
    soak_audit(&k, &start, &upto);
    fprintf(stderr, "soak: audit clean from checkpoint %llu (journal before position %llu not "
                    "audited)\n",
            (unsigned long long)start, (unsigned long long)upto);
    soak_fini(&k);
}

/* judge.md rev 4, Checkpoints, Audit (issue 17 item 4): the trimmed
 * journal is audited from the oldest kept checkpoint whose commit it still
 * holds; the history before it is not audited (never a failure), and what
 * follows is clean. */
static void soak_audit(soak *k, uint64_t *start, uint64_t *not_audited_to)
{
    dls_medium *jr, *mr[2];
    assert_int_equal(dls_medium_open(&jr, k->jpath, DLS_OPEN_READ, NULL, NULL), 0);
    dls_audit_medium am[2];
    for (size_t i = 0; i < 2; i++) {
        char path[400];
        snprintf(path, sizeof path, "%s/facts-%zu", k->dir, i);
        assert_int_equal(dls_medium_open(&mr[i], path, DLS_OPEN_READ, NULL, NULL), 0);
        am[i] = (dls_audit_medium){mr[i], i ? "holder-1" : "holder-0"};
    }
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    assert_int_equal(dls_keyring_add(kr, (const uint8_t *)"arbiter", 7, DLS_KEY_ED25519,
                                     dls_secret_public(k->grantor)),
                     0);
    dls_audit_settings set;
    dls_audit_settings_default(&set);
    set.checkpoints = k->ckdir;
    set.keep_renewal_points = false;
    dls_audit *a = NULL;
    dls_where w = {0};
    int rc = dls_audit_run(&a, &set, jr, "arbiter", kr, am, 2, &w);
    if (rc)
        fprintf(stderr, "audit: %s (%s)\n", dls_strerror(rc), w.reason ? w.reason : "");
    assert_int_equal(rc, 0);
    const dls_audit_summary *s = dls_audit_summary_of(a);
    for (size_t i = 0; i < s->n_failure_details; i++)
        fprintf(stderr, "audit failure: %s\n", s->failure_details[i]);
    if (s->incomplete)
        fprintf(stderr, "audit incomplete at %llu: %s\n",
                (unsigned long long)s->incomplete_position, s->incomplete);
    assert_int_equal(dls_audit_exit_status(a), 0);
    assert_int_equal(s->unjustified_lapse + s->due_mismatch + s->double_grant + s->journal, 0);
    assert_int_equal(s->journal_missing_to, 0);
    assert_true(s->journal_first > 0);          /* trimmed */
    assert_true(s->start_checkpoint > 0);       /* so it started at a checkpoint */
    assert_true(s->not_audited_to > 0);
    assert_true(s->passes > 0);
    *start = s->start_checkpoint;
    *not_audited_to = s->not_audited_to;

    /* docs/audit.md, "Auditing only what is new": from the newest kept
     * checkpoint, the same verdicts, lapses and causes for every lease of
     * the range it audits as the audit of everything retained */
    set.from_checkpoint = DLS_AUDIT_NEWEST_CHECKPOINT;
    dls_audit *b = NULL;
    assert_int_equal(dls_audit_run(&b, &set, jr, "arbiter", kr, am, 2, &w), 0);
    const dls_audit_summary *bs = dls_audit_summary_of(b);
    assert_int_equal(dls_audit_exit_status(b), 0);
    assert_true(bs->start_checkpoint >= s->start_checkpoint);
    assert_int_equal(bs->last_pass, s->last_pass);
    for (size_t i = 0; i < dls_audit_lease_count(b); i++) {
        const dls_audit_lease *l = dls_audit_lease_at(b, i);
        const dls_audit_lease *f = NULL;
        for (size_t k2 = 0; k2 < dls_audit_lease_count(a) && !f; k2++)
            if (dls_audit_lease_at(a, k2)->lease == l->lease)
                f = dls_audit_lease_at(a, k2);
        assert_non_null(f);
        assert_int_equal(l->verdict, f->verdict);
        assert_int_equal(l->lapsed.pass, f->lapsed.pass);
        assert_int_equal(l->lapsed_cause, f->lapsed_cause);
    }
    dls_audit_del(b);
    dls_audit_del(a);
    dls_keyring_del(kr);
    dls_medium_del(mr[0]);
    dls_medium_del(mr[1]);
    dls_medium_del(jr);
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 10) : dflt;
}

/* Issue 17 item 3, the soak: renewals through a judge with checkpoints
 * every few passes and small journal segments — the journal's disk stays
 * under the stated bound, restarts at random (seeded) points lose nothing
 * (every acknowledged renewal counted, no silence reclaim, the ledger equal
 * to an uninterrupted reference judge's after every pass). The suite runs
 * 50 leases × 300 steps (15,000 renewals); scripts/soak_checkpoint.sh
 * runs 10^6 (DLS_SOAK_LEASES, DLS_SOAK_STEPS, DLS_SOAK_EVERY,
 * DLS_SOAK_SEGMENT, DLS_SOAK_RESTART_IN, DLS_SOAK_SEED). */
static void test_soak_retention(void **state)
{
    (void)state;
    soak_figures fig;
    soak_run(env_u64("DLS_SOAK_LEASES", 50), env_u64("DLS_SOAK_STEPS", 300),
             env_u64("DLS_SOAK_EVERY", 4), env_u64("DLS_SOAK_SEGMENT", 4096),
             env_u64("DLS_SOAK_RESTART_IN", 8), env_u64("DLS_SOAK_SEED", 20261201), &fig);
    assert_true(fig.restarts > 0);
}

/* judge.md rev 4, Checkpoints, Retention ("the oldest committed checkpoint
 * it keeps") and Restart; stream-format.md rev 4 (a segment missing between
 * the oldest and the newest is a hole: corruption); issue 17 item 3: a
 * prune (or trim) that cannot read the journal to its end does not know
 * which checkpoints are committed, so it deletes nothing — in particular
 * not the newest checkpoint, whose commit lies past the unreadable part and
 * which is then the only one a restart can replay from. */
static void test_prune_stops_at_unreadable_journal(void **state)
{
    (void)state;
    harness h;
    dls_judge_checkpoint_info a, b, c;
    h_init_segmented(&h, 2, NHOLD, 2048);
    h_open(&h);
    rng = 0x4011;
    h_tick(&h, 1000 * MS);
    h_pass(&h);
    for (int i = 0; i < 6; i++)
        step(&h);
    checkpoint(&h, &a);
    for (int i = 0; i < 6; i++)
        step(&h);
    checkpoint(&h, &b);
    for (int i = 0; i < 20; i++)
        step(&h);
    checkpoint(&h, &c);
    /* a hole: a whole segment after b's commit record and before c's
     * journal_next */
    uint64_t bases[512];
    size_t n = seg_bases(h.journal_path, bases, 512);
    size_t k = 1;
    while (k + 1 < n && bases[k] <= b.journal_next + 1)
        k++;
    assert_true(k + 1 < n && bases[k] > b.journal_next + 1 && bases[k + 1] <= c.journal_next);
    char p[512];
    snprintf(p, sizeof p, "%s/%020llu.seg", h.journal_path, (unsigned long long)bases[k]);
    assert_int_equal(unlink(p), 0);
    size_t deleted = 0;
    dls_where w = {0};
    assert_int_not_equal(dls_judge_prune_checkpoints(h.j, h.ckpt_dir, 2, &deleted, &w), 0);
    assert_non_null(w.reason);
    assert_int_equal(deleted, 0);
    uint64_t before = 1;
    assert_int_not_equal(dls_judge_trim_journal(h.j, h.ckpt_dir, &before, NULL, NULL), 0);
    assert_int_equal(before, 0);
    dls_judge_checkpoint_info all[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        ckpt_path(&h, all[i].pass, p, sizeof p);
        assert_int_equal(access(p, F_OK), 0);
    }
    /* the newest still restarts the judge (the hole lies before it) */
    uint64_t highest = dls_judge_highest_lease(h.j), last = dls_judge_last_pass(h.j);
    h_restart_seg(&h, true);
    assert_int_equal(dls_judge_highest_lease(h.j), highest);
    assert_int_equal(dls_judge_last_pass(h.j), last);
    h_fini(&h);
}

/* ---- prune and trim meet a checkpoint they cannot read -------------------------------------- */

/* judge/checkpoint_hooks.h: before the checkpoint file `target` (NULL: the
 * next one) is opened, RLIMIT_NOFILE's soft limit is lowered to the lowest
 * free descriptor, so that this open — and every later one until
 * emfile_restore — fails with EMFILE for real (the folder was listed
 * already, with a descriptor then free). */
typedef struct emfile_hook {
    char target[512];
    bool any;
    int fired;
    struct rlimit saved;
} emfile_hook;

static void emfile_before_open(void *user, const char *path)
{
    emfile_hook *e = user;
    if ((!e->any && strcmp(path, e->target) != 0) || e->fired++)
        return;
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &e->saved), 0);
    struct rlimit rl = e->saved;
    rl.rlim_cur = (rlim_t)fd;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

static void emfile_restore(emfile_hook *e)
{
    if (e->fired)
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &e->saved), 0);
    e->fired = 0;
}

static bool exists(const harness *h, uint64_t pass)
{
    char p[512];
    ckpt_path(h, pass, p, sizeof p);
    return access(p, F_OK) == 0;
}

/* Three committed checkpoints a < b < c on a segmented journal (2 KiB
 * segments: each covers several), the judge open. */
static void three_checkpoints(harness *h, uint64_t seed, dls_judge_checkpoint_info ck[3])
{
    h_init_segmented(h, 2, NHOLD, 2048);
    h_open(h);
    rng = seed;
    h_tick(h, 1000 * MS);
    h_pass(h);
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 8; i++)
            step(h);
        checkpoint(h, &ck[k]);
    }
    assert_true(ck[0].journal_next < ck[1].journal_next &&
                ck[1].journal_next < ck[2].journal_next);
}

/* judge.md rev 4, Checkpoints, Retention ("the oldest committed checkpoint
 * it keeps") and Commit (a committed checkpoint exists until proven
 * otherwise); docs/checkpoints.md, "A checkpoint that cannot be read":
 * a committed checkpoint the prune cannot open for a transient reason
 * (EMFILE here, made for real by lowering RLIMIT_NOFILE after the listing)
 * is not unusable: the prune answers DLS_ERR_IO naming it (w.offset = its
 * pass, w.sys_errno = EMFILE) and deletes nothing (it used to delete it as
 * unusable, with the newest checkpoint among its victims). In the CLI
 * judge's order — checkpoint, prune, trim — the trim that follows while
 * descriptors are still short trims nothing (it used to trim past the
 * oldest kept checkpoint it could not read). Once descriptors are back,
 * the same calls prune and trim as usual. */
static void test_prune_stops_at_unopenable_checkpoint(void **state)
{
    (void)state;
    harness h;
    dls_judge_checkpoint_info ck[3];
    three_checkpoints(&h, 0xe3f1, ck);
    /* an unusable file (no stream header) named as a newer checkpoint:
     * that one goes, the open failures below do not */
    char junk[512];
    ckpt_path(&h, ck[2].pass + 1000, junk, sizeof junk);
    FILE *jf = fopen(junk, "w");
    assert_non_null(jf);
    fputs("not a stream file", jf);
    fclose(jf);
    uint64_t bases0[512];
    assert_true(seg_bases(h.journal_path, bases0, 512) > 4);
    assert_int_equal(bases0[0], 0);

    /* the newest committed checkpoint cannot be opened: nothing is deleted */
    emfile_hook e = {.any = false};
    ckpt_path(&h, ck[2].pass, e.target, sizeof e.target);
    jc_hooks hk = {emfile_before_open, &e};
    size_t deleted = 99;
    dls_where w = {0};
    int rc = jc_prune_checkpoints(h.j, h.ckpt_dir, 2, &deleted, &w, &hk);
    int fired = e.fired;
    emfile_restore(&e);
    assert_int_equal(fired >= 1, 1);
    assert_int_equal(rc, DLS_ERR_IO);
    assert_int_equal(w.sys_errno, EMFILE);
    assert_int_equal(w.offset, ck[2].pass);
    assert_non_null(w.reason);
    assert_int_equal(deleted, 0);
    for (int k = 0; k < 3; k++)
        assert_true(exists(&h, ck[k].pass));
    assert_int_equal(access(junk, F_OK), 0);

    /* the trim right after it, descriptors still short (the limit drops
     * at the first file it opens), then with the oldest kept checkpoint
     * alone unopenable: nothing is trimmed */
    uint64_t before = 1, oldest = 1;
    memset(&w, 0, sizeof w);
    e.any = true;
    rc = jc_trim_journal(h.j, h.ckpt_dir, &before, &oldest, &w, &hk);
    emfile_restore(&e);
    assert_int_equal(rc, DLS_ERR_IO);
    assert_int_equal(w.sys_errno, EMFILE);
    assert_int_equal(before, 0);
    e.any = false;
    ckpt_path(&h, ck[0].pass, e.target, sizeof e.target);
    memset(&w, 0, sizeof w);
    rc = jc_trim_journal(h.j, h.ckpt_dir, &before, &oldest, &w, &hk);
    emfile_restore(&e);
    assert_int_equal(rc, DLS_ERR_IO);
    assert_int_equal(w.sys_errno, EMFILE);
    assert_int_equal(w.offset, ck[0].pass);
    assert_int_equal(before, 0);
    uint64_t bases[512];
    assert_int_equal(seg_bases(h.journal_path, bases, 512) > 4, 1);
    assert_int_equal(bases[0], 0);
    for (int k = 0; k < 3; k++)
        assert_true(exists(&h, ck[k].pass));

    /* descriptors back: the prune keeps b and c, deletes a and the junk;
     * the trim goes to b's journal_next */
    memset(&w, 0, sizeof w);
    assert_int_equal(dls_judge_prune_checkpoints(h.j, h.ckpt_dir, 2, &deleted, &w), 0);
    assert_int_equal(deleted, 2);
    assert_false(exists(&h, ck[0].pass));
    assert_true(exists(&h, ck[1].pass) && exists(&h, ck[2].pass));
    assert_int_not_equal(access(junk, F_OK), 0);
    assert_int_equal(dls_judge_trim_journal(h.j, h.ckpt_dir, &before, &oldest, &w), 0);
    assert_int_equal(before, ck[1].journal_next);
    assert_true(oldest > 0 && oldest <= ck[1].journal_next);
    /* and both kept ones restart the judge */
    uint64_t highest = dls_judge_highest_lease(h.j), last = dls_judge_last_pass(h.j);
    h_restart_seg(&h, true);
    assert_int_equal(dls_judge_highest_lease(h.j), highest);
    assert_int_equal(dls_judge_last_pass(h.j), last);
    h_fini(&h);
}

/* Rewrites the checkpoint file at `path` with its last record's final byte
 * changed: a well-formed stream file with good CRCs whose digest is not
 * its commit record's. */
static void plant_wrong_digest(const char *path)
{
    size_t n;
    uint8_t *pl = payloads(path, &n);
    assert_int_equal(unlink(path), 0);
    dls_medium *m;
    assert_int_equal(dls_medium_create(&m, DLS_MEDIUM_FILE, path, NULL, NULL), 0);
    size_t off = 0;
    while (off < n) {
        uint32_t l;
        memcpy(&l, pl + off, 4);
        if (off + 4 + l == n) {
            uint8_t *last = pl + off + 4 + l - 1; /* a uint (seq) or nil/bool */
            *last = *last < 0x7f ? (uint8_t)(*last + 1) : (uint8_t)(*last - 1);
        }
        assert_int_equal(dls_medium_append(m, pl + off + 4, l, NULL, NULL), 0);
        off += 4 + l;
    }
    dls_medium_del(m);
    free(pl);
}

/* judge.md rev 4, Checkpoints, Commit: "A checkpoint without that record,
 * or whose digest differs, does not exist"; Retention: the owner keeps at
 * least two (existing) checkpoints and trims before the oldest kept one;
 * docs/checkpoints.md, "Prune verifies what it keeps". The newest of three
 * committed checkpoints rewritten with one value changed (good CRCs, a
 * wrong digest) is not one of the `keep`: the prune deletes it and keeps
 * the two older ones (it used to keep it and delete the oldest, leaving
 * one checkpoint a restart can load), both of which restart the judge; the
 * trim then goes to the oldest's journal_next. With one of those two
 * rewritten too, one checkpoint exists: nothing more is trimmed. */
static void test_prune_verifies_digest_of_kept(void **state)
{
    (void)state;
    harness h;
    dls_judge_checkpoint_info ck[3];
    three_checkpoints(&h, 0xd16e, ck);
    char p[512];
    ckpt_path(&h, ck[2].pass, p, sizeof p);
    plant_wrong_digest(p);
    size_t deleted = 0;
    dls_where w = {0};
    assert_int_equal(dls_judge_prune_checkpoints(h.j, h.ckpt_dir, 2, &deleted, &w), 0);
    assert_int_equal(deleted, 1);
    assert_false(exists(&h, ck[2].pass));
    assert_true(exists(&h, ck[0].pass) && exists(&h, ck[1].pass));
    uint64_t before = 0, oldest = 0;
    assert_int_equal(dls_judge_trim_journal(h.j, h.ckpt_dir, &before, &oldest, &w), 0);
    assert_int_equal(before, ck[0].journal_next);
    /* the judge restarts from b, and from a with b gone */
    uint64_t highest = dls_judge_highest_lease(h.j), last = dls_judge_last_pass(h.j);
    h_restart_seg(&h, true);
    assert_int_equal(dls_judge_highest_lease(h.j), highest);
    assert_int_equal(dls_judge_last_pass(h.j), last);
    /* b's digest wrong as well: a alone exists, nothing more is trimmed and
     * the prune keeps a (it deletes b: it does not exist) */
    ckpt_path(&h, ck[1].pass, p, sizeof p);
    plant_wrong_digest(p);
    for (int i = 0; i < 8; i++)
        step(&h);
    before = 1;
    assert_int_equal(dls_judge_trim_journal(h.j, h.ckpt_dir, &before, &oldest, &w), 0);
    assert_int_equal(before, 0);
    assert_int_equal(dls_judge_prune_checkpoints(h.j, h.ckpt_dir, 2, &deleted, &w), 0);
    assert_int_equal(deleted, 1);
    assert_true(exists(&h, ck[0].pass));
    assert_false(exists(&h, ck[1].pass));
    h_restart_seg(&h, true); /* from a: the trim kept its journal */
    assert_int_equal(dls_judge_last_pass(h.j), last + 8);
    h_fini(&h);
}

/* Drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from this process (a
 * forked child) so that a file's mode bits bind even for root; false when
 * the kernel refuses (then the test cannot make EACCES). */
static bool drop_dac_override(void)
{
    if (geteuid() != 0)
        return true; /* the mode bits bind already */
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capget, &hdr, data) != 0)
        return false;
    uint32_t drop = (1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH);
    data[0].effective &= ~drop;
    data[0].permitted &= ~drop;
    data[0].inheritable &= ~drop;
    return syscall(SYS_capset, &hdr, data) == 0;
}

/* judge.md rev 4, Checkpoints, Retention and Commit; docs/checkpoints.md,
 * "A checkpoint that cannot be read": EACCES, without a test hook. The
 * oldest kept committed checkpoint's file made unreadable (mode 000, the
 * check run in a child without CAP_DAC_OVERRIDE): the prune answers
 * DLS_ERR_PERM naming it (w.offset its pass, w.sys_errno EACCES) and
 * deletes nothing, and the trim trims nothing (they used to delete it and
 * trim the journal past its journal_next). */
static void test_prune_stops_at_unreadable_checkpoint_eacces(void **state)
{
    (void)state;
    harness h;
    dls_judge_checkpoint_info ck[3];
    three_checkpoints(&h, 0xacce55, ck);
    char p[512];
    ckpt_path(&h, ck[1].pass, p, sizeof p);
    assert_int_equal(chmod(p, 0), 0);
    uint64_t bases0[512];
    assert_true(seg_bases(h.journal_path, bases0, 512) > 4);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!drop_dac_override())
            _exit(77);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd >= 0 || errno != EACCES)
            _exit(78); /* the mode bits do not bind here */
        size_t deleted = 99;
        dls_where w = {0};
        int rc = dls_judge_prune_checkpoints(h.j, h.ckpt_dir, 2, &deleted, &w);
        if (rc != DLS_ERR_PERM || w.sys_errno != EACCES || w.offset != ck[1].pass ||
            deleted != 0)
            _exit(1);
        uint64_t before = 1;
        memset(&w, 0, sizeof w);
        rc = dls_judge_trim_journal(h.j, h.ckpt_dir, &before, NULL, &w);
        if (rc != DLS_ERR_PERM || w.sys_errno != EACCES || before != 0)
            _exit(2);
        _exit(0);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) == 77 || WEXITSTATUS(st) == 78) {
        fprintf(stderr, "EACCES cannot be made here (capabilities): skipped\n");
    } else {
        assert_int_equal(WEXITSTATUS(st), 0);
    }
    for (int k = 0; k < 3; k++)
        assert_true(exists(&h, ck[k].pass));
    uint64_t bases[512];
    assert_int_equal(seg_bases(h.journal_path, bases, 512) > 4, 1);
    assert_int_equal(bases[0], bases0[0]);
    assert_int_equal(chmod(p, 0600), 0);
    h_fini(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checkpoint_deterministic_two_seeds),
        cmocka_unit_test(test_checkpoint_record_order),
        cmocka_unit_test(test_checkpoint_same_after_either_restart),
        cmocka_unit_test(test_checkpoint_states),
        cmocka_unit_test(test_restart_checkpoint_equals_full_replay),
        cmocka_unit_test(test_restart_checkpoint_equals_full_replay_failing_medium),
        cmocka_unit_test(test_restart_falls_back_on_torn_newest),
        cmocka_unit_test(test_restart_ignores_uncommitted),
        cmocka_unit_test(test_restart_ignores_digest_mismatch),
        cmocka_unit_test(test_restart_ignores_grown_checkpoint),
        cmocka_unit_test(test_restart_refuses_without_history),
        cmocka_unit_test(test_restart_media_evicted_before_checkpoint),
        cmocka_unit_test(test_kill_while_checkpointing),
        cmocka_unit_test(test_cli_checkpoint_every),
        cmocka_unit_test(test_audit_checks_checkpoints),
        cmocka_unit_test(test_trim_segments_front_is_gap),
        cmocka_unit_test(test_judge_trims_segmented_journal),
        cmocka_unit_test(test_restart_segmented_media_evicted),
        cmocka_unit_test(test_cli_trims_segmented_journal),
        cmocka_unit_test(test_prune_keeps_committed_only),
        cmocka_unit_test(test_soak_retention),
        cmocka_unit_test(test_prune_stops_at_unreadable_journal),
        cmocka_unit_test(test_prune_stops_at_unopenable_checkpoint),
        cmocka_unit_test(test_prune_verifies_digest_of_kept),
        cmocka_unit_test(test_prune_stops_at_unreadable_checkpoint_eacces),
    };
    if (getenv("DLS_CKPT_ONLY_KILL")) { /* scripts/kill_checkpoint.sh */
        const struct CMUnitTest only[] = {cmocka_unit_test(test_kill_while_checkpointing)};
        return cmocka_run_group_tests(only, NULL, NULL);
    }
    if (getenv("DLS_CKPT_ONLY_SOAK")) { /* scripts/soak_checkpoint.sh */
        const struct CMUnitTest only[] = {cmocka_unit_test(test_soak_retention)};
        return cmocka_run_group_tests(only, NULL, NULL);
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
