/* The holder (holder.md): a step function the agent's loop drives. It reads
 * no clock — time is the newest reading on its tick cursor — and starts no
 * thread. See include/daolease/holder.h for the contract and docs/holder.md
 * for the reasoning. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "holder/holder_int.h"
#include "vocab/mp.h"

#define PROP_ID_LEN 16
#define PROP_ENC_LEN (2 + PROP_ID_LEN) /* bin 8 header + 16 bytes */
/* An envelope around a lease fact: the fact, the author, a sig, the keys. */
#define ENV_MAX (DLS_FACT_MAX + 256)

typedef struct hprop {
    uint64_t handle;
    uint64_t seq;
    uint8_t id[PROP_ENC_LEN]; /* the encoded proposal value, as written */
} hprop;

typedef struct hlease {
    uint64_t id;
    uint64_t proposal;
    dls_holder_lease_state state;
    uint8_t *subject;
    size_t subject_len;
    dls_mode mode;
    dls_duration duration, max;
    bool has_max;
    uint64_t interval;
    uint64_t observed;
    bool renewed;
    uint64_t last_renewal;
    uint64_t seq;
    bool failed;          /* the last renewal attempt failed ... */
    uint64_t failed_at;   /* ... at this reading */
    bool commit;
} hlease;

struct dls_holder {
    char name[DLS_ID_MAX + 1];
    size_t name_len;
    char grantor[DLS_ID_MAX + 1];
    size_t grantor_len;
    char tick_party[DLS_ID_MAX + 1];
    size_t tick_party_len;
    const dls_secret *secret;
    dls_medium *medium;
    uint8_t medium_id[DLS_MEDIUM_ID_LEN];
    dls_cursor *journal;
    dls_resolver *jres;
    dls_cursor *ticks;
    dls_resolver *tres;
    dls_holder_settings s;
    dls_holder_callbacks cb;
    void *ud;

    bool has_now;
    uint64_t now;
    bool ticks_ended;
    bool journal_ended;
    uint64_t prop_seq;
    uint64_t next_handle;
    uint64_t max_seen;
    uint64_t own_floor; /* the largest lease id in its own renewals and releases
                           read back at assembly: leases of an earlier run */

    hprop *props;
    size_t nprops;
    hlease *leases;
    size_t nleases;

    dls_holder_event *ev;
    size_t nev, evcap;
    uint64_t events_lost;

    char msg[DLS_HOLDER_TEXT_MAX];
    uint8_t fact[DLS_FACT_MAX];
    uint8_t env[ENV_MAX];
};

/* ---- small helpers ------------------------------------------------------- */

static bool bytes_is(dls_bytes b, const char *s, size_t n)
{
    return b.n == n && (n == 0 || memcmp(b.p, s, n) == 0);
}

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

static void say(char *msg, size_t cap, const char *text)
{
    if (msg && cap > 0)
        snprintf(msg, cap, "%s", text);
}

static dls_holder_event *event_push(dls_holder *h, dls_holder_event_kind kind,
                                    uint64_t lease, uint64_t proposal)
{
    if (h->nev == h->evcap) {
        size_t cap = h->evcap ? h->evcap * 2 : 16;
        dls_holder_event *ev = realloc(h->ev, cap * sizeof *ev);
        if (!ev) {
            h->events_lost++;
            return NULL;
        }
        h->ev = ev;
        h->evcap = cap;
    }
    dls_holder_event *e = &h->ev[h->nev++];
    memset(e, 0, offsetof(dls_holder_event, text) + 1);
    e->kind = kind;
    e->lease = lease;
    e->proposal = proposal;
    e->reading = h->now;
    return e;
}

static void event_text(dls_holder_event *e, const void *p, size_t n)
{
    if (!e)
        return;
    if (n > DLS_HOLDER_TEXT_MAX - 1)
        n = DLS_HOLDER_TEXT_MAX - 1;
    if (n)
        memcpy(e->text, p, n);
    e->text[n] = '\0';
    e->text_len = n;
}

static hlease *find_lease(dls_holder *h, uint64_t id)
{
    for (size_t i = 0; i < h->nleases; i++)
        if (h->leases[i].id == id)
            return &h->leases[i];
    return NULL;
}

