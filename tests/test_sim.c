/* A seeded randomized simulation of the judge (judge.md): many holders on
 * a few media with flight delays, silent deaths, releases, owner policy
 * ends, restarts from the journal, gaps (media evicting unread records),
 * transport errors, failing reclaims, forged and replayed facts.
 *
 * An oracle written here — independent of the judge's ledger — reads the
 * journal after every pass and re-derives, from the pass marks and from
 * what the simulation itself appended to each medium, what every lease's
 * evidence is. After every pass it checks:
 *   - never two live exclusive leases on one subject (nor shared with an
 *     exclusive), lease ids strictly increasing;
 *   - never a lapsed record before its reclaim succeeded, and always with
 *     the cause it became due with (a pending lease keeps its cause);
 *   - the judge's due list equals the oracle's: causes in order (release,
 *     cap, policy, silence), never a silence before duration + tolerance of
 *     silence on the judge's ticks (and, for unknown evidence, a full
 *     duration after the resumed reading), never a silent lease left
 *     unreclaimed past the first pass at which silence holds;
 *   - every silent lease with known evidence is due within
 *     duration + tolerance + cadence of its last counted renewal when the
 *     passes keep the cadence.
 *
 * Passes: DLS_SIM_PASSES (default 100000) over episodes of 2000 passes.
 * Seed: printed; DLS_SEED=<n> replays a run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "daolease/attrib.h"
#include "daolease/fact.h"
#include "daolease/judge.h"
#include "daolease/mark.h"
#include "daolease/medium_impl.h"
#include "daolease/stream.h"
#include "vocab/vec.h"

#define MS DLS_MS
#define NH 12           /* holders */
#define NS 6            /* subjects */
#define NM 3            /* lease-fact media */
#define RING_CAP 64     /* small: bursts evict unread records (gaps) */
#define EPISODE 2000    /* passes per episode */
#define TOL (150 * MS)
#define CADENCE (200 * MS)

/* ---- a replayable generator -------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }
static bool chance(unsigned per_mille) { return below(1000) < per_mille; }

/* ---- a medium that can fail reads, and a journal without fdatasync ------------------------ */

typedef struct wrap {
    dls_medium *inner;
    bool read_error;
} wrap;

typedef struct wrap_cursor {
    wrap *w;
    dls_cursor *c;
} wrap_cursor;

static int wrap_batch(void *impl, const uint8_t *const *recs, const size_t *lens, size_t count,
                      uint64_t *first, dls_where *w)
{
    return dls_medium_append_batch(((wrap *)impl)->inner, recs, lens, count, first, w);
}

static int wrap_cursor_new(void *impl, uint64_t from, void **out)
{
    wrap_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return DLS_ERR_NOMEM;
    c->w = impl;
    if (dls_cursor_new(&c->c, c->w->inner, from)) {
        free(c);
        return DLS_ERR_NOMEM;
    }
    *out = c;
    return 0;
}

static dls_next wrap_next(void *cimpl, dls_record *rec, dls_where *w)
{
    wrap_cursor *c = cimpl;
    if (c->w->read_error)
        return DLS_NEXT_ERROR;
    return dls_cursor_next(c->c, rec, w);
}

static void wrap_cursor_del(void *cimpl)
{
    wrap_cursor *c = cimpl;
    dls_cursor_del(c->c);
    free(c);
}

static void wrap_del(void *impl)
{
    wrap *w = impl;
    dls_medium_del(w->inner);
    free(w);
}

static const dls_medium_ops wrap_ops = {
    .kind_name = "sim",
    .append_batch = wrap_batch,
    .cursor_new = wrap_cursor_new,
    .cursor_next = wrap_next,
    .cursor_del = wrap_cursor_del,
    .del = wrap_del,
};

static dls_medium *wrap_medium(dls_medium *inner, dls_medium_kind kind, dls_retention ret,
                               const char *name, wrap **out)
{
    wrap *w = calloc(1, sizeof *w);
    assert_non_null(w);
    w->inner = inner;
    dls_medium_info info;
    memset(&info, 0, sizeof info);
    info.kind = kind;
    info.retention = ret;
    info.sync = DLS_SYNC_DATA; /* declared: the simulation does not test durability */
    info.mode = DLS_OPEN_APPEND;
    memcpy(info.id, dls_medium_id(inner), 16);
    info.name = name;
    dls_medium *m;
    assert_int_equal(dls_medium_wrap(&m, &wrap_ops, w, &info), 0);
    *out = w;
    return m;
}

/* ---- the world ----------------------------------------------------------------------------- */

enum { LOG_IGNORE = 0, LOG_RENEWAL, LOG_RELEASE };

typedef struct logrec {
    uint8_t kind;
    uint8_t holder;
    bool commit;
    uint64_t lease, seq;
    uint8_t bytes[256];    /* the record, for copies */
    uint16_t n;
} logrec;

