/* The holder's view of the grantor's journal (holder.md, "Observe the grant
 * before acting", "Learn of a reclaim by observing it"): step 3 of
 * dls_holder_step. Only records that concern this holder are verified. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "holder/holder_int.h"
#include "daolease/mark.h"
#include "vocab/mp.h"

/* True when the envelope map carries "dao.env/sig" (the grantor's records
 * are signed, never MACed: a shared MAC key could forge them). */
static bool has_sig(const uint8_t *p, size_t n)
{
    static const char key[] = "dao.env/sig";
    dls_mp_item it;
    if (dls_mp_read(p, n, 0, &it) != 0 || it.type != DLS_MP_MAP)
        return false;
    size_t off = it.end;
    for (uint32_t i = 0; i < it.len; i++) {
        dls_mp_item k;
        if (dls_mp_read(p, n, off, &k) != 0)
            return false;
        if (k.type == DLS_MP_STR && k.len == sizeof key - 1 &&
            memcmp(k.data, key, sizeof key - 1) == 0)
            return true;
        size_t next;
        if (dls_mp_skip(p, n, off, DLS_MP_MAX_DEPTH, &next, NULL) != 0 ||
            dls_mp_skip(p, n, next, DLS_MP_MAX_DEPTH, &off, NULL) != 0)
            return false;
    }
    return false;
}

/* Verifies a journal record that concerns the holder and decodes the fact
 * it carries as verified. */
static bool verify_record(dls_holder *h, const uint8_t *p, size_t n, dls_fact *f)
{
    dls_attribution a;
    dls_resolver_attribute(h->jres, p, n, &a);
    return a.attributed && a.kind == DLS_REC_ENVELOPE &&
           hld_bytes_is(a.author, h->grantor, h->grantor_len) && has_sig(p, n) &&
           dls_fact_decode(a.fact.p, a.fact.n, f, NULL) == 0;
}

static void warn_sizing(dls_holder *h, uint64_t lease, uint64_t proposal)
{
    dls_holder_event *e = hld_event_push(h, DLS_HOLDER_SIZING, lease, proposal);
    hld_event_text(e, h->msg, strlen(h->msg));
    if (h->cb.warn)
        h->cb.warn(h->ud, DLS_ERR_SIZING, h->msg);
}

static void on_grant(dls_holder *h, const dls_fact *f, dls_holder_result *r)
{
    hprop *p = (f->keys & DLS_K_PROPOSAL) ? hld_find_prop(h, f->proposal) : NULL;
    uint64_t id = f->lease;
    bool accept;
    if (hld_find_lease(h, id))
        accept = false; /* rule 6: accepted repeated for one lease */
    else if (p)
        accept = true; /* answers one of its own outstanding proposals */
    else
        accept = !(f->keys & DLS_K_PROPOSAL) && h->s.accept_unsolicited &&
                 id > h->max_seen && id > h->s.lease_floor && id > h->own_floor;
    if (id > h->max_seen)
        h->max_seen = id;
    if (!accept) {
        r->ignored++;
        return;
    }
    uint64_t handle = p ? p->handle : 0;
    if (p)
        hld_drop_prop(h, p);
    if (memcmp(f->medium, h->medium_id, DLS_MEDIUM_ID_LEN) != 0) {
        hld_event_push(h, DLS_HOLDER_MISREGISTERED, id, handle);
        return;
    }
    if (h->nleases >= h->s.max_leases) {
        r->ignored++; /* unsolicited, no room: not held */
        return;
    }
    uint8_t *subject = malloc(f->subject.n ? f->subject.n : 1);
    if (!subject) {
        r->ignored++;
        h->events_lost++;
        return;
    }
    memcpy(subject, f->subject.p, f->subject.n);
    hlease *l = &h->leases[h->nleases++];
    memset(l, 0, sizeof *l);
    l->id = id;
    l->proposal = handle;
    l->state = DLS_HOLDER_HELD;
    l->subject = subject;
    l->subject_len = f->subject.n;
    l->mode = (f->keys & DLS_K_MODE) ? f->mode : DLS_MODE_EXCLUSIVE;
    l->duration = f->duration;
    l->has_max = (f->keys & DLS_K_MAX) != 0;
    if (l->has_max)
        l->max = f->max;
    l->interval = dls_holder_interval_for(&h->s, l->duration.ns);
    l->observed = h->now; /* the reading at which the grant was observed */
    hld_index_add(h, (uint32_t)(l - h->leases));
    hld_sched_update(h, l);
    hld_event_push(h, DLS_HOLDER_GRANTED, id, handle);
    int rel;
    if (hld_sizing_text(&h->s, l->duration.ns, l->has_max ? l->max.ns : 0, false, h->msg,
                        sizeof h->msg, &rel) != 0)
        warn_sizing(h, id, handle);
}

