/* Snapshots of the ledger and counters, and their two renderings:
 * /status.json and /metrics (snap.h; docs/observe.md). */
#include "cli/observe/snap.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/status_scan.h"

const double obs_pass_bounds[OBS_PASS_BUCKETS] = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
    0.01,    0.025,  0.05,    0.1,    0.25,  0.5,    1.0,
};

static const char *const cause_names[5] = {NULL, "release", "cap", "policy", "silence"};
static const char *const ignored_names[5] = {"misplaced", "wrong_author", "replayed",
                                             "unknown_lease", "not_lease"};

obs_ledger *obs_ledger_new(void)
{
    obs_ledger *l = calloc(1, sizeof *l);
    if (l)
        atomic_init(&l->refs, 1);
    return l;
}

void obs_ledger_release(obs_ledger *l)
{
    if (!l || atomic_fetch_sub(&l->refs, 1) != 1)
        return;
    free(l->leases);
    free(l->arena);
    free(l);
}

obs_snap *obs_snap_new(const char *source, obs_ledger *ledger)
{
    obs_snap *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    atomic_init(&s->refs, 1);
    s->source = source;
    s->ledger = ledger;
    if (ledger)
        atomic_fetch_add(&ledger->refs, 1);
    return s;
}

void obs_snap_free(obs_snap *s)
{
    if (!s)
        return;
    obs_ledger_release(s->ledger);
    free(s->media);
    free(s->events);
    free(s);
}

static int keep(obs_ledger *s, dls_bytes b, uint32_t *off)
{
    if (s->an + b.n > s->acap) {
        size_t cap = s->acap ? s->acap : 4096;
        while (cap < s->an + b.n)
            cap *= 2;
        if (cap > UINT32_MAX)
            return DLS_ERR_NOMEM;
        uint8_t *a = realloc(s->arena, cap);
        if (!a)
            return DLS_ERR_NOMEM;
        s->arena = a;
        s->acap = cap;
    }
    if (b.n)
        memcpy(s->arena + s->an, b.p, b.n);
    *off = (uint32_t)s->an;
    s->an += b.n;
    return 0;
}

int obs_ledger_add(obs_ledger *s, const dls_status_lease *l)
{
    if (s->nleases == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        obs_lease *n = realloc(s->leases, cap * sizeof *n);
        if (!n)
            return DLS_ERR_NOMEM;
        s->leases = n;
        s->cap = cap;
    }
    obs_lease *o = &s->leases[s->nleases];
    *o = (obs_lease){
        .lease = l->lease, .granted_at = l->granted_at, .last_renewal = l->last_renewal,
        .due_by = l->due_by, .seq = l->seq, .subj_len = (uint32_t)l->subject.n,
        .holder_len = (uint32_t)l->holder.n, .renewed = l->renewed, .released = l->released,
        .shared = l->mode == DLS_MODE_SHARED,
    };
    if (keep(s, l->subject, &o->subj_off) || keep(s, l->holder, &o->holder_off))
        return DLS_ERR_NOMEM;
    s->nleases++;
    return 0;
}

/* Copies text into dst (OBS_EVENT_TEXT + 4 bytes), cut at a character
 * boundary with "…" when longer. */
static void cut_text(char *dst, const char *src, size_t n)
{
    if (n <= OBS_EVENT_TEXT) {
        memcpy(dst, src, n);
        dst[n] = 0;
        return;
    }
    size_t k = OBS_EVENT_TEXT - 3;
    while (k && ((uint8_t)src[k] & 0xc0) == 0x80)
        k--;
    memcpy(dst, src, k);
    memcpy(dst + k, "\xe2\x80\xa6", 4);
}

void obs_event_set(obs_event *e, int kind, uint64_t at, uint64_t lease, dls_cause cause,
                   dls_bytes subject, dls_bytes holder)
{
    memset(e, 0, sizeof *e);
    e->kind = (uint8_t)kind;
    e->at = at;
    e->lease = lease;
    e->cause = (uint8_t)(cause < 5 ? cause : 0);
    dls_jbuf t = {0};
    if (dls_json_emit(&t, subject.p, subject.n, NULL) == 0 && t.p)
        cut_text(e->subject, t.p, t.n);
    else
        strcpy(e->subject, "?");
    dls_jbuf_free(&t);
    cut_text(e->holder, (const char *)holder.p, holder.n);
}

