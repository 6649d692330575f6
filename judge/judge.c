/* The judge: the pass (judge.md, The pass, steps 1–6; step 7 lives in
 * policy.c, assembly in assembly.c, the journal in journal.c, restart in
 * replay.c).
 */
#include <stdlib.h>
#include <string.h>

#include "judge/internal.h"
#include "judge/leases.h"

/* ---- step 1: ticks -------------------------------------------------------------------- */

static void tick_fact(dls_judge *j, jm_tick *t, dls_bytes fact, bool *have, uint64_t *newest)
{
    dls_judge_pass_result *r = j->res;
    dls_fact f;
    dls_where w = {0};
    if (dls_fact_decode(fact.p, fact.n, &f, &w)) {
        r->defective[w.rule >= 1 && w.rule <= 7 ? w.rule : 1]++;
        return;
    }
    if (f.kind != DLS_FACT_TICK) {
        if (f.kind == DLS_FACT_NONE)
            r->not_lease++;
        else
            r->ignored_misplaced++;
        return;
    }
    if (dls_rule7_observe(&t->r7, &f)) {
        r->defective[7]++;
        return;
    }
    if (!*have || f.reading.ns > *newest)
        *newest = f.reading.ns;
    *have = true;
}

/* A tick record: one fact, or a batch envelope of the adapter's ticks
 * (attribution.md rev 4: each fact as if alone). */
static void tick_record(dls_judge *j, jm_tick *t, const dls_record *rec, bool *have,
                        uint64_t *newest)
{
    dls_judge_pass_result *r = j->res;
    dls_attribution a;
    dls_facts it;
    dls_resolver_attribute_facts(t->r, rec->p, rec->n, &a, &it);
    if (!a.attributed) {
        r->forged++;
        return;
    }
    if (a.author.n != t->adapter_len || memcmp(a.author.p, t->adapter, a.author.n) != 0) {
        r->ignored_wrong_author++; /* a tick from anyone but the adapter */
        return;
    }
    dls_bytes fact;
    while (dls_facts_next(&it, &fact, NULL))
        tick_fact(j, t, fact, have, newest);
}

static void drain_ticks(dls_judge *j)
{
    bool have = false;
    uint64_t newest = 0;
    size_t live = 0;
    for (size_t i = 0; i < j->nticks; i++) {
        jm_tick *t = &j->ticks[i];
        for (bool more = !t->retired; more;) {
            dls_record rec;
            switch (dls_cursor_next(t->c, &rec, NULL)) {
            case DLS_NEXT_OK:
                j->res->ticks++;
                tick_record(j, t, &rec, &have, &newest);
                break;
            case DLS_NEXT_GAP:
                break; /* only the newest reading matters */
            case DLS_NEXT_END:
                t->retired = true;
                more = false;
                break;
            default: /* blocked, transport-error */
                more = false;
                break;
            }
        }
        live += !t->retired;
    }
    if (live == 0)
        j->ticks_ended = true;
    if (have && (!j->now_valid || newest > j->now)) {
        j->now = newest;
        j->now_valid = true;
    }
}

/* ---- step 2: facts -------------------------------------------------------------------- */

static int push_gap(dls_judge *j, const jm_medium *m, uint64_t from, uint64_t to)
{
    dls_mark_gap g;
    memcpy(g.medium, m->id, DLS_MEDIUM_ID_LEN);
    g.from = from;
    g.to = to;
    return jvec_push(&j->gaps, sizeof g, &g);
}

/* The record read past the budget waits for the next pass: a copy, and
 * its position is the medium's next unread one (the mark's drained). */
static int hold(dls_judge *j, jm_medium *m, const dls_record *rec)
{
    m->held.n = 0;
    int rc = jvec_reserve(&m->held, 1, rec->n);
    if (rc)
        return rc;
    memcpy(m->held.p, rec->p, rec->n);
    m->held.n = rec->n;
    m->has_held = true;
    m->held_pos = rec->position;
    m->failed = m->cut = true; /* counts as not drained */
    m->err_pos = rec->position;
    j->res->budget_cuts++;
    j->res->behind++;
    return 0;
}

