/* daolease — the Redis medium: replies of the server, and its errors mapped
 * to daolease codes. */
#include <stdio.h>
#include <string.h>

#include "stream/redis/handle.h"

void rds_free_replies(redisReply **rep, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (rep[i])
            freeReplyObject(rep[i]);
}

bool rds_is_err(const redisReply *x)
{
    return x && x->type == REDIS_REPLY_ERROR;
}

bool rds_err_starts(const redisReply *x, const char *word)
{
    size_t n = strlen(word);
    return rds_is_err(x) && x->len >= n && memcmp(x->str, word, n) == 0;
}

bool rds_err_has(const redisReply *x, const char *word)
{
    return rds_is_err(x) && x->str && strstr(x->str, word) != NULL;
}

bool rds_str_is(const redisReply *x, const char *s)
{
    size_t n = strlen(s);
    return x && (x->type == REDIS_REPLY_STRING || x->type == REDIS_REPLY_STATUS) &&
           x->len == n && memcmp(x->str, s, n) == 0;
}

/* Maps an error reply of the server to a code and a static reason. */
int rds_map_err(const redisReply *x, dls_where *w)
{
    if (rds_err_starts(x, "DLSSEALED"))
        return rds_fail(w, DLS_ERR_SEALED, 0, "the medium is sealed (or a seal is followed by a record)");
    if (rds_err_starts(x, "DLSNOID"))
        return rds_fail(w, DLS_ERR_MEDIUM_ID, 0, "the medium's id key is gone (medium deleted?)");
    if (rds_err_starts(x, "DLSID"))
        return rds_fail(w, DLS_ERR_MEDIUM_ID, 0, "the medium's id changed (medium recreated?)");
    if (rds_err_starts(x, "DLSFENCED"))
        return rds_fail(w, DLS_ERR_LOCKED, 0,
                        "another writer holds the medium's <key>:writer fence (or this "
                        "writer's fence was cleared)");
    if (rds_err_starts(x, "DLSNEXT"))
        return rds_fail(w, DLS_ERR_CORRUPT, 0,
                        "the medium's :next key is missing, not decimal or not above the last "
                        "entry's pos (tampered?): appends would reuse positions");
    if (rds_err_starts(x, "DLSENTRY"))
        return rds_fail(w, DLS_ERR_CORRUPT, 0,
                        "the stream's last entry is not a record (no decimal pos, or no rec "
                        "of 1 to 65536 bytes: an XADD by hand?): readers stop at it; XDEL it "
                        "or move to a new medium (docs/redis.md, A broken medium)");
    if (rds_err_starts(x, "DLSLOST"))
        return rds_fail(w, DLS_ERR_CORRUPT, 0,
                        "the medium's :next is not where its one writer left it: records it "
                        "appended are gone (a failover to a replica that lacked them, a restore?)");
    if (rds_err_starts(x, "DLSEXISTS"))
        return rds_fail(w, DLS_ERR_EXISTS, 0, "a medium (or one of its keys) exists at this key");
    if (rds_err_has(x, "WRONGTYPE"))
        return rds_fail(w, DLS_ERR_REDIS_TYPE, 0, "a key of the medium holds another Redis type");
    if (rds_err_starts(x, "NOAUTH") || rds_err_starts(x, "WRONGPASS"))
        return rds_fail(w, DLS_ERR_PERM, 0, "Redis refused the credentials (AUTH)");
    if (rds_err_starts(x, "NOPERM") || rds_err_has(x, "NOPERM"))
        return rds_fail(w, DLS_ERR_PERM, 0, "a Redis ACL refused a command or key");
    if (rds_err_starts(x, "OOM") || rds_err_has(x, "OOM"))
        return rds_fail(w, DLS_ERR_TRANSPORT, 0, "Redis is out of memory (maxmemory)");
    if (rds_err_starts(x, "READONLY"))
        return rds_fail(w, DLS_ERR_TRANSPORT, 0, "Redis is a read-only replica");
    if (rds_err_starts(x, "LOADING") || rds_err_starts(x, "BUSY") || rds_err_starts(x, "TRYAGAIN"))
        return rds_fail(w, DLS_ERR_TRANSPORT, 0, "Redis is busy or loading");
    if (rds_err_starts(x, "MOVED") || rds_err_starts(x, "ASK") || rds_err_starts(x, "CROSSSLOT"))
        return rds_fail(w, DLS_ERR_CONFIG, 0, "the medium's keys are on another cluster node (use a hash tag key)");
    return rds_fail(w, DLS_ERR_TRANSPORT, 0, "Redis answered an error");
}

void rds_u64s(char out[24], uint64_t v)
{
    snprintf(out, 24, "%llu", (unsigned long long)v);
}

