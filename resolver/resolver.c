/* Resolvers (attribution.md, "Resolvers"): `signed` and `medium`, each
 * bound to one medium id, with a scratch buffer for M allocated once. */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "resolver/internal.h"

enum { RES_SIGNED, RES_MEDIUM };

struct dls_resolver {
    int kind;
    uint8_t medium[DLS_MEDIUM_ID_LEN];
    dls_keyring *kr;          /* a reference, or NULL (medium resolver only) */
    size_t party_len;
    uint8_t party[DLS_NAME_MAX];
    /* M = prefix || medium id || author_len || author || fact; the first
     * 32 bytes are written once, at creation. */
    uint8_t *m;
};

#define M_FIXED (DLS_SIGN_PREFIX_LEN + DLS_MEDIUM_ID_LEN)

static int resolver_alloc(dls_resolver **out, int kind,
                          const uint8_t medium_id[DLS_MEDIUM_ID_LEN], dls_keyring *kr)
{
    if (sodium_init() < 0)
        return DLS_ERR_SODIUM;
    dls_resolver *r = calloc(1, sizeof *r);
    if (!r)
        return DLS_ERR_NOMEM;
    r->kind = kind;
    memcpy(r->medium, medium_id, DLS_MEDIUM_ID_LEN);
    if (kr) {
        r->m = malloc(DLS_MESSAGE_MAX);
        if (!r->m) {
            free(r);
            return DLS_ERR_NOMEM;
        }
        memcpy(r->m, DLS_SIGN_PREFIX, DLS_SIGN_PREFIX_LEN);
        memcpy(r->m + DLS_SIGN_PREFIX_LEN, medium_id, DLS_MEDIUM_ID_LEN);
        r->kr = dls_keyring_ref(kr);
    }
    *out = r;
    return 0;
}

int dls_resolver_new_signed(dls_resolver **out, const uint8_t medium_id[DLS_MEDIUM_ID_LEN],
                            dls_keyring *kr)
{
    if (!out)
        return DLS_ERR_INVAL;
    *out = NULL;
    if (!medium_id || !kr)
        return DLS_ERR_INVAL;
    if (dls_keyring_count(kr) == 0)
        return DLS_ERR_EMPTY_KEYRING;
    return resolver_alloc(out, RES_SIGNED, medium_id, kr);
}

int dls_resolver_new_medium(dls_resolver **out, const uint8_t medium_id[DLS_MEDIUM_ID_LEN],
                            const char *party, dls_keyring *kr)
{
    if (!out)
        return DLS_ERR_INVAL;
    *out = NULL;
    if (!medium_id || !party)
        return DLS_ERR_INVAL;
    size_t n = strlen(party);
    if (!dls_name_valid((const uint8_t *)party, n))
        return DLS_ERR_INVAL;
    dls_resolver *r;
    int rc = resolver_alloc(&r, RES_MEDIUM, medium_id, kr);
    if (rc)
        return rc;
    memcpy(r->party, party, n);
    r->party_len = n;
    *out = r;
    return 0;
}

void dls_resolver_del(dls_resolver *r)
{
    if (!r)
        return;
    dls_keyring_del(r->kr);
    free(r->m);
    free(r);
}

const uint8_t *dls_resolver_medium_id(const dls_resolver *r)
{
    return r ? r->medium : NULL;
}

int dls_resolver_check(const dls_resolver *r, const uint8_t medium_id[DLS_MEDIUM_ID_LEN])
{
    if (!r)
        return DLS_ERR_NORESOLVER;
    if (!medium_id || memcmp(r->medium, medium_id, DLS_MEDIUM_ID_LEN) != 0)
        return DLS_ERR_RESOLVER_MEDIUM;
    return 0;
}

/* Verifies a well-formed envelope under the resolver's keyring. */
static dls_why verify(dls_resolver *r, const dls_env *e)
{
    dls_key_kind kind;
    const uint8_t *key;
    if (!r->kr || dls_keyring_lookup(r->kr, e->author.p, e->author.n, &kind, &key) != 0)
        return DLS_WHY_UNKNOWN_AUTHOR;
    if ((kind == DLS_KEY_MAC) != e->mac)
        return DLS_WHY_WRONG_KEY_KIND;
    uint8_t *p = r->m + M_FIXED;
    *p++ = (uint8_t)e->author.n;
    memcpy(p, e->author.p, e->author.n);
    p += e->author.n;
    if (e->fact.n)
        memcpy(p, e->fact.p, e->fact.n);
    size_t mlen = M_FIXED + 1 + e->author.n + e->fact.n;
    int bad = e->mac ? crypto_auth_verify(e->tag.p, r->m, mlen, key)
                     : crypto_sign_verify_detached(e->tag.p, r->m, mlen, key);
    return bad ? DLS_WHY_SIGNATURE : DLS_WHY_NONE;
}

void dls_resolver_attribute(dls_resolver *r, const uint8_t *rec, size_t n,
                            dls_attribution *a)
{
    if (!a)
        return;
    dls_env e;
    dls_env_parse(rec, n, &e);
    memset(a, 0, sizeof *a);
    a->kind = e.kind;
    a->author = e.author;
    a->fact = e.fact;
    switch (e.kind) {
    case DLS_REC_SEAL:
        a->why = DLS_WHY_NONE;
        return;
    case DLS_REC_MALFORMED:
        a->why = DLS_WHY_MALFORMED;
        return;
    case DLS_REC_FACT:
        if (r && r->kind == RES_MEDIUM) {
            a->attributed = true;
            a->author = (dls_bytes){r->party, r->party_len};
            a->why = DLS_WHY_NONE;
        } else {
            a->why = DLS_WHY_BARE_FACT;
        }
        return;
    case DLS_REC_ENVELOPE:
        if (!e.ok) {
            a->why = DLS_WHY_MALFORMED;
            return;
        }
        a->why = r ? verify(r, &e) : DLS_WHY_UNKNOWN_AUTHOR;
        a->attributed = a->why == DLS_WHY_NONE;
        return;
    }
}