/* judge.md step 2 (revision 4): drain to blocked, or to the budget counted
 * in facts, never splitting a batch — one that would pass the rest of the
 * budget waits (held) unless it is the first record of the pass; once the
 * budget is used up the judge looks one record ahead, and a medium blocked
 * right then counts as drained. */
static int drain_records(dls_judge *j, uint16_t mi)
{
    jm_medium *m = &j->media[mi];
    dls_judge_pass_result *r = j->res;
    m->failed = m->cut = false;
    size_t used = 0;
    bool first = true;
    int rc;
    if (m->has_held) { /* left by the previous pass: first of this one */
        m->has_held = false;
        size_t k = ja_facts(m->held.p, m->held.n);
        r->drained++;
        r->facts += k;
        m->drained++;
        m->facts += k;
        used += k;
        first = false;
        j->moved = true;
        if ((rc = ja_apply(j, mi, m->held.p, m->held.n, j->now, false)) != 0)
            return rc;
    }
    while (!m->retired) {
        dls_record rec;
        switch (dls_cursor_next(m->c, &rec, NULL)) {
        case DLS_NEXT_OK: {
            size_t k = ja_facts(rec.p, rec.n);
            if (j->budget && !first && used + k > j->budget)
                return hold(j, m, &rec);
            first = false;
            used += k;
            r->drained++;
            r->facts += k;
            m->drained++;
            m->facts += k;
            j->moved = true;
            if ((rc = ja_run_add(j, mi, rec.p, rec.n, j->now, k)) != 0)
                return rc;
            break;
        }
        case DLS_NEXT_GAP:
            if ((rc = ja_run_flush(j)) != 0) /* the records before the gap first */
                return rc;
            r->gaps++;
            m->gaps++;
            j->moved = true;
            if ((rc = push_gap(j, m, rec.gap_from, rec.position)) != 0)
                return rc;
            ja_gap(j, mi, j->now);
            break;
        case DLS_NEXT_END:
            m->retired = true;
            return 0;
        case DLS_NEXT_ERROR:
            m->failed = true;
            m->err_pos = rec.position;
            return 0;
        default:
            return 0;
        }
    }
    return 0;
}

/* Records are applied in runs (ja_run_add): the run is flushed before a
 * gap and before the medium's drain ends, so every record counts in read
 * order and within its medium's drain. */
static int drain_medium(dls_judge *j, uint16_t mi)
{
    int rc = drain_records(j, mi);
    int frc = ja_run_flush(j);
    return rc ? rc : frc;
}

/* The medium's next unread position: a held record's, else the cursor's. */
uint64_t jm_position(const jm_medium *m)
{
    return m->has_held ? m->held_pos : dls_cursor_position(m->c);
}

/* A medium that drained cleanly ends its failing run: the leases parked on
 * it are judged again from this pass on. */
static void unpark(dls_judge *j, jm_medium *m)
{
    for (size_t i = 0; i < m->parked.n; i++) {
        jl_parked p = JVEC_AT(m->parked, jl_parked, i);
        if (p.idx >= j->leases.next)
            continue;
        jl_lease *l = jl_lease_at(j, p.idx);
        if (!(l->flags & JL_USED) || l->id != p.id)
            continue;
        l->flags &= ~(uint32_t)JL_PARKED;
        if (l->heap_pos != JNIL)
            dls_heap_update(&j->deadlines, l->heap_pos, jl_deadline(j, l));
    }
    m->parked.n = 0;
}

static int drain_facts(dls_judge *j)
{
    for (size_t i = 0; i < j->nmedia; i++) {
        int rc = drain_medium(j, (uint16_t)i);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < j->nmedia; i++) {
        jm_medium *m = &j->media[i];
        if (m->failed) {
            j->any_error = true;
            j->res->transport_errors++;
            if (!m->in_run) {
                m->in_run = true;
                m->fail_since = j->now;
            }
        } else {
            m->in_run = false;
            unpark(j, m);
        }
    }
    return 0;
}

/* ---- step 3: classify ----------------------------------------------------------------- */

