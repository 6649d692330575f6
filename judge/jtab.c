/* Compact hash indexes (see jtab.h). */
#include "judge/jtab.h"

#include <stdlib.h>

#include "daolease/error.h"

static inline uint32_t slot_hash(uint64_t s) { return (uint32_t)(s >> 32); }
static inline uint32_t slot_ref(uint64_t s) { return (uint32_t)s - 1u; }
static inline uint32_t step(uint32_t i, uint32_t cap) { return i + 1 == cap ? 0 : i + 1; }

/* The capacity after cap: 16, then alternately ×1.5 and ×4/3 (2^k → 1.5 ·
 * 2^k → 2^(k+1)); 0 when it would not fit. */
static uint32_t next_cap(uint32_t cap)
{
    if (cap == 0)
        return 16;
    uint64_t n = (cap & (cap - 1)) == 0 ? (uint64_t)cap + cap / 2 : (uint64_t)cap / 3 * 4;
    return n > UINT32_MAX ? 0 : (uint32_t)n;
}

/* Must the table grow before one more entry (load at most 0.7)? */
static bool full(uint32_t count, uint32_t cap)
{
    return (uint64_t)(count + 1) * 10 > (uint64_t)cap * 7;
}

/* Is `ideal` cyclically outside (hole, j]? Then the entry at j may move
 * back into the hole. */
static bool may_move(uint32_t ideal, uint32_t hole, uint32_t j)
{
    if (hole <= j)
        return ideal <= hole || ideal > j;
    return ideal <= hole && ideal > j;
}

/* ---- jtab ------------------------------------------------------------------- */

void jtab_free(jtab *t)
{
    free(t->slots);
    t->slots = NULL;
    t->cap = t->count = 0;
}

uint32_t jtab_find(const jtab *t, uint32_t h, jtab_eq_fn eq, const void *ctx,
                   const void *key)
{
    if (t->cap == 0)
        return JNIL;
    for (uint32_t i = jtab_home(h, t->cap);; i = step(i, t->cap)) {
        uint64_t s = t->slots[i];
        if (s == 0)
            return JNIL;
        if (slot_hash(s) == h && eq(ctx, slot_ref(s), key))
            return slot_ref(s);
    }
}

static void place(uint64_t *slots, uint32_t cap, uint64_t s)
{
    uint32_t i = jtab_home(slot_hash(s), cap);
    while (slots[i] != 0)
        i = step(i, cap);
    slots[i] = s;
}

/* The capacity of the sequence (next_cap) that holds n entries at load
 * at most 0.7, never below cap; 0 when none fits. */
static uint32_t cap_for(uint32_t cap, uint32_t n)
{
    while (n > 0 && full(n - 1, cap))
        if ((cap = next_cap(cap)) == 0)
            return 0;
    return cap;
}

static int resize(jtab *t, uint32_t ncap)
{
    uint64_t *ns = calloc(ncap, sizeof *ns);
    if (!ns)
        return DLS_ERR_NOMEM;
    for (uint32_t i = 0; i < t->cap; i++)
        if (t->slots[i])
            place(ns, ncap, t->slots[i]);
    free(t->slots);
    t->slots = ns;
    t->cap = ncap;
    return 0;
}

static int grow(jtab *t)
{
    uint32_t ncap = next_cap(t->cap);
    return ncap ? resize(t, ncap) : DLS_ERR_NOMEM;
}

int jtab_reserve(jtab *t, uint32_t n)
{
    uint32_t ncap = cap_for(t->cap, n);
    if (ncap == 0)
        return DLS_ERR_NOMEM;
    return ncap == t->cap ? 0 : resize(t, ncap);
}

int jtab_insert(jtab *t, uint32_t h, uint32_t ref)
{
    if (full(t->count, t->cap)) {
        int rc = grow(t);
        if (rc)
            return rc;
    }
    place(t->slots, t->cap, jtab_slot(h, ref));
    t->count++;
    return 0;
}

/* Sorts slots by their hash (the upper 32 bits), least first: two LSD
 * radix passes of 16 bits through tmp (as long as slots). */
static void sort_by_hash(uint64_t *slots, uint64_t *tmp, size_t n)
{
    static const unsigned shift[2] = {32, 48};
    uint64_t *from = slots, *to = tmp;
    for (int p = 0; p < 2; p++) {
        size_t *count = calloc(65537, sizeof *count);
        if (!count)
            return; /* unsorted: the caller places them all the same */
        for (size_t i = 0; i < n; i++)
            count[((from[i] >> shift[p]) & 0xffffu) + 1]++;
        for (size_t b = 1; b <= 65536; b++)
            count[b] += count[b - 1];
        for (size_t i = 0; i < n; i++)
            to[count[(from[i] >> shift[p]) & 0xffffu]++] = from[i];
        free(count);
        uint64_t *x = from;
        from = to;
        to = x;
    }
}

int jtab_insert_bulk(jtab *t, uint64_t *slots, size_t n)
{
    if (n == 0)
        return 0;
    if ((uint64_t)t->count + n > UINT32_MAX)
        return DLS_ERR_NOMEM;
    int rc = jtab_reserve(t, (uint32_t)(t->count + n));
    if (rc)
        return rc;
    uint64_t *tmp = malloc(n * sizeof *tmp);
    if (tmp) /* in home order, the table is written front to back */
        sort_by_hash(slots, tmp, n);
    free(tmp);
    for (size_t i = 0; i < n; i++)
        place(t->slots, t->cap, slots[i]);
    t->count += (uint32_t)n;
    return 0;
}

