/* The audit's own ledger (judge.md "Ledger", read back from the journal):
 * leases, subjects and media by id, the live set, and the small growable
 * arrays and tables behind them. Written from the specification; it shares
 * nothing with the judge's ledger (judge/ledger.c). */
#include "audit/internal.h"

#include <stdlib.h>
#include <string.h>

#include "audit/amark.h"
#include "daolease/attrib.h"

/* ---- small helpers --------------------------------------------------------- */

/* The index stored under key[0..n) of t into *v (v may be NULL); false when
 * the key is absent. */
bool au_ix_get(const dls_htab *t, const uint8_t *key, size_t n, uint64_t *v)
{
    const uint64_t *p = dls_htab_find(t, key, n);
    if (p && v)
        *v = *p;
    return p != NULL;
}

/* Stores v under key[0..n) of t, inserting or replacing; 0 or an error of
 * dls_htab_put. */
int au_ix_set(dls_htab *t, const uint8_t *key, size_t n, uint64_t v)
{
    uint64_t *p;
    int rc = dls_htab_put(t, key, n, &p, NULL);
    if (!rc)
        *p = v;
    return rc;
}

/* ---- state lookups --------------------------------------------------------- */

audit_lease *au_lease_find(dls_audit *a, uint64_t id)
{
    const uint64_t *ix = dls_htab_find_u64(&a->lease_ix, id);
    return ix ? a->leases[*ix] : NULL;
}

/* Records that lease id sits at leases[ix]; 0 or an error of dls_htab_put. */
int au_lease_ix_set(dls_audit *a, uint64_t id, uint64_t ix)
{
    uint64_t *p;
    int rc = dls_htab_put_u64(&a->lease_ix, id, &p, NULL);
    if (!rc)
        *p = ix;
    return rc;
}

dls_audit_point au_point_now(const dls_audit *a)
{
    dls_audit_point p = {a->last_pass, a->last_now, a->cur_basis};
    return p;
}

/* The medium with this id; creates a "missing" entry when it was not given. */
audit_medium *au_medium_get(dls_audit *a, const uint8_t id[DLS_MEDIUM_ID_LEN], size_t *ixo)
{
    uint64_t ix;
    if (au_ix_get(&a->medium_ix, id, DLS_MEDIUM_ID_LEN, &ix)) {
        if (ixo)
            *ixo = (size_t)ix;
        a->media[ix].named = true;
        return &a->media[ix];
    }
    if (au_grow((void **)&a->media, a->n_media, &a->cap_media, sizeof *a->media)) {
        a->nomem = true;
        return NULL;
    }
    audit_medium *m = &a->media[a->n_media];
    memset(m, 0, sizeof *m);
    memcpy(m->id, id, DLS_MEDIUM_ID_LEN);
    m->given_ix = SIZE_MAX;
    m->named = true;
    if (au_ix_set(&a->medium_ix, id, DLS_MEDIUM_ID_LEN, a->n_media)) {
        a->nomem = true;
        return NULL;
    }
    if (ixo)
        *ixo = a->n_media;
    a->n_media++;
    /* report it once */
    uint8_t mid[DLS_MEDIUM_ID_LEN];
    memcpy(mid, id, sizeof mid);
    if (!au_grow((void **)&a->missing, a->sum.n_missing_media, &a->cap_missing, sizeof *a->missing))
        memcpy(a->missing[a->sum.n_missing_media++], mid, DLS_MEDIUM_ID_LEN);
    else
        a->nomem = true;
    char hx[33];
    dls_hex16(id, hx);
    au_warn(a, "medium %s is named by the journal but was not given: the leases registered on "
            "it are unverifiable", hx);
    return m;
}

void au_live_add(dls_audit *a, size_t ix)
{
    if (au_grow((void **)&a->live, a->n_live, &a->cap_live, sizeof *a->live)) {
        a->nomem = true;
        return;
    }
    a->leases[ix]->live_pos = a->n_live;
    a->live[a->n_live++] = ix;
}

void au_live_remove(dls_audit *a, audit_lease *l)
{
    size_t pos = l->live_pos;
    size_t last = a->live[--a->n_live];
    a->live[pos] = last;
    a->leases[last]->live_pos = pos;
}

void au_sync(dls_audit *a, audit_lease *l)
{
    const audit_medium *m = &a->media[l->medium_ix];
    if (l->epoch == m->gap_epoch)
        return;
    l->epoch = m->gap_epoch;
    l->unknown = true;
    l->resumed = m->gap_now;
    l->pub.findings |= DLS_AUDIT_F_UNKNOWN;
}

void au_mark_unknown(dls_audit *a, audit_lease *l)
{
    au_sync(a, l);
    l->unknown = true;
    l->resumed = a->last_now;
    l->pub.findings |= DLS_AUDIT_F_UNKNOWN;
}

