/* Compact hash index (see jtab.h). */
#include "judge/jtab.h"

#include <stdlib.h>

#include "daolease/error.h"

static inline uint32_t slot_hash(uint64_t s) { return (uint32_t)(s >> 32); }
static inline uint32_t slot_ref(uint64_t s) { return (uint32_t)s - 1u; }
static inline uint64_t make_slot(uint32_t h, uint32_t ref)
{
    return ((uint64_t)h << 32) | (uint64_t)(ref + 1u);
}

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
    uint32_t mask = t->cap - 1;
    for (uint32_t i = h & mask;; i = (i + 1) & mask) {
        uint64_t s = t->slots[i];
        if (s == 0)
            return JNIL;
        if (slot_hash(s) == h && eq(ctx, slot_ref(s), key))
            return slot_ref(s);
    }
}

static void place(uint64_t *slots, uint32_t mask, uint64_t s)
{
    uint32_t i = slot_hash(s) & mask;
    while (slots[i] != 0)
        i = (i + 1) & mask;
    slots[i] = s;
}

static int grow(jtab *t)
{
    uint32_t ncap = t->cap ? t->cap * 2 : 16;
    if (ncap < t->cap)
        return DLS_ERR_NOMEM;
    uint64_t *ns = calloc(ncap, sizeof *ns);
    if (!ns)
        return DLS_ERR_NOMEM;
    for (uint32_t i = 0; i < t->cap; i++)
        if (t->slots[i])
            place(ns, ncap - 1, t->slots[i]);
    free(t->slots);
    t->slots = ns;
    t->cap = ncap;
    return 0;
}

int jtab_insert(jtab *t, uint32_t h, uint32_t ref)
{
    if ((uint64_t)(t->count + 1) * 10 > (uint64_t)t->cap * 7) {
        int rc = grow(t);
        if (rc)
            return rc;
    }
    place(t->slots, t->cap - 1, make_slot(h, ref));
    t->count++;
    return 0;
}

/* Is `ideal` cyclically outside (hole, j]? Then the entry at j may move
 * back into the hole. */
static bool may_move(uint32_t ideal, uint32_t hole, uint32_t j)
{
    if (hole <= j)
        return ideal <= hole || ideal > j;
    return ideal <= hole && ideal > j;
}

void jtab_remove(jtab *t, uint32_t h, uint32_t ref)
{
    if (t->cap == 0)
        return;
    uint32_t mask = t->cap - 1;
    uint64_t want = make_slot(h, ref);
    uint32_t i = h & mask;
    while (t->slots[i] != want) {
        if (t->slots[i] == 0)
            return;
        i = (i + 1) & mask;
    }
    uint32_t hole = i;
    t->slots[hole] = 0;
    for (uint32_t j = (hole + 1) & mask; t->slots[j] != 0; j = (j + 1) & mask) {
        if (may_move(slot_hash(t->slots[j]) & mask, hole, j)) {
            t->slots[hole] = t->slots[j];
            t->slots[j] = 0;
            hole = j;
        }
    }
    t->count--;
}

size_t jtab_bytes(const jtab *t) { return (size_t)t->cap * sizeof(uint64_t); }
