/* The holder (holder.md): a step function the agent's loop drives. It reads
 * no clock — time is the newest reading on its tick cursor — and starts no
 * thread. See include/daolease/holder.h for the contract and docs/holder.md
 * for the reasoning. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "holder/holder_int.h"
#include "vocab/mp.h"

/* ---- small helpers ------------------------------------------------------- */

/* A holder belongs to the process that made it (holder.md): a child after
 * fork() shares its leases' ids and its medium's handle, not the right to
 * act on them or to append in their name. One getpid() a call: a pid, not
 * a clock. */
int hld_own_process(dls_holder *h)
{
    long pid = (long)getpid();
    if (pid == h->pid)
        return 0;
    snprintf(h->msg, sizeof h->msg,
             "this holder belongs to process %ld, not to process %ld (a child after "
             "fork() makes its own holder)", h->pid, pid);
    return DLS_ERR_STATE;
}

static int append_release(dls_holder *h, uint64_t lease, bool commit)
{
    dls_fact f;
    memset(&f, 0, sizeof f);
    f.kind = DLS_FACT_RELEASE;
    f.keys = DLS_K_LEASE | (commit ? DLS_K_COMMIT : 0u);
    f.lease = lease;
    f.commit = commit;
    uint64_t pos;
    return hld_append_fact(h, &f, &pos);
}

/* ---- proposing ------------------------------------------------------------------ */

int dls_holder_propose(dls_holder *h, const uint8_t *subject, size_t subject_len,
                       const dls_duration *ask, dls_mode mode, uint64_t *handle)
{
    if (!h)
        return DLS_ERR_INVAL;
    h->msg[0] = '\0';
    if (hld_own_process(h))
        return DLS_ERR_STATE;
    size_t end = 0;
    if (!subject || subject_len == 0 || subject_len > DLS_SUBJECT_MAX ||
        dls_mp_skip(subject, subject_len, 0, DLS_FACT_MAX_DEPTH - 1, &end, NULL) != 0 ||
        end != subject_len) {
        hld_say(h->msg, sizeof h->msg, "propose: the subject must be one msgpack value of "
                                   "1-1024 bytes, at most 7 levels deep");
        return DLS_ERR_INVAL;
    }
    if (mode != DLS_MODE_EXCLUSIVE && mode != DLS_MODE_SHARED)
        return DLS_ERR_INVAL;
    dls_fact f;
    memset(&f, 0, sizeof f);
    if (ask) {
        if (dls_duration_make(&f.duration, ask->unit, ask->magnitude) != 0 ||
            f.duration.ns == 0) {
            hld_say(h->msg, sizeof h->msg, "propose: the ask is not a duration of 1 ns to "
                                       "2^63-1 ns in a v1 unit");
            return DLS_ERR_INVAL;
        }
        int rel;
        int rc = hld_sizing_text(&h->s, f.duration.ns, 0, false, h->msg, sizeof h->msg,
                                 &rel);
        if (rel == 5)
            rc = 0; /* relation 5 warns at grant, never refuses (holder.md rev 4) */
        if (rc != 0)
            return rc;
    }
    if (h->nprops >= h->s.max_proposals || h->nprops + h->nleases >= h->s.max_leases) {
        hld_say(h->msg, sizeof h->msg, "propose: too many outstanding proposals and leases "
                                   "(max_proposals, max_leases)");
        return DLS_ERR_STATE;
    }
    if (h->prop_seq >= DLS_NS_MAX)
        return DLS_ERR_OVERFLOW;
    hprop p;
    p.id[0] = 0xc4;
    p.id[1] = PROP_ID_LEN;
    randombytes_buf(p.id + 2, PROP_ID_LEN);
    p.seq = ++h->prop_seq; /* consumed even if the append fails */
    f.kind = DLS_FACT_PROPOSAL;
    f.keys = DLS_K_PROPOSAL | DLS_K_SUBJECT | DLS_K_SEQ;
    if (ask)
        f.keys |= DLS_K_DURATION;
    if (mode == DLS_MODE_SHARED)
        f.keys |= DLS_K_MODE;
    f.mode = mode;
    f.proposal.p = p.id;
    f.proposal.n = PROP_ENC_LEN;
    f.subject.p = subject;
    f.subject.n = subject_len;
    f.seq = p.seq;
    uint64_t pos;
    int rc = hld_append_fact(h, &f, &pos);
    if (rc != 0) {
        snprintf(h->msg, sizeof h->msg, "propose: the append failed: %s", dls_strerror(rc));
        return rc;
    }
    p.handle = ++h->next_handle;
    h->props[h->nprops++] = p;
    if (handle)
        *handle = p.handle;
    return 0;
}

