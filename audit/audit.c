/* Audit replay (judge.md "Audit replay"): re-executes the judge's
 * classification from the journal and the media alone.
 *
 * The replay is written from the specification, independently of the
 * judge's ledger: it shares only the codec (facts, marks, envelopes,
 * media). It keeps its own small ledger per lease, stamps every media
 * record with the now of the first mark whose drained position covers it,
 * classifies at every mark and compares with the mark's due list.
 */
#include "audit/internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "audit/amark.h"
#include "daolease/attrib.h"

#define MAX_MESSAGES 1000 /* warnings and failure details kept (then counted) */

/* ---- small helpers --------------------------------------------------------- */

static int grow(void **arr, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 8;
    void *na = realloc(*arr, ncap * elem);
    if (!na)
        return DLS_ERR_NOMEM;
    *arr = na;
    *cap = ncap;
    return 0;
}

/* The index stored under key[0..n) of t into *v (v may be NULL); false when
 * the key is absent. */
static bool ix_get(const dls_htab *t, const uint8_t *key, size_t n, uint64_t *v)
{
    const uint64_t *p = dls_htab_find(t, key, n);
    if (p && v)
        *v = *p;
    return p != NULL;
}

/* Stores v under key[0..n) of t, inserting or replacing; 0 or an error of
 * dls_htab_put. */
static int ix_set(dls_htab *t, const uint8_t *key, size_t n, uint64_t v)
{
    uint64_t *p;
    int rc = dls_htab_put(t, key, n, &p, NULL);
    if (!rc)
        *p = v;
    return rc;
}

/* Pushes onto a (pointer, count, capacity) triple; on failure flags
 * a->nomem and pushes nothing. */
#define APUSH(a, arr, n, cap, item)                                                     \
    do {                                                                                \
        if (grow((void **)&(arr), (n), &(cap), sizeof *(arr))) {                        \
            (a)->nomem = true;                                                          \
        } else {                                                                        \
            (arr)[(n)++] = (item);                                                      \
        }                                                                               \
    } while (0)

static void hex16(const uint8_t id[DLS_MEDIUM_ID_LEN], char out[33])
{
    static const char d[] = "0123456789abcdef";
    for (int i = 0; i < DLS_MEDIUM_ID_LEN; i++) {
        out[2 * i] = d[id[i] >> 4];
        out[2 * i + 1] = d[id[i] & 15];
    }
    out[32] = 0;
}

/* A printable copy of a name for messages (bytes outside 0x20–0x7E as \xHH). */
static void printable(const uint8_t *p, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < cap; i++) {
        if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\') {
            out[o++] = (char)p[i];
        } else {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", p[i]);
        }
    }
    out[o < cap ? o : cap - 1] = 0;
}

static char *vfmt(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int len = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (len < 0)
        return NULL;
    char *s = malloc((size_t)len + 1);
    if (s)
        vsnprintf(s, (size_t)len + 1, fmt, ap);
    return s;
}

static void add_message(dls_audit *a, char ***arr, size_t *n, size_t *cap, uint64_t *dropped,
                        const char *fmt, va_list ap)
{
    if (*n >= MAX_MESSAGES) {
        (*dropped)++;
        return;
    }
    char *s = vfmt(fmt, ap);
    if (!s) {
        a->nomem = true;
        return;
    }
    if (grow((void **)arr, *n, cap, sizeof **arr)) {
        free(s);
        a->nomem = true;
        return;
    }
    (*arr)[(*n)++] = s;
}

__attribute__((format(printf, 2, 3))) static void warn(dls_audit *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_message(a, &a->warnings, &a->sum.n_warnings, &a->cap_warnings, &a->warnings_dropped,
                fmt, ap);
    va_end(ap);
}

__attribute__((format(printf, 2, 3))) static void detail(dls_audit *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_message(a, &a->details, &a->sum.n_failure_details, &a->cap_details,
                &a->details_dropped, fmt, ap);
    va_end(ap);
}

/* ---- public helpers ------------------------------------------------------- */

const char *dls_audit_verdict_name(dls_audit_verdict v)
{
    switch (v) {
    case DLS_AUDIT_OK: return "ok";
    case DLS_AUDIT_LIVE: return "live";
    case DLS_AUDIT_UNVERIFIABLE: return "unverifiable";
    case DLS_AUDIT_DUE_MISMATCH: return "due_mismatch";
    case DLS_AUDIT_UNJUSTIFIED_LAPSE: return "unjustified_lapse";
    case DLS_AUDIT_DOUBLE_GRANT: return "double_grant";
    }
    return NULL;
}

void dls_audit_settings_default(dls_audit_settings *s)
{
    if (!s)
        return;
    s->max_media = 1024;
    s->keep_renewal_points = true;
}

size_t dls_audit_lease_count(const dls_audit *a)
{
    return a ? a->n_leases : 0;
}

const dls_audit_lease *dls_audit_lease_at(const dls_audit *a, size_t i)
{
    if (!a || i >= a->n_leases)
        return NULL;
    return &a->leases[i]->pub;
}

const dls_audit_summary *dls_audit_summary_of(const dls_audit *a)
{
    return a ? &a->sum : NULL;
}

int dls_audit_exit_status(const dls_audit *a)
{
    if (!a)
        return 3;
    if (a->sum.incomplete)
        return 3;
    const dls_audit_summary *s = &a->sum;
    return (s->unjustified_lapse || s->due_mismatch || s->double_grant || s->journal) ? 1 : 0;
}

void dls_audit_del(dls_audit *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n_leases; i++) {
        free(a->leases[i]->buf);
        free(a->leases[i]->points);
        free(a->leases[i]);
    }
    free(a->leases);
    dls_htab_free(&a->lease_ix);
    free(a->live);
    for (size_t i = 0; i < a->n_subjects; i++)
        free(a->subjects[i].bytes);
    free(a->subjects);
    dls_htab_free(&a->subject_ix);
    for (size_t i = 0; i < a->n_media; i++) {
        dls_cursor_del(a->media[i].cur);
        dls_resolver_del(a->media[i].res);
    }
    free(a->media);
    dls_htab_free(&a->medium_ix);
    dls_htab_free(&a->proposal_seq);
    dls_htab_free(&a->holder_ix);
    free(a->late_reclaims);
    for (size_t i = 0; i < a->sum.n_late_renewals; i++)
        free((void *)a->late_renewals[i].holder.p);
    free(a->late_renewals);
    free(a->unflagged);
    free(a->mismatches);
    free(a->unver_passes);
    free(a->unver_leases);
    free(a->gaps);
    free(a->terrs);
    free(a->restarts);
    free(a->basis_changes);
    for (size_t i = 0; i < a->sum.n_bases; i++)
        free((void *)a->bases[i].name.p);
    free(a->bases);
    free(a->missing);
    free(a->unused);
    for (size_t i = 0; i < a->sum.n_warnings; i++)
        free(a->warnings[i]);
    free(a->warnings);
    for (size_t i = 0; i < a->sum.n_failure_details; i++)
        free(a->details[i]);
    free(a->details);
    for (size_t i = 0; i < a->sum.n_forged_authors; i++)
        free((void *)a->forged_authors[i].p);
    free(a->forged_authors);
    free(a->incomplete);
    free(a);
}

/* ---- state lookups --------------------------------------------------------- */

static audit_lease *lease_find(dls_audit *a, uint64_t id)
{
    const uint64_t *ix = dls_htab_find_u64(&a->lease_ix, id);
    return ix ? a->leases[*ix] : NULL;
}

