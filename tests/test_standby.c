/* Standby judges and takeover (judge.md rev 5, Standby judges; docs/standby.md).
 *
 * - Following: a standby's ledger equals the ledger a judge restarted on
 *   the same journal prefix recovers, at every prefix a standby can see —
 *   after every pass of the owning judge and between a mark listing due
 *   leases and their lapsed records (compared from inside the owner's
 *   reclaim callback) — over seeded random journals, with and without
 *   checkpoints. The seed is printed; DLS_SEED=<n> replays a run.
 * - Takeover: the journal a standby writes once it took over is the journal
 *   a fresh judge restarted at the same point writes on the same inputs,
 *   byte for byte, except its first mark, whose fact is the restarted
 *   judge's with "dao.judge/takeover": true added as its last key (judge.md,
 *   Journal: written after restarted, kept, floor and from).
 * - A dead holder's lease is reclaimed at the same reading with or without
 *   a takeover in between (file journal, writer lock freed on the owner's
 *   end).
 * - Two standbys on one journal: exactly one takes over; the other keeps
 *   following the new judge.
 * - Assembly: a standby whose inputs differ from the journal's (another
 *   grantor, basis, media order) is refused; an evict-oldest journal is
 *   refused; a standby never appends, calls back or acts for the owner.
 * - Heartbeat: a quiet active judge marks once `heartbeat` has passed since
 *   its last mark, not before.
 * - Processes (cli.md, Operators: `judge --standby`): an active `daolease
 *   judge` stopped (SIGSTOP) then continued: the standby keeps following;
 *   then killed with SIGKILL while an agent holds a lease; a `daolease
 *   judge --standby` on the same configuration says it follows and how far
 *   behind it is, says once that it took over, then judges (the agent's
 *   release is reclaimed by it) and the journal audits clean with one
 *   takeover.
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
#include <time.h>

#include <sodium.h>

#include "daolease/attrib.h"
#include "daolease/audit.h"
#include "daolease/checkpoint.h"
#include "daolease/fact.h"
#include "daolease/judge.h"
#include "daolease/judge_view.h"
#include "daolease/mark.h"
#include "daolease/stream.h"
#include "daolease/tick.h"
#include "judge/internal.h" /* a lease's evidence flag (snapshots) */
#include "judge_harness.h"
#include "support.h"

#include <signal.h>
#include <sys/wait.h>

#define MS DLS_MS
#define NHOLD 4
#define NMED 2
#define NSUBJ 4
#define MAXL 2048

/* ---- a replayable world: holders acting on the harness's media ------------------------- */

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

typedef struct wlease {
    uint64_t id;
    size_t holder, medium;
    bool live;
} wlease;

typedef struct world {
    harness h;
    wlease leases[MAXL];
    size_t nleases;
    bool dead[NHOLD];
    bool gone[NHOLD];         /* dead for good */
    uint64_t step;
    uint64_t nprop;
    unsigned fail_per_mille;  /* reclaims answering FAILED (deterministic) */
    uint64_t reclaimed_at[MAXL]; /* the reading a primary judge reclaimed a lease at */
} world;

/* What a judge's callbacks see: `primary` ones keep the world's lease
 * table; every one counts its calls. */
typedef struct jctx {
    world *w;
    bool primary;
    size_t reclaims, granted, policy;
    uint64_t took_over_pass;
    void (*in_reclaim)(struct jctx *c); /* called once the mark landed, before lapsed */
    void *arg;
} jctx;

static int c_reclaim(void *u, dls_bytes subject, uint64_t lease, dls_cause cause, bool commit)
{
    jctx *c = u;
    (void)subject;
    (void)cause;
    (void)commit;
    c->reclaims++;
    if (c->in_reclaim)
        c->in_reclaim(c);
    /* the same answer for the same lease at the same step, whichever judge asks */
    uint64_t x = (lease * 0x9e3779b97f4a7c15ull) ^ (c->w->step * 0xbf58476d1ce4e5b9ull);
    if ((x >> 33) % 1000 < c->w->fail_per_mille)
        return DLS_RECLAIM_FAILED;
    if (c->primary && lease < MAXL)
        c->w->reclaimed_at[lease] = c->w->h.now;
    if (c->primary)
        for (size_t i = 0; i < c->w->nleases; i++)
            if (c->w->leases[i].id == lease)
                c->w->leases[i].live = false;
    return DLS_RECLAIM_DONE;
}

static int c_policy(void *u, const dls_judge_ask *ask, dls_judge_answer *answer)
{
    (void)ask;
    (void)answer;
    ((jctx *)u)->policy++;
    return 0;
}

static void c_granted(void *u, const dls_judge_lease_info *li)
{
    jctx *c = u;
    c->granted++;
    if (!c->primary || c->w->nleases >= MAXL)
        return;
    size_t holder = 0; /* "holder-<k>" */
    for (size_t i = strlen("holder-"); i < li->holder.n; i++)
        holder = holder * 10 + (size_t)(li->holder.p[i] - '0');
    c->w->leases[c->w->nleases++] = (wlease){li->lease, holder, li->medium, true};
}

static void c_took_over(void *u, uint64_t pass)
{
    ((jctx *)u)->took_over_pass = pass;
}

static dls_judge_callbacks callbacks(void)
{
    return (dls_judge_callbacks){.reclaim = c_reclaim, .policy = c_policy,
                                 .granted = c_granted, .took_over = c_took_over};
}

static void world_init(world *w, bool lock_path, unsigned fail_per_mille)
{
    memset(w, 0, sizeof *w);
    jh_options o = {.ring_capacity = 65536, .lock = lock_path};
    jh_init(&w->h, NMED, NHOLD, &o);
    w->h.s.cadence_ns = 1000 * MS;
    w->fail_per_mille = fail_per_mille;
}

static dls_judge *open_judge(world *w, const dls_judge_settings *s, jctx *c)
{
    dls_judge *j = NULL;
    dls_where wh = {0};
    dls_judge_callbacks cb = callbacks();
    int rc = dls_judge_new(&j, s, &cb, c, &wh);
    if (rc)
        fprintf(stderr, "dls_judge_new: %s (%s)\n", dls_strerror(rc), wh.reason ? wh.reason : "");
    assert_int_equal(rc, 0);
    (void)w;
    return j;
}

