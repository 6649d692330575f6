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
/* The scratch buffer holds M or M_batch (Ed25519 signs the whole message;
 * MACs are hashed piecewise from the record and need no copy). */
#define M_SCRATCH (DLS_MESSAGE_MAX > DLS_BATCH_MESSAGE_MAX ? DLS_MESSAGE_MAX : DLS_BATCH_MESSAGE_MAX)

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
        r->m = malloc(M_SCRATCH);
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

/* HMAC-SHA-512-256 from the key's precomputed state: the
 * state after absorbing the key is copied, M is hashed piecewise straight
 * from the record (no copy into the scratch buffer), and the tag is compared
 * in constant time. Equal to crypto_auth_verify over the whole M. */
static int mac_verify(const dls_resolver *r, const dls_env *e, const dls_key_ref *k)
{
    crypto_auth_hmacsha512256_state st = *k->mac_state;
    uint8_t hdr[1 + 4];
    uint8_t out[crypto_auth_hmacsha512256_BYTES];
    if (e->kind == DLS_REC_BATCH) {
        crypto_auth_hmacsha512256_update(&st, (const uint8_t *)DLS_BATCH_PREFIX,
                                         DLS_BATCH_PREFIX_LEN);
        crypto_auth_hmacsha512256_update(&st, r->medium, DLS_MEDIUM_ID_LEN);
    } else { /* M's fixed part from its pieces: r->m is the owner's scratch */
        crypto_auth_hmacsha512256_update(&st, (const uint8_t *)DLS_SIGN_PREFIX,
                                         DLS_SIGN_PREFIX_LEN);
        crypto_auth_hmacsha512256_update(&st, r->medium, DLS_MEDIUM_ID_LEN);
    }
    hdr[0] = (uint8_t)e->author.n;
    crypto_auth_hmacsha512256_update(&st, hdr, 1);
    crypto_auth_hmacsha512256_update(&st, e->author.p, e->author.n);
    if (e->kind == DLS_REC_BATCH) {
        dls_put_le32(hdr, e->count);
        crypto_auth_hmacsha512256_update(&st, hdr, 4);
        dls_facts it;
        dls_bytes f;
        dls_env_facts(e, &it);
        while (dls_facts_next(&it, &f, NULL)) {
            dls_put_le32(hdr, (uint32_t)f.n);
            crypto_auth_hmacsha512256_update(&st, hdr, 4);
            crypto_auth_hmacsha512256_update(&st, f.p, f.n);
        }
    } else {
        crypto_auth_hmacsha512256_update(&st, e->fact.p, e->fact.n);
    }
    crypto_auth_hmacsha512256_final(&st, out);
    int bad = crypto_verify_32(out, e->tag.p);
    sodium_memzero(&st, sizeof st);
    return bad;
}

/* Ed25519 over M or M_batch, built in the scratch buffer `m` (the
 * resolver's own, whose first 32 bytes hold M's prefix and medium id since
 * creation, or a caller's: fixed false, they are written first). */
