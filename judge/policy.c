/* Step 7 — answer and grant — and the default grant policy (judge.md,
 * The pass step 7; Grant policy (default); Determinism).
 *
 * Order of service within a pass:
 *   1. subjects freed in this pass (a last lease lapsed, a lock-delay
 *      ended), in ascending order of the lease id that freed them: their
 *      waiters are granted in queue order while the head can be granted,
 *      even one whose bound elapsed in this very pass (but not, after a
 *      lock-delay, one whose bound elapsed during the delay);
 *   2. every waiter whose bound has elapsed and that was not granted is
 *      refused with "unavailable", in arrival order;
 *   3. shared waiters released by those refusals, subject by subject in the
 *      order of each subject's first refusal;
 *   4. this pass's proposals in drain order (after a restart, the drained
 *      but unanswered ones first);
 *   5. the owner's unsolicited grants in request order.
 * Every grant is seeded and stamped with this pass's now.
 */
#include <stdlib.h>
#include <string.h>

#include "judge/internal.h"
#include "judge/leases.h"

/* The granted duration: the ask (or the owner's default) clipped to the
 * owner's bounds, in the unit of the bound it was clipped to. */
static dls_duration granted_duration(const dls_judge *j, bool has_ask, dls_duration ask)
{
    dls_duration d = has_ask ? ask : j->default_duration;
    if (j->min_duration.ns && d.ns < j->min_duration.ns)
        return j->min_duration;
    if (j->max_duration.ns && d.ns > j->max_duration.ns)
        return j->max_duration;
    return d;
}

static bool grantable(const jl_subject *s, dls_mode mode)
{
    if (s->flags & JS_DELAYED)
        return false;
    return s->n_excl == 0 && (mode == DLS_MODE_SHARED || s->n_shared == 0);
}

/* The largest remaining term among the subject's live leases (and the rest
 * of a lock-delay): a waiter's bound, fixed at arrival. */
static uint64_t arrival_bound(dls_judge *j, const jl_subject *s, uint64_t now)
{
    uint64_t b = 0;
    for (uint32_t i = s->first_lease; i != JNIL;) {
        jl_lease *l = jl_lease_at(j, i);
        uint64_t r = jl_remaining(j, l, now);
        if (r > b)
            b = r;
        i = l->subj_next;
    }
    if (s->flags & JS_DELAYED) {
        uint64_t r = dls_sub_floor(dls_add_sat(jl_subx_peek(j, s)->delay_start, j->lock_delay), now);
        if (r > b)
            b = r;
    }
    return b;
}

static bool reentrant(const dls_judge *j, const jl_subject *s, uint32_t holder)
{
    for (uint32_t i = s->first_lease; i != JNIL;) {
        const jl_lease *l = jl_lease_at(j, i);
        if (l->holder == holder)
            return true;
        i = l->subj_next;
    }
    for (const jl_waiter *w = jl_subx_peek(j, s)->whead; w; w = w->next)
        if (w->p.holder == holder)
            return true;
    return false;
}

/* ---- records ---------------------------------------------------------------- */

int jp_grant(dls_judge *j, const jl_prop *p, uint32_t subject, dls_duration d, uint64_t now,
             uint64_t *lease)
{
    const jl_subject *s = jl_subject_at(j, subject);
    const jl_party *h = jl_party_at(j, p->holder);
    if (j->highest >= DLS_NS_MAX)
        return DLS_ERR_OVERFLOW;
    uint64_t id = j->highest + 1;
    dls_fact f;
    dls_fact_grant(&f, id, (dls_bytes){jl_subject_bytes(s), s->len}, (dls_bytes){h->name, h->len}, d,
                   j->media[p->medium].id);
    if (p->plen) {
        f.proposal = (dls_bytes){p->proposal, p->plen};
        f.keys |= DLS_K_PROPOSAL;
    }
    if (j->tenure_max.ns) {
        f.max = j->tenure_max;
        f.keys |= DLS_K_MAX;
    }
    if (p->has_mode) {
        f.mode = p->mode;
        f.keys |= DLS_K_MODE;
    }
    int rc = jj_fact(j, &f);
    if (rc)
        return rc;
    jl_terms t = {id, subject, p->holder, p->has_mode ? p->mode : DLS_MODE_EXCLUSIVE,
                  d.ns, j->tenure_max.ns, p->medium, now};
    uint32_t idx;
    if ((rc = jl_lease_add(j, &t, &idx)) != 0)
        return rc;
    if ((rc = jl_schedule(j, idx, jl_deadline(j, jl_lease_at(j, idx)))) != 0)
        return rc;
    if ((rc = jo_granted(j, id)) != 0)
        return rc;
    j->res->granted++;
    if (lease)
        *lease = id;
    return 0;
}