static dls_judge *open_standby(world *w, jctx *c)
{
    dls_judge_settings s = w->h.s;
    s.standby = true;
    return open_judge(w, &s, c);
}

/* One step of inputs: a tick, the holders' proposals, renewals, releases,
 * deaths and returns; `ends` (n of them) get the owner's policy ends. */
static void world_inputs(world *w, dls_judge **ends, size_t n)
{
    w->step++;
    h_tick(&w->h, w->h.now + 200 * MS + below(1000) * MS);
    for (size_t k = 0; k < NHOLD; k++) {
        if (w->dead[k]) {
            w->dead[k] = !chance(100) || w->gone[k];
            continue;
        }
        if (chance(15)) {
            w->dead[k] = true; /* dies: stops renewing its leases */
            continue;
        }
        if (chance(250)) {
            char subj[16], prop[32];
            snprintf(subj, sizeof subj, "s-%u", (unsigned)below(NSUBJ));
            snprintf(prop, sizeof prop, "p-%zu-%" PRIu64, k, ++w->nprop);
            h_propose(&w->h, k, below(NMED), subj, prop, 1000 + below(3000));
        }
    }
    for (size_t i = 0; i < w->nleases; i++) {
        wlease *l = &w->leases[i];
        if (!l->live || w->dead[l->holder])
            continue;
        if (chance(30)) {
            h_release(&w->h, l->holder, l->medium, l->id, chance(500));
            l->live = false;
        } else if (chance(750)) {
            h_renew(&w->h, l->holder, l->medium, l->id);
        }
    }
    if (w->nleases && chance(20)) {
        wlease *l = &w->leases[below(w->nleases)];
        for (size_t i = 0; l->live && i < n; i++)
            (void)dls_judge_end(ends[i], l->id);
    }
}

static void pass_ok(dls_judge *j, dls_judge_pass_result *r)
{
    dls_judge_pass_result local;
    int rc = dls_judge_pass(j, r ? r : &local);
    if (rc)
        fprintf(stderr, "pass: %s\n", dls_strerror(rc));
    assert_int_equal(rc, 0);
}

/* ---- the ledger, field by field ------------------------------------------------------------- */

typedef struct lsnap {
    bool present, unknown_flag;
    dls_judge_lease_info i;
    uint8_t subject[80], holder[80];
} lsnap;

typedef struct snap {
    uint64_t highest, last_pass;
    size_t live, n;
    lsnap *l;
} snap;

static void take(dls_judge *j, snap *s)
{
    s->highest = dls_judge_highest_lease(j);
    s->last_pass = dls_judge_last_pass(j);
    s->live = dls_judge_live(j);
    s->n = s->highest + 1;
    s->l = calloc(s->n, sizeof *s->l);
    assert_non_null(s->l);
    for (uint64_t id = 1; id <= s->highest; id++) {
        lsnap *x = &s->l[id];
        if (dls_judge_lease(j, id, &x->i) != 0)
            continue;
        x->present = true;
        uint32_t ix = jl_lease_find(j, id);
        x->unknown_flag = ix != JNIL && (jl_lease_at(j, ix)->flags & JL_UNKNOWN);
        assert_true(x->i.subject.n <= sizeof x->subject && x->i.holder.n <= sizeof x->holder);
        memcpy(x->subject, x->i.subject.p, x->i.subject.n);
        memcpy(x->holder, x->i.holder.p, x->i.holder.n);
        x->i.subject.p = x->subject;
        x->i.holder.p = x->holder;
    }
}

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
        assert_int_equal(x->unknown_flag, y->unknown_flag);
        if (x->unknown_flag)
            assert_int_equal(x->i.resumed, y->i.resumed);
        assert_int_equal(x->i.pending, y->i.pending);
        assert_int_equal(x->i.cause, y->i.cause);
    }
}

/* ---- following equals restart at every prefix --------------------------------------------- */

typedef struct follow_ctx {
    world *w;
    dls_judge *standby;
    jctx *sbc;
    char scratch_lock[300];
    size_t compared;
    size_t mid_pass;          /* compared from inside the owner's reclaim */
    unsigned mid_per_mille;   /* how often a reclaim call compares */
    bool checkpoints;
} follow_ctx;

/* The standby steps, then a judge restarted on the journal as it is now
 * (its own lock file: the owning judge holds the journal's) is compared
 * with it, field by field (judge.md rev 5, Following). */
static void compare_now(follow_ctx *f)
{
    dls_judge_pass_result r;
    pass_ok(f->standby, &r);
    assert_true(r.standby);
    assert_false(r.took_over);
    assert_int_equal(r.appended, 0);
    dls_judge_settings s = f->w->h.s;
    s.journal_lock_path = f->scratch_lock;
    jctx rc = {.w = f->w};
    dls_judge *fresh = open_judge(f->w, &s, &rc);
    snap a, b;
    take(f->standby, &a);
    take(fresh, &b);
    same(&a, &b);
    free(a.l);
    free(b.l);
    dls_judge_del(fresh);
    dls_judge_standby_info si;
    assert_int_equal(dls_judge_standby_status(f->standby, &si), 0);
    assert_true(si.standby);
    assert_int_equal(si.behind_records, 0); /* it read the journal to its end */
    /* include/daolease/judge_view.h: a following standby drains no medium
     * itself (its view answers, position 0), as the metrics read it */
    for (size_t i = 0; i < s.nmedia; i++) {
        dls_judge_medium_view v;
        assert_int_equal(dls_judge_medium_view_of(f->standby, i, &v), 0);
        assert_int_equal(v.position, 0);
    }
    f->compared++;
}

static void in_reclaim_compare(jctx *c)
{
    follow_ctx *f = c->arg;
    if (chance(f->mid_per_mille)) {
        compare_now(f); /* the mark listing the due leases landed, lapsed not yet */
        f->mid_pass++;
    }
}

static uint64_t seed_from_env(void)
{
    const char *e = getenv("DLS_SEED");
    uint64_t seed = e ? strtoull(e, NULL, 10) : (uint64_t)time(NULL) ^ (uint64_t)clock();
    return seed;
}

