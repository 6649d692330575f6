/* The holder's bottom helpers (holder.md): events, proposals, a lease's
 * bound and the append of the holder's own records. Called from holder.c,
 * sched.c, journal.c and batch.c, and calling none of them, so the files of
 * holder/ call downwards only (docs/style.md, Where a helper goes). */
#include <string.h>

#include "holder/holder_int.h"

dls_holder_event *hld_event_push(dls_holder *h, dls_holder_event_kind kind,
                                    uint64_t lease, uint64_t proposal)
{
    dls_holder_event *e = dls_vec_push(&h->ev, sizeof *e);
    if (!e) {
        h->events_lost++;
        return NULL;
    }
    memset(e, 0, offsetof(dls_holder_event, text) + 1);
    e->kind = kind;
    e->lease = lease;
    e->proposal = proposal;
    e->reading = h->now;
    return e;
}

void hld_event_text(dls_holder_event *e, const void *p, size_t n)
{
    if (!e)
        return;
    if (n > DLS_HOLDER_TEXT_MAX - 1)
        n = DLS_HOLDER_TEXT_MAX - 1;
    if (n)
        memcpy(e->text, p, n);
    e->text[n] = '\0';
    e->text_len = n;
}

/* The proposal whose encoded id is exactly `enc`, or NULL. */
hprop *hld_find_prop(dls_holder *h, dls_bytes enc)
{
    if (enc.n != PROP_ENC_LEN)
        return NULL;
    for (size_t i = 0; i < h->nprops; i++)
        if (memcmp(h->props[i].id, enc.p, PROP_ENC_LEN) == 0)
            return &h->props[i];
    return NULL;
}

void hld_drop_prop(dls_holder *h, hprop *p)
{
    size_t i = (size_t)(p - h->props);
    h->props[i] = h->props[--h->nprops];
}

uint64_t hld_lease_bound(const hlease *l)
{
    /* holder.md rev 4: only a confirmed renewal extends the bound */
    return dls_holder_bound_of(l->observed, l->confirmed, l->confirmed_reading,
                               l->duration.ns, l->has_max, l->max.ns);
}
/* Encodes f, seals it when the holder has a secret, appends it. */
int hld_append_fact(dls_holder *h, const dls_fact *f, uint64_t *pos)
{
    size_t flen = 0;
    int rc = dls_fact_encode(f, h->fact, sizeof h->fact, &flen);
    if (rc != 0)
        return rc;
    const uint8_t *rec = h->fact;
    size_t rlen = flen;
    if (h->secret) {
        rc = dls_envelope_seal(h->secret, h->medium_id, h->fact, flen, h->env,
                               sizeof h->env, &rlen);
        if (rc != 0)
            return rc;
        rec = h->env;
    }
    return dls_medium_append(h->medium, rec, rlen, pos, NULL);
}