static const hlease *find_lease_c(const dls_holder *h, uint64_t id)
{
    return find_lease((dls_holder *)h, id);
}

static void drop_lease(dls_holder *h, hlease *l)
{
    free(l->subject);
    size_t i = (size_t)(l - h->leases);
    h->leases[i] = h->leases[--h->nleases];
}

/* The proposal whose encoded id is exactly `enc`, or NULL. */
static hprop *find_prop(dls_holder *h, dls_bytes enc)
{
    if (enc.n != PROP_ENC_LEN)
        return NULL;
    for (size_t i = 0; i < h->nprops; i++)
        if (memcmp(h->props[i].id, enc.p, PROP_ENC_LEN) == 0)
            return &h->props[i];
    return NULL;
}

static void drop_prop(dls_holder *h, hprop *p)
{
    size_t i = (size_t)(p - h->props);
    h->props[i] = h->props[--h->nprops];
}

static uint64_t lease_bound(const hlease *l)
{
    return dls_holder_bound_of(l->observed, l->renewed, l->last_renewal,
                               l->duration.ns, l->has_max, l->max.ns);
}

/* ---- writing the holder's own records -------------------------------------- */

/* Encodes f, seals it when the holder has a secret, appends it. */
static int append_fact(dls_holder *h, const dls_fact *f)
{
    size_t flen = 0;
    int rc = dls_fact_encode(f, h->fact, sizeof h->fact, &flen);
    if (rc != 0)
        return rc;
    const uint8_t *rec = h->fact;
    size_t rlen = flen;
    if (h->secret) {
        rc = dls_envelope_seal(h->secret, h->medium_id, h->fact, flen, h->env,
                               sizeof h->env, &rlen);
        if (rc != 0)
            return rc;
        rec = h->env;
    }
    uint64_t pos;
    return dls_medium_append(h->medium, rec, rlen, &pos, NULL);
}

static int append_renewal(dls_holder *h, uint64_t lease, uint64_t seq)
{
    dls_fact f;
    memset(&f, 0, sizeof f);
    f.kind = DLS_FACT_RENEWAL;
    f.keys = DLS_K_LEASE | DLS_K_SEQ;
    f.lease = lease;
    f.seq = seq;
    return append_fact(h, &f);
}

static int append_release(dls_holder *h, uint64_t lease, bool commit)
{
    dls_fact f;
    memset(&f, 0, sizeof f);
    f.kind = DLS_FACT_RELEASE;
    f.keys = DLS_K_LEASE | (commit ? DLS_K_COMMIT : 0u);
    f.lease = lease;
    f.commit = commit;
    return append_fact(h, &f);
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
}

/* Reads the holder's own medium from 0 for its last proposal seq, and for
 * the largest lease id it renewed or released there (an earlier run's
 * leases, never taken up again unsolicited: their next renewals would start
 * over at seq 1 and count for nothing at the judge while the holder's bound
 * grew on them). Only records attributed to this holder count (a forged huge
 * seq or lease id on the medium must not exhaust the holder's seq space or
 * raise its floor). */
static int read_own_seq(dls_holder *h, char *msg, size_t cap)
{
    dls_keyring *kr = NULL;
    dls_resolver *r = NULL;
    dls_cursor *c = NULL;
    int rc;
    if (h->secret) {
        rc = dls_keyring_new(&kr);
        if (rc == 0)
            rc = dls_keyring_add(kr, (const uint8_t *)h->name, h->name_len,
                                 dls_secret_kind(h->secret),
                                 dls_secret_public(h->secret));
        if (rc == 0)
            rc = dls_resolver_new_signed(&r, h->medium_id, kr);
    } else {
        rc = dls_resolver_new_medium(&r, h->medium_id, h->name, NULL);
    }
    if (rc == 0)
        rc = dls_cursor_new(&c, h->medium, 0);
    while (rc == 0) {
        dls_record rec;
        dls_where w;
        dls_next nx = dls_cursor_next(c, &rec, &w);
        if (nx == DLS_NEXT_BLOCKED || nx == DLS_NEXT_END)
            break;
        if (nx == DLS_NEXT_GAP)
            continue;
        if (nx == DLS_NEXT_ERROR) {
            rc = DLS_ERR_TRANSPORT;
            say(msg, cap, "holder: its own medium cannot be read back for its last "
                          "proposal seq (transport-error)");
            break;
        }
        dls_attribution a;
        dls_resolver_attribute(r, rec.p, rec.n, &a);
        if (!a.attributed || !bytes_is(a.author, h->name, h->name_len))
            continue;
        dls_fact f;
        if (dls_fact_decode(a.fact.p, a.fact.n, &f, NULL) != 0)
            continue;
        if (f.kind == DLS_FACT_PROPOSAL && f.seq > h->prop_seq)
            h->prop_seq = f.seq;
        if ((f.kind == DLS_FACT_RENEWAL || f.kind == DLS_FACT_RELEASE) &&
            f.lease > h->own_floor)
            h->own_floor = f.lease;
    }
    dls_cursor_del(c);
    dls_resolver_del(r);
    dls_keyring_del(kr);
    if (rc != 0 && msg && cap > 0 && msg[0] == '\0')
        snprintf(msg, cap, "holder: reading back its own medium failed: %s",
                 dls_strerror(rc));
    return rc;
}