/* Records that lease id sits at leases[ix]; 0 or an error of dls_htab_put. */
static int lease_ix_set(dls_audit *a, uint64_t id, uint64_t ix)
{
    uint64_t *p;
    int rc = dls_htab_put_u64(&a->lease_ix, id, &p, NULL);
    if (!rc)
        *p = ix;
    return rc;
}

static dls_audit_point point_now(const dls_audit *a)
{
    dls_audit_point p = {a->last_pass, a->last_now, a->cur_basis};
    return p;
}

/* The medium with this id; creates a "missing" entry when it was not given. */
static audit_medium *medium_get(dls_audit *a, const uint8_t id[DLS_MEDIUM_ID_LEN], size_t *ixo)
{
    uint64_t ix;
    if (ix_get(&a->medium_ix, id, DLS_MEDIUM_ID_LEN, &ix)) {
        if (ixo)
            *ixo = (size_t)ix;
        a->media[ix].named = true;
        return &a->media[ix];
    }
    if (grow((void **)&a->media, a->n_media, &a->cap_media, sizeof *a->media)) {
        a->nomem = true;
        return NULL;
    }
    audit_medium *m = &a->media[a->n_media];
    memset(m, 0, sizeof *m);
    memcpy(m->id, id, DLS_MEDIUM_ID_LEN);
    m->given_ix = SIZE_MAX;
    m->named = true;
    if (ix_set(&a->medium_ix, id, DLS_MEDIUM_ID_LEN, a->n_media)) {
        a->nomem = true;
        return NULL;
    }
    if (ixo)
        *ixo = a->n_media;
    a->n_media++;
    /* report it once */
    uint8_t mid[DLS_MEDIUM_ID_LEN];
    memcpy(mid, id, sizeof mid);
    if (!grow((void **)&a->missing, a->sum.n_missing_media, &a->cap_missing, sizeof *a->missing))
        memcpy(a->missing[a->sum.n_missing_media++], mid, DLS_MEDIUM_ID_LEN);
    else
        a->nomem = true;
    char hx[33];
    hex16(id, hx);
    warn(a, "medium %s is named by the journal but was not given: the leases registered on "
            "it are unverifiable", hx);
    return m;
}

static void live_add(dls_audit *a, size_t ix)
{
    if (grow((void **)&a->live, a->n_live, &a->cap_live, sizeof *a->live)) {
        a->nomem = true;
        return;
    }
    a->leases[ix]->live_pos = a->n_live;
    a->live[a->n_live++] = ix;
}

static void live_remove(dls_audit *a, audit_lease *l)
{
    size_t pos = l->live_pos;
    size_t last = a->live[--a->n_live];
    a->live[pos] = last;
    a->leases[last]->live_pos = pos;
}

static void mark_unknown(dls_audit *a, audit_lease *l)
{
    l->unknown = true;
    l->resumed = a->last_now;
    l->pub.findings |= DLS_AUDIT_F_UNKNOWN;
}

static void make_unverifiable(audit_lease *l)
{
    l->unverifiable = true;
    l->pub.findings |= DLS_AUDIT_F_UNVERIFIABLE;
}

static void unverifiable_pass(dls_audit *a, uint64_t pass)
{
    if (a->sum.n_unverifiable_passes && a->unver_passes[a->sum.n_unverifiable_passes - 1] == pass)
        return;
    APUSH(a, a->unver_passes, a->sum.n_unverifiable_passes, a->cap_unver_passes, pass);
}

/* Every live lease registered on medium `mix` becomes unverifiable: records
 * the judge drained in this pass cannot be read by the audit. */
static void span_unverifiable(dls_audit *a, size_t mix)
{
    unverifiable_pass(a, a->last_pass);
    for (size_t i = 0; i < a->n_live; i++) {
        audit_lease *l = a->leases[a->live[i]];
        if (l->medium_ix == mix)
            make_unverifiable(l);
    }
}

/* ---- the media: one record ------------------------------------------------- */

static void late_renewal_of(dls_audit *a, dls_bytes holder)
{
    uint64_t ix;
    if (ix_get(&a->holder_ix, holder.p, holder.n, &ix)) {
        a->late_renewals[ix].n++;
        return;
    }
    uint8_t *copy = malloc(holder.n + 1);
    if (!copy) {
        a->nomem = true;
        return;
    }
    memcpy(copy, holder.p, holder.n);
    dls_audit_holder_count hc = {{copy, holder.n}, 1};
    size_t n = a->sum.n_late_renewals;
    if (grow((void **)&a->late_renewals, n, &a->cap_late_renewals, sizeof *a->late_renewals) ||
        ix_set(&a->holder_ix, holder.p, holder.n, n)) {
        free(copy);
        a->nomem = true;
        return;
    }
    a->late_renewals[a->sum.n_late_renewals++] = hc;
}

static void apply_renewal(dls_audit *a, size_t mix, const dls_attribution *at, const dls_fact *f)
{
    audit_lease *l = lease_find(a, f->lease);
    if (!l || !l->live) {
        a->ignored[IGNORED_UNKNOWN_LEASE]++;
        return;
    }
    if (!dls_bytes_eq(at->author, l->pub.holder)) {
        a->ignored[IGNORED_WRONG_AUTHOR]++;
        return;
    }
    if (l->medium_ix != mix) {
        a->ignored[IGNORED_MISPLACED]++;
        return;
    }
    if (f->seq <= l->last_seq) {
        a->ignored[IGNORED_REPLAYED]++;
        return;
    }
    /* counted: judge.md step 2; late: more than half the duration after the
     * previous observation (integer ns: d > floor(duration / 2)). */
    uint64_t now = a->last_now;
    bool late = dls_passed(l->last_obs, now, l->pub.duration_ns / 2);
    l->last_seq = f->seq;
    l->last_obs = now;
    l->unknown = false;
    l->pub.renewals++;
    if (a->set.keep_renewal_points) {
        if (grow((void **)&l->points, (size_t)l->pub.renewals - 1, &l->cap_points,
                 sizeof *l->points))
            a->nomem = true;
        else
            l->points[l->pub.renewals - 1] = point_now(a);
        l->pub.renewal_points = l->points;
    }
    if (late) {
        l->pub.late_renewals++;
        late_renewal_of(a, l->pub.holder);
    }
}

static void apply_release(dls_audit *a, size_t mix, const dls_attribution *at, const dls_fact *f)
{
    audit_lease *l = lease_find(a, f->lease);
    if (!l || !l->live) {
        a->ignored[IGNORED_UNKNOWN_LEASE]++;
        return;
    }
    if (!dls_bytes_eq(at->author, l->pub.holder)) {
        a->ignored[IGNORED_WRONG_AUTHOR]++;
        return;
    }
    if (l->medium_ix != mix) {
        a->ignored[IGNORED_MISPLACED]++;
        return;
    }
    if (l->pub.released) { /* rule 6: the first release observed stands */
        a->defective[DEFECTIVE_RULE6]++;
        return;
    }
    l->pub.released = true;
    l->pub.commit = (f->keys & DLS_K_COMMIT) && f->commit;
}

