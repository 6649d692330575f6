/* Rules 6 and 7 (vocabulary.md, Validity): checks that need memory of
 * earlier facts. Rule 6 keeps two open-addressing hash tables keyed by
 * attacker-chosen values, hashed with libsodium's keyed crypto_shorthash
 * under a random key, so that no one can aim collisions at them. */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "vocab/internal.h"

enum { ACCEPTED = 1, REJECTED = 2, RELEASED = 4, LAPSED = 8 };

/* holder length, holder, proposal encoding (header included) */
#define PROP_KEY_MAX (1 + DLS_ID_MAX + 2 + DLS_ID_MAX)

typedef struct lease_ent {
    uint64_t lease; /* 0: empty (lease ids are >= 1) */
    uint8_t flags;
} lease_ent;

typedef struct prop_ent {
    uint64_t h;
    uint8_t flags; /* 0: empty */
    uint8_t n;
    uint8_t k[PROP_KEY_MAX];
} prop_ent;

struct dls_rule6 {
    uint8_t key[crypto_shorthash_KEYBYTES];
    lease_ent *leases;
    size_t lcap, lused;
    prop_ent *props;
    size_t pcap, pused;
};

static uint64_t hash(const dls_rule6 *r, const void *p, size_t n)
{
    uint8_t out[crypto_shorthash_BYTES];
    crypto_shorthash(out, p, n, r->key);
    uint64_t h;
    memcpy(&h, out, sizeof h);
    return h;
}

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
    crypto_shorthash_keygen(r->key);
    *out = r;
    return 0;
}

void dls_rule6_del(dls_rule6 *r)
{
    if (!r)
        return;
    free(r->leases);
    free(r->props);
    sodium_memzero(r->key, sizeof r->key);
    free(r);
}

/* ---- leases -------------------------------------------------------------- */

static lease_ent *lease_slot(const dls_rule6 *r, lease_ent *tab, size_t cap, uint64_t lease)
{
    size_t i = hash(r, &lease, sizeof lease) & (cap - 1);
    while (tab[i].lease && tab[i].lease != lease)
        i = (i + 1) & (cap - 1);
    return &tab[i];
}

/* Room for one more lease (load at most 1/2). */
static int lease_reserve(dls_rule6 *r)
{
    if ((r->lused + 1) * 2 <= r->lcap)
        return 0;
    size_t cap = r->lcap ? r->lcap * 2 : 64;
    lease_ent *tab = calloc(cap, sizeof *tab);
    if (!tab)
        return DLS_ERR_NOMEM;
    for (size_t i = 0; i < r->lcap; i++)
        if (r->leases[i].lease)
            *lease_slot(r, tab, cap, r->leases[i].lease) = r->leases[i];
    free(r->leases);
    r->leases = tab;
    r->lcap = cap;
    return 0;
}

static uint8_t lease_flags(const dls_rule6 *r, uint64_t lease)
{
    return r->lcap ? lease_slot(r, r->leases, r->lcap, lease)->flags : 0;
}

/* After lease_reserve. */
static void lease_mark(dls_rule6 *r, uint64_t lease, uint8_t flag)
{
    lease_ent *e = lease_slot(r, r->leases, r->lcap, lease);
    if (!e->lease) {
        e->lease = lease;
        r->lused++;
    }
    e->flags |= flag;
}

/* ---- proposals ----------------------------------------------------------- */

typedef struct prop_key {
    uint8_t k[PROP_KEY_MAX];
    uint8_t n;
    uint64_t h;
} prop_key;

static void prop_key_make(const dls_rule6 *r, const dls_fact *f, prop_key *pk)
{
    /* holder <= 64 bytes and proposal <= 66 bytes: checked by decoding */
    pk->k[0] = (uint8_t)f->holder.n;
    memcpy(pk->k + 1, f->holder.p, f->holder.n);
    memcpy(pk->k + 1 + f->holder.n, f->proposal.p, f->proposal.n);
    pk->n = (uint8_t)(1 + f->holder.n + f->proposal.n);
    pk->h = hash(r, pk->k, pk->n);
}

static prop_ent *prop_slot(prop_ent *tab, size_t cap, uint64_t h, const uint8_t *k, uint8_t n)
{
    size_t i = h & (cap - 1);
    while (tab[i].flags && !(tab[i].h == h && tab[i].n == n && memcmp(tab[i].k, k, n) == 0))
        i = (i + 1) & (cap - 1);
    return &tab[i];
}

static int prop_reserve(dls_rule6 *r)
{
    if ((r->pused + 1) * 2 <= r->pcap)
        return 0;
    size_t cap = r->pcap ? r->pcap * 2 : 16;
    prop_ent *tab = calloc(cap, sizeof *tab);
    if (!tab)
        return DLS_ERR_NOMEM;
    for (size_t i = 0; i < r->pcap; i++)
        if (r->props[i].flags)
            *prop_slot(tab, cap, r->props[i].h, r->props[i].k, r->props[i].n) = r->props[i];
    free(r->props);
    r->props = tab;
    r->pcap = cap;
    return 0;
}

static uint8_t prop_flags(const dls_rule6 *r, const prop_key *pk)
{
    return r->pcap ? prop_slot(r->props, r->pcap, pk->h, pk->k, pk->n)->flags : 0;
}

static void prop_mark(dls_rule6 *r, const prop_key *pk, uint8_t flag)
{
    prop_ent *e = prop_slot(r->props, r->pcap, pk->h, pk->k, pk->n);
    if (!e->flags) {
        e->h = pk->h;
        e->n = pk->n;
        memcpy(e->k, pk->k, pk->n);
        r->pused++;
    }
    e->flags |= flag;
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
            prop_key_make(r, f, &pk);
        if ((lease_flags(r, f->lease) & ACCEPTED) || (prop && (prop_flags(r, &pk) & REJECTED)))
            return DLS_ERR_RULE6;
        if (lease_reserve(r) || (prop && prop_reserve(r)))
            return DLS_ERR_NOMEM;
        lease_mark(r, f->lease, ACCEPTED);
        if (prop)
            prop_mark(r, &pk, ACCEPTED);
        return 0;
    }
    case DLS_FACT_REFUSAL:
        if (!answers(f))
            return DLS_ERR_INVAL;
        prop_key_make(r, f, &pk);
        if (prop_flags(r, &pk) & ACCEPTED)
            return DLS_ERR_RULE6;
        if (prop_reserve(r))
            return DLS_ERR_NOMEM;
        prop_mark(r, &pk, REJECTED);
        return 0;
    case DLS_FACT_RELEASE:
    case DLS_FACT_RECLAIM: {
        uint8_t flag = f->kind == DLS_FACT_RELEASE ? RELEASED : LAPSED;
        if (lease_flags(r, f->lease) & flag)
            return DLS_ERR_RULE6;
        if (lease_reserve(r))
            return DLS_ERR_NOMEM;
        lease_mark(r, f->lease, flag);
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