static int check_parts(const dls_holder_parts *p, dls_holder *h, char *msg, size_t cap)
{
    if (!p || !p->medium || !p->journal || !p->ticks) {
        say(msg, cap, "holder: a medium, a journal cursor and a tick cursor are required");
        return DLS_ERR_INVAL;
    }
    if (!valid_name(p->name, &h->name_len) || !valid_name(p->grantor, &h->grantor_len) ||
        !valid_name(p->tick_party, &h->tick_party_len)) {
        say(msg, cap, "holder: the holder, grantor and tick party names must be 1-64 "
                      "bytes of 0x21-0x7E or 0x80-0xFF");
        return DLS_ERR_INVAL;
    }
    if (p->secret && strcmp(dls_secret_name(p->secret), p->name) != 0) {
        say(msg, cap, "holder: the secret belongs to another party than the holder's name");
        return DLS_ERR_INVAL;
    }
    int rc = dls_resolver_check(p->journal_resolver,
                                dls_medium_id(dls_cursor_medium(p->journal)));
    if (rc != 0) {
        say(msg, cap, rc == DLS_ERR_NORESOLVER
                          ? "holder: the journal has no resolver"
                          : "holder: the journal's resolver is bound to another medium");
        return rc;
    }
    rc = dls_resolver_check(p->tick_resolver, dls_medium_id(dls_cursor_medium(p->ticks)));
    if (rc != 0) {
        say(msg, cap, rc == DLS_ERR_NORESOLVER
                          ? "holder: the tick cursor has no resolver"
                          : "holder: the tick resolver is bound to another medium");
        return rc;
    }
    return 0;
}

int dls_holder_new(dls_holder **out, const dls_holder_parts *parts,
                   const dls_holder_settings *s, const dls_holder_callbacks *cb,
                   void *user_data, char *msg, size_t msg_cap)
{
    if (msg && msg_cap > 0)
        msg[0] = '\0';
    if (!out) {
        say(msg, msg_cap, "holder: out is NULL");
        return DLS_ERR_INVAL;
    }
    *out = NULL;
    if (sodium_init() < 0) {
        say(msg, msg_cap, "holder: libsodium failed to initialise");
        return DLS_ERR_SODIUM;
    }
    dls_holder_settings def;
    if (!s) {
        dls_holder_settings_default(&def);
        s = &def;
    }
    if (s->max_proposals == 0 || s->max_leases == 0 ||
        s->max_proposals > 1u << 20 || s->max_leases > 1u << 20 ||
        s->renew_interval_ns > DLS_NS_MAX) {
        say(msg, msg_cap, "holder: settings out of range (max_proposals and max_leases "
                          "1..2^20, renew_interval_ns <= 2^63-1)");
        return DLS_ERR_INVAL;
    }
    dls_holder *h = calloc(1, sizeof *h);
    if (!h) {
        say(msg, msg_cap, "holder: out of memory");
        return DLS_ERR_NOMEM;
    }
    int rc = check_parts(parts, h, msg, msg_cap);
    if (rc != 0) {
        free(h);
        return rc;
    }
    rc = dls_holder_sizing_check(s, 0, 0,
                                 dls_medium_retention(parts->medium) ==
                                     DLS_RETAIN_EVICT_OLDEST,
                                 msg, msg_cap);
    if (rc != 0) {
        free(h);
        return rc;
    }
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
    if (!h->props || !h->leases) {
        say(msg, msg_cap, "holder: out of memory");
        dls_holder_del(h);
        return DLS_ERR_NOMEM;
    }
    rc = read_own_seq(h, msg, msg_cap);
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
    free(h->ev);
    sodium_memzero(h->msg, sizeof h->msg);
    free(h);
}