static size_t follow_property(bool checkpoints, uint64_t seed, size_t passes)
{
    rng_state = seed;
    world w;
    world_init(&w, true, 120);
    if (checkpoints)
        w.h.s.checkpoint_dir = w.h.ckpt_dir;
    follow_ctx f = {.w = &w, .checkpoints = checkpoints,
                    .mid_per_mille = getenv("DLS_UNDER_VALGRIND") ? 1000 : 300};
    snprintf(f.scratch_lock, sizeof f.scratch_lock, "%s/restart.lock", w.h.dir);
    jctx ac = {.w = &w, .primary = true, .in_reclaim = in_reclaim_compare, .arg = &f};
    dls_judge *active = open_judge(&w, &w.h.s, &ac);
    /* a standby started before the first pass, another one later (from a
     * checkpoint when there is one) */
    jctx sc = {.w = &w};
    f.standby = open_standby(&w, &sc);
    for (size_t p = 0; p < passes; p++) {
        world_inputs(&w, &active, 1);
        pass_ok(active, NULL);
        if (checkpoints && chance(100)) {
            dls_judge_checkpoint_info ci;
            assert_int_equal(dls_judge_checkpoint(active, w.h.ckpt_dir, &ci, NULL), 0);
        }
        if (p == passes / 2) { /* a second standby, from the newest checkpoint */
            dls_judge_del(f.standby);
            f.standby = open_standby(&w, &sc);
        }
        compare_now(&f);
    }
    /* a standby never calls back (judge.md rev 5, Following) */
    assert_int_equal(sc.reclaims + sc.granted + sc.policy, 0);
    assert_true(f.compared >= passes);
    dls_judge_del(f.standby);
    dls_judge_del(active);
    h_fini(&w.h);
    return f.mid_pass;
}

static void test_follow_equals_restart(void **state)
{
    (void)state;
    uint64_t seed = seed_from_env();
    fprintf(stderr, "test_standby: seed %" PRIu64 " (DLS_SEED=%" PRIu64 " replays it)\n", seed,
            seed);
    bool vg = getenv("DLS_UNDER_VALGRIND") != NULL; /* fewer under memcheck */
    size_t passes = vg ? 24 : 150, mid = 0;
    for (int k = 0; k < (vg ? 1 : 3); k++) {
        mid += follow_property(false, seed + (uint64_t)k, passes);
        mid += follow_property(true, seed + 100 + (uint64_t)k, passes);
    }
    assert_true(mid > 0); /* some prefixes ended between a mark and its lapsed */
}

/* ---- takeover writes the restarted judge's journal ------------------------------------------- */

static void copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    assert_non_null(a);
    assert_non_null(b);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0)
        assert_int_equal(fwrite(buf, 1, n, b), n);
    fclose(a);
    assert_int_equal(fclose(b), 0);
}

typedef struct recs {
    uint8_t **p;
    size_t *n;
    size_t count;
} recs;

static void read_all(dls_medium *m, recs *r)
{
    memset(r, 0, sizeof *r);
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    dls_record rec;
    while (dls_cursor_next(c, &rec, NULL) == DLS_NEXT_OK) {
        r->p = realloc(r->p, (r->count + 1) * sizeof *r->p);
        r->n = realloc(r->n, (r->count + 1) * sizeof *r->n);
        r->p[r->count] = malloc(rec.n);
        memcpy(r->p[r->count], rec.p, rec.n);
        r->n[r->count++] = rec.n;
    }
    dls_cursor_del(c);
}

static void recs_free(recs *r)
{
    for (size_t i = 0; i < r->count; i++)
        free(r->p[i]);
    free(r->p);
    free(r->n);
}

/* The fact inside a journal envelope. */
static dls_bytes fact_of(dls_resolver *v, const uint8_t *p, size_t n)
{
    dls_attribution a;
    dls_resolver_attribute(v, p, n, &a);
    assert_true(a.attributed);
    return a.fact;
}

/* judge.md, Journal: "dao.judge/takeover": true is written last on the
 * first record of the takeover's mark. The expected bytes: the restarted
 * judge's map with one more key, that key and true appended. */
static void expect_takeover_fact(dls_bytes restarted, dls_bytes takeover)
{
    static const char key[] = "dao.judge/takeover";
    assert_true(restarted.n > 1 && (restarted.p[0] & 0xf0) == 0x80); /* a fixmap */
    assert_true((restarted.p[0] & 0x0f) < 15);
    size_t kn = strlen(key);
    assert_int_equal(takeover.n, restarted.n + 1 + kn + 1);
    assert_int_equal(takeover.p[0], restarted.p[0] + 1);
    assert_memory_equal(takeover.p + 1, restarted.p + 1, restarted.n - 1);
    assert_int_equal(takeover.p[restarted.n], 0xa0 | kn);
    assert_memory_equal(takeover.p + restarted.n + 1, key, kn);
    assert_int_equal(takeover.p[restarted.n + 1 + kn], 0xc3);
    dls_mark_view v;
    assert_int_equal(dls_mark_decode(takeover.p, takeover.n, &v, NULL), 0);
    assert_true(v.restarted && v.takeover);
    assert_int_equal(dls_mark_decode(restarted.p, restarted.n, &v, NULL), 0);
    assert_true(v.restarted && !v.takeover);
}

/* judge.md rev 5, Standby judges (Audit): a takeover mark is a restart
 * for every rule and is counted. The journal must audit clean. */
static void audit_takeovers(harness *h, size_t expect_takeovers)
{
    dls_audit_settings set;
    dls_audit_settings_default(&set);
    dls_audit_medium am[NMED];
    for (size_t i = 0; i < h->nmedia; i++)
        am[i] = (dls_audit_medium){h->media[i], NULL};
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    assert_int_equal(dls_keyring_add(kr, (const uint8_t *)"arbiter", 7, DLS_KEY_ED25519,
                                     dls_secret_public(h->grantor)),
                     0);
    for (size_t i = 0; i < NHOLD; i++) {
        const char *name = dls_secret_name(h->holders[i]);
        assert_int_equal(dls_keyring_add(kr, (const uint8_t *)name, strlen(name),
                                         DLS_KEY_ED25519, dls_secret_public(h->holders[i])),
                         0);
    }
    dls_audit *a = NULL;
    dls_where w = {0};
    int rc = dls_audit_run(&a, &set, h->journal, "arbiter", kr, am, h->nmedia, &w);
    dls_keyring_del(kr);
    assert_int_equal(rc, 0);
    const dls_audit_summary *s = dls_audit_summary_of(a);
    for (size_t i = 0; i < s->n_failure_details; i++)
        fprintf(stderr, "audit: %s\n", s->failure_details[i]);
    assert_int_equal(dls_audit_exit_status(a), 0);
    assert_int_equal(s->n_takeovers, expect_takeovers);
    assert_int_equal(s->n_restarts, 1 + expect_takeovers); /* the first pass, the takeovers */
    if (expect_takeovers)
        assert_int_equal(s->takeovers[0], s->restarts[1]);
    dls_audit_del(a);
}