void au_make_unverifiable(audit_lease *l)
{
    l->unverifiable = true;
    l->pub.findings |= DLS_AUDIT_F_UNVERIFIABLE;
}

static void unverifiable_pass(dls_audit *a, uint64_t pass)
{
    if (a->sum.n_unverifiable_passes && a->unver_passes[a->sum.n_unverifiable_passes - 1] == pass)
        return;
    APUSH(a, a->unver_passes, a->sum.n_unverifiable_passes, a->cap_unver_passes, pass);
}

/* Every live lease registered on medium `mix` becomes unverifiable: records
 * the judge drained in this pass cannot be read by the audit. */
void au_span_unverifiable(dls_audit *a, size_t mix)
{
    unverifiable_pass(a, a->last_pass);
    for (size_t i = 0; i < a->n_live; i++) {
        audit_lease *l = a->leases[a->live[i]];
        if (l->medium_ix == mix)
            au_make_unverifiable(l);
    }
}

/* ---- journal lease records ------------------------------------------------ */

audit_subject *au_subject_get(dls_audit *a, dls_bytes s, size_t *ixo)
{
    uint64_t ix;
    if (au_ix_get(&a->subject_ix, s.p, s.n, &ix)) {
        *ixo = (size_t)ix;
        return &a->subjects[ix];
    }
    uint8_t *copy = malloc(s.n + 1);
    if (!copy ||
        au_grow((void **)&a->subjects, a->n_subjects, &a->cap_subjects, sizeof *a->subjects) ||
        au_ix_set(&a->subject_ix, s.p, s.n, a->n_subjects)) {
        free(copy);
        a->nomem = true;
        return NULL;
    }
    memcpy(copy, s.p, s.n);
    audit_subject *sub = &a->subjects[a->n_subjects];
    memset(sub, 0, sizeof *sub);
    sub->bytes = copy;
    sub->n = s.n;
    sub->order = a->n_subjects;
    *ixo = a->n_subjects++;
    return sub;
}

/* ---- the deadline heap ------------------------------------------------------ */

uint64_t au_deadline(const audit_lease *l, uint64_t tol)
{
    uint64_t key = dls_add_sat(l->last_obs, dls_add_sat(l->pub.duration_ns, tol));
    if (l->unknown) {
        uint64_t r = dls_add_sat(l->resumed, l->pub.duration_ns);
        if (r > key)
            key = r;
    }
    if (l->pub.max_ns) {
        uint64_t cap = dls_add_sat(l->tenure, dls_add_sat(l->pub.max_ns, tol));
        if (cap < key)
            key = cap;
    }
    return key;
}

static void heap_up(audit_deadline *h, size_t i)
{
    audit_deadline x = h[i];
    while (i) {
        size_t p = (i - 1) / 2;
        if (h[p].key <= x.key)
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = x;
}

static void heap_down(audit_deadline *h, size_t n, size_t i)
{
    audit_deadline x = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1].key < h[c].key)
            c++;
        if (x.key <= h[c].key)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

void au_heap_push(dls_audit *a, size_t ix, uint64_t key)
{
    if (au_grow((void **)&a->heap, a->n_heap, &a->cap_heap, sizeof *a->heap)) {
        a->nomem = true;
        return;
    }
    a->heap[a->n_heap] = (audit_deadline){key, ix};
    heap_up(a->heap, a->n_heap++);
    a->leases[ix]->in_heap = true;
    if (a->cur_tol > a->heap_tol)
        a->heap_tol = a->cur_tol;
}

/* Removes the smallest entry. */
audit_deadline au_heap_pop(dls_audit *a)
{
    audit_deadline top = a->heap[0];
    a->heap[0] = a->heap[--a->n_heap];
    if (a->n_heap)
        heap_down(a->heap, a->n_heap, 0);
    a->leases[top.ix]->in_heap = false;
    return top;
}

void au_heap_rebuild(dls_audit *a, uint64_t tol)
{
    for (size_t i = 0; i < a->n_heap; i++)
        a->leases[a->heap[i].ix]->in_heap = false;
    a->n_heap = 0;
    a->heap_tol = a->cur_tol = tol;
    for (size_t i = 0; i < a->n_live; i++) {
        audit_lease *l = a->leases[a->live[i]];
        if (!l->pending && !l->unverifiable)
            au_heap_push(a, a->live[i], au_deadline(l, tol));
    }
}

void au_candidate(dls_audit *a, audit_lease *l)
{
    if (l->cand_pass == a->last_pass)
        return;
    if (au_grow((void **)&a->cands, a->n_cands, &a->cap_cands, sizeof *a->cands)) {
        a->nomem = true;
        return;
    }
    l->cand_pass = a->last_pass;
    a->cands[a->n_cands++] = l->ix;
}
