/* A small open-addressing map from byte strings to uint64 values, keyed with
 * libsodium's crypto_shorthash under a random key (the keys are
 * attacker-chosen bytes: subjects, holder names, lease ids). Nothing written
 * by the audit is ever taken from its iteration order (it has none). Keys
 * are copied. Internal to the audit. */
#ifndef DLS_AUDIT_TABLE_H
#define DLS_AUDIT_TABLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct dls_atab_slot {
    uint8_t *key;     /* NULL: empty */
    size_t klen;
    uint64_t hash;
    uint64_t value;
} dls_atab_slot;

typedef struct dls_atab {
    dls_atab_slot *slots;
    size_t cap;       /* a power of two, or 0 */
    size_t count;
    unsigned char hkey[16];
} dls_atab;

/* Initialises an empty table with a random hash key (sodium_init must have
 * succeeded). */
void dls_atab_init(dls_atab *t);
void dls_atab_free(dls_atab *t);
/* 1 and *value when found, 0 when not. */
int dls_atab_get(const dls_atab *t, const void *key, size_t klen, uint64_t *value);
/* Inserts or replaces. 0, or DLS_ERR_NOMEM. */
int dls_atab_put(dls_atab *t, const void *key, size_t klen, uint64_t value);

/* Convenience for uint64 keys (encoded little-endian). */
int dls_atab_get_u64(const dls_atab *t, uint64_t key, uint64_t *value);
int dls_atab_put_u64(dls_atab *t, uint64_t key, uint64_t value);

#endif