static void apply_proposal(dls_audit *a, size_t mix, const dls_attribution *at, const dls_fact *f)
{
    /* key: medium index (8 bytes) then the author's name */
    uint8_t key[8 + DLS_ID_MAX];
    size_t an = at->author.n > DLS_ID_MAX ? DLS_ID_MAX : at->author.n;
    for (int i = 0; i < 8; i++)
        key[i] = (uint8_t)((uint64_t)mix >> (8 * i));
    memcpy(key + 8, at->author.p, an);
    uint64_t last = 0;
    if (ix_get(&a->proposal_seq, key, 8 + an, &last) && f->seq <= last) {
        a->ignored[IGNORED_REPLAYED]++;
        return;
    }
    if (ix_set(&a->proposal_seq, key, 8 + an, f->seq))
        a->nomem = true;
}

static void apply_record(dls_audit *a, size_t mix, const dls_record *rec)
{
    audit_medium *m = &a->media[mix];
    dls_attribution at;
    a->sum.media_records++;
    dls_resolver_attribute(m->res, rec->p, rec->n, &at);
    if (at.kind == DLS_REC_SEAL)
        return;
    if (!at.attributed) {
        switch (at.why) {
        case DLS_WHY_BARE_FACT: a->forged[FORGED_BARE_FACT]++; break;
        case DLS_WHY_SIGNATURE: a->forged[FORGED_SIGNATURE]++; break;
        case DLS_WHY_UNKNOWN_AUTHOR: a->forged[FORGED_UNKNOWN_AUTHOR]++; break;
        case DLS_WHY_WRONG_KEY_KIND: a->forged[FORGED_WRONG_KEY_KIND]++; break;
        default: a->forged[FORGED_MALFORMED]++; break;
        }
        return;
    }
    dls_fact f;
    dls_where w = {0};
    int rc = dls_fact_decode(at.fact.p, at.fact.n, &f, &w);
    if (rc) {
        int rule = rc >= DLS_ERR_RULE5 && rc <= DLS_ERR_RULE1 ? DLS_ERR_RULE1 - rc : 0;
        a->defective[rule]++;
        return;
    }
    switch (f.kind) {
    case DLS_FACT_NONE:
        a->ignored[IGNORED_NOT_LEASE_FACT]++;
        break;
    case DLS_FACT_RENEWAL:
        apply_renewal(a, mix, &at, &f);
        break;
    case DLS_FACT_RELEASE:
        apply_release(a, mix, &at, &f);
        break;
    case DLS_FACT_PROPOSAL:
        apply_proposal(a, mix, &at, &f);
        break;
    default: /* grants, refusals, lapsed and ticks are not read from lease-fact media */
        a->ignored[IGNORED_MISPLACED]++;
        break;
    }
}

/* ---- the media: one pass's drained span ------------------------------------ */

typedef struct span_gaps {
    const dls_amark_gap *g;
    size_t n;
} span_gaps;

static bool in_judge_gap(const dls_amark *mk, const uint8_t *id, uint64_t pos)
{
    for (size_t i = 0; i < mk->n_gaps; i++)
        if (!memcmp(mk->gaps[i].medium, id, DLS_MEDIUM_ID_LEN) && pos >= mk->gaps[i].from &&
            pos < mk->gaps[i].to)
            return true;
    return false;
}

/* True when every position of [from, to) is inside a gap the judge itself
 * recorded in this mark (the judge never read them either). */
static bool covered_by_judge_gap(const dls_amark *mk, const uint8_t *id, uint64_t from,
                                 uint64_t to)
{
    while (from < to) {
        bool hit = false;
        for (size_t i = 0; i < mk->n_gaps; i++) {
            const dls_amark_gap *g = &mk->gaps[i];
            if (!memcmp(g->medium, id, DLS_MEDIUM_ID_LEN) && from >= g->from && from < g->to) {
                from = g->to;
                hit = true;
                break;
            }
        }
        if (!hit)
            return false;
    }
    return true;
}

static void missing_span(dls_audit *a, size_t mix, const dls_amark *mk, uint64_t from,
                         uint64_t to, const char *why)
{
    if (from >= to || covered_by_judge_gap(mk, a->media[mix].id, from, to))
        return;
    char hx[33];
    hex16(a->media[mix].id, hx);
    warn(a, "medium %s: records %" PRIu64 "..%" PRIu64 " drained at pass %" PRIu64
            " cannot be read (%s): the leases registered on it are unverifiable from there",
         hx, from, to - 1, a->last_pass, why);
    span_unverifiable(a, mix);
}

/* Applies the records of medium `mix` in [m->drained, to): the span the
 * judge drained in this pass, skipping the gaps it recorded. */
static void read_span(dls_audit *a, size_t mix, const dls_amark *mk, uint64_t to)
{
    audit_medium *m = &a->media[mix];
    uint64_t from = m->drained;
    if (!m->m)
        return; /* missing: its leases are unverifiable already */
    if (m->read_stopped) {
        missing_span(a, mix, mk, from, to, "the medium could not be read");
        return;
    }
    uint64_t c = dls_cursor_position(m->cur);
    if (c > from) /* an earlier gap of the audit's own cursor jumped past */
        missing_span(a, mix, mk, from, c < to ? c : to, "evicted since the judge drained them");
    while ((c = dls_cursor_position(m->cur)) < to) {
        dls_record rec;
        dls_where w = {0};
        dls_next r = dls_cursor_next(m->cur, &rec, &w);
        if (r == DLS_NEXT_OK) {
            if (!in_judge_gap(mk, m->id, rec.position))
                apply_record(a, mix, &rec);
            continue;
        }
        if (r == DLS_NEXT_GAP) {
            uint64_t q = rec.position;
            missing_span(a, mix, mk, rec.gap_from > from ? rec.gap_from : from, q < to ? q : to,
                         "evicted since the judge drained them");
            continue;
        }
        char hx[33];
        hex16(m->id, hx);
        if (r == DLS_NEXT_ERROR) {
            m->read_stopped = true;
            warn(a, "medium %s: transport-error at position %" PRIu64 " (%s)", hx, c,
                 w.reason ? w.reason : "unreadable");
            missing_span(a, mix, mk, c, to, "transport-error");
        } else {
            if (!m->warned_short)
                warn(a, "medium %s: the copy given ends at position %" PRIu64
                        " but the journal drained it to %" PRIu64
                        " (a truncated or older copy?)", hx, c, to);
            m->warned_short = true;
            missing_span(a, mix, mk, c, to, r == DLS_NEXT_END ? "sealed before" : "not in the copy");
        }
        return;
    }
}

/* ---- a pass mark ------------------------------------------------------------ */

static uint32_t basis_intern(dls_audit *a, const uint8_t *p, size_t n, bool *fresh)
{
    *fresh = false;
    for (size_t i = 0; i < a->sum.n_bases; i++)
        if (a->bases[i].name.n == n && (n == 0 || !memcmp(a->bases[i].name.p, p, n)))
            return (uint32_t)i;
    uint8_t *copy = malloc(n + 1);
    if (!copy || grow((void **)&a->bases, a->sum.n_bases, &a->cap_bases, sizeof *a->bases)) {
        free(copy);
        a->nomem = true;
        return a->cur_basis;
    }
    if (n)
        memcpy(copy, p, n);
    copy[n] = 0;
    dls_audit_basis b = {{copy, n}, UINT64_MAX, 0, 0, 0};
    a->bases[a->sum.n_bases] = b;
    *fresh = true;
    return (uint32_t)a->sum.n_bases++;
}

static void journal_malformed(dls_audit *a)
{
    a->sum.journal_malformed++;
}

