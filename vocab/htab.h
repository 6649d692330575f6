/* daolease — one small hash table from short byte strings to uint64 values,
 * shared by the attribution (keyring index, replay checker), the vocabulary
 * (rule 6 memory) and the audit (its indexes).
 *
 * The keys (party names, lease ids, subjects, author/medium pairs) are chosen
 * by whoever writes to a medium, so they are hashed with libsodium's keyed
 * crypto_shorthash (SipHash-2-4) under a random key drawn at init: no one can
 * aim collisions at a table. Open addressing, linear probing, load at most
 * 1/2, deletion by backward shift (no tombstones). Keys are copied: up to
 * DLS_HTAB_INLINE bytes live in the slot, longer ones in one heap block each.
 * There is no iteration, so nothing can depend on an iteration order.
 *
 * Usage: dls_htab t; dls_htab_init(&t); dls_htab_put(&t, k, n, &v, NULL);
 * *v = 7; ... dls_htab_find(&t, k, n) ... dls_htab_free(&t);
 *
 * Not thread-safe for writers; concurrent dls_htab_find calls are fine.
 * Internal to the library.
 */
#ifndef DLS_VOCAB_HTAB_H
#define DLS_VOCAB_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sodium.h>

/* Longest key accepted, in bytes (a lease fact is at most DLS_FACT_MAX). */
#define DLS_HTAB_KEY_MAX 4096
/* Keys up to this many bytes are stored inside the slot (64-byte slots). */
#define DLS_HTAB_INLINE 40

typedef struct dls_hslot {
    uint64_t hash;
    uint64_t val;
    uint32_t klen;
    uint8_t used;
    union {
        uint8_t in[DLS_HTAB_INLINE]; /* klen <= DLS_HTAB_INLINE */
        uint8_t *heap;               /* klen > DLS_HTAB_INLINE, owned */
    } key;
} dls_hslot;

typedef struct dls_htab {
    dls_hslot *slots;
    size_t cap;   /* 0 or a power of two */
    size_t count;
    uint8_t hkey[crypto_shorthash_KEYBYTES];
} dls_htab;

/* Empties t and draws its hash key with randombytes_buf (sodium_init() must
 * have succeeded). Allocates nothing. */
void dls_htab_init(dls_htab *t);

/* Frees every slot and key and wipes the hash key; t may be NULL. t is empty
 * afterwards (call dls_htab_init again before reuse). */
void dls_htab_free(dls_htab *t);

/* The value stored under key[0..n), or NULL. The pointer stays valid until
 * the next dls_htab_put or dls_htab_del on t. */
uint64_t *dls_htab_find(const dls_htab *t, const uint8_t *key, size_t n);

/* Finds or inserts key[0..n) (value 0 when new); *val (when val is not NULL)
 * points at the stored value, valid until the next put or del on t.
 * *existed (when not NULL) tells whether the key was there.
 * Returns 0, DLS_ERR_INVAL for t NULL, key NULL with n > 0 or a key over
 * DLS_HTAB_KEY_MAX bytes, or DLS_ERR_NOMEM (t's contents unchanged). */
int dls_htab_put(dls_htab *t, const uint8_t *key, size_t n, uint64_t **val,
                 bool *existed);

/* Removes key[0..n); 0 or DLS_ERR_NOTFOUND. */
int dls_htab_del(dls_htab *t, const uint8_t *key, size_t n);

/* The same three for a uint64 key, encoded as 8 bytes little-endian (so a
 * u64 key and the equal 8-byte string are the same key). */
uint64_t *dls_htab_find_u64(const dls_htab *t, uint64_t key);
int dls_htab_put_u64(dls_htab *t, uint64_t key, uint64_t **val, bool *existed);
int dls_htab_del_u64(dls_htab *t, uint64_t key);

#endif