/* ---- proposing ------------------------------------------------------------------ */

int dls_holder_propose(dls_holder *h, const uint8_t *subject, size_t subject_len,
                       const dls_duration *ask, dls_mode mode, uint64_t *handle)
{
    if (!h)
        return DLS_ERR_INVAL;
    h->msg[0] = '\0';
    size_t end = 0;
    if (!subject || subject_len == 0 || subject_len > DLS_SUBJECT_MAX ||
        dls_mp_skip(subject, subject_len, 0, DLS_FACT_MAX_DEPTH - 1, &end, NULL) != 0 ||
        end != subject_len) {
        say(h->msg, sizeof h->msg, "propose: the subject must be one msgpack value of "
                                   "1-1024 bytes, at most 7 levels deep");
        return DLS_ERR_INVAL;
    }
    if (mode != DLS_MODE_EXCLUSIVE && mode != DLS_MODE_SHARED)
        return DLS_ERR_INVAL;
    dls_fact f;
    memset(&f, 0, sizeof f);
    if (ask) {
        if (dls_duration_make(&f.duration, ask->unit, ask->magnitude) != 0 ||
            f.duration.ns == 0) {
            say(h->msg, sizeof h->msg, "propose: the ask is not a duration of 1 ns to "
                                       "2^63-1 ns in a v1 unit");
            return DLS_ERR_INVAL;
        }
        int rc = dls_holder_sizing_check(&h->s, f.duration.ns, 0, false, h->msg,
                                         sizeof h->msg);
        if (rc != 0)
            return rc;
    }
    if (h->nprops >= h->s.max_proposals || h->nprops + h->nleases >= h->s.max_leases) {
        say(h->msg, sizeof h->msg, "propose: too many outstanding proposals and leases "
                                   "(max_proposals, max_leases)");
        return DLS_ERR_STATE;
    }
    if (h->prop_seq >= DLS_NS_MAX)
        return DLS_ERR_OVERFLOW;
    hprop p;
    p.id[0] = 0xc4;
    p.id[1] = PROP_ID_LEN;
    randombytes_buf(p.id + 2, PROP_ID_LEN);
    p.seq = ++h->prop_seq; /* consumed even if the append fails */
    f.kind = DLS_FACT_PROPOSAL;
    f.keys = DLS_K_PROPOSAL | DLS_K_SUBJECT | DLS_K_SEQ;
    if (ask)
        f.keys |= DLS_K_DURATION;
    if (mode == DLS_MODE_SHARED)
        f.keys |= DLS_K_MODE;
    f.mode = mode;
    f.proposal.p = p.id;
    f.proposal.n = PROP_ENC_LEN;
    f.subject.p = subject;
    f.subject.n = subject_len;
    f.seq = p.seq;
    int rc = append_fact(h, &f);
    if (rc != 0) {
        snprintf(h->msg, sizeof h->msg, "propose: the append failed: %s", dls_strerror(rc));
        return rc;
    }
    p.handle = ++h->next_handle;
    h->props[h->nprops++] = p;
    if (handle)
        *handle = p.handle;
    return 0;
}

/* ---- the step ---------------------------------------------------------------------- */

/* Drains the tick cursor: every tick attributed to the tick party, valid,
 * and not older than now moves now. */