typedef struct medium_log {
    logrec *r;
    size_t n, cap;
    uint64_t read_to;      /* the oracle's drained position */
    uint64_t fail_since;   /* the oracle's view of the failing run */
    uint64_t fail_pass;    /* the last pass in that run */
    bool failing;
    unsigned error_left;   /* simulated transport-error passes left */
} medium_log;

enum { H_IDLE = 0, H_PROPOSED, H_HOLDING, H_DEAD };

typedef struct holder {
    dls_secret *key;
    char name[16];
    int medium;
    int state;
    uint64_t lease, dur, next_renew, renew_seq, prop_seq, props, revive_at, proposed_at;
    char prop[24];
} holder;

typedef struct olease {
    bool live, pending, shared, released, ended, unknown, uncertain, suspended_once;
    int subject, holder, medium;
    uint64_t dur, max, tenure, obs, resumed, seq;
    dls_cause cause;
    bool reclaimed;        /* the reclaim procedure answered done */
} olease;

typedef struct delayed {
    uint64_t at;
    int medium;
    logrec rec;
} delayed;

typedef struct world {
    char dir[64];
    char jpath[128];
    dls_keyring *kr;
    dls_secret *grantor, *mallory;
    holder h[NH];
    dls_medium *media[NM];
    wrap *wraps[NM];
    dls_resolver *res[NM];
    medium_log log[NM];
    dls_medium *journal;
    wrap *jwrap;
    dls_cursor *jcur;      /* the oracle's journal reader (lease records) */
    dls_cursor *mcur;      /* and a second one a step ahead (marks) */
    dls_medium *tickm;
    dls_resolver *tickr;
    dls_judge_settings s;
    dls_judge_tick_source tick;
    dls_judge_medium jm[NM];
    dls_judge *j;
    uint8_t hkey[16];
    uint64_t now, prev_now, last_mark_now;
    dls_vec L; /* olease, by lease id - 1 */
    size_t lo; /* leases below lo are all lapsed */
    uint64_t highest;
    dls_vec q; /* delayed */
    uint64_t passes, restarts, lapsed, granted, silence, gaps, errors, forged_sent, copies_sent;
    bool overrun;
} world;

#define LSE(i) DLS_VEC_AT(W.L, olease, i)
#define QD(i) DLS_VEC_AT(W.q, delayed, i)

static world W;

static void sim_fail(const char *what, uint64_t lease)
{
    fprintf(stderr, "sim: %s (lease %" PRIu64 ", now %" PRIu64 " ns, pass %" PRIu64 ")\n", what,
            lease, W.now, W.passes);
    fail_msg("%s", what);
}

static olease *ol(uint64_t id)
{
    if (id == 0 || id > W.L.n)
        return NULL;
    return &LSE(id - 1);
}

/* ---- the owner's resource: reclaim ---------------------------------------------------------- */

static int sim_reclaim(void *u, dls_bytes subject, uint64_t lease, dls_cause cause, bool commit)
{
    (void)u, (void)subject, (void)commit;
    olease *l = ol(lease);
    if (!l || !l->live)
        sim_fail("reclaim of a lease that is not live", lease);
    if (!l->pending && !l->reclaimed) {
        /* newly due: the oracle checks the cause when it reads the mark */
    }
    if (cause != l->cause && l->pending)
        sim_fail("a pending lease's reclaim with another cause", lease);
    uint64_t r = below(100);
    if (r < 75) {
        l->reclaimed = true;
        return DLS_RECLAIM_DONE;
    }
    return r < 90 ? DLS_RECLAIM_NOT_YET : DLS_RECLAIM_FAILED;
}

/* ---- appending --------------------------------------------------------------------------------- */

static void log_push(medium_log *ml, uint64_t pos, const logrec *r)
{
    if (pos >= ml->cap) {
        size_t ncap = ml->cap ? ml->cap * 2 : 1024;
        while (ncap <= pos)
            ncap *= 2;
        ml->r = realloc(ml->r, ncap * sizeof *ml->r);
        assert_non_null(ml->r);
        memset(ml->r + ml->cap, 0, (ncap - ml->cap) * sizeof *ml->r);
        ml->cap = ncap;
    }
    ml->r[pos] = *r;
    if (pos + 1 > ml->n)
        ml->n = pos + 1;
}

static void append_now(int m, const logrec *r)
{
    uint64_t pos;
    assert_int_equal(dls_medium_append(W.media[m], r->bytes, r->n, &pos, NULL), 0);
    log_push(&W.log[m], pos, r);
}

static void seal_into(logrec *r, const dls_secret *signer, int m, const dls_fact *f)
{
    uint8_t fact[512];
    size_t n, en;
    assert_int_equal(dls_fact_encode(f, fact, sizeof fact, &n), 0);
    assert_int_equal(dls_envelope_seal(signer, dls_medium_id(W.media[m]), fact, n, r->bytes,
                                       sizeof r->bytes, &en),
                     0);
    r->n = (uint16_t)en;
}

