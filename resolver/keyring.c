/* Keyrings (attribution.md, "Keyrings and keys"): names to (kind, key),
 * keys in one sodium_malloc arena, names found through a keyed hash. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "vocab/htab.h"
#include "vocab/vec.h"
#include "resolver/internal.h"

#define KEYRING_FILE_MAX ((size_t)16 << 20)

typedef struct kr_entry {
    uint8_t name[DLS_NAME_MAX];
    uint8_t name_len;
    uint8_t kind;
    uint32_t mac_ix;  /* MAC keys: index of its precomputed state */
} kr_entry;

typedef crypto_auth_hmacsha512256_state mac_state;

struct dls_keyring {
    atomic_uint refs;
    atomic_bool frozen;
    size_t count, cap;
    dls_vec ents;    /* kr_entry, count in use (ents.n is not used) */
    uint8_t *keys;   /* sodium_malloc(cap * DLS_KEY_LEN), read-only between changes */
    /* MAC keys' HMAC states after absorbing the key:
     * sodium_malloc(mac_cap * sizeof(mac_state)), read-only between changes,
     * wiped on free like the keys they are derived from. */
    size_t mac_count, mac_cap;
    mac_state *states;
    dls_htab index;  /* name -> entry index */
};

int dls_keyring_new(dls_keyring **out)
{
    if (!out)
        return DLS_ERR_INVAL;
    *out = NULL;
    if (sodium_init() < 0)
        return DLS_ERR_SODIUM;
    dls_keyring *kr = calloc(1, sizeof *kr);
    if (!kr)
        return DLS_ERR_NOMEM;
    atomic_init(&kr->refs, 1);
    atomic_init(&kr->frozen, false);
    dls_htab_init(&kr->index);
    *out = kr;
    return 0;
}

/* Makes room for `need` entries: one new arena, the old one wiped. */
static int reserve(dls_keyring *kr, size_t need)
{
    if (need <= kr->cap)
        return 0;
    size_t ncap = kr->cap ? kr->cap * 2 : 8;
    if (ncap < need)
        ncap = need;
    if (dls_vec_reserve(&kr->ents, sizeof(kr_entry), ncap))
        return DLS_ERR_NOMEM;
    uint8_t *nk = sodium_malloc(ncap * DLS_KEY_LEN);
    if (!nk)
        return DLS_ERR_NOMEM;
    if (kr->keys) {
        memcpy(nk, kr->keys, kr->count * DLS_KEY_LEN);
        sodium_free(kr->keys);
    }
    kr->keys = nk;
    kr->cap = ncap;
    sodium_mprotect_readonly(kr->keys);
    return 0;
}

/* Makes room for one more MAC state. */
static int reserve_mac(dls_keyring *kr)
{
    if (kr->mac_count < kr->mac_cap)
        return 0;
    size_t ncap = kr->mac_cap ? kr->mac_cap * 2 : 4;
    if (ncap > UINT32_MAX)
        return DLS_ERR_NOMEM;
    mac_state *ns = sodium_malloc(ncap * sizeof *ns);
    if (!ns)
        return DLS_ERR_NOMEM;
    if (kr->states) {
        memcpy(ns, kr->states, kr->mac_count * sizeof *ns);
        sodium_free(kr->states);
    }
    kr->states = ns;
    kr->mac_cap = ncap;
    sodium_mprotect_readonly(kr->states);
    return 0;
}

/* Inserts one valid name; room must have been reserved. */
static int insert(dls_keyring *kr, const uint8_t *name, size_t n, dls_key_kind kind,
                  const uint8_t *key)
{
    uint64_t *slot;
    bool existed;
    if (kind == DLS_KEY_MAC) {
        int rc = reserve_mac(kr);
        if (rc)
            return rc;
    }
    int rc = dls_htab_put(&kr->index, name, n, &slot, &existed);
    if (rc)
        return rc;
    if (existed)
        return DLS_ERR_DUPLICATE;
    *slot = kr->count;
    kr_entry *e = &DLS_VEC_AT(kr->ents, kr_entry, kr->count);
    memcpy(e->name, name, n);
    e->name_len = (uint8_t)n;
    e->kind = (uint8_t)kind;
    sodium_mprotect_readwrite(kr->keys);
    memcpy(kr->keys + kr->count * DLS_KEY_LEN, key, DLS_KEY_LEN);
    sodium_mprotect_readonly(kr->keys);
    if (kind == DLS_KEY_MAC) {
        sodium_mprotect_readwrite(kr->states);
        crypto_auth_hmacsha512256_init(&kr->states[kr->mac_count], key, DLS_KEY_LEN);
        sodium_mprotect_readonly(kr->states);
        e->mac_ix = (uint32_t)kr->mac_count++;
    }
    kr->count++;
    return 0;
}