static int refuse(dls_judge *j, const jl_prop *p, const char *reason)
{
    const jl_party *h = jl_party_at(j, p->holder);
    dls_fact f;
    dls_fact_refusal(&f, (dls_bytes){p->proposal, p->plen}, (dls_bytes){h->name, h->len},
                     (dls_bytes){(const uint8_t *)reason, strlen(reason)});
    int rc = jj_fact(j, &f);
    if (!rc)
        j->res->refused++;
    return rc;
}

/* ---- FIFO service ------------------------------------------------------------ */

/* The first reading at which a waiter's bound has elapsed (strict). */
static uint64_t bound_elapses_at(const jl_waiter *w)
{
    return dls_add_sat(dls_add_sat(w->arrived_at, w->bound), 1);
}

/* Grants the subject's waiters from the head while the head can be granted
 * (a waiting exclusive proposal holds back later shared ones). A subject
 * that freed at reading `from` (the end of a lock-delay) skips the waiters
 * whose bound elapsed before it: they are refused next (judge.md, "waiters
 * whose bound elapses during the delay are refused"). */
static int serve(dls_judge *j, uint32_t subject, uint64_t from, uint64_t now)
{
    jl_waiter *w = jl_subx_peek(j, jl_subject_at(j, subject))->whead;
    while (w) {
        jl_subject *s = jl_subject_at(j, subject);
        if (bound_elapses_at(w) < from) {
            w = w->next;
            continue;
        }
        if (!grantable(s, w->p.has_mode ? w->p.mode : DLS_MODE_EXCLUSIVE))
            return 0;
        int rc = jp_grant(j, &w->p, subject, granted_duration(j, w->p.has_ask, w->p.ask), now,
                          NULL);
        if (rc)
            return rc;
        jl_waiter *next = w->next;
        jl_waiter_remove(j, w);
        w = next;
    }
    return 0;
}

static int end_delays(dls_judge *j, uint64_t now)
{
    while (j->delays.n && dls_heap_top_key(&j->delays) <= now) {
        uint32_t s = dls_heap_top_ref(&j->delays);
        uint64_t end = dls_heap_top_key(&j->delays); /* the reading it frees at */
        dls_heap_remove(&j->delays, 0);
        jl_subject *sub = jl_subject_at(j, s);
        jl_subx *x = (jl_subx *)jpool_at(&j->subx, sub->x); /* a delayed subject has one */
        x->delay_pos = JNIL;
        sub->flags &= ~(uint32_t)JS_DELAYED;
        uint64_t lease = x->delay_lease;
        x->delay_lease = 0;
        if (x->nwaiters && !(sub->flags & JS_FREED)) {
            jl_freed f = {lease, end, s};
            if (jvec_push(&j->freed, sizeof f, &f))
                return DLS_ERR_NOMEM;
            sub->flags |= JS_FREED;
        } else {
            jl_subject_release(j, s);
        }
    }
    return 0;
}

static int cmp_freed(const void *a, const void *b)
{
    uint64_t x = ((const jl_freed *)a)->lease, y = ((const jl_freed *)b)->lease;
    return x < y ? -1 : x > y;
}

static int serve_freed(dls_judge *j, uint64_t now)
{
    if (j->freed.n > 1)
        qsort(j->freed.p, j->freed.n, sizeof(jl_freed), cmp_freed);
    for (size_t i = 0; i < j->freed.n; i++) {
        jl_freed f = JVEC_AT(j->freed, jl_freed, i);
        int rc = serve(j, f.subject, f.from, now);
        if (rc)
            return rc;
        jl_subject_at(j, f.subject)->flags &= ~(uint32_t)JS_FREED;
        jl_subject_release(j, f.subject);
    }
    j->freed.n = 0;
    return 0;
}

static int cmp_arrival(const void *a, const void *b)
{
    uint64_t x = (*(jl_waiter *const *)a)->p.arrival, y = (*(jl_waiter *const *)b)->p.arrival;
    return x < y ? -1 : x > y;
}

/* Refuses every waiter whose bound elapsed (arrival order), then serves the
 * subjects those refusals may have unblocked (order of first refusal). */
