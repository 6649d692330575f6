/* daolease — the Redis medium's cursors (docs/redis.md, "Cursor results").
 *
 * Cursors page through XRANGE from the entry after the last one read and
 * compare each entry's `pos` with their own position: a larger one is a gap
 * (exact, since positions are dense), a smaller one is skipped only while
 * walking to the cursor's starting position.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/redis/handle.h"

typedef struct rid {
    uint64_t ms, seq;
} rid;

typedef struct rds_cur {
    rds *r;
    uint64_t pos;      /* the next unread position */
    uint64_t from;     /* where the cursor was made to start */
    bool positioned;   /* `start` is valid */
    bool seeking;      /* entries below `pos` are skipped (walking to `from`) */
    bool start_min;    /* the next XRANGE starts at "-" */
    rid start;         /* else at this id (inclusive) */
    redisReply *page;  /* the last XRANGE answer (owned), entries from idx on unread */
    size_t idx;
    uint64_t page_next; /* K:next read right after the page (UINT64_MAX: absent):
                           every entry the script wrote has a smaller pos */
    char why[224];     /* the reason of an entry's error, naming the entry */
    unsigned count;    /* entries asked per page: RDS_PAGE, divided by 8 after a
                          failed fetch (a page of large records over a slow link
                          must not time out forever), doubled after a good one */
} rds_cur;

/* ---- entry ids ----------------------------------------------------------- */

static int parse_rid(const char *s, size_t n, rid *out)
{
    const char *dash = memchr(s, '-', n);
    if (!dash)
        return -1;
    size_t a = (size_t)(dash - s);
    if (dls_dec_u64(s, a, &out->ms) != 0 ||
        dls_dec_u64(dash + 1, n - a - 1, &out->seq) != 0)
        return -1;
    return 0;
}

static rid rid_succ(rid x)
{
    if (x.seq == UINT64_MAX) {
        x.ms++;
        x.seq = 0;
    } else {
        x.seq++;
    }
    return x;
}

static void rid_fmt(char out[48], rid x)
{
    snprintf(out, 48, "%llu-%llu", (unsigned long long)x.ms, (unsigned long long)x.seq);
}

typedef struct rds_ent {
    rid id;
    uint64_t pos;
    const uint8_t *rec;
    size_t n;
} rds_ent;

/* Parses one XRANGE entry [id, [field, value, …]]. 0 or -1 (w->reason). */
static int parse_entry(const redisReply *e, rds_ent *out, dls_where *w)
{
    if (!e || e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
        e->element[0]->type != REDIS_REPLY_STRING ||
        e->element[1]->type != REDIS_REPLY_ARRAY || e->element[1]->elements % 2 != 0) {
        rds_fail(w, 0, 0, "a stream entry is not [id, [field, value …]]");
        return -1;
    }
    if (parse_rid(e->element[0]->str, e->element[0]->len, &out->id) != 0) {
        rds_fail(w, 0, 0, "a stream entry id is not ms-seq");
        return -1;
    }
    const redisReply *f = e->element[1];
    const redisReply *pos = NULL, *rec = NULL;
    for (size_t i = 0; i + 1 < f->elements; i += 2) {
        const redisReply *k = f->element[i], *v = f->element[i + 1];
        if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING) {
            rds_fail(w, 0, 0, "a stream entry field is not a string");
            return -1;
        }
        if (rds_str_is(k, "pos")) {
            if (pos) {
                rds_fail(w, 0, 0, "a stream entry has two pos fields");
                return -1;
            }
            pos = v;
        } else if (rds_str_is(k, "rec")) {
            if (rec) {
                rds_fail(w, 0, 0, "a stream entry has two rec fields");
                return -1;
            }
            rec = v;
        }
    }
    if (!pos || !rec) {
        rds_fail(w, 0, 0, "a stream entry lacks its pos or rec field");
        return -1;
    }
    if (dls_dec_u64(pos->str, pos->len, &out->pos) != 0) {
        rds_fail(w, 0, 0, "a stream entry's pos is not a decimal position");
        return -1;
    }
    if (rec->len == 0 || rec->len > DLS_RECORD_MAX) {
        rds_fail(w, 0, 0, "a stream entry's rec is empty or longer than 65536 bytes");
        return -1;
    }
    out->rec = (const uint8_t *)rec->str;
    out->n = rec->len;
    return 0;
}

