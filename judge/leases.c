/* The owner's view of the ledger (include/daolease/judge_view.h): live
 * leases by subject and by holder, and the `granted` callback.
 *
 * The subject index and its lease list are the ledger's own. The holder
 * index is kept here: a doubly linked list of lease refs per party, in two
 * arrays parallel to the lease pool (next/prev) and one per party (head),
 * linked by jl_lease_add and unlinked by jl_lease_remove. jo_reserve grows
 * the arrays before anything is linked, so linking never fails. Cost: 8
 * bytes a lease slot and 4 a party.
 *
 * Grants are told to the owner once the pass's records are on the journal
 * (as the unsolicited callback): jp_grant queues the lease id, and
 * jo_tell_granted calls `granted` for each after the flush. */
#include <stdlib.h>
#include <string.h>

#include "daolease/judge_view.h"
#include "judge/internal.h"
#include "judge/leases.h"

enum { IT_ALL = 1, IT_SUBJECT, IT_HOLDER };

struct jo_view {
    uint32_t *hnext, *hprev;   /* per lease slot */
    uint32_t cap_leases;
    uint32_t *head;            /* per party */
    uint32_t cap_parties;
    jvec granted;              /* uint64_t lease ids to tell */
};

static int grow(uint32_t **a, uint32_t *cap, uint32_t need, uint32_t more_arrays,
                uint32_t **b)
{
    if (need < *cap)
        return 0;
    uint32_t n = *cap ? *cap : 64;
    while (n <= need)
        n = n > UINT32_MAX / 2 ? UINT32_MAX : n * 2;
    uint32_t *x = realloc(*a, (size_t)n * sizeof *x);
    if (!x)
        return DLS_ERR_NOMEM;
    *a = x;
    if (more_arrays) {
        uint32_t *y = realloc(*b, (size_t)n * sizeof *y);
        if (!y)
            return DLS_ERR_NOMEM; /* *a is larger already: harmless */
        *b = y;
    }
    for (uint32_t i = *cap; i < n; i++) {
        x[i] = JNIL;
        if (more_arrays)
            (*b)[i] = JNIL;
    }
    *cap = n;
    return 0;
}

int jo_reserve(dls_judge *j, uint32_t idx, uint32_t holder)
{
    if (!j->view) {
        j->view = calloc(1, sizeof *j->view);
        if (!j->view)
            return DLS_ERR_NOMEM;
    }
    struct jo_view *v = j->view;
    int rc = grow(&v->hnext, &v->cap_leases, idx, 1, &v->hprev);
    if (!rc)
        rc = grow(&v->head, &v->cap_parties, holder, 0, NULL);
    return rc;
}

void jo_link(dls_judge *j, uint32_t idx)
{
    struct jo_view *v = j->view;
    uint32_t h = jl_lease_at(j, idx)->holder;
    v->hprev[idx] = JNIL;
    v->hnext[idx] = v->head[h];
    if (v->head[h] != JNIL)
        v->hprev[v->head[h]] = idx;
    v->head[h] = idx;
}

void jo_unlink(dls_judge *j, uint32_t idx)
{
    struct jo_view *v = j->view;
    if (!v || idx >= v->cap_leases)
        return;
    uint32_t h = jl_lease_at(j, idx)->holder;
    if (v->hprev[idx] != JNIL)
        v->hnext[v->hprev[idx]] = v->hnext[idx];
    else if (h < v->cap_parties && v->head[h] == idx)
        v->head[h] = v->hnext[idx];
    if (v->hnext[idx] != JNIL)
        v->hprev[v->hnext[idx]] = v->hprev[idx];
    v->hnext[idx] = v->hprev[idx] = JNIL;
}

void jo_free(dls_judge *j)
{
    struct jo_view *v = j->view;
    if (!v)
        return;
    free(v->hnext);
    free(v->hprev);
    free(v->head);
    jvec_free(&v->granted);
    free(v);
    j->view = NULL;
}

size_t jo_memory(const dls_judge *j)
{
    const struct jo_view *v = j->view;
    if (!v)
        return 0;
    return sizeof *v + (size_t)v->cap_leases * 8 + (size_t)v->cap_parties * 4 +
           v->granted.cap * sizeof(uint64_t);
}