static int refuse_elapsed(dls_judge *j, uint64_t now)
{
    jvec due = {0};
    int rc = 0;
    for (size_t k = 0; k < j->waitheap.n && dls_heap_top_key(&j->waitheap) <= now;) {
        jl_waiter *w = JVEC_AT(j->waiters, jl_waiter *, dls_heap_top_ref(&j->waitheap));
        if ((rc = jvec_push(&due, sizeof w, &w)) != 0)
            goto out;
        dls_heap_update(&j->waitheap, 0, UINT64_MAX); /* out of the way until removed */
        k++;
    }
    if (due.n > 1)
        qsort(due.p, due.n, sizeof(jl_waiter *), cmp_arrival);
    for (size_t i = 0; i < due.n; i++) {
        jl_waiter *w = JVEC_AT(due, jl_waiter *, i);
        uint32_t s = w->subject;
        if ((rc = refuse(j, &w->p, "unavailable")) != 0)
            goto out;
        jl_waiter_remove(j, w);
        jl_subject *sub = jl_subject_at(j, s);
        if (!(sub->flags & JS_REFUSED)) {
            sub->flags |= JS_REFUSED;
            if ((rc = jvec_push(&j->refused_subjects, sizeof s, &s)) != 0)
                goto out;
        }
    }
    for (size_t i = 0; i < j->refused_subjects.n; i++) {
        uint32_t s = JVEC_AT(j->refused_subjects, uint32_t, i);
        if ((rc = serve(j, s, 0, now)) != 0)
            goto out;
        jl_subject_at(j, s)->flags &= ~(uint32_t)JS_REFUSED;
        jl_subject_release(j, s);
    }
    j->refused_subjects.n = 0;
out:
    jvec_free(&due);
    return rc;
}

/* ---- proposals ----------------------------------------------------------------- */

static void make_ask(dls_judge *j, const jl_prop *p, const jl_subject *s, uint64_t now,
                     dls_judge_ask *a)
{
    const jl_party *h = jl_party_at(j, p->holder);
    memset(a, 0, sizeof *a);
    a->subject = (dls_bytes){jl_subject_bytes(s), s->len};
    a->holder = (dls_bytes){h->name, h->len};
    a->proposal = (dls_bytes){p->proposal, p->plen};
    a->medium = p->medium;
    a->has_duration = p->has_ask;
    a->duration = p->ask;
    a->has_mode = p->has_mode;
    a->mode = p->has_mode ? p->mode : DLS_MODE_EXCLUSIVE;
    a->now = now;
    a->live_exclusive = s->n_excl;
    a->live_shared = s->n_shared;
    a->waiters = jl_subx_peek(j, s)->nwaiters;
    a->reentrant = reentrant(j, s, p->holder);
    a->delayed = (s->flags & JS_DELAYED) != 0;
}

/* The default policy's answer. */
static void default_answer(dls_judge *j, const dls_judge_ask *a, const jl_prop *p,
                           const jl_subject *s, dls_judge_answer *ans)
{
    memset(ans, 0, sizeof *ans);
    if (a->reentrant) {
        ans->verdict = DLS_JUDGE_REFUSE;
        ans->reason = "reentrant";
    } else if (jl_subx_peek(j, s)->nwaiters == 0 && grantable(s, a->mode)) {
        ans->verdict = DLS_JUDGE_GRANT;
        ans->duration = granted_duration(j, p->has_ask, p->ask);
    } else {
        ans->verdict = DLS_JUDGE_WAIT;
        ans->bound_ns = a->largest_remaining_ns;
    }
}

static int owner_answer(dls_judge *j, const dls_judge_ask *a, const jl_subject *s,
                        dls_judge_answer *ans)
{
    dls_judge_answer own = *ans; /* the default's answer: the owner may keep it */
    j->in_callback = true;
    int rc = j->cb.policy(j->user, a, &own);
    j->in_callback = false;
    if (rc || own.verdict > DLS_JUDGE_REFUSE ||
        (own.verdict == DLS_JUDGE_GRANT &&
         (own.duration.ns == 0 || own.duration.ns > DLS_NS_MAX)) ||
        (own.verdict == DLS_JUDGE_REFUSE && own.reason && strlen(own.reason) > DLS_REASON_MAX)) {
        ans->verdict = DLS_JUDGE_REFUSE;
        ans->reason = "policy";
        return 0;
    }
    if (own.verdict == DLS_JUDGE_GRANT && !(jl_subx_peek(j, s)->nwaiters == 0 && grantable(s, a->mode))) {
        ans->verdict = DLS_JUDGE_WAIT; /* never a double grant */
        ans->bound_ns = a->largest_remaining_ns;
        return 0;
    }
    *ans = own;
    if (ans->verdict == DLS_JUDGE_REFUSE && !ans->reason)
        ans->reason = "policy";
    return 0;
}