static void add_mismatch(dls_audit *a, dls_audit_mismatch mm)
{
    a->sum.due_mismatch++;
    APUSH(a, a->mismatches, a->sum.n_due_mismatches, a->cap_mismatches, mm);
    audit_lease *l = lease_find(a, mm.lease);
    if (l) {
        l->pub.due_mismatches++;
        l->pub.findings |= DLS_AUDIT_F_DUE_MISMATCH;
    }
    const char *j = mm.judge ? dls_cause_name(mm.judge) : "not due";
    const char *u = mm.audit ? dls_cause_name(mm.audit) : "not due";
    detail(a, "due mismatch: pass %" PRIu64 ", lease %" PRIu64 ": the judge's due list says "
              "%s, the audit finds %s", mm.pass, mm.lease, j, u);
}

/* Classification of one live lease at the current mark (judge.md step 3):
 * the first cause that holds, among release, cap, policy, silence. */
static dls_cause classify(dls_audit *a, audit_lease *l, const dls_amark *mk, dls_cause judge)
{
    uint64_t now = a->last_now, tol = mk->tolerance_ns;
    if (l->pub.released)
        return DLS_CAUSE_RELEASE;
    if (l->pub.max_ns && dls_passed(l->tenure, now, dls_add_sat(l->pub.max_ns, tol)))
        return DLS_CAUSE_CAP;
    if (judge == DLS_CAUSE_POLICY) /* the owner ended it: only the judge can say so */
        return DLS_CAUSE_POLICY;
    uint64_t dt = dls_add_sat(l->pub.duration_ns, tol);
    audit_medium *m = &a->media[l->medium_ix];
    /* a medium that answered transport-error in this pass: its leases are not
     * judged for silence, until the unbroken failure outlasts duration +
     * tolerance since its first pass */
    if (m->failing_pass == a->last_pass && !dls_passed(m->fail_first_now, now, dt))
        return DLS_CAUSE_NONE;
    if (!dls_passed(l->last_obs, now, dt))
        return DLS_CAUSE_NONE;
    if (l->unknown && !dls_passed(l->resumed, now, l->pub.duration_ns))
        return DLS_CAUSE_NONE;
    return DLS_CAUSE_SILENCE;
}

static int cmp_mismatch(const void *x, const void *y)
{
    const dls_audit_mismatch *p = x, *q = y;
    if (p->pass != q->pass)
        return p->pass < q->pass ? -1 : 1;
    return p->lease < q->lease ? -1 : p->lease > q->lease;
}

static void classify_all(dls_audit *a, const dls_amark *mk)
{
    uint64_t pass = a->last_pass;
    size_t first_mm = a->sum.n_due_mismatches;
    uint64_t mm_before = a->sum.due_mismatch;
    /* the judge's due list */
    for (size_t i = 0; i < mk->n_due; i++) {
        const dls_amark_due *d = &mk->due[i];
        audit_lease *l = lease_find(a, d->lease);
        if (!l || !l->live) {
            dls_audit_mismatch mm = {pass, d->lease, d->cause, DLS_CAUSE_NONE};
            add_mismatch(a, mm);
            continue;
        }
        if (l->jd_pass == pass) {
            journal_malformed(a);
            detail(a, "journal: pass %" PRIu64 " lists lease %" PRIu64 " twice in due", pass,
                   d->lease);
            continue;
        }
        l->jd_pass = pass;
        l->jd_cause = d->cause;
        if (!l->pub.judge_due_pass) {
            l->pub.judge_due_pass = pass;
            l->pub.judge_due_cause = d->cause;
        }
    }
    /* the audit's own classification */
    for (size_t i = 0; i < a->n_live; i++) {
        audit_lease *l = a->leases[a->live[i]];
        dls_cause jd = l->jd_pass == pass ? l->jd_cause : DLS_CAUSE_NONE;
        if (l->unverifiable) { /* adopt the judge's conclusion */
            if (jd && !l->pending) {
                l->pending = true;
                l->pending_cause = jd;
                l->pub.due = point_now(a);
                l->pub.due_cause = jd;
            }
            continue;
        }
        dls_cause ad = l->pending ? DLS_CAUSE_NONE : classify(a, l, mk, jd);
        if (ad != jd) {
            dls_audit_mismatch mm = {pass, l->pub.lease, jd, ad};
            add_mismatch(a, mm);
        }
        if (ad) {
            l->pending = true;
            l->pending_cause = ad;
            l->pub.due = point_now(a);
            l->pub.due_cause = ad;
        }
    }
    /* this pass's mismatches in ascending lease id */
    if (a->sum.n_due_mismatches > first_mm)
        qsort(a->mismatches + first_mm, a->sum.n_due_mismatches - first_mm,
              sizeof *a->mismatches, cmp_mismatch);
    (void)mm_before;
}

