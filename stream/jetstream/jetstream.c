/* daolease — the NATS JetStream medium: a backend of medium_impl.h over the
 * nats.c client. Layout, URLs and guarantees: include/daolease/jetstream.h
 * and docs/jetstream.md. */
#include <inttypes.h>
#include <nats/nats.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daolease/medium_impl.h"
#include "stream/jetstream/jsm.h"

#define HDR_MEDIUM "Dls-Medium"
#define HDR_EXPECT "Nats-Expected-Last-Sequence"
#define DESC_PREFIX "daolease medium "
#define CONFLICT_RETRIES 64 /* a shared writer's retries after another writer's append */
#define PIPE_MAX 256        /* records of a batch published before waiting for their acks */

typedef struct jsm {
    pthread_mutex_t mu;     /* appends and seals */
    natsConnection *nc;
    jsCtx *js;
    char stream[DLS_JETSTREAM_NAME_MAX + 1];
    char *subject;
    char hex[33];
    uint8_t id[DLS_MEDIUM_ID_LEN];
    unsigned timeout_ms;
    bool exclusive;
    bool last_known;        /* `last` is the stream's last sequence as this writer knows it */
    uint64_t last;
    bool sealed;
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

static int fail(dls_where *w, int code, const char *reason)
{
    if (w) {
        w->offset = 0;
        w->line = 0;
        w->reason = reason;
        w->rule = 0;
        w->sys_errno = 0;
    }
    return code;
}

static void hex_of(const uint8_t *id, char out[33])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < DLS_MEDIUM_ID_LEN; i++) {
        out[2 * i] = digits[id[i] >> 4];
        out[2 * i + 1] = digits[id[i] & 15];
    }
    out[32] = 0;
}

static int unhex(const char *s, uint8_t *id)
{
    for (int i = 0; i < 32; i++) {
        char c = s[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0)
            return -1;
        if (i % 2 == 0)
            id[i / 2] = (uint8_t)(v << 4);
        else
            id[i / 2] |= (uint8_t)v;
    }
    return s[32] == 0 ? 0 : -1;
}

/* A failed request: transport trouble unless the server said otherwise. */
static int transport(dls_where *w, natsStatus s)
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

static void jsm_free(jsm *m)
{
    if (!m)
        return;
    if (m->js) { /* no acknowledgement handler may run after the free */
        jsPubOptions po;
        jsPubOptions_Init(&po);
        po.MaxWait = m->timeout_ms;
        js_PublishAsyncComplete(m->js, &po);
    }
    if (m->nc)
        natsConnection_Close(m->nc);
    jsCtx_Destroy(m->js);
    if (m->nc) {
        natsConnection_Close(m->nc);
        natsConnection_Destroy(m->nc);
    }
    free(m->subject);
    pthread_mutex_destroy(&m->mu);
    pthread_mutex_destroy(&m->amu);
    pthread_cond_destroy(&m->acv);
    free(m);
}

static void jsm_del(void *impl)
{
    jsm_free(impl);
}

static void jopts(const jsm *m, jsOptions *o)
{
    jsOptions_Init(o);
    o->Wait = m->timeout_ms;
}

/* The acknowledgement of one pipelined publish (a client thread). */
static void on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure)
{
    (void)js;
    jsm *m = closure;
    pthread_mutex_lock(&m->amu);
    for (size_t i = 0; m->a_active && i < m->a_count; i++) {
        if (m->a_msg[i] != msg || m->a_seq[i] || m->a_err[i])
            continue;
        if (pa) {
            m->a_seq[i] = pa->Sequence;
        } else {
            jsErrCode ec = pae ? pae->ErrCode : 0;
            m->a_err[i] = ec == JSStreamWrongLastSequenceErr ? ERR_CONFLICT
                        : ec == JSStreamSealedErr            ? ERR_SEALED
                        : ec == JSStreamNotFoundErr          ? ERR_OTHER
                                                             : ERR_MAYBE;
        }
        m->a_done++;
        pthread_cond_broadcast(&m->acv);
        break;
    }
    pthread_mutex_unlock(&m->amu);
    natsMsg_Destroy(msg);
}