/* One run: an owner judge for `kill_at` steps (its last pass's reclaims
 * failing when `mid` — its mark lists them, no lapsed follows: the owner
 * died between the two), then the standby takes over while a judge
 * restarted on a copy of the journal at that point runs on the same
 * inputs; both for `after` more steps. The journals must agree. */
static void takeover_run(uint64_t seed, size_t kill_at, bool mid, size_t after)
{
    rng_state = seed;
    world w;
    world_init(&w, false, 80);
    jctx ac = {.w = &w, .primary = true}, sc = {.w = &w}, rc = {.w = &w};
    dls_judge *active = open_judge(&w, &w.h.s, &ac);
    dls_judge *sb = open_standby(&w, &sc);
    for (size_t p = 0; p < kill_at; p++) {
        world_inputs(&w, &active, 1);
        if (mid && p + 1 == kill_at)
            w.fail_per_mille = 1000;
        pass_ok(active, NULL);
        if (chance(500))
            pass_ok(sb, NULL); /* follows at its own pace */
    }
    w.fail_per_mille = 80;
    /* The owner's process ends: its lock goes with it. */
    dls_judge_del(active);
    char copy[300], lock[300];
    snprintf(copy, sizeof copy, "%s/restarted.dls", w.h.dir);
    snprintf(lock, sizeof lock, "%s/restarted.lock", w.h.dir);
    copy_file(w.h.journal_path, copy);
    dls_medium *cj;
    assert_int_equal(dls_medium_open(&cj, copy, DLS_OPEN_APPEND, NULL, NULL), 0);
    dls_judge_settings rs = w.h.s;
    rs.journal = cj;
    rs.journal_lock_path = lock;
    dls_judge *fresh = open_judge(&w, &rs, &rc);
    dls_judge *both[2] = {sb, fresh};
    assert_int_equal(sc.reclaims + sc.granted + sc.policy, 0); /* a standby never calls back */
    for (size_t p = 0; p <= after; p++) {
        if (p > 0)
            world_inputs(&w, both, 2);
        dls_judge_pass_result r1, r2;
        pass_ok(sb, &r1);
        pass_ok(fresh, &r2);
        if (p == 0) {
            assert_true(r1.took_over);
            assert_false(r1.standby);
            assert_true(r1.restarted && r2.restarted);
            assert_int_equal(sc.took_over_pass, r1.pass);
        }
        assert_int_equal(r1.pass, r2.pass);
        assert_int_equal(r1.appended, r2.appended);
    }
    assert_int_equal(sc.reclaims, rc.reclaims);
    assert_int_equal(sc.granted, rc.granted);
    /* the journals, record by record */
    dls_resolver *v;
    assert_int_equal(dls_resolver_new_signed(&v, dls_medium_id(w.h.journal), w.h.kr), 0);
    dls_keyring *gk;
    assert_int_equal(dls_keyring_new(&gk), 0);
    assert_int_equal(dls_keyring_add(gk, (const uint8_t *)"arbiter", 7, DLS_KEY_ED25519,
                                     dls_secret_public(w.h.grantor)),
                     0);
    dls_resolver_del(v);
    assert_int_equal(dls_resolver_new_signed(&v, dls_medium_id(w.h.journal), gk), 0);
    recs a, b;
    read_all(w.h.journal, &a);
    read_all(cj, &b);
    assert_int_equal(a.count, b.count);
    bool seen = false;
    for (size_t i = 0; i < a.count; i++) {
        if (a.n[i] == b.n[i] && memcmp(a.p[i], b.p[i], a.n[i]) == 0)
            continue;
        if (seen)
            fprintf(stderr, "record %zu of %zu differs (%zu / %zu bytes)\n", i, a.count, a.n[i],
                    b.n[i]);
        assert_false(seen); /* exactly one record differs: the takeover's mark */
        seen = true;
        expect_takeover_fact(fact_of(v, b.p[i], b.n[i]), fact_of(v, a.p[i], a.n[i]));
    }
    assert_true(seen);
    recs_free(&a);
    recs_free(&b);
    audit_takeovers(&w.h, 1);
    dls_resolver_del(v);
    dls_keyring_del(gk);
    dls_judge_del(sb);
    dls_judge_del(fresh);
    dls_medium_del(cj);
    h_fini(&w.h);
}

static void test_takeover_journal_is_restarts(void **state)
{
    (void)state;
    uint64_t seed = seed_from_env();
    fprintf(stderr, "test_standby: seed %" PRIu64 "\n", seed);
    rng_state = seed;
    bool vg = getenv("DLS_UNDER_VALGRIND") != NULL; /* fewer under memcheck */
    for (int k = 0; k < (vg ? 2 : 6); k++) {
        size_t kill_at = 5 + (size_t)(rnd() % (vg ? 20 : 60));
        takeover_run(seed + 1000 + (uint64_t)k, kill_at, k % 2 == 1, vg ? 15 : 40);
    }
}

/* ---- a dead holder's lease: the same reading with or without a takeover ---------------------- */

/* Holder 0 takes s-0, renews it for a while and dies; the others keep
 * busy. Answers the reading at which its lease was reclaimed. */
