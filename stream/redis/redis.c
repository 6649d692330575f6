/* daolease — the Redis Streams medium: a backend of medium_impl.h.
 *
 * Layout and decisions: include/daolease/redis.h and docs/redis.md.
 * Positions are the `pos` field of each entry, assigned by the append
 * script under Redis's single-threaded script execution, so they are dense
 * and unique whatever the number of writers. This file holds the handle:
 * its session (connect, AUTH, SELECT, the id check), opening and creating;
 * appends are in append.c, cursors in cursor.c, the scripts in scripts.c.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/redis/handle.h"
#include "vocab/hex.h"

/* ---- ids ---------------------------------------------------------------- */

/* ---- session ------------------------------------------------------------ */

/* Connects, authenticates, selects the db and (when `verify`) checks that
 * K:id still holds the id this handle opened. Mutex held. */
int rds_session(rds *r, bool verify, dls_where *w)
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
        rds_u64s(db, r->db);
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
    if (r->pass && rds_is_err(rep[i++]))
        rc = rds_fail(w, DLS_ERR_PERM, 0, "Redis refused the credentials (AUTH)");
    if (!rc && r->db && rds_is_err(rep[i++]))
        rc = rds_fail(w, DLS_ERR_CONFIG, 0, "Redis refused SELECT of the URL's db");
    if (!rc && verify) {
        redisReply *x = rep[i];
        if (rds_is_err(x))
            rc = rds_map_err(x, w);
        else if (x->type == REDIS_REPLY_NIL)
            rc = rds_fail(w, DLS_ERR_MEDIUM_ID, 0, "the medium's id key is gone (medium deleted?)");
        else if (!rds_str_is(x, r->idhex))
            rc = rds_fail(w, DLS_ERR_MEDIUM_ID, 0, "the medium's id changed (medium recreated?)");
    }
    rds_free_replies(rep, n);
    if (rc)
        rds_conn_close(&r->conn);
    return rc;
}

int rds_ensure(rds *r, dls_where *w)
{
    if (r->conn.fd >= 0)
        return 0;
    return rds_session(r, true, w);
}

/* ---- open / create ------------------------------------------------------ */