static int connect_to(jsm *m, const jsm_url *u, dls_where *w)
{
    /* A reply-subject prefix of our own randomness: the client's inbox
     * names come from a generator that a fork() copies, so two processes
     * forked after using the client would otherwise share inboxes and read
     * each other's answers (seen: a stream's info answered with another's). */
    if (sodium_init() < 0)
        return fail(w, DLS_ERR_SODIUM, "libsodium failed to initialise");
    uint8_t rnd[12];
    randombytes_buf(rnd, sizeof rnd);
    char prefix[40] = "_INBOX.";
    for (size_t i = 0; i < sizeof rnd; i++)
        snprintf(prefix + 7 + 2 * i, 3, "%02x", rnd[i]);
    natsOptions *o = NULL;
    natsStatus s = natsOptions_Create(&o);
    if (s == NATS_OK)
        s = natsOptions_SetCustomInboxPrefix(o, prefix);
    if (s == NATS_OK)
        s = natsOptions_SetServers(o, (const char **)u->servers, (int)u->nservers);
    if (s == NATS_OK)
        s = natsOptions_SetTimeout(o, m->timeout_ms);
    if (s == NATS_OK)
        s = natsOptions_SetAllowReconnect(o, true);
    if (s == NATS_OK)
        s = natsOptions_SetMaxReconnect(o, -1);
    if (s == NATS_OK)
        s = natsOptions_SetReconnectWait(o, 100);
    if (s == NATS_OK)
        s = natsOptions_SetPingInterval(o, 1000);
    if (s == NATS_OK)
        s = natsOptions_SetMaxPingsOut(o, 2);
    if (s == NATS_OK) /* a publish made while reconnecting fails at once instead of
                        * being buffered and stored long after it was answered failed */
        s = natsOptions_SetReconnectBufSize(o, 1);
    if (s == NATS_OK)
        s = natsOptions_SetSendAsap(o, true);
    if (s == NATS_OK)
        s = natsOptions_SetName(o, "daolease");
    if (s == NATS_OK)
        s = natsConnection_Connect(&m->nc, o);
    natsOptions_Destroy(o);
    if (s != NATS_OK) {
        m->nc = NULL;
        return s == NATS_NO_MEMORY ? fail(w, DLS_ERR_NOMEM, "out of memory in the NATS client")
                                   : fail(w, DLS_ERR_TRANSPORT, "no NATS server of the URL reachable");
    }
    jsOptions jo;
    jopts(m, &jo);
    jo.PublishAsync.AckHandler = on_ack;
    jo.PublishAsync.AckHandlerClosure = m;
    jo.PublishAsync.MaxPending = PIPE_MAX;
    s = natsConnection_JetStream(&m->js, m->nc, &jo);
    if (s != NATS_OK)
        return transport(w, s);
    return 0;
}

static jsm *jsm_new(const jsm_url *u, const dls_jetstream_settings *s)
{
    jsm *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca)) {
        free(m);
        return NULL;
    }
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    bool ok = pthread_cond_init(&m->acv, &ca) == 0;
    pthread_condattr_destroy(&ca);
    if (!ok) {
        free(m);
        return NULL;
    }
    if (pthread_mutex_init(&m->mu, NULL) || pthread_mutex_init(&m->amu, NULL)) {
        free(m);
        return NULL;
    }
    snprintf(m->stream, sizeof m->stream, "%s", u->stream);
    m->timeout_ms = u->has_timeout ? u->timeout_ms : s->timeout_ms ? s->timeout_ms : 2000;
    m->exclusive = s->exclusive;
    return m;
}

/* What a stream's configuration provides (jetstream.h, "Sync policies"). */
static dls_sync provided_sync(const jsStreamConfig *c, dls_sync asked)
{
    if (c->Storage != js_FileStorage || c->Replicas < 2)
        return DLS_SYNC_NONE;
    return asked == DLS_SYNC_GROUP ? DLS_SYNC_GROUP : DLS_SYNC_DATA;
}

/* Checks a stream's configuration; fills the medium id, subject and what
 * the medium declares. */
