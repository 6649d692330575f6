/* daolease — the Redis Streams medium: a backend of medium_impl.h.
 *
 * Layout and decisions: include/daolease/redis.h and docs/redis.md.
 * Positions are the `pos` field of each entry, assigned by the append
 * script under Redis's single-threaded script execution, so they are dense
 * and unique whatever the number of writers. Cursors page through XRANGE
 * from the entry after the last one read and compare each entry's `pos`
 * with their own position: a larger one is a gap (exact, since positions are
 * dense), a smaller one is skipped only while walking to the cursor's
 * starting position.
 */
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daolease/medium_impl.h"
#include "daolease/redis.h"
#include "stream/redis/conn.h"
#include "stream/redis/rds.h"

enum { K_STREAM, K_NEXT, K_ID, K_SEALED, K_MAXLEN, K_COUNT };
static const char *const key_suffix[K_COUNT] = {"", ":next", ":id", ":sealed", ":maxlen"};

/* The append script. KEYS: stream, next, id, sealed, maxlen. ARGV[1]: the
 * medium id (hex) the writer opened; ARGV[2…]: the records. Answers the
 * first record's position, or an error whose first word the client maps:
 * DLSNOID / DLSID (DLS_ERR_MEDIUM_ID), DLSSEALED (DLS_ERR_SEALED). The
 * checks come before any write, so a refused batch changes nothing. */
static const char append_lua[] =
    "local v = redis.call('MGET', KEYS[3], KEYS[4], KEYS[5])\n"
    "local id, sealed, ml = v[1], v[2], v[3]\n"
    "if not id then return redis.error_reply('DLSNOID the medium id key is missing') end\n"
    "if id ~= ARGV[1] then return redis.error_reply('DLSID the medium id differs') end\n"
    "if sealed then return redis.error_reply('DLSSEALED the medium is sealed') end\n"
    "local seal = '\\129\\177dao.stream/sealed\\195'\n"
    "local n = #ARGV - 1\n"
    "for i = 2, #ARGV - 1 do\n"
    "  if ARGV[i] == seal then\n"
    "    return redis.error_reply('DLSSEALED a seal is followed by a record') end\n"
    "end\n"
    "local first = redis.call('INCRBY', KEYS[2], n) - n\n"
    "for i = 1, n do\n"
    "  local pos = string.format('%d', first + i - 1)\n"
    "  local rec = ARGV[i + 1]\n"
    "  if ml then\n"
    "    redis.call('XADD', KEYS[1], 'MAXLEN', ml, '*', 'pos', pos, 'rec', rec)\n"
    "  else\n"
    "    redis.call('XADD', KEYS[1], '*', 'pos', pos, 'rec', rec)\n"
    "  end\n"
    "  if rec == seal then redis.call('SET', KEYS[4], pos) end\n"
    "end\n"
    "return first\n";

/* The create script: all five keys absent, then K:id, K:next = 0 and
 * K:maxlen when a bound is declared. ARGV: id hex, maxlen ("0": none). */
static const char create_lua[] =
    "if redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]) > 0 then\n"
    "  return redis.error_reply('DLSEXISTS the medium exists') end\n"
    "redis.call('SET', KEYS[3], ARGV[1])\n"
    "redis.call('SET', KEYS[2], '0')\n"
    "if ARGV[2] ~= '0' then redis.call('SET', KEYS[5], ARGV[2]) end\n"
    "return 1\n";

typedef struct rds {
    pthread_mutex_t mu; /* guards everything below after open */
    rds_conn conn;
    rds_buf out;
    rds_url url;        /* host, port, key, name (owned) */
    char *user, *pass;  /* effective credentials (owned), NULL when none */
    unsigned db, replicas;
    char *keys[K_COUNT];
    size_t klen[K_COUNT];
    uint8_t id[DLS_MEDIUM_ID_LEN];
    char idhex[2 * DLS_MEDIUM_ID_LEN + 1];
    uint64_t maxlen;    /* 0: retains everything */
    dls_sync sync;
    dls_open_mode mode;
    char sha[41];
    bool have_sha;
} rds;

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
    unsigned count;    /* entries asked per page: RDS_PAGE, divided by 8 after a
                          failed fetch (a page of large records over a slow link
                          must not time out forever), doubled after a good one */
} rds_cur;

