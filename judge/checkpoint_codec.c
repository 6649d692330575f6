/* Checkpoint records (judge.md rev 4, Checkpoints): decoding one record
 * and the commit record. Untrusted bytes: every value goes through the
 * bounds-checking walker (vocab/mp.h); keys must come in judge.md's order,
 * each exactly once, in a map holding nothing else. Writing is in
 * checkpoint.c. */
#include <string.h>

#include "daolease/checkpoint.h"
#include "vocab/internal.h"
#include "vocab/mp.h"
#include "vocab/where.h"

/* Value kinds of the keys: u uint, U uint|nil, n ns uint, N ns|nil,
 * d duration, D duration|nil, s str, b bin, i bin 16, I bin 16|nil,
 * m mode str, B bool, c cause str|nil, p proposal id (any scalar)|nil,
 * a media array, r arrival [4 uints]. */
enum ck_field {
    F_PASS, F_NOW, F_BASIS, F_JOURNAL, F_JNEXT, F_HIGHEST, F_MEDIA, F_LEASE, F_SUBJECT,
    F_HOLDER, F_MODE, F_MEDIUM, F_DURATION, F_MAX, F_START, F_LAST, F_RESUMED, F_SEQ,
    F_RELEASED, F_COMMIT, F_PENDING, F_PROPOSAL, F_BOUND, F_ARRIVAL, F_UNTIL
};

typedef struct ck_key {
    const char *name;
    uint8_t len;
    char kind;
    uint8_t field;
} ck_key;

#define K(name, kind, field) {name, sizeof(name) - 1, kind, field}

static const ck_key K_HEADER[] = {
    K("dao.ckpt/pass", 'u', F_PASS),    K("dao.ckpt/now", 'd', F_NOW),          K("dao.ckpt/basis", 's', F_BASIS),
    K("dao.ckpt/journal", 'i', F_JOURNAL), K("dao.ckpt/journal_next", 'u', F_JNEXT), K("dao.ckpt/highest", 'u', F_HIGHEST),
    K("dao.ckpt/media", 'a', F_MEDIA),   {NULL, 0, 0, 0}};
static const ck_key K_LEASE[] = {
    K("dao.ckpt/lease", 'u', F_LEASE),    K("dao.ckpt/subject", 'b', F_SUBJECT),  K("dao.ckpt/holder", 's', F_HOLDER),
    K("dao.ckpt/mode", 'm', F_MODE),     K("dao.ckpt/medium", 'I', F_MEDIUM),   K("dao.ckpt/duration", 'd', F_DURATION),
    K("dao.ckpt/max", 'D', F_MAX),      K("dao.ckpt/start", 'n', F_START),    K("dao.ckpt/last", 'n', F_LAST),
    K("dao.ckpt/resumed", 'N', F_RESUMED),  K("dao.ckpt/seq", 'u', F_SEQ),      K("dao.ckpt/released", 'B', F_RELEASED),
    K("dao.ckpt/commit", 'B', F_COMMIT),   K("dao.ckpt/pending", 'c', F_PENDING),  K("dao.ckpt/proposal", 'p', F_PROPOSAL),
    {NULL, 0, 0, 0}};
static const ck_key K_WAITER[] = {
    K("dao.ckpt/waiter", 'p', F_PROPOSAL),   K("dao.ckpt/subject", 'b', F_SUBJECT),  K("dao.ckpt/holder", 's', F_HOLDER),
    K("dao.ckpt/medium", 'i', F_MEDIUM),   K("dao.ckpt/mode", 'm', F_MODE),     K("dao.ckpt/duration", 'D', F_DURATION),
    K("dao.ckpt/bound", 'n', F_BOUND),    K("dao.ckpt/arrival", 'r', F_ARRIVAL),  {NULL, 0, 0, 0}};