/* A holder's append arrives after a flight delay (in order per medium). */
static void send(int m, const logrec *r)
{
    assert_int_equal(dls_vec_reserve(&W.q, sizeof(delayed), W.q.n + 1), 0);
    uint64_t at = W.now + below(60) * MS;
    for (size_t i = 0; i < W.q.n; i++)
        if (QD(i).medium == m && QD(i).at > at)
            at = QD(i).at;
    QD(W.q.n++) = (delayed){at, m, *r};
}

static void deliver(void)
{
    size_t k = 0;
    for (size_t i = 0; i < W.q.n; i++) {
        if (QD(i).at <= W.now)
            append_now(QD(i).medium, &QD(i).rec);
        else
            QD(k++) = QD(i);
    }
    W.q.n = k;
}

/* ---- holders ----------------------------------------------------------------------------------- */

static void subject_val(int s, uint8_t *out, size_t *n)
{
    char name[16];
    snprintf(name, sizeof name, "job/%d", s);
    assert_int_equal(dls_value_str(out, 32, name, strlen(name), n), 0);
}

static void propose(holder *h, int idx)
{
    uint8_t sub[32], prop[32];
    size_t sn, pn;
    subject_val((int)below(NS), sub, &sn);
    snprintf(h->prop, sizeof h->prop, "h%d-%" PRIu64, idx, ++h->props);
    assert_int_equal(dls_value_str(prop, sizeof prop, h->prop, strlen(h->prop), &pn), 0);
    dls_fact f;
    dls_fact_proposal(&f, (dls_bytes){prop, pn}, (dls_bytes){sub, sn}, ++h->prop_seq);
    static const uint64_t asks[] = {0, 600, 1000, 1500};
    uint64_t ask = asks[below(4)];
    if (ask) {
        assert_int_equal(dls_duration_make(&f.duration, DLS_UNIT_MS, ask), 0);
        f.keys |= DLS_K_DURATION;
    }
    if (chance(200)) {
        f.mode = DLS_MODE_SHARED;
        f.keys |= DLS_K_MODE;
    }
    logrec r = {0};
    r.kind = LOG_IGNORE;
    seal_into(&r, h->key, h->medium, &f);
    send(h->medium, &r);
    h->state = H_PROPOSED;
    h->proposed_at = W.now;
}

static void renew(holder *h, int idx)
{
    dls_fact f;
    dls_fact_renewal(&f, h->lease, ++h->renew_seq);
    logrec r = {LOG_RENEWAL, (uint8_t)idx, false, h->lease, h->renew_seq, {0}, 0};
    seal_into(&r, h->key, h->medium, &f);
    send(h->medium, &r);
}

static void release(holder *h, int idx)
{
    dls_fact f;
    bool commit = chance(500);
    dls_fact_release(&f, h->lease, commit);
    logrec r = {LOG_RELEASE, (uint8_t)idx, commit, h->lease, 0, {0}, 0};
    seal_into(&r, h->key, h->medium, &f);
    send(h->medium, &r);
    h->state = H_IDLE;
}

static void holders_act(void)
{
    for (int i = 0; i < NH; i++) {
        holder *h = &W.h[i];
        switch (h->state) {
        case H_IDLE:
            if (chance(60))
                propose(h, i);
            break;
        case H_HOLDING:
            if (chance(3)) { /* dies: silent from now on */
                h->state = H_DEAD;
                h->revive_at = W.now + 4000 * MS;
            } else if (chance(15)) {
                release(h, i);
            } else if (W.now >= h->next_renew) {
                renew(h, i);
                h->next_renew = W.now + h->dur / 3;
            }
            break;
        case H_DEAD:
            if (W.now >= h->revive_at)
                h->state = H_IDLE;
            break;
        case H_PROPOSED: /* a proposal evicted unread is never answered */
            if (W.now - h->proposed_at > 10000 * MS)
                h->state = H_IDLE;
            break;
        default:
            break;
        }
    }
}

/* ---- the adversary and the weather ---------------------------------------------------------- */

static void forge(void)
{
    int m = (int)below(NM);
    holder *h = &W.h[below(NH)];
    dls_fact f;
    dls_fact_renewal(&f, W.highest ? 1 + below(W.highest) : 1, 1000000 + below(1000));
    uint8_t fact[256], env[512];
    size_t n, en;
    assert_int_equal(dls_fact_encode(&f, fact, sizeof fact, &n), 0);
    /* mallory's MAC key under the holder's name: does not verify */
    dls_secret *as;
    uint8_t key[32];
    memset(key, 0x66, sizeof key);
    assert_int_equal(dls_secret_from_seed(&as, h->name, DLS_KEY_MAC, key), 0);
    assert_int_equal(dls_envelope_seal(as, dls_medium_id(W.media[m]), fact, n, env, sizeof env, &en),
                     0);
    dls_secret_del(as);
    logrec r = {0};
    memcpy(r.bytes, env, en);
    r.n = (uint16_t)en;
    append_now(m, &r);
    W.forged_sent++;
}

