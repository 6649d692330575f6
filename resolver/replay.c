#include "resolver/replay.h"

#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "vocab/htab.h"

struct dls_replay {
    dls_htab renewals;  /* lease id (8 bytes, little-endian) -> last counted seq */
    dls_htab proposals; /* medium id (16) || author -> last counted seq */
};

int dls_replay_new(dls_replay **out)
{
    if (!out)
        return DLS_ERR_INVAL;
    *out = NULL;
    if (sodium_init() < 0)
        return DLS_ERR_SODIUM;
    dls_replay *r = calloc(1, sizeof *r);
    if (!r)
        return DLS_ERR_NOMEM;
    dls_htab_init(&r->renewals);
    dls_htab_init(&r->proposals);
    *out = r;
    return 0;
}

void dls_replay_del(dls_replay *r)
{
    if (!r)
        return;
    dls_htab_free(&r->renewals);
    dls_htab_free(&r->proposals);
    free(r);
}

static int verdict(uint64_t last, uint64_t seq)
{
    return seq > last ? DLS_REPLAY_COUNTED : DLS_REPLAY_REPLAY;
}

uint64_t dls_replay_renewal_last(const dls_replay *r, uint64_t lease)
{
    if (!r)
        return 0;
    const uint64_t *v = dls_htab_find_u64(&r->renewals, lease);
    return v ? *v : 0;
}

int dls_replay_renewal_check(const dls_replay *r, uint64_t lease, uint64_t seq)
{
    return verdict(dls_replay_renewal_last(r, lease), seq);
}

int dls_replay_renewal_count(dls_replay *r, uint64_t lease, uint64_t seq)
{
    if (!r)
        return DLS_ERR_INVAL;
    if (dls_replay_renewal_check(r, lease, seq) != DLS_REPLAY_COUNTED)
        return DLS_REPLAY_REPLAY;
    uint64_t *v;
    int rc = dls_htab_put_u64(&r->renewals, lease, &v, NULL);
    if (rc)
        return rc;
    *v = seq;
    return DLS_REPLAY_COUNTED;
}

void dls_replay_lease_forget(dls_replay *r, uint64_t lease)
{
    if (!r)
        return;
    (void)dls_htab_del_u64(&r->renewals, lease);
}

/* medium id || author; 0 or DLS_ERR_INVAL. */
static int author_key(uint8_t k[DLS_MEDIUM_ID_LEN + DLS_NAME_MAX], size_t *n,
                      const uint8_t *author, size_t author_len,
                      const uint8_t medium_id[DLS_MEDIUM_ID_LEN])
{
    if (!author || author_len < 1 || author_len > DLS_NAME_MAX || !medium_id)
        return DLS_ERR_INVAL;
    memcpy(k, medium_id, DLS_MEDIUM_ID_LEN);
    memcpy(k + DLS_MEDIUM_ID_LEN, author, author_len);
    *n = DLS_MEDIUM_ID_LEN + author_len;
    return 0;
}

uint64_t dls_replay_proposal_last(const dls_replay *r, const uint8_t *author,
                                  size_t author_len,
                                  const uint8_t medium_id[DLS_MEDIUM_ID_LEN])
{
    uint8_t k[DLS_MEDIUM_ID_LEN + DLS_NAME_MAX];
    size_t n;
    if (!r || author_key(k, &n, author, author_len, medium_id))
        return 0;
    const uint64_t *v = dls_htab_find(&r->proposals, k, n);
    return v ? *v : 0;
}

int dls_replay_proposal_check(const dls_replay *r, const uint8_t *author, size_t author_len,
                              const uint8_t medium_id[DLS_MEDIUM_ID_LEN], uint64_t seq)
{
    uint8_t k[DLS_MEDIUM_ID_LEN + DLS_NAME_MAX];
    size_t n;
    if (!r || author_key(k, &n, author, author_len, medium_id))
        return DLS_ERR_INVAL;
    return verdict(dls_replay_proposal_last(r, author, author_len, medium_id), seq);
}

int dls_replay_proposal_count(dls_replay *r, const uint8_t *author, size_t author_len,
                              const uint8_t medium_id[DLS_MEDIUM_ID_LEN], uint64_t seq)
{
    uint8_t k[DLS_MEDIUM_ID_LEN + DLS_NAME_MAX];
    size_t n;
    if (!r || author_key(k, &n, author, author_len, medium_id))
        return DLS_ERR_INVAL;
    const uint64_t *last = dls_htab_find(&r->proposals, k, n);
    if (verdict(last ? *last : 0, seq) != DLS_REPLAY_COUNTED)
        return DLS_REPLAY_REPLAY;
    uint64_t *v;
    int rc = dls_htab_put(&r->proposals, k, n, &v, NULL);
    if (rc)
        return rc;
    *v = seq;
    return DLS_REPLAY_COUNTED;
}

size_t dls_replay_leases(const dls_replay *r)
{
    return r ? r->renewals.count : 0;
}

size_t dls_replay_authors(const dls_replay *r)
{
    return r ? r->proposals.count : 0;
}