/* The next key of a lease that is not due at now; a lease whose silence
 * judgement its failing medium suspends is parked there until the medium
 * drains again. */
static int rekey(dls_judge *j, uint32_t idx, jl_lease *l, uint64_t now)
{
    bool suspended = false;
    uint64_t key = jl_next_key(j, l, now, &suspended);
    if (suspended && !(l->flags & JL_PARKED)) {
        jl_parked p = {l->id, idx};
        int rc = jvec_push(&j->media[l->medium].parked, sizeof p, &p);
        if (rc)
            return rc;
        l->flags |= JL_PARKED;
    }
    if (key <= now)
        key = dls_add_sat(now, 1); /* never spin: judged again next pass */
    dls_heap_update(&j->deadlines, l->heap_pos, key);
    return 0;
}

static int cmp_lease_id(const void *a, const void *b, void *ctx)
{
    const dls_judge *j = ctx;
    uint64_t x = jl_lease_at(j, *(const uint32_t *)a)->id;
    uint64_t y = jl_lease_at(j, *(const uint32_t *)b)->id;
    return x < y ? -1 : x > y;
}

void jl_sort_by_id(dls_judge *j, jvec *v)
{
    if (v->n > 1)
        qsort_r(v->p, v->n, sizeof(uint32_t), cmp_lease_id, j);
}

static int classify(dls_judge *j)
{
    uint64_t now = j->now;
    j->due.n = 0;
    while (j->deadlines.n && dls_heap_top_key(&j->deadlines) <= now) {
        uint32_t idx = dls_heap_top_ref(&j->deadlines);
        jl_lease *l = jl_lease_at(j, idx);
        dls_cause c = jl_classify(j, l, now);
        int rc;
        if (c == DLS_CAUSE_NONE) {
            if ((rc = rekey(j, idx, l, now)) != 0)
                return rc;
            continue;
        }
        dls_heap_remove(&j->deadlines, 0);
        l->heap_pos = JNIL;
        l->cause = (uint8_t)c;
        if ((rc = jvec_push(&j->due, sizeof idx, &idx)) != 0)
            return rc;
    }
    jl_sort_by_id(j, &j->due);
    j->res->newly_due = j->due.n;
    return 0;
}

/* ---- steps 4–6: mark, reclaim, record ------------------------------------------------------ */

/* judge.md rev 5, Standby judges (Heartbeat): a pass whose now is at
 * least `heartbeat` after its last mark's now owes a mark. */
static bool heartbeat_owed(const dls_judge *j)
{
    return j->heartbeat && j->ck_mark && j->now >= j->ck_now &&
           j->now - j->ck_now >= j->heartbeat;
}

static int mark_if_owed(dls_judge *j)
{
    if (!(j->moved || j->any_error || j->due.n || j->late || j->restarted ||
          heartbeat_owed(j)))
        return 0; /* owed later only if the pass appends */
    int rc = jj_mark(j);
    if (!rc)
        rc = jj_flush(j); /* durable before any act */
    return rc;
}

static int call_reclaim(dls_judge *j, jl_lease *l)
{
    jl_subject *s = jl_subject_at(j, l->subject);
    dls_bytes subject = {jl_subject_bytes(s), s->len};
    bool commit = l->cause == DLS_CAUSE_RELEASE && (l->flags & JL_COMMIT);
    j->in_callback = true;
    int ans = j->cb.reclaim(j->user, subject, l->id, (dls_cause)l->cause, commit);
    j->in_callback = false;
    return ans;
}

static int reclaim(dls_judge *j)
{
    for (size_t i = 0; i < j->due.n; i++) {
        uint32_t idx = JVEC_AT(j->due, uint32_t, i);
        jl_lease_at(j, idx)->flags |= JL_PENDING;
        int rc = jvec_push(&j->pending, sizeof idx, &idx);
        if (rc)
            return rc;
    }
    jl_sort_by_id(j, &j->pending);
    j->done.n = 0;
    size_t keep = 0;
    for (size_t i = 0; i < j->pending.n; i++) {
        uint32_t idx = JVEC_AT(j->pending, uint32_t, i);
        if (call_reclaim(j, jl_lease_at(j, idx)) == DLS_RECLAIM_DONE) {
            int rc = jvec_push(&j->done, sizeof idx, &idx);
            if (rc)
                return rc;
        } else {
            j->res->reclaim_failed++;
            jl_lease_at(j, idx)->flags |= JL_LATE;
            JVEC_AT(j->pending, uint32_t, keep++) = idx;
        }
    }
    j->pending.n = keep;
    return 0;
}

