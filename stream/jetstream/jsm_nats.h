/* daolease — the NATS JetStream medium's shared internals (not installed):
 * the handle and cursor, and the helpers the handle (jetstream.c), the
 * appends (append.c) and the cursors (cursor.c) share. */
#ifndef DLS_JETSTREAM_JSM_NATS_H
#define DLS_JETSTREAM_JSM_NATS_H

#include <nats/nats.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "daolease/fact.h"
#include "daolease/medium_impl.h"
#include "stream/jetstream/jsm.h"
#include "vocab/where.h"

#define HDR_MEDIUM "Dls-Medium"
#define HDR_EXPECT "Nats-Expected-Last-Sequence"
#define DESC_PREFIX "daolease medium "
#define CONFLICT_RETRIES 64 /* a shared writer's retries after another writer's append */
#define PIPE_MAX 256        /* records of a batch published before waiting for their acks */
#define RETRY_PAUSE_MS 100 /* between tries of one call during a failover */
#define FOREIGN_CHECK_MAX 64 /* newest messages of another writer checked for records */

typedef struct jsm {
    pthread_mutex_t mu;     /* appends and seals */
    natsConnection *nc;
    jsCtx *js;
    char stream[DLS_JETSTREAM_NAME_MAX + 1];
    char *subject;
    char hex[33];
    uint8_t id[DLS_MEDIUM_ID_LEN];
    unsigned timeout_ms;    /* the bound of one request */
    unsigned retry_ms;      /* the bound of one append call, all its tries */
    bool exclusive;
    bool last_known;        /* `last` is the stream's last sequence as this writer knows it */
    uint64_t last;
    bool sealed;
    uint64_t foreign;       /* 0, or the sequence of a message that is not a
                               daolease record, found by this writer: every
                               later append fails (docs/jetstream.md, "A
                               broken medium") */
    /* a pipelined batch in flight (append_pipelined), under amu */
    pthread_mutex_t amu;
    pthread_cond_t acv;
    bool a_active;
    size_t a_count, a_done;
    natsMsg *a_msg[PIPE_MAX];   /* identity of each message (never dereferenced) */
    uint64_t a_seq[PIPE_MAX];   /* 0: no answer yet; else the stored sequence */
    int a_err[PIPE_MAX];        /* 0, or ERR_* below */
} jsm;

enum { ERR_CONFLICT = 1, ERR_MAYBE, ERR_SEALED, ERR_OTHER };

typedef struct jcur {
    jsm *m;
    uint64_t seq;           /* the next sequence to read (position + 1) */
    uint64_t last_hint;     /* the last sequence seen in stream info */
    natsMsg *held;          /* the record returned last (borrowed by the caller) */
} jcur;

static inline int fail(dls_where *w, int code, const char *reason)
{
    return dls_where_fill(w, code, (dls_where){.reason = reason});
}

/* A failed request: transport trouble unless the server said otherwise. */
static inline int transport(dls_where *w, natsStatus s)
{
    if (s == NATS_TIMEOUT)
        return fail(w, DLS_ERR_TRANSPORT, "JetStream did not answer within timeout_ms");
    if (s == NATS_NO_RESPONDERS)
        return fail(w, DLS_ERR_TRANSPORT,
                    "no JetStream responder (stream leader unavailable, or JetStream off)");
    if (s == NATS_NO_SERVER || s == NATS_CONNECTION_CLOSED || s == NATS_CONNECTION_DISCONNECTED)
        return fail(w, DLS_ERR_TRANSPORT, "no NATS server reachable");
    if (s == NATS_INSUFFICIENT_BUFFER)
        return fail(w, DLS_ERR_TRANSPORT, "reconnecting to a NATS server");
    if (s == NATS_NO_MEMORY)
        return fail(w, DLS_ERR_NOMEM, "out of memory in the NATS client");
    return fail(w, DLS_ERR_TRANSPORT, "a JetStream request failed");
}

static inline void jopts(const jsm *m, jsOptions *o)
{
    jsOptions_Init(o);
    o->Wait = m->timeout_ms;
}

/* A failure worth another try within the same call: the connection is
 * re-established or the stream's leader re-elected meanwhile. */
static inline bool transient(natsStatus s, jsErrCode ec)
{
    /* "stream not found" and "JetStream not enabled" too: a server that
     * just rejoined the cluster answers so until it has caught up (a stream
     * really gone, or a server without JetStream, fails at the deadline) */
    if (ec == JSStreamWrongLastSequenceErr || ec == JSStreamSealedErr)
        return false;
    if (ec)
        return true; /* cluster unavailable, not leader, stream offline … */
    return s == NATS_TIMEOUT || s == NATS_NO_RESPONDERS || s == NATS_INSUFFICIENT_BUFFER ||
           s == NATS_CONNECTION_DISCONNECTED || s == NATS_NOT_YET_CONNECTED ||
           s == NATS_NO_SERVER;
}

/* The wait for one request: what is left of the call's deadline, at least 50 ms. */
static inline int64_t left_of(int64_t deadline)
{
    int64_t left = deadline - nats_Now();
    return left > 50 ? left : 50;
}

/* The wait for one try of an append: timeout_ms, or what is left of the
 * call's deadline when less (a try that timed out is followed by another
 * one, answered by whichever server leads by then). */
static inline int64_t try_wait(const jsm *m, int64_t deadline)
{
    int64_t left = left_of(deadline);
    return left < (int64_t)m->timeout_ms ? left : (int64_t)m->timeout_ms;
}

/* Is msg a record of this medium: its Dls-Medium header, 1 … 65536 bytes
 * (what cursors accept)? */
static inline bool jsm_is_record(const jsm *m, natsMsg *msg)
{
    const char *hdr = NULL;
    int n = natsMsg_GetDataLength(msg);
    return natsMsgHeader_Get(msg, HDR_MEDIUM, &hdr) == NATS_OK && hdr &&
           !strcmp(hdr, m->hex) && n > 0 && (size_t)n <= DLS_RECORD_MAX;
}

/* append.c */
int jsm_refresh(jsm *m, int64_t deadline, dls_where *w);
int jsm_append_batch(void *impl, const uint8_t *const *recs, const size_t *lens, size_t count,
                     uint64_t *first, dls_where *w);
int jsm_append(void *impl, const uint8_t *rec, size_t n, uint64_t *pos, dls_where *w);
int jsm_seal(void *impl, uint64_t *pos, dls_where *w);

/* cursor.c */
int jsm_cursor_new(void *impl, uint64_t from, void **cimpl);
void jsm_cursor_del(void *cimpl);
dls_next jsm_cursor_next(void *cimpl, dls_record *rec, dls_where *w);

#endif
