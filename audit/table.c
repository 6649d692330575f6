/* Keyed-hash map for the audit (see table.h). */
#include "audit/table.h"

#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "daolease/error.h"

void dls_atab_init(dls_atab *t)
{
    memset(t, 0, sizeof *t);
    randombytes_buf(t->hkey, sizeof t->hkey);
}

void dls_atab_free(dls_atab *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->cap; i++)
        free(t->slots[i].key);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static uint64_t hash_of(const dls_atab *t, const void *key, size_t klen)
{
    unsigned char out[crypto_shorthash_BYTES];
    uint64_t h = 0;
    crypto_shorthash(out, key, klen, t->hkey);
    memcpy(&h, out, sizeof h);
    return h;
}

/* The slot holding key, or the empty slot where it would go. */
static size_t find(const dls_atab *t, const void *key, size_t klen, uint64_t h)
{
    size_t mask = t->cap - 1, i = (size_t)h & mask;
    for (;;) {
        const dls_atab_slot *s = &t->slots[i];
        if (!s->key)
            return i;
        if (s->hash == h && s->klen == klen && (klen == 0 || !memcmp(s->key, key, klen)))
            return i;
        i = (i + 1) & mask;
    }
}

int dls_atab_get(const dls_atab *t, const void *key, size_t klen, uint64_t *value)
{
    if (!t->cap)
        return 0;
    uint64_t h = hash_of(t, key, klen);
    size_t i = find(t, key, klen, h);
    if (!t->slots[i].key)
        return 0;
    if (value)
        *value = t->slots[i].value;
    return 1;
}

static int grow(dls_atab *t)
{
    size_t ncap = t->cap ? t->cap * 2 : 64;
    dls_atab_slot *ns = calloc(ncap, sizeof *ns);
    if (!ns)
        return DLS_ERR_NOMEM;
    for (size_t i = 0; i < t->cap; i++) {
        dls_atab_slot *s = &t->slots[i];
        if (!s->key)
            continue;
        size_t j = (size_t)s->hash & (ncap - 1);
        while (ns[j].key)
            j = (j + 1) & (ncap - 1);
        ns[j] = *s;
    }
    free(t->slots);
    t->slots = ns;
    t->cap = ncap;
    return 0;
}

int dls_atab_put(dls_atab *t, const void *key, size_t klen, uint64_t value)
{
    if ((t->count + 1) * 4 > t->cap * 3) {
        int rc = grow(t);
        if (rc)
            return rc;
    }
    uint64_t h = hash_of(t, key, klen);
    size_t i = find(t, key, klen, h);
    dls_atab_slot *s = &t->slots[i];
    if (s->key) {
        s->value = value;
        return 0;
    }
    /* one extra byte so that an empty key still owns a non-NULL buffer */
    uint8_t *k = malloc(klen + 1);
    if (!k)
        return DLS_ERR_NOMEM;
    if (klen)
        memcpy(k, key, klen);
    s->key = k;
    s->klen = klen;
    s->hash = h;
    s->value = value;
    t->count++;
    return 0;
}

static void u64_le(uint64_t v, uint8_t out[8])
{
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)(v >> (8 * i));
}

int dls_atab_get_u64(const dls_atab *t, uint64_t key, uint64_t *value)
{
    uint8_t k[8];
    u64_le(key, k);
    return dls_atab_get(t, k, sizeof k, value);
}

int dls_atab_put_u64(dls_atab *t, uint64_t key, uint64_t value)
{
    uint8_t k[8];
    u64_le(key, k);
    return dls_atab_put(t, k, sizeof k, value);
}
