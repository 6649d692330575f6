/* daolease — the Redis medium's handle, shared by its files (not installed).
 *
 * The medium is split along what a reader looks for: the layout and the Lua
 * scripts (scripts.c, the interoperability contract), replies and errors
 * (reply.c), appends (append.c), cursors (cursor.c), and the handle's
 * session, opening and creation (redis.c). Layout and decisions:
 * include/daolease/redis.h and docs/redis.md.
 */
#ifndef DLS_REDIS_HANDLE_H
#define DLS_REDIS_HANDLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/medium_impl.h"
#include "daolease/redis.h"
#include "stream/redis/conn.h"
#include "stream/redis/rds.h"

#include "vocab/where.h"

enum { K_STREAM, K_NEXT, K_ID, K_SEALED, K_MAXLEN, K_WRITER, K_COUNT };
#define RDS_NKEYS "6" /* K_COUNT as the scripts' numkeys argument */

/* The key suffixes of the layout, in the order above ("" for K itself). */
extern const char *const rds_key_suffix[K_COUNT];

/* The append and create scripts (scripts.c) and their lengths. */
extern const char rds_append_lua[];
extern const size_t rds_append_lua_len;
extern const char rds_create_lua[];
extern const size_t rds_create_lua_len;
/* The writer fence's scripts (fence.c). */
extern const char rds_fence_lua[];
extern const size_t rds_fence_lua_len;
extern const char rds_unfence_lua[];
extern const size_t rds_unfence_lua_len;
extern const char rds_takeover_lua[];
extern const size_t rds_takeover_lua_len;

#define RDS_TOKEN_MAX 160u /* the writer token: 32 hex, host name, pid */

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
    char token[RDS_TOKEN_MAX]; /* the writer token this handle set in K:writer */
    size_t token_len;          /* 0: the handle holds no fence */
    uint64_t fence_next;       /* with a fence: where this one writer left K:next */
    bool fence_next_known;     /* false after an append whose outcome is unknown */
} rds;

/* The medium_impl.h operations of a Redis medium (redis.c). */
extern const dls_medium_ops rds_ops;

/* ---- replies (reply.c) -------------------------------------------------- */

/* Fills w (offset, static reason) when given; answers `code`. */
static inline int rds_fail(dls_where *w, int code, uint64_t off, const char *reason)
{
    return dls_where_fill(w, code, (dls_where){.offset = off, .reason = reason});
}

void rds_free_replies(redisReply **rep, size_t n);
bool rds_is_err(const redisReply *x);
bool rds_err_starts(const redisReply *x, const char *word);
bool rds_err_has(const redisReply *x, const char *word);
bool rds_str_is(const redisReply *x, const char *s);
/* Maps an error reply of the server to a code and a static reason. */
int rds_map_err(const redisReply *x, dls_where *w);
void rds_u64s(char out[24], uint64_t v);

/* ---- session (redis.c) -------------------------------------------------- */

/* Connects, authenticates, selects the db and (when `verify`) checks that
 * K:id still holds the id this handle opened. Mutex held. */
int rds_session(rds *r, bool verify, dls_where *w);
/* rds_session(r, true, w) unless connected. Mutex held. */
int rds_ensure(rds *r, dls_where *w);

/* ---- the medium_impl.h operations (append.c, cursor.c) ------------------ */

int rds_append_batch(void *impl, const uint8_t *const *recs, const size_t *lens, size_t count,
                     uint64_t *first, dls_where *w);
int rds_append(void *impl, const uint8_t *rec, size_t n, uint64_t *pos, dls_where *w);
int rds_cursor_new(void *impl, uint64_t from, void **cimpl);
void rds_cursor_del(void *cimpl);
dls_next rds_cursor_next(void *cimpl, dls_record *rec, dls_where *w);

/* ---- the writer fence (fence.c) ----------------------------------------- */

/* Clears K:writer if it still holds this handle's token (one bounded round
 * trip, errors ignored: a fence left behind refuses appends, never admits
 * one). Called when the handle is freed. */
void rds_fence_release(rds *r);

#endif
