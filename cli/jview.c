#include "cli/jview.h"

#include <string.h>

#include "cli/cli.h"
#include "cli/media.h"

int jv_open(jv_reader *jr, const char *sub, const char *path, dls_keyring *kr,
            const char *grantor, uint64_t from)
{
    memset(jr, 0, sizeof *jr);
    jr->grantor = grantor;
    jr->verify = kr != NULL;
    int rc = dls_cli_open(&jr->m, sub, path, DLS_OPEN_READ, false, DLS_SYNC_DATA);
    if (rc)
        return rc;
    const uint8_t *id = dls_medium_id(jr->m);
    rc = kr ? dls_resolver_new_signed(&jr->r, id, kr)
            : dls_resolver_new_medium(&jr->r, id, "unverified", NULL);
    if (!rc)
        rc = dls_cursor_new(&jr->c, jr->m, from);
    if (rc)
        dls_cli_error(sub, "%s: %s", path, dls_strerror(rc));
    return rc;
}

void jv_close(jv_reader *jr)
{
    dls_cursor_del(jr->c);
    dls_resolver_del(jr->r);
    dls_medium_del(jr->m);
    memset(jr, 0, sizeof *jr);
}

bool jv_author(bool verify, const dls_attribution *a)
{
    if (verify)
        return a->attributed;
    return a->kind == DLS_REC_ENVELOPE || a->kind == DLS_REC_FACT ? a->attributed || a->author.n
                                                                    : false;
}

int jv_next(jv_reader *jr, jv_record *out)
{
    dls_record rec;
    uint64_t at = dls_cursor_position(jr->c);
    dls_where w = {0};
    switch (dls_cursor_next(jr->c, &rec, &w)) {
    case DLS_NEXT_OK:
        break;
    case DLS_NEXT_BLOCKED:
    case DLS_NEXT_GAP:
        return 0;
    case DLS_NEXT_END:
        return -1;
    default:
        jr->err_position = at;
        jr->err = w;
        return -2;
    }
    jr->records++;
    memset(out, 0, sizeof *out);
    out->position = rec.position;
    dls_attribution a;
    dls_resolver_attribute(jr->r, rec.p, rec.n, &a);
    if (a.kind != DLS_REC_ENVELOPE || !jv_author(jr->verify, &a))
        return 1;
    if (jr->grantor && (a.author.n != strlen(jr->grantor) ||
                        memcmp(a.author.p, jr->grantor, a.author.n)))
        return 1;
    jr->counted++;
    switch (dls_mark_classify(a.fact.p, a.fact.n)) {
    case DLS_MARK_REC_MARK:
        if (dls_mark_decode(a.fact.p, a.fact.n, &out->mark, NULL) == 0)
            out->kind = JV_MARK;
        break;
    case DLS_MARK_REC_LEASE:
        if (dls_fact_decode(a.fact.p, a.fact.n, &out->fact, NULL) == 0)
            out->kind = JV_FACT;
        break;
    default:
        break;
    }
    return 1;
}

int jv_media_resolver(dls_resolver **out, dls_medium *m, dls_keyring *kr, const char *party)
{
    const uint8_t *id = dls_medium_id(m);
    if (party)
        return dls_resolver_new_medium(out, id, party, kr);
    if (kr)
        return dls_resolver_new_signed(out, id, kr);
    return dls_resolver_new_medium(out, id, "unverified", NULL);
}