static void process_mark(dls_audit *a, const dls_amark *mk)
{
    uint64_t pass = mk->pass, now = mk->now_ns;
    bool fresh;
    uint32_t b = basis_intern(a, mk->basis, mk->basis_len, &fresh);
    if (b >= a->sum.n_bases)
        return; /* out of memory before any basis was kept (a->nomem is set) */
    bool first = !a->have_mark;
    bool basis_changed = !first && b != a->cur_basis;

    a->sum.passes++;
    if (!first && pass <= a->last_pass) {
        journal_malformed(a);
        detail(a, "journal: pass %" PRIu64 " follows pass %" PRIu64
                  " (pass numbers must increase)", pass, a->last_pass);
    }
    if (basis_changed && !mk->restarted) {
        journal_malformed(a);
        detail(a, "journal: pass %" PRIu64 " changes the reading basis without restarted", pass);
    }
    if (!first && !basis_changed && now < a->last_now) {
        journal_malformed(a);
        detail(a, "journal: pass %" PRIu64 " has now %" PRIu64 " ns, before pass %" PRIu64
                  "'s %" PRIu64 " ns on the same basis", pass, now, a->last_pass, a->last_now);
    } else if (basis_changed && !fresh && now < a->bases[b].max_reading) {
        /* back on a basis met before: its readings still only go forward */
        journal_malformed(a);
        detail(a, "journal: pass %" PRIu64 " has now %" PRIu64 " ns on a basis it left at %" PRIu64
                  " ns (now going backwards within one basis)", pass, now,
               a->bases[b].max_reading);
    }
    if (mk->late) {
        a->sum.cadence_overruns++;
    } else if (!first && !basis_changed && pass == a->last_pass + 1 &&
               dls_passed(a->last_now, now, mk->cadence_ns)) {
        APUSH(a, a->unflagged, a->sum.n_cadence_overruns_unflagged, a->cap_unflagged, pass);
    }

    if (first && !mk->restarted)
        warn(a, "journal: the first mark (pass %" PRIu64 ") does not carry restarted: the "
                "journal may have lost its beginning", pass);
    a->have_mark = true;
    a->last_pass = pass;
    a->last_now = now;
    a->cur_basis = b;
    dls_audit_basis *bs = &a->bases[b];
    if (bs->min_reading > now)
        bs->min_reading = now;
    if (bs->max_reading < now)
        bs->max_reading = now;
    if (!bs->first_pass)
        bs->first_pass = pass;
    bs->last_pass = pass;

    /* a basis change rebases every recovered lease (judge.md, Restart) */
    if (basis_changed) {
        APUSH(a, a->basis_changes, a->sum.n_basis_changes, a->cap_basis_changes, pass);
        for (size_t i = 0; i < a->n_live; i++) {
            audit_lease *l = a->leases[a->live[i]];
            l->tenure = l->last_obs = now;
            l->pub.findings |= DLS_AUDIT_F_REBASED;
            mark_unknown(a, l);
        }
    }
    if (mk->restarted) {
        APUSH(a, a->restarts, a->sum.n_restarts, a->cap_restarts, pass);
        for (size_t i = 0; i < a->n_live; i++)
            mark_unknown(a, a->leases[a->live[i]]);
    }

    /* transport-errors: the run of consecutive failing passes per medium */
    for (size_t i = 0; i < mk->n_errors; i++) {
        size_t mix;
        audit_medium *m = medium_get(a, mk->errors[i].medium, &mix);
        if (!m)
            continue;
        dls_audit_span sp;
        sp.pass = pass;
        memcpy(sp.medium, m->id, DLS_MEDIUM_ID_LEN);
        sp.from = sp.to = mk->errors[i].position;
        APUSH(a, a->terrs, a->sum.n_transport_errors, a->cap_terrs, sp);
        if (m->failing_pass == pass)
            continue;
        /* A restarted mark starts a new run: a restarted judge numbers its
         * first pass after the last recorded one, so the journal cannot show
         * that no unrecorded pass drained the medium cleanly before the
         * restart — the run is provably unbroken only from here. */
        if (!(m->fail_run && m->fail_last_pass + 1 == pass && m->fail_basis == b &&
              !mk->restarted)) {
            m->fail_run = true;
            m->fail_first_now = now;
            m->fail_basis = b;
        }
        m->fail_last_pass = pass;
        m->failing_pass = pass;
    }
    for (size_t i = 0; i < a->n_media; i++)
        if (a->media[i].failing_pass != pass)
            a->media[i].fail_run = false;

    /* drained, in the mark's (assembly) order */
    for (size_t i = 0; i < mk->n_drained; i++) {
        size_t mix;
        audit_medium *m = medium_get(a, mk->drained[i].medium, &mix);
        if (!m)
            continue;
        uint64_t to = mk->drained[i].position;
        if (to < m->drained) {
            char hx[33];
            hex16(m->id, hx);
            journal_malformed(a);
            detail(a, "journal: pass %" PRIu64 " drained medium %s to %" PRIu64
                      ", behind %" PRIu64 " (positions must not go backwards)",
                   pass, hx, to, m->drained);
            continue;
        }
        /* a gap first marks every lease registered on the medium unknown */
        for (size_t g = 0; g < mk->n_gaps; g++) {
            if (memcmp(mk->gaps[g].medium, m->id, DLS_MEDIUM_ID_LEN))
                continue;
            dls_audit_span sp;
            sp.pass = pass;
            memcpy(sp.medium, m->id, DLS_MEDIUM_ID_LEN);
            sp.from = mk->gaps[g].from;
            sp.to = mk->gaps[g].to;
            APUSH(a, a->gaps, a->sum.n_gaps, a->cap_gaps, sp);
            for (size_t k = 0; k < a->n_live; k++) {
                audit_lease *l = a->leases[a->live[k]];
                if (l->medium_ix == mix)
                    mark_unknown(a, l);
            }
        }
        read_span(a, mix, mk, to);
        a->media[mix].drained = to;
    }
    classify_all(a, mk);
}

/* ---- journal lease records ------------------------------------------------ */

static audit_subject *subject_get(dls_audit *a, dls_bytes s, size_t *ixo)
{
    uint64_t ix;
    if (ix_get(&a->subject_ix, s.p, s.n, &ix)) {
        *ixo = (size_t)ix;
        return &a->subjects[ix];
    }
    uint8_t *copy = malloc(s.n + 1);
    if (!copy ||
        grow((void **)&a->subjects, a->n_subjects, &a->cap_subjects, sizeof *a->subjects) ||
        ix_set(&a->subject_ix, s.p, s.n, a->n_subjects)) {
        free(copy);
        a->nomem = true;
        return NULL;
    }
    memcpy(copy, s.p, s.n);
    audit_subject *sub = &a->subjects[a->n_subjects];
    memset(sub, 0, sizeof *sub);
    sub->bytes = copy;
    sub->n = s.n;
    sub->order = a->n_subjects;
    *ixo = a->n_subjects++;
    return sub;
}

static void double_grant(dls_audit *a, audit_lease *l, const char *why)
{
    a->sum.double_grant++;
    l->pub.findings |= DLS_AUDIT_F_DOUBLE_GRANT;
    detail(a, "double grant: lease %" PRIu64 " at pass %" PRIu64 ": %s", l->pub.lease,
           a->last_pass, why);
}

static void on_grant(dls_audit *a, const dls_fact *f)
{
    a->sum.grants++;
    audit_lease *old = lease_find(a, f->lease);
    if (old) { /* a lease id not greater than an earlier one: the same id again */
        double_grant(a, old, "its lease id was granted before");
        return;
    }
    bool id_backwards = a->n_leases && f->lease <= a->max_lease;
    audit_lease *l = calloc(1, sizeof *l);
    uint8_t *buf = malloc(f->subject.n + f->holder.n + 1);
    if (!l || !buf ||
        grow((void **)&a->leases, a->n_leases, &a->cap_leases, sizeof *a->leases) ||
        lease_ix_set(a, f->lease, a->n_leases)) {
        free(l);
        free(buf);
        a->nomem = true;
        return;
    }
    size_t ix = a->n_leases++;
    a->leases[ix] = l;
    memcpy(buf, f->subject.p, f->subject.n);
    memcpy(buf + f->subject.n, f->holder.p, f->holder.n);
    l->buf = buf;
    l->pub.lease = f->lease;
    l->pub.subject.p = buf;
    l->pub.subject.n = f->subject.n;
    l->pub.holder.p = buf + f->subject.n;
    l->pub.holder.n = f->holder.n;
    memcpy(l->pub.medium, f->medium, DLS_MEDIUM_ID_LEN);
    l->pub.mode = (f->keys & DLS_K_MODE) ? f->mode : DLS_MODE_EXCLUSIVE;
    l->pub.duration_ns = f->duration.ns;
    l->pub.max_ns = (f->keys & DLS_K_MAX) ? f->max.ns : 0;
    l->pub.granted = point_now(a);
    l->tenure = l->last_obs = a->last_now;
    if (f->lease > a->max_lease)
        a->max_lease = f->lease;

    size_t mix = 0;
    audit_medium *m = medium_get(a, f->medium, &mix);
    l->medium_ix = mix;
    if (m && !m->m) {
        l->pub.findings |= DLS_AUDIT_F_MISSING_MEDIUM;
        make_unverifiable(l);
    }
    size_t six = 0;
    audit_subject *sub = subject_get(a, f->subject, &six);
    l->subject_ix = six;
    if (id_backwards) {
        char why[96];
        snprintf(why, sizeof why, "its id is not greater than lease %" PRIu64, a->max_lease);
        double_grant(a, l, why);
    }
    if (sub) {
        if (l->pub.mode == DLS_MODE_EXCLUSIVE && sub->live_excl + sub->live_shared > 0)
            double_grant(a, l, "an exclusive grant while another lease on its subject is live");
        else if (l->pub.mode == DLS_MODE_SHARED && sub->live_excl > 0)
            double_grant(a, l, "a shared grant while an exclusive lease on its subject is live");
        if (l->pub.mode == DLS_MODE_EXCLUSIVE)
            sub->live_excl++;
        else
            sub->live_shared++;
    }
    l->live = true;
    live_add(a, ix);
}

