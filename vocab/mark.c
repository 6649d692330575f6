/* Pass marks (judge.md, "Journal"): the greedy record writer, the bounded
 * decoder with its list iterators, and the journal record classifier. */
#include <string.h>

#include "daolease/mark.h"
#include "vocab/internal.h"

enum {
    M_PASS, M_CONTINUED, M_NOW, M_BASIS, M_TOLERANCE, M_CADENCE,
    M_DRAINED, M_GAPS, M_DUE, M_ERRORS, M_LATE, M_RESTARTED, M_KEPT, M_FLOOR, M_FROM, M_TAKEOVER, M_N
};
/* The four lists, in fill order; list L has key M_DRAINED + L. */
enum { L_DRAINED, L_GAPS, L_DUE, L_ERRORS, L_N };

static const char *const names[M_N] = {
    "dao.judge/pass", "dao.judge/continued", "dao.judge/now", "dao.judge/basis",
    "dao.judge/tolerance", "dao.judge/cadence", "dao.judge/drained", "dao.judge/gaps",
    "dao.judge/due", "dao.judge/errors", "dao.judge/late", "dao.judge/restarted",
    "dao.judge/kept", "dao.judge/floor", "dao.judge/from", "dao.judge/takeover",
};

static size_t key_size(int k)
{
    return dls_mp_str_size(strlen(names[k]));
}

/* ---- writing ------------------------------------------------------------- */

static size_t count(const dls_mark *m, int l)
{
    const size_t c[L_N] = {m->n_drained, m->n_gaps, m->n_due, m->n_errors};
    return c[l];
}

static size_t entry_size(const dls_mark *m, int l, size_t i)
{
    const size_t id = dls_mp_bin_size(DLS_MEDIUM_ID_LEN);
    switch (l) {
    case L_DRAINED: return 1 + id + dls_mp_uint_size(m->drained[i].position);
    case L_ERRORS: return 1 + id + dls_mp_uint_size(m->errors[i].position);
    case L_GAPS:
        return 1 + id + dls_mp_uint_size(m->gaps[i].from) + dls_mp_uint_size(m->gaps[i].to);
    default:
        return 1 + dls_mp_uint_size(m->due[i].lease) +
               dls_mp_str_size(strlen(dls_cause_name(m->due[i].cause)));
    }
}

static void put_entry(dls_pk *b, const dls_mark *m, int l, size_t i)
{
    switch (l) {
    case L_DRAINED:
    case L_ERRORS: {
        const dls_mark_pos *e = l == L_DRAINED ? &m->drained[i] : &m->errors[i];
        msgpack_pack_array(&b->pk, 2);
        dls_pk_bin(b, e->medium, DLS_MEDIUM_ID_LEN);
        dls_pk_uint(b, e->position);
        break;
    }
    case L_GAPS:
        msgpack_pack_array(&b->pk, 3);
        dls_pk_bin(b, m->gaps[i].medium, DLS_MEDIUM_ID_LEN);
        dls_pk_uint(b, m->gaps[i].from);
        dls_pk_uint(b, m->gaps[i].to);
        break;
    default:
        msgpack_pack_array(&b->pk, 2);
        dls_pk_uint(b, m->due[i].lease);
        dls_pk_cstr(b, dls_cause_name(m->due[i].cause));
    }
}

static bool mark_ok(const dls_mark *m)
{
    if (m->pass == 0 || m->now_ns > DLS_NS_MAX || m->tolerance_ns > DLS_NS_MAX ||
        m->cadence_ns > DLS_NS_MAX || (!m->basis.p && m->basis.n))
        return false;
    if ((!m->drained && m->n_drained) || (!m->gaps && m->n_gaps) || (!m->due && m->n_due) ||
        (!m->errors && m->n_errors))
        return false;
    for (size_t i = 0; i < m->n_due; i++)
        if (!dls_cause_name(m->due[i].cause) || m->due[i].lease == 0 ||
            m->due[i].lease > DLS_NS_MAX)
            return false;
    if ((!m->from && m->n_from) || (m->n_from && !m->has_floor) || m->floor > DLS_NS_MAX)
        return false;
    if (m->takeover && !m->restarted) /* revision 5: only with restarted */
        return false;
    return true;
}