/* The subject lost a lease: it frees when no live lease is left, after a
 * lock-delay when a reclaim by silence or cap is recent. */
static int subject_left(dls_judge *j, uint32_t s, uint64_t lease, dls_cause cause)
{
    jl_subject *sub = jl_subject_at(j, s);
    if (j->lock_delay && (cause == DLS_CAUSE_SILENCE || cause == DLS_CAUSE_CAP)) {
        jl_subx *x = jl_subx_get(j, s);
        if (!x)
            return DLS_ERR_NOMEM;
        x->delay_start = j->now;
        x->delay_lease = lease;
    }
    if (sub->first_lease != JNIL)
        return 0;
    const jl_subx *px = jl_subx_peek(j, sub);
    if (px->delay_lease && !dls_passed(px->delay_start, j->now, j->lock_delay)) {
        jl_subx *x = (jl_subx *)jpool_at(&j->subx, sub->x); /* delay_lease: it has one */
        sub->flags |= JS_DELAYED;
        uint64_t end = dls_add_sat(dls_add_sat(x->delay_start, j->lock_delay), 1);
        if (x->delay_pos != JNIL)
            dls_heap_update(&j->delays, x->delay_pos, end);
        else if (dls_heap_push(&j->delays, end, s))
            return DLS_ERR_NOMEM;
        return 0;
    }
    if (sub->x != JNIL)
        ((jl_subx *)jpool_at(&j->subx, sub->x))->delay_lease = 0;
    if (px->nwaiters && !(sub->flags & JS_FREED)) {
        jl_freed f = {lease, 0, s};
        if (jvec_push(&j->freed, sizeof f, &f))
            return DLS_ERR_NOMEM;
        sub->flags |= JS_FREED;
        return 0;
    }
    jl_subject_release(j, s);
    return 0;
}

static int record_lapsed(dls_judge *j)
{
    int rc;
    for (size_t i = 0; i < j->done.n; i++) {
        const jl_lease *l = jl_lease_at(j, JVEC_AT(j->done, uint32_t, i));
        dls_fact f;
        dls_fact_reclaim(&f, l->id, (dls_cause)l->cause);
        if ((rc = jj_fact(j, &f)) != 0)
            return rc;
    }
    if ((rc = jj_flush(j)) != 0)
        return rc;
    for (size_t i = 0; i < j->done.n; i++) {
        uint32_t idx = JVEC_AT(j->done, uint32_t, i);
        jl_lease *l = jl_lease_at(j, idx);
        uint32_t s = l->subject;
        uint64_t id = l->id;
        dls_cause c = (dls_cause)l->cause;
        j->res->lapsed[c]++;
        j->res->late_reclaims += (l->flags & JL_LATE) != 0;
        jl_lease_remove(j, idx);
        if ((rc = subject_left(j, s, id, c)) != 0)
            return rc;
    }
    return 0;
}

/* ---- the first pass after a start ---------------------------------------------------------- */

/* judge.md, Restart (revision 4): a restart does not re-arm silence.
 * Recovered leases keep their recovered last relevant observation (and an
 * evidence state already unknown, from a gap or an earlier restart); a
 * lease becomes unknown, with the first pass's now as resumed reading, only
 * where the journal cannot vouch for its evidence: the basis changed
 * (tenure start and last observation are rebased too), its registered
 * medium is missing from this assembly, or that medium answers gap or
 * transport-error at the first pass (restart_resume_failed, after step 2;
 * a gap is met by the epoch of the medium). The leases then enter
 * the deadline heap or the pending list. Once per start, in pool order
 * (nothing written depends on it: due lists are sorted by lease id). */
