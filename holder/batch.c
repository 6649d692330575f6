/* The holder's writes at step 4 (holder.md "Renew at less than half the
 * duration", "Release when done"; issue 13 item 2): every renewal and
 * retried release a step owes on the holder's medium goes out in as few
 * appends as possible — with a secret, one batch envelope (attribution.md
 * revision 4: one signature, one append, one sync) of up to
 * settings.batch_max facts within the 65,536-byte record limit; without
 * one, bare facts in one dls_medium_append_batch (one write, one sync). A
 * single fact is written as before (a plain envelope or a bare fact). Every
 * fact of one append shares its outcome: all ok (at one position for a
 * batch envelope) or all failed. */
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
    h->recs = calloc(n, sizeof *h->recs);
    h->lens = calloc(n, sizeof *h->lens);
    h->bbuf = h->secret ? malloc(DLS_BATCH_RECORD_MAX) : NULL;
    if (!h->farena || !h->facts || !h->recs || !h->lens || (h->secret && !h->bbuf))
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
    free(h->recs);
    free(h->lens);
    free(h->bbuf);
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

/* Appends owed[0..n) as one record (or, bare, one batch of records): 0 and
 * pos[k] for each, or the append's error for all. n >= 2 here. */
static int append_several(dls_holder *h, const howed *owed, size_t n, uint64_t *pos)
{
    for (size_t k = 0; k < n; k++)
        h->recs[k] = h->facts[k].p, h->lens[k] = h->facts[k].n;
    int rc;
    if (h->secret) {
        size_t len;
        rc = dls_batch_seal(h->secret, h->medium_id, h->facts, n, h->bbuf,
                            DLS_BATCH_RECORD_MAX, &len);
        uint64_t p = 0;
        if (rc == 0)
            rc = dls_medium_append(h->medium, h->bbuf, len, &p, NULL);
        for (size_t k = 0; k < n; k++)
            pos[k] = p; /* every fact at (position, index) */
    } else {
        uint64_t first = 0;
        rc = dls_medium_append_batch(h->medium, h->recs, h->lens, n, &first, NULL);
        for (size_t k = 0; k < n; k++)
            pos[k] = first + k;
    }
    (void)owed;
    return rc;
}

int hld_write_owed(dls_holder *h, const howed *owed, size_t n, int *rcs, uint64_t *pos)
{
    size_t appends = 0;
    size_t i = 0;
    while (i < n) {
        /* one fact alone: exactly the record an unbatched holder writes */
        if (h->s.batch_max <= 1 || n - i == 1) {
            dls_fact f;
            owed_fact(h, &owed[i], &f);
            rcs[i] = hld_append_fact(h, &f, &pos[i]);
            appends++;
            i++;
            continue;
        }
        size_t count = 0, size = 0;
        size_t kind_ok = 1;
        while (i + count < n && count < h->s.batch_max) {
            dls_fact f;
            owed_fact(h, &owed[i + count], &f);
            uint8_t *slot = h->farena + count * HLD_FACT_SLOT;
            size_t len = 0;
            if (dls_fact_encode(&f, slot, HLD_FACT_SLOT, &len) != 0) {
                kind_ok = 0;
                break;
            }
            h->facts[count] = (dls_bytes){slot, len};
            if (h->secret) {
                size_t grown = count == 0
                                   ? dls_batch_size(h->name_len, h->facts, 1,
                                                    dls_secret_kind(h->secret))
                                   : size + dls_batch_fact_cost(count, len);
                if (grown == 0 || grown > DLS_BATCH_RECORD_MAX)
                    break;
                size = grown;
            }
            count++;
        }
        if (count <= 1 || !kind_ok) {
            /* a fact that does not encode into a slot, or no room for two:
             * write the next one alone */
            dls_fact f;
            owed_fact(h, &owed[i], &f);
            rcs[i] = hld_append_fact(h, &f, &pos[i]);
            appends++;
            i++;
            continue;
        }
        int rc = append_several(h, &owed[i], count, &pos[i]);
        for (size_t k = 0; k < count; k++)
            rcs[i + k] = rc;
        appends++;
        i += count;
    }
    return (int)appends;
}