/* ---- small helpers ------------------------------------------------------ */

static int fail(dls_where *w, int code, uint64_t off, const char *reason)
{
    if (w) {
        w->offset = off;
        w->reason = reason;
    }
    return code;
}

static void free_replies(redisReply **rep, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (rep[i])
            freeReplyObject(rep[i]);
}

static bool is_err(const redisReply *x)
{
    return x && x->type == REDIS_REPLY_ERROR;
}

static bool err_starts(const redisReply *x, const char *word)
{
    size_t n = strlen(word);
    return is_err(x) && x->len >= n && memcmp(x->str, word, n) == 0;
}

static bool err_has(const redisReply *x, const char *word)
{
    return is_err(x) && x->str && strstr(x->str, word) != NULL;
}

static bool str_is(const redisReply *x, const char *s)
{
    size_t n = strlen(s);
    return x && (x->type == REDIS_REPLY_STRING || x->type == REDIS_REPLY_STATUS) &&
           x->len == n && memcmp(x->str, s, n) == 0;
}

/* Maps an error reply of the server to a code and a static reason. */
static int map_err(const redisReply *x, dls_where *w)
{
    if (err_starts(x, "DLSSEALED"))
        return fail(w, DLS_ERR_SEALED, 0, "the medium is sealed (or a seal is followed by a record)");
    if (err_starts(x, "DLSNOID"))
        return fail(w, DLS_ERR_MEDIUM_ID, 0, "the medium's id key is gone (medium deleted?)");
    if (err_starts(x, "DLSID"))
        return fail(w, DLS_ERR_MEDIUM_ID, 0, "the medium's id changed (medium recreated?)");
    if (err_starts(x, "DLSEXISTS"))
        return fail(w, DLS_ERR_EXISTS, 0, "a medium (or one of its keys) exists at this key");
    if (err_has(x, "WRONGTYPE"))
        return fail(w, DLS_ERR_REDIS_TYPE, 0, "a key of the medium holds another Redis type");
    if (err_starts(x, "NOAUTH") || err_starts(x, "WRONGPASS"))
        return fail(w, DLS_ERR_PERM, 0, "Redis refused the credentials (AUTH)");
    if (err_starts(x, "NOPERM") || err_has(x, "NOPERM"))
        return fail(w, DLS_ERR_PERM, 0, "a Redis ACL refused a command or key");
    if (err_starts(x, "OOM") || err_has(x, "OOM"))
        return fail(w, DLS_ERR_TRANSPORT, 0, "Redis is out of memory (maxmemory)");
    if (err_starts(x, "READONLY"))
        return fail(w, DLS_ERR_TRANSPORT, 0, "Redis is a read-only replica");
    if (err_starts(x, "LOADING") || err_starts(x, "BUSY") || err_starts(x, "TRYAGAIN"))
        return fail(w, DLS_ERR_TRANSPORT, 0, "Redis is busy or loading");
    if (err_starts(x, "MOVED") || err_starts(x, "ASK") || err_starts(x, "CROSSSLOT"))
        return fail(w, DLS_ERR_CONFIG, 0, "the medium's keys are on another cluster node (use a hash tag key)");
    return fail(w, DLS_ERR_TRANSPORT, 0, "Redis answered an error");
}

static void hex16(char out[33], const uint8_t id[16])
{
    static const char d[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = d[id[i] >> 4];
        out[2 * i + 1] = d[id[i] & 15];
    }
    out[32] = '\0';
}

static int unhex16(const char *s, size_t n, uint8_t id[16])
{
    if (n != 32)
        return -1;
    for (size_t i = 0; i < 32; i++) {
        char c = s[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0)
            return -1;
        if (i % 2 == 0)
            id[i / 2] = (uint8_t)(v << 4);
        else
            id[i / 2] |= (uint8_t)v;
    }
    return 0;
}

static void u64s(char out[24], uint64_t v)
{
    snprintf(out, 24, "%llu", (unsigned long long)v);
}