static const ck_key K_DELAY[] = {K("dao.ckpt/delay", 'b', F_SUBJECT), K("dao.ckpt/until", 'n', F_UNTIL), {NULL, 0, 0, 0}};
static const ck_key K_AUTHOR[] = {
    K("dao.ckpt/author", 's', F_HOLDER), K("dao.ckpt/medium", 'i', F_MEDIUM), K("dao.ckpt/seq", 'u', F_SEQ), {NULL, 0, 0, 0}};

static int bad(dls_where *w, size_t off, const char *reason)
{
    return dls_where_fill(w, DLS_ERR_RECORD, (dls_where){.offset = off, .reason = reason});
}

static size_t nkeys(const ck_key *k)
{
    size_t n = 0;
    while (k[n].name)
        n++;
    return n;
}

/* Reads one value of kind `kind` at off into the field the key names. */
static int read_value(const uint8_t *p, size_t n, size_t off, const ck_key *key,
                      dls_ckpt_rec *r, size_t *end, dls_where *w)
{
    dls_mp_item it;
    if (dls_mp_read(p, n, off, &it))
        return bad(w, off, "a malformed value in a checkpoint record");
    int field = key->field;
    char kind = key->kind;
    bool may_be_nil = kind == 'U' || kind == 'N' || kind == 'D' || kind == 'I' || kind == 'c' ||
                      kind == 'p';
    if (it.type == DLS_MP_NIL && may_be_nil) {
        *end = it.end;
        return 0;
    }
    switch (kind) {
    case 'u':
    case 'U':
    case 'n':
    case 'N': {
        if (it.type != DLS_MP_UINT)
            return bad(w, off, "a checkpoint value that should be an unsigned integer");
        uint64_t v = it.v.u;
        if ((kind == 'n' || kind == 'N') && v > DLS_NS_MAX)
            return bad(w, off, "a reading above 2^63-1 ns in a checkpoint");
        switch (field) {
        case F_PASS: r->pass = v; break;
        case F_JNEXT: r->journal_next = v; break;
        case F_HIGHEST: r->highest = v; break;
        case F_LEASE: r->id = v; break;
        case F_START: r->start = v; break;
        case F_LAST: r->last = v; break;
        case F_RESUMED: r->has_resumed = true; r->resumed = v; break;
        case F_SEQ: r->seq = v; break;
        case F_BOUND: r->bound = v; break;
        default: r->until = v; break;
        }
        *end = it.end;
        return 0;
    }
    case 'd':
    case 'D': {
        dls_duration d;
        size_t e = 0;
        const char *why = NULL;
        if (it.type != DLS_MP_MAP || dls_duration_read(p, n, off, 0, &d, &e, &why))
            return bad(w, off, "a malformed duration in a checkpoint");
        if (field == F_NOW)
            r->now_ns = d.ns;
        else if (field == F_MAX) {
            r->has_max = true;
            r->max = d;
        } else {
            r->has_duration = true;
            r->duration = d;
        }
        *end = e;
        return 0;
    }
    case 's':
    case 'b':
    case 'm':
    case 'c': {
        if (it.type != (kind == 'b' ? DLS_MP_BIN : DLS_MP_STR))
            return bad(w, off, "a checkpoint value of the wrong type (str or bin)");
        dls_bytes v = {it.data, it.len};
        if (kind == 'm') {
            if (dls_mp_str_is(&it, "exclusive"))
                r->mode = DLS_MODE_EXCLUSIVE;
            else if (dls_mp_str_is(&it, "shared"))
                r->mode = DLS_MODE_SHARED;
            else
                return bad(w, off, "an unknown mode in a checkpoint");
        } else if (kind == 'c') {
            r->pending = dls_cause_from(it.data, it.len);
            if (r->pending == DLS_CAUSE_NONE)
                return bad(w, off, "an unknown cause in a checkpoint");
        } else if (field == F_BASIS) {
            r->basis = v;
        } else if (field == F_HOLDER) {
            if (v.n == 0 || v.n > DLS_ID_MAX)
                return bad(w, off, "a party name outside 1-64 bytes in a checkpoint");
            r->holder = v;
        } else {
            if (v.n == 0)
                return bad(w, off, "an empty subject in a checkpoint");
            r->subject = v;
        }
        *end = it.end;
        return 0;
    }
    case 'i':
    case 'I':
        if (it.type != DLS_MP_BIN || it.len != 16)
            return bad(w, off, "a medium id that is not bin 16 in a checkpoint");
        if (field == F_JOURNAL)
            r->journal = it.data;
        else
            r->medium = it.data;
        *end = it.end;
        return 0;
    case 'B':
        if (it.type != DLS_MP_BOOL)
            return bad(w, off, "a checkpoint value that should be a bool");
        if (field == F_RELEASED)
            r->released = it.v.b;
        else
            r->commit = it.v.b;
        *end = it.end;
        return 0;
    case 'p': {
        size_t e;
        if (it.type == DLS_MP_ARRAY || it.type == DLS_MP_MAP ||
            dls_mp_skip(p, n, off, 0, &e, NULL) || e - off > DLS_ID_MAX + 2)
            return bad(w, off, "a malformed proposal id in a checkpoint");
        r->proposal.p = p + off;
        r->proposal.n = e - off;
        *end = e;
        return 0;
    }
    case 'r': {
        if (it.type != DLS_MP_ARRAY || it.len != 4)
            return bad(w, off, "an arrival that is not 4 integers in a checkpoint");
        size_t o = it.end;
        for (int i = 0; i < 4; i++) {
            dls_mp_item e;
            if (dls_mp_read(p, n, o, &e) || e.type != DLS_MP_UINT)
                return bad(w, o, "an arrival that is not 4 integers in a checkpoint");
            r->arrival[i] = e.v.u;
            o = e.end;
        }
        *end = o;
        return 0;
    }
    case 'a': {
        if (it.type != DLS_MP_ARRAY || it.len > 1024)
            return bad(w, off, "a media list that is not an array of at most 1024");
        size_t o = it.end;
        for (uint32_t i = 0; i < it.len; i++) {
            dls_mp_item a, e;
            if (dls_mp_read(p, n, o, &a) || a.type != DLS_MP_ARRAY || a.len != 3)
                return bad(w, o, "a media entry that is not [id, drained, run]");
            o = a.end;
            if (dls_mp_read(p, n, o, &e) || e.type != DLS_MP_BIN || e.len != 16)
                return bad(w, o, "a media entry whose id is not bin 16");
            o = e.end;
            if (dls_mp_read(p, n, o, &e) || e.type != DLS_MP_UINT)
                return bad(w, o, "a media entry whose drained position is not a uint");
            o = e.end;
            if (dls_mp_read(p, n, o, &e) || (e.type != DLS_MP_UINT && e.type != DLS_MP_NIL))
                return bad(w, o, "a media entry whose failing run is not a uint or nil");
            o = e.end;
        }
        r->media = p + it.end;
        r->media_len = o - it.end;
        r->nmedia = it.len;
        *end = o;
        return 0;
    }
    default:
        return bad(w, off, "internal: unknown checkpoint key kind");
    }
}

