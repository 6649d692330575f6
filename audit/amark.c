/* Pass marks as the audit reads them (see amark.h). This unit alone
 * includes the codec's mark header. */
#include "audit/amark.h"

#include <stdlib.h>
#include <string.h>

#include "daolease/mark.h"
#include "vocab/mp.h"
#include "vocab/vec.h"

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
    free(m->from);
    memset(m, 0, sizeof *m);
}

/* Makes room for one more element of size `elem` in *arr. */
static int reserve(void **arr, size_t n, size_t *cap, size_t elem)
{
    dls_vec v = {*arr, n, *cap};
    int rc = n < SIZE_MAX ? dls_vec_reserve(&v, elem, n + 1) : DLS_ERR_NOMEM;
    *arr = v.p;
    *cap = v.cap;
    return rc;
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

static int bad_key(dls_where *w, size_t off, const char *why)
{
    if (w) {
        memset(w, 0, sizeof *w);
        w->offset = off;
        w->reason = why;
    }
    return DLS_ERR_MARK;
}

static bool key_is(const dls_mp_item *k, const char *s)
{
    size_t n = strlen(s);
    return k->len == n && memcmp(k->data, s, n) == 0;
}

/* The revision-4 restart keys (judge.md, Restart): kept, floor, from. The
 * map was checked whole by dls_mark_decode. */
static int read_rev4(dls_amark *m, const uint8_t *p, size_t n, dls_where *w)
{
    dls_mp_item it;
    dls_mp_read(p, n, 0, &it);
    size_t off = it.end;
    for (uint32_t i = 0; i < it.len; i++) {
        dls_mp_item k, v;
        dls_mp_read(p, n, off, &k);
        size_t voff = k.end;
        dls_mp_skip(p, n, voff, DLS_MP_MAX_DEPTH, &off, NULL);
        dls_mp_read(p, n, voff, &v);
        bool kept = key_is(&k, "dao.judge/kept"), floor = key_is(&k, "dao.judge/floor"),
             from = key_is(&k, "dao.judge/from");
        if (!kept && !floor && !from)
            continue;
        if (m->continued)
            return bad_key(w, k.off, "a continuation carries kept, floor or from");
        if (kept) {
            if (v.type != DLS_MP_BOOL)
                return bad_key(w, voff, "kept is not a bool");
            m->kept = v.v.b;
        } else if (floor) {
            if (v.type != DLS_MP_UINT)
                return bad_key(w, voff, "floor is not a uint");
            m->has_floor = true;
            m->floor = v.v.u;
        } else {
            if (v.type != DLS_MP_ARRAY)
                return bad_key(w, voff, "from is not an array");
            size_t e = v.end;
            for (uint32_t j = 0; j < v.len; j++) {
                dls_mp_item pair, id, pos;
                dls_mp_read(p, n, e, &pair);
                if (pair.type != DLS_MP_ARRAY || pair.len != 2)
                    return bad_key(w, e, "a from entry is not [medium, position]");
                dls_mp_read(p, n, pair.end, &id);
                if (id.type != DLS_MP_BIN || id.len != DLS_MEDIUM_ID_LEN)
                    return bad_key(w, pair.end, "a from medium is not bin 16");
                dls_mp_read(p, n, id.end, &pos);
                if (pos.type != DLS_MP_UINT)
                    return bad_key(w, id.end, "a from position is not a uint");
                dls_amark_pos a;
                memcpy(a.medium, id.data, DLS_MEDIUM_ID_LEN);
                a.position = pos.v.u;
                PUSH(m, from, a);
                e = pos.end;
            }
        }
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
        m->takeover = v.takeover; /* judge.md rev 5: checked by the codec */
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
    if ((rc = read_rev4(m, p, n, w)))
        goto fail;
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