int rds_cursor_new(void *impl, uint64_t from, void **cimpl)
{
    rds_cur *c = calloc(1, sizeof *c);
    if (!c)
        return DLS_ERR_NOMEM;
    c->r = impl;
    c->pos = from;
    c->from = from;
    c->count = RDS_PAGE;
    *cimpl = c;
    return 0;
}

void rds_cursor_del(void *cimpl)
{
    rds_cur *c = cimpl;
    if (c->page)
        freeReplyObject(c->page);
    free(c);
}

/* One XRANGE/XREVRANGE with COUNT 1 from `start` (inclusive); *have false
 * when empty. */
static int probe(rds *r, const char *cmd, const char *a, const char *b, rds_ent *e,
                 bool *have, redisReply **keep, dls_where *w)
{
    rds_buf_reset(&r->out);
    const char *argv[] = {cmd, r->keys[K_STREAM], a, b, "COUNT", "1"};
    size_t lens[] = {strlen(cmd), r->klen[K_STREAM], strlen(a), strlen(b), 5, 1};
    rds_buf_cmd(&r->out, 6, argv, lens);
    redisReply *x;
    int rc = rds_conn_call(&r->conn, &r->out, 1, &x, w);
    if (rc)
        return rc;
    if (rds_is_err(x)) {
        rc = rds_map_err(x, w);
        freeReplyObject(x);
        return rc;
    }
    if (x->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(x);
        return rds_fail(w, DLS_ERR_TRANSPORT, 0, "XRANGE answered something unexpected");
    }
    *have = x->elements > 0;
    if (*have && parse_entry(x->element[0], e, w) != 0) {
        freeReplyObject(x);
        return DLS_ERR_CORRUPT;
    }
    *keep = x; /* e borrows from it */
    return 0;
}

/* Finds where XRANGE must start for a cursor made at c->from > 0: the first
 * entry if its pos is at or beyond `from`, else an id found by bisecting
 * the millisecond part of entry ids (positions grow with ids), so that only
 * a few entries are skipped whatever the length of the stream. */
static int seek(rds_cur *c, dls_where *w)
{
    rds *r = c->r;
    c->seeking = true;
    c->start_min = true;
    if (c->from == 0) {
        c->positioned = true;
        return 0;
    }
    rds_ent e = {{0, 0}, 0, NULL, 0};
    bool have = false;
    redisReply *keep = NULL;
    int rc = probe(r, "XRANGE", "-", "+", &e, &have, &keep, w);
    if (rc)
        return rc;
    bool done = !have || e.pos >= c->from;
    rid lo_id = e.id;
    if (keep)
        freeReplyObject(keep);
    keep = NULL;
    if (done) {
        c->positioned = true;
        return 0;
    }
    rc = probe(r, "XREVRANGE", "+", "-", &e, &have, &keep, w);
    if (rc)
        return rc;
    if (!have) { /* emptied meanwhile */
        c->positioned = true;
        return 0;
    }
    rid hi_id = e.id;
    uint64_t last = e.pos;
    freeReplyObject(keep);
    if (last < c->from) {
        c->start_min = false;
        c->start = rid_succ(hi_id);
        c->positioned = true;
        return 0;
    }
    uint64_t lo = lo_id.ms, hi = hi_id.ms == UINT64_MAX ? UINT64_MAX : hi_id.ms + 1;
    rid start = {lo_id.ms, 0};
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        char a[48];
        rid_fmt(a, (rid){mid, 0});
        keep = NULL;
        rc = probe(r, "XRANGE", a, "+", &e, &have, &keep, w);
        if (rc)
            return rc;
        uint64_t p = e.pos;
        rid id = e.id;
        if (keep)
            freeReplyObject(keep);
        if (have && p <= c->from) {
            lo = mid;
            start = (rid){mid, 0};
            if (p == c->from) {
                start = id;
                break;
            }
        } else {
            hi = mid;
        }
    }
    c->start_min = false;
    c->start = start;
    c->positioned = true;
    return 0;
}

/* Fetches the next page with a snapshot of K:id, K:next and K:sealed taken
 * before it (so that "nothing retained after the cursor although positions
 * were assigned" means evicted, never "not yet written"). */