static int adopt(jsm *m, const jsStreamInfo *si, const jsm_url *u,
                 const dls_jetstream_settings *s, dls_open_mode mode, dls_medium_info *info,
                 dls_where *w)
{
    const jsStreamConfig *c = si->Config;
    const char *d = c ? c->Description : NULL;
    if (!d || strncmp(d, DESC_PREFIX, strlen(DESC_PREFIX)) ||
        unhex(d + strlen(DESC_PREFIX), m->id))
        return fail(w, DLS_ERR_MEDIUM_ID,
                    "the stream's description is not \"daolease medium <32 hex>\" "
                    "(a stream daolease did not make)");
    if (s->id && memcmp(s->id, m->id, DLS_MEDIUM_ID_LEN))
        return fail(w, DLS_ERR_MEDIUM_ID, "the stream holds a medium with another id");
    hex_of(m->id, m->hex);
    /* sealing makes the server switch a stream to discard-new (nothing more
     * comes in anyway) */
    if (c->Retention != js_LimitsPolicy || (c->Discard != js_DiscardOld && !c->Sealed))
        return fail(w, DLS_ERR_CONFIG,
                    "the stream's retention is not limits with discard-old (neither "
                    "retains everything nor evicts the oldest)");
    if (c->SubjectsLen != 1 || !c->Subjects[0] || strpbrk(c->Subjects[0], "*>"))
        return fail(w, DLS_ERR_CONFIG, "the stream does not have exactly one plain subject");
    if (c->Mirror || c->SourcesLen > 0)
        return fail(w, DLS_ERR_CONFIG, "the stream is a mirror or has sources");
    unsigned want_r = u->has_replicas ? u->replicas : s->replicas;
    if (want_r && (int64_t)want_r != c->Replicas)
        return fail(w, DLS_ERR_CONFIG, "the stream has another number of replicas than asked");
    uint64_t want_max = u->has_max_msgs ? u->max_msgs : s->max_msgs;
    uint64_t max = c->MaxMsgs > 0 ? (uint64_t)c->MaxMsgs : 0;
    if (want_max && want_max != max)
        return fail(w, DLS_ERR_CONFIG, "the stream has another max_msgs bound than asked");
    dls_sync asked = u->has_sync ? u->sync : s->sync;
    dls_sync got = provided_sync(c, asked);
    if (mode == DLS_OPEN_APPEND && asked != DLS_SYNC_NONE && got == DLS_SYNC_NONE)
        return fail(w, DLS_ERR_CONFIG,
                    "sync data or group needs file storage on 2 or more replicas");
    if (!(m->subject = strdup(c->Subjects[0])))
        return fail(w, DLS_ERR_NOMEM, "out of memory");
    bool evicts = c->MaxMsgs > 0 || c->MaxBytes > 0 || c->MaxAge > 0 || c->MaxMsgsPerSubject > 0;
    info->kind = DLS_MEDIUM_JETSTREAM;
    info->retention = evicts ? DLS_RETAIN_EVICT_OLDEST : DLS_RETAIN_ALL;
    info->sync = got;
    info->mode = mode;
    memcpy(info->id, m->id, DLS_MEDIUM_ID_LEN);
    info->name = u->name;
    m->sealed = c->Sealed;
    return 0;
}

/* ---- appends ------------------------------------------------------------- */

#define RETRY_PAUSE_MS 100 /* between tries of one call during a failover */

/* A failure worth another try within the same call: the connection is
 * re-established or the stream's leader re-elected meanwhile. */
static bool transient(natsStatus s, jsErrCode ec)
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
static int64_t left_of(int64_t deadline)
{
    int64_t left = deadline - nats_Now();
    return left > 50 ? left : 50;
}

/* Learns the stream's last sequence and whether it is sealed (by config or
 * by a seal record at its tail), retrying transient failures until the
 * deadline. Called with m->mu held. */
static int refresh(jsm *m, int64_t deadline, dls_where *w)
{
    for (;;) {
        jsOptions jo;
        jopts(m, &jo);
        jo.Wait = left_of(deadline);
        jsStreamInfo *si = NULL;
        jsErrCode ec = 0;
        natsStatus s = js_GetStreamInfo(&si, m->js, m->stream, &jo, &ec);
        if (s == NATS_OK) {
            uint64_t last = si->State.LastSeq, first = si->State.FirstSeq;
            bool sealed = si->Config && si->Config->Sealed;
            jsStreamInfo_Destroy(si);
            if (!sealed && last > 0 && last >= first) {
                natsMsg *msg = NULL;
                ec = 0;
                s = js_GetMsg(&msg, m->js, m->stream, last, &jo, &ec);
                if (s == NATS_OK) {
                    sealed = dls_record_is_seal((const uint8_t *)natsMsg_GetData(msg),
                                                (size_t)natsMsg_GetDataLength(msg));
                    natsMsg_Destroy(msg);
                } else if (ec == JSNoMessageFoundErr) {
                    s = NATS_OK; /* evicted meanwhile: not a seal */
                }
            }
            if (s == NATS_OK) {
                m->last = last;
                m->last_known = true;
                m->sealed = m->sealed || sealed;
                return 0;
            }
        }
        if (!transient(s, ec) || nats_Now() + RETRY_PAUSE_MS >= deadline)
            return ec == JSStreamNotFoundErr
                       ? fail(w, DLS_ERR_TRANSPORT, "the stream no longer exists")
                       : transport(w, s);
        nats_Sleep(RETRY_PAUSE_MS);
    }
}

/* Is the message at `seq` this record (its bytes and this medium's header)? */
static bool stored_is(jsm *m, uint64_t seq, const uint8_t *rec, size_t n, int64_t deadline)
{
    jsOptions jo;
    jopts(m, &jo);
    jo.Wait = left_of(deadline);
    natsMsg *msg = NULL;
    if (js_GetMsg(&msg, m->js, m->stream, seq, &jo, NULL) != NATS_OK)
        return false;
    const char *hdr = NULL;
    bool same = (size_t)natsMsg_GetDataLength(msg) == n &&
                !memcmp(natsMsg_GetData(msg), rec, n) &&
                natsMsgHeader_Get(msg, HDR_MEDIUM, &hdr) == NATS_OK && hdr &&
                !strcmp(hdr, m->hex);
    natsMsg_Destroy(msg);
    return same;
}

