/* Compact open-addressing hash indexes from a 32-bit keyed hash to 32-bit
 * references (indices into the caller's pools). Linear probing, load at
 * most 0.7, deletion by backward shift (no tombstones). The caller computes
 * hashes with a keyed hash (crypto_shorthash: the keys are attacker-chosen
 * bytes) and decides equality through a callback. Nothing iterates them.
 *
 * Capacities step by about 1.41× (16, 24, 32, 48, 64, ...: a power of two
 * or 1.5 times one), and a hash picks its first slot by multiply-shift
 * ((h · cap) >> 32), so a table just grown is about half full, not a third
 * as with doubling (at 10^6 entries: 1.5 · 2^20 slots, not 2^21;
 * docs/judge.md, Sizing).
 *
 *   jtab: 8-byte slots, the hash and the reference + 1 (0 = empty): a probe
 *         compares hashes before asking the callback (lookups on the hot
 *         path: lease ids).
 *   jset: 4-byte slots, the reference + 1 in the low 26 bits and 6 bits
 *         of the hash above them: a probe asks the callback only when those
 *         6 bits match (1 in 64 of the others), and growing or deleting
 *         asks the caller for an entry's hash (subjects). References stop
 *         at JSET_REF_MAX.
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
    uint32_t cap;   /* 0, or 2^k or 1.5 · 2^k (k >= 4) */
    uint32_t count;
} jtab;

typedef bool (*jtab_eq_fn)(const void *ctx, uint32_t ref, const void *key);

/* The first slot of hash h in a table of cap slots. */
static inline uint32_t jtab_home(uint32_t h, uint32_t cap)
{
    return (uint32_t)(((uint64_t)h * cap) >> 32);
}

void jtab_free(jtab *t);
/* The reference whose hash is h and for which eq(ctx, ref, key), or JNIL. */
uint32_t jtab_find(const jtab *t, uint32_t h, jtab_eq_fn eq, const void *ctx,
                   const void *key);
/* Inserts (h, ref); the caller has checked it is absent. 0 or DLS_ERR_NOMEM. */
int jtab_insert(jtab *t, uint32_t h, uint32_t ref);
/* Grows t, once, to the capacity its growth would reach holding n entries
 * (so n inserts rehash nothing). 0 or DLS_ERR_NOMEM (t unchanged). */
int jtab_reserve(jtab *t, uint32_t n);
/* A slot of hash h and reference ref, for jtab_insert_bulk. */
static inline uint64_t jtab_slot(uint32_t h, uint32_t ref)
{
    return ((uint64_t)h << 32) | (uint64_t)(ref + 1u);
}
/* Inserts the n slots (jtab_slot; the caller has checked every one is
 * absent) at once: grows t once, then places them in the order of their
 * first slots, so the table is written front to back instead of one
 * cache miss an entry (restart from a checkpoint). Reorders slots[].
 * 0 or DLS_ERR_NOMEM (t unchanged). */
int jtab_insert_bulk(jtab *t, uint64_t *slots, size_t n);
/* Removes the slot holding ref (with hash h); no-op when absent. */
void jtab_remove(jtab *t, uint32_t h, uint32_t ref);
size_t jtab_bytes(const jtab *t);
/* Asks the CPU to bring hash h's first slot into the cache (a hint: no
 * effect on what the table answers). */
static inline void jtab_prefetch(const jtab *t, uint32_t h)
{
    if (t->cap)
        __builtin_prefetch(&t->slots[jtab_home(h, t->cap)]);
}

#define JSET_REF_BITS 26
/* The first reference a jset cannot hold (2^26 - 1). */
#define JSET_REF_MAX ((1u << JSET_REF_BITS) - 1u)

typedef struct jset {
    uint32_t *slots;
    uint32_t cap;
    uint32_t count;
} jset;

/* The hash of the entry `ref` (the same the caller passed when inserting). */
typedef uint32_t (*jset_hash_fn)(const void *ctx, uint32_t ref);

void jset_free(jset *t);
uint32_t jset_find(const jset *t, uint32_t h, jtab_eq_fn eq, const void *ctx, const void *key);
/* Inserts ref (hash h); the caller has checked it is absent. Growing asks
 * hash() for every entry. 0, or DLS_ERR_NOMEM (also for ref >= JSET_REF_MAX). */
int jset_insert(jset *t, uint32_t h, uint32_t ref, jset_hash_fn hash, const void *ctx);
/* As jtab_prefetch. */
static inline void jset_prefetch(const jset *t, uint32_t h)
{
    if (t->cap)
        __builtin_prefetch(&t->slots[jtab_home(h, t->cap)]);
}
/* As jtab_reserve. */
int jset_reserve(jset *t, uint32_t n, jset_hash_fn hash, const void *ctx);
/* Removes ref (hash h); no-op when absent. Asks hash() for the entries the
 * backward shift may move. */
void jset_remove(jset *t, uint32_t h, uint32_t ref, jset_hash_fn hash, const void *ctx);
size_t jset_bytes(const jset *t);

#endif