static void drain_ticks(dls_holder *h, dls_holder_result *r)
{
    while (!h->ticks_ended) {
        dls_record rec;
        dls_where w;
        dls_next nx = dls_cursor_next(h->ticks, &rec, &w);
        if (nx == DLS_NEXT_GAP)
            continue;
        if (nx == DLS_NEXT_END) {
            h->ticks_ended = true;
            break;
        }
        if (nx != DLS_NEXT_OK)
            break; /* blocked, or transport-error: now stays */
        dls_attribution a;
        dls_resolver_attribute(h->tres, rec.p, rec.n, &a);
        dls_fact f;
        if (!a.attributed || !bytes_is(a.author, h->tick_party, h->tick_party_len) ||
            dls_fact_decode(a.fact.p, a.fact.n, &f, NULL) != 0 ||
            f.kind != DLS_FACT_TICK || (h->has_now && f.reading.ns < h->now)) {
            if (r)
                r->ticks_ignored++;
            continue;
        }
        h->now = f.reading.ns;
        h->has_now = true;
        if (r)
            r->ticks++;
    }
}

/* True when the envelope map carries "dao.env/sig" (the grantor's records
 * are signed, never MACed: a shared MAC key could forge them). */
static bool has_sig(const uint8_t *p, size_t n)
{
    static const char key[] = "dao.env/sig";
    dls_mp_item it;
    if (dls_mp_read(p, n, 0, &it) != 0 || it.type != DLS_MP_MAP)
        return false;
    size_t off = it.end;
    for (uint32_t i = 0; i < it.len; i++) {
        dls_mp_item k;
        if (dls_mp_read(p, n, off, &k) != 0)
            return false;
        if (k.type == DLS_MP_STR && k.len == sizeof key - 1 &&
            memcmp(k.data, key, sizeof key - 1) == 0)
            return true;
        size_t next;
        if (dls_mp_skip(p, n, off, DLS_MP_MAX_DEPTH, &next, NULL) != 0 ||
            dls_mp_skip(p, n, next, DLS_MP_MAX_DEPTH, &off, NULL) != 0)
            return false;
    }
    return false;
}

/* Verifies a journal record that concerns the holder and decodes the fact
 * it carries as verified. */
static bool verify_record(dls_holder *h, const uint8_t *p, size_t n, dls_fact *f)
{
    dls_attribution a;
    dls_resolver_attribute(h->jres, p, n, &a);
    return a.attributed && a.kind == DLS_REC_ENVELOPE &&
           bytes_is(a.author, h->grantor, h->grantor_len) && has_sig(p, n) &&
           dls_fact_decode(a.fact.p, a.fact.n, f, NULL) == 0;
}

static void warn_sizing(dls_holder *h, uint64_t lease, uint64_t proposal)
{
    dls_holder_event *e = event_push(h, DLS_HOLDER_SIZING, lease, proposal);
    event_text(e, h->msg, strlen(h->msg));
    if (h->cb.warn)
        h->cb.warn(h->ud, DLS_ERR_SIZING, h->msg);
}

static void on_grant(dls_holder *h, const dls_fact *f, dls_holder_result *r)
{
    hprop *p = (f->keys & DLS_K_PROPOSAL) ? find_prop(h, f->proposal) : NULL;
    uint64_t id = f->lease;
    bool accept;
    if (find_lease(h, id))
        accept = false; /* rule 6: accepted repeated for one lease */
    else if (p)
        accept = true; /* answers one of its own outstanding proposals */
    else
        accept = !(f->keys & DLS_K_PROPOSAL) && h->s.accept_unsolicited &&
                 id > h->max_seen && id > h->s.lease_floor && id > h->own_floor;
    if (id > h->max_seen)
        h->max_seen = id;
    if (!accept) {
        r->ignored++;
        return;
    }
    uint64_t handle = p ? p->handle : 0;
    if (p)
        drop_prop(h, p);
    if (memcmp(f->medium, h->medium_id, DLS_MEDIUM_ID_LEN) != 0) {
        event_push(h, DLS_HOLDER_MISREGISTERED, id, handle);
        return;
    }
    if (h->nleases >= h->s.max_leases) {
        r->ignored++; /* unsolicited, no room: not held */
        return;
    }
    uint8_t *subject = malloc(f->subject.n ? f->subject.n : 1);
    if (!subject) {
        r->ignored++;
        h->events_lost++;
        return;
    }
    memcpy(subject, f->subject.p, f->subject.n);
    hlease *l = &h->leases[h->nleases++];
    memset(l, 0, sizeof *l);
    l->id = id;
    l->proposal = handle;
    l->state = DLS_HOLDER_HELD;
    l->subject = subject;
    l->subject_len = f->subject.n;
    l->mode = (f->keys & DLS_K_MODE) ? f->mode : DLS_MODE_EXCLUSIVE;
    l->duration = f->duration;
    l->has_max = (f->keys & DLS_K_MAX) != 0;
    if (l->has_max)
        l->max = f->max;
    l->interval = dls_holder_interval_for(&h->s, l->duration.ns);
    l->observed = h->now; /* the reading at which the grant was observed */
    event_push(h, DLS_HOLDER_GRANTED, id, handle);
    if (dls_holder_sizing_check(&h->s, l->duration.ns, l->has_max ? l->max.ns : 0,
                                false, h->msg, sizeof h->msg) != 0)
        warn_sizing(h, id, handle);
}

