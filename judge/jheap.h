/* An indexed binary min-heap of (key, ref) entries: keys are readings (a
 * lower bound of a lease's deadline, a waiter's refusal reading, the end
 * of a lock-delay), refs index the caller's pool. The caller learns every
 * entry's position through `moved` so it can update or remove an entry in
 * O(log n). Ties are broken by ref, so the order never depends on anything
 * but the entries.
 *
 * Internal to the judge.
 */
#ifndef DLS_JUDGE_JHEAP_H
#define DLS_JUDGE_JHEAP_H

#include <stddef.h>
#include <stdint.h>

typedef void (*jheap_moved_fn)(void *ctx, uint32_t ref, uint32_t pos);

typedef struct jheap {
    uint64_t *key;
    uint32_t *ref;
    uint32_t n, cap;
    jheap_moved_fn moved;   /* may be NULL */
    void *ctx;
} jheap;

void jheap_init(jheap *h, jheap_moved_fn moved, void *ctx);
void jheap_free(jheap *h);
/* 0 or DLS_ERR_NOMEM. */
int jheap_push(jheap *h, uint64_t key, uint32_t ref);
/* Changes the key of the entry at pos (earlier or later). */
void jheap_update(jheap *h, uint32_t pos, uint64_t key);
/* Removes the entry at pos. */
void jheap_remove(jheap *h, uint32_t pos);
static inline uint64_t jheap_top_key(const jheap *h) { return h->key[0]; }
static inline uint32_t jheap_top_ref(const jheap *h) { return h->ref[0]; }
size_t jheap_bytes(const jheap *h);

#endif