int dls_ckpt_decode(const uint8_t *p, size_t n, dls_ckpt_rec *r, dls_where *w)
{
    if (!p || !r)
        return DLS_ERR_INVAL;
    memset(r, 0, sizeof *r);
    r->pending = DLS_CAUSE_NONE;
    dls_mp_item m, k;
    if (dls_mp_read(p, n, 0, &m) || m.type != DLS_MP_MAP || m.len == 0)
        return bad(w, 0, "a checkpoint record that is not a non-empty map");
    if (dls_mp_read(p, n, m.end, &k) || k.type != DLS_MP_STR)
        return bad(w, m.end, "a checkpoint record whose first key is not a str");
    const ck_key *keys;
    if (dls_mp_str_is(&k, "dao.ckpt/pass")) {
        keys = K_HEADER;
        r->kind = DLS_CKPT_HEADER;
    } else if (dls_mp_str_is(&k, "dao.ckpt/lease")) {
        keys = K_LEASE;
        r->kind = DLS_CKPT_LEASE;
    } else if (dls_mp_str_is(&k, "dao.ckpt/waiter")) {
        keys = K_WAITER;
        r->kind = DLS_CKPT_WAITER;
    } else if (dls_mp_str_is(&k, "dao.ckpt/delay")) {
        keys = K_DELAY;
        r->kind = DLS_CKPT_DELAY;
    } else if (dls_mp_str_is(&k, "dao.ckpt/author")) {
        keys = K_AUTHOR;
        r->kind = DLS_CKPT_AUTHOR;
    } else {
        return bad(w, m.end, "a checkpoint record of no known kind");
    }
    if (m.len != nkeys(keys))
        return bad(w, 0, "a checkpoint record with missing or extra keys");
    size_t off = m.end;
    for (size_t i = 0; keys[i].name; i++) {
        if (dls_mp_read(p, n, off, &k) || !dls_mp_str_eq(&k, keys[i].name, keys[i].len))
            return bad(w, off, "a checkpoint record's keys out of judge.md's order");
        int rc = read_value(p, n, k.end, &keys[i], r, &off, w);
        if (rc)
            return rc;
    }
    if (off != n)
        return bad(w, off, "trailing bytes after a checkpoint record");
    if (r->kind == DLS_CKPT_DELAY) {
        r->subject.p = NULL;
        /* the delay's subject is its first value */
        dls_mp_read(p, n, m.end, &k);
        dls_mp_item v;
        dls_mp_read(p, n, k.end, &v);
        r->subject.p = v.data;
        r->subject.n = v.len;
    }
    return 0;
}