/* Publishes one record directly after m->last, retrying transient failures
 * with the same expected sequence until the deadline (so a retry can never
 * land anywhere but right after m->last). 0 (m->last advanced), 1 (the
 * stream's last sequence is not m->last: another writer, or an earlier try
 * of this very record, got there first; *maybe says a try may have been
 * stored), or an error. */
static int publish_one(jsm *m, const uint8_t *rec, size_t n, int64_t deadline, bool *maybe,
                       dls_where *w)
{
    natsMsg *msg = NULL;
    char expect[24];
    snprintf(expect, sizeof expect, "%" PRIu64, m->last);
    natsStatus s = natsMsg_Create(&msg, m->subject, NULL, (const char *)rec, (int)n);
    if (s == NATS_OK)
        s = natsMsgHeader_Set(msg, HDR_MEDIUM, m->hex);
    if (s == NATS_OK)
        s = natsMsgHeader_Set(msg, HDR_EXPECT, expect);
    if (s != NATS_OK) {
        natsMsg_Destroy(msg);
        return fail(w, DLS_ERR_NOMEM, "out of memory in the NATS client");
    }
    for (;;) {
        jsPubOptions po;
        jsPubOptions_Init(&po);
        po.MaxWait = left_of(deadline);
        po.ExpectStream = m->stream;
        jsPubAck *ack = NULL;
        jsErrCode ec = 0;
        s = js_PublishMsg(&ack, m->js, msg, &po, &ec);
        if (s == NATS_OK) {
            uint64_t seq = ack->Sequence;
            jsPubAck_Destroy(ack);
            natsMsg_Destroy(msg);
            if (seq != m->last + 1) {
                m->last_known = false;
                return fail(w, DLS_ERR_TRANSPORT,
                            "the server stored the record at an unexpected sequence");
            }
            m->last = seq;
            return 0;
        }
        if (ec == JSStreamWrongLastSequenceErr) {
            natsMsg_Destroy(msg);
            m->last_known = false;
            return 1;
        }
        if (s == NATS_TIMEOUT || ec)
            *maybe = true; /* sent: the server may have stored it */
        if (!transient(s, ec) || nats_Now() + RETRY_PAUSE_MS >= deadline) {
            natsMsg_Destroy(msg);
            m->last_known = false;
            if (ec == JSStreamSealedErr) {
                m->sealed = true;
                return fail(w, DLS_ERR_SEALED, "the stream is sealed");
            }
            if (ec == JSStreamNotFoundErr)
                return fail(w, DLS_ERR_TRANSPORT, "the stream no longer exists");
            if (ec && !transient(s, ec))
                return fail(w, DLS_ERR_TRANSPORT, "JetStream refused the publish");
            return transport(w, s);
        }
        nats_Sleep(RETRY_PAUSE_MS);
    }
}

/* Publishes recs[0 … count) at once, record i expecting last sequence
 * m->last + i, then waits (until the deadline) for their acknowledgements.
 * Answers how many leading records are stored, in order, right after
 * m->last (m->last advanced past them); *maybe says a later one may have
 * been stored too, *conflict that the first not stored met another
 * writer's record, *sealed that it met the seal. */
static size_t append_pipelined(jsm *m, const uint8_t *const *recs, const size_t *lens,
                               size_t count, int64_t deadline, bool *maybe, bool *conflict,
                               bool *sealed)
{
    uint64_t base = m->last;
    pthread_mutex_lock(&m->amu);
    m->a_active = true;
    m->a_count = count;
    m->a_done = 0;
    memset(m->a_msg, 0, count * sizeof m->a_msg[0]);
    memset(m->a_seq, 0, count * sizeof m->a_seq[0]);
    memset(m->a_err, 0, count * sizeof m->a_err[0]);
    pthread_mutex_unlock(&m->amu);
    size_t sent = 0;
    for (; sent < count; sent++) {
        natsMsg *msg = NULL;
        char expect[24];
        snprintf(expect, sizeof expect, "%" PRIu64, base + sent);
        natsStatus s = natsMsg_Create(&msg, m->subject, NULL, (const char *)recs[sent],
                                      (int)lens[sent]);
        if (s == NATS_OK)
            s = natsMsgHeader_Set(msg, HDR_MEDIUM, m->hex);
        if (s == NATS_OK)
            s = natsMsgHeader_Set(msg, HDR_EXPECT, expect);
        if (s != NATS_OK) {
            natsMsg_Destroy(msg);
            break;
        }
        pthread_mutex_lock(&m->amu);
        m->a_msg[sent] = msg;
        pthread_mutex_unlock(&m->amu);
        jsPubOptions po;
        jsPubOptions_Init(&po);
        po.MaxWait = left_of(deadline);
        po.ExpectStream = m->stream;
        natsMsg *own = msg;
        if (js_PublishMsgAsync(m->js, &own, &po) != NATS_OK) {
            natsMsg_Destroy(own); /* not sent: still ours */
            pthread_mutex_lock(&m->amu);
            m->a_msg[sent] = NULL;
            pthread_mutex_unlock(&m->amu);
            break;
        }
    }
    pthread_mutex_lock(&m->amu);
    m->a_count = sent;
    for (;;) {
        if (m->a_done >= sent)
            break;
        int64_t left = deadline - nats_Now();
        if (left <= 0)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += left / 1000;
        ts.tv_nsec += (left % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&m->acv, &m->amu, &ts);
    }
    size_t ok = 0;
    while (ok < sent && m->a_seq[ok] == base + 1 + ok)
        ok++;
    *conflict = ok < sent && m->a_err[ok] == ERR_CONFLICT;
    *sealed = ok < sent && m->a_err[ok] == ERR_SEALED;
    *maybe = false;
    for (size_t i = ok; i < sent; i++)
        if (m->a_seq[i] || m->a_err[i] == ERR_MAYBE || (!m->a_seq[i] && !m->a_err[i]))
            *maybe = true;
    m->a_active = false;
    m->a_count = 0;
    pthread_mutex_unlock(&m->amu);
    m->last = base + ok;
    if (ok < count)
        m->last_known = false;
    return ok;
}

