/* The holder's assembly (holder.md, "Duties", first paragraph): settings,
 * the parts it borrows, and reading back its own medium at start. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "holder/holder_int.h"
#include "vocab/where.h"

static bool valid_name(const char *s, size_t *len)
{
    if (!s)
        return false;
    size_t n = strlen(s);
    if (n == 0 || n > DLS_ID_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= 0x21 && c <= 0x7e) || c >= 0x80))
            return false;
    }
    *len = n;
    return true;
}

/* ---- assembly ---------------------------------------------------------------- */

void dls_holder_settings_default(dls_holder_settings *s)
{
    if (!s)
        return;
    memset(s, 0, sizeof *s);
    s->renew_interval_ns = 0;
    s->tick_period_ns = 0;
    s->tolerance.declared = false;
    s->retention_ns = 0;
    s->judge_lag_ns = 0;
    s->accept_unsolicited = true;
    s->lease_floor = 0;
    s->max_proposals = 64;
    s->max_leases = 64;
    s->journal_budget = 0;
    s->batch_max = 1;
}

/* Fills w with a static reason; returns code. */
static int refuse(dls_where *w, int code, const char *reason)
{
    return dls_where_fill(w, code, (dls_where){.reason = reason});
}

/* Reads the holder's own medium from 0 for its last proposal seq, and for
 * the largest lease id it renewed or released there (an earlier run's
 * leases, never taken up again unsolicited: their next renewals would start
 * over at seq 1 and count for nothing at the judge while the holder's bound
 * grew on them). Only records attributed to this holder count (a forged huge
 * seq or lease id on the medium must not exhaust the holder's seq space or
 * raise its floor). */
static int read_own_seq(dls_holder *h, dls_where *w)
{
    dls_keyring *kr = NULL;
    dls_resolver *r = NULL;
    dls_cursor *c = NULL;
    int rc;
    if (h->secret) {
        rc = dls_keyring_new(&kr);
        if (rc == 0)
            rc = dls_keyring_add(kr, (const uint8_t *)h->name, h->name_len,
                                 dls_secret_kind(h->secret), dls_secret_public(h->secret));
        if (rc == 0)
            rc = dls_resolver_new_signed(&r, h->medium_id, kr);
    } else {
        rc = dls_resolver_new_medium(&r, h->medium_id, h->name, NULL);
    }
    if (rc == 0)
        rc = dls_cursor_new(&c, h->medium, 0);
    while (rc == 0) {
        dls_record rec;
        dls_where cw;
        dls_next nx = dls_cursor_next(c, &rec, &cw);
        if (nx == DLS_NEXT_BLOCKED || nx == DLS_NEXT_END)
            break;
        if (nx == DLS_NEXT_GAP)
            continue;
        if (nx == DLS_NEXT_ERROR) {
            rc = dls_where_fill(w, DLS_ERR_TRANSPORT,
                                (dls_where){.offset = dls_cursor_position(c),
                                            .reason = "holder: its own medium cannot be "
                                                      "read back (transport-error)"});
            break;
        }
        dls_attribution a;
        dls_facts it;
        dls_resolver_attribute_facts(r, rec.p, rec.n, &a, &it); /* batches too */
        if (!a.attributed || !hld_bytes_is(a.author, h->name, h->name_len))
            continue;
        dls_bytes fb;
        while (dls_facts_next(&it, &fb, NULL)) {
            dls_fact f;
            if (dls_fact_decode(fb.p, fb.n, &f, NULL) != 0)
                continue;
            if (f.kind == DLS_FACT_PROPOSAL && f.seq > h->prop_seq)
                h->prop_seq = f.seq;
            if ((f.kind == DLS_FACT_RENEWAL || f.kind == DLS_FACT_RELEASE) &&
                f.lease > h->own_floor)
                h->own_floor = f.lease;
        }
    }
    dls_cursor_del(c);
    dls_resolver_del(r);
    dls_keyring_del(kr);
    if (rc != 0 && rc != DLS_ERR_TRANSPORT)
        refuse(w, rc, "holder: reading back its own medium failed");
    return rc;
}

static int check_parts(const dls_holder_parts *p, dls_holder *h, dls_where *w)
{
    if (!p || !p->medium || !p->journal || !p->ticks)
        return refuse(w, DLS_ERR_INVAL,
                      "holder: a medium, a journal cursor and a tick cursor are required");
    if (!valid_name(p->name, &h->name_len) || !valid_name(p->grantor, &h->grantor_len) ||
        !valid_name(p->tick_party, &h->tick_party_len))
        return refuse(w, DLS_ERR_INVAL,
                      "holder: the holder, grantor and tick party names must be 1-64 "
                      "bytes of 0x21-0x7E or 0x80-0xFF");
    if (p->secret && strcmp(dls_secret_name(p->secret), p->name) != 0)
        return refuse(w, DLS_ERR_INVAL,
                      "holder: the secret belongs to another party than the holder's name");
    int rc = dls_resolver_check(p->journal_resolver, dls_medium_id(dls_cursor_medium(p->journal)));
    if (rc != 0)
        return refuse(w, rc,
                      rc == DLS_ERR_NORESOLVER
                          ? "holder: the journal has no resolver"
                          : "holder: the journal's resolver is bound to another medium");
    rc = dls_resolver_check(p->tick_resolver, dls_medium_id(dls_cursor_medium(p->ticks)));
    if (rc != 0)
        return refuse(w, rc,
                      rc == DLS_ERR_NORESOLVER
                          ? "holder: the tick cursor has no resolver"
                          : "holder: the tick resolver is bound to another medium");
    return 0;
}