static int restart_leases(dls_judge *j)
{
    for (uint32_t i = 0; i < j->leases.next; i++) {
        jl_lease *l = jl_lease_at(j, i);
        if (!(l->flags & JL_RECOVERED))
            continue;
        j->kept = true; /* the first mark says the rule it followed */
        jl_normalize(j, l);
        if (j->basis_changed) {
            l->tenure_start = j->now;
            l->last_obs = j->now;
        }
        if (j->basis_changed || l->medium == JL_NO_MEDIUM) {
            l->flags |= JL_UNKNOWN;
            l->resumed = j->now;
        }
        int rc = (l->flags & JL_PENDING) ? jvec_push(&j->pending, sizeof i, &i)
                                         : jl_schedule(j, i, jl_deadline(j, l));
        if (rc)
            return rc;
    }
    /* A medium's run of failing passes continues across a restart whose
     * mark says kept (replay rebuilt it); a mark without kept starts runs
     * afresh, as the audit reads it. */
    for (size_t m = 0; !j->kept && m < j->nmedia; m++)
        j->media[m].in_run = false;
    return 0;
}

/* After step 2 of the first pass: recovered leases registered on a medium
 * that failed in this pass (transport-error, or cut by the drain budget:
 * listed in the mark's errors) become unknown, resumed at now — unless a
 * renewal counted in this pass already made them known at now (the same
 * state as unknown-then-renewed, which is how replay and the audit read
 * the mark). */
static void restart_resume_failed(dls_judge *j)
{
    bool any = false;
    for (size_t m = 0; m < j->nmedia; m++)
        any |= j->media[m].failed;
    if (!any)
        return;
    for (uint32_t i = 0; i < j->leases.next; i++) {
        jl_lease *l = jl_lease_at(j, i);
        if (!(l->flags & JL_RECOVERED) || l->medium == JL_NO_MEDIUM ||
            !j->media[l->medium].failed || l->last_obs == j->now)
            continue;
        l->flags |= JL_UNKNOWN;
        l->resumed = j->now;
        if (l->heap_pos != JNIL)
            dls_heap_update(&j->deadlines, l->heap_pos, jl_deadline(j, l));
    }
}

static void restart_done(dls_judge *j)
{
    for (uint32_t i = 0; i < j->leases.next; i++)
        jl_lease_at(j, i)->flags &= ~(uint32_t)JL_RECOVERED;
}

/* ---- the pass ---------------------------------------------------------------------------- */

static uint64_t next_due(const dls_judge *j)
{
    uint64_t nd = DLS_JUDGE_NEVER;
    if (j->deadlines.n && dls_heap_top_key(&j->deadlines) < nd)
        nd = dls_heap_top_key(&j->deadlines);
    if (j->waitheap.n && dls_heap_top_key(&j->waitheap) < nd)
        nd = dls_heap_top_key(&j->waitheap);
    if (j->delays.n && dls_heap_top_key(&j->delays) < nd)
        nd = dls_heap_top_key(&j->delays);
    if ((j->pending.n || j->requests.n) && j->now < nd)
        nd = j->now;
    /* a heartbeat mark falls due too (judge.md rev 5, Standby judges) */
    if (j->heartbeat && j->ck_mark && dls_add_sat(j->ck_now, j->heartbeat) < nd)
        nd = dls_add_sat(j->ck_now, j->heartbeat);
    return nd;
}

/* judge.md step 2's per-pass budget, sized to the ticks (settings
 * drain_per_s; docs/judge.md, Overload): drain_budget, or drain_per_s
 * facts a second of ticks since the previous pass's now (at most a
 * cadence's worth) when that is more. A pass slowed by a journal sync or
 * by CPU others took leaves more to drain and may drain it, so the facts
 * drained a second of ticks stay at least drain_per_s whatever a pass
 * lasts; capped at a cadence, a judge short of CPU does not make each pass
 * longer than the one before without end. Integer arithmetic on ticks
 * (data): the same inputs drain the same records in the same passes. */