static uint64_t dead_holder_run(bool takeover, size_t kill_at)
{
    rng_state = 42;
    world w;
    world_init(&w, false, 0);
    jctx ac = {.w = &w, .primary = true}, sc = {.w = &w};
    dls_judge *active = open_judge(&w, &w.h.s, &ac);
    dls_judge *sb = takeover ? open_standby(&w, &sc) : NULL;
    h_tick(&w.h, 1000 * MS);
    h_propose(&w.h, 0, 0, "s-0", "p-first", 2000);
    pass_ok(active, NULL);
    assert_true(w.nleases == 1 && w.leases[0].id == 1);
    dls_judge *j = active;
    jctx *c = &ac;
    for (size_t p = 0; p < 60; p++) {
        w.dead[0] = w.gone[0] = p >= 8; /* renews for 8 steps, then dies */
        if (takeover && p == kill_at) {
            dls_judge_del(active); /* the owner dies; the standby takes over */
            j = sb;
            c = &sc;
            sc.primary = true;
        }
        world_inputs(&w, NULL, 0); /* no owner ends: a standby refuses them */
        dls_judge_pass_result r;
        pass_ok(j, &r);
        if (sb && j != sb)
            pass_ok(sb, NULL);
        if (j == sb && p == kill_at)
            assert_true(r.took_over);
    }
    (void)c;
    uint64_t at = w.reclaimed_at[1];
    assert_true(at > 0);
    dls_judge_del(j);
    h_fini(&w.h);
    return at;
}

static void test_dead_holder_same_reading(void **state)
{
    (void)state;
    uint64_t plain = dead_holder_run(false, 0);
    for (size_t kill_at = 6; kill_at < 16; kill_at += 3) {
        uint64_t t = dead_holder_run(true, kill_at);
        /* judge.md rev 5: the same reading (± one cadence) */
        uint64_t d = t > plain ? t - plain : plain - t;
        assert_true(d <= 1000 * MS);
    }
}

/* ---- two standbys: exactly one takes over ------------------------------------------------------ */

static void test_two_standbys_one_takes_over(void **state)
{
    (void)state;
    rng_state = 7;
    world w;
    world_init(&w, false, 50);
    jctx ac = {.w = &w, .primary = true}, s1 = {.w = &w}, s2 = {.w = &w};
    dls_judge *active = open_judge(&w, &w.h.s, &ac);
    dls_judge *a = open_standby(&w, &s1), *b = open_standby(&w, &s2);
    for (size_t p = 0; p < 20; p++) {
        world_inputs(&w, &active, 1);
        pass_ok(active, NULL);
        pass_ok(a, NULL);
        pass_ok(b, NULL);
    }
    dls_judge_del(active);
    world_inputs(&w, NULL, 0);
    dls_judge_pass_result ra, rb;
    pass_ok(b, &rb); /* either may be first: here the second one */
    pass_ok(a, &ra);
    assert_true(rb.took_over);
    assert_false(ra.took_over);
    assert_true(ra.standby);
    s2.primary = true;
    for (size_t p = 0; p < 20; p++) {
        world_inputs(&w, &b, 1);
        pass_ok(b, &rb);
        pass_ok(a, &ra);
        assert_false(rb.standby);
        assert_true(ra.standby && !ra.took_over);
        assert_int_equal(ra.pass, rb.pass); /* it follows the new judge */
    }
    dls_judge_standby_info si;
    assert_int_equal(dls_judge_standby_status(a, &si), 0);
    assert_true(si.standby && !si.took_over && !si.holds_lock);
    assert_int_equal(dls_judge_standby_status(b, &si), 0);
    assert_true(!si.standby && si.took_over);
    assert_int_equal(s1.reclaims + s1.granted, 0);
    audit_takeovers(&w.h, 1);
    dls_judge_del(a);
    dls_judge_del(b);
    h_fini(&w.h);
}

/* ---- assembly: a standby's inputs are the journal's ----------------------------------------- */

static int try_standby(world *w, dls_judge_settings *s, dls_where *wh)
{
    s->standby = true;
    dls_judge *j = NULL;
    jctx c = {.w = w};
    dls_judge_callbacks cb = callbacks();
    int rc = dls_judge_new(&j, s, &cb, &c, wh);
    dls_judge_del(j);
    return rc;
}

static void test_standby_refusals(void **state)
{
    (void)state;
    rng_state = 9;
    world w;
    world_init(&w, false, 0);
    jctx ac = {.w = &w, .primary = true};
    dls_judge *active = open_judge(&w, &w.h.s, &ac);
    for (size_t p = 0; p < 5; p++) {
        world_inputs(&w, &active, 1);
        pass_ok(active, NULL);
    }
    dls_where wh;
    /* another grantor: its replay meets records it did not sign */
    dls_secret *other;
    uint8_t seed[32];
    memset(seed, 9, sizeof seed);
    assert_int_equal(dls_secret_from_seed(&other, "arbiter", DLS_KEY_ED25519, seed), 0);
    dls_judge_settings s = w.h.s;
    s.grantor = other;
    memset(&wh, 0, sizeof wh);
    assert_int_equal(try_standby(&w, &s, &wh), DLS_ERR_JOURNAL);
    assert_non_null(strstr(wh.reason, "not signed by the grantor"));
    dls_secret_del(other);
    /* another reading basis */
    s = w.h.s;
    dls_judge_tick_source t = w.h.tick;
    t.basis = "another-boot";
    s.ticks = &t;
    memset(&wh, 0, sizeof wh);
    assert_int_equal(try_standby(&w, &s, &wh), DLS_ERR_CONFIG);
    assert_non_null(strstr(wh.reason, "basis"));
    /* the media in another order, or one missing */
    dls_judge_medium swapped[NMED] = {w.h.jm[1], w.h.jm[0]};
    s = w.h.s;
    s.media = swapped;
    memset(&wh, 0, sizeof wh);
    assert_int_equal(try_standby(&w, &s, &wh), DLS_ERR_CONFIG);
    assert_non_null(strstr(wh.reason, "media"));
    s = w.h.s;
    s.nmedia = 1;
    assert_int_equal(try_standby(&w, &s, NULL), DLS_ERR_CONFIG);
    /* lost_ledger is for the judge that starts a new journal */
    s = w.h.s;
    s.lost_ledger = true;
    assert_int_equal(try_standby(&w, &s, NULL), DLS_ERR_CONFIG);
    /* an evict-oldest journal (judge.md, Assembly) */
    s = w.h.s;
    dls_medium *ring = ring_with_id(0x77, 64);
    s.journal = ring;
    memset(&wh, 0, sizeof wh);
    assert_int_equal(try_standby(&w, &s, &wh), DLS_ERR_RETENTION);
    dls_medium_del(ring);
    /* the same inputs: accepted; it never acts for the owner */
    s = w.h.s;
    s.standby = true;
    jctx c = {.w = &w};
    dls_judge *sb = open_judge(&w, &s, &c);
    val subj = str_val("s-9");
    dls_bytes holder = {(const uint8_t *)"holder-0", 8};
    assert_int_equal(dls_judge_end(sb, 1), DLS_ERR_STATE);
    assert_int_equal(dls_judge_grant(sb, (dls_bytes){subj.b, subj.n}, holder, 0, NULL, NULL, NULL),
                     DLS_ERR_STATE);
    dls_judge_checkpoint_info ci;
    assert_int_equal(dls_judge_checkpoint(sb, w.h.ckpt_dir, &ci, NULL), DLS_ERR_STATE);
    dls_judge_standby_info si;
    assert_int_equal(dls_judge_standby_status(sb, &si), 0);
    assert_true(si.standby && !si.holds_lock);
    assert_int_equal(si.journal_pass, dls_judge_last_pass(active));
    /* behind: the owner's next pass is on the journal, not yet applied */
    world_inputs(&w, &active, 1);
    dls_judge_pass_result r;
    pass_ok(active, &r);
    assert_true(r.appended > 0);
    assert_int_equal(dls_judge_standby_status(sb, &si), 0);
    assert_int_equal(si.behind_records, r.appended);
    assert_int_equal(si.behind_passes, 1);
    assert_true(si.behind_bytes > si.behind_records);
    pass_ok(sb, &r);
    assert_true(r.standby);
    assert_int_equal(r.appended, 0);
    assert_int_equal(dls_judge_standby_status(sb, &si), 0);
    assert_int_equal(si.behind_records, 0);
    assert_int_equal(si.steps, 1);
    dls_judge_del(sb);
    dls_judge_del(active);
    h_fini(&w.h);
}

