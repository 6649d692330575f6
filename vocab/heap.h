/* An indexed binary min-heap of (key, ref) entries: keys are readings (a
 * lower bound of a lease's deadline, a waiter's refusal reading, the end
 * of a lock-delay; in the holder, when a lease next needs a step), refs
 * index the caller's pool. The caller learns every
 * entry's position through `moved` so it can update or remove an entry in
 * O(log n). Ties are broken by ref, so the order never depends on anything
 * but the entries.
 *
 * Internal to the library (the judge and the holder).
 */
#ifndef DLS_VOCAB_HEAP_H
#define DLS_VOCAB_HEAP_H

#include <stddef.h>
#include <stdint.h>

typedef void (*dls_heap_moved_fn)(void *ctx, uint32_t ref, uint32_t pos);

typedef struct dls_heap {
    uint64_t *key;
    uint32_t *ref;
    uint32_t n, cap;
    dls_heap_moved_fn moved;   /* may be NULL */
    void *ctx;
} dls_heap;

void dls_heap_init(dls_heap *h, dls_heap_moved_fn moved, void *ctx);
void dls_heap_free(dls_heap *h);
/* Makes room for cap entries at once (pushes up to cap then allocate
 * nothing and cannot fail): 0 or DLS_ERR_NOMEM. */
int dls_heap_reserve(dls_heap *h, uint32_t cap);
/* 0 or DLS_ERR_NOMEM. */
int dls_heap_push(dls_heap *h, uint64_t key, uint32_t ref);
/* The entry at pos now refers to ref (the caller moved it in its pool). */
void dls_heap_reref(dls_heap *h, uint32_t pos, uint32_t ref);
/* Changes the key of the entry at pos (earlier or later). */
void dls_heap_update(dls_heap *h, uint32_t pos, uint64_t key);
/* Removes the entry at pos. */
void dls_heap_remove(dls_heap *h, uint32_t pos);
static inline uint64_t dls_heap_top_key(const dls_heap *h) { return h->key[0]; }
static inline uint32_t dls_heap_top_ref(const dls_heap *h) { return h->ref[0]; }
size_t dls_heap_bytes(const dls_heap *h);

#endif
