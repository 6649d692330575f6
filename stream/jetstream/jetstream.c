/* daolease — the NATS JetStream medium: a backend of medium_impl.h over the
 * nats.c client. Layout, URLs and guarantees: include/daolease/jetstream.h
 * and docs/jetstream.md. The handle, connection, create and open; appends in
 * append.c, cursors in cursor.c, their shared internals in jsm_nats.h. */
#include <inttypes.h>
#include <nats/nats.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stream/jetstream/jsm_nats.h"
#include "vocab/hex.h"

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
    /* docs/jetstream.md, "Failover budget": a journal's append rides
     * through a leader election; a holder's stays within timeout_ms, below
     * its leases' durations (its loop must not stall past a bound) */
    m->retry_ms = u->has_retry ? u->retry_ms : s->exclusive ? JOURNAL_RETRY_MS : m->timeout_ms;
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
        dls_unhex16(d + strlen(DESC_PREFIX), strlen(d + strlen(DESC_PREFIX)), m->id))
        return fail(w, DLS_ERR_MEDIUM_ID,
                    "the stream's description is not \"daolease medium <32 hex>\" "
                    "(a stream daolease did not make)");
    if (s->id && memcmp(s->id, m->id, DLS_MEDIUM_ID_LEN))
        return fail(w, DLS_ERR_MEDIUM_ID, "the stream holds a medium with another id");
    dls_hex16(m->id, m->hex);
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

/* judge.md rev 5, Standby judges ("JetStream: its first append names the
 * last sequence it read"): positions are sequences - 1, so a stream read
 * up to position `end` (exclusive) has `end` as its last sequence. */
int dls_jetstream_expect_after(dls_medium *m, uint64_t end)
{
    jsm *j = m ? dls_medium_impl(m, &jsm_ops) : NULL;
    if (!j)
        return DLS_ERR_INVAL;
    if (!j->exclusive)
        return DLS_ERR_STATE;
    pthread_mutex_lock(&j->mu);
    j->last = end;
    j->last_known = true;
    pthread_mutex_unlock(&j->mu);
    return 0;
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
        rc = jsm_refresh(m, nats_Now() + (int64_t)m->timeout_ms, w);
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
        dls_hex16(id, hex);
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
