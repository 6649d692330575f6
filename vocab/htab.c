/* The shared keyed hash table (see htab.h). */
#include "vocab/htab.h"

#include <stdlib.h>
#include <string.h>

#include "daolease/error.h"

static uint64_t hash_of(const dls_htab *t, const uint8_t *key, size_t n)
{
    uint8_t h[crypto_shorthash_BYTES];
    uint64_t v;
    crypto_shorthash(h, key, n, t->hkey);
    memcpy(&v, h, sizeof v);
    return v;
}

static const uint8_t *key_of(const dls_hslot *s)
{
    return s->klen > DLS_HTAB_INLINE ? s->key.heap : s->key.in;
}

void dls_htab_init(dls_htab *t)
{
    t->slots = NULL;
    t->cap = 0;
    t->count = 0;
    randombytes_buf(t->hkey, sizeof t->hkey);
}

void dls_htab_free(dls_htab *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].used && t->slots[i].klen > DLS_HTAB_INLINE)
            free(t->slots[i].key.heap);
    free(t->slots);
    t->slots = NULL;
    t->cap = t->count = 0;
    sodium_memzero(t->hkey, sizeof t->hkey);
}

/* The slot holding key, or the empty slot where it would go. */
static dls_hslot *probe(const dls_htab *t, uint64_t h, const uint8_t *key, size_t n)
{
    size_t mask = t->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        dls_hslot *s = &t->slots[i];
        if (!s->used)
            return s;
        if (s->hash == h && s->klen == n && (n == 0 || memcmp(key_of(s), key, n) == 0))
            return s;
    }
}

static bool bad_key(const uint8_t *key, size_t n)
{
    return n > DLS_HTAB_KEY_MAX || (!key && n);
}

uint64_t *dls_htab_find(const dls_htab *t, const uint8_t *key, size_t n)
{
    if (!t || !t->cap || bad_key(key, n))
        return NULL;
    dls_hslot *s = probe(t, hash_of(t, key, n), key, n);
    return s->used ? &s->val : NULL;
}

static int grow(dls_htab *t)
{
    size_t ncap = t->cap ? t->cap * 2 : 16;
    dls_hslot *ns = calloc(ncap, sizeof *ns);
    if (!ns)
        return DLS_ERR_NOMEM;
    dls_htab old = *t;
    t->slots = ns;
    t->cap = ncap;
    for (size_t i = 0; i < old.cap; i++) {
        const dls_hslot *o = &old.slots[i];
        if (!o->used)
            continue;
        *probe(t, o->hash, key_of(o), o->klen) = *o; /* a heap key moves along */
    }
    free(old.slots);
    return 0;
}

int dls_htab_put(dls_htab *t, const uint8_t *key, size_t n, uint64_t **val,
                 bool *existed)
{
    if (!t || bad_key(key, n))
        return DLS_ERR_INVAL;
    uint64_t h = hash_of(t, key, n);
    if (t->cap) {
        dls_hslot *s = probe(t, h, key, n);
        if (s->used) {
            if (existed)
                *existed = true;
            if (val)
                *val = &s->val;
            return 0;
        }
    }
    uint8_t *heap = NULL;
    if (n > DLS_HTAB_INLINE && !(heap = malloc(n)))
        return DLS_ERR_NOMEM;
    if ((t->count + 1) * 2 > t->cap) {
        int rc = grow(t);
        if (rc) {
            free(heap);
            return rc;
        }
    }
    dls_hslot *s = probe(t, h, key, n);
    memset(s, 0, sizeof *s);
    s->used = 1;
    s->hash = h;
    s->klen = (uint32_t)n;
    if (heap) {
        memcpy(heap, key, n);
        s->key.heap = heap;
    } else if (n) {
        memcpy(s->key.in, key, n);
    }
    t->count++;
    if (existed)
        *existed = false;
    if (val)
        *val = &s->val;
    return 0;
}

int dls_htab_del(dls_htab *t, const uint8_t *key, size_t n)
{
    if (!t || !t->cap || bad_key(key, n))
        return DLS_ERR_NOTFOUND;
    dls_hslot *s = probe(t, hash_of(t, key, n), key, n);
    if (!s->used)
        return DLS_ERR_NOTFOUND;
    if (s->klen > DLS_HTAB_INLINE)
        free(s->key.heap);
    size_t mask = t->cap - 1;
    size_t i = (size_t)(s - t->slots);
    /* Backward-shift deletion: move later members of the probe run into the
     * hole when their home slot does not lie cyclically in (hole, j]. */
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!t->slots[j].used)
            break;
        size_t home = (size_t)t->slots[j].hash & mask;
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (stays)
            continue;
        t->slots[i] = t->slots[j];
        i = j;
    }
    memset(&t->slots[i], 0, sizeof t->slots[i]);
    t->count--;
    return 0;
}

static void u64_le(uint64_t v, uint8_t out[8])
{
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)(v >> (8 * i));
}

uint64_t *dls_htab_find_u64(const dls_htab *t, uint64_t key)
{
    uint8_t k[8];
    u64_le(key, k);
    return dls_htab_find(t, k, sizeof k);
}

int dls_htab_put_u64(dls_htab *t, uint64_t key, uint64_t **val, bool *existed)
{
    uint8_t k[8];
    u64_le(key, k);
    return dls_htab_put(t, k, sizeof k, val, existed);
}

int dls_htab_del_u64(dls_htab *t, uint64_t key)
{
    uint8_t k[8];
    u64_le(key, k);
    return dls_htab_del(t, k, sizeof k);
}
