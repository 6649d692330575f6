/* The holder's writes at step 4 (holder.md "Renew at less than half the
 * duration", "Release when done"): with settings.batch_max
 * of 2 or more, every renewal and retried release a step owes on the
 * holder's medium goes out in one append — with a secret, batch envelopes
 * (attribution.md revision 4: one signature each) of up to batch_max facts
 * within the 65,536-byte record limit; without one, bare facts — all in one
 * dls_medium_append_batch (one write under one lock, one sync). A single
 * fact is written as before (a plain envelope or a bare fact). Every fact
 * of one append shares its outcome: all ok (a batch's facts at one
 * position) or all failed. With batch_max 1 each fact is its own append. */
#include <stdlib.h>
#include <string.h>

#include "holder/holder_int.h"

int hld_batch_init(dls_holder *h)
{
    size_t n = h->s.batch_max;
    h->owed = calloc(h->s.max_leases, sizeof *h->owed);
    h->owed_rc = calloc(h->s.max_leases, sizeof *h->owed_rc);
    h->owed_pos = calloc(h->s.max_leases, sizeof *h->owed_pos);
    if (!h->owed || !h->owed_rc || !h->owed_pos)
        return DLS_ERR_NOMEM;
    if (n <= 1)
        return 0;
    h->farena = malloc(n * HLD_FACT_SLOT);
    h->facts = calloc(n, sizeof *h->facts);
    if (!h->farena || !h->facts)
        return DLS_ERR_NOMEM;
    return 0;
}

void hld_batch_fini(dls_holder *h)
{
    free(h->owed);
    free(h->owed_rc);
    free(h->owed_pos);
    free(h->farena);
    free(h->facts);
    dls_vec_free(&h->out);
    dls_vec_free(&h->roff);
    dls_vec_free(&h->recv);
    dls_vec_free(&h->lenv);
}

static void owed_fact(const dls_holder *h, const howed *o, dls_fact *f)
{
    const hlease *l = &h->leases[o->lease_ix];
    memset(f, 0, sizeof *f);
    f->lease = l->id;
    if (o->release) {
        f->kind = DLS_FACT_RELEASE;
        f->keys = DLS_K_LEASE | (l->commit ? DLS_K_COMMIT : 0u);
        f->commit = l->commit;
    } else {
        f->kind = DLS_FACT_RENEWAL;
        f->keys = DLS_K_LEASE | DLS_K_SEQ;
        f->seq = o->seq;
    }
}

/* Adds one record of `cap` bytes at most, written by the caller into the
 * answer, to the step's records: its bytes are h->out.p + off. */
static uint8_t *rec_room(dls_holder *h, size_t cap, size_t *off)
{
    if (dls_vec_reserve(&h->out, 1, h->out.n + cap) != 0)
        return NULL;
    *off = h->out.n;
    return (uint8_t *)h->out.p + h->out.n;
}

/* Records one written record of len bytes at off; its index, or -1. */
static long rec_done(dls_holder *h, size_t off, size_t len)
{
    size_t *e = dls_vec_push(&h->roff, 2 * sizeof(size_t));
    if (!e)
        return -1;
    e[0] = off;
    e[1] = len;
    h->out.n = off + len;
    return (long)(h->roff.n - 1);
}

/* One owed fact alone as a record: sealed in a plain envelope with a
 * secret, bare without. Its record index, or a negative error. */
static long one_record(dls_holder *h, const howed *o)
{
    dls_fact f;
    owed_fact(h, o, &f);
    size_t flen = 0, off = 0, len = 0;
    int rc = dls_fact_encode(&f, h->fact, sizeof h->fact, &flen);
    if (rc != 0)
        return rc;
    uint8_t *at = rec_room(h, h->secret ? ENV_MAX : flen, &off);
    if (!at)
        return DLS_ERR_NOMEM;
    if (h->secret) {
        rc = dls_envelope_seal(h->secret, h->medium_id, h->fact, flen, at, ENV_MAX, &len);
        if (rc != 0)
            return rc;
    } else {
        memcpy(at, h->fact, flen);
        len = flen;
    }
    long r = rec_done(h, off, len);
    return r < 0 ? DLS_ERR_NOMEM : r;
}

/* Encodes owed[0..) into fact slots while they fit one batch envelope
 * (batch_max facts, DLS_BATCH_RECORD_MAX bytes): how many. */