int dls_keyring_add(dls_keyring *kr, const uint8_t *name, size_t name_len,
                    dls_key_kind kind, const uint8_t key[DLS_KEY_LEN])
{
    if (!kr || !key || !dls_name_valid(name, name_len) ||
        (kind != DLS_KEY_ED25519 && kind != DLS_KEY_MAC))
        return DLS_ERR_INVAL;
    if (atomic_load(&kr->frozen))
        return DLS_ERR_STATE;
    if (dls_htab_find(&kr->index, name, name_len))
        return DLS_ERR_DUPLICATE;
    int rc = reserve(kr, kr->count + 1);
    if (rc)
        return rc;
    return insert(kr, name, name_len, kind, key);
}

int dls_keyring_parse(dls_keyring **out, const char *text, size_t n, dls_where *w)
{
    if (!out || (!text && n))
        return DLS_ERR_INVAL;
    *out = NULL;
    const uint8_t *t = (const uint8_t *)text;
    uint8_t key[DLS_SECRET_KEY_LEN];
    dls_key_line kl;
    const uint8_t *line;
    size_t len, pos = 0, keys = 0;
    uint64_t lineno = 0;
    int rc;
    /* Pass 1: validate every line and count the keys, so that the arena is
     * allocated once at its final size. */
    while (dls_text_next_line(t, n, &pos, &line, &len)) {
        rc = dls_key_line_parse(line, len, ++lineno, DLS_LINE_PUBLIC, &kl, key, w);
        if (rc < 0)
            goto wipe;
        keys += (size_t)rc;
    }
    dls_keyring *kr;
    if ((rc = dls_keyring_new(&kr)) != 0)
        goto wipe;
    if ((rc = reserve(kr, keys)) != 0)
        goto fail;
    /* Pass 2: insert, refusing a name listed twice. */
    pos = 0;
    lineno = 0;
    while (dls_text_next_line(t, n, &pos, &line, &len)) {
        rc = dls_key_line_parse(line, len, ++lineno, DLS_LINE_PUBLIC, &kl, key, w);
        if (rc <= 0)
            continue;
        rc = insert(kr, kl.name, kl.name_len, kl.kind, key);
        if (rc == DLS_ERR_DUPLICATE) {
            dls_where_fill(w, rc,
                           (dls_where){.line = lineno,
                                       .offset = kl.name_col,
                                       .reason = "name listed twice"});
            goto fail;
        }
        if (rc)
            goto fail;
    }
    sodium_memzero(key, sizeof key);
    *out = kr;
    return 0;
fail:
    dls_keyring_del(kr);
wipe:
    sodium_memzero(key, sizeof key);
    return rc;
}

int dls_keyring_load(dls_keyring **out, const char *path, dls_where *w)
{
    if (!out || !path)
        return DLS_ERR_INVAL;
    *out = NULL;
    if (sodium_init() < 0)
        return DLS_ERR_SODIUM;
    uint8_t *buf;
    size_t n;
    int rc = dls_read_secret_file(path, KEYRING_FILE_MAX, &buf, &n, NULL, w);
    if (rc)
        return rc;
    rc = dls_keyring_parse(out, (const char *)buf, n, w);
    sodium_free(buf);
    return rc;
}

int dls_keyring_lookup(const dls_keyring *kr, const uint8_t *name, size_t name_len,
                       dls_key_kind *kind, const uint8_t **key)
{
    if (!kr || name_len > DLS_NAME_MAX)
        return DLS_ERR_NOTFOUND;
    const uint64_t *idx = dls_htab_find(&kr->index, name, name_len);
    if (!idx)
        return DLS_ERR_NOTFOUND;
    if (kind)
        *kind = (dls_key_kind)DLS_VEC_AT(kr->ents, kr_entry, *idx).kind;
    if (key)
        *key = kr->keys + *idx * DLS_KEY_LEN;
    return 0;
}

int dls_keyring_find(const dls_keyring *kr, const uint8_t *name, size_t name_len,
                     dls_key_ref *ref)
{
    if (!kr || name_len > DLS_NAME_MAX)
        return DLS_ERR_NOTFOUND;
    const uint64_t *idx = dls_htab_find(&kr->index, name, name_len);
    if (!idx)
        return DLS_ERR_NOTFOUND;
    const kr_entry *e = &DLS_VEC_AT(kr->ents, kr_entry, *idx);
    ref->kind = (dls_key_kind)e->kind;
    ref->key = kr->keys + *idx * DLS_KEY_LEN;
    ref->mac_state = e->kind == DLS_KEY_MAC ? &kr->states[e->mac_ix] : NULL;
    return 0;
}

size_t dls_keyring_count(const dls_keyring *kr)
{
    return kr ? kr->count : 0;
}

dls_keyring *dls_keyring_ref(dls_keyring *kr)
{
    if (kr) {
        atomic_store(&kr->frozen, true);
        atomic_fetch_add(&kr->refs, 1);
    }
    return kr;
}

void dls_keyring_del(dls_keyring *kr)
{
    if (!kr || atomic_fetch_sub(&kr->refs, 1) != 1)
        return;
    dls_htab_free(&kr->index);
    dls_vec_free(&kr->ents);
    if (kr->keys)
        sodium_free(kr->keys);
    if (kr->states)
        sodium_free(kr->states);
    free(kr);
}
