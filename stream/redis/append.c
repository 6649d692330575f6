/* daolease — the Redis medium's appends: one script call per batch (docs/redis.md,
 * "Layout" and "Limits"), followed by WAIT in the same round trip when
 * replicas are required. */
#include <string.h>

#include "stream/redis/handle.h"

static void build_append(rds *r, bool sha, const uint8_t *const *recs, const size_t *lens,
                         size_t count)
{
    rds_buf_reset(&r->out);
    rds_buf_array(&r->out, 3 + K_COUNT + 3 + count);
    if (sha) {
        rds_buf_bulk(&r->out, "EVALSHA", 7);
        rds_buf_bulk(&r->out, r->sha, 40);
    } else {
        rds_buf_bulk(&r->out, "EVAL", 4);
        rds_buf_bulk(&r->out, rds_append_lua, rds_append_lua_len);
    }
    rds_buf_bulk(&r->out, RDS_NKEYS, 1);
    for (int k = 0; k < K_COUNT; k++)
        rds_buf_bulk(&r->out, r->keys[k], r->klen[k]);
    rds_buf_bulk(&r->out, r->idhex, 32);
    rds_buf_bulk(&r->out, r->token, r->token_len);
    char expect[24] = "";
    if (r->token_len && r->fence_next_known)
        rds_u64s(expect, r->fence_next);
    rds_buf_bulk(&r->out, expect, strlen(expect));
    for (size_t i = 0; i < count; i++)
        rds_buf_bulk(&r->out, recs[i], lens[i]);
    if (r->replicas) {
        char n[24], t[24];
        rds_u64s(n, r->replicas);
        /* the server's wait ends before this call's deadline */
        rds_u64s(t, r->conn.timeout_ms > 4 ? r->conn.timeout_ms * 3 / 4 : 1);
        rds_buf_cmdv(&r->out, 3, "WAIT", n, t);
    }
}

static int append_locked(rds *r, const uint8_t *const *recs, const size_t *lens,
                         size_t count, uint64_t *first, dls_where *w)
{
    int rc = rds_ensure(r, w);
    if (rc)
        return rc;
    size_t nrep = r->replicas ? 2 : 1;
    redisReply *rep[2] = {NULL, NULL};
    bool sha = r->have_sha;
    for (;;) {
        build_append(r, sha, recs, lens, count);
        rc = rds_conn_call(&r->conn, &r->out, nrep, rep, w);
        if (rc) {
            r->fence_next_known = false; /* applied or not: unknown */
            return rc;
        }
        if (sha && rds_err_starts(rep[0], "NOSCRIPT")) {
            /* the server lost its script cache (restart, SCRIPT FLUSH):
             * EVAL runs and caches it again, EVALSHA works afterwards */
            rds_free_replies(rep, nrep);
            sha = false;
            continue;
        }
        break;
    }
    redisReply *x = rep[0];
    if (x->type == REDIS_REPLY_INTEGER && x->integer >= 0) {
        *first = (uint64_t)x->integer;
        r->fence_next = *first + count;
        r->fence_next_known = true;
        if (r->replicas) {
            redisReply *y = rep[1];
            if (y->type != REDIS_REPLY_INTEGER || y->integer < (long long)r->replicas)
                rc = rds_fail(w, DLS_ERR_TRANSPORT, *first,
                          "fewer replicas than required acknowledged the append (WAIT)");
        }
    } else if (rds_is_err(x)) {
        rc = rds_map_err(x, w);
    } else {
        rc = rds_fail(w, DLS_ERR_TRANSPORT, 0, "the append script answered something unexpected");
    }
    rds_free_replies(rep, nrep);
    return rc;
}

int rds_append_batch(void *impl, const uint8_t *const *recs, const size_t *lens,
                            size_t count, uint64_t *first, dls_where *w)
{
    rds *r = impl;
    if (count == 0)
        return rds_fail(w, DLS_ERR_INVAL, 0, "an empty batch");
    if (count > RDS_BATCH_MAX_RECORDS)
        return rds_fail(w, DLS_ERR_TOOBIG, 0, "a Redis batch holds at most 10000 records");
    size_t bytes = 0;
    for (size_t i = 0; i < count; i++) {
        if (lens[i] == 0 || lens[i] > DLS_RECORD_MAX)
            return rds_fail(w, DLS_ERR_RECORD, i, "a record must be 1 … 65536 bytes");
        bytes += lens[i];
        if (bytes > RDS_BATCH_MAX_BYTES)
            return rds_fail(w, DLS_ERR_TOOBIG, i, "a Redis batch holds at most 32 MiB");
    }
    pthread_mutex_lock(&r->mu);
    int rc = append_locked(r, recs, lens, count, first, w);
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int rds_append(void *impl, const uint8_t *rec, size_t n, uint64_t *pos, dls_where *w)
{
    return rds_append_batch(impl, &rec, &n, 1, pos, w);
}
