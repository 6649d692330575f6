/* The public medium and cursor handles: argument checks, seal handling and
 * cursor positions common to every backend, then dispatch through the
 * backend's dls_medium_ops (include/daolease/medium_impl.h). Opening a
 * medium from a path is in open.c. */
#include <stdlib.h>
#include <string.h>

#include "stream/internal.h"

struct dls_medium {
    const dls_medium_ops *ops;
    void *impl;
    dls_medium_info info;
    char *name;
};

struct dls_cursor {
    dls_medium *m;
    void *impl;
    uint64_t pos;     /* the next unread position (after END: the seal's) */
    bool retired;
    bool check;       /* resumed: position pos − 1 must still exist (first next) */
    bool ended_before; /* resumed, and a seal ends the medium before pos − 1 */
};

int dls_medium_wrap(dls_medium **out, const dls_medium_ops *ops, void *impl,
                    const dls_medium_info *info)
{
    if (!out || !ops || !info || !ops->append_batch || !ops->cursor_new ||
        !ops->cursor_next || !ops->cursor_del || !ops->del)
        return DLS_ERR_INVAL;
    dls_medium *m = calloc(1, sizeof *m);
    if (!m)
        return DLS_ERR_NOMEM;
    m->ops = ops;
    m->impl = impl;
    m->info = *info;
    m->name = strdup(info->name ? info->name : ops->kind_name ? ops->kind_name : "medium");
    if (!m->name) {
        free(m);
        return DLS_ERR_NOMEM;
    }
    m->info.name = m->name;
    *out = m;
    return 0;
}

void *dls_medium_impl(dls_medium *m, const dls_medium_ops *ops)
{
    return m && m->ops == ops ? m->impl : NULL;
}

void dls_medium_del(dls_medium *m)
{
    if (!m)
        return;
    m->ops->del(m->impl);
    free(m->name);
    free(m);
}

const uint8_t *dls_medium_id(const dls_medium *m)
{
    if (m->ops->id)
        return m->ops->id(m->impl);
    return m->info.id;
}

dls_retention dls_medium_retention(const dls_medium *m)
{
    return m->info.retention;
}

dls_medium_kind dls_medium_kind_of(const dls_medium *m)
{
    return m->info.kind;
}

dls_sync dls_medium_sync(const dls_medium *m)
{
    return m->info.sync;
}

dls_open_mode dls_medium_mode(const dls_medium *m)
{
    return m->info.mode;
}

const char *dls_medium_name(const dls_medium *m)
{
    return m->name;
}

static int check_record(const uint8_t *rec, size_t n, dls_where *w)
{
    if (!rec || n == 0 || n > DLS_RECORD_MAX)
        return dls_st_fail(w, DLS_ERR_RECORD, 0, "a record is 1 to 65536 bytes", 0);
    return 0;
}

static int check_appendable(const dls_medium *m, dls_where *w)
{
    if (!m)
        return dls_st_fail(w, DLS_ERR_INVAL, 0, "no medium", 0);
    if (m->info.mode != DLS_OPEN_APPEND)
        return dls_st_fail(w, DLS_ERR_STATE, 0, "the medium is open for reading only", 0);
    return 0;
}

int dls_medium_append(dls_medium *m, const uint8_t *rec, size_t n, uint64_t *pos,
                      dls_where *w)
{
    int rc = check_appendable(m, w);
    if (!rc)
        rc = check_record(rec, n, w);
    if (rc)
        return rc;
    uint64_t p = 0;
    if (m->ops->append)
        rc = m->ops->append(m->impl, rec, n, &p, w);
    else
        rc = m->ops->append_batch(m->impl, &rec, &n, 1, &p, w);
    if (!rc && pos)
        *pos = p;
    return rc;
}

int dls_medium_append_batch(dls_medium *m, const uint8_t *const *recs, const size_t *lens,
                            size_t count, uint64_t *first, dls_where *w)
{
    int rc = check_appendable(m, w);
    if (rc)
        return rc;
    if (!recs || !lens || count == 0)
        return dls_st_fail(w, DLS_ERR_INVAL, 0, "an empty batch", 0);
    for (size_t i = 0; i < count; i++)
        if ((rc = check_record(recs[i], lens[i], w)))
            return rc;
    /* stream-format.md: nothing follows a seal, so a batch holding a record
     * after its seal is refused whole, before any backend sees it. */
    if (dls_st_batch_seal_inside(recs, lens, count))
        return dls_st_fail(w, DLS_ERR_SEALED, 0, "a batch holds records after its seal", 0);
    uint64_t p = 0;
    rc = m->ops->append_batch(m->impl, recs, lens, count, &p, w);
    if (!rc && first)
        *first = p;
    return rc;
}