bool dls_ckpt_next_medium(const dls_ckpt_rec *r, size_t *off, dls_ckpt_medium *m)
{
    if (!r || !off || !m || !r->media || *off >= r->media_len)
        return false;
    const uint8_t *p = r->media;
    size_t n = r->media_len;
    dls_mp_item a, e;
    if (dls_mp_read(p, n, *off, &a) || dls_mp_read(p, n, a.end, &e))
        return false;
    m->id = e.data;
    size_t o = e.end;
    if (dls_mp_read(p, n, o, &e))
        return false;
    m->drained = e.v.u;
    o = e.end;
    if (dls_mp_read(p, n, o, &e))
        return false;
    m->has_run = e.type == DLS_MP_UINT;
    m->run_start = m->has_run ? e.v.u : 0;
    *off = e.end;
    return true;
}

int dls_ckpt_commit_decode(const uint8_t *fact, size_t n, uint64_t *pass,
                           uint8_t digest[DLS_CKPT_DIGEST_LEN], uint64_t *records)
{
    dls_mp_item m, k, v;
    if (!fact || dls_mp_read(fact, n, 0, &m) || m.type != DLS_MP_MAP || m.len != 3)
        return 0;
    static const char *const names[3] = {"dao.judge/checkpoint", "dao.judge/digest",
                                         "dao.judge/records"};
    size_t off = m.end;
    for (int i = 0; i < 3; i++) {
        if (dls_mp_read(fact, n, off, &k) || !dls_mp_str_is(&k, names[i]) ||
            dls_mp_read(fact, n, k.end, &v))
            return 0;
        if (i == 1) {
            if (v.type != DLS_MP_BIN || v.len != DLS_CKPT_DIGEST_LEN)
                return 0;
            if (digest)
                memcpy(digest, v.data, DLS_CKPT_DIGEST_LEN);
        } else {
            if (v.type != DLS_MP_UINT)
                return 0;
            if (i == 0 && pass)
                *pass = v.v.u;
            if (i == 2 && records)
                *records = v.v.u;
        }
        off = v.end;
    }
    return off == n ? 1 : 0;
}