/* ---- the step ---------------------------------------------------------------------- */

/* Drains the tick cursor: every tick attributed to the tick party, valid,
 * and not older than now moves now. */
static void drain_ticks(dls_holder *h, dls_holder_result *r)
{
    while (!h->ticks_ended) {
        dls_record rec;
        dls_where w;
        dls_next nx = dls_cursor_next(h->ticks, &rec, &w);
        if (nx == DLS_NEXT_GAP)
            continue;
        if (nx == DLS_NEXT_END) {
            h->ticks_ended = true;
            break;
        }
        if (nx == DLS_NEXT_ERROR && r)
            r->tick_error = DLS_ERR_TRANSPORT; /* now stays: bounds still fall */
        if (nx != DLS_NEXT_OK)
            break; /* blocked, or transport-error: now stays */
        dls_attribution a;
        dls_resolver_attribute(h->tres, rec.p, rec.n, &a);
        dls_fact f;
        if (!a.attributed || !hld_bytes_is(a.author, h->tick_party, h->tick_party_len) ||
            dls_fact_decode(a.fact.p, a.fact.n, &f, NULL) != 0 ||
            f.kind != DLS_FACT_TICK || (h->has_now && f.reading.ns < h->now)) {
            if (r)
                r->ticks_ignored++;
            continue;
        }
        h->now = f.reading.ns;
        h->has_now = true;
        if (r)
            r->ticks++;
    }
}

/* Why a lease reached its bound, naming how far behind confirmation is
 * (holder.md rev 4: the agent can see the cause when it must stop). */
static void bound_text(const dls_holder *h, const hlease *l, char *buf, size_t cap)
{
    if (h->ticks_ended) {
        snprintf(buf, cap, "the tick stream ended: the holder cannot measure time");
        return;
    }
    char pos[48] = "none";
    if (h->has_confirmed_pos)
        snprintf(pos, sizeof pos, "%" PRIu64, h->confirmed_pos);
    if (l->orphan) {
        snprintf(buf, cap, "reached its bound: granted on a journal the holder left "
                           "(not renewed since)");
        return;
    }
    if (l->has_max && h->now >= dls_add_sat(l->observed, l->max.ns) &&
        dls_add_sat(l->observed, l->max.ns) <= hld_lease_bound(l)) {
        snprintf(buf, cap, "reached max after the grant observed at reading %" PRIu64,
                 l->observed);
        return;
    }
    snprintf(buf, cap,
             "reached its bound: the bound runs from reading %" PRIu64 " (%s); "
             "newest confirmed position %s; %zu ok renewal(s) not confirmed%s",
             l->confirmed && l->confirmed_reading > l->observed ? l->confirmed_reading
                                                                : l->observed,
             l->confirmed && l->confirmed_reading > l->observed
                 ? "the newest confirmed renewal"
                 : "the grant: no renewal confirmed",
             pos, l->npend, l->renewed ? "" : " (no renewal answered ok)");
    if (l->renewed && strlen(buf) + 48 < cap)
        snprintf(buf + strlen(buf), cap - strlen(buf),
                 ", the last at position %" PRIu64, l->last_pos);
}

/* A held lease stops at its bound: BOUND. */
static void check_bound(dls_holder *h, hlease *l)
{
    if (l->state == DLS_HOLDER_HELD &&
        (h->ticks_ended || l->bound_unreported || h->now >= hld_lease_bound(l))) {
        char why[DLS_HOLDER_TEXT_MAX];
        bound_text(h, l, why, sizeof why);
        hld_lose(h, l, why);
    }
}

/* Step 2: every held lease whose bound is at or before now stops. Only the
 * leases the schedule says are due can be (their key is at most their
 * bound); once the tick stream has ended, all of them. */
