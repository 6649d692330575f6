/* What keeps a holder's step O(what is due), not O(leases held)
 * (docs/holder.md, "Cost of a step"):
 *
 * - an index from lease id to the lease's slot in h->leases: open
 *   addressing, linear probing, deletion by backward shift, sized once for
 *   max_leases at half load, so it never grows and never fails. Lease ids
 *   come only from the grantor's verified records, so a plain
 *   multiplicative hash is enough (the grantor chooses every id anyway);
 * - the schedule: an indexed min-heap (vocab/heap.h) with one entry per
 *   held lease, keyed by the reading at which the lease next needs a step:
 *   its renewal due or its bound, whichever is first (0 once may_act found
 *   the bound). Every change to a held lease's timing re-keys its entry, so
 *   the top is always the exact next reading. Released-and-retrying leases
 *   are not in it: the step looks for them only while one exists. */
#include <stdlib.h>

#include "holder/holder_int.h"

#define NO_SLOT UINT32_MAX

static size_t home(const dls_holder *h, uint64_t id)
{
    return (size_t)((id * 0x9E3779B97F4A7C15u) >> (64 - h->ix_bits));
}

static void moved(void *ctx, uint32_t ref, uint32_t pos)
{
    dls_holder *h = ctx;
    h->leases[ref].hpos = pos;
}

int hld_sched_init(dls_holder *h)
{
    unsigned bits = 4;
    while (((size_t)1 << bits) < 2 * h->s.max_leases)
        bits++;
    h->ix_bits = bits;
    h->ix = calloc((size_t)1 << bits, sizeof *h->ix);
    h->popped = calloc(h->s.max_leases, sizeof *h->popped);
    dls_heap_init(&h->sched, moved, h);
    if (!h->ix || !h->popped || dls_heap_reserve(&h->sched, (uint32_t)h->s.max_leases) != 0)
        return DLS_ERR_NOMEM;
    return 0;
}

void hld_sched_fini(dls_holder *h)
{
    free(h->ix);
    free(h->popped);
    dls_heap_free(&h->sched);
    h->ix = NULL;
    h->popped = NULL;
}

/* ---- the id index ---------------------------------------------------------- */

hlease *hld_find_lease(dls_holder *h, uint64_t id)
{
    size_t mask = ((size_t)1 << h->ix_bits) - 1;
    for (size_t i = home(h, id);; i = (i + 1) & mask) {
        uint32_t v = h->ix[i];
        if (v == 0)
            return NULL;
        if (h->leases[v - 1].id == id)
            return &h->leases[v - 1];
    }
}

const hlease *hld_find_lease_c(const dls_holder *h, uint64_t id)
{
    return hld_find_lease((dls_holder *)h, id);
}

/* The index slot that holds lease ix (it is there). */
static size_t slot_of(const dls_holder *h, uint32_t ix)
{
    size_t mask = ((size_t)1 << h->ix_bits) - 1;
    size_t i = home(h, h->leases[ix].id);
    while (h->ix[i] != ix + 1)
        i = (i + 1) & mask;
    return i;
}

void hld_index_add(dls_holder *h, uint32_t ix)
{
    size_t mask = ((size_t)1 << h->ix_bits) - 1;
    size_t i = home(h, h->leases[ix].id);
    while (h->ix[i] != 0)
        i = (i + 1) & mask;
    h->ix[i] = ix + 1;
    h->leases[ix].hpos = NO_SLOT;
}

static void index_del(dls_holder *h, uint32_t ix)
{
    size_t mask = ((size_t)1 << h->ix_bits) - 1;
    size_t i = slot_of(h, ix);
    /* backward shift: pull each later entry of the run into the hole when
     * its home is not between the hole and it */
    for (size_t j = (i + 1) & mask; h->ix[j] != 0; j = (j + 1) & mask) {
        size_t k = home(h, h->leases[h->ix[j] - 1].id);
        bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            h->ix[i] = h->ix[j];
            i = j;
        }
    }
    h->ix[i] = 0;
}

void hld_drop_lease(dls_holder *h, hlease *l)
{
    uint32_t ix = (uint32_t)(l - h->leases), last = (uint32_t)h->nleases - 1;
    if (l->hpos != NO_SLOT)
        dls_heap_remove(&h->sched, l->hpos);
    index_del(h, ix);
    free(l->subject);
    if (ix != last) {
        /* the last lease moves into the hole: its index slot and its
         * schedule entry follow it */
        h->ix[slot_of(h, last)] = ix + 1;
        h->leases[ix] = h->leases[last];
        if (h->leases[ix].hpos != NO_SLOT)
            dls_heap_reref(&h->sched, h->leases[ix].hpos, ix);
    }
    h->nleases--;
}

/* ---- the schedule ------------------------------------------------------------ */

uint64_t hld_lease_next(const hlease *l)
{
    uint64_t due = dls_holder_due_of(l->observed, l->renewed, l->last_renewal, l->interval);
    if (l->failed && due <= l->failed_at)
        due = dls_add_sat(l->failed_at, 1); /* retry at a newer reading */
    uint64_t bound = hld_lease_bound(l);
    return due < bound ? due : bound;
}

void hld_sched_update(dls_holder *h, hlease *l)
{
    uint32_t ix = (uint32_t)(l - h->leases);
    if (l->state != DLS_HOLDER_HELD) {
        if (l->hpos != NO_SLOT) {
            dls_heap_remove(&h->sched, l->hpos);
            l->hpos = NO_SLOT;
        }
        return;
    }
    uint64_t key = l->bound_unreported ? 0 : hld_lease_next(l);
    if (l->hpos == NO_SLOT)
        (void)dls_heap_push(&h->sched, key, ix); /* reserved: cannot fail */
    else if (h->sched.key[l->hpos] != key)
        dls_heap_update(&h->sched, l->hpos, key);
}

static int by_index(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

size_t hld_sched_pop_due(dls_holder *h)
{
    size_t n = 0;
    while (h->sched.n > 0 && dls_heap_top_key(&h->sched) <= h->now) {
        uint32_t ix = dls_heap_top_ref(&h->sched);
        dls_heap_remove(&h->sched, 0);
        h->leases[ix].hpos = NO_SLOT;
        h->popped[n++] = ix;
    }
    /* the order the leases were granted in (modulo forgets), as a walk of
     * h->leases gives: events and batches do not depend on the heap */
    qsort(h->popped, n, sizeof *h->popped, by_index);
    return n;
}

bool hld_sched_next(const dls_holder *h, uint64_t *reading)
{
    bool any = h->sched.n > 0;
    uint64_t best = any ? dls_heap_top_key(&h->sched) : UINT64_MAX;
    if (h->releasing) {
        uint64_t r = dls_add_sat(h->now, 1);
        best = r < best ? r : best;
        any = true;
    }
    if (any && reading)
        *reading = best;
    return any;
}

/* A lease reached its bound: the agent must stop (holder.md). */
void hld_lose(dls_holder *h, hlease *l, const char *why)
{
    l->state = DLS_HOLDER_AT_BOUND;
    l->bound_unreported = false;
    l->npend = 0;
    hld_sched_update(h, l);
    dls_holder_event *e = hld_event_push(h, DLS_HOLDER_BOUND, l->id, l->proposal);
    hld_event_text(e, why, strlen(why));
}