static void on_refusal(dls_holder *h, const dls_fact *f, dls_holder_result *r)
{
    hprop *p = hld_find_prop(h, f->proposal);
    if (!p) {
        r->ignored++;
        return;
    }
    dls_holder_event *e = hld_event_push(h, DLS_HOLDER_REFUSED, 0, p->handle);
    if (f->keys & DLS_K_REASON)
        hld_event_text(e, f->reason.p, f->reason.n);
    hld_drop_prop(h, p);
}

static void on_lapsed(dls_holder *h, const dls_fact *f, dls_holder_result *r)
{
    hlease *l = hld_find_lease(h, f->lease);
    if (!l) {
        r->ignored++;
        return;
    }
    dls_holder_event *e = hld_event_push(h, DLS_HOLDER_LAPSED, l->id, l->proposal);
    if (e)
        e->cause = f->cause;
    hld_drop_lease(h, l);
}

/* ---- pass marks: confirmation (holder.md rev 4) ------------------------------ */

/* Confirms, for every held lease, the unconfirmed renewals a mark drained past:
 * position < d (drained is the next unread position, exclusive). The bound
 * then runs from the newest of their readings. A lease already lost stays
 * lost (hld_lose emptied its unconfirmed list). */
static void confirm_upto(dls_holder *h, uint64_t d)
{
    if (!h->has_confirmed_pos || d > h->confirmed_pos)
        h->confirmed_pos = d;
    h->has_confirmed_pos = true;
    for (size_t i = 0; i < h->nleases; i++) {
        hlease *l = &h->leases[i];
        size_t keep = 0;
        bool moved = false;
        for (size_t k = 0; k < l->npend; k++) {
            hpend pe = l->pend[k];
            if (pe.pos < d && l->state == DLS_HOLDER_HELD) {
                if (!l->confirmed || pe.reading > l->confirmed_reading)
                    l->confirmed_reading = pe.reading;
                l->confirmed = true;
                moved = true;
            } else if (pe.pos >= d) {
                l->pend[keep++] = pe;
            }
        }
        l->npend = keep;
        if (moved)
            hld_sched_update(h, l); /* the bound moved */
    }
}

static void flush_stage(dls_holder *h)
{
    if (h->staged)
        confirm_upto(h, h->stage_d);
    h->staged = false;
}

/* Removes the unconfirmed renewals a gap on the holder's medium skipped: a
 * renewal inside a gap was never read by the judge and is never confirmed. */
static void drop_gap(dls_holder *h, uint64_t from, uint64_t to)
{
    for (size_t i = 0; i < h->nleases; i++) {
        hlease *l = &h->leases[i];
        size_t keep = 0;
        for (size_t k = 0; k < l->npend; k++)
            if (!(l->pend[k].pos >= from && l->pend[k].pos < to))
                l->pend[keep++] = l->pend[k];
        l->npend = keep;
    }
}