/* The first record's keys after restarted: kept, floor, from (revision 4,
 * judge.md, Restart) and takeover (revision 5, Standby judges): their
 * encoded size. */
static size_t rev4_size(const dls_mark *m)
{
    size_t n = m->kept ? key_size(M_KEPT) + 1 : 0;
    if (m->has_floor) {
        n += key_size(M_FLOOR) + dls_mp_uint_size(m->floor) + key_size(M_FROM) +
             dls_mp_array_hdr_size(m->n_from);
        for (size_t i = 0; i < m->n_from; i++)
            n += 1 + dls_mp_bin_size(DLS_MEDIUM_ID_LEN) + dls_mp_uint_size(m->from[i].position);
    }
    if (m->takeover) /* revision 5: after kept, floor and from */
        n += key_size(M_TAKEOVER) + 1;
    return n;
}

static void put_bool(dls_pk *b, int k)
{
    dls_pk_cstr(b, names[k]);
    msgpack_pack_true(&b->pk);
}

int dls_mark_encode_next(const dls_mark *m, dls_mark_writer *wr, uint8_t *out, size_t limit,
                         size_t *len)
{
    if (!m || !wr || !out || !len)
        return DLS_ERR_INVAL;
    bool first = wr->records == 0;
    if (first && !mark_ok(m))
        return DLS_ERR_INVAL;
    size_t left = 0;
    for (int l = 0; l < L_N; l++)
        left += count(m, l) - wr->next[l];
    if (!first && left == 0)
        return 0;

    /* Plan: the fixed keys, then entries in fill order while they fit. */
    dls_duration now = dls_duration_from_ns(m->now_ns);
    dls_duration tol = dls_duration_from_ns(m->tolerance_ns);
    dls_duration cad = dls_duration_from_ns(m->cadence_ns);
    size_t size = 1 + key_size(M_PASS) + dls_mp_uint_size(m->pass);
    if (first)
        size += key_size(M_NOW) + dls_mp_duration_size(&now) + key_size(M_BASIS) +
                dls_mp_str_size(m->basis.n) + key_size(M_TOLERANCE) +
                dls_mp_duration_size(&tol) + key_size(M_CADENCE) + dls_mp_duration_size(&cad) +
                key_size(M_DRAINED) + dls_mp_array_hdr_size(0) +
                (m->late ? key_size(M_LATE) + 1 : 0) +
                (m->restarted ? key_size(M_RESTARTED) + 1 : 0) + rev4_size(m);
    else
        size += key_size(M_CONTINUED) + 1;
    if (size > limit)
        return DLS_ERR_TOOBIG;
    size_t take[L_N] = {0}, taken = 0;
    for (int l = 0; l < L_N; l++) {
        bool full = false;
        for (size_t i = wr->next[l]; i < count(m, l); i++) {
            size_t add = entry_size(m, l, i);
            if (take[l] == 0 && !(first && l == L_DRAINED))
                add += key_size(M_DRAINED + l) + dls_mp_array_hdr_size(1);
            else
                add += dls_mp_array_hdr_size(take[l] + 1) - dls_mp_array_hdr_size(take[l]);
            if (add > limit - size) {
                full = true;
                break;
            }
            size += add;
            take[l]++;
            taken++;
        }
        if (full)
            break;
    }
    if (!first && taken == 0)
        return DLS_ERR_TOOBIG;

    /* Pack exactly what was planned. */
    size_t keys = 1 + (first ? 5 + m->late + m->restarted + m->kept + 2 * m->has_floor +
                                       m->takeover
                              : 1);
    for (int l = 0; l < L_N; l++)
        keys += take[l] && !(first && l == L_DRAINED);
    dls_pk b;
    dls_pk_init(&b, out, limit);
    msgpack_pack_map(&b.pk, keys);
    dls_pk_cstr(&b, names[M_PASS]);
    dls_pk_uint(&b, m->pass);
    if (first) {
        dls_pk_cstr(&b, names[M_NOW]);
        dls_pk_duration(&b, &now);
        dls_pk_cstr(&b, names[M_BASIS]);
        dls_pk_str(&b, m->basis.p, m->basis.n);
        dls_pk_cstr(&b, names[M_TOLERANCE]);
        dls_pk_duration(&b, &tol);
        dls_pk_cstr(&b, names[M_CADENCE]);
        dls_pk_duration(&b, &cad);
    } else {
        put_bool(&b, M_CONTINUED);
    }
    for (int l = 0; l < L_N; l++) {
        if (!take[l] && !(first && l == L_DRAINED))
            continue;
        dls_pk_cstr(&b, names[M_DRAINED + l]);
        msgpack_pack_array(&b.pk, take[l]);
        for (size_t i = wr->next[l]; i < wr->next[l] + take[l]; i++)
            put_entry(&b, m, l, i);
    }
    if (first && m->late)
        put_bool(&b, M_LATE);
    if (first && m->restarted)
        put_bool(&b, M_RESTARTED);
    if (first && m->kept)
        put_bool(&b, M_KEPT);
    if (first && m->has_floor) {
        dls_pk_cstr(&b, names[M_FLOOR]);
        dls_pk_uint(&b, m->floor);
        dls_pk_cstr(&b, names[M_FROM]);
        msgpack_pack_array(&b.pk, m->n_from);
        for (size_t i = 0; i < m->n_from; i++) {
            msgpack_pack_array(&b.pk, 2);
            dls_pk_bin(&b, m->from[i].medium, DLS_MEDIUM_ID_LEN);
            dls_pk_uint(&b, m->from[i].position);
        }
    }
    if (first && m->takeover)
        put_bool(&b, M_TAKEOVER);
    if (b.overflow || b.len != size)
        return DLS_ERR_STATE; /* the plan and the packer disagree: a bug */
    for (int l = 0; l < L_N; l++)
        wr->next[l] += take[l];
    wr->records++;
    *len = b.len;
    return 1;
}

