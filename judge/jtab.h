/* A compact open-addressing hash index from a 32-bit keyed hash to 32-bit
 * references (indices into the caller's pools). Each slot is 8 bytes: the
 * hash and the reference + 1 (0 = empty). Linear probing, load at most 0.7,
 * deletion by backward shift (no tombstones). The caller computes hashes
 * with a keyed hash (crypto_shorthash: the keys are attacker-chosen bytes)
 * and decides equality through a callback. Nothing iterates it.
 *
 * Internal to the judge.
 */
#ifndef DLS_JUDGE_JTAB_H
#define DLS_JUDGE_JTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JNIL UINT32_MAX

typedef struct jtab {
    uint64_t *slots;
    uint32_t cap;   /* 0 or a power of two */
    uint32_t count;
} jtab;

typedef bool (*jtab_eq_fn)(const void *ctx, uint32_t ref, const void *key);

void jtab_free(jtab *t);
/* The reference whose hash is h and for which eq(ctx, ref, key), or JNIL. */
uint32_t jtab_find(const jtab *t, uint32_t h, jtab_eq_fn eq, const void *ctx,
                   const void *key);
/* Inserts (h, ref); the caller has checked it is absent. 0 or DLS_ERR_NOMEM. */
int jtab_insert(jtab *t, uint32_t h, uint32_t ref);
/* Removes the slot holding ref (with hash h); no-op when absent. */
void jtab_remove(jtab *t, uint32_t h, uint32_t ref);
size_t jtab_bytes(const jtab *t);
/* Asks the CPU to bring hash h's first slot into the cache (a hint: no
 * effect on what the table answers). */
static inline void jtab_prefetch(const jtab *t, uint32_t h)
{
    if (t->cap)
        __builtin_prefetch(&t->slots[h & (t->cap - 1)]);
}

#endif