static void rds_free(rds *r)
{
    if (!r)
        return;
    rds_fence_release(r);
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

const dls_medium_ops rds_ops = {
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
        return rds_fail(w, DLS_ERR_CONFIG, 0, "a Redis user name without a password");
    }
    if ((user && !(r->user = strdup(user))) || (pass && !(r->pass = strdup(pass)))) {
        rds_free(r);
        return DLS_ERR_NOMEM;
    }
    size_t kn = strlen(u->key);
    for (int k = 0; k < K_COUNT; k++) {
        size_t sn = strlen(rds_key_suffix[k]);
        r->keys[k] = malloc(kn + sn + 1);
        if (!r->keys[k]) {
            rds_free(r);
            return DLS_ERR_NOMEM;
        }
        memcpy(r->keys[k], u->key, kn);
        memcpy(r->keys[k] + kn, rds_key_suffix[k], sn + 1);
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
            return rds_fail(w, DLS_ERR_SODIUM, 0, "libsodium failed to initialise");
        randombytes_buf(r->id, DLS_MEDIUM_ID_LEN);
    }
    dls_hex16(r->id, r->idhex);
    char ml[24];
    rds_u64s(ml, r->maxlen);
    rds_buf_reset(&r->out);
    rds_buf_array(&r->out, 3 + K_COUNT + 2);
    rds_buf_bulk(&r->out, "EVAL", 4);
    rds_buf_bulk(&r->out, rds_create_lua, rds_create_lua_len);
    rds_buf_bulk(&r->out, RDS_NKEYS, 1);
    for (int k = 0; k < K_COUNT; k++)
        rds_buf_bulk(&r->out, r->keys[k], r->klen[k]);
    rds_buf_bulk(&r->out, r->idhex, 32);
    rds_buf_bulk(&r->out, ml, strlen(ml));
    redisReply *x;
    int rc = rds_conn_call(&r->conn, &r->out, 1, &x, w);
    if (rc)
        return rc;
    if (rds_is_err(x))
        rc = rds_map_err(x, w);
    else if (x->type != REDIS_REPLY_INTEGER)
        rc = rds_fail(w, DLS_ERR_TRANSPORT, 0, "the create script answered something unexpected");
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
    rds_buf_cmd(&r->out, 3, (const char *const[]){"SCRIPT", "LOAD", rds_append_lua},
                (const size_t[]){6, 4, rds_append_lua_len});
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
    } else if (rds_err_has(x, "NOPERM")) {
        r->have_sha = false; /* an ACL without SCRIPT LOAD: EVAL each time */
    } else if (rds_is_err(x)) {
        rc = rds_map_err(x, w);
    }
    if (!rc && durable) {
        redisReply *ao = rep[1], *fs = rep[2];
        if (rds_is_err(ao) || rds_is_err(fs) || ao->type != REDIS_REPLY_ARRAY ||
            fs->type != REDIS_REPLY_ARRAY || ao->elements != 2 || fs->elements != 2)
            rc = rds_fail(w, DLS_ERR_CONFIG, 0,
                      "sync data/group: cannot verify the server's persistence (CONFIG GET "
                      "refused; grant +config|get or open with sync none)");
        else if (!rds_str_is(ao->element[1], "yes") || !rds_str_is(fs->element[1], "always"))
            rc = rds_fail(w, DLS_ERR_CONFIG, 0,
                      "sync data/group needs the server's appendonly yes and appendfsync always");
    }
    rds_free_replies(rep, n);
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
        if (rds_is_err(t)) {
            rc = rds_map_err(t, w);
            break;
        }
        if (rds_str_is(t, "none"))
            continue;
        any = true;
        if (!rds_str_is(t, k == K_STREAM ? "stream" : "string"))
            rc = rds_fail(w, DLS_ERR_REDIS_TYPE, 0,
                      k == K_STREAM ? "the medium's key holds another type than a stream"
                                    : "a key of the medium (:next, :id, :sealed, :maxlen, :writer) is not a string");
    }
    if (!rc && !any)
        rc = rds_fail(w, DLS_ERR_NOTFOUND, 0, "no medium at this key");
    redisReply *idr = rep[K_COUNT], *mlr = rep[K_COUNT + 1];
    if (!rc) {
        uint8_t id[DLS_MEDIUM_ID_LEN];
        if (idr->type != REDIS_REPLY_STRING)
            rc = rds_fail(w, DLS_ERR_MEDIUM_ID, 0, "the key has no :id: not a daolease medium");
        else if (dls_unhex16(idr->str, idr->len, id) != 0)
            rc = rds_fail(w, DLS_ERR_MEDIUM_ID, 0, "the medium's :id is not 32 lower-case hex characters");
        else if (created && memcmp(id, r->id, DLS_MEDIUM_ID_LEN) != 0)
            rc = rds_fail(w, DLS_ERR_MEDIUM_ID, 0, "the medium's id changed while it was created");
        else if (want_id && memcmp(id, want_id, DLS_MEDIUM_ID_LEN) != 0)
            rc = rds_fail(w, DLS_ERR_MEDIUM_ID, 0, "the medium's id is not the expected one");
        else {
            memcpy(r->id, id, DLS_MEDIUM_ID_LEN);
            dls_hex16(r->id, r->idhex);
        }
    }
    if (!rc) {
        uint64_t ml = 0;
        if (mlr->type == REDIS_REPLY_STRING &&
            (dls_dec_u64(mlr->str, mlr->len, &ml) != 0 || ml == 0))
            rc = rds_fail(w, DLS_ERR_REDIS_TYPE, 0, "the medium's :maxlen is not a positive integer");
        else if (want_maxlen && want_maxlen != ml)
            rc = rds_fail(w, DLS_ERR_CONFIG, 0, "the medium's declared maxlen differs from the requested one");
        else
            r->maxlen = ml;
    }
    rds_free_replies(rep, n);
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
        return rds_fail(w, DLS_ERR_INVAL, 0, "no output handle");
    *out = NULL;
    if (mode != DLS_OPEN_READ && mode != DLS_OPEN_APPEND)
        return rds_fail(w, DLS_ERR_INVAL, 0, "unknown open mode");
    rds *r;
    int rc = rds_make(&r, url, mode, s, w);
    if (rc)
        return rc;
    if (r->sync != DLS_SYNC_NONE && r->sync != DLS_SYNC_DATA && r->sync != DLS_SYNC_GROUP) {
        rds_free(r);
        return rds_fail(w, DLS_ERR_INVAL, 0, "unknown sync policy");
    }
    const uint8_t *want_id = s ? s->id : NULL;
    uint64_t want_maxlen = create ? 0 : r->maxlen;
    rc = rds_session(r, false, w);
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