static void on_lapsed(dls_audit *a, const dls_fact *f)
{
    a->sum.lapsed++;
    audit_lease *l = lease_find(a, f->lease);
    if (!l) {
        a->sum.journal_ignored++;
        warn(a, "journal: pass %" PRIu64 " records lapsed for lease %" PRIu64
                ", which was never granted", a->last_pass, f->lease);
        return;
    }
    if (!l->live) { /* rule 6: lapsed twice */
        a->sum.journal_defective++;
        detail(a, "journal: pass %" PRIu64 " records lapsed again for lease %" PRIu64
                  " (vocabulary rule 6)", a->last_pass, f->lease);
        return;
    }
    uint64_t pass = a->last_pass;
    l->pub.lapsed = point_now(a);
    l->pub.lapsed_cause = f->cause;
    /* An unverifiable lease is still judged on what needs no media: its
     * pending state then comes from the judge's own due entry (adopted in
     * classify_all), and a lapse no due entry concluded — or with another
     * cause than the one concluded, `policy` included — is unjustified. */
    if (!l->pending) {
        a->sum.unjustified_lapse++;
        l->pub.findings |= DLS_AUDIT_F_UNJUSTIFIED_LAPSE;
        if (l->unverifiable)
            detail(a, "unjustified lapse: lease %" PRIu64 " lapsed (%s) at pass %" PRIu64
                      " but no due entry of the journal concluded it was due",
                   l->pub.lease, dls_cause_name(f->cause), pass);
        else
            detail(a, "unjustified lapse: lease %" PRIu64 " lapsed (%s) at pass %" PRIu64
                      " but was not due by the rules", l->pub.lease, dls_cause_name(f->cause),
                   pass);
    } else if (l->pending_cause != f->cause) {
        a->sum.unjustified_lapse++;
        l->pub.findings |= DLS_AUDIT_F_UNJUSTIFIED_LAPSE;
        detail(a, "unjustified lapse: lease %" PRIu64 " lapsed with cause %s at pass %" PRIu64
                  " but the first cause that held (pass %" PRIu64 ") was %s",
               l->pub.lease, dls_cause_name(f->cause), pass, l->pub.due.pass,
               dls_cause_name(l->pending_cause));
    }
    if (l->pending && l->pub.due.pass && l->pub.due.pass < pass) {
        dls_audit_late_reclaim lr = {l->pub.lease, l->pub.due.pass, pass};
        l->pub.findings |= DLS_AUDIT_F_LATE_RECLAIM;
        APUSH(a, a->late_reclaims, a->sum.n_late_reclaims, a->cap_late_reclaims, lr);
    }
    l->live = false;
    live_remove(a, l);
    audit_subject *sub = &a->subjects[l->subject_ix];
    if (l->pub.mode == DLS_MODE_EXCLUSIVE)
        sub->live_excl--;
    else
        sub->live_shared--;
}

/* ---- the journal ---------------------------------------------------------- */

typedef struct journal_state {
    dls_resolver *res;
    const char *grantor;
    size_t grantor_len;
    dls_rule6 *rule6;
    dls_amark open;        /* the mark being collected (pass 0: none) */
    bool have_open;
    uint64_t verified;     /* records verified under the grantor's key */
} journal_state;

static void flush_mark(dls_audit *a, journal_state *js)
{
    if (!js->have_open)
        return;
    process_mark(a, &js->open);
    dls_amark_free(&js->open);
    js->have_open = false;
}

static void forged_author(dls_audit *a, dls_bytes who)
{
    if (!who.n || a->sum.n_forged_authors >= 16)
        return;
    for (size_t i = 0; i < a->sum.n_forged_authors; i++)
        if (dls_bytes_eq(a->forged_authors[i], who))
            return;
    uint8_t *copy = malloc(who.n + 1);
    if (!copy || grow((void **)&a->forged_authors, a->sum.n_forged_authors,
                      &a->cap_forged_authors, sizeof *a->forged_authors)) {
        free(copy);
        a->nomem = true;
        return;
    }
    memcpy(copy, who.p, who.n);
    copy[who.n] = 0;
    dls_bytes b = {copy, who.n};
    a->forged_authors[a->sum.n_forged_authors++] = b;
}

static void journal_record(dls_audit *a, journal_state *js, const dls_record *rec)
{
    dls_attribution at;
    a->sum.journal_records++;
    dls_resolver_attribute(js->res, rec->p, rec->n, &at);
    if (at.kind == DLS_REC_SEAL)
        return;
    bool by_grantor = at.attributed && at.author.n == js->grantor_len &&
                      !memcmp(at.author.p, js->grantor, js->grantor_len);
    if (!by_grantor) {
        char who[160];
        printable(at.author.p, at.author.n, who, sizeof who);
        a->sum.journal_forged++;
        forged_author(a, at.author);
        if (at.attributed)
            detail(a, "journal: position %" PRIu64 " is signed by '%s', not by the grantor",
                   rec->position, who);
        else
            detail(a, "journal: position %" PRIu64 " does not verify under the grantor's key "
                      "(%s%s%s%s)", rec->position,
                   at.why ? dls_why_name(at.why) : "not attributed",
                   at.author.n ? ", claims '" : "", who, at.author.n ? "'" : "");
        return;
    }
    js->verified++;
    int kind = dls_amark_kind(at.fact.p, at.fact.n);
    if (kind == DLS_AMARK_MARK) {
        dls_amark mk;
        dls_where w = {0};
        int rc = dls_amark_parse(&mk, at.fact.p, at.fact.n, &w);
        if (rc == DLS_ERR_NOMEM) {
            a->nomem = true;
            return;
        }
        if (rc) {
            journal_malformed(a);
            detail(a, "journal: position %" PRIu64 ": a malformed pass mark (%s, byte %" PRIu64 ")",
                   rec->position, w.reason ? w.reason : dls_strerror(rc), w.offset);
            return;
        }
        if (mk.continued) {
            if (js->have_open && js->open.pass == mk.pass) {
                if (dls_amark_merge(&js->open, &mk))
                    a->nomem = true;
            } else {
                journal_malformed(a);
                detail(a, "journal: position %" PRIu64 ": a continuation of pass %" PRIu64
                          " that does not follow its mark", rec->position, mk.pass);
            }
            dls_amark_free(&mk);
            return;
        }
        flush_mark(a, js);
        js->open = mk;
        js->have_open = true;
        return;
    }
    flush_mark(a, js);
    if (!a->have_mark) { /* a pass owes its mark before any other record */
        journal_malformed(a);
        detail(a, "journal: position %" PRIu64 ": a record before the first pass mark",
               rec->position);
        return;
    }
    dls_fact f;
    dls_where w = {0};
    int rc = dls_fact_decode(at.fact.p, at.fact.n, &f, &w);
    if (rc) {
        a->sum.journal_defective++;
        detail(a, "journal: position %" PRIu64 ": a defective fact (%s)", rec->position,
               w.reason ? w.reason : dls_strerror(rc));
        return;
    }
    if (kind != DLS_AMARK_LEASE || f.kind == DLS_FACT_NONE) {
        if (f.kind != DLS_FACT_NONE) { /* a lease fact that also claims to be a mark */
            journal_malformed(a);
            detail(a, "journal: position %" PRIu64 ": a record that is neither a mark nor a "
                      "lease fact", rec->position);
        } else {
            a->sum.journal_ignored++;
        }
        return;
    }
    if (f.kind != DLS_FACT_GRANT && f.kind != DLS_FACT_REFUSAL && f.kind != DLS_FACT_RECLAIM) {
        a->sum.journal_ignored++; /* the grantor does not author these on its journal */
        warn(a, "journal: position %" PRIu64 ": a %s signed by the grantor is ignored",
             rec->position, dls_fact_kind_name(f.kind));
        return;
    }
    if (f.kind == DLS_FACT_GRANT) {
        if (!lease_find(a, f.lease)) {
            rc = dls_rule6_observe(js->rule6, &f);
            if (rc == DLS_ERR_NOMEM) {
                a->nomem = true;
                return;
            }
            if (rc) {
                a->sum.journal_defective++;
                detail(a, "journal: position %" PRIu64 ": lease %" PRIu64
                          " answers a proposal already answered (vocabulary rule 6)",
                       rec->position, f.lease);
                return;
            }
        }
        on_grant(a, &f);
    } else if (f.kind == DLS_FACT_REFUSAL) {
        a->sum.refusals++;
        rc = dls_rule6_observe(js->rule6, &f);
        if (rc == DLS_ERR_NOMEM)
            a->nomem = true;
        else if (rc) {
            a->sum.journal_defective++;
            detail(a, "journal: position %" PRIu64 ": a refusal of a proposal already granted "
                      "(vocabulary rule 6)", rec->position);
        }
    } else {
        on_lapsed(a, &f);
    }
}