size_t dls_mark_limit(size_t author_len)
{
    if (author_len < 1 || author_len > DLS_ID_MAX)
        return 0;
    /* {"dao.env/author": str, "dao.env/fact": bin16 (the mark),
     *  "dao.env/sig": bin8 of 64} */
    size_t envelope = 1 + dls_mp_str_size(14) + dls_mp_str_size(author_len) +
                      dls_mp_str_size(12) + 3 + dls_mp_str_size(11) + dls_mp_bin_size(64);
    return DLS_JOURNAL_RECORD_MAX - envelope;
}

/* ---- reading ------------------------------------------------------------- */

static int bad(dls_where *w, size_t off, const char *why)
{
    return dls_where_fill(w, DLS_ERR_MARK, (dls_where){.offset = off, .reason = why});
}

static int mark_key(const dls_mp_item *k)
{
    for (int i = 0; i < M_N; i++)
        if (dls_mp_str_is(k, names[i]))
            return i;
    return -1;
}

/* A uint at *off (advanced past it). */
static bool read_uint(const uint8_t *p, size_t n, size_t *off, uint64_t *v)
{
    dls_mp_item it;
    if (dls_mp_read(p, n, *off, &it) || it.type != DLS_MP_UINT)
        return false;
    *v = it.v.u;
    *off = it.end;
    return true;
}

static bool read_medium(const uint8_t *p, size_t n, size_t *off, uint8_t *medium)
{
    dls_mp_item it;
    if (dls_mp_read(p, n, *off, &it) || it.type != DLS_MP_BIN || it.len != DLS_MEDIUM_ID_LEN)
        return false;
    memcpy(medium, it.data, DLS_MEDIUM_ID_LEN);
    *off = it.end;
    return true;
}

/* Reads one entry of list l at *off into whichever struct fits; false when
 * it is not of the list's shape. */
static bool read_entry(const uint8_t *p, size_t n, size_t *off, int l, dls_mark_pos *pos,
                       dls_mark_gap *gap, dls_mark_due *due)
{
    dls_mp_item it;
    unsigned arity = l == L_GAPS ? 3 : 2;
    if (dls_mp_read(p, n, *off, &it) || it.type != DLS_MP_ARRAY || it.len != arity)
        return false;
    *off = it.end;
    switch (l) {
    case L_GAPS:
        return read_medium(p, n, off, gap->medium) && read_uint(p, n, off, &gap->from) &&
               read_uint(p, n, off, &gap->to);
    case L_DUE:
        if (!read_uint(p, n, off, &due->lease) || due->lease == 0 || due->lease > DLS_NS_MAX)
            return false;
        if (dls_mp_read(p, n, *off, &it) || it.type != DLS_MP_STR)
            return false;
        due->cause = dls_cause_from(it.data, it.len);
        *off = it.end;
        return due->cause != DLS_CAUSE_NONE;
    default:
        return read_medium(p, n, off, pos->medium) && read_uint(p, n, off, &pos->position);
    }
}

