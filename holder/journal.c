/* The holder's view of the grantor's journal (holder.md, "Observe the grant
 * before acting", "Learn of a reclaim by observing it"): step 3 of
 * dls_holder_step. Only records that concern this holder are verified. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "holder/holder_int.h"
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
            break;
        case DLS_NEXT_END:
            h->journal_ended = true;
            break;
        case DLS_NEXT_ERROR:
            r->journal_error = DLS_ERR_TRANSPORT;
            return;
        case DLS_NEXT_BLOCKED:
        default:
            return;
        }
    }
}