static void on_refusal(dls_holder *h, const dls_fact *f, dls_holder_result *r)
{
    hprop *p = find_prop(h, f->proposal);
    if (!p) {
        r->ignored++;
        return;
    }
    dls_holder_event *e = event_push(h, DLS_HOLDER_REFUSED, 0, p->handle);
    if (f->keys & DLS_K_REASON)
        event_text(e, f->reason.p, f->reason.n);
    drop_prop(h, p);
}

static void on_lapsed(dls_holder *h, const dls_fact *f, dls_holder_result *r)
{
    hlease *l = find_lease(h, f->lease);
    if (!l) {
        r->ignored++;
        return;
    }
    dls_holder_event *e = event_push(h, DLS_HOLDER_LAPSED, l->id, l->proposal);
    if (e)
        e->cause = f->cause;
    drop_lease(h, l);
}

/* One journal record: decoded first; verified only when it concerns this
 * holder (verification is the expensive part). */
static void on_journal_record(dls_holder *h, const uint8_t *p, size_t n,
                              dls_holder_result *r)
{
    dls_attribution a;
    dls_record_classify(p, n, &a);
    if (a.kind != DLS_REC_ENVELOPE || a.why == DLS_WHY_MALFORMED ||
        !bytes_is(a.author, h->grantor, h->grantor_len))
        return; /* bare facts and other authors never count on a journal */
    dls_fact f;
    if (dls_fact_decode(a.fact.p, a.fact.n, &f, NULL) != 0)
        return; /* defective, or a pass mark beyond the lease-fact limit */
    switch (f.kind) {
    case DLS_FACT_GRANT:
        if (!bytes_is(f.holder, h->name, h->name_len))
            return;
        break;
    case DLS_FACT_REFUSAL:
        if (!bytes_is(f.holder, h->name, h->name_len) || !find_prop(h, f.proposal))
            return;
        break;
    case DLS_FACT_RECLAIM:
        if (!find_lease(h, f.lease))
            return;
        break;
    default:
        return;
    }
    dls_fact vf;
    if (!verify_record(h, p, n, &vf) || vf.kind != f.kind) {
        r->forged++;
        return;
    }
    r->verified++;
    if (vf.kind == DLS_FACT_GRANT)
        on_grant(h, &vf, r);
    else if (vf.kind == DLS_FACT_REFUSAL)
        on_refusal(h, &vf, r);
    else
        on_lapsed(h, &vf, r);
}

static void drain_journal(dls_holder *h, dls_holder_result *r)
{
    size_t drained = 0;
    while (!h->journal_ended) {
        if (h->s.journal_budget && drained >= h->s.journal_budget) {
            r->more = true;
            return;
        }
        dls_record rec;
        dls_where w;
        dls_next nx = dls_cursor_next(h->journal, &rec, &w);
        switch (nx) {
        case DLS_NEXT_OK:
            drained++;
            r->journal_records++;
            on_journal_record(h, rec.p, rec.n, r);
            break;
        case DLS_NEXT_GAP:
            r->journal_gaps++;
            break;
        case DLS_NEXT_END:
            h->journal_ended = true;
            break;
        case DLS_NEXT_ERROR:
            r->journal_error = DLS_ERR_TRANSPORT;
            return;
        case DLS_NEXT_BLOCKED:
        default:
            return;
        }
    }
}