static bool unconfirmed_in(const dls_holder *h, uint64_t from, uint64_t to)
{
    for (size_t i = 0; i < h->nleases; i++)
        for (size_t k = 0; k < h->leases[i].npend; k++)
            if (h->leases[i].pend[k].pos >= from && h->leases[i].pend[k].pos < to)
                return true;
    return false;
}

/* Does this mark record say anything the holder must act on? Decided on
 * the unverified bytes, so that only such marks cost a verification. */
static bool mark_concerns(dls_holder *h, const dls_mark_view *v)
{
    if (v->has_floor && v->floor > h->max_seen)
        return true; /* a new journal's floor: raise what the holder has seen */
    if (h->staged && v->continued && v->pass == h->stage_pass)
        return true; /* it may carry the gaps of a staged mark */
    dls_mark_list l = v->drained;
    dls_mark_pos mp;
    while (dls_mark_next_pos(&l, &mp))
        if (memcmp(mp.medium, h->medium_id, DLS_MEDIUM_ID_LEN) == 0 &&
            unconfirmed_in(h, 0, mp.position))
            return true;
    l = v->gaps;
    dls_mark_gap g;
    while (dls_mark_next_gap(&l, &g))
        if (memcmp(g.medium, h->medium_id, DLS_MEDIUM_ID_LEN) == 0 &&
            unconfirmed_in(h, g.from, g.to))
            return true;
    l = v->due;
    dls_mark_due du;
    while (dls_mark_next_due(&l, &du)) {
        const hlease *hl = hld_find_lease(h, du.lease);
        if (hl && hl->state == DLS_HOLDER_HELD)
            return true;
    }
    return false;
}

/* A verified mark record: gaps first (a renewal inside one is never
 * confirmed), then due (a held lease named there is lost at once), then the
 * holder's medium's drained position, applied when the mark is known to be
 * whole: a record with room left for one more entry ends its mark (marks
 * are filled greedily, judge.md "Journal"); otherwise the next record that
 * is not its continuation ends it. */
static void apply_mark(dls_holder *h, const dls_mark_view *v, size_t fact_len)
{
    dls_mark_list l = v->gaps;
    dls_mark_gap g;
    while (dls_mark_next_gap(&l, &g))
        if (memcmp(g.medium, h->medium_id, DLS_MEDIUM_ID_LEN) == 0)
            drop_gap(h, g.from, g.to);
    l = v->due;
    dls_mark_due du;
    while (dls_mark_next_due(&l, &du)) {
        hlease *hl = hld_find_lease(h, du.lease);
        if (hl && hl->state == DLS_HOLDER_HELD) {
            char why[96];
            snprintf(why, sizeof why, "named due (%s) in the grantor's pass %" PRIu64,
                     dls_cause_name(du.cause), v->pass);
            hld_lose(h, hl, why);
        }
    }
    l = v->drained;
    dls_mark_pos mp;
    while (dls_mark_next_pos(&l, &mp))
        if (memcmp(mp.medium, h->medium_id, DLS_MEDIUM_ID_LEN) == 0) {
            if (!h->staged || mp.position > h->stage_d)
                h->stage_d = mp.position;
            h->staged = true;
            h->stage_pass = v->pass;
        }
    /* the largest entry (a gaps entry) with its list's key and header */
    if (fact_len + 96 <= dls_mark_limit(h->grantor_len))
        flush_stage(h);
}

static void on_mark(dls_holder *h, const uint8_t *p, size_t n, const dls_attribution *a0,
                    dls_holder_result *r)
{
    dls_mark_view v;
    if (dls_mark_decode(a0->fact.p, a0->fact.n, &v, NULL) != 0)
        return; /* malformed: establishes nothing */
    if (!(v.continued && h->staged && v.pass == h->stage_pass))
        flush_stage(h); /* a new mark ends the staged one */
    if (!mark_concerns(h, &v))
        return;
    dls_attribution a;
    dls_resolver_attribute(h->jres, p, n, &a);
    if (!a.attributed || a.kind != DLS_REC_ENVELOPE ||
        !hld_bytes_is(a.author, h->grantor, h->grantor_len) || !has_sig(p, n) ||
        dls_mark_decode(a.fact.p, a.fact.n, &v, NULL) != 0) {
        r->forged++;
        return;
    }
    r->verified++;
    if (v.has_floor && v.floor > h->max_seen)
        h->max_seen = v.floor; /* ids at or below it were the lost journal's */
    apply_mark(h, &v, a.fact.n);
}