int dls_medium_seal(dls_medium *m, dls_where *w)
{
    int rc = check_appendable(m, w);
    if (rc)
        return rc;
    uint64_t p;
    if (m->ops->seal)
        return m->ops->seal(m->impl, &p, w);
    return dls_medium_append(m, (const uint8_t *)DLS_SEAL_RECORD, DLS_SEAL_RECORD_LEN, &p, w);
}

int dls_medium_trim(dls_medium *m, uint64_t before, uint64_t *oldest, dls_where *w)
{
    if (!m)
        return dls_st_fail(w, DLS_ERR_INVAL, 0, "no medium", 0);
    if (!m->ops->trim)
        return dls_st_fail(w, DLS_ERR_RETENTION, 0,
                           "this kind of medium cannot be trimmed (only a segmented medium "
                           "deletes whole segments from the front)",
                           0);
    int rc = check_appendable(m, w);
    if (rc)
        return rc;
    uint64_t o = 0;
    rc = m->ops->trim(m->impl, before, &o, w);
    if (!rc && oldest)
        *oldest = o;
    return rc;
}

bool dls_medium_evicts(const dls_medium *m)
{
    if (m->ops->evicts)
        return m->ops->evicts(m->impl);
    return m->info.retention != DLS_RETAIN_ALL; /* an unknown declaration: assume the worst */
}

/* ---- cursors ------------------------------------------------------------ */

int dls_cursor_new(dls_cursor **out, dls_medium *m, uint64_t from)
{
    if (!out || !m)
        return DLS_ERR_INVAL;
    *out = NULL;
    dls_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return DLS_ERR_NOMEM;
    int rc = m->ops->cursor_new(m->impl, from, &c->impl);
    if (rc) {
        free(c);
        return rc;
    }
    c->m = m;
    c->pos = from;
    *out = c;
    return 0;
}

int dls_cursor_resume(dls_cursor **out, dls_medium *m, uint64_t from)
{
    if (from == 0)
        return dls_cursor_new(out, m, 0);
    /* The backend cursor starts at from − 1: its first record proves the
     * position already read still exists, and is swallowed. */
    int rc = dls_cursor_new(out, m, from - 1);
    if (rc)
        return rc;
    (*out)->pos = from;
    (*out)->check = true;
    return 0;
}

static dls_next resume_step(dls_cursor *c, dls_record *rec, dls_where *w);

/* The first next of a resumed cursor: reads position pos − 1 again. False
 * when the cursor may go on reading normally; true with *answer (and rec)
 * the answer to give. */
static bool resume_check(dls_cursor *c, dls_record *rec, dls_where *w, dls_next *answer)
{
    dls_next a = resume_step(c, rec, w);
    if (a == DLS_NEXT_OK && !rec->p)
        return false;
    *answer = a;
    return true;
}