/* judge.md rev 4, Checkpoints (Retention) and rev 5: a segmented journal
 * whose early segments its judge trimmed after checkpoints is followed
 * only from a committed checkpoint; without one the standby is refused as
 * a restart is. With one it follows and takes over. */
static void test_trimmed_journal_needs_checkpoints(void **state)
{
    (void)state;
    rng_state = 13;
    world w;
    world_init(&w, false, 0);
    char segdir[300];
    snprintf(segdir, sizeof segdir, "%s/journal.seg", w.h.dir);
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.segment_bytes = 4096;
    dls_medium *seg;
    assert_int_equal(dls_medium_create(&seg, DLS_MEDIUM_SEGMENTED, segdir, &ms, NULL), 0);
    w.h.s.journal = seg;
    w.h.s.checkpoint_dir = w.h.ckpt_dir;
    jctx ac = {.w = &w, .primary = true}, sc = {.w = &w};
    dls_judge *active = open_judge(&w, &w.h.s, &ac);
    uint64_t before = 0;
    for (size_t p = 0; p < 120; p++) {
        world_inputs(&w, &active, 1);
        pass_ok(active, NULL);
        if (p % 20 == 19) {
            assert_int_equal(dls_judge_checkpoint(active, w.h.ckpt_dir, NULL, NULL), 0);
            assert_int_equal(dls_judge_prune_checkpoints(active, w.h.ckpt_dir, 2, NULL, NULL), 0);
            uint64_t b = 0;
            assert_int_equal(dls_judge_trim_journal(active, w.h.ckpt_dir, &b, NULL, NULL), 0);
            before = b > before ? b : before;
        }
    }
    assert_true(before > 0); /* segments were trimmed */
    dls_judge_settings s = w.h.s;
    s.checkpoint_dir = NULL;
    dls_where wh = {0};
    assert_int_equal(try_standby(&w, &s, &wh), DLS_ERR_JOURNAL);
    assert_non_null(strstr(wh.reason, "not retained from position 0"));
    dls_judge *sb = open_standby(&w, &sc);
    for (size_t p = 0; p < 10; p++) {
        world_inputs(&w, &active, 1);
        pass_ok(active, NULL);
        pass_ok(sb, NULL);
    }
    dls_judge_del(active);
    sc.primary = true;
    world_inputs(&w, NULL, 0);
    dls_judge_pass_result r;
    pass_ok(sb, &r);
    assert_true(r.took_over && r.restarted && r.mark);
    dls_judge_del(sb);
    dls_medium_del(seg);
    h_fini(&w.h);
}

/* A standby alone on a journal: the lock is free at assembly; its first
 * pass takes over (and a judge started then is refused). */
static void test_standby_alone_takes_over(void **state)
{
    (void)state;
    rng_state = 11;
    world w;
    world_init(&w, false, 0);
    jctx ac = {.w = &w, .primary = true}, sc = {.w = &w};
    dls_judge *active = open_judge(&w, &w.h.s, &ac);
    world_inputs(&w, &active, 1);
    pass_ok(active, NULL);
    dls_judge_del(active);
    dls_judge *sb = open_standby(&w, &sc);
    dls_judge_standby_info si;
    assert_int_equal(dls_judge_standby_status(sb, &si), 0);
    assert_true(si.standby && si.holds_lock);
    assert_int_equal(dls_judge_new(&active, &w.h.s, &(dls_judge_callbacks){.reclaim = c_reclaim},
                                   &ac, NULL),
                     DLS_ERR_JOURNAL_LOCKED);
    world_inputs(&w, NULL, 0);
    dls_judge_pass_result r;
    pass_ok(sb, &r);
    assert_true(r.took_over && r.restarted && r.mark);
    assert_int_equal(r.pass, 2);
    dls_judge_del(sb);
    h_fini(&w.h);
}

/* judge.md rev 5, Standby judges ("takes over when the writer role is
 * freed"): the judge's lifetime lock and its journal's writer lock are let
 * go one after the other. A standby that obtains the lifetime lock while
 * the writer lock is still held (the judge's handle not yet closed) keeps
 * following, lets the lifetime lock go, and takes over once the writer
 * lock is free too — it never stops for that. */