static void check_bounds(dls_holder *h)
{
    if (h->ticks_ended) {
        for (size_t i = 0; i < h->nleases; i++)
            check_bound(h, &h->leases[i]);
        return;
    }
    size_t n = hld_sched_pop_due(h);
    for (size_t k = 0; k < n; k++) {
        hlease *l = &h->leases[h->popped[k]];
        check_bound(h, l);
        hld_sched_update(h, l);
    }
}

/* The outcome of one owed write (holder.md: a renewal is an append that
 * answered ok; any other outcome advances nothing). */
static void apply_owed(dls_holder *h, const howed *o, int rc, uint64_t pos, uint64_t before)
{
    hlease *l = &h->leases[o->lease_ix];
    if (o->release) {
        dls_holder_event *e = hld_event_push(
            h, rc == 0 ? DLS_HOLDER_RELEASED : DLS_HOLDER_RELEASE_FAILED, l->id, l->proposal);
        if (e)
            e->error = rc;
        if (rc == 0)
            l->state = DLS_HOLDER_RELEASED_OK;
        else
            h->releasing = true; /* retried at the next step */
        return;
    }
    dls_holder_event *e = hld_event_push(
        h, rc == 0 ? DLS_HOLDER_RENEWED : DLS_HOLDER_RENEWAL_FAILED, l->id, l->proposal);
    if (e) {
        e->seq = o->seq;
        e->error = rc;
    }
    if (rc == 0) {
        l->renewed = true;
        l->last_renewal = before; /* the schedule runs from ok appends */
        l->last_pos = pos;
        l->failed = false;
        /* the bound waits for a mark to confirm it (holder.md rev 4) */
        if (l->npend == HLD_PENDING_MAX) {
            memmove(l->pend, l->pend + 1, (HLD_PENDING_MAX - 1) * sizeof l->pend[0]);
            l->npend--;
        }
        l->pend[l->npend++] = (hpend){pos, before};
    } else {
        l->failed = true;
        l->failed_at = before;
    }
}

/* The owed write for a lease the step looks at, if any (n: owed so far). */
static size_t owe(dls_holder *h, uint32_t i, size_t n)
{
    hlease *l = &h->leases[i];
    if (l->state == DLS_HOLDER_RELEASING) {
        h->owed[n++] = (howed){i, true, 0};
        return n;
    }
    if (l->state != DLS_HOLDER_HELD || l->orphan || h->now < hld_lease_next(l) ||
        h->now >= hld_lease_bound(l))
        return n;
    if (l->seq >= DLS_NS_MAX) {
        l->failed = true;
        l->failed_at = h->now;
        dls_holder_event *e = hld_event_push(h, DLS_HOLDER_RENEWAL_FAILED, l->id,
                                             l->proposal);
        if (e)
            e->error = DLS_ERR_OVERFLOW;
        return n;
    }
    h->owed[n++] = (howed){i, false, ++l->seq}; /* a fresh seq each attempt */
    return n;
}

static int by_lease(const void *a, const void *b)
{
    uint32_t x = ((const howed *)a)->lease_ix, y = ((const howed *)b)->lease_ix;
    return (x > y) - (x < y);
}

/* Step 4: every renewal due and every release to retry, written together
 * (batch.c), all timed by now — the reading taken before the appends. The
 * leases looked at are those the schedule says are due, and the releases
 * to retry (a walk, only while one may exist). */
static void renew_due(dls_holder *h, dls_holder_result *r)
{
    size_t popped = hld_sched_pop_due(h), n = 0;
    for (size_t k = 0; k < popped; k++)
        n = owe(h, h->popped[k], n);
    if (h->releasing) {
        size_t held = n;
        h->releasing = false;
        for (size_t i = 0; i < h->nleases; i++)
            if (h->leases[i].state == DLS_HOLDER_RELEASING)
                n = owe(h, (uint32_t)i, n);
        if (held > 0 && n > held) /* one order, as a walk of the leases gives */
            qsort(h->owed, n, sizeof *h->owed, by_lease);
    }
    if (n > 0) {
        uint64_t before = h->now;
        r->appends += (uint64_t)hld_write_owed(h, h->owed, n, h->owed_rc, h->owed_pos);
        for (size_t k = 0; k < n; k++)
            apply_owed(h, &h->owed[k], h->owed_rc[k], h->owed_pos[k], before);
    }
    for (size_t k = 0; k < popped; k++)
        hld_sched_update(h, &h->leases[h->popped[k]]);
}