static double unix_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- /status.json ------------------------------------------------------------------- */

static dls_status_lease status_lease(const obs_ledger *s, const obs_lease *o)
{
    return (dls_status_lease){
        .lease = o->lease,
        .subject = {s->arena + o->subj_off, o->subj_len},
        .holder = {s->arena + o->holder_off, o->holder_len},
        .granted_at = o->granted_at,
        .renewed = o->renewed,
        .last_renewal = o->last_renewal,
        .due_by = o->due_by,
        .now = s->sum.now,
        .released = o->released,
        .mode = o->shared ? DLS_MODE_SHARED : DLS_MODE_EXCLUSIVE,
        .seq = o->seq,
    };
}

static int put_f(dls_jbuf *b, const char *fmt, double v)
{
    char t[64];
    int k = snprintf(t, sizeof t, fmt, v);
    return dls_jbuf_put(b, t, (size_t)k);
}

static int render_events(const obs_snap *s, dls_jbuf *b)
{
    int rc = dls_jbuf_puts(b, ", \"events\": [");
    for (size_t i = 0; i < s->nevents; i++) {
        const obs_event *e = &s->events[i];
        rc |= dls_jbuf_puts(b, i ? ", {\"at\": " : "{\"at\": ");
        rc |= dls_jbuf_uint(b, e->at);
        rc |= dls_jbuf_puts(b, e->kind == DLS_STATUS_GRANT ? ", \"kind\": \"grant\""
                                                            : ", \"kind\": \"lapse\"");
        rc |= dls_jbuf_puts(b, ", \"lease\": ");
        rc |= dls_jbuf_uint(b, e->lease);
        if (e->at_unix > 0)
            rc |= put_f(b, ", \"at_unix\": %.3f", e->at_unix);
        if (e->kind == DLS_STATUS_LAPSE && e->cause && cause_names[e->cause]) {
            rc |= dls_jbuf_puts(b, ", \"cause\": \"");
            rc |= dls_jbuf_puts(b, cause_names[e->cause]);
            rc |= dls_jbuf_puts(b, "\"");
        }
        rc |= dls_jbuf_puts(b, ", \"subject\": ");
        rc |= dls_jbuf_string(b, (const uint8_t *)e->subject, strlen(e->subject));
        rc |= dls_jbuf_puts(b, ", \"holder\": ");
        rc |= dls_jbuf_string(b, (const uint8_t *)e->holder, strlen(e->holder));
        rc |= dls_jbuf_puts(b, "}");
    }
    return rc | dls_jbuf_puts(b, "]");
}

static int render_observe(const obs_snap *s, const obs_query *q, uint64_t matched,
                          uint64_t listed, dls_jbuf *b)
{
    int rc = dls_jbuf_puts(b, "{\"observe\": true, \"source\": \"");
    rc |= dls_jbuf_puts(b, s->source);
    rc |= dls_jbuf_puts(b, "\", \"matched\": ");
    rc |= dls_jbuf_uint(b, matched);
    rc |= dls_jbuf_puts(b, ", \"offset\": ");
    rc |= dls_jbuf_uint(b, q->offset);
    rc |= dls_jbuf_puts(b, ", \"listed\": ");
    rc |= dls_jbuf_uint(b, listed);
    rc |= dls_jbuf_puts(b, ", \"filter\": ");
    rc |= dls_jbuf_string(b, (const uint8_t *)q->filter, q->filter_len);
    rc |= put_f(b, ", \"published_unix\": %.3f", s->published_unix);
    if (s->last_pass_unix > 0) {
        double age = unix_now() - s->last_pass_unix;
        double limit = (double)s->cadence_ns / 1e9 * 10;
        rc |= put_f(b, ", \"last_pass_age_s\": %.3f", age);
        rc |= dls_jbuf_puts(b, age < (limit > 2 ? limit : 2) ? ", \"alive\": true"
                                                             : ", \"alive\": false");
    } else {
        rc |= dls_jbuf_puts(b, ", \"last_pass_age_s\": null, \"alive\": null");
    }
    rc |= dls_jbuf_puts(b, ", \"cadence_ns\": ");
    rc |= dls_jbuf_uint(b, s->cadence_ns);
    rc |= dls_jbuf_puts(b, ", \"granted\": ");
    rc |= dls_jbuf_uint(b, s->c.granted);
    rc |= dls_jbuf_puts(b, ", \"refused\": ");
    rc |= dls_jbuf_uint(b, s->c.refused);
    rc |= dls_jbuf_puts(b, ", \"lapsed\": {");
    for (int c = 1; c < 5; c++) {
        rc |= dls_jbuf_puts(b, c > 1 ? ", \"" : "\"");
        rc |= dls_jbuf_puts(b, cause_names[c]);
        rc |= dls_jbuf_puts(b, "\": ");
        rc |= dls_jbuf_uint(b, s->c.lapsed[c]);
    }
    rc |= dls_jbuf_puts(b, "}, \"media\": [");
    for (size_t i = 0; i < s->nmedia; i++) {
        rc |= dls_jbuf_puts(b, i ? ", {\"name\": " : "{\"name\": ");
        rc |= dls_jbuf_string(b, (const uint8_t *)s->media[i].name, strlen(s->media[i].name));
        rc |= dls_jbuf_puts(b, s->media[i].failing ? ", \"failing\": true}"
                                                   : ", \"failing\": false}");
    }
    rc |= dls_jbuf_puts(b, "]");
    rc |= render_events(s, b);
    return rc | dls_jbuf_puts(b, "}\n");
}