int jo_granted(dls_judge *j, uint64_t lease)
{
    if (!j->cb.granted)
        return 0;
    if (!j->view && !(j->view = calloc(1, sizeof *j->view)))
        return DLS_ERR_NOMEM;
    return jvec_push(&j->view->granted, sizeof lease, &lease);
}

void jo_tell_granted(dls_judge *j)
{
    struct jo_view *v = j->view;
    if (!v || !v->granted.n)
        return;
    for (size_t i = 0; i < v->granted.n; i++) {
        dls_judge_lease_info info;
        if (dls_judge_lease(j, JVEC_AT(v->granted, uint64_t, i), &info))
            continue; /* cannot happen: nothing lapses between grant and tell */
        j->in_callback = true;
        j->cb.granted(j->user, &info);
        j->in_callback = false;
    }
    v->granted.n = 0;
}

void jo_drop_granted(dls_judge *j)
{
    if (j->view)
        j->view->granted.n = 0;
}

/* ---- iterators ---------------------------------------------------------------- */

typedef struct okey {
    const uint8_t *p;
    size_t n;
} okey;

static bool party_is(const void *ctx, uint32_t ref, const void *key)
{
    const jl_party *pa = jl_party_at(ctx, ref);
    const okey *k = key;
    return pa->len == k->n && memcmp(pa->name, k->p, k->n) == 0;
}

int dls_judge_leases(dls_judge *j, dls_judge_iter *it)
{
    if (!j || !it)
        return DLS_ERR_INVAL;
    *it = (dls_judge_iter){j, IT_ALL, 0, j->leases.next};
    return 0;
}

int dls_judge_leases_by_subject(dls_judge *j, dls_bytes subject, dls_judge_iter *it)
{
    if (!j || !it || (!subject.p && subject.n))
        return DLS_ERR_INVAL;
    uint32_t s = subject.n && subject.n <= DLS_SUBJECT_MAX
                     ? jl_subject_find(j, subject.p, subject.n)
                     : JNIL;
    *it = (dls_judge_iter){j, IT_SUBJECT, s == JNIL ? JNIL : jl_subject_at(j, s)->first_lease, 0};
    return 0;
}

int dls_judge_leases_by_holder(dls_judge *j, dls_bytes holder, dls_judge_iter *it)
{
    if (!j || !it || (!holder.p && holder.n))
        return DLS_ERR_INVAL;
    uint32_t first = JNIL;
    if (holder.n && holder.n <= DLS_ID_MAX && j->view) {
        okey k = {holder.p, holder.n};
        uint32_t p = jtab_find(&j->by_party, jl_hash(j, holder.p, holder.n), party_is, j, &k);
        if (p != JNIL && p < j->view->cap_parties)
            first = j->view->head[p];
    }
    *it = (dls_judge_iter){j, IT_HOLDER, first, 0};
    return 0;
}

bool dls_judge_leases_next(dls_judge_iter *it, dls_judge_lease_info *info, uint64_t *due_by)
{
    if (!it || !it->judge || !info)
        return false;
    dls_judge *j = it->judge;
    uint32_t idx = JNIL;
    if (it->kind == IT_ALL) {
        while (it->next < it->end && it->next < j->leases.next) {
            uint32_t i = it->next++;
            if (jl_lease_at(j, i)->flags & JL_USED) {
                idx = i;
                break;
            }
        }
    } else if (it->next != JNIL) {
        idx = it->next;
        it->next = it->kind == IT_SUBJECT ? jl_lease_at(j, idx)->subj_next
                                          : j->view->hnext[idx];
    }
    if (idx == JNIL || dls_judge_lease(j, jl_lease_at(j, idx)->id, info))
        return false;
    if (due_by)
        *due_by = jl_deadline(j, jl_lease_at(j, idx));
    return true;
}

int dls_judge_medium_view_of(const dls_judge *j, size_t i, dls_judge_medium_view *out)
{
    if (!j || !out || i >= j->nmedia)
        return DLS_ERR_INVAL;
    const jm_medium *m = &j->media[i];
    *out = (dls_judge_medium_view){
        .drained = m->drained,
        .facts = m->facts,
        .gaps = m->gaps,
        .position = m->c || m->has_held ? jm_position(m) : 0, /* a standby: no cursor yet */
        .failing = m->in_run,
        .failing_since = m->in_run ? m->fail_since : 0,
        .ended = m->retired,
    };
    return 0;
}
