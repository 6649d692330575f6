/* Indexed binary min-heap (see dls_heap.h). */
#include "vocab/heap.h"

#include <stdbool.h>
#include <stdlib.h>

#include "daolease/error.h"

void dls_heap_init(dls_heap *h, dls_heap_moved_fn moved, void *ctx)
{
    h->key = NULL;
    h->ref = NULL;
    h->n = h->cap = 0;
    h->moved = moved;
    h->ctx = ctx;
}

void dls_heap_free(dls_heap *h)
{
    free(h->key);
    free(h->ref);
    dls_heap_init(h, h->moved, h->ctx);
}

static inline bool less(const dls_heap *h, uint32_t a, uint32_t b)
{
    return h->key[a] < h->key[b] || (h->key[a] == h->key[b] && h->ref[a] < h->ref[b]);
}

static inline void put(dls_heap *h, uint32_t pos, uint64_t key, uint32_t ref)
{
    h->key[pos] = key;
    h->ref[pos] = ref;
    if (h->moved)
        h->moved(h->ctx, ref, pos);
}

static uint32_t sift_up(dls_heap *h, uint32_t pos)
{
    uint64_t k = h->key[pos];
    uint32_t r = h->ref[pos];
    while (pos > 0) {
        uint32_t parent = (pos - 1) / 2;
        if (h->key[parent] < k || (h->key[parent] == k && h->ref[parent] < r))
            break;
        put(h, pos, h->key[parent], h->ref[parent]);
        pos = parent;
    }
    put(h, pos, k, r);
    return pos;
}

static void sift_down(dls_heap *h, uint32_t pos)
{
    uint64_t k = h->key[pos];
    uint32_t r = h->ref[pos];
    for (;;) {
        uint32_t c = 2 * pos + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && less(h, c + 1, c))
            c++;
        if (k < h->key[c] || (k == h->key[c] && r < h->ref[c]))
            break;
        put(h, pos, h->key[c], h->ref[c]);
        pos = c;
    }
    put(h, pos, k, r);
}

int dls_heap_reserve(dls_heap *h, uint32_t cap)
{
    if (cap <= h->cap)
        return 0;
    uint64_t *nk = realloc(h->key, (size_t)cap * sizeof *nk);
    if (!nk)
        return DLS_ERR_NOMEM;
    h->key = nk;
    uint32_t *nr = realloc(h->ref, (size_t)cap * sizeof *nr);
    if (!nr)
        return DLS_ERR_NOMEM;
    h->ref = nr;
    h->cap = cap;
    return 0;
}

int dls_heap_push(dls_heap *h, uint64_t key, uint32_t ref)
{
    if (h->n == h->cap) {
        int rc = dls_heap_reserve(h, h->cap ? h->cap * 2 : 64);
        if (rc)
            return rc;
    }
    h->key[h->n] = key;
    h->ref[h->n] = ref;
    h->n++;
    (void)sift_up(h, h->n - 1);
    return 0;
}

/* Restores the heap order around an entry whose key changed. */
static void resift(dls_heap *h, uint32_t pos)
{
    if (sift_up(h, pos) == pos)
        sift_down(h, pos);
}

void dls_heap_update(dls_heap *h, uint32_t pos, uint64_t key)
{
    h->key[pos] = key;
    resift(h, pos);
}

void dls_heap_reref(dls_heap *h, uint32_t pos, uint32_t ref)
{
    h->ref[pos] = ref;
    resift(h, pos); /* ties are ordered by ref */
}

void dls_heap_remove(dls_heap *h, uint32_t pos)
{
    h->n--;
    if (pos == h->n)
        return;
    put(h, pos, h->key[h->n], h->ref[h->n]);
    resift(h, pos);
}

size_t dls_heap_bytes(const dls_heap *h)
{
    return (size_t)h->cap * (sizeof(uint64_t) + sizeof(uint32_t));
}