/* Copies a recent genuine record back onto its medium (a replay) or onto
 * another one (bound to the first medium's id: attributed to nobody). */
static void copy_record(void)
{
    int m = (int)below(NM);
    medium_log *ml = &W.log[m];
    if (ml->n == 0)
        return;
    uint64_t lo = ml->n > RING_CAP ? ml->n - RING_CAP : 0;
    logrec r = ml->r[lo + below(ml->n - lo)];
    if (r.n == 0)
        return;
    int to = chance(500) ? m : (int)below(NM);
    if (to != m)
        r.kind = LOG_IGNORE;
    append_now(to, &r);
    W.copies_sent++;
}

static void burst(void)
{
    int m = (int)below(NM);
    for (int k = 0; k < RING_CAP + 8; k++) {
        logrec r = {0};
        const uint8_t junk[] = {0x81, 0xa1, 'x', 0x01}; /* a bare map: forged */
        memcpy(r.bytes, junk, sizeof junk);
        r.n = sizeof junk;
        append_now(m, &r);
    }
}

static void weather(void)
{
    if (chance(50))
        forge();
    if (chance(60))
        copy_record();
    if (chance(4))
        burst();
    for (int m = 0; m < NM; m++) {
        if (W.log[m].error_left == 0 && chance(8))
            W.log[m].error_left = 1 + (unsigned)below(12);
        W.wraps[m]->read_error = W.log[m].error_left > 0;
        if (W.log[m].error_left)
            W.log[m].error_left--;
    }
    if (chance(6) && W.highest) { /* the owner ends a live lease */
        uint64_t id = 1 + below(W.highest);
        olease *l = ol(id);
        if (l && l->live && !l->pending) {
            assert_int_equal(dls_judge_end(W.j, id), 0);
            l->ended = true;
        }
    }
}

/* ---- the oracle: reading the journal ---------------------------------------------------------- */

typedef struct omark {
    bool present, restarted, late, kept;
    uint64_t pass, now;
    uint64_t drained[NM];
    bool has_gap[NM];
    uint64_t gap_to[NM];
    bool error[NM];
    dls_mark_due due[4096];
    size_t ndue;
} omark;

static int medium_of(const uint8_t *id)
{
    for (int m = 0; m < NM; m++)
        if (memcmp(dls_medium_id(W.media[m]), id, 16) == 0)
            return m;
    sim_fail("a mark names an unknown medium", 0);
    return -1;
}

static void read_mark_lists(dls_mark_view *v, omark *mk)
{
    dls_mark_pos p;
    dls_mark_gap g;
    dls_mark_due d;
    while (dls_mark_next_pos(&v->drained, &p))
        mk->drained[medium_of(p.medium)] = p.position;
    while (dls_mark_next_gap(&v->gaps, &g)) {
        int m = medium_of(g.medium);
        mk->has_gap[m] = true;
        mk->gap_to[m] = g.to;
    }
    while (dls_mark_next_pos(&v->errors, &p))
        mk->error[medium_of(p.medium)] = true;
    while (dls_mark_next_due(&v->due, &d)) {
        assert_true(mk->ndue < 4096);
        mk->due[mk->ndue++] = d;
    }
}

static void apply_evidence(int m, const logrec *r)
{
    olease *l = ol(r->lease);
    if (r->kind == LOG_IGNORE || !l || !l->live || l->medium != m || l->holder != r->holder)
        return;
    if (r->kind == LOG_RENEWAL && r->seq > l->seq) {
        l->seq = r->seq;
        l->obs = W.now;
        l->unknown = false;
        l->uncertain = false;
        l->suspended_once = false;
    } else if (r->kind == LOG_RELEASE && !l->released) {
        l->released = true;
    }
}

static bool suspended(const olease *l, const omark *mk)
{
    const medium_log *ml = &W.log[l->medium];
    return mk->error[l->medium] && !dls_passed(ml->fail_since, W.now, l->dur + TOL);
}

static dls_cause expected_cause(olease *l, const omark *mk)
{
    if (l->released)
        return DLS_CAUSE_RELEASE;
    if (l->max && dls_passed(l->tenure, W.now, l->max + TOL))
        return DLS_CAUSE_CAP;
    if (l->ended)
        return DLS_CAUSE_POLICY;
    if (suspended(l, mk)) {
        l->suspended_once = true;
        return DLS_CAUSE_NONE;
    }
    if (!dls_passed(l->obs, W.now, l->dur + TOL))
        return DLS_CAUSE_NONE;
    if (l->unknown && !dls_passed(l->resumed, W.now, l->dur))
        return DLS_CAUSE_NONE;
    return DLS_CAUSE_SILENCE;
}