/* Every held lease whose bound is at or before now stops: BOUND. */
static void check_bounds(dls_holder *h)
{
    for (size_t i = 0; i < h->nleases; i++) {
        hlease *l = &h->leases[i];
        if (l->state != DLS_HOLDER_HELD)
            continue;
        if (h->ticks_ended || h->now >= lease_bound(l)) {
            l->state = DLS_HOLDER_AT_BOUND;
            event_push(h, DLS_HOLDER_BOUND, l->id, l->proposal);
        }
    }
}

/* The reading at which a held lease next needs a step. */
static uint64_t lease_next(const hlease *l)
{
    uint64_t due = dls_holder_due_of(l->observed, l->renewed, l->last_renewal, l->interval);
    if (l->failed && due <= l->failed_at)
        due = dls_add_sat(l->failed_at, 1); /* retry at a newer reading */
    uint64_t bound = lease_bound(l);
    return due < bound ? due : bound;
}

static void renew_due(dls_holder *h)
{
    for (size_t i = 0; i < h->nleases; i++) {
        hlease *l = &h->leases[i];
        if (l->state == DLS_HOLDER_RELEASING) {
            int rc = append_release(h, l->id, l->commit);
            dls_holder_event *e = event_push(
                h, rc == 0 ? DLS_HOLDER_RELEASED : DLS_HOLDER_RELEASE_FAILED, l->id,
                l->proposal);
            if (e)
                e->error = rc;
            if (rc == 0)
                l->state = DLS_HOLDER_RELEASED_OK;
            continue;
        }
        if (l->state != DLS_HOLDER_HELD || h->now < lease_next(l) ||
            h->now >= lease_bound(l))
            continue;
        if (l->seq >= DLS_NS_MAX) {
            l->failed = true;
            l->failed_at = h->now;
            dls_holder_event *e = event_push(h, DLS_HOLDER_RENEWAL_FAILED, l->id,
                                             l->proposal);
            if (e)
                e->error = DLS_ERR_OVERFLOW;
            continue;
        }
        uint64_t seq = ++l->seq; /* every attempt takes a fresh seq */
        uint64_t before = h->now; /* the reading taken before the append */
        int rc = append_renewal(h, l->id, seq);
        dls_holder_event *e = event_push(
            h, rc == 0 ? DLS_HOLDER_RENEWED : DLS_HOLDER_RENEWAL_FAILED, l->id, l->proposal);
        if (e) {
            e->seq = seq;
            e->error = rc;
        }
        if (rc == 0) {
            l->renewed = true;
            l->last_renewal = before;
            l->failed = false;
        } else {
            l->failed = true;
            l->failed_at = before;
        }
    }
}

bool dls_holder_next_reading(const dls_holder *h, uint64_t *reading)
{
    if (!h)
        return false;
    bool any = false;
    uint64_t best = UINT64_MAX;
    for (size_t i = 0; i < h->nleases; i++) {
        const hlease *l = &h->leases[i];
        if (l->state != DLS_HOLDER_HELD && l->state != DLS_HOLDER_RELEASING)
            continue;
        uint64_t next = l->state == DLS_HOLDER_RELEASING ? dls_add_sat(h->now, 1)
                                                         : lease_next(l);
        if (!any || next < best)
            best = next;
        any = true;
    }
    if (any && reading)
        *reading = best;
    return any;
}

int dls_holder_step(dls_holder *h, dls_holder_result *res)
{
    if (!h || !res)
        return DLS_ERR_INVAL;
    memset(res, 0, sizeof *res);
    h->nev = 0;
    h->events_lost = 0;
    drain_ticks(h, res);
    if (h->has_now) {
        check_bounds(h);
        drain_journal(h, res);
        renew_due(h);
    }
    res->events = h->ev;
    res->n_events = h->nev;
    res->has_now = h->has_now;
    res->now = h->now;
    res->journal_ended = h->journal_ended;
    res->has_next = dls_holder_next_reading(h, &res->next_reading);
    if (h->ticks_ended)
        return DLS_ERR_TICKS_ENDED;
    return h->events_lost ? DLS_ERR_NOMEM : 0;
}

/* ---- acting ------------------------------------------------------------------------ */

