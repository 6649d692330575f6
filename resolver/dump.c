#include "resolver/dump.h"

#include <stdlib.h>
#include <string.h>

#include "resolver/internal.h"

struct dls_dump_attrib {
    dls_resolver *r; /* NULL when no keyring (or an empty one) was given */
};

int dls_dump_attrib_new(dls_dump_attrib **out, const uint8_t medium_id[DLS_MEDIUM_ID_LEN],
                        dls_keyring *kr)
{
    if (!out || !medium_id)
        return DLS_ERR_INVAL;
    *out = NULL;
    dls_dump_attrib *d = calloc(1, sizeof *d);
    if (!d)
        return DLS_ERR_NOMEM;
    if (dls_keyring_count(kr) > 0) {
        int rc = dls_resolver_new_signed(&d->r, medium_id, kr);
        if (rc) {
            free(d);
            return rc;
        }
    }
    *out = d;
    return 0;
}

void dls_dump_attrib_del(dls_dump_attrib *d)
{
    if (!d)
        return;
    dls_resolver_del(d->r);
    free(d);
}

static bool one_value(dls_bytes b)
{
    size_t end;
    return b.p && b.n && dls_mp_skip_any(b.p, b.n, 0, &end) == 0 && end == b.n;
}

void dls_dump_attrib_rows(dls_dump_attrib *d, const uint8_t *rec, size_t n,
                          dls_dump_rows *rows)
{
    dls_attribution a;
    memset(rows, 0, sizeof *rows);
    /* With no resolver, attribution answers bare-fact for facts and
     * unknown-author for well-formed envelopes and batches: the dump's
     * words. */
    dls_resolver_attribute_facts(d ? d->r : NULL, rec, n, &a, &rows->it);
    dls_dump_row *row = &rows->first;
    row->kind = dls_record_kind_name(a.kind);
    row->verified = a.attributed;
    row->why = dls_why_name(a.why);
    switch (a.kind) {
    case DLS_REC_SEAL:
    case DLS_REC_MALFORMED:
        break;
    case DLS_REC_FACT:
        row->has_fact = true;
        row->fact = a.fact;
        break;
    case DLS_REC_BATCH:
        rows->batch = true;
        /* a batch that fails still shows its facts as carried */
        if (!a.attributed)
            dls_record_facts(rec, n, NULL, &rows->it);
        /* fall through */
    case DLS_REC_ENVELOPE:
        row->has_author = a.author.p != NULL && a.author.n > 0;
        row->author = a.author;
        row->has_fact = one_value(a.fact);
        row->fact = row->has_fact ? a.fact : (dls_bytes){0};
        break;
    }
    if (!row->has_author)
        row->author = (dls_bytes){0};
}

bool dls_dump_rows_next(dls_dump_rows *rows, dls_dump_row *row)
{
    if (rows->done)
        return false;
    if (!rows->batch) {
        *row = rows->first;
        rows->done = true;
        return true;
    }
    dls_bytes f;
    uint32_t ix;
    if (!dls_facts_next(&rows->it, &f, &ix)) {
        rows->done = true;
        return false;
    }
    *row = rows->first;
    row->has_index = true;
    row->index = ix;
    row->has_fact = one_value(f);
    row->fact = row->has_fact ? f : (dls_bytes){0};
    return true;
}

void dls_dump_attrib_record(dls_dump_attrib *d, const uint8_t *rec, size_t n,
                            dls_dump_row *row)
{
    dls_dump_rows rows;
    dls_dump_attrib_rows(d, rec, n, &rows);
    if (!dls_dump_rows_next(&rows, row))
        *row = rows.first;
}

int dls_dump_fields(const uint8_t *rec, size_t n, dls_keyring *kr,
                    const uint8_t medium_id[DLS_MEDIUM_ID_LEN], dls_dump_row *row)
{
    if (!row)
        return DLS_ERR_INVAL;
    dls_dump_attrib *d;
    int rc = dls_dump_attrib_new(&d, medium_id, kr);
    if (rc)
        return rc;
    dls_dump_attrib_record(d, rec, n, row);
    dls_dump_attrib_del(d);
    return 0;
}