static void oracle_media(omark *mk)
{
    for (int m = 0; m < NM; m++) {
        medium_log *ml = &W.log[m];
        if (mk->restarted && !mk->kept)
            ml->failing = false; /* judge.md Restart rev 4: a kept restart continues the run */
        if (mk->error[m]) {
            if (!ml->failing || ml->fail_pass + 1 != mk->pass)
                ml->fail_since = W.now;
            ml->failing = true;
            ml->fail_pass = mk->pass;
            W.errors++;
        } else {
            ml->failing = false;
        }
        uint64_t from = ml->read_to;
        if (mk->has_gap[m]) {
            W.gaps++;
            for (size_t i = W.lo; i < W.L.n; i++)
                if (LSE(i).live && LSE(i).medium == m) {
                    LSE(i).unknown = true;
                    LSE(i).resumed = W.now;
                }
            from = mk->gap_to[m];
        }
        for (uint64_t p = from; p < mk->drained[m]; p++)
            if (p < ml->n)
                apply_evidence(m, &ml->r[p]);
        ml->read_to = mk->drained[m];
    }
}

static bool in_due(const omark *mk, uint64_t id, dls_cause *c)
{
    for (size_t i = 0; i < mk->ndue; i++)
        if (mk->due[i].lease == id) {
            *c = mk->due[i].cause;
            return true;
        }
    return false;
}

static void oracle_classify(omark *mk)
{
    for (size_t i = 1; i < mk->ndue; i++)
        if (mk->due[i].lease <= mk->due[i - 1].lease)
            sim_fail("due not in ascending lease id", mk->due[i].lease);
    while (W.lo < W.L.n && !LSE(W.lo).live)
        W.lo++;
    for (size_t i = 0; i < mk->ndue; i++)
        if (mk->due[i].lease <= W.lo)
            sim_fail("a lapsed lease due again", mk->due[i].lease);
    for (size_t i = W.lo; i < W.L.n; i++) {
        olease *l = &LSE(i);
        uint64_t id = i + 1;
        if (!l->live || l->pending) {
            dls_cause c;
            if (in_due(mk, id, &c))
                sim_fail("a lease due twice, or not live", id);
            continue;
        }
        dls_cause want = expected_cause(l, mk), got = DLS_CAUSE_NONE;
        bool due = in_due(mk, id, &got);
        if (due && want == DLS_CAUSE_NONE)
            sim_fail("a lease due before any cause holds (early reclaim)", id);
        if (due && got != want)
            sim_fail("a due cause that is not the first that holds", id);
        if (!due && want != DLS_CAUSE_NONE && !(l->uncertain && want == DLS_CAUSE_SILENCE))
            sim_fail("a lease not due although a cause holds", id);
        if (!due)
            continue;
        if (got == DLS_CAUSE_SILENCE) {
            W.silence++;
            if (!dls_passed(l->obs, W.now, l->dur + TOL))
                sim_fail("silence before duration + tolerance", id);
            if (!l->unknown && !l->suspended_once && !W.overrun &&
                dls_passed(l->obs, W.now, l->dur + TOL + CADENCE))
                sim_fail("a silent lease not reclaimed within duration + tolerance + cadence", id);
        }
        l->pending = true;
        l->cause = got;
    }
}

static void oracle_lapsed(const dls_fact *f)
{
    olease *l = ol(f->lease);
    if (!l || !l->live)
        sim_fail("lapsed for a lease that is not live", f->lease);
    if (!l->pending)
        sim_fail("lapsed for a lease never due", f->lease);
    if (!l->reclaimed)
        sim_fail("lapsed before the reclaim succeeded", f->lease);
    if (f->cause != l->cause)
        sim_fail("lapsed with another cause than it became due with", f->lease);
    l->live = false;
    W.lapsed++;
    for (int i = 0; i < NH; i++)
        if (W.h[i].lease == f->lease && W.h[i].state == H_HOLDING)
            W.h[i].state = H_IDLE; /* the holder observes the reclaim */
}

static int holder_by_name(dls_bytes name)
{
    for (int i = 0; i < NH; i++)
        if (strlen(W.h[i].name) == name.n && memcmp(W.h[i].name, name.p, name.n) == 0)
            return i;
    sim_fail("a grant to an unknown holder", 0);
    return -1;
}