static int sig_verify(const dls_resolver *r, uint8_t *m, bool fixed, const dls_env *e,
                      const uint8_t *key)
{
    uint8_t *p;
    if (!fixed && e->kind != DLS_REC_BATCH) {
        memcpy(m, DLS_SIGN_PREFIX, DLS_SIGN_PREFIX_LEN);
        memcpy(m + DLS_SIGN_PREFIX_LEN, r->medium, DLS_MEDIUM_ID_LEN);
    }
    if (e->kind == DLS_REC_BATCH) {
        p = m;
        memcpy(p, DLS_BATCH_PREFIX, DLS_BATCH_PREFIX_LEN);
        p += DLS_BATCH_PREFIX_LEN;
        memcpy(p, r->medium, DLS_MEDIUM_ID_LEN);
        p += DLS_MEDIUM_ID_LEN;
    } else {
        p = m + M_FIXED;
    }
    *p++ = (uint8_t)e->author.n;
    memcpy(p, e->author.p, e->author.n);
    p += e->author.n;
    if (e->kind == DLS_REC_BATCH) {
        /* fits: a parsed batch is at most DLS_BATCH_RECORD_MAX bytes */
        dls_put_le32(p, e->count);
        p += 4;
        dls_facts it;
        dls_bytes f;
        dls_env_facts(e, &it);
        while (dls_facts_next(&it, &f, NULL)) {
            dls_put_le32(p, (uint32_t)f.n);
            p += 4;
            if (f.n)
                memcpy(p, f.p, f.n);
            p += f.n;
        }
    } else if (e->fact.n) {
        memcpy(p, e->fact.p, e->fact.n);
        p += e->fact.n;
    }
    size_t mlen = (size_t)(p - m);
    int bad = crypto_sign_verify_detached(e->tag.p, m, mlen, key);
    if (fixed && e->kind == DLS_REC_BATCH) { /* restore M's fixed part for single envelopes */
        memcpy(m, DLS_SIGN_PREFIX, DLS_SIGN_PREFIX_LEN);
        memcpy(m + DLS_SIGN_PREFIX_LEN, r->medium, DLS_MEDIUM_ID_LEN);
    }
    return bad;
}

/* Verifies a well-formed envelope or batch under the resolver's keyring. */
static dls_why verify(const dls_resolver *r, uint8_t *m, bool fixed, const dls_env *e)
{
    dls_key_ref k;
    if (!r->kr || dls_keyring_find(r->kr, e->author.p, e->author.n, &k) != 0)
        return DLS_WHY_UNKNOWN_AUTHOR;
    if ((k.kind == DLS_KEY_MAC) != e->mac)
        return DLS_WHY_WRONG_KEY_KIND;
    int bad = e->mac ? mac_verify(r, e, &k) : sig_verify(r, m, fixed, e, k.key);
    return bad ? DLS_WHY_SIGNATURE : DLS_WHY_NONE;
}

static void attribute(const dls_resolver *r, uint8_t *m, bool fixed, const dls_env *e,
                      bool batches, dls_attribution *a)
{
    memset(a, 0, sizeof *a);
    a->kind = e->kind;
    a->author = e->author;
    a->fact = e->fact;
    a->count = dls_env_count(e);
    switch (e->kind) {
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
    case DLS_REC_BATCH:
        if (!batches) { /* one fact per record here: a journal's rule */
            a->why = DLS_WHY_MALFORMED;
            return;
        }
        /* verified as an envelope, over M_batch */
        /* fall through */
    case DLS_REC_ENVELOPE:
        if (!e->ok) {
            a->why = DLS_WHY_MALFORMED;
            return;
        }
        a->why = r ? verify(r, m, fixed, e) : DLS_WHY_UNKNOWN_AUTHOR;
        a->attributed = a->why == DLS_WHY_NONE;
        return;
    }
}

void dls_resolver_attribute(dls_resolver *r, const uint8_t *rec, size_t n, dls_attribution *a)
{
    if (!a)
        return;
    dls_env e;
    dls_env_parse(rec, n, &e);
    attribute(r, r ? r->m : NULL, true, &e, false, a);
}

void dls_resolver_attribute_facts(dls_resolver *r, const uint8_t *rec, size_t n,
                                  dls_attribution *a, dls_facts *it)
{
    dls_env e;
    dls_attribution local;
    if (!a)
        a = &local;
    dls_env_parse(rec, n, &e);
    attribute(r, r ? r->m : NULL, true, &e, true, a);
    if (!it)
        return;
    if (a->attributed)
        dls_env_facts(&e, it);
    else
        memset(it, 0, sizeof *it);
}

void dls_resolver_attribute_scratch(const dls_resolver *r, uint8_t *scratch, bool batches,
                                    const uint8_t *rec, size_t n, dls_attribution *a,
                                    dls_facts *it)
{
    dls_env e;
    dls_env_parse(rec, n, &e);
    attribute(r, scratch, false, &e, batches, a);
    if (!it)
        return;
    if (a->attributed && batches)
        dls_env_facts(&e, it);
    else
        memset(it, 0, sizeof *it);
}