static int parse_rid(const char *s, size_t n, rid *out)
{
    const char *dash = memchr(s, '-', n);
    if (!dash)
        return -1;
    size_t a = (size_t)(dash - s);
    if (rds_parse_u64(s, a, &out->ms) != 0 ||
        rds_parse_u64(dash + 1, n - a - 1, &out->seq) != 0)
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

/* ---- session ------------------------------------------------------------ */

/* Connects, authenticates, selects the db and (when `verify`) checks that
 * K:id still holds the id this handle opened. Mutex held. */
static int session(rds *r, bool verify, dls_where *w)
{
    int rc = rds_conn_open(&r->conn, r->url.host, r->url.port, w);
    if (rc)
        return rc;
    rds_buf_reset(&r->out);
    size_t n = 0;
    if (r->pass) {
        if (r->user)
            rds_buf_cmdv(&r->out, 3, "AUTH", r->user, r->pass);
        else
            rds_buf_cmdv(&r->out, 2, "AUTH", r->pass);
        n++;
    }
    if (r->db) {
        char db[24];
        u64s(db, r->db);
        rds_buf_cmdv(&r->out, 2, "SELECT", db);
        n++;
    }
    if (verify) {
        rds_buf_cmd(&r->out, 2, (const char *const[]){"GET", r->keys[K_ID]},
                    (const size_t[]){3, r->klen[K_ID]});
        n++;
    }
    if (n == 0)
        return 0;
    redisReply *rep[3];
    rc = rds_conn_call(&r->conn, &r->out, n, rep, w);
    if (r->pass && r->out.p)
        sodium_memzero(r->out.p, r->out.n); /* the password left the buffer */
    if (rc)
        return rc;
    size_t i = 0;
    if (r->pass && is_err(rep[i++]))
        rc = fail(w, DLS_ERR_PERM, 0, "Redis refused the credentials (AUTH)");
    if (!rc && r->db && is_err(rep[i++]))
        rc = fail(w, DLS_ERR_CONFIG, 0, "Redis refused SELECT of the URL's db");
    if (!rc && verify) {
        redisReply *x = rep[i];
        if (is_err(x))
            rc = map_err(x, w);
        else if (x->type == REDIS_REPLY_NIL)
            rc = fail(w, DLS_ERR_MEDIUM_ID, 0, "the medium's id key is gone (medium deleted?)");
        else if (!str_is(x, r->idhex))
            rc = fail(w, DLS_ERR_MEDIUM_ID, 0, "the medium's id changed (medium recreated?)");
    }
    free_replies(rep, n);
    if (rc)
        rds_conn_close(&r->conn);
    return rc;
}

static int ensure(rds *r, dls_where *w)
{
    if (r->conn.fd >= 0)
        return 0;
    return session(r, true, w);
}

/* ---- appends ------------------------------------------------------------ */

static void build_append(rds *r, bool sha, const uint8_t *const *recs, const size_t *lens,
                         size_t count)
{
    rds_buf_reset(&r->out);
    rds_buf_array(&r->out, 3 + K_COUNT + 1 + count);
    if (sha) {
        rds_buf_bulk(&r->out, "EVALSHA", 7);
        rds_buf_bulk(&r->out, r->sha, 40);
    } else {
        rds_buf_bulk(&r->out, "EVAL", 4);
        rds_buf_bulk(&r->out, append_lua, sizeof append_lua - 1);
    }
    rds_buf_bulk(&r->out, "5", 1);
    for (int k = 0; k < K_COUNT; k++)
        rds_buf_bulk(&r->out, r->keys[k], r->klen[k]);
    rds_buf_bulk(&r->out, r->idhex, 32);
    for (size_t i = 0; i < count; i++)
        rds_buf_bulk(&r->out, recs[i], lens[i]);
    if (r->replicas) {
        char n[24], t[24];
        u64s(n, r->replicas);
        /* the server's wait ends before this call's deadline */
        u64s(t, r->conn.timeout_ms > 4 ? r->conn.timeout_ms * 3 / 4 : 1);
        rds_buf_cmdv(&r->out, 3, "WAIT", n, t);
    }
}

static int append_locked(rds *r, const uint8_t *const *recs, const size_t *lens,
                         size_t count, uint64_t *first, dls_where *w)
{
    int rc = ensure(r, w);
    if (rc)
        return rc;
    size_t nrep = r->replicas ? 2 : 1;
    redisReply *rep[2] = {NULL, NULL};
    bool sha = r->have_sha;
    for (;;) {
        build_append(r, sha, recs, lens, count);
        rc = rds_conn_call(&r->conn, &r->out, nrep, rep, w);
        if (rc)
            return rc;
        if (sha && err_starts(rep[0], "NOSCRIPT")) {
            /* the server lost its script cache (restart, SCRIPT FLUSH):
             * EVAL runs and caches it again, EVALSHA works afterwards */
            free_replies(rep, nrep);
            sha = false;
            continue;
        }
        break;
    }
    redisReply *x = rep[0];
    if (x->type == REDIS_REPLY_INTEGER && x->integer >= 0) {
        *first = (uint64_t)x->integer;
        if (r->replicas) {
            redisReply *y = rep[1];
            if (y->type != REDIS_REPLY_INTEGER || y->integer < (long long)r->replicas)
                rc = fail(w, DLS_ERR_TRANSPORT, *first,
                          "fewer replicas than required acknowledged the append (WAIT)");
        }
    } else if (is_err(x)) {
        rc = map_err(x, w);
    } else {
        rc = fail(w, DLS_ERR_TRANSPORT, 0, "the append script answered something unexpected");
    }
    free_replies(rep, nrep);
    return rc;
}

static int rds_append_batch(void *impl, const uint8_t *const *recs, const size_t *lens,
                            size_t count, uint64_t *first, dls_where *w)
{
    rds *r = impl;
    if (count == 0)
        return fail(w, DLS_ERR_INVAL, 0, "an empty batch");
    if (count > RDS_BATCH_MAX_RECORDS)
        return fail(w, DLS_ERR_TOOBIG, 0, "a Redis batch holds at most 10000 records");
    size_t bytes = 0;
    for (size_t i = 0; i < count; i++) {
        if (lens[i] == 0 || lens[i] > DLS_RECORD_MAX)
            return fail(w, DLS_ERR_RECORD, i, "a record must be 1 … 65536 bytes");
        bytes += lens[i];
        if (bytes > RDS_BATCH_MAX_BYTES)
            return fail(w, DLS_ERR_TOOBIG, i, "a Redis batch holds at most 32 MiB");
        if (i + 1 < count && dls_record_is_seal(recs[i], lens[i]))
            return fail(w, DLS_ERR_SEALED, i, "a seal is followed by a record in the batch");
    }
    pthread_mutex_lock(&r->mu);
    int rc = append_locked(r, recs, lens, count, first, w);
    pthread_mutex_unlock(&r->mu);
    return rc;
}

static int rds_append(void *impl, const uint8_t *rec, size_t n, uint64_t *pos, dls_where *w)
{
    return rds_append_batch(impl, &rec, &n, 1, pos, w);
}

/* ---- cursors ------------------------------------------------------------ */

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
        fail(w, 0, 0, "a stream entry is not [id, [field, value …]]");
        return -1;
    }
    if (parse_rid(e->element[0]->str, e->element[0]->len, &out->id) != 0) {
        fail(w, 0, 0, "a stream entry id is not ms-seq");
        return -1;
    }
    const redisReply *f = e->element[1];
    const redisReply *pos = NULL, *rec = NULL;
    for (size_t i = 0; i + 1 < f->elements; i += 2) {
        const redisReply *k = f->element[i], *v = f->element[i + 1];
        if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING) {
            fail(w, 0, 0, "a stream entry field is not a string");
            return -1;
        }
        if (str_is(k, "pos")) {
            if (pos) {
                fail(w, 0, 0, "a stream entry has two pos fields");
                return -1;
            }
            pos = v;
        } else if (str_is(k, "rec")) {
            if (rec) {
                fail(w, 0, 0, "a stream entry has two rec fields");
                return -1;
            }
            rec = v;
        }
    }
    if (!pos || !rec) {
        fail(w, 0, 0, "a stream entry lacks its pos or rec field");
        return -1;
    }
    if (rds_parse_u64(pos->str, pos->len, &out->pos) != 0) {
        fail(w, 0, 0, "a stream entry's pos is not a decimal position");
        return -1;
    }
    if (rec->len == 0 || rec->len > DLS_RECORD_MAX) {
        fail(w, 0, 0, "a stream entry's rec is empty or longer than 65536 bytes");
        return -1;
    }
    out->rec = (const uint8_t *)rec->str;
    out->n = rec->len;
    return 0;
}