static void oracle_grant(const dls_fact *f)
{
    if (f->lease != W.highest + 1)
        sim_fail("a lease id that is not the highest minted + 1", f->lease);
    W.highest = f->lease;
    int hi = holder_by_name(f->holder);
    int s = -1;
    for (int k = 0; k < NS; k++) {
        uint8_t v[32];
        size_t n;
        subject_val(k, v, &n);
        if (n == f->subject.n && memcmp(v, f->subject.p, n) == 0)
            s = k;
    }
    assert_true(s >= 0);
    bool shared = (f->keys & DLS_K_MODE) && f->mode == DLS_MODE_SHARED;
    for (size_t i = W.lo; i < W.L.n; i++)
        if (LSE(i).live && LSE(i).subject == s && (!shared || !LSE(i).shared))
            sim_fail("a double grant", f->lease);
    if (memcmp(f->medium, dls_medium_id(W.media[W.h[hi].medium]), 16) != 0)
        sim_fail("a grant registered on another medium than the proposal's", f->lease);
    assert_int_equal(dls_vec_reserve(&W.L, sizeof(olease), W.L.n + 1), 0);
    olease *l = &LSE(W.L.n++);
    memset(l, 0, sizeof *l);
    l->live = true;
    l->shared = shared;
    l->subject = s;
    l->holder = hi;
    l->medium = W.h[hi].medium;
    l->dur = f->duration.ns;
    l->max = (f->keys & DLS_K_MAX) ? f->max.ns : 0;
    l->tenure = l->obs = W.now;
    W.granted++;
    holder *h = &W.h[hi];
    if (h->state == H_PROPOSED && (f->keys & DLS_K_PROPOSAL) && f->proposal.n == strlen(h->prop) + 1 &&
        memcmp(f->proposal.p + 1, h->prop, strlen(h->prop)) == 0) {
        h->state = H_HOLDING;
        h->lease = f->lease;
        h->dur = f->duration.ns;
        h->renew_seq = 0;
        h->next_renew = W.now + h->dur / 3;
    }
}

static void oracle_refusal(const dls_fact *f)
{
    int hi = holder_by_name(f->holder);
    holder *h = &W.h[hi];
    if (h->state == H_PROPOSED && f->proposal.n == strlen(h->prop) + 1 &&
        memcmp(f->proposal.p + 1, h->prop, strlen(h->prop)) == 0)
        h->state = H_IDLE;
}

/* Reads this pass's records: its mark (if any) first, then the records. */
static void oracle_pass(const dls_judge_pass_result *r)
{
    static omark mk;
    memset(&mk, 0, sizeof mk);
    mk.pass = r->pass;
    mk.now = r->now;
    for (int m = 0; m < NM; m++)
        mk.drained[m] = W.log[m].read_to;
    /* first pass: collect the mark */
    dls_record rec;
    while (dls_cursor_next(W.mcur, &rec, NULL) == DLS_NEXT_OK) {
        dls_attribution a;
        dls_record_classify(rec.p, rec.n, &a);
        if (dls_mark_classify(a.fact.p, a.fact.n) != DLS_MARK_REC_MARK)
            continue;
        dls_mark_view v;
        assert_int_equal(dls_mark_decode(a.fact.p, a.fact.n, &v, NULL), 0);
        if (v.pass != r->pass)
            sim_fail("a mark of another pass", 0);
        if (!v.continued) {
            mk.present = true;
            mk.restarted = v.restarted;
            mk.kept = v.kept;
            mk.late = v.late;
            if (v.now.ns != r->now)
                sim_fail("a mark whose now is not the pass's", 0);
        }
        read_mark_lists(&v, &mk);
    }
    if (r->mark != mk.present)
        sim_fail("the pass result and the journal disagree on the mark", 0);
    if (mk.present)
        W.last_mark_now = W.now;
    if (mk.restarted) {
        /* judge.md Restart (rev 4): a restart does not re-arm silence; the
         * first mark says so with kept when it recovered a live lease. A
         * recovered lease becomes unknown only where its medium failed at
         * that first pass (listed in errors; a renewal drained then makes
         * it known again in oracle_media; a gap is oracle_media's) — issue
         * 12 item 17. */
        bool any = false;
        for (size_t i = W.lo; i < W.L.n; i++)
            any |= LSE(i).live;
        if (mk.kept != any)
            sim_fail("kept on the first mark differs from whether a live lease was recovered", 0);
        for (size_t i = W.lo; i < W.L.n; i++) {
            olease *l = &LSE(i);
            int m = l->medium;
            if (l->live && (!mk.kept || mk.error[m])) {
                l->unknown = true;
                l->resumed = W.now;
            }
        }
    }
    oracle_media(&mk);
    oracle_classify(&mk);
    /* then the lease records, in order */
    while (dls_cursor_next(W.jcur, &rec, NULL) == DLS_NEXT_OK) {
        dls_attribution a;
        dls_record_classify(rec.p, rec.n, &a);
        if (dls_mark_classify(a.fact.p, a.fact.n) == DLS_MARK_REC_MARK)
            continue;
        dls_fact f;
        assert_int_equal(dls_fact_decode(a.fact.p, a.fact.n, &f, NULL), 0);
        if (!mk.present)
            sim_fail("a record of a pass without a mark", f.lease);
        if (f.kind == DLS_FACT_RECLAIM)
            oracle_lapsed(&f);
        else if (f.kind == DLS_FACT_GRANT)
            oracle_grant(&f);
        else if (f.kind == DLS_FACT_REFUSAL)
            oracle_refusal(&f);
    }
    for (size_t i = W.lo; i < W.L.n; i++)
        LSE(i).ended = false; /* consumed: due at this pass (policy or earlier) */
}