int obs_render_status(const obs_snap *snap, const obs_query *q, dls_jbuf *b)
{
    const obs_ledger *s = snap->ledger;
    int rc = 0;
    uint64_t matched = 0, listed = 0;
    dls_jbuf subj = {0};
    for (size_t i = 0; i < s->nleases && !rc; i++) {
        const obs_lease *o = &s->leases[i];
        if (q->filter_len) {
            subj.n = 0;
            if (subj.p)
                subj.p[0] = 0;
            if (dls_json_emit(&subj, s->arena + o->subj_off, o->subj_len, NULL))
                rc |= dls_jbuf_puts(&subj, "null");
            if (!obs_query_match(q, subj.p ? subj.p : "", subj.n, s->arena + o->holder_off,
                                 o->holder_len, o->lease))
                continue;
        }
        matched++;
        if (matched <= q->offset || listed >= q->limit)
            continue;
        dls_status_lease l = status_lease(s, o);
        rc |= dls_status_lease_json(b, &l);
        listed++;
    }
    dls_jbuf_free(&subj);
    rc |= dls_status_summary_json(b, &s->sum);
    rc |= render_observe(snap, q, matched, listed, b);
    return rc ? DLS_ERR_NOMEM : 0;
}

/* ---- /metrics ----------------------------------------------------------------------- */

static int head(dls_jbuf *b, const char *name, const char *type, const char *help)
{
    int rc = dls_jbuf_puts(b, "# HELP ");
    rc |= dls_jbuf_puts(b, name);
    rc |= dls_jbuf_puts(b, " ");
    rc |= dls_jbuf_puts(b, help);
    rc |= dls_jbuf_puts(b, "\n# TYPE ");
    rc |= dls_jbuf_puts(b, name);
    rc |= dls_jbuf_puts(b, " ");
    rc |= dls_jbuf_puts(b, type);
    return rc | dls_jbuf_puts(b, "\n");
}

/* A label value: \, " and newline escaped (text format 0.0.4). */
static int label(dls_jbuf *b, const char *v)
{
    int rc = 0;
    for (; *v; v++) {
        if (*v == '\\')
            rc |= dls_jbuf_puts(b, "\\\\");
        else if (*v == '"')
            rc |= dls_jbuf_puts(b, "\\\"");
        else if (*v == '\n')
            rc |= dls_jbuf_puts(b, "\\n");
        else
            rc |= dls_jbuf_put(b, v, 1);
    }
    return rc;
}

/* name{key="value"} v — key NULL: no labels. */
static int sample(dls_jbuf *b, const char *name, const char *key, const char *value, uint64_t v)
{
    int rc = dls_jbuf_puts(b, name);
    if (key) {
        rc |= dls_jbuf_puts(b, "{");
        rc |= dls_jbuf_puts(b, key);
        rc |= dls_jbuf_puts(b, "=\"");
        rc |= label(b, value);
        rc |= dls_jbuf_puts(b, "\"}");
    }
    rc |= dls_jbuf_puts(b, " ");
    rc |= dls_jbuf_uint(b, v);
    return rc | dls_jbuf_puts(b, "\n");
}