static void set_incomplete(dls_audit *a, uint64_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_incomplete(dls_audit *a, uint64_t pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    free(a->incomplete);
    a->incomplete = vfmt(fmt, ap);
    va_end(ap);
    if (!a->incomplete)
        a->nomem = true;
    a->sum.incomplete = a->incomplete;
    a->sum.incomplete_position = pos;
}

static void read_journal(dls_audit *a, journal_state *js, dls_cursor *cur)
{
    for (;;) {
        dls_record rec;
        dls_where w = {0};
        uint64_t at = dls_cursor_position(cur);
        dls_next r = dls_cursor_next(cur, &rec, &w);
        if (r == DLS_NEXT_OK) {
            journal_record(a, js, &rec);
            if (a->nomem)
                return;
            continue;
        }
        if (r == DLS_NEXT_GAP) {
            set_incomplete(a, at, "journal records %" PRIu64 "..%" PRIu64
                                  " were evicted: the journal cannot be replayed past them",
                           rec.gap_from, rec.position ? rec.position - 1 : 0);
        } else if (r == DLS_NEXT_ERROR) {
            set_incomplete(a, at, "journal: transport-error at position %" PRIu64 " (%s)", at,
                           w.reason ? w.reason : "unreadable");
        }
        return; /* blocked: the end of what was written; end: sealed */
    }
}

/* ---- finishing ------------------------------------------------------------ */

static int cmp_lease(const void *x, const void *y)
{
    const audit_lease *const *p = x, *const *q = y;
    return (*p)->pub.lease < (*q)->pub.lease ? -1 : (*p)->pub.lease > (*q)->pub.lease;
}

static int cmp_holder(const void *x, const void *y)
{
    const dls_audit_holder_count *p = x, *q = y;
    size_t n = p->holder.n < q->holder.n ? p->holder.n : q->holder.n;
    int c = n ? memcmp(p->holder.p, q->holder.p, n) : 0;
    if (c)
        return c;
    return p->holder.n < q->holder.n ? -1 : p->holder.n > q->holder.n;
}

static void count_undrained(dls_audit *a)
{
    for (size_t i = 0; i < a->n_media; i++) {
        audit_medium *m = &a->media[i];
        if (!m->m || m->read_stopped || !m->named)
            continue;
        /* positions before the last drained one were read by read_span */
        for (;;) {
            dls_record rec;
            dls_next r = dls_cursor_next(m->cur, &rec, NULL);
            if (r == DLS_NEXT_OK)
                a->sum.undrained_records++;
            else if (r != DLS_NEXT_GAP)
                break;
        }
    }
}

static void finish(dls_audit *a)
{
    static const char *forged_names[FORGED_N] = {"signature", "unknown-author",
                                                 "wrong-key-kind", "bare-fact", "malformed"};
    static const char *defective_names[DEFECTIVE_N] = {"rule1", "rule2", "rule3", "rule4",
                                                       "rule5", "rule6", "rule7"};
    static const char *ignored_names[IGNORED_N] = {"not-a-lease-fact", "unknown-lease",
                                                   "wrong-author", "misplaced", "replayed"};
    size_t k = 0;
    a->sum.forged = a->counts + k;
    for (int i = 0; i < FORGED_N; i++)
        if (a->forged[i])
            a->counts[k++] = (dls_audit_count){forged_names[i], a->forged[i]};
    a->sum.n_forged = (size_t)(a->counts + k - a->sum.forged);
    a->sum.defective = a->counts + k;
    for (int i = 0; i < DEFECTIVE_N; i++)
        if (a->defective[i])
            a->counts[k++] = (dls_audit_count){defective_names[i], a->defective[i]};
    a->sum.n_defective = (size_t)(a->counts + k - a->sum.defective);
    a->sum.ignored = a->counts + k;
    for (int i = 0; i < IGNORED_N; i++)
        if (a->ignored[i])
            a->counts[k++] = (dls_audit_count){ignored_names[i], a->ignored[i]};
    a->sum.n_ignored = (size_t)(a->counts + k - a->sum.ignored);

    a->sum.journal = a->sum.journal_forged + a->sum.journal_malformed + a->sum.journal_defective;
    a->sum.last_pass = a->last_pass;
    a->sum.last_mark = point_now(a);

    /* media given but never named by the journal */
    for (size_t i = 0; i < a->n_media; i++)
        if (a->media[i].m && !a->media[i].named)
            APUSH(a, a->unused, a->sum.n_unused_media, a->cap_unused, a->media[i].given_ix);

    if (a->n_leases) /* qsort's base may not be NULL, even for 0 elements */
        qsort(a->leases, a->n_leases, sizeof *a->leases, cmp_lease);
    for (size_t i = 0; i < a->n_leases; i++) {
        audit_lease *l = a->leases[i];
        dls_audit_lease *p = &l->pub;
        uint32_t f = p->findings;
        if (f & DLS_AUDIT_F_DOUBLE_GRANT)
            p->verdict = DLS_AUDIT_DOUBLE_GRANT;
        else if (f & DLS_AUDIT_F_UNJUSTIFIED_LAPSE)
            p->verdict = DLS_AUDIT_UNJUSTIFIED_LAPSE;
        else if (f & DLS_AUDIT_F_DUE_MISMATCH)
            p->verdict = DLS_AUDIT_DUE_MISMATCH;
        else if (f & DLS_AUDIT_F_UNVERIFIABLE)
            p->verdict = DLS_AUDIT_UNVERIFIABLE;
        else if (l->live)
            p->verdict = DLS_AUDIT_LIVE;
        else
            p->verdict = DLS_AUDIT_OK;
        p->cause = p->lapsed.pass ? p->lapsed_cause : p->due.pass ? p->due_cause : DLS_CAUSE_NONE;
        if (f & DLS_AUDIT_F_UNVERIFIABLE)
            APUSH(a, a->unver_leases, a->sum.n_unverifiable_leases, a->cap_unver_leases, p->lease);
        if (a->set.keep_renewal_points)
            p->renewal_points = l->points;
    }
    if (a->sum.n_late_renewals)
        qsort(a->late_renewals, a->sum.n_late_renewals, sizeof *a->late_renewals, cmp_holder);

    if (!a->sum.journal_records)
        warn(a, "the journal holds no records: there is nothing to audit");
    else if (!a->sum.passes)
        warn(a, "the journal holds no pass mark from the grantor: no pass could be replayed");
    if (a->sum.journal_forged && a->sum.journal_forged == a->sum.journal_records) {
        char who[160] = "";
        if (a->sum.n_forged_authors)
            printable(a->forged_authors[0].p, a->forged_authors[0].n, who, sizeof who);
        warn(a, "no journal record verifies under the grantor's key%s%s%s", who[0] ? " (records claim author '" : "", who, who[0] ? "': another grantor's journal, or the wrong keyring?)" : "");
    }
    if (a->warnings_dropped)
        warn(a, "(%" PRIu64 " more warnings not shown)", a->warnings_dropped);
    if (a->details_dropped)
        detail(a, "(%" PRIu64 " more failures not shown)", a->details_dropped);

    /* publish the arrays */
    dls_audit_summary *s = &a->sum;
    s->late_reclaims = a->late_reclaims;
    s->late_renewals = a->late_renewals;
    s->cadence_overruns_unflagged = a->unflagged;
    s->due_mismatches = a->mismatches;
    s->unverifiable_passes = a->unver_passes;
    s->unverifiable_leases = a->unver_leases;
    s->gaps = a->gaps;
    s->transport_errors = a->terrs;
    s->restarts = a->restarts;
    s->basis_changes = a->basis_changes;
    s->bases = a->bases;
    s->missing_media = (const uint8_t(*)[DLS_MEDIUM_ID_LEN])a->missing;
    s->unused_media = a->unused;
    s->warnings = (const char *const *)a->warnings;
    s->failure_details = (const char *const *)a->details;
    s->forged_authors = a->forged_authors;
}

/* ---- assembly ----------------------------------------------------------- */

static int valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > DLS_ID_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= 0x21 && c <= 0x7e) || c >= 0x80))
            return 0;
    }
    return 1;
}