/* ---- episodes ------------------------------------------------------------------------------------ */

static void open_judge(void)
{
    dls_judge_callbacks cb = {.reclaim = sim_reclaim};
    dls_where w = {0};
    int rc = dls_judge_new(&W.j, &W.s, &cb, NULL, &w);
    if (rc)
        fprintf(stderr, "dls_judge_new: %s (%s)\n", dls_strerror(rc), w.reason ? w.reason : "");
    assert_int_equal(rc, 0);
}

/* Restart from the journal. The oracle mirrors the replay's one
 * conservative rule: where drained evidence was since evicted, a lease's
 * last observation becomes the last mark's now and its seq is uncertain. */
static void restart(void)
{
    dls_judge_del(W.j);
    for (int m = 0; m < NM; m++) {
        bool lost = (W.log[m].n > RING_CAP || W.wraps[m]->read_error) && W.log[m].read_to > 0;
        if (!lost)
            continue;
        for (size_t i = W.lo; i < W.L.n; i++) {
            olease *l = &LSE(i);
            if (l->live && l->medium == m) {
                if (l->obs < W.last_mark_now)
                    l->obs = W.last_mark_now;
                l->uncertain = true;
            }
        }
    }
    open_judge();
    W.restarts++;
}

static void setup_episode(unsigned episode)
{
    memset(&W, 0, sizeof W);
    snprintf(W.dir, sizeof W.dir, "/tmp/dls-sim-XXXXXX");
    assert_non_null(mkdtemp(W.dir));
    snprintf(W.jpath, sizeof W.jpath, "%s/journal.dls", W.dir);
    assert_int_equal(dls_keyring_new(&W.kr), 0);
    uint8_t seed[32];
    for (int i = 0; i < 32; i++)
        seed[i] = (uint8_t)rnd();
    assert_int_equal(dls_secret_from_seed(&W.grantor, "arbiter", DLS_KEY_ED25519, seed), 0);
    for (int i = 0; i < NH; i++) {
        holder *h = &W.h[i];
        snprintf(h->name, sizeof h->name, "agent-%d", i);
        for (int k = 0; k < 32; k++)
            seed[k] = (uint8_t)rnd();
        assert_int_equal(dls_secret_from_seed(&h->key, h->name, DLS_KEY_MAC, seed), 0);
        assert_int_equal(dls_keyring_add(W.kr, (const uint8_t *)h->name, strlen(h->name),
                                         DLS_KEY_MAC, dls_secret_public(h->key)),
                         0);
        h->medium = i % NM;
    }
    for (int m = 0; m < NM; m++) {
        dls_medium_settings ms;
        dls_medium_settings_default(&ms);
        ms.ring_capacity = RING_CAP;
        dls_medium *ring;
        assert_int_equal(dls_ring_new(&ring, &ms), 0);
        W.media[m] = wrap_medium(ring, DLS_MEDIUM_RING, DLS_RETAIN_EVICT_OLDEST, "sim", &W.wraps[m]);
        assert_int_equal(dls_resolver_new_signed(&W.res[m], dls_medium_id(W.media[m]), W.kr), 0);
        W.jm[m] = (dls_judge_medium){W.media[m], W.res[m]};
    }
    dls_medium_settings js;
    dls_medium_settings_default(&js);
    js.sync = DLS_SYNC_NONE;
    dls_medium *jfile;
    assert_int_equal(dls_medium_create(&jfile, DLS_MEDIUM_FILE, W.jpath, &js, NULL), 0);
    W.journal = wrap_medium(jfile, DLS_MEDIUM_FILE, DLS_RETAIN_ALL, W.jpath, &W.jwrap);
    assert_int_equal(dls_cursor_new(&W.jcur, W.journal, 0), 0);
    assert_int_equal(dls_cursor_new(&W.mcur, W.journal, 0), 0);
    dls_medium_settings ts;
    dls_medium_settings_default(&ts);
    ts.ring_capacity = 16;
    assert_int_equal(dls_ring_new(&W.tickm, &ts), 0);
    assert_int_equal(dls_resolver_new_medium(&W.tickr, dls_medium_id(W.tickm), "ticker", NULL), 0);
    dls_judge_settings_default(&W.s);
    W.s.grantor = W.grantor;
    W.s.journal = W.journal;
    W.tick = (dls_judge_tick_source){W.tickm, W.tickr, "ticker", "sim-basis", 0};
    W.s.ticks = &W.tick;
    W.s.nticks = 1;
    W.s.media = W.jm;
    W.s.nmedia = NM;
    W.s.tolerance_ns = TOL;
    W.s.cadence_ns = CADENCE;
    assert_int_equal(dls_duration_make(&W.s.default_duration, DLS_UNIT_S, 1), 0);
    if (episode % 2)
        assert_int_equal(dls_duration_make(&W.s.tenure_max, DLS_UNIT_S, 6), 0);
    W.s.lock_delay_ns = episode % 3 == 0 ? 300 * MS : 0;
    for (int i = 0; i < 16; i++)
        W.hkey[i] = (uint8_t)rnd();
    W.s.hash_key = W.hkey;
    open_judge();
    W.now = 10000 * MS;
}