static size_t fill_batch(dls_holder *h, const howed *owed, size_t left)
{
    size_t count = 0, size = 0;
    while (count < left && count < h->s.batch_max) {
        dls_fact f;
        owed_fact(h, &owed[count], &f);
        uint8_t *slot = h->farena + count * HLD_FACT_SLOT;
        size_t len = 0;
        if (dls_fact_encode(&f, slot, HLD_FACT_SLOT, &len) != 0)
            break; /* written alone */
        h->facts[count] = (dls_bytes){slot, len};
        size_t grown = count == 0 ? dls_batch_size(h->name_len, h->facts, 1,
                                                   dls_secret_kind(h->secret))
                                  : size + dls_batch_fact_cost(count, len);
        if (grown == 0 || grown > DLS_BATCH_RECORD_MAX)
            break;
        size = grown;
        count++;
    }
    return count;
}

/* The facts in h->facts[0..count) as one batch envelope record: its index,
 * or a negative error. */
static long batch_record(dls_holder *h, size_t count)
{
    size_t off = 0, len = 0;
    uint8_t *at = rec_room(h, DLS_BATCH_RECORD_MAX, &off);
    if (!at)
        return DLS_ERR_NOMEM;
    int rc = dls_batch_seal(h->secret, h->medium_id, h->facts, count, at,
                            DLS_BATCH_RECORD_MAX, &len);
    if (rc != 0)
        return rc;
    long r = rec_done(h, off, len);
    return r < 0 ? DLS_ERR_NOMEM : r;
}

/* Batched (batch_max >= 2): every owed fact goes into a record — runs of up
 * to batch_max facts into one batch envelope each with a secret, one bare
 * record each without — and the step's records into one
 * dls_medium_append_batch: one write under one lock, one sync, however
 * many renewals are due. A fact whose record cannot be made fails alone;
 * the others share the append's outcome. */
static int write_batched(dls_holder *h, const howed *owed, size_t n, int *rcs, uint64_t *pos)
{
    h->out.n = 0;
    h->roff.n = 0;
    size_t i = 0;
    while (i < n) {
        size_t count = h->secret ? fill_batch(h, &owed[i], n - i) : 0;
        long r = count >= 2 ? batch_record(h, count) : one_record(h, &owed[i]);
        size_t took = count >= 2 ? count : 1;
        for (size_t k = 0; k < took; k++) {
            rcs[i + k] = r < 0 ? (int)r : 0;
            pos[i + k] = r < 0 ? 0 : (uint64_t)r; /* the record's index, for now */
        }
        i += took;
    }
    size_t nrec = h->roff.n;
    if (nrec == 0)
        return 0;
    if (dls_vec_reserve(&h->recv, sizeof(const uint8_t *), nrec) != 0 ||
        dls_vec_reserve(&h->lenv, sizeof(size_t), nrec) != 0) {
        for (size_t k = 0; k < n; k++)
            if (rcs[k] == 0)
                rcs[k] = DLS_ERR_NOMEM;
        return 0;
    }
    for (size_t r = 0; r < nrec; r++) {
        const size_t *e = &DLS_VEC_AT(h->roff, size_t, 2 * r);
        DLS_VEC_AT(h->recv, const uint8_t *, r) = (const uint8_t *)h->out.p + e[0];
        DLS_VEC_AT(h->lenv, size_t, r) = e[1];
    }
    uint64_t first = 0;
    int rc = dls_medium_append_batch(h->medium, h->recv.p, h->lenv.p, nrec, &first, NULL);
    for (size_t k = 0; k < n; k++) {
        if (rcs[k] != 0)
            continue;
        rcs[k] = rc;
        pos[k] = rc == 0 ? first + pos[k] : 0; /* a batch's facts: (position, index) */
    }
    return 1;
}

int hld_write_owed(dls_holder *h, const howed *owed, size_t n, int *rcs, uint64_t *pos)
{
    if (h->s.batch_max >= 2 && n >= 2)
        return write_batched(h, owed, n, rcs, pos);
    /* unbatched: every fact its own append, exactly as written alone */
    for (size_t i = 0; i < n; i++) {
        dls_fact f;
        owed_fact(h, &owed[i], &f);
        rcs[i] = hld_append_fact(h, &f, &pos[i]);
    }
    return (int)n;
}