static int one(dls_jbuf *b, const char *name, const char *type, const char *help, uint64_t v)
{
    return head(b, name, type, help) | sample(b, name, NULL, NULL, v);
}

static int histogram(const obs_snap *s, dls_jbuf *b)
{
    const char *n = "daolease_judge_pass_duration_seconds";
    int rc = head(b, n, "histogram", "Time one dls_judge_pass took (host clock).");
    for (int i = 0; i < OBS_PASS_BUCKETS; i++) {
        char t[160];
        int k = snprintf(t, sizeof t, "%s_bucket{le=\"%g\"} %" PRIu64 "\n", n,
                         obs_pass_bounds[i], s->c.pass_buckets[i]);
        rc |= dls_jbuf_put(b, t, (size_t)k);
    }
    char t[256];
    int k = snprintf(t, sizeof t,
                     "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n%s_sum %.9g\n%s_count %" PRIu64 "\n",
                     n, s->c.passes, n, s->c.pass_seconds_sum, n, s->c.passes);
    return rc | dls_jbuf_put(b, t, (size_t)k);
}

static int per_medium(const obs_snap *s, dls_jbuf *b, const char *name, const char *type,
                      const char *help, size_t field)
{
    int rc = head(b, name, type, help);
    for (size_t i = 0; i < s->nmedia; i++) {
        const obs_medium *m = &s->media[i];
        uint64_t v = field == 0 ? m->drained : field == 1 ? m->facts : field == 2 ? m->gaps
                                                                                  : m->failing;
        rc |= sample(b, name, "medium", m->name, v);
    }
    return rc;
}

static int judge_metrics(const obs_snap *s, dls_jbuf *b)
{
    const obs_counters *c = &s->c;
    int rc = one(b, "daolease_judge_passes_total", "counter", "Passes with a now.", c->passes);
    rc |= histogram(s, b);
    rc |= per_medium(s, b, "daolease_judge_drained_records_total", "counter",
                     "Records drained from a lease-fact medium.", 0);
    rc |= per_medium(s, b, "daolease_judge_drained_facts_total", "counter",
                     "Facts the drained records carried.", 1);
    rc |= per_medium(s, b, "daolease_judge_medium_gaps_total", "counter",
                     "Gaps met on a medium (records evicted or trimmed unread).", 2);
    rc |= per_medium(s, b, "daolease_judge_medium_failing", "gauge",
                     "1 while a medium is in a run of transport-error or budget-cut passes.",
                     3);
    rc |= one(b, "daolease_judge_renewals_total", "counter",
              "Renewals counted for their lease.", c->renewals);
    rc |= one(b, "daolease_judge_late_renewals_total", "counter",
              "Renewals counted more than half a duration after the last observation.",
              c->late_renewals);
    rc |= one(b, "daolease_judge_forged_facts_total", "counter",
              "Media records attributed to nobody.", c->forged);
    rc |= head(b, "daolease_judge_defective_facts_total", "counter",
               "Defective facts by rule (judge.md, Defective facts).");
    for (int i = 1; i < 8; i++) {
        char r[4];
        snprintf(r, sizeof r, "%d", i);
        rc |= sample(b, "daolease_judge_defective_facts_total", "rule", r, c->defective[i]);
    }
    rc |= head(b, "daolease_judge_ignored_facts_total", "counter", "Ignored facts by reason.");
    for (int i = 0; i < 5; i++)
        rc |= sample(b, "daolease_judge_ignored_facts_total", "reason", ignored_names[i],
                     c->ignored[i]);
    rc |= one(b, "daolease_judge_waiters", "gauge", "Proposals waiting after the last pass.",
              s->waiting);
    rc |= one(b, "daolease_judge_pending_reclaims", "gauge",
              "Leases due whose reclaim has not answered done.", s->pending);
    rc |= one(b, "daolease_judge_reclaim_failures_total", "counter",
              "Reclaim calls answering not yet or failed.", c->reclaim_failed);
    rc |= one(b, "daolease_judge_late_reclaims_total", "counter",
              "Leases lapsed at a pass after the one they fell due at.", c->late_reclaims);
    rc |= one(b, "daolease_judge_cadence_overruns_total", "counter",
              "Passes whose now came more than a cadence after the previous one.",
              c->cadence_overruns);
    rc |= one(b, "daolease_judge_media_failing", "gauge",
              "Media that failed at the last pass (transport error or budget cut).",
              s->transport_errors);
    rc |= one(b, "daolease_judge_media_behind", "gauge",
              "Media not fully drained at the last pass (drain budget).", s->behind);
    rc |= one(b, "daolease_judge_gaps_total", "counter", "Gaps met on all media.", c->gaps);
    if (s->has_checkpoint) {
        rc |= head(b, "daolease_judge_checkpoint_age_seconds", "gauge",
                   "Seconds since the newest checkpoint was written.");
        rc |= put_f(b, "daolease_judge_checkpoint_age_seconds %.3f\n",
                    s->checkpoint_age_seconds);
    }
    if (s->has_standby) { /* docs/standby.md: how far behind the journal */
        rc |= one(b, "daolease_standby_following", "gauge",
                  "1 while this standby judge follows the journal, 0 once it took over.",
                  s->standby_following);
        rc |= one(b, "daolease_standby_behind_records", "gauge",
                  "Journal records this standby has not applied yet.", s->standby_behind_records);
        rc |= one(b, "daolease_standby_behind_bytes", "gauge",
                  "Journal bytes this standby has not applied yet.", s->standby_behind_bytes);
        rc |= one(b, "daolease_standby_behind_passes", "gauge",
                  "Pass marks on the journal this standby has not applied yet.",
                  s->standby_behind_passes);
    }
    if (s->last_pass_unix > 0) {
        rc |= head(b, "daolease_judge_last_pass_timestamp_seconds", "gauge",
                   "Host clock (Unix seconds) at the last pass.");
        rc |= put_f(b, "daolease_judge_last_pass_timestamp_seconds %.3f\n", s->last_pass_unix);
    }
    return rc;
}