/* Checks every entry of the list at off (key k) and sets up its cursor. */
static int read_list(const uint8_t *p, size_t n, size_t off, int k, dls_mark_list *out,
                     dls_where *w)
{
    dls_mp_item it;
    if (dls_mp_read(p, n, off, &it) || it.type != DLS_MP_ARRAY)
        return bad(w, off, "a mark list is not an array");
    *out = (dls_mark_list){p, n, it.end, it.len};
    size_t at = it.end;
    dls_mark_pos pos;
    dls_mark_gap gap;
    dls_mark_due due;
    for (uint32_t i = 0; i < it.len; i++) {
        size_t start = at;
        if (!read_entry(p, n, &at, k - M_DRAINED, &pos, &gap, &due))
            return bad(w, start, "a mark list entry is not of its list's shape");
    }
    return 0;
}

static int read_duration(const uint8_t *p, size_t n, size_t off, dls_duration *d, dls_where *w)
{
    size_t at;
    const char *why;
    if (dls_duration_read(p, n, off, 0, d, &at, &why))
        return bad(w, at, why);
    return 0;
}

int dls_mark_decode(const uint8_t *p, size_t n, dls_mark_view *v, dls_where *w)
{
    if (!v)
        return DLS_ERR_INVAL;
    memset(v, 0, sizeof *v);
    if (!p)
        n = 0;
    if (n > DLS_JOURNAL_RECORD_MAX)
        return bad(w, DLS_JOURNAL_RECORD_MAX, "a mark exceeds 65536 bytes");
    size_t end = 0;
    int rc = dls_mp_skip(p, n, 0, DLS_FACT_MAX_DEPTH, &end, NULL);
    if (rc)
        return bad(w, end, rc == DLS_ERR_DEPTH ? "nests deeper than 8 levels" : "malformed msgpack");
    if (end != n)
        return bad(w, end, "trailing bytes after the mark");
    dls_mp_item it;
    dls_mp_read(p, n, 0, &it);
    if (it.type != DLS_MP_MAP)
        return bad(w, 0, "not a map");
    unsigned seen = 0;
    size_t off = it.end;
    for (uint32_t i = 0; i < it.len; i++) {
        dls_mp_item k, val;
        dls_mp_read(p, n, off, &k);
        if (k.type != DLS_MP_STR)
            return bad(w, off, "a key is not a str");
        int id = mark_key(&k);
        size_t voff = k.end;
        dls_mp_skip(p, n, voff, DLS_FACT_MAX_DEPTH, &off, NULL);
        if (id < 0)
            continue; /* not ours: ignored */
        if (seen & (1u << id))
            return bad(w, k.off, "a mark key is repeated");
        seen |= 1u << id;
        dls_mp_read(p, n, voff, &val);
        switch (id) {
        case M_PASS:
            if (val.type != DLS_MP_UINT || val.v.u == 0)
                return bad(w, voff, "pass is not a uint >= 1");
            v->pass = val.v.u;
            break;
        case M_CONTINUED:
        case M_LATE:
        case M_RESTARTED:
        case M_KEPT:
        case M_TAKEOVER:
            if (val.type != DLS_MP_BOOL || (id == M_CONTINUED && !val.v.b))
                return bad(w, voff, id == M_CONTINUED ? "continued is not true"
                                                      : "late, restarted, kept or takeover is not a bool");
            *(id == M_CONTINUED ? &v->continued
              : id == M_LATE    ? &v->late
              : id == M_KEPT    ? &v->kept
              : id == M_TAKEOVER ? &v->takeover
                                : &v->restarted) = val.v.b;
            break;
        case M_FLOOR:
            if (val.type != DLS_MP_UINT || val.v.u > DLS_NS_MAX)
                return bad(w, voff, "floor is not a uint <= 2^63-1");
            v->has_floor = true;
            v->floor = val.v.u;
            break;
        case M_FROM:
            rc = read_list(p, n, voff, M_DRAINED, &v->from, w); /* drained's shape */
            break;
        case M_NOW:
            rc = read_duration(p, n, voff, &v->now, w);
            break;
        case M_TOLERANCE:
            rc = read_duration(p, n, voff, &v->tolerance, w);
            break;
        case M_CADENCE:
            rc = read_duration(p, n, voff, &v->cadence, w);
            break;
        case M_BASIS:
            if (val.type != DLS_MP_STR)
                return bad(w, voff, "basis is not a str");
            v->basis = (dls_bytes){val.data, val.len};
            break;
        default: {
            dls_mark_list *lists[L_N] = {&v->drained, &v->gaps, &v->due, &v->errors};
            rc = read_list(p, n, voff, id, lists[id - M_DRAINED], w);
        }
        }
        if (rc)
            return rc;
    }
    const unsigned head = 1u << M_NOW | 1u << M_BASIS | 1u << M_TOLERANCE | 1u << M_CADENCE;
    if (!(seen & 1u << M_PASS))
        return bad(w, 0, "a mark without pass");
    if (v->continued && (seen & (head | 1u << M_LATE | 1u << M_RESTARTED | 1u << M_KEPT |
                                 1u << M_FLOOR | 1u << M_FROM | 1u << M_TAKEOVER)))
        return bad(w, 0, "a continuation carries a first record's key");
    if (!v->continued && (seen & (head | 1u << M_DRAINED)) != (head | 1u << M_DRAINED))
        return bad(w, 0, "a mark without now, basis, tolerance, cadence or drained");
    if (!v->continued && (((seen >> M_FLOOR) & 1) != ((seen >> M_FROM) & 1)))
        return bad(w, 0, "a mark with only one of floor and from");
    if (!v->continued && (seen & (1u << M_KEPT | 1u << M_FLOOR | 1u << M_TAKEOVER)) &&
        !v->restarted)
        return bad(w, 0, "kept, floor or takeover on a mark without restarted");
    if (w)
        memset(w, 0, sizeof *w);
    return 0;
}