/* Appends with m->mu held: contiguous, directly after the last sequence
 * this writer knows, all within one deadline of timeout_ms. A batch goes
 * out pipelined first; whatever is not acknowledged then goes one record
 * at a time. Record i belongs right after sequence base + i: when the
 * stream has moved past that, a try of record i that was stored after all
 * is recognised (the message there is this record); anything else there is
 * another writer's, which a shared writer answers by starting again at the
 * new tail before its first record is stored, and by DLS_ERR_LOCKED after
 * (jetstream.h). */
static int append_locked(jsm *m, const uint8_t *const *recs, const size_t *lens, size_t count,
                         uint64_t *first, dls_where *w)
{
    for (size_t k = 0; k < count; k++)
        if (dls_record_is_seal(recs[k], lens[k]) && k + 1 < count)
            return fail(w, DLS_ERR_SEALED, "a record after the seal in one batch");
    int64_t deadline = nats_Now() + (int64_t)m->timeout_ms;
    int rc;
    if (!m->last_known && (rc = refresh(m, deadline, w)))
        return rc;
    if (m->sealed)
        return fail(w, DLS_ERR_SEALED, "the stream is sealed");
    uint64_t base = m->last; /* record i goes right after sequence base + i */
    size_t i = 0;
    bool maybe = false;      /* record i (and later ones) may be stored already */
    if (count > 1 && count <= PIPE_MAX) {
        bool conflict = false, sealed = false;
        i = append_pipelined(m, recs, lens, count, deadline, &maybe, &conflict, &sealed);
        if (i == count) {
            *first = base;
            return 0;
        }
        if (conflict && i > 0)
            return fail(w, DLS_ERR_LOCKED,
                        "another writer appended inside the batch: its first records "
                        "are stored, the rest is not");
        if (sealed)
            m->sealed = true;
    }
    int tries = 0;
    while (i < count) {
        if (!m->last_known && (rc = refresh(m, deadline, w)))
            return rc;
        uint64_t want = base + i;
        if (m->last != want) {
            if (m->last > want && maybe && stored_is(m, want + 1, recs[i], lens[i], deadline)) {
                /* an earlier try of record i was stored after all */
                m->last_known = m->last == want + 1;
                m->last = want + 1;
                i++;
                continue;
            }
            if (m->sealed)
                return fail(w, DLS_ERR_SEALED, "the stream is sealed");
            if (i > 0)
                return fail(w, DLS_ERR_LOCKED,
                            "another writer appended inside the batch: its first records "
                            "are stored, the rest is not");
            if (m->exclusive)
                return fail(w, DLS_ERR_LOCKED,
                            "another writer appended to this exclusive stream (a second judge?)");
            if (++tries >= CONFLICT_RETRIES)
                return fail(w, DLS_ERR_LOCKED, "other writers kept appending first");
            base = m->last;
            maybe = false;
            continue;
        }
        if (m->sealed)
            return fail(w, DLS_ERR_SEALED, "the stream is sealed");
        rc = publish_one(m, recs[i], lens[i], deadline, &maybe, w);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            i++;
            maybe = false; /* record i was not stored before: no later one was */
        }
    }
    *first = base;
    return 0;
}