int obs_render_metrics(const obs_snap *s, dls_jbuf *b)
{
    int rc = 0;
    if (s->has_counters)
        rc |= judge_metrics(s, b);
    rc |= one(b, "daolease_judge_pass", "gauge", "The last pass's number.", s->pass);
    rc |= one(b, "daolease_judge_live_leases", "gauge", "Leases in the ledger.", s->live);
    rc |= one(b, "daolease_judge_grants_total", "counter", "Grants on the journal.",
              s->c.granted);
    rc |= one(b, "daolease_judge_refusals_total", "counter", "Refusals on the journal.",
              s->c.refused);
    rc |= head(b, "daolease_judge_lapses_total", "counter", "Leases lapsed, by cause.");
    for (int i = 1; i < 5; i++)
        rc |= sample(b, "daolease_judge_lapses_total", "cause", cause_names[i], s->c.lapsed[i]);
    rc |= one(b, "daolease_journal_bytes", "gauge", "The journal's size on disk.",
              s->journal_bytes);
    return rc ? DLS_ERR_NOMEM : 0;
}

/* ---- the publisher ------------------------------------------------------------------ */

int obs_pub_init(obs_pub *p)
{
    memset(p, 0, sizeof *p);
    return pthread_mutex_init(&p->mu, NULL) ? DLS_ERR_NOMEM : 0;
}

void obs_pub_fini(obs_pub *p)
{
    obs_pub_release(p, p->cur);
    p->cur = NULL;
    pthread_mutex_destroy(&p->mu);
}

void obs_pub_put(obs_pub *p, obs_snap *s)
{
    s->published_unix = unix_now();
    pthread_mutex_lock(&p->mu);
    obs_snap *old = p->cur;
    p->cur = s;
    pthread_mutex_unlock(&p->mu);
    obs_pub_release(p, old);
}

obs_snap *obs_pub_get(obs_pub *p)
{
    pthread_mutex_lock(&p->mu);
    obs_snap *s = p->cur;
    if (s)
        atomic_fetch_add(&s->refs, 1);
    p->wanted = true;
    pthread_mutex_unlock(&p->mu);
    return s;
}

void obs_pub_release(obs_pub *p, obs_snap *s)
{
    (void)p;
    if (s && atomic_fetch_sub(&s->refs, 1) == 1)
        obs_snap_free(s);
}

bool obs_pub_take_wanted(obs_pub *p)
{
    pthread_mutex_lock(&p->mu);
    bool w = p->wanted;
    p->wanted = false;
    pthread_mutex_unlock(&p->mu);
    return w;
}
