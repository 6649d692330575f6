/* Pass marks as the audit reads them (see amark.h). This unit alone
 * includes the codec's mark header. */
#include "audit/amark.h"

#include <stdlib.h>
#include <string.h>

#include "daolease/mark.h"

int dls_amark_kind(const uint8_t *p, size_t n)
{
    switch (dls_mark_classify(p, n)) {
    case DLS_MARK_REC_MARK:
        return DLS_AMARK_MARK;
    case DLS_MARK_REC_LEASE:
        return DLS_AMARK_LEASE;
    default:
        return DLS_AMARK_OTHER;
    }
}

void dls_amark_free(dls_amark *m)
{
    if (!m)
        return;
    free(m->basis);
    free(m->drained);
    free(m->gaps);
    free(m->due);
    free(m->errors);
    memset(m, 0, sizeof *m);
}

/* Makes room for one more element of size `elem` in *arr. */
static int reserve(void **arr, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 8;
    void *na = realloc(*arr, ncap * elem);
    if (!na)
        return DLS_ERR_NOMEM;
    *arr = na;
    *cap = ncap;
    return 0;
}

#define PUSH(m, field, item)                                                            \
    do {                                                                                \
        int rc_ = reserve((void **)&(m)->field, (m)->n_##field, &(m)->cap_##field,      \
                          sizeof *(m)->field);                                          \
        if (rc_)                                                                        \
            return rc_;                                                                 \
        (m)->field[(m)->n_##field++] = (item);                                          \
    } while (0)

static int copy_pos_list(dls_amark *m, dls_mark_list l, int errors)
{
    dls_mark_pos e;
    while (dls_mark_next_pos(&l, &e)) {
        dls_amark_pos a;
        memcpy(a.medium, e.medium, DLS_MEDIUM_ID_LEN);
        a.position = e.position;
        if (errors)
            PUSH(m, errors, a);
        else
            PUSH(m, drained, a);
    }
    return 0;
}

int dls_amark_parse(dls_amark *m, const uint8_t *p, size_t n, dls_where *w)
{
    dls_mark_view v;
    int rc = dls_mark_decode(p, n, &v, w);
    if (rc)
        return rc;
    memset(m, 0, sizeof *m);
    m->pass = v.pass;
    m->continued = v.continued;
    if (!v.continued) {
        m->now_ns = v.now.ns;
        m->tolerance_ns = v.tolerance.ns;
        m->cadence_ns = v.cadence.ns;
        m->late = v.late;
        m->restarted = v.restarted;
    }
    m->basis = malloc(v.basis.n + 1);
    if (!m->basis)
        return DLS_ERR_NOMEM;
    if (v.basis.n)
        memcpy(m->basis, v.basis.p, v.basis.n);
    m->basis[v.basis.n] = 0;
    m->basis_len = v.basis.n;
    if ((rc = copy_pos_list(m, v.drained, 0)) || (rc = copy_pos_list(m, v.errors, 1)))
        goto fail;
    dls_mark_gap g;
    while (dls_mark_next_gap(&v.gaps, &g)) {
        dls_amark_gap a;
        memcpy(a.medium, g.medium, DLS_MEDIUM_ID_LEN);
        a.from = g.from;
        a.to = g.to;
        rc = reserve((void **)&m->gaps, m->n_gaps, &m->cap_gaps, sizeof *m->gaps);
        if (rc)
            goto fail;
        m->gaps[m->n_gaps++] = a;
    }
    dls_mark_due d;
    while (dls_mark_next_due(&v.due, &d)) {
        dls_amark_due a = {d.lease, d.cause};
        rc = reserve((void **)&m->due, m->n_due, &m->cap_due, sizeof *m->due);
        if (rc)
            goto fail;
        m->due[m->n_due++] = a;
    }
    return 0;
fail:
    dls_amark_free(m);
    return rc;
}

int dls_amark_merge(dls_amark *m, const dls_amark *c)
{
    for (size_t i = 0; i < c->n_drained; i++)
        PUSH(m, drained, c->drained[i]);
    for (size_t i = 0; i < c->n_gaps; i++)
        PUSH(m, gaps, c->gaps[i]);
    for (size_t i = 0; i < c->n_due; i++)
        PUSH(m, due, c->due[i]);
    for (size_t i = 0; i < c->n_errors; i++)
        PUSH(m, errors, c->errors[i]);
    return 0;
}