int dls_holder_new(dls_holder **out, const dls_holder_parts *parts, const dls_holder_settings *s,
                   const dls_holder_callbacks *cb, void *user_data, dls_where *w)
{
    dls_where_fill(w, 0, (dls_where){0});
    if (!out)
        return refuse(w, DLS_ERR_INVAL, "holder: out is NULL");
    *out = NULL;
    if (sodium_init() < 0)
        return refuse(w, DLS_ERR_SODIUM, "holder: libsodium failed to initialise");
    dls_holder_settings def;
    if (!s) {
        dls_holder_settings_default(&def);
        s = &def;
    }
    if (s->max_proposals == 0 || s->max_leases == 0 || s->max_proposals > 1u << 20 ||
        s->max_leases > 1u << 20 || s->renew_interval_ns > DLS_NS_MAX || s->batch_max == 0 ||
        s->batch_max > DLS_BATCH_COUNT_MAX)
        return refuse(w, DLS_ERR_INVAL,
                      "holder: settings out of range (max_proposals and max_leases "
                      "1..2^20, renew_interval_ns <= 2^63-1, batch_max 1..4096)");
    dls_holder *h = calloc(1, sizeof *h);
    if (!h)
        return refuse(w, DLS_ERR_NOMEM, "holder: out of memory");
    int rc = check_parts(parts, h, w);
    if (rc != 0) {
        free(h);
        return rc;
    }
    rc = dls_holder_sizing_check(s, 0, 0,
                                 dls_medium_retention(parts->medium) == DLS_RETAIN_EVICT_OLDEST, w);
    if (rc != 0) {
        free(h);
        return rc;
    }
    h->pid = (long)getpid();
    memcpy(h->name, parts->name, h->name_len + 1);
    memcpy(h->grantor, parts->grantor, h->grantor_len + 1);
    memcpy(h->tick_party, parts->tick_party, h->tick_party_len + 1);
    h->secret = parts->secret;
    h->medium = parts->medium;
    memcpy(h->medium_id, dls_medium_id(parts->medium), DLS_MEDIUM_ID_LEN);
    h->journal = parts->journal;
    h->jres = parts->journal_resolver;
    h->ticks = parts->ticks;
    h->tres = parts->tick_resolver;
    h->s = *s;
    if (cb)
        h->cb = *cb;
    h->ud = user_data;
    h->props = calloc(s->max_proposals, sizeof *h->props);
    h->leases = calloc(s->max_leases, sizeof *h->leases);
    if (!h->props || !h->leases || hld_batch_init(h) != 0 || hld_sched_init(h) != 0) {
        dls_holder_del(h);
        return refuse(w, DLS_ERR_NOMEM, "holder: out of memory");
    }
    rc = read_own_seq(h, w);
    if (rc != 0) {
        dls_holder_del(h);
        return rc;
    }
    *out = h;
    return 0;
}

void dls_holder_del(dls_holder *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->nleases; i++)
        free(h->leases[i].subject);
    free(h->leases);
    free(h->props);
    hld_batch_fini(h);
    hld_sched_fini(h);
    dls_vec_free(&h->ev);
    sodium_memzero(h->msg, sizeof h->msg);
    free(h);
}


int dls_holder_rebind(dls_holder *h, dls_cursor *journal, dls_resolver *journal_resolver,
                      dls_where *w)
{
    dls_where_fill(w, 0, (dls_where){0});
    if (!h || !journal)
        return refuse(w, DLS_ERR_INVAL, "holder: rebind needs the holder and a journal cursor");
    if (hld_own_process(h))
        return refuse(w, DLS_ERR_STATE, h->msg);
    int rc = dls_resolver_check(journal_resolver, dls_medium_id(dls_cursor_medium(journal)));
    if (rc != 0)
        return refuse(w, rc,
                      rc == DLS_ERR_NORESOLVER
                          ? "holder: the journal has no resolver"
                          : "holder: the journal's resolver is bound to another medium");
    /* Leases of the old journal: a held one runs out at its bound as
     * confirmed so far (never renewed or confirmed again: the new journal's
     * marks know nothing of it); the others can never see their lapsed. */
    for (size_t i = h->nleases; i-- > 0;) {
        hlease *l = &h->leases[i];
        if (l->state == DLS_HOLDER_HELD) {
            l->orphan = true;
            l->npend = 0;
        } else {
            hld_drop_lease(h, l);
        }
    }
    h->nprops = 0; /* a new journal answers nothing written before it */
    h->journal = journal;
    h->jres = journal_resolver;
    h->journal_ended = false;
    h->staged = false;
    h->has_confirmed_pos = false;
    return 0;
}