bool dls_holder_next_reading(const dls_holder *h, uint64_t *reading)
{
    if (!h)
        return false;
    bool any = false;
    uint64_t best = UINT64_MAX;
    for (size_t i = 0; i < h->nleases; i++) {
        const hlease *l = &h->leases[i];
        if (l->state != DLS_HOLDER_HELD && l->state != DLS_HOLDER_RELEASING)
            continue;
        uint64_t next = l->state == DLS_HOLDER_RELEASING ? dls_add_sat(h->now, 1)
                                                         : hld_lease_next(l);
        if (!any || next < best)
            best = next;
        any = true;
    }
    if (any && reading)
        *reading = best;
    return any;
}

int dls_holder_step(dls_holder *h, dls_holder_result *res)
{
    if (!h || !res)
        return DLS_ERR_INVAL;
    memset(res, 0, sizeof *res);
    if (hld_own_process(h))
        return DLS_ERR_STATE;
    h->ev.n = 0;
    h->events_lost = 0;
    drain_ticks(h, res);
    if (h->has_now) {
        check_bounds(h);
        hld_drain_journal(h, res);
        renew_due(h, res);
    }
    res->events = h->ev.p;
    res->n_events = h->ev.n;
    res->has_now = h->has_now;
    res->now = h->now;
    res->journal_ended = h->journal_ended;
    res->has_next = hld_sched_next(h, &res->next_reading);
    if (h->ticks_ended)
        return DLS_ERR_TICKS_ENDED;
    return h->events_lost ? DLS_ERR_NOMEM : 0;
}

/* ---- acting ------------------------------------------------------------------------ */

bool dls_holder_may_act(dls_holder *h, uint64_t lease)
{
    if (!h || hld_own_process(h))
        return false;
    drain_ticks(h, NULL);
    hlease *l = hld_find_lease(h, lease);
    if (!l || l->state != DLS_HOLDER_HELD || l->bound_unreported)
        return false;
    if (h->has_now && !h->ticks_ended && h->now < hld_lease_bound(l))
        return true;
    /* false once is false for good (holder.md rev 4: a lost lease never
     * revives); the next step reports BOUND */
    l->bound_unreported = true;
    hld_sched_update(h, l); /* the next step reports BOUND */
    return false;
}

int dls_holder_remaining(dls_holder *h, uint64_t lease, uint64_t *ns)
{
    if (!h || !ns)
        return DLS_ERR_INVAL;
    if (hld_own_process(h))
        return DLS_ERR_STATE;
    drain_ticks(h, NULL);
    const hlease *l = hld_find_lease(h, lease);
    if (!l)
        return DLS_ERR_NO_LEASE;
    *ns = (l->state == DLS_HOLDER_HELD && !l->bound_unreported && !h->ticks_ended)
              ? dls_sub_floor(hld_lease_bound(l), h->now)
              : 0;
    return 0;
}

/* dls_holder_remaining for n leases after one drain of the tick cursor
 * (holder.md, "The bound"; docs/holder.md): the
 * same answer per lease, 0 for a lease not tracked. */
int dls_holder_remaining_many(dls_holder *h, const uint64_t *leases, size_t n,
                              uint64_t *ns, size_t *untracked)
{
    if (!h || (n && (!leases || !ns)))
        return DLS_ERR_INVAL;
    if (hld_own_process(h))
        return DLS_ERR_STATE;
    drain_ticks(h, NULL);
    size_t missing = 0;
    for (size_t i = 0; i < n; i++) {
        const hlease *l = hld_find_lease(h, leases[i]);
        if (!l) {
            ns[i] = 0;
            missing++;
            continue;
        }
        ns[i] = (l->state == DLS_HOLDER_HELD && !l->bound_unreported && !h->ticks_ended)
                    ? dls_sub_floor(hld_lease_bound(l), h->now)
                    : 0;
    }
    if (untracked)
        *untracked = missing;
    return 0;
}