static int jsm_append_batch(void *impl, const uint8_t *const *recs, const size_t *lens,
                            size_t count, uint64_t *first, dls_where *w)
{
    jsm *m = impl;
    pthread_mutex_lock(&m->mu);
    int rc = append_locked(m, recs, lens, count, first, w);
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static int jsm_append(void *impl, const uint8_t *rec, size_t n, uint64_t *pos, dls_where *w)
{
    return jsm_append_batch(impl, &rec, &n, 1, pos, w);
}

/* Seal: the seal record, then the stream's configuration `sealed` so that
 * the server refuses every later publish, delete and purge. */
static int jsm_seal(void *impl, uint64_t *pos, dls_where *w)
{
    jsm *m = impl;
    const uint8_t *rec = (const uint8_t *)DLS_SEAL_RECORD;
    size_t n = DLS_SEAL_RECORD_LEN;
    pthread_mutex_lock(&m->mu);
    int rc = append_locked(m, &rec, &n, 1, pos, w);
    if (!rc) {
        m->sealed = true;
        jsOptions jo;
        jopts(m, &jo);
        jsStreamInfo *si = NULL, *after = NULL;
        if (js_GetStreamInfo(&si, m->js, m->stream, &jo, NULL) == NATS_OK && si->Config) {
            si->Config->Sealed = true;
            /* best effort: the seal record alone already seals the medium */
            js_UpdateStream(&after, m->js, si->Config, &jo, NULL);
        }
        jsStreamInfo_Destroy(after);
        jsStreamInfo_Destroy(si);
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

/* ---- cursors -------------------------------------------------------------- */

#define READ_WAIT_MAX_MS 1000

/* A cursor's request waits at most 1 s (or timeout_ms when shorter): a
 * reader answers transport-error soon during a failover and its caller
 * asks again, while appends retry for the whole timeout_ms. */
static int64_t read_wait(const jsm *m)
{
    return m->timeout_ms < READ_WAIT_MAX_MS ? m->timeout_ms : READ_WAIT_MAX_MS;
}

static int jsm_cursor_new(void *impl, uint64_t from, void **cimpl)
{
    if (from >= UINT64_MAX - 1)
        return DLS_ERR_INVAL;
    jcur *c = calloc(1, sizeof *c);
    if (!c)
        return DLS_ERR_NOMEM;
    c->m = impl;
    c->seq = from + 1;
    *cimpl = c;
    return 0;
}

static void jsm_cursor_del(void *cimpl)
{
    jcur *c = cimpl;
    natsMsg_Destroy(c->held);
    free(c);
}

static dls_next cerr(dls_where *w, uint64_t seq, const char *reason)
{
    if (w) {
        w->offset = seq - 1;
        w->line = 0;
        w->reason = reason;
        w->rule = 0;
        w->sys_errno = 0;
    }
    return DLS_NEXT_ERROR;
}

static dls_next cerr_status(dls_where *w, uint64_t seq, natsStatus s, jsErrCode ec)
{
    if (ec == JSStreamNotFoundErr)
        return cerr(w, seq, "the stream no longer exists");
    dls_where t = {0};
    transport(&t, s);
    return cerr(w, seq, t.reason);
}

/* Where the cursor stands against the stream's first and last sequence:
 * gap, blocked, end, or (between them) 0 to read. */
static int locate(jcur *c, dls_record *rec, dls_where *w, dls_next *out)
{
    jsOptions jo;
    jopts(c->m, &jo);
    jo.Wait = read_wait(c->m);
    jsStreamInfo *si = NULL;
    jsErrCode ec = 0;
    natsStatus s = js_GetStreamInfo(&si, c->m->js, c->m->stream, &jo, &ec);
    if (s != NATS_OK) {
        *out = cerr_status(w, c->seq, s, ec);
        return 1;
    }
    uint64_t first = si->State.FirstSeq, last = si->State.LastSeq;
    bool sealed = si->Config && si->Config->Sealed;
    jsStreamInfo_Destroy(si);
    c->last_hint = last;
    if (first > c->seq) {
        /* evicted (or purged) from the front: gap exactly here */
        rec->gap_from = c->seq - 1;
        rec->position = first - 1;
        c->seq = first;
        *out = DLS_NEXT_GAP;
        return 1;
    }
    if (c->seq > last) {
        rec->position = c->seq - 1;
        *out = sealed ? DLS_NEXT_END : DLS_NEXT_BLOCKED;
        return 1;
    }
    return 0;
}

static dls_next jsm_cursor_next(void *cimpl, dls_record *rec, dls_where *w)
{
    jcur *c = cimpl;
    natsMsg_Destroy(c->held);
    c->held = NULL;
    dls_next r;
    if (c->seq > c->last_hint && locate(c, rec, w, &r))
        return r;
    jsOptions jo;
    jopts(c->m, &jo);
    jo.Wait = read_wait(c->m);
    natsMsg *msg = NULL;
    jsErrCode ec = 0;
    natsStatus s = js_GetMsg(&msg, c->m->js, c->m->stream, c->seq, &jo, &ec);
    if (s != NATS_OK) {
        if (ec != JSNoMessageFoundErr && s != NATS_NOT_FOUND)
            return cerr_status(w, c->seq, s, ec);
        /* not there: evicted meanwhile, or deleted from the middle */
        if (locate(c, rec, w, &r))
            return r;
        return cerr(w, c->seq,
                    "a message is missing between the stream's first and last sequence "
                    "(deleted by hand)");
    }
    const char *hdr = NULL;
    if (natsMsgHeader_Get(msg, HDR_MEDIUM, &hdr) != NATS_OK || !hdr ||
        strcmp(hdr, c->m->hex)) {
        natsMsg_Destroy(msg);
        return cerr(w, c->seq,
                    "a message without this medium's Dls-Medium header: not a daolease "
                    "record (published by hand or by another tool)");
    }
    int n = natsMsg_GetDataLength(msg);
    if (n <= 0 || (size_t)n > DLS_RECORD_MAX) {
        natsMsg_Destroy(msg);
        return cerr(w, c->seq, "a message that is not 1 to 65536 bytes: not a record");
    }
    c->held = msg;
    rec->position = c->seq - 1;
    rec->p = (const uint8_t *)natsMsg_GetData(msg);
    rec->n = (size_t)n;
    c->seq++;
    return DLS_NEXT_OK;
}

static const dls_medium_ops jsm_ops = {
    .kind_name = "jetstream",
    .append = jsm_append,
    .append_batch = jsm_append_batch,
    .seal = jsm_seal,
    .cursor_new = jsm_cursor_new,
    .cursor_next = jsm_cursor_next,
    .cursor_del = jsm_cursor_del,
    .id = NULL,
    .del = jsm_del,
};

bool dls_jetstream_is_exclusive(dls_medium *m)
{
    jsm *j = m ? dls_medium_impl(m, &jsm_ops) : NULL;
    return j && j->exclusive;
}

/* ---- create and open ------------------------------------------------------ */

static const dls_jetstream_settings *or_default(const dls_jetstream_settings *s,
                                                dls_jetstream_settings *tmp)
{
    if (s)
        return s;
    dls_jetstream_settings_default(tmp);
    return tmp;
}

static int finish(dls_medium **out, jsm *m, const jsStreamInfo *si, const jsm_url *u,
                  const dls_jetstream_settings *s, dls_open_mode mode, dls_where *w)
{
    dls_medium_info info;
    memset(&info, 0, sizeof info);
    int rc = adopt(m, si, u, s, mode, &info, w);
    if (!rc && mode == DLS_OPEN_APPEND) {
        pthread_mutex_lock(&m->mu);
        rc = refresh(m, nats_Now() + (int64_t)m->timeout_ms, w);
        pthread_mutex_unlock(&m->mu);
    }
    if (!rc)
        rc = dls_medium_wrap(out, &jsm_ops, m, &info);
    return rc;
}

int dls_jetstream_open(dls_medium **out, const char *url, dls_open_mode mode,
                       const dls_jetstream_settings *s, dls_where *w)
{
    dls_jetstream_settings tmp;
    if (!out || !url || (mode != DLS_OPEN_READ && mode != DLS_OPEN_APPEND))
        return fail(w, DLS_ERR_INVAL, "no output, no URL or unknown mode");
    *out = NULL;
    s = or_default(s, &tmp);
    jsm_url u;
    int rc = jsm_url_parse(url, &u, w);
    if (rc)
        return rc;
    jsm *m = jsm_new(&u, s);
    if (!m) {
        jsm_url_free(&u);
        return fail(w, DLS_ERR_NOMEM, "out of memory");
    }
    rc = connect_to(m, &u, w);
    jsStreamInfo *si = NULL;
    if (!rc) {
        int64_t deadline = nats_Now() + (int64_t)m->timeout_ms;
        jsErrCode ec = 0;
        natsStatus st;
        for (;;) { /* retried through a failover, within timeout_ms */
            jsOptions jo;
            jopts(m, &jo);
            jo.Wait = left_of(deadline);
            ec = 0;
            st = js_GetStreamInfo(&si, m->js, m->stream, &jo, &ec);
            if (st == NATS_OK || ec == JSStreamNotFoundErr || !transient(st, ec) ||
                nats_Now() + RETRY_PAUSE_MS >= deadline)
                break;
            nats_Sleep(RETRY_PAUSE_MS);
        }
        if (st != NATS_OK)
            rc = ec == JSStreamNotFoundErr ? fail(w, DLS_ERR_NOTFOUND, "no such stream")
               : ec == JSNotEnabledErr || st == NATS_NO_RESPONDERS
                   ? fail(w, DLS_ERR_CONFIG, "JetStream is not enabled on the server")
                   : transport(w, st);
    }
    if (!rc)
        rc = finish(out, m, si, &u, s, mode, w);
    jsStreamInfo_Destroy(si);
    jsm_url_free(&u);
    if (rc)
        jsm_free(m);
    return rc;
}

int dls_jetstream_create(dls_medium **out, const char *url, const dls_jetstream_settings *s,
                         dls_where *w)
{
    dls_jetstream_settings tmp;
    if (!out || !url)
        return fail(w, DLS_ERR_INVAL, "no output or no URL");
    *out = NULL;
    s = or_default(s, &tmp);
    jsm_url u;
    int rc = jsm_url_parse(url, &u, w);
    if (rc)
        return rc;
    unsigned replicas = u.has_replicas ? u.replicas : s->replicas ? s->replicas : 1;
    bool memory = u.has_storage ? u.memory : s->memory;
    dls_sync sync = u.has_sync ? u.sync : s->sync;
    uint64_t max_msgs = u.has_max_msgs ? u.max_msgs : s->max_msgs;
    if (sync != DLS_SYNC_NONE && (replicas < 2 || memory)) {
        jsm_url_free(&u);
        return fail(w, DLS_ERR_CONFIG, "sync data or group needs file storage on 2 or more replicas");
    }
    uint8_t id[DLS_MEDIUM_ID_LEN];
    if (s->id) {
        memcpy(id, s->id, sizeof id);
    } else {
        if (sodium_init() < 0) {
            jsm_url_free(&u);
            return fail(w, DLS_ERR_SODIUM, "libsodium failed to initialise");
        }
        randombytes_buf(id, sizeof id);
    }
    jsm *m = jsm_new(&u, s);
    if (!m) {
        jsm_url_free(&u);
        return fail(w, DLS_ERR_NOMEM, "out of memory");
    }
    rc = connect_to(m, &u, w);
    jsStreamInfo *si = NULL;
    if (!rc) {
        char subject[DLS_JETSTREAM_NAME_MAX + 16], desc[64], hex[33];
        snprintf(subject, sizeof subject, "daolease.%s", m->stream);
        hex_of(id, hex);
        snprintf(desc, sizeof desc, DESC_PREFIX "%s", hex);
        const char *subjects[1] = {subject};
        jsStreamConfig c;
        jsStreamConfig_Init(&c);
        c.Name = m->stream;
        c.Description = desc;
        c.Subjects = subjects;
        c.SubjectsLen = 1;
        c.Retention = js_LimitsPolicy;
        c.Discard = js_DiscardOld;
        c.MaxMsgs = max_msgs ? (int64_t)max_msgs : -1;
        c.MaxMsgSize = (int32_t)DLS_RECORD_MAX;
        c.Storage = memory ? js_MemoryStorage : js_FileStorage;
        c.Replicas = replicas;
        c.DenyDelete = true; /* no holes by the API; evicting and purging the front stay */
        /* the same create again answers ok (the server compares the whole
         * configuration, random id included): retried through a failover */
        int64_t deadline = nats_Now() + (int64_t)m->timeout_ms;
        jsErrCode ec = 0;
        natsStatus st;
        for (;;) {
            jsOptions jo;
            jopts(m, &jo);
            jo.Wait = left_of(deadline);
            ec = 0;
            st = js_AddStream(&si, m->js, &c, &jo, &ec);
            if (st == NATS_OK || ec == JSStreamNameExistErr || !transient(st, ec) ||
                ec == JSInsufficientResourcesErr || ec == JSClusterNoPeersErr ||
                ec == JSStreamReplicasNotSupportedErr || nats_Now() + RETRY_PAUSE_MS >= deadline)
                break;
            nats_Sleep(RETRY_PAUSE_MS);
        }
        if (st != NATS_OK)
            rc = ec == JSStreamNameExistErr ? fail(w, DLS_ERR_EXISTS, "a stream of that name exists")
               : ec == JSInsufficientResourcesErr || ec == JSClusterNoPeersErr ||
                       ec == JSStreamReplicasNotSupportedErr
                   ? fail(w, DLS_ERR_CONFIG, "the cluster cannot place that many replicas")
               : ec == JSNotEnabledErr || st == NATS_NO_RESPONDERS
                   ? fail(w, DLS_ERR_CONFIG, "JetStream is not enabled on the server")
               : ec ? fail(w, DLS_ERR_CONFIG, "JetStream refused the stream's configuration")
                    : transport(w, st);
    }
    if (!rc) {
        dls_jetstream_settings own = *s;
        own.id = id;
        rc = finish(out, m, si, &u, &own, DLS_OPEN_APPEND, w);
    }
    jsStreamInfo_Destroy(si);
    jsm_url_free(&u);
    if (rc)
        jsm_free(m);
    return rc;
}