/* One try of resume_check: OK with rec->p NULL means "go on normally". */
static dls_next resume_step(dls_cursor *c, dls_record *rec, dls_where *w)
{
    uint64_t want = c->pos - 1;
    for (;;) {
        if (c->ended_before) {
            dls_st_fail(w, DLS_ERR_CORRUPT, 0,
                        "the medium now ends before a position already read", 0);
            rec->p = NULL;
            rec->n = 0;
            rec->position = c->pos;
            return DLS_NEXT_ERROR;
        }
        dls_next r = c->m->ops->cursor_next(c->impl, rec, w);
        bool seal = r == DLS_NEXT_OK && dls_record_is_seal(rec->p, rec->n);
        if (r == DLS_NEXT_OK && !seal && rec->position < want)
            continue; /* not expected (a backend walks to its start) */
        if (r == DLS_NEXT_OK && !seal) {
            c->check = false;
            if (rec->position == want) {
                rec->p = NULL; /* still there: swallow it */
                rec->n = 0;
                return DLS_NEXT_OK;
            }
            /* the backend went past it without a gap (not expected):
             * deliver the record */
            c->pos = rec->position + 1;
            return DLS_NEXT_OK;
        }
        if (r == DLS_NEXT_GAP) {
            if (rec->position <= want)
                continue;
            /* evicted: the medium went past it, it did not shrink */
            c->check = false;
            if (rec->position == c->pos) {
                rec->p = NULL;
                return DLS_NEXT_OK;
            }
            rec->gap_from = c->pos;
            c->pos = rec->position;
            return DLS_NEXT_GAP;
        }
        if (seal || r == DLS_NEXT_END) {
            if (rec->position >= want) {
                c->check = false;
                /* sealed at or after the last position read */
                c->retired = true;
                c->pos = rec->position;
                rec->p = NULL;
                rec->n = 0;
                return DLS_NEXT_END;
            }
        }
        /* BLOCKED before the position (or a seal before it): the medium
         * now ends before a position already read — positions reused
         * after a power loss, or a file rewound (stream-format.md,
         * Readers): transport-error, every time until it is back. */
        if (seal || r == DLS_NEXT_END)
            c->ended_before = true; /* for good: never ask the backend past a seal */
        if (r == DLS_NEXT_BLOCKED || seal || r == DLS_NEXT_END)
            dls_st_fail(w, DLS_ERR_CORRUPT, 0,
                        "the medium now ends before a position already read", 0);
        rec->p = NULL;
        rec->n = 0;
        rec->position = c->pos;
        return DLS_NEXT_ERROR;
    }
}

void dls_cursor_del(dls_cursor *c)
{
    if (!c)
        return;
    c->m->ops->cursor_del(c->impl);
    free(c);
}

dls_next dls_cursor_next(dls_cursor *c, dls_record *rec, dls_where *w)
{
    dls_record tmp;
    if (!rec)
        rec = &tmp;
    rec->position = 0;
    rec->gap_from = 0;
    rec->p = NULL;
    rec->n = 0;
    if (c->retired) {
        rec->position = c->pos;
        return DLS_NEXT_END;
    }
    if (c->check) {
        dls_next k;
        if (resume_check(c, rec, w, &k))
            return k;
        rec->gap_from = 0; /* what the check read is not this answer */
        rec->position = 0;
    }
    dls_next r = c->m->ops->cursor_next(c->impl, rec, w);
    switch (r) {
    case DLS_NEXT_OK:
        if (rec->n == DLS_SEAL_RECORD_LEN && dls_record_is_seal(rec->p, rec->n)) {
            c->retired = true;
            c->pos = rec->position;
            rec->p = NULL;
            rec->n = 0;
            return DLS_NEXT_END;
        }
        c->pos = rec->position + 1;
        return r;
    case DLS_NEXT_END:
        c->retired = true;
        c->pos = rec->position;
        return r;
    case DLS_NEXT_GAP:
        c->pos = rec->position;
        return r;
    case DLS_NEXT_BLOCKED:
    case DLS_NEXT_ERROR:
    default:
        rec->p = NULL;
        rec->n = 0;
        rec->position = c->pos;
        return r == DLS_NEXT_BLOCKED ? r : DLS_NEXT_ERROR;
    }
}

uint64_t dls_cursor_position(const dls_cursor *c)
{
    return c->pos;
}

dls_medium *dls_cursor_medium(const dls_cursor *c)
{
    return c->m;
}

const char *dls_next_name(dls_next r)
{
    switch (r) {
    case DLS_NEXT_OK: return "ok";
    case DLS_NEXT_BLOCKED: return "blocked";
    case DLS_NEXT_END: return "end";
    case DLS_NEXT_GAP: return "gap";
    case DLS_NEXT_ERROR: return "transport-error";
    }
    return "unknown";
}

const char *dls_sync_name(dls_sync s)
{
    switch (s) {
    case DLS_SYNC_NONE: return "none";
    case DLS_SYNC_DATA: return "data";
    case DLS_SYNC_GROUP: return "group";
    }
    return "unknown";
}

int dls_sync_parse(const char *name, dls_sync *out)
{
    static const dls_sync all[] = {DLS_SYNC_NONE, DLS_SYNC_DATA, DLS_SYNC_GROUP};
    for (size_t i = 0; name && i < sizeof all / sizeof all[0]; i++)
        if (!strcmp(name, dls_sync_name(all[i]))) {
            if (out)
                *out = all[i];
            return 0;
        }
    return DLS_ERR_INVAL;
}
