/* daolease — the NATS JetStream medium's appends and seal: publishes with
 * an expected last sequence, retried through a failover within timeout_ms;
 * batches pipelined. See jetstream.c for the handle. */
#include <inttypes.h>
#include <nats/nats.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stream/jetstream/jsm_nats.h"

/* ---- appends ------------------------------------------------------------- */

/* Learns the stream's last sequence and whether it is sealed (by config or
 * by a seal record at its tail), retrying transient failures until the
 * deadline. Called with m->mu held. */
int jsm_refresh(jsm *m, int64_t deadline, dls_where *w)
{
    for (;;) {
        jsOptions jo;
        jopts(m, &jo);
        jo.Wait = try_wait(m, deadline);
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
                    if (!jsm_is_record(m, msg) && !m->foreign)
                        m->foreign = last; /* appending after it would hide it */
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

/* Is the message at `seq` this record (its bytes and this medium's
 * header)? 1 yes, 0 no (another writer's, or none), or an error when the
 * stream could not be read back before the deadline (the outcome of the
 * append stays unknown: never taken for another writer's record). */
static int stored_is(jsm *m, uint64_t seq, const uint8_t *rec, size_t n, int64_t deadline,
                     dls_where *w)
{
    for (;;) {
        jsOptions jo;
        jopts(m, &jo);
        jo.Wait = try_wait(m, deadline);
        natsMsg *msg = NULL;
        jsErrCode ec = 0;
        natsStatus s = js_GetMsg(&msg, m->js, m->stream, seq, &jo, &ec);
        if (s == NATS_OK) {
            const char *hdr = NULL;
            bool same = (size_t)natsMsg_GetDataLength(msg) == n &&
                        !memcmp(natsMsg_GetData(msg), rec, n) &&
                        natsMsgHeader_Get(msg, HDR_MEDIUM, &hdr) == NATS_OK && hdr &&
                        !strcmp(hdr, m->hex);
            natsMsg_Destroy(msg);
            return same;
        }
        if (ec == JSNoMessageFoundErr)
            return 0;
        if (!transient(s, ec) || nats_Now() + RETRY_PAUSE_MS >= deadline)
            return transport(w, s);
        nats_Sleep(RETRY_PAUSE_MS);
    }
}

/* The answer of every append once a message that is not a record was
 * found on the stream (docs/jetstream.md, "A broken medium"): cursors stop
 * at it for good (deny_delete keeps it there), so nothing this writer
 * appends after it would ever be read; the writer learns it now. */
static int foreign_fail(const jsm *m, dls_where *w)
{
    return dls_where_fill(w, DLS_ERR_CORRUPT,
                          (dls_where){.offset = m->foreign - 1,
                                      .reason = "a message that is not a daolease record "
                                                "(published by hand or by another tool) is "
                                                "on this medium: readers stop at it, so the "
                                                "medium is unusable; move to a new medium "
                                                "(docs/jetstream.md, A broken medium)"});
}

/* Are the messages after sequence `after` up to m->last (the newest
 * FOREIGN_CHECK_MAX of them) records of this medium? Another daolease
 * writer's are; a message published by hand is not, and sets m->foreign.
 * 0, or an error when they cannot be read before the deadline. */
static int check_foreign(jsm *m, uint64_t after, int64_t deadline, dls_where *w)
{
    uint64_t from = m->last - after > FOREIGN_CHECK_MAX ? m->last - FOREIGN_CHECK_MAX + 1
                                                        : after + 1;
    for (uint64_t seq = from; seq <= m->last && !m->foreign;) {
        jsOptions jo;
        jopts(m, &jo);
        jo.Wait = try_wait(m, deadline);
        natsMsg *msg = NULL;
        jsErrCode ec = 0;
        natsStatus s = js_GetMsg(&msg, m->js, m->stream, seq, &jo, &ec);
        if (s == NATS_OK) {
            if (!jsm_is_record(m, msg))
                m->foreign = seq;
            natsMsg_Destroy(msg);
            seq++;
            continue;
        }
        if (ec == JSNoMessageFoundErr) { /* evicted or purged meanwhile */
            seq++;
            continue;
        }
        if (!transient(s, ec) || nats_Now() + RETRY_PAUSE_MS >= deadline)
            return transport(w, s);
        nats_Sleep(RETRY_PAUSE_MS);
    }
    return 0;
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
        po.MaxWait = try_wait(m, deadline);
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
        /* the outcome is unknown: whatever failed (a timeout, the leader
         * lost, the connection dropped after the send), the server may have
         * stored it; the read-back below (append_locked) decides */
        *maybe = true;
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
        if (ts.tv_nsec >= (long)DLS_NS_PER_S) {
            ts.tv_sec++;
            ts.tv_nsec -= (long)DLS_NS_PER_S;
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
    /* every try of this call, and every read-back deciding what an earlier
     * try stored, within retry_ms (docs/jetstream.md, "Failover budget") */
    int64_t deadline = nats_Now() + (int64_t)m->retry_ms;
    int rc;
    if (!m->last_known && (rc = jsm_refresh(m, deadline, w)))
        return rc;
    if (m->foreign)
        return foreign_fail(m, w);
    if (m->sealed)
        return fail(w, DLS_ERR_SEALED, "the stream is sealed");
    uint64_t base = m->last; /* record i goes right after sequence base + i */
    size_t i = 0;
    bool maybe = false;      /* record i (and later ones) may be stored already */
    if (count > 1 && count <= PIPE_MAX) {
        bool conflict = false, sealed = false;
        int64_t pipe_deadline = nats_Now() + (int64_t)m->timeout_ms;
        i = append_pipelined(m, recs, lens, count,
                             pipe_deadline < deadline ? pipe_deadline : deadline, &maybe,
                             &conflict, &sealed);
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
        if (!m->last_known && (rc = jsm_refresh(m, deadline, w)))
            return rc;
        if (m->foreign)
            return foreign_fail(m, w);
        uint64_t want = base + i;
        if (m->last != want) {
            int mine = 0;
            if (m->last > want && maybe &&
                (mine = stored_is(m, want + 1, recs[i], lens[i], deadline, w)) < 0)
                return mine; /* could not read back: the outcome stays unknown */
            if (mine) {
                /* an earlier try of record i was stored after all */
                m->last_known = m->last == want + 1;
                m->last = want + 1;
                i++;
                continue;
            }
            if (m->sealed)
                return fail(w, DLS_ERR_SEALED, "the stream is sealed");
            /* not this record: another writer's records, or a message
             * published by hand, which would break the medium in silence */
            if (m->last > want && (rc = check_foreign(m, want, deadline, w)))
                return rc;
            if (m->foreign)
                return foreign_fail(m, w);
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

int jsm_append_batch(void *impl, const uint8_t *const *recs, const size_t *lens,
                     size_t count, uint64_t *first, dls_where *w)
{
    jsm *m = impl;
    pthread_mutex_lock(&m->mu);
    int rc = append_locked(m, recs, lens, count, first, w);
    pthread_mutex_unlock(&m->mu);
    return rc;
}

int jsm_append(void *impl, const uint8_t *rec, size_t n, uint64_t *pos, dls_where *w)
{
    return jsm_append_batch(impl, &rec, &n, 1, pos, w);
}

/* Seal: the seal record, then the stream's configuration `sealed` so that
 * the server refuses every later publish, delete and purge. */
int jsm_seal(void *impl, uint64_t *pos, dls_where *w)
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
