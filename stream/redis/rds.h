/* daolease — internals of the Redis Streams medium (not installed). */
#ifndef DLS_REDIS_RDS_H
#define DLS_REDIS_RDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/redis.h"
#include "vocab/dec.h"

#define RDS_KEY_MAX 256u            /* bytes of a medium's key */
#define RDS_PAGE 512u               /* entries per XRANGE page */
#define RDS_BATCH_MAX_RECORDS 10000u  /* records in one append script call */
#define RDS_BATCH_MAX_BYTES (32u << 20) /* payload bytes in one append script call */

/* A parsed redis:// URL. Strings are owned (rds_url_free). */
typedef struct rds_url {
    char *host;          /* without brackets */
    char port[8];        /* decimal, canonical (no leading zeros): 1 … 65535 */
    char *key;           /* percent-decoded, no NUL inside */
    char *user;          /* NULL when absent */
    char *pass;          /* NULL when absent */
    char *name;          /* redis://host:port/key as written, without user, password, query */
    bool has_timeout, has_maxlen, has_replicas, has_db, has_sync;
    unsigned timeout_ms;
    uint64_t maxlen;
    unsigned replicas;
    unsigned db;
    dls_sync sync;
} rds_url;

/* Parses `url` (grammar in include/daolease/redis.h). 0, DLS_ERR_CONFIG
 * (w->reason, w->offset the byte offset in the URL) or DLS_ERR_NOMEM. */
int rds_url_parse(const char *url, rds_url *u, dls_where *w);
void rds_url_free(rds_url *u);

#endif