static size_t pass_budget(const dls_judge *j)
{
    if (!j->drain_budget || !j->drain_per_s || !j->prev_valid || j->now <= j->prev_now)
        return j->drain_budget;
    uint64_t t = j->now - j->prev_now;
    if (t > j->cadence)
        t = j->cadence;
    uint64_t per = j->drain_per_s, s = t / DLS_NS_PER_S, us = t % DLS_NS_PER_S / 1000;
    /* per ≤ 10^9 (assembly): per × us ≤ 10^15; per × s saturates */
    uint64_t whole = s > UINT64_MAX / per ? UINT64_MAX : per * s;
    uint64_t facts = dls_add_sat(whole, per * us / 1000000);
    if (facts > SIZE_MAX)
        facts = SIZE_MAX;
    return facts > j->drain_budget ? (size_t)facts : j->drain_budget;
}

static void begin_pass(dls_judge *j)
{
    j->budget = pass_budget(j);
    j->last_pass++;
    j->gaps.n = j->due.n = j->done.n = j->freed.n = j->refused_subjects.n = 0;
    j->moved = j->any_error = j->mark_done = false;
    j->restarted = !j->started;
    j->late = j->prev_valid && dls_passed(j->prev_now, j->now, j->cadence);
    j->res->has_now = true;
    j->res->now = j->now;
    j->res->pass = j->last_pass;
    j->res->restarted = j->restarted;
    j->res->cadence_overrun = j->late;
}

static int run_steps(dls_judge *j)
{
    int rc;
    if (j->restarted && (rc = restart_leases(j)) != 0)
        return rc;
    if ((rc = drain_facts(j)) != 0)
        return rc;
    if (j->restarted) {
        restart_resume_failed(j);
        restart_done(j);
    }
    if ((rc = classify(j)) != 0 || (rc = mark_if_owed(j)) != 0 ||
        (rc = reclaim(j)) != 0 || (rc = record_lapsed(j)) != 0 ||
        (rc = jp_answer_and_grant(j, j->now)) != 0 || (rc = jj_flush(j)) != 0)
        return rc;
    jp_tell_owner(j);
    jo_tell_granted(j);
    return 0;
}

static void finish(dls_judge *j)
{
    dls_judge_pass_result *r = j->res;
    r->pending = j->pending.n;
    r->live = j->live;
    r->waiting = j->nwaiting;
    r->next_due = j->now_valid ? next_due(j) : 0;
}

/* A standby's call (standby.c): no pass, the journal followed; next_due
 * at the cadence, so the owner's loop keeps calling. */
static int standby_pass(dls_judge *j)
{
    int rc = js_step(j);
    if (rc)
        return rc;
    if (!j->standby)
        return 0; /* took over: the first pass follows */
    dls_judge_pass_result *r = j->res;
    r->standby = true;
    r->has_now = j->now_valid;
    r->now = j->now;
    r->pass = j->last_pass;
    r->live = j->live;
    r->next_due = j->now_valid ? dls_add_sat(j->now, j->cadence) : 0;
    return 0;
}

int dls_judge_pass(dls_judge *j, dls_judge_pass_result *r)
{
    int rc = jx_usable(j);
    if (rc)
        return rc;
    dls_judge_pass_result local;
    if (!r)
        r = &local;
    memset(r, 0, sizeof *r);
    j->res = r;
    if (j->ticks_ended) {
        finish(j);
        j->res = NULL;
        return DLS_ERR_TICKS_ENDED;
    }
    drain_ticks(j);
    if (j->standby) {
        rc = standby_pass(j);
        if (rc || j->standby) {
            j->res = NULL;
            return rc ? jx_poison(j, rc) : 0;
        }
    }
    if (!j->now_valid) { /* before the first tick: nothing at all */
        finish(j);
        j->res = NULL;
        return 0;
    }
    begin_pass(j);
    rc = run_steps(j);
    if (rc) {
        j->res = NULL;
        return jx_poison(j, rc);
    }
    j->started = true;
    j->prev_now = j->now;
    j->prev_valid = true;
    finish(j);
    j->res = NULL;
    return 0;
}

/* ---- owner acts and introspection ---------------------------------------------------------- */