static bool next(dls_mark_list *l, int shape, dls_mark_pos *pos, dls_mark_gap *gap,
                 dls_mark_due *due)
{
    if (!l || !l->left)
        return false;
    size_t off = l->off;
    if (!read_entry(l->p, l->n, &off, shape, pos, gap, due))
        return false;
    l->off = off;
    l->left--;
    return true;
}

bool dls_mark_next_pos(dls_mark_list *l, dls_mark_pos *e)
{
    dls_mark_gap gap;
    dls_mark_due due;
    return e && next(l, L_DRAINED, e, &gap, &due);
}

bool dls_mark_next_gap(dls_mark_list *l, dls_mark_gap *e)
{
    dls_mark_pos pos;
    dls_mark_due due;
    return e && next(l, L_GAPS, &pos, e, &due);
}

bool dls_mark_next_due(dls_mark_list *l, dls_mark_due *e)
{
    dls_mark_pos pos;
    dls_mark_gap gap;
    return e && next(l, L_DUE, &pos, &gap, e);
}

/* ---- classifying --------------------------------------------------------- */

dls_mark_record dls_mark_classify(const uint8_t *p, size_t n)
{
    dls_mp_item it;
    if (!p || dls_mp_read(p, n, 0, &it) || it.type != DLS_MP_MAP)
        return DLS_MARK_REC_OTHER;
    bool pass = false, lease = false;
    size_t off = it.end;
    for (uint32_t i = 0; i < it.len; i++) {
        dls_mp_item k;
        if (dls_mp_read(p, n, off, &k) ||
            dls_mp_skip(p, n, k.end, DLS_MP_MAX_DEPTH, &off, NULL))
            return DLS_MARK_REC_OTHER;
        pass |= dls_mp_str_is(&k, names[M_PASS]);
        lease |= dls_mp_str_is(&k, "dao.lease/status") || dls_mp_str_is(&k, "dao.lease/event");
    }
    if (pass == lease)
        return DLS_MARK_REC_OTHER;
    return pass ? DLS_MARK_REC_MARK : DLS_MARK_REC_LEASE;
}