static void teardown_episode(void)
{
    dls_judge_del(W.j);
    dls_cursor_del(W.jcur);
    dls_cursor_del(W.mcur);
    dls_medium_del(W.journal);
    for (int m = 0; m < NM; m++) {
        dls_resolver_del(W.res[m]);
        dls_medium_del(W.media[m]);
        free(W.log[m].r);
    }
    dls_resolver_del(W.tickr);
    dls_medium_del(W.tickm);
    for (int i = 0; i < NH; i++)
        dls_secret_del(W.h[i].key);
    dls_secret_del(W.grantor);
    dls_keyring_del(W.kr);
    dls_vec_free(&W.L);
    dls_vec_free(&W.q);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", W.dir);
    assert_int_equal(system(cmd), 0);
}

static void tick(void)
{
    dls_fact f;
    dls_duration d;
    assert_int_equal(dls_duration_make(&d, DLS_UNIT_NS, W.now), 0);
    dls_fact_tick(&f, d);
    uint8_t b[64];
    size_t n;
    assert_int_equal(dls_fact_encode(&f, b, sizeof b, &n), 0);
    assert_int_equal(dls_medium_append(W.tickm, b, n, NULL, NULL), 0);
}

static uint64_t run_episode(unsigned episode, uint64_t passes)
{
    setup_episode(episode);
    for (uint64_t p = 0; p < passes; p++) {
        W.prev_now = W.now;
        /* multiples of 50 ms: readings often land exactly on a bound */
        uint64_t step = (1 + below(4)) * 50 * MS;
        W.overrun = chance(10);
        if (W.overrun)
            step = (5 + below(8)) * 50 * MS;
        W.now += step;
        deliver();
        weather();
        tick();
        dls_judge_pass_result r;
        int rc = dls_judge_pass(W.j, &r);
        if (rc)
            fprintf(stderr, "pass: %s\n", dls_strerror(rc));
        assert_int_equal(rc, 0);
        W.passes++;
        if (!r.restarted && r.cadence_overrun != W.overrun)
            sim_fail("cadence overrun not reported as such", 0);
        oracle_pass(&r);
        holders_act();
        /* about 4 restarts an episode of 2,000 passes; episode 0 must
         * restart at least once (checked below), so with none by half way
         * (e^-2 of seeds) it restarts there */
        if (chance(2) || (episode == 0 && W.restarts == 0 && p == passes / 2))
            restart();
    }
    fprintf(stderr,
            "sim: episode %u: %" PRIu64 " passes, %" PRIu64 " grants, %" PRIu64 " lapsed (%" PRIu64
            " silence), %" PRIu64 " restarts, %" PRIu64 " gaps, %" PRIu64 " error passes, %" PRIu64
            " forged, %" PRIu64 " copies\n",
            episode, W.passes, W.granted, W.lapsed, W.silence, W.restarts, W.gaps, W.errors,
            W.forged_sent, W.copies_sent);
    uint64_t done = W.passes;
    if (episode == 0) {
        /* the run must exercise what it claims to */
        assert_true(W.granted > 50 && W.lapsed > 20 && W.restarts > 0);
    }
    teardown_episode();
    return done;
}

static void test_sim_randomized(void **state)
{
    (void)state;
    assert_true(sodium_init() >= 0);
    uint64_t seed;
    const char *env = getenv("DLS_SEED");
    if (env)
        seed = strtoull(env, NULL, 0);
    else
        randombytes_buf(&seed, sizeof seed);
    uint64_t total = 100000;
    const char *ps = getenv("DLS_SIM_PASSES");
    if (ps)
        total = strtoull(ps, NULL, 0);
    fprintf(stderr, "sim: seed %" PRIu64 " (DLS_SEED=%" PRIu64 " replays), %" PRIu64 " passes\n",
            seed, seed, total);
    rng_state = seed;
    uint64_t done = 0;
    for (unsigned e = 0; done < total; e++)
        done += run_episode(e, total - done < EPISODE ? total - done : EPISODE);
    assert_true(done >= total);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_randomized),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
