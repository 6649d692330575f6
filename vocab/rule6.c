/* Rules 6 and 7 (vocabulary.md, Validity): checks that need memory of
 * earlier facts. Rule 6 keeps two tables keyed by attacker-chosen values
 * (lease ids; holder and proposal), each a vocab/htab.h table hashed with
 * libsodium's keyed crypto_shorthash under a random key, so that no one can
 * aim collisions at them. A value holds the flags seen for its key. */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "vocab/htab.h"
#include "vocab/internal.h"

enum { ACCEPTED = 1, REJECTED = 2, RELEASED = 4, LAPSED = 8 };

/* holder length, holder, proposal encoding (header included) */
#define PROP_KEY_MAX (1 + DLS_ID_MAX + 2 + DLS_ID_MAX)

struct dls_rule6 {
    dls_htab leases; /* lease id -> flags */
    dls_htab props;  /* prop_key -> flags */
};

int dls_rule6_new(dls_rule6 **out)
{
    if (!out)
        return DLS_ERR_INVAL;
    *out = NULL;
    if (sodium_init() < 0)
        return DLS_ERR_SODIUM;
    dls_rule6 *r = calloc(1, sizeof *r);
    if (!r)
        return DLS_ERR_NOMEM;
    dls_htab_init(&r->leases);
    dls_htab_init(&r->props);
    *out = r;
    return 0;
}

void dls_rule6_del(dls_rule6 *r)
{
    if (!r)
        return;
    dls_htab_free(&r->leases);
    dls_htab_free(&r->props);
    free(r);
}

static uint8_t lease_flags(const dls_rule6 *r, uint64_t lease)
{
    const uint64_t *v = dls_htab_find_u64(&r->leases, lease);
    return v ? (uint8_t)*v : 0;
}

/* ---- proposals ----------------------------------------------------------- */

typedef struct prop_key {
    uint8_t k[PROP_KEY_MAX];
    uint8_t n;
} prop_key;

static void prop_key_make(const dls_fact *f, prop_key *pk)
{
    /* holder <= 64 bytes and proposal <= 66 bytes: checked by answers() */
    pk->k[0] = (uint8_t)f->holder.n;
    memcpy(pk->k + 1, f->holder.p, f->holder.n);
    memcpy(pk->k + 1 + f->holder.n, f->proposal.p, f->proposal.n);
    pk->n = (uint8_t)(1 + f->holder.n + f->proposal.n);
}

static uint8_t prop_flags(const dls_rule6 *r, const prop_key *pk)
{
    const uint64_t *v = dls_htab_find(&r->props, pk->k, pk->n);
    return v ? (uint8_t)*v : 0;
}

/* ---- rule 6 -------------------------------------------------------------- */

static bool answers(const dls_fact *f)
{
    return (f->keys & DLS_K_PROPOSAL) && (f->keys & DLS_K_HOLDER) &&
           f->holder.n <= DLS_ID_MAX && f->proposal.n <= 2 + DLS_ID_MAX;
}

int dls_rule6_observe(dls_rule6 *r, const dls_fact *f)
{
    if (!r || !f)
        return DLS_ERR_INVAL;
    prop_key pk;
    if (f->lease == 0 && (f->kind == DLS_FACT_GRANT || f->kind == DLS_FACT_RELEASE || f->kind == DLS_FACT_RECLAIM))
        return DLS_ERR_INVAL;
    switch (f->kind) {
    case DLS_FACT_GRANT: {
        bool prop = answers(f);
        if (prop)
            prop_key_make(f, &pk);
        if ((lease_flags(r, f->lease) & ACCEPTED) || (prop && (prop_flags(r, &pk) & REJECTED)))
            return DLS_ERR_RULE6;
        /* Both entries are found or made before either is marked, so that
         * running out of memory leaves no flag set (a new entry holds 0,
         * which reads as absent). */
        uint64_t *lv, *pv = NULL;
        if (dls_htab_put_u64(&r->leases, f->lease, &lv, NULL) ||
            (prop && dls_htab_put(&r->props, pk.k, pk.n, &pv, NULL)))
            return DLS_ERR_NOMEM;
        *lv |= ACCEPTED;
        if (pv)
            *pv |= ACCEPTED;
        return 0;
    }
    case DLS_FACT_REFUSAL: {
        if (!answers(f))
            return DLS_ERR_INVAL;
        prop_key_make(f, &pk);
        if (prop_flags(r, &pk) & ACCEPTED)
            return DLS_ERR_RULE6;
        uint64_t *pv;
        if (dls_htab_put(&r->props, pk.k, pk.n, &pv, NULL))
            return DLS_ERR_NOMEM;
        *pv |= REJECTED;
        return 0;
    }
    case DLS_FACT_RELEASE:
    case DLS_FACT_RECLAIM: {
        uint8_t flag = f->kind == DLS_FACT_RELEASE ? RELEASED : LAPSED;
        if (lease_flags(r, f->lease) & flag)
            return DLS_ERR_RULE6;
        uint64_t *lv;
        if (dls_htab_put_u64(&r->leases, f->lease, &lv, NULL))
            return DLS_ERR_NOMEM;
        *lv |= flag;
        return 0;
    }
    default:
        return 0;
    }
}

/* ---- rule 7 -------------------------------------------------------------- */

int dls_rule7_observe(dls_rule7 *r, const dls_fact *tick)
{
    if (!r || !tick || tick->kind != DLS_FACT_TICK)
        return DLS_ERR_INVAL;
    if (r->seen && tick->reading.ns < r->newest_ns)
        return DLS_ERR_RULE7;
    r->seen = true;
    r->newest_ns = tick->reading.ns;
    return 0;
}