int dls_holder_release(dls_holder *h, uint64_t lease, bool commit)
{
    if (!h)
        return DLS_ERR_INVAL;
    if (hld_own_process(h))
        return DLS_ERR_STATE;
    hlease *l = hld_find_lease(h, lease);
    if (!l)
        return DLS_ERR_NO_LEASE;
    if (l->state == DLS_HOLDER_RELEASED_OK)
        return 0;
    l->state = DLS_HOLDER_RELEASING; /* stops acting and renewing at once */
    l->commit = commit;
    hld_sched_update(h, l);
    int rc = append_release(h, l->id, commit);
    if (rc == 0)
        l->state = DLS_HOLDER_RELEASED_OK;
    else
        h->releasing = true; /* the next step retries it */
    return rc;
}

int dls_holder_forget(dls_holder *h, uint64_t lease)
{
    if (!h)
        return DLS_ERR_INVAL;
    if (hld_own_process(h))
        return DLS_ERR_STATE;
    hlease *l = hld_find_lease(h, lease);
    if (!l)
        return DLS_ERR_NO_LEASE;
    if (l->state == DLS_HOLDER_HELD)
        return DLS_ERR_STATE;
    hld_drop_lease(h, l);
    return 0;
}

/* ---- inspection ---------------------------------------------------------------------- */

int dls_holder_lease_info(const dls_holder *h, uint64_t lease, dls_holder_lease *info)
{
    if (!h || !info)
        return DLS_ERR_INVAL;
    const hlease *l = hld_find_lease_c(h, lease);
    if (!l)
        return DLS_ERR_NO_LEASE;
    memset(info, 0, sizeof *info);
    info->lease = l->id;
    info->proposal = l->proposal;
    info->state = l->state;
    info->subject.p = l->subject;
    info->subject.n = l->subject_len;
    info->mode = l->mode;
    info->duration = l->duration;
    info->has_max = l->has_max;
    info->max = l->max;
    info->interval_ns = l->interval;
    info->observed = l->observed;
    info->renewed = l->renewed;
    info->last_renewal = l->last_renewal;
    info->seq = l->seq;
    info->bound = hld_lease_bound(l);
    info->confirmed = l->confirmed;
    info->confirmed_renewal = l->confirmed_reading;
    info->last_position = l->last_pos;
    info->unconfirmed = l->npend;
    return 0;
}

bool dls_holder_confirmed_position(const dls_holder *h, uint64_t *pos)
{
    if (!h || !h->has_confirmed_pos)
        return false;
    if (pos)
        *pos = h->confirmed_pos;
    return true;
}

uint64_t dls_holder_proposal_seq(const dls_holder *h)
{
    return h ? h->prop_seq : 0;
}

uint64_t dls_holder_max_seen(const dls_holder *h)
{
    return h ? h->max_seen : 0;
}

const char *dls_holder_message(const dls_holder *h)
{
    return h ? h->msg : "";
}

int dls_holder_proposal_id(const dls_holder *h, uint64_t handle, uint8_t id[16])
{
    if (!h || !id)
        return DLS_ERR_INVAL;
    for (size_t i = 0; i < h->nprops; i++) {
        if (h->props[i].handle == handle) {
            memcpy(id, h->props[i].id + 2, PROP_ID_LEN);
            return 0;
        }
    }
    return DLS_ERR_NOTFOUND;
}

const char *dls_holder_event_name(dls_holder_event_kind k)
{
    switch (k) {
    case DLS_HOLDER_GRANTED: return "granted";
    case DLS_HOLDER_REFUSED: return "refused";
    case DLS_HOLDER_LAPSED: return "lapsed";
    case DLS_HOLDER_RENEWED: return "renewed";
    case DLS_HOLDER_RENEWAL_FAILED: return "renewal-failed";
    case DLS_HOLDER_BOUND: return "bound";
    case DLS_HOLDER_RELEASED: return "released";
    case DLS_HOLDER_RELEASE_FAILED: return "release-failed";
    case DLS_HOLDER_SIZING: return "sizing";
    case DLS_HOLDER_MISREGISTERED: return "misregistered";
    }
    return "unknown";
}