/* One meaning of fatal: a failed step leaves the ledger
 * untrusted, so the handle stops and answers a code in the fatal range —
 * the step's own code when it is fatal already (a journal write),
 * DLS_ERR_FATAL_NOMEM for out of memory, DLS_ERR_FATAL_STEP otherwise —
 * and DLS_ERR_FATAL on every later call. */
int jx_poison(dls_judge *j, int rc)
{
    j->fatal = true;
    if (dls_err_is_fatal(rc))
        return rc;
    return rc == DLS_ERR_NOMEM ? DLS_ERR_FATAL_NOMEM : DLS_ERR_FATAL_STEP;
}

int jx_usable(const dls_judge *j)
{
    if (!j)
        return DLS_ERR_INVAL;
    if (j->fatal)
        return DLS_ERR_FATAL;
    if (j->in_callback)
        return DLS_ERR_REENTRANT;
    return 0;
}

int dls_judge_end(dls_judge *j, uint64_t lease)
{
    int rc = jx_usable(j);
    if (!rc)
        rc = js_refuse(j);
    if (rc)
        return rc;
    uint32_t idx = jl_lease_find(j, lease);
    if (idx == JNIL)
        return DLS_ERR_UNKNOWN_LEASE;
    jl_lease *l = jl_lease_at(j, idx);
    l->flags |= JL_ENDED;
    if (l->heap_pos != JNIL)
        dls_heap_update(&j->deadlines, l->heap_pos, 0);
    return 0;
}

int dls_judge_lease(dls_judge *j, uint64_t lease, dls_judge_lease_info *info)
{
    if (!j || !info)
        return DLS_ERR_INVAL;
    uint32_t idx = jl_lease_find(j, lease);
    if (idx == JNIL)
        return DLS_ERR_UNKNOWN_LEASE;
    jl_lease *l = jl_lease_at(j, idx);
    jl_normalize(j, l);
    const jl_subject *s = jl_subject_at(j, l->subject);
    const jl_party *h = jl_party_at(j, l->holder);
    memset(info, 0, sizeof *info);
    info->lease = l->id;
    info->subject = (dls_bytes){jl_subject_bytes(s), s->len};
    info->holder = (dls_bytes){h->name, h->len};
    info->mode = (l->flags & JL_SHARED) ? DLS_MODE_SHARED : DLS_MODE_EXCLUSIVE;
    info->duration_ns = l->duration_ns;
    info->max_ns = jl_max_ns(j, l);
    info->medium = l->medium == JL_NO_MEDIUM ? DLS_JUDGE_NO_MEDIUM : l->medium;
    info->tenure_start = l->tenure_start;
    info->last_observation = l->last_obs;
    info->last_seq = l->last_seq;
    info->released = (l->flags & JL_RELEASED) != 0;
    info->commit = (l->flags & JL_COMMIT) != 0;
    info->ended = (l->flags & JL_ENDED) != 0;
    info->evidence = (l->flags & (JL_UNKNOWN | JL_RECOVERED)) ? DLS_EVIDENCE_UNKNOWN
                                                              : DLS_EVIDENCE_KNOWN;
    info->resumed = l->resumed;
    info->pending = (l->flags & JL_PENDING) != 0;
    info->cause = info->pending ? (dls_cause)l->cause : DLS_CAUSE_NONE;
    return 0;
}

size_t dls_judge_live(const dls_judge *j) { return j ? j->live : 0; }
uint64_t dls_judge_highest_lease(const dls_judge *j) { return j ? j->highest : 0; }
uint64_t dls_judge_last_pass(const dls_judge *j) { return j ? j->last_pass : 0; }

const dls_judge_ckpt_note *dls_judge_checkpoint_notes(const dls_judge *j, size_t *n)
{
    if (n)
        *n = j ? j->ck_notes.n : 0;
    return j ? (const dls_judge_ckpt_note *)j->ck_notes.p : NULL;
}

int dls_judge_journal_failure(const dls_judge *j, dls_where *w)
{
    if (!j || !j->jfailed)
        return 0;
    if (w)
        *w = j->jwhere;
    return j->jcode;
}

size_t dls_judge_memory(const dls_judge *j)
{
    return j ? jl_memory(j) : 0;
}