static int where(dls_where *w, int rc, uint64_t offset, const char *reason)
{
    if (w) {
        memset(w, 0, sizeof *w);
        w->offset = offset;
        w->reason = reason;
    }
    return rc;
}

static int setup_media(dls_audit *a, const uint8_t *journal_id, dls_keyring *kr,
                       const dls_audit_medium *media, size_t n, dls_where *w)
{
    for (size_t i = 0; i < n; i++) {
        if (!media[i].medium)
            return where(w, DLS_ERR_INVAL, i, "a medium is NULL");
        if (media[i].party && !valid_name(media[i].party))
            return where(w, DLS_ERR_INVAL, i, "a party name is not a valid name");
        const uint8_t *id = dls_medium_id(media[i].medium);
        if (!memcmp(id, journal_id, DLS_MEDIUM_ID_LEN))
            return where(w, DLS_ERR_DUPLICATE, i, "the journal is also given as a medium");
        if (ix_get(&a->medium_ix, id, DLS_MEDIUM_ID_LEN, NULL))
            return where(w, DLS_ERR_DUPLICATE, i, "two media given share a medium id");
        int rc = grow((void **)&a->media, a->n_media, &a->cap_media, sizeof *a->media);
        if (rc)
            return rc;
        audit_medium *m = &a->media[a->n_media];
        memset(m, 0, sizeof *m);
        memcpy(m->id, id, DLS_MEDIUM_ID_LEN);
        m->m = media[i].medium;
        m->given_ix = i;
        a->n_media++;
        if (media[i].party)
            rc = dls_resolver_new_medium(&m->res, id, media[i].party, kr);
        else
            rc = dls_resolver_new_signed(&m->res, id, kr);
        if (rc)
            return where(w, rc, i, "the medium's resolver could not be made");
        if ((rc = dls_cursor_new(&m->cur, m->m, 0)))
            return where(w, rc, i, "a cursor on the medium could not be made");
        if ((rc = ix_set(&a->medium_ix, id, DLS_MEDIUM_ID_LEN, i)))
            return rc;
    }
    return 0;
}

int dls_audit_run(dls_audit **out, const dls_audit_settings *s, dls_medium *journal,
                  const char *grantor, dls_keyring *kr, const dls_audit_medium *media,
                  size_t n_media, dls_where *w)
{
    if (out)
        *out = NULL;
    if (!out || !journal || !grantor || !kr || (n_media && !media))
        return where(w, DLS_ERR_INVAL, 0, "a required argument is NULL");
    if (!valid_name(grantor))
        return where(w, DLS_ERR_INVAL, 0, "the grantor's name is not a valid name");
    dls_audit_settings set;
    dls_audit_settings_default(&set);
    if (s)
        set = *s;
    if (n_media > set.max_media)
        return where(w, DLS_ERR_TOO_MANY_MEDIA, n_media, "more media than max_media");
    if (!dls_keyring_count(kr))
        return where(w, DLS_ERR_EMPTY_KEYRING, 0, "the keyring is empty");
    dls_key_kind kind;
    const uint8_t *key;
    if (dls_keyring_lookup(kr, (const uint8_t *)grantor, strlen(grantor), &kind, &key))
        return where(w, DLS_ERR_NOTFOUND, 0, "the grantor is not in the keyring");
    if (kind != DLS_KEY_ED25519)
        return where(w, DLS_ERR_KEYKIND, 0, "the grantor's key is not Ed25519");
    if (sodium_init() < 0)
        return where(w, DLS_ERR_SODIUM, 0, "libsodium could not be initialised");

    dls_audit *a = calloc(1, sizeof *a);
    if (!a)
        return DLS_ERR_NOMEM;
    a->set = set;
    dls_htab_init(&a->lease_ix);
    dls_htab_init(&a->subject_ix);
    dls_htab_init(&a->medium_ix);
    dls_htab_init(&a->proposal_seq);
    dls_htab_init(&a->holder_ix);
    memcpy(a->sum.journal_id, dls_medium_id(journal), DLS_MEDIUM_ID_LEN);

    journal_state js;
    memset(&js, 0, sizeof js);
    js.grantor = grantor;
    js.grantor_len = strlen(grantor);
    dls_cursor *jcur = NULL;
    int rc = setup_media(a, a->sum.journal_id, kr, media, n_media, w);
    if (!rc)
        rc = dls_resolver_new_signed(&js.res, a->sum.journal_id, kr);
    if (!rc)
        rc = dls_rule6_new(&js.rule6);
    if (!rc)
        rc = dls_cursor_new(&jcur, journal, 0);
    if (!rc) {
        read_journal(a, &js, jcur);
        if (!a->nomem)
            flush_mark(a, &js);
        if (!a->nomem) {
            count_undrained(a);
            finish(a);
        }
        if (a->nomem)
            rc = DLS_ERR_NOMEM;
    }
    dls_amark_free(&js.open);
    dls_cursor_del(jcur);
    dls_rule6_del(js.rule6);
    dls_resolver_del(js.res);
    /* cursors on the caller's media are released now: the media are borrowed
     * for the call only */
    for (size_t i = 0; i < a->n_media; i++) {
        dls_cursor_del(a->media[i].cur);
        a->media[i].cur = NULL;
        dls_resolver_del(a->media[i].res);
        a->media[i].res = NULL;
        a->media[i].m = NULL; /* borrowed for the call only */
    }
    if (rc) {
        dls_audit_del(a);
        return rc;
    }
    *out = a;
    return 0;
}