static int fetch(rds_cur *c, bool *have_next, uint64_t *next, bool *sealed, uint64_t *seal,
                 dls_where *w)
{
    rds *r = c->r;
    char start[48];
    if (c->start_min)
        memcpy(start, "-", 2);
    else
        rid_fmt(start, c->start);
    rds_buf_reset(&r->out);
    rds_buf_cmd(&r->out, 4,
                (const char *const[]){"MGET", r->keys[K_ID], r->keys[K_NEXT], r->keys[K_SEALED]},
                (const size_t[]){4, r->klen[K_ID], r->klen[K_NEXT], r->klen[K_SEALED]});
    char cnt[24];
    rds_u64s(cnt, c->count);
    const char *argv[] = {"XRANGE", r->keys[K_STREAM], start, "+", "COUNT", cnt};
    size_t lens[] = {6, r->klen[K_STREAM], strlen(start), 1, 5, strlen(cnt)};
    rds_buf_cmd(&r->out, 6, argv, lens);
    rds_buf_cmd(&r->out, 2, (const char *const[]){"GET", r->keys[K_NEXT]},
                (const size_t[]){3, r->klen[K_NEXT]});
    redisReply *rep[3];
    int rc = rds_conn_call(&r->conn, &r->out, 3, rep, w);
    if (rc) {
        c->count = c->count > 8 ? c->count / 8 : 1;
        return rc;
    }
    if (c->count < RDS_PAGE)
        c->count = c->count * 2 < RDS_PAGE ? c->count * 2 : RDS_PAGE;
    for (int i = 0; i < 3 && !rc; i++)
        if (rds_is_err(rep[i]))
            rc = rds_map_err(rep[i], w);
    if (!rc && (rep[0]->type != REDIS_REPLY_ARRAY || rep[0]->elements != 3 ||
                rep[1]->type != REDIS_REPLY_ARRAY))
        rc = rds_fail(w, DLS_ERR_TRANSPORT, 0, "MGET or XRANGE answered something unexpected");
    const redisReply *idr = rc ? NULL : rep[0]->element[0];
    const redisReply *nx = rc ? NULL : rep[0]->element[1];
    const redisReply *sl = rc ? NULL : rep[0]->element[2];
    if (!rc) {
        if (idr->type != REDIS_REPLY_STRING)
            rc = rds_fail(w, DLS_ERR_MEDIUM_ID, 0, "the medium's id key is gone (medium deleted?)");
        else if (!rds_str_is(idr, r->idhex))
            rc = rds_fail(w, DLS_ERR_MEDIUM_ID, 0, "the medium's id changed (medium recreated?)");
    }
    *have_next = *sealed = false;
    if (!rc && nx->type == REDIS_REPLY_STRING) {
        *have_next = true;
        if (dls_dec_u64(nx->str, nx->len, next) != 0)
            rc = rds_fail(w, DLS_ERR_REDIS_TYPE, 0, "the medium's next key is not a decimal position");
    }
    if (!rc && sl->type == REDIS_REPLY_STRING) {
        *sealed = true;
        if (dls_dec_u64(sl->str, sl->len, seal) != 0)
            rc = rds_fail(w, DLS_ERR_REDIS_TYPE, 0, "the medium's sealed key is not a decimal position");
    }
    /* K:next after the page: an entry whose pos is not below it was not
     * written by the append script (a script runs whole, so every pos it
     * assigned before the XRANGE is below K:next after it) */
    uint64_t after = UINT64_MAX;
    if (!rc && rep[2]->type == REDIS_REPLY_STRING &&
        dls_dec_u64(rep[2]->str, rep[2]->len, &after) != 0)
        rc = rds_fail(w, DLS_ERR_REDIS_TYPE, 0, "the medium's next key is not a decimal position");
    if (!rc) {
        c->page = rep[1];
        c->page_next = after;
        c->idx = 0;
        rep[1] = NULL;
    }
    rds_free_replies(rep, 3);
    return rc;
}

static dls_next cur_error(rds_cur *c, dls_record *rec, dls_where *w)
{
    if (w)
        w->offset = c->pos;
    rec->position = c->pos;
    rec->p = NULL;
    rec->n = 0;
    return DLS_NEXT_ERROR;
}

static dls_next gap_to(rds_cur *c, uint64_t to, dls_record *rec)
{
    rec->gap_from = c->pos;
    rec->position = to;
    rec->p = NULL;
    rec->n = 0;
    c->pos = to;
    c->seeking = false;
    return DLS_NEXT_GAP;
}

