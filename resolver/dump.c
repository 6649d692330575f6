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

void dls_dump_attrib_record(dls_dump_attrib *d, const uint8_t *rec, size_t n,
                            dls_dump_row *row)
{
    dls_attribution a;
    /* With no resolver, dls_resolver_attribute answers bare-fact for facts
     * and unknown-author for well-formed envelopes: the dump's words. */
    dls_resolver_attribute(d ? d->r : NULL, rec, n, &a);
    memset(row, 0, sizeof *row);
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