static void test_standby_waits_for_the_writer_lock(void **state)
{
    (void)state;
    rng_state = 13;
    world w;
    world_init(&w, false, 0);
    jctx ac = {.w = &w, .primary = true}, sc = {.w = &w};
    dls_judge *active = open_judge(&w, &w.h.s, &ac);
    dls_medium *rd;
    dls_where wh = {0};
    assert_int_equal(dls_medium_open(&rd, w.h.journal_path, DLS_OPEN_READ, NULL, &wh), 0);
    dls_judge_settings ss = w.h.s;
    ss.standby = true;
    ss.journal = rd; /* as `daolease judge --standby` follows a file journal */
    dls_judge *sb = open_judge(&w, &ss, &sc);
    for (size_t p = 0; p < 5; p++) {
        world_inputs(&w, &active, 1);
        pass_ok(active, NULL);
        pass_ok(sb, NULL);
    }
    dls_judge_del(active); /* the lifetime lock goes first here */
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.exclusive = true;
    dls_medium *writer; /* the judge's journal handle, not closed yet */
    assert_int_equal(dls_medium_open(&writer, w.h.journal_path, DLS_OPEN_APPEND, &ms, &wh), 0);
    dls_judge_pass_result r;
    dls_judge_standby_info si;
    for (int k = 0; k < 3; k++) {
        world_inputs(&w, NULL, 0);
        pass_ok(sb, &r);
        assert_true(r.standby && !r.took_over);
        assert_int_equal(dls_judge_standby_status(sb, &si), 0);
        assert_true(si.standby && !si.holds_lock);
    }
    dls_medium_del(writer);
    world_inputs(&w, NULL, 0);
    pass_ok(sb, &r);
    assert_true(r.took_over && r.restarted && r.mark);
    audit_takeovers(&w.h, 1);
    dls_judge_del(sb);
    dls_medium_del(rd);
    h_fini(&w.h);
}

/* judge.md, Assembly (several tick cursors on one reading basis: now is
 * the largest reading) and Standby judges and takeover (revision 5);
 * docs/standby.md, Across machines: the active judge and its standby read
 * two tick streams, one per machine, the active's machine's clock 300 ms
 * ahead of the standby's. Its now is its machine's reading (the largest).
 * When the active dies its stream stops; the standby takes over with now
 * continuing from the dead stream's last reading — not its own, older one:
 * now never goes back (vocabulary.md rule 7) — and follows its own stream
 * once that passes it. The journal audits clean with one takeover. */
static void test_takeover_now_from_other_stream(void **state)
{
    (void)state;
    world w;
    world_init(&w, false, 0);
    dls_medium *tb;
    assert_int_equal(dls_ring_new(&tb, NULL), 0);
    dls_resolver *rb;
    assert_int_equal(dls_resolver_new_medium(&rb, dls_medium_id(tb), "ticker", NULL), 0);
    dls_tick_settings ts;
    dls_tick_settings_default(&ts);
    ts.source = DLS_TICK_MANUAL;
    dls_tick *tick_b;
    assert_int_equal(dls_tick_new(&tick_b, tb, &ts, NULL), 0);
    dls_judge_tick_source src[2] = {w.h.tick, {tb, rb, "ticker", "test-basis", 0}};
    w.h.s.ticks = src;
    w.h.s.nticks = 2;
    jctx ac = {.w = &w, .primary = true}, sc = {.w = &w};
    dls_judge *active = open_judge(&w, &w.h.s, &ac);
    dls_judge *sb = open_standby(&w, &sc);
    const uint64_t skew = 300 * MS;
    uint64_t a_last = 0;
    dls_judge_pass_result r;
    for (uint64_t k = 1; k <= 6; k++) {
        a_last = k * 1000 * MS + skew;
        h_tick(&w.h, a_last); /* machine A's stream, its clock ahead */
        assert_int_equal(dls_tick_append(tick_b, k * 1000 * MS), 0);
        pass_ok(active, &r);
        assert_true(r.has_now && r.now == a_last);
        pass_ok(sb, &r);
        assert_true(r.standby);
    }
    dls_judge_del(active); /* A's machine dies: its judge and its stream stop */
    assert_int_equal(dls_tick_append(tick_b, 6 * 1000 * MS + 100 * MS), 0);
    pass_ok(sb, &r);
    assert_true(r.took_over && r.mark);
    assert_true(r.now == a_last); /* the dead stream's last reading, not B's older one */
    assert_int_equal(dls_tick_append(tick_b, a_last + 400 * MS), 0);
    pass_ok(sb, &r);
    assert_true(!r.standby && r.now == a_last + 400 * MS);
    dls_judge_del(sb);
    audit_takeovers(&w.h, 1);
    dls_tick_del(tick_b);
    h_fini(&w.h);
    dls_resolver_del(rb);
    dls_medium_del(tb);
}

/* ---- heartbeat ---------------------------------------------------------------------------- */

static void test_heartbeat_marks_quiet_passes(void **state)
{
    (void)state;
    world w;
    world_init(&w, false, 0);
    w.h.s.heartbeat_ns = 3000 * MS;
    jctx ac = {.w = &w, .primary = true};
    dls_judge *j = open_judge(&w, &w.h.s, &ac);
    h_tick(&w.h, 10000 * MS);
    dls_judge_pass_result r;
    pass_ok(j, &r);
    assert_true(r.mark); /* the first pass after a start */
    /* quiet passes every 0.5 s: a mark at the first whose now is at least
     * 3 s after the last mark's, not before */
    uint64_t last = 10000 * MS;
    size_t marks = 0;
    for (int k = 1; k <= 20; k++) {
        h_tick(&w.h, 10000 * MS + (uint64_t)k * 500 * MS);
        pass_ok(j, &r);
        bool owed = w.h.now - last >= 3000 * MS;
        assert_int_equal(r.mark, owed);
        if (r.mark) {
            assert_int_equal(r.appended, 1);
            last = w.h.now;
            marks++;
        }
        /* the next heartbeat is what falls due next: an owner sleeping
         * until next_due does not skip it */
        assert_int_equal(r.next_due, last + 3000 * MS);
    }
    assert_int_equal(marks, 3);
    dls_judge_del(j);
    /* without a heartbeat, quiet passes write nothing (judge.md, Journal) */
    w.h.s.heartbeat_ns = 0;
    j = open_judge(&w, &w.h.s, &ac);
    h_tick(&w.h, w.h.now + 500 * MS);
    pass_ok(j, &r);
    for (int k = 1; k <= 10; k++) {
        h_tick(&w.h, w.h.now + 500 * MS);
        pass_ok(j, &r);
        assert_false(r.mark);
        assert_int_equal(r.next_due, DLS_JUDGE_NEVER);
    }
    dls_judge_del(j);
    h_fini(&w.h);
}