static int answer_proposal(dls_judge *j, const jl_prop *p, uint64_t now)
{
    uint32_t s;
    int rc = jl_subject_get(j, p->subject, p->slen, &s);
    if (rc)
        return rc;
    dls_judge_ask a;
    make_ask(j, p, jl_subject_at(j, s), now, &a);
    a.largest_remaining_ns = arrival_bound(j, jl_subject_at(j, s), now);
    dls_judge_answer ans;
    default_answer(j, &a, p, jl_subject_at(j, s), &ans);
    if (j->cb.policy)
        owner_answer(j, &a, jl_subject_at(j, s), &ans);
    jl_waiter *w;
    switch (ans.verdict) {
    case DLS_JUDGE_GRANT:
        rc = jp_grant(j, p, s, ans.duration, now, NULL);
        break;
    case DLS_JUDGE_WAIT:
        rc = jl_waiter_add(j, s, p, now, ans.bound_ns, &w);
        break;
    default:
        rc = refuse(j, p, ans.reason);
        break;
    }
    jl_subject_release(j, s);
    return rc;
}

static int answer_proposals(dls_judge *j, uint64_t now)
{
    int rc = 0;
    size_t i = 0;
    for (; i < j->props.n && !rc; i++) {
        jl_prop *p = &JVEC_AT(j->props, jl_prop, i);
        if (!p->dead)
            rc = answer_proposal(j, p, now);
        jl_prop_free(p);
    }
    for (; i < j->props.n; i++)
        jl_prop_free(&JVEC_AT(j->props, jl_prop, i));
    j->props.n = 0;
    return rc;
}

/* ---- unsolicited grants --------------------------------------------------------- */

static bool held(const dls_judge *j, const jl_subject *s)
{
    return s->first_lease != JNIL || jl_subx_peek(j, s)->nwaiters || (s->flags & JS_DELAYED);
}

/* Outcomes are told after the pass's records are on the journal: a lease
 * exists once its grant was appended ok (judge.md, Ledger). */
static int tell_owner(dls_judge *j, uint64_t ticket, uint64_t lease, int err)
{
    if (!j->cb.unsolicited)
        return 0;
    jl_told t = {ticket, lease, err};
    return jvec_push(&j->told, sizeof t, &t);
}

void jp_tell_owner(dls_judge *j)
{
    j->in_callback = true;
    for (size_t i = 0; i < j->told.n; i++) {
        const jl_told *t = &JVEC_AT(j->told, jl_told, i);
        j->cb.unsolicited(j->user, t->ticket, t->lease, t->error);
    }
    j->in_callback = false;
    j->told.n = 0;
}

static int grant_request(dls_judge *j, jl_request *q, uint64_t now)
{
    uint32_t s;
    int rc = jl_subject_get(j, q->subject, q->slen, &s);
    if (rc)
        return rc;
    uint64_t lease = 0;
    if (held(j, jl_subject_at(j, s))) {
        rc = tell_owner(j, q->ticket, 0, DLS_ERR_HELD);
    } else {
        jl_prop p;
        memset(&p, 0, sizeof p);
        p.holder = q->holder;
        p.medium = q->medium;
        p.has_mode = q->has_mode;
        p.mode = q->mode;
        rc = jp_grant(j, &p, s, granted_duration(j, q->has_duration, q->duration), now, &lease);
        if (!rc)
            rc = tell_owner(j, q->ticket, lease, 0);
    }
    jl_subject_release(j, s);
    return rc;
}

static int grant_requests(dls_judge *j, uint64_t now)
{
    int rc = 0;
    for (size_t i = 0; i < j->requests.n; i++) {
        jl_request *q = &JVEC_AT(j->requests, jl_request, i);
        if (!rc)
            rc = grant_request(j, q, now);
        free(q->subject);
    }
    j->requests.n = 0;
    return rc;
}