static int rds_cursor_new(void *impl, uint64_t from, void **cimpl)
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

static void rds_cursor_del(void *cimpl)
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
    if (is_err(x)) {
        rc = map_err(x, w);
        freeReplyObject(x);
        return rc;
    }
    if (x->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(x);
        return fail(w, DLS_ERR_TRANSPORT, 0, "XRANGE answered something unexpected");
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
    u64s(cnt, c->count);
    const char *argv[] = {"XRANGE", r->keys[K_STREAM], start, "+", "COUNT", cnt};
    size_t lens[] = {6, r->klen[K_STREAM], strlen(start), 1, 5, strlen(cnt)};
    rds_buf_cmd(&r->out, 6, argv, lens);
    redisReply *rep[2];
    int rc = rds_conn_call(&r->conn, &r->out, 2, rep, w);
    if (rc) {
        c->count = c->count > 8 ? c->count / 8 : 1;
        return rc;
    }
    if (c->count < RDS_PAGE)
        c->count = c->count * 2 < RDS_PAGE ? c->count * 2 : RDS_PAGE;
    for (int i = 0; i < 2 && !rc; i++)
        if (is_err(rep[i]))
            rc = map_err(rep[i], w);
    if (!rc && (rep[0]->type != REDIS_REPLY_ARRAY || rep[0]->elements != 3 ||
                rep[1]->type != REDIS_REPLY_ARRAY))
        rc = fail(w, DLS_ERR_TRANSPORT, 0, "MGET or XRANGE answered something unexpected");
    const redisReply *idr = rc ? NULL : rep[0]->element[0];
    const redisReply *nx = rc ? NULL : rep[0]->element[1];
    const redisReply *sl = rc ? NULL : rep[0]->element[2];
    if (!rc) {
        if (idr->type != REDIS_REPLY_STRING)
            rc = fail(w, DLS_ERR_MEDIUM_ID, 0, "the medium's id key is gone (medium deleted?)");
        else if (!str_is(idr, r->idhex))
            rc = fail(w, DLS_ERR_MEDIUM_ID, 0, "the medium's id changed (medium recreated?)");
    }
    *have_next = *sealed = false;
    if (!rc && nx->type == REDIS_REPLY_STRING) {
        *have_next = true;
        if (rds_parse_u64(nx->str, nx->len, next) != 0)
            rc = fail(w, DLS_ERR_REDIS_TYPE, 0, "the medium's next key is not a decimal position");
    }
    if (!rc && sl->type == REDIS_REPLY_STRING) {
        *sealed = true;
        if (rds_parse_u64(sl->str, sl->len, seal) != 0)
            rc = fail(w, DLS_ERR_REDIS_TYPE, 0, "the medium's sealed key is not a decimal position");
    }
    if (!rc) {
        c->page = rep[1];
        c->idx = 0;
        rep[1] = NULL;
    }
    free_replies(rep, 2);
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

static dls_next next_locked(rds_cur *c, dls_record *rec, dls_where *w)
{
    rds *r = c->r;
    if (ensure(r, w) != 0)
        return cur_error(c, rec, w);
    if (!c->positioned && seek(c, w) != 0)
        return cur_error(c, rec, w);
    for (;;) {
        if (c->page && c->idx < c->page->elements) {
            rds_ent e;
            if (parse_entry(c->page->element[c->idx], &e, w) != 0)
                return cur_error(c, rec, w);
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
                if (!c->seeking) {
                    fail(w, 0, 0, "an entry's position is below the cursor's (positions reused?)");
                    return cur_error(c, rec, w);
                }
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
            fail(w, 0, 0, "the medium ends before the cursor (positions lost or reused)");
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

static dls_next rds_cursor_next(void *cimpl, dls_record *rec, dls_where *w)
{
    rds_cur *c = cimpl;
    pthread_mutex_lock(&c->r->mu);
    dls_next res = next_locked(c, rec, w);
    pthread_mutex_unlock(&c->r->mu);
    return res;
}

/* ---- open / create ------------------------------------------------------ */

static void rds_free(rds *r)
{
    if (!r)
        return;
    rds_conn_close(&r->conn);
    rds_buf_free(&r->out);
    for (int k = 0; k < K_COUNT; k++)
        free(r->keys[k]);
    if (r->pass) {
        sodium_memzero(r->pass, strlen(r->pass));
        free(r->pass);
    }
    free(r->user);
    rds_url_free(&r->url);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

static void rds_del(void *impl)
{
    rds_free(impl);
}

static const dls_medium_ops rds_ops = {
    .kind_name = "redis",
    .append = rds_append,
    .append_batch = rds_append_batch,
    .seal = NULL,
    .cursor_new = rds_cursor_new,
    .cursor_next = rds_cursor_next,
    .cursor_del = rds_cursor_del,
    .id = NULL,
    .del = rds_del,
};

/* Builds the handle from the URL and settings (URL values win). */
static int rds_make(rds **out, const char *url, dls_open_mode mode,
                    const dls_redis_settings *s, dls_where *w)
{
    dls_redis_settings d;
    if (!s) {
        dls_redis_settings_default(&d);
        s = &d;
    }
    rds *r = calloc(1, sizeof *r);
    if (!r)
        return DLS_ERR_NOMEM;
    pthread_mutex_init(&r->mu, NULL);
    rds_conn_init(&r->conn, s->timeout_ms);
    int rc = rds_url_parse(url, &r->url, w);
    if (rc) {
        pthread_mutex_destroy(&r->mu);
        free(r);
        return rc;
    }
    const rds_url *u = &r->url;
    r->conn.timeout_ms = u->has_timeout ? u->timeout_ms : (s->timeout_ms ? s->timeout_ms : 1000);
    r->sync = u->has_sync ? u->sync : s->sync;
    r->maxlen = u->has_maxlen ? u->maxlen : s->maxlen;
    r->replicas = u->has_replicas ? u->replicas : s->replicas;
    r->db = u->has_db ? u->db : s->db;
    r->mode = mode;
    const char *user = s->username ? s->username : u->user;
    const char *pass = s->password ? s->password : u->pass;
    if (user && !pass) {
        rds_free(r);
        return fail(w, DLS_ERR_CONFIG, 0, "a Redis user name without a password");
    }
    if ((user && !(r->user = strdup(user))) || (pass && !(r->pass = strdup(pass)))) {
        rds_free(r);
        return DLS_ERR_NOMEM;
    }
    size_t kn = strlen(u->key);
    for (int k = 0; k < K_COUNT; k++) {
        size_t sn = strlen(key_suffix[k]);
        r->keys[k] = malloc(kn + sn + 1);
        if (!r->keys[k]) {
            rds_free(r);
            return DLS_ERR_NOMEM;
        }
        memcpy(r->keys[k], u->key, kn);
        memcpy(r->keys[k] + kn, key_suffix[k], sn + 1);
        r->klen[k] = kn + sn;
    }
    *out = r;
    return 0;
}

static int run_create(rds *r, const uint8_t *want_id, dls_where *w)
{
    if (want_id)
        memcpy(r->id, want_id, DLS_MEDIUM_ID_LEN);
    else {
        if (sodium_init() < 0)
            return fail(w, DLS_ERR_SODIUM, 0, "libsodium failed to initialise");
        randombytes_buf(r->id, DLS_MEDIUM_ID_LEN);
    }
    hex16(r->idhex, r->id);
    char ml[24];
    u64s(ml, r->maxlen);
    rds_buf_reset(&r->out);
    rds_buf_array(&r->out, 3 + K_COUNT + 2);
    rds_buf_bulk(&r->out, "EVAL", 4);
    rds_buf_bulk(&r->out, create_lua, sizeof create_lua - 1);
    rds_buf_bulk(&r->out, "5", 1);
    for (int k = 0; k < K_COUNT; k++)
        rds_buf_bulk(&r->out, r->keys[k], r->klen[k]);
    rds_buf_bulk(&r->out, r->idhex, 32);
    rds_buf_bulk(&r->out, ml, strlen(ml));
    redisReply *x;
    int rc = rds_conn_call(&r->conn, &r->out, 1, &x, w);
    if (rc)
        return rc;
    if (is_err(x))
        rc = map_err(x, w);
    else if (x->type != REDIS_REPLY_INTEGER)
        rc = fail(w, DLS_ERR_TRANSPORT, 0, "the create script answered something unexpected");
    freeReplyObject(x);
    return rc;
}

/* Prepares appends: loads the script (EVAL each time when SCRIPT LOAD is
 * refused) and, for sync data/group, checks the server's persistence.
 * Runs before a create so that a refused policy leaves nothing behind. */
static int prepare_append(rds *r, dls_where *w)
{
    bool durable = r->sync != DLS_SYNC_NONE;
    rds_buf_reset(&r->out);
    rds_buf_cmd(&r->out, 3, (const char *const[]){"SCRIPT", "LOAD", append_lua},
                (const size_t[]){6, 4, sizeof append_lua - 1});
    size_t n = 1;
    if (durable) {
        rds_buf_cmdv(&r->out, 3, "CONFIG", "GET", "appendonly");
        rds_buf_cmdv(&r->out, 3, "CONFIG", "GET", "appendfsync");
        n += 2;
    }
    redisReply *rep[3];
    int rc = rds_conn_call(&r->conn, &r->out, n, rep, w);
    if (rc)
        return rc;
    redisReply *x = rep[0];
    if (x->type == REDIS_REPLY_STRING && x->len == 40) {
        memcpy(r->sha, x->str, 40);
        r->sha[40] = '\0';
        r->have_sha = true;
    } else if (err_has(x, "NOPERM")) {
        r->have_sha = false; /* an ACL without SCRIPT LOAD: EVAL each time */
    } else if (is_err(x)) {
        rc = map_err(x, w);
    }
    if (!rc && durable) {
        redisReply *ao = rep[1], *fs = rep[2];
        if (is_err(ao) || is_err(fs) || ao->type != REDIS_REPLY_ARRAY ||
            fs->type != REDIS_REPLY_ARRAY || ao->elements != 2 || fs->elements != 2)
            rc = fail(w, DLS_ERR_CONFIG, 0,
                      "sync data/group: cannot verify the server's persistence (CONFIG GET "
                      "refused; grant +config|get or open with sync none)");
        else if (!str_is(ao->element[1], "yes") || !str_is(fs->element[1], "always"))
            rc = fail(w, DLS_ERR_CONFIG, 0,
                      "sync data/group needs the server's appendonly yes and appendfsync always");
    }
    free_replies(rep, n);
    return rc;
}

/* Checks the layout: key types, the id (against the created one or the
 * expected one), the declared retention. */
static int check_layout(rds *r, bool created, const uint8_t *want_id, uint64_t want_maxlen,
                        dls_where *w)
{
    rds_buf_reset(&r->out);
    size_t n = 0;
    for (int k = 0; k < K_COUNT; k++, n++)
        rds_buf_cmd(&r->out, 2, (const char *const[]){"TYPE", r->keys[k]},
                    (const size_t[]){4, r->klen[k]});
    rds_buf_cmd(&r->out, 2, (const char *const[]){"GET", r->keys[K_ID]},
                (const size_t[]){3, r->klen[K_ID]});
    rds_buf_cmd(&r->out, 2, (const char *const[]){"GET", r->keys[K_MAXLEN]},
                (const size_t[]){3, r->klen[K_MAXLEN]});
    n += 2;
    redisReply *rep[K_COUNT + 2];
    int rc = rds_conn_call(&r->conn, &r->out, n, rep, w);
    if (rc)
        return rc;
    bool any = false;
    for (int k = 0; k < K_COUNT && !rc; k++) {
        redisReply *t = rep[k];
        if (is_err(t)) {
            rc = map_err(t, w);
            break;
        }
        if (str_is(t, "none"))
            continue;
        any = true;
        if (!str_is(t, k == K_STREAM ? "stream" : "string"))
            rc = fail(w, DLS_ERR_REDIS_TYPE, 0,
                      k == K_STREAM ? "the medium's key holds another type than a stream"
                                    : "a key of the medium (:next, :id, :sealed, :maxlen) is not a string");
    }
    if (!rc && !any)
        rc = fail(w, DLS_ERR_NOTFOUND, 0, "no medium at this key");
    redisReply *idr = rep[K_COUNT], *mlr = rep[K_COUNT + 1];
    if (!rc) {
        uint8_t id[DLS_MEDIUM_ID_LEN];
        if (idr->type != REDIS_REPLY_STRING)
            rc = fail(w, DLS_ERR_MEDIUM_ID, 0, "the key has no :id: not a daolease medium");
        else if (unhex16(idr->str, idr->len, id) != 0)
            rc = fail(w, DLS_ERR_MEDIUM_ID, 0, "the medium's :id is not 32 lower-case hex characters");
        else if (created && memcmp(id, r->id, DLS_MEDIUM_ID_LEN) != 0)
            rc = fail(w, DLS_ERR_MEDIUM_ID, 0, "the medium's id changed while it was created");
        else if (want_id && memcmp(id, want_id, DLS_MEDIUM_ID_LEN) != 0)
            rc = fail(w, DLS_ERR_MEDIUM_ID, 0, "the medium's id is not the expected one");
        else {
            memcpy(r->id, id, DLS_MEDIUM_ID_LEN);
            hex16(r->idhex, r->id);
        }
    }
    if (!rc) {
        uint64_t ml = 0;
        if (mlr->type == REDIS_REPLY_STRING &&
            (rds_parse_u64(mlr->str, mlr->len, &ml) != 0 || ml == 0))
            rc = fail(w, DLS_ERR_REDIS_TYPE, 0, "the medium's :maxlen is not a positive integer");
        else if (want_maxlen && want_maxlen != ml)
            rc = fail(w, DLS_ERR_CONFIG, 0, "the medium's declared maxlen differs from the requested one");
        else
            r->maxlen = ml;
    }
    free_replies(rep, n);
    return rc;
}

static int wrap(dls_medium **out, rds *r)
{
    dls_medium_info info;
    memset(&info, 0, sizeof info);
    info.kind = DLS_MEDIUM_REDIS;
    info.retention = r->maxlen ? DLS_RETAIN_EVICT_OLDEST : DLS_RETAIN_ALL;
    info.sync = r->sync;
    info.mode = r->mode;
    memcpy(info.id, r->id, DLS_MEDIUM_ID_LEN);
    info.name = r->url.name;
    return dls_medium_wrap(out, &rds_ops, r, &info);
}

static int open_common(dls_medium **out, const char *url, dls_open_mode mode, bool create,
                       const dls_redis_settings *s, dls_where *w)
{
    if (!out)
        return fail(w, DLS_ERR_INVAL, 0, "no output handle");
    *out = NULL;
    if (mode != DLS_OPEN_READ && mode != DLS_OPEN_APPEND)
        return fail(w, DLS_ERR_INVAL, 0, "unknown open mode");
    rds *r;
    int rc = rds_make(&r, url, mode, s, w);
    if (rc)
        return rc;
    if (r->sync != DLS_SYNC_NONE && r->sync != DLS_SYNC_DATA && r->sync != DLS_SYNC_GROUP) {
        rds_free(r);
        return fail(w, DLS_ERR_INVAL, 0, "unknown sync policy");
    }
    const uint8_t *want_id = s ? s->id : NULL;
    uint64_t want_maxlen = create ? 0 : r->maxlen;
    rc = session(r, false, w);
    if (!rc && mode == DLS_OPEN_APPEND)
        rc = prepare_append(r, w);
    if (!rc && create)
        rc = run_create(r, want_id, w);
    if (!rc)
        rc = check_layout(r, create, create ? NULL : want_id, want_maxlen, w);
    if (!rc)
        rc = wrap(out, r);
    if (rc)
        rds_free(r);
    return rc;
}

int dls_redis_create(dls_medium **out, const char *url, const dls_redis_settings *s,
                     dls_where *w)
{
    return open_common(out, url, DLS_OPEN_APPEND, true, s, w);
}

int dls_redis_open(dls_medium **out, const char *url, dls_open_mode mode,
                   const dls_redis_settings *s, dls_where *w)
{
    return open_common(out, url, mode, false, s, w);
}