/* One journal record: decoded first; verified only when it concerns this
 * holder (verification is the expensive part). */
static void on_journal_record(dls_holder *h, const uint8_t *p, size_t n,
                              dls_holder_result *r)
{
    dls_attribution a;
    dls_record_classify(p, n, &a);
    if (a.kind != DLS_REC_ENVELOPE || a.why == DLS_WHY_MALFORMED ||
        !hld_bytes_is(a.author, h->grantor, h->grantor_len))
        return; /* bare facts and other authors never count on a journal */
    if (dls_mark_classify(a.fact.p, a.fact.n) == DLS_MARK_REC_MARK) {
        on_mark(h, p, n, &a, r);
        return;
    }
    flush_stage(h); /* any other record ends a staged mark */
    dls_fact f;
    if (dls_fact_decode(a.fact.p, a.fact.n, &f, NULL) != 0)
        return; /* defective, or a pass mark beyond the lease-fact limit */
    switch (f.kind) {
    case DLS_FACT_GRANT:
        if (!hld_bytes_is(f.holder, h->name, h->name_len))
            return;
        break;
    case DLS_FACT_REFUSAL:
        if (!hld_bytes_is(f.holder, h->name, h->name_len) || !hld_find_prop(h, f.proposal))
            return;
        break;
    case DLS_FACT_RECLAIM:
        if (!hld_find_lease(h, f.lease))
            return;
        break;
    default:
        return;
    }
    dls_fact vf;
    if (!verify_record(h, p, n, &vf) || vf.kind != f.kind) {
        r->forged++;
        return;
    }
    r->verified++;
    if (vf.kind == DLS_FACT_GRANT)
        on_grant(h, &vf, r);
    else if (vf.kind == DLS_FACT_REFUSAL)
        on_refusal(h, &vf, r);
    else
        on_lapsed(h, &vf, r);
}

/* holder.md rev 4: a journal cursor that answers gap or transport-error may
 * have missed a `lapsed`: every held lease is lost at once. */
static void lose_all(dls_holder *h, const char *why)
{
    h->staged = false;
    for (size_t i = 0; i < h->nleases; i++)
        if (h->leases[i].state == DLS_HOLDER_HELD)
            hld_lose(h, &h->leases[i], why);
}

void hld_drain_journal(dls_holder *h, dls_holder_result *r)
{
    size_t drained = 0;
    while (!h->journal_ended) {
        if (h->s.journal_budget && drained >= h->s.journal_budget) {
            r->more = true;
            return;
        }
        dls_record rec;
        dls_where w;
        dls_next nx = dls_cursor_next(h->journal, &rec, &w);
        switch (nx) {
        case DLS_NEXT_OK:
            drained++;
            r->journal_records++;
            on_journal_record(h, rec.p, rec.n, r);
            break;
        case DLS_NEXT_GAP:
            r->journal_gaps++;
            lose_all(h, "the grantor's journal answered gap: a lapsed may have been missed");
            break;
        case DLS_NEXT_END:
            h->journal_ended = true;
            break;
        case DLS_NEXT_ERROR:
            r->journal_error = DLS_ERR_TRANSPORT;
            lose_all(h, "the grantor's journal answered transport-error: a lapsed may "
                        "have been missed");
            return;
        case DLS_NEXT_BLOCKED:
        default:
            return;
        }
    }
}