int jp_answer_and_grant(dls_judge *j, uint64_t now)
{
    int rc;
    if ((rc = end_delays(j, now)) != 0 || (rc = serve_freed(j, now)) != 0 ||
        (rc = refuse_elapsed(j, now)) != 0 || (rc = answer_proposals(j, now)) != 0)
        return rc;
    return grant_requests(j, now);
}

/* ---- owner API ------------------------------------------------------------------ */

static int check_request(dls_judge *j, dls_bytes subject, dls_bytes holder, uint32_t medium,
                         const dls_duration *duration, const dls_mode *mode)
{
    if (!subject.p || subject.n == 0 || subject.n > DLS_SUBJECT_MAX || !holder.p ||
        !dls_name_valid(holder.p, holder.n) || medium >= j->nmedia)
        return DLS_ERR_INVAL;
    if (duration && (duration->ns == 0 || duration->ns > DLS_NS_MAX))
        return DLS_ERR_INVAL;
    if (mode && *mode != DLS_MODE_EXCLUSIVE && *mode != DLS_MODE_SHARED)
        return DLS_ERR_INVAL;
    /* The grant must encode: the subject must be one valid msgpack value. */
    dls_fact f;
    dls_duration d = duration ? *duration : j->default_duration;
    dls_fact_grant(&f, 1, subject, holder, d, j->media[medium].id);
    size_t len;
    return dls_fact_encode(&f, j->scratch, DLS_RECORD_MAX, &len) ? DLS_ERR_INVAL : 0;
}

static int queue_request(dls_judge *j, dls_bytes subject, dls_bytes holder, uint32_t medium,
                         const dls_duration *duration, const dls_mode *mode, uint64_t *ticket)
{
    jl_request q;
    memset(&q, 0, sizeof q);
    int rc = jl_party_get(j, holder.p, holder.n, &q.holder);
    if (rc)
        return rc;
    q.subject = malloc(subject.n);
    if (!q.subject)
        return DLS_ERR_NOMEM;
    memcpy(q.subject, subject.p, subject.n);
    q.slen = (uint16_t)subject.n;
    q.medium = (uint16_t)medium;
    q.has_duration = duration != NULL;
    if (duration)
        q.duration = *duration;
    q.has_mode = mode != NULL;
    if (mode)
        q.mode = *mode;
    q.ticket = ++j->ticket;
    if ((rc = jvec_push(&j->requests, sizeof q, &q)) != 0) {
        free(q.subject);
        return rc;
    }
    if (ticket)
        *ticket = q.ticket;
    return 0;
}

int dls_judge_grant(dls_judge *j, dls_bytes subject, dls_bytes holder, uint32_t medium,
                    const dls_duration *duration, const dls_mode *mode, uint64_t *ticket)
{
    int rc = jx_usable(j);
    if (!rc)
        rc = js_refuse(j); /* a standby never appends nor acts */
    if (rc)
        return rc;
    if ((rc = check_request(j, subject, holder, medium, duration, mode)) != 0)
        return rc;
    uint32_t s = jl_subject_find(j, subject.p, subject.n);
    if (s != JNIL && held(j, jl_subject_at(j, s)))
        return DLS_ERR_HELD;
    return queue_request(j, subject, holder, medium, duration, mode, ticket);
}

int dls_judge_lost_ledger(dls_judge *j, const dls_judge_possession *items, size_t n, int *status)
{
    int rc = jx_usable(j);
    if (!rc)
        rc = js_refuse(j); /* a standby never appends nor acts */
    if (rc)
        return rc;
    if (j->replayed || j->started || j->live)
        return DLS_ERR_STATE;
    if (n && !items)
        return DLS_ERR_INVAL;
    for (size_t i = 0; i < n; i++)
        if ((rc = check_request(j, items[i].subject, items[i].holder, items[i].medium,
                                items[i].duration, NULL)) != 0)
            return rc;
    for (size_t i = 0; i < n; i++) {
        const dls_judge_possession *it = &items[i];
        j->in_callback = true;
        int ans = j->cb.reclaim(j->user, it->subject, it->lease, DLS_CAUSE_POLICY, false);
        j->in_callback = false;
        if (status)
            status[i] = ans;
        if (ans != DLS_RECLAIM_DONE)
            continue; /* a new grant alone never ends a prior tenure */
        if ((rc = queue_request(j, it->subject, it->holder, it->medium, it->duration, NULL,
                                NULL)) != 0)
            return rc;
    }
    return 0;
}