/* ---- processes: judge --standby takes over from a killed judge ---------------------------- */

/* Polls `cond` (a shell test) every 100 ms for up to `ms`. */
static bool wait_for(unsigned ms, const char *dir, const char *cond)
{
    for (uint64_t end = mono_ms() + ms; mono_ms() < end; sleep_ms(100))
        if (run_sh("cd %s && %s", dir, cond) == 0)
            return true;
    return false;
}

static void test_cli_standby_takes_over_after_sigkill(void **state)
{
    (void)state;
    const char *bin = getenv("DAOLEASE_BIN");
    if (!bin)
        skip();
    char *d = make_tmpdir();
    assert_int_equal(run_sh("cd %s && for p in arbiter a1; do %s keygen $p >> keyring; done && "
                            "%s stream create a1.dls > /dev/null", d, bin, bin), 0);
    assert_int_equal(
        run_sh("cd %s && printf '%%s' '{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", "
               "\"keyring\": \"keyring\", \"journal\": \"journal.dls\", \"media\": [\"a1.dls\"], "
               "\"duration\": {\"s\": 2}, \"tolerance\": {\"ms\": 250}, "
               "\"cadence\": {\"ms\": 100}, \"create_journal\": true, "
               "\"heartbeat\": {\"ms\": 500}}' > judge.json && "
               "printf '%%s' '{\"party\": \"a1\", \"key\": \"a1.secret\", \"keyring\": \"keyring\", "
               "\"grantor\": \"arbiter\", \"journal\": \"journal.dls\", \"medium\": \"a1.dls\", "
               "\"duration\": {\"s\": 2}}' > run.json", d), 0);
    pid_t active = spawn("cd %s && exec %s judge --config judge.json > j1.out 2> j1.err", d, bin);
    assert_true(wait_for(10000, d, "test -s journal.dls && grep -q status j1.out"));
    pid_t standby =
        spawn("cd %s && exec %s judge --standby --config judge.json > s.out 2> s.err", d, bin);
    /* it says it follows, and how far behind the journal it is */
    assert_true(wait_for(10000, d, "grep -q '\"standby\": true, .*\"behind\": {\"records\"' s.out"));
    /* a stopped, not dead, judge keeps its lock: the standby keeps following
     * (docs/standby.md, What it does not guarantee) */
    assert_int_equal(kill(active, SIGSTOP), 0);
    sleep_ms(2500); /* longer than 3 × heartbeat + tolerance: no guess is made */
    assert_int_equal(run_sh("cd %s && ! grep -q took_over s.out", d), 0);
    assert_int_equal(kill(active, SIGCONT), 0);
    pid_t agent = spawn("cd %s && exec %s run --config run.json --subject s1 -- sleep 4 "
                        "> run.out 2>&1", d, bin);
    assert_true(wait_for(15000, d, "grep -q '\"granted\": 1' j1.out"));
    assert_int_equal(kill(active, SIGKILL), 0);
    assert_int_equal(wait_status(active), 128 + SIGKILL);
    /* one line when it takes over; then it is the judge */
    assert_true(wait_for(10000, d, "grep -q '\"took_over\": \"journal.dls\"' s.out"));
    assert_int_equal(run_sh("cd %s && test $(grep -c took_over s.out) -eq 1", d), 0);
    assert_int_equal(wait_status(agent), 0); /* the agent's lease held across the takeover */
    assert_true(wait_for(15000, d, "grep -q '\"reclaim\": 1, .*\"release\"' s.out"));
    assert_int_equal(kill(standby, SIGTERM), 0);
    assert_int_equal(wait_status(standby), 0);
    /* the journal audits clean and counts the takeover (judge.md rev 5, Audit) */
    assert_int_equal(run_sh("cd %s && %s audit --journal journal.dls --keyring keyring "
                            "--grantor arbiter --media a1.dls --json > audit.out", d, bin), 0);
    assert_int_equal(run_sh("cd %s && grep -q '\"takeovers\": \\[[0-9]*\\]' audit.out", d), 0);
    /* status names the newest takeover and watch prints a line for it
     * (docs/cli.md `status`, `watch`; judge.md rev 5, Standby judges) */
    assert_int_equal(run_sh("cd %s && %s status --journal journal.dls --media a1.dls > st.out && "
                            "grep -q '^last takeover by a standby judge at pass [0-9]* (reading' "
                            "st.out", d, bin), 0);
    /* the same pass in status --json's summary, the one takeover key */
    assert_int_equal(run_sh("cd %s && %s status --journal journal.dls --media a1.dls --json "
                            "> sj.out && P=$(sed -n 's/^last takeover .* at pass \\([0-9]*\\) .*/\\1/p' "
                            "st.out) && grep -q \"\\\"summary\\\": true, .*\\\"takeover\\\": "
                            "{\\\"pass\\\": $P, \\\"now\\\": [0-9]*}\" sj.out",
                            d, bin), 0);
    assert_int_equal(run_sh("cd %s && %s watch --journal journal.dls --no-follow --json > w.out && "
                            "test $(grep -c '\"event\": \"takeover\", \"position\"' w.out) -eq 1",
                            d, bin), 0);
    rm_rf(d);
    free(d);
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_follow_equals_restart),
        cmocka_unit_test(test_takeover_journal_is_restarts),
        cmocka_unit_test(test_dead_holder_same_reading),
        cmocka_unit_test(test_two_standbys_one_takes_over),
        cmocka_unit_test(test_standby_refusals),
        cmocka_unit_test(test_standby_alone_takes_over),
        cmocka_unit_test(test_standby_waits_for_the_writer_lock),
        cmocka_unit_test(test_takeover_now_from_other_stream),
        cmocka_unit_test(test_trimmed_journal_needs_checkpoints),
        cmocka_unit_test(test_heartbeat_marks_quiet_passes),
        cmocka_unit_test(test_cli_standby_takes_over_after_sigkill),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
