#include "resolver/htab.h"

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
    free(t->slots);
    t->slots = NULL;
    t->cap = t->count = 0;
    sodium_memzero(t->hkey, sizeof t->hkey);
}

static dls_hslot *probe(const dls_htab *t, uint64_t h, const uint8_t *key, size_t n)
{
    size_t mask = t->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        dls_hslot *s = &t->slots[i];
        if (!s->used)
            return s;
        if (s->hash == h && s->klen == n && memcmp(s->key, key, n) == 0)
            return s;
    }
}

uint64_t *dls_htab_find(const dls_htab *t, const uint8_t *key, size_t n)
{
    if (!t || !t->cap || n > DLS_HTAB_KEY_MAX || (!key && n))
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
        if (!old.slots[i].used)
            continue;
        dls_hslot *s = probe(t, old.slots[i].hash, old.slots[i].key, old.slots[i].klen);
        *s = old.slots[i];
    }
    free(old.slots);
    return 0;
}

int dls_htab_put(dls_htab *t, const uint8_t *key, size_t n, uint64_t **val,
                 bool *existed)
{
    if (!t || n > DLS_HTAB_KEY_MAX || (!key && n))
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
    if ((t->count + 1) * 2 > t->cap) {
        int rc = grow(t);
        if (rc)
            return rc;
    }
    dls_hslot *s = probe(t, h, key, n);
    s->used = 1;
    s->hash = h;
    s->klen = (uint8_t)n;
    if (n)
        memcpy(s->key, key, n);
    s->val = 0;
    t->count++;
    if (existed)
        *existed = false;
    if (val)
        *val = &s->val;
    return 0;
}

int dls_htab_del(dls_htab *t, const uint8_t *key, size_t n)
{
    if (!t || !t->cap || n > DLS_HTAB_KEY_MAX || (!key && n))
        return DLS_ERR_NOTFOUND;
    dls_hslot *s = probe(t, hash_of(t, key, n), key, n);
    if (!s->used)
        return DLS_ERR_NOTFOUND;
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
