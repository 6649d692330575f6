/* daolease — a small hash table from short byte strings to uint64 values,
 * keyed with libsodium's crypto_shorthash (SipHash-2-4) under a random key,
 * because the keys (party names, lease ids, author/medium pairs) are chosen
 * by whoever writes to a medium. Open addressing, linear probing, load at
 * most 1/2, deletion by backward shift (no tombstones). Nothing outside this
 * file depends on its iteration order (there is no iteration).
 *
 * Internal to the library.
 */
#ifndef DLS_RESOLVER_HTAB_H
#define DLS_RESOLVER_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sodium.h>

#define DLS_HTAB_KEY_MAX 96

typedef struct dls_hslot {
    uint64_t hash;
    uint64_t val;
    uint8_t used;
    uint8_t klen;
    uint8_t key[DLS_HTAB_KEY_MAX];
} dls_hslot;

typedef struct dls_htab {
    dls_hslot *slots;
    size_t cap;   /* 0 or a power of two */
    size_t count;
    uint8_t hkey[crypto_shorthash_KEYBYTES];
} dls_htab;

/* Empties t and draws its hash key (sodium_init() must have succeeded). */
void dls_htab_init(dls_htab *t);
void dls_htab_free(dls_htab *t);

/* The value stored under key[0..n), or NULL. */
uint64_t *dls_htab_find(const dls_htab *t, const uint8_t *key, size_t n);

/* Finds or inserts key[0..n) (value 0 when new). *existed tells which.
 * Returns 0, DLS_ERR_INVAL for a key over DLS_HTAB_KEY_MAX bytes, or
 * DLS_ERR_NOMEM (t unchanged). */
int dls_htab_put(dls_htab *t, const uint8_t *key, size_t n, uint64_t **val,
                 bool *existed);

/* Removes key[0..n); 0 or DLS_ERR_NOTFOUND. */
int dls_htab_del(dls_htab *t, const uint8_t *key, size_t n);

#endif