void jtab_remove(jtab *t, uint32_t h, uint32_t ref)
{
    if (t->cap == 0)
        return;
    uint64_t want = jtab_slot(h, ref);
    uint32_t i = jtab_home(h, t->cap);
    while (t->slots[i] != want) {
        if (t->slots[i] == 0)
            return;
        i = step(i, t->cap);
    }
    uint32_t hole = i;
    t->slots[hole] = 0;
    for (uint32_t j = step(hole, t->cap); t->slots[j] != 0; j = step(j, t->cap)) {
        if (may_move(jtab_home(slot_hash(t->slots[j]), t->cap), hole, j)) {
            t->slots[hole] = t->slots[j];
            t->slots[j] = 0;
            hole = j;
        }
    }
    t->count--;
}

size_t jtab_bytes(const jtab *t) { return (size_t)t->cap * sizeof(uint64_t); }

/* ---- jset ------------------------------------------------------------------- */

void jset_free(jset *t)
{
    free(t->slots);
    t->slots = NULL;
    t->cap = t->count = 0;
}

/* A jset slot: the low JSET_REF_BITS hold ref + 1 (0 = empty), the bits
 * above them the low bits of the entry's hash (its tag). A probe whose tag
 * differs skips the callback, which would read the caller's entry: a
 * cache miss a probe at 10^6 entries. */
#define JSET_REF_MASK ((1u << JSET_REF_BITS) - 1u)
static inline uint32_t set_slot(uint32_t h, uint32_t ref)
{
    return (h << JSET_REF_BITS) | (ref + 1u);
}
static inline uint32_t set_ref(uint32_t s) { return (s & JSET_REF_MASK) - 1u; }
static inline bool set_tagged(uint32_t s, uint32_t h)
{
    return (s >> JSET_REF_BITS) == (h & (UINT32_MAX >> JSET_REF_BITS));
}

uint32_t jset_find(const jset *t, uint32_t h, jtab_eq_fn eq, const void *ctx, const void *key)
{
    if (t->cap == 0)
        return JNIL;
    for (uint32_t i = jtab_home(h, t->cap);; i = step(i, t->cap)) {
        uint32_t s = t->slots[i];
        if (s == 0)
            return JNIL;
        if (set_tagged(s, h) && eq(ctx, set_ref(s), key))
            return set_ref(s);
    }
}

static void set_place(uint32_t *slots, uint32_t cap, uint32_t h, uint32_t s)
{
    uint32_t i = jtab_home(h, cap);
    while (slots[i] != 0)
        i = step(i, cap);
    slots[i] = s;
}

static int set_resize(jset *t, uint32_t ncap, jset_hash_fn hash, const void *ctx)
{
    uint32_t *ns = calloc(ncap, sizeof *ns);
    if (!ns)
        return DLS_ERR_NOMEM;
    for (uint32_t i = 0; i < t->cap; i++)
        if (t->slots[i])
            set_place(ns, ncap, hash(ctx, set_ref(t->slots[i])), t->slots[i]);
    free(t->slots);
    t->slots = ns;
    t->cap = ncap;
    return 0;
}

int jset_reserve(jset *t, uint32_t n, jset_hash_fn hash, const void *ctx)
{
    uint32_t ncap = cap_for(t->cap, n);
    if (ncap == 0)
        return DLS_ERR_NOMEM;
    return ncap == t->cap ? 0 : set_resize(t, ncap, hash, ctx);
}

int jset_insert(jset *t, uint32_t h, uint32_t ref, jset_hash_fn hash, const void *ctx)
{
    if (ref >= JSET_REF_MAX)
        return DLS_ERR_NOMEM;
    if (full(t->count, t->cap)) {
        uint32_t ncap = next_cap(t->cap);
        int rc = ncap ? set_resize(t, ncap, hash, ctx) : DLS_ERR_NOMEM;
        if (rc)
            return rc;
    }
    set_place(t->slots, t->cap, h, set_slot(h, ref));
    t->count++;
    return 0;
}

void jset_remove(jset *t, uint32_t h, uint32_t ref, jset_hash_fn hash, const void *ctx)
{
    if (t->cap == 0)
        return;
    uint32_t want = set_slot(h, ref);
    uint32_t i = jtab_home(h, t->cap);
    while (t->slots[i] != want) {
        if (t->slots[i] == 0)
            return;
        i = step(i, t->cap);
    }
    uint32_t hole = i;
    t->slots[hole] = 0;
    for (uint32_t j = step(hole, t->cap); t->slots[j] != 0; j = step(j, t->cap)) {
        if (may_move(jtab_home(hash(ctx, set_ref(t->slots[j])), t->cap), hole, j)) {
            t->slots[hole] = t->slots[j];
            t->slots[j] = 0;
            hole = j;
        }
    }
    t->count--;
}

size_t jset_bytes(const jset *t) { return (size_t)t->cap * sizeof(uint32_t); }
