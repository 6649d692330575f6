/* daolease — a minimal blocking Redis connection with a deadline per call.
 *
 * hiredis is used only for the RESP reply parser (redisReader); the socket is
 * ours so that every call is bounded by one deadline (connect, send and
 * receive together), writes never raise SIGPIPE (send with MSG_NOSIGNAL) and
 * the descriptor is close-on-exec from its creation. redisConnectWithTimeout
 * bounds each system call rather than the call, and its write(2) raises
 * SIGPIPE in the whole process when the server has closed the connection.
 *
 * Internal to redis/.
 */
#ifndef DLS_REDIS_CONN_H
#define DLS_REDIS_CONN_H

#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "daolease/error.h"

/* A growable output buffer of RESP commands. */
typedef struct rds_buf {
    char *p;
    size_t n, cap;
    int failed; /* an allocation failed: the buffer must not be sent */
} rds_buf;

void rds_buf_reset(rds_buf *b);
void rds_buf_free(rds_buf *b);
/* Appends one command as a RESP array of bulk strings. */
void rds_buf_cmd(rds_buf *b, int argc, const char *const *argv, const size_t *lens);
/* Low level: an array header of n elements, then n bulk strings. */
void rds_buf_array(rds_buf *b, size_t n);
void rds_buf_bulk(rds_buf *b, const void *p, size_t n);
/* Convenience for commands whose arguments are C strings. */
void rds_buf_cmdv(rds_buf *b, int argc, ...);

typedef struct rds_conn {
    int fd;               /* -1 when not connected */
    redisReader *rd;
    unsigned timeout_ms;
} rds_conn;

void rds_conn_init(rds_conn *c, unsigned timeout_ms);

/* Connects to host:port within the timeout. DLS_ERR_TRANSPORT (w->reason,
 * w->sys_errno) when the host does not resolve, refuses or does not answer. */
int rds_conn_open(rds_conn *c, const char *host, const char *port, dls_where *w);

/* Closes the connection; safe on a closed one. */
void rds_conn_close(rds_conn *c);

/* Sends `out` and reads `nrep` replies into rep[0 … nrep-1] (each to be freed
 * with freeReplyObject), all within one timeout. On failure the connection is
 * closed, no reply is returned and the answer is DLS_ERR_TRANSPORT
 * (DLS_ERR_NOMEM when `out` failed to grow). */
int rds_conn_call(rds_conn *c, const rds_buf *out, size_t nrep, redisReply **rep,
                  dls_where *w);

#endif
