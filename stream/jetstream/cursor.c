/* daolease — the NATS JetStream medium's cursors: one record per sequence,
 * each request waiting at most READ_WAIT_MAX_MS. See jetstream.c for the
 * handle. */
#include <inttypes.h>
#include <nats/nats.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stream/jetstream/jsm_nats.h"

/* ---- cursors -------------------------------------------------------------- */

#define READ_WAIT_MAX_MS 1000

/* A cursor's request waits at most 1 s (or timeout_ms when shorter): a
 * reader answers transport-error soon during a failover and its caller
 * asks again, while appends retry for the whole timeout_ms. */
static int64_t read_wait(const jsm *m)
{
    return m->timeout_ms < READ_WAIT_MAX_MS ? m->timeout_ms : READ_WAIT_MAX_MS;
}

int jsm_cursor_new(void *impl, uint64_t from, void **cimpl)
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

void jsm_cursor_del(void *cimpl)
{
    jcur *c = cimpl;
    natsMsg_Destroy(c->held);
    free(c);
}

static dls_next cerr(dls_where *w, uint64_t seq, const char *reason)
{
    dls_where_fill(w, 0, (dls_where){.offset = seq - 1, .reason = reason});
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

dls_next jsm_cursor_next(void *cimpl, dls_record *rec, dls_where *w)
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