bool dls_holder_may_act(dls_holder *h, uint64_t lease)
{
    if (!h)
        return false;
    drain_ticks(h, NULL);
    const hlease *l = find_lease(h, lease);
    return l && l->state == DLS_HOLDER_HELD && h->has_now && !h->ticks_ended &&
           h->now < lease_bound(l);
}

int dls_holder_remaining(dls_holder *h, uint64_t lease, uint64_t *ns)
{
    if (!h || !ns)
        return DLS_ERR_INVAL;
    drain_ticks(h, NULL);
    const hlease *l = find_lease(h, lease);
    if (!l)
        return DLS_ERR_NO_LEASE;
    *ns = (l->state == DLS_HOLDER_HELD && !h->ticks_ended)
              ? dls_sub_floor(lease_bound(l), h->now)
              : 0;
    return 0;
}

int dls_holder_release(dls_holder *h, uint64_t lease, bool commit)
{
    if (!h)
        return DLS_ERR_INVAL;
    hlease *l = find_lease(h, lease);
    if (!l)
        return DLS_ERR_NO_LEASE;
    if (l->state == DLS_HOLDER_RELEASED_OK)
        return 0;
    l->state = DLS_HOLDER_RELEASING; /* stops acting and renewing at once */
    l->commit = commit;
    int rc = append_release(h, l->id, commit);
    if (rc == 0)
        l->state = DLS_HOLDER_RELEASED_OK;
    return rc;
}

int dls_holder_forget(dls_holder *h, uint64_t lease)
{
    if (!h)
        return DLS_ERR_INVAL;
    hlease *l = find_lease(h, lease);
    if (!l)
        return DLS_ERR_NO_LEASE;
    if (l->state == DLS_HOLDER_HELD)
        return DLS_ERR_STATE;
    drop_lease(h, l);
    return 0;
}

/* ---- inspection ---------------------------------------------------------------------- */

int dls_holder_lease_info(const dls_holder *h, uint64_t lease, dls_holder_lease *info)
{
    if (!h || !info)
        return DLS_ERR_INVAL;
    const hlease *l = find_lease_c(h, lease);
    if (!l)
        return DLS_ERR_NO_LEASE;
    memset(info, 0, sizeof *info);
    info->lease = l->id;
    info->proposal = l->proposal;
    info->state = l->state;
    info->subject.p = l->subject;
    info->subject.n = l->subject_len;
    info->mode = l->mode;
    info->duration = l->duration;
    info->has_max = l->has_max;
    info->max = l->max;
    info->interval_ns = l->interval;
    info->observed = l->observed;
    info->renewed = l->renewed;
    info->last_renewal = l->last_renewal;
    info->seq = l->seq;
    info->bound = lease_bound(l);
    return 0;
}

uint64_t dls_holder_proposal_seq(const dls_holder *h)
{
    return h ? h->prop_seq : 0;
}

uint64_t dls_holder_max_seen(const dls_holder *h)
{
    return h ? h->max_seen : 0;
}

const char *dls_holder_message(const dls_holder *h)
{
    return h ? h->msg : "";
}

int dls_holder_proposal_id(const dls_holder *h, uint64_t handle, uint8_t id[16])
{
    if (!h || !id)
        return DLS_ERR_INVAL;
    for (size_t i = 0; i < h->nprops; i++) {
        if (h->props[i].handle == handle) {
            memcpy(id, h->props[i].id + 2, PROP_ID_LEN);
            return 0;
        }
    }
    return DLS_ERR_NOTFOUND;
}

const char *dls_holder_event_name(dls_holder_event_kind k)
{
    switch (k) {
    case DLS_HOLDER_GRANTED: return "granted";
    case DLS_HOLDER_REFUSED: return "refused";
    case DLS_HOLDER_LAPSED: return "lapsed";
    case DLS_HOLDER_RENEWED: return "renewed";
    case DLS_HOLDER_RENEWAL_FAILED: return "renewal-failed";
    case DLS_HOLDER_BOUND: return "bound";
    case DLS_HOLDER_RELEASED: return "released";
    case DLS_HOLDER_RELEASE_FAILED: return "release-failed";
    case DLS_HOLDER_SIZING: return "sizing";
    case DLS_HOLDER_MISREGISTERED: return "misregistered";
    }
    return "unknown";
}