/* A bad entry (an XADD by hand, a tampered K:next): the
 * cursor answers transport-error at its position, and w->reason names the
 * entry's id, so that an operator can look at it and XDEL it. The page is
 * dropped, so that the next call reads Redis again (and goes on once the
 * entry is gone); the cursor's position does not move. */
static dls_next entry_error(rds_cur *c, const redisReply *e, const char *reason,
                            dls_record *rec, dls_where *w)
{
    const redisReply *id = e && e->type == REDIS_REPLY_ARRAY && e->elements > 0
                               ? e->element[0] : NULL;
    bool named = id && id->type == REDIS_REPLY_STRING && id->len <= 48;
    snprintf(c->why, sizeof c->why, "stream entry %.*s: %s", named ? (int)id->len : 1,
             named ? id->str : "?", reason ? reason : "malformed");
    if (w)
        w->reason = c->why;
    freeReplyObject(c->page);
    c->page = NULL;
    return cur_error(c, rec, w);
}

static dls_next next_locked(rds_cur *c, dls_record *rec, dls_where *w)
{
    rds *r = c->r;
    if (rds_ensure(r, w) != 0)
        return cur_error(c, rec, w);
    if (!c->positioned && seek(c, w) != 0)
        return cur_error(c, rec, w);
    for (;;) {
        if (c->page && c->idx < c->page->elements) {
            rds_ent e;
            const redisReply *raw = c->page->element[c->idx];
            dls_where pw = {0};
            if (parse_entry(raw, &e, &pw) != 0)
                return entry_error(c, raw, pw.reason, rec, w);
            if (e.pos >= c->page_next)
                return entry_error(c, raw,
                                   "its pos was never assigned by the append script (it is "
                                   "not below the medium's :next): an XADD by hand, or a "
                                   ":next set back?",
                                   rec, w);
            if (e.pos < c->pos && c->seeking && dls_record_is_seal(e.rec, e.n)) {
                /* the walk to `from` meets the seal: the medium ends there
                 * (the dispatcher answers END at the seal's position) */
                c->idx++;
                rec->position = e.pos;
                rec->p = e.rec;
                rec->n = e.n;
                return DLS_NEXT_OK;
            }
            if (e.pos < c->pos) {
                if (!c->seeking)
                    return entry_error(c, raw,
                                       "its pos is below the cursor's (positions reused: an XADD "
                                       "by hand, or a :next set back?)",
                                       rec, w);
                c->idx++;
                c->start_min = false;
                c->start = rid_succ(e.id);
                continue;
            }
            if (e.pos > c->pos)
                return gap_to(c, e.pos, rec);
            c->seeking = false;
            c->idx++;
            c->start_min = false;
            c->start = rid_succ(e.id);
            rec->position = e.pos;
            rec->gap_from = 0;
            rec->p = e.rec;
            rec->n = e.n;
            c->pos = e.pos + 1;
            return DLS_NEXT_OK;
        }
        if (c->page) {
            freeReplyObject(c->page);
            c->page = NULL;
        }
        bool have_next, sealed;
        uint64_t next = 0, seal = 0;
        if (fetch(c, &have_next, &next, &sealed, &seal, w) != 0)
            return cur_error(c, rec, w);
        if (c->page->elements > 0)
            continue;
        /* nothing retained after the cursor */
        if (sealed) {
            if (c->pos < seal) /* the seal's predecessors were evicted */
                return gap_to(c, seal, rec);
            rec->position = seal; /* the seal itself was read or evicted */
            rec->p = NULL;
            rec->n = 0;
            return DLS_NEXT_END;
        }
        if (next < c->pos) {
            rds_fail(w, 0, 0, "the medium ends before the cursor (positions lost or reused)");
            return cur_error(c, rec, w);
        }
        if (next > c->pos) /* positions assigned before the snapshot, gone now */
            return gap_to(c, next, rec);
        rec->position = c->pos;
        rec->p = NULL;
        rec->n = 0;
        return DLS_NEXT_BLOCKED;
    }
}

dls_next rds_cursor_next(void *cimpl, dls_record *rec, dls_where *w)
{
    rds_cur *c = cimpl;
    pthread_mutex_lock(&c->r->mu);
    dls_next res = next_locked(c, rec, w);
    pthread_mutex_unlock(&c->r->mu);
    return res;
}
