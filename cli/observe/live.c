/* The endpoint of a running judge (live.h; docs/observe.md). */
#include "cli/observe/live.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/config.h"
#include "cli/observe/http.h"
#include "cli/observe/snap.h"
#include "cli/status_scan.h"
#include "daolease/checkpoint.h"
#include "daolease/judge_view.h"

/* docs/observe.md, Freshness: counters, gauges and the recent events are
 * published after every pass; the ledger (every live lease copied) is rebuilt at most
 * FRESH_NS apart while someone read within WATCHED_NS or while fewer than
 * SMALL leases are live, else every IDLE_NS. */
#define SMALL 10000
/* ... and never more often than every BUILD_SHARE times its last build's
 * duration: the copy takes at most 2 % of the judge's thread. */
#define BUILD_SHARE 50
#define FRESH_NS (250ull * 1000 * 1000)
#define WATCHED_NS (30ull * 1000 * 1000 * 1000)
#define IDLE_NS (5ull * 1000 * 1000 * 1000)

struct obs_live {
    obs_pub pub;
    obs_http *http;
    obs_counters c;
    obs_medium *media;
    size_t nmedia;
    uint64_t cadence_ns, tolerance_ns;
    char *checkpoints;
    obs_event ring[OBS_EVENTS]; /* recent events, oldest at `head` when full */
    size_t head, n;
    size_t unstamped;           /* lapses of the running pass, stamped after it */
    uint64_t last_build, last_wanted; /* host monotonic ns */
    uint64_t build_ns;          /* what the last ledger build took */
    obs_ledger *ledger;         /* the last built (one reference) */
    /* the last pass's gauges */
    dls_judge_pass_result last;
    double last_pass_unix;
    uint64_t journal_bytes;
    bool has_checkpoint;
    double checkpoint_age;      /* at the last ledger build */
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double unix_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int obs_live_start(obs_live **out, const char *sub, const obs_live_settings *s)
{
    *out = NULL;
    obs_live *o = calloc(1, sizeof *o);
    if (!o)
        return DLS_ERR_NOMEM;
    if (obs_pub_init(&o->pub)) {
        free(o);
        return DLS_ERR_NOMEM;
    }
    o->media = calloc(s->nmedia ? s->nmedia : 1, sizeof *o->media);
    o->checkpoints = s->checkpoints ? strdup(s->checkpoints) : NULL;
    if (!o->media || (s->checkpoints && !o->checkpoints)) {
        obs_live_stop(o);
        return DLS_ERR_NOMEM;
    }
    o->nmedia = s->nmedia;
    for (size_t i = 0; i < s->nmedia; i++)
        snprintf(o->media[i].name, sizeof o->media[i].name, "%s", s->media[i]);
    o->cadence_ns = s->cadence_ns;
    o->tolerance_ns = s->tolerance_ns;
    int rc = obs_http_start(&o->http, sub, s->addr_port, s->allow_public, &o->pub);
    if (rc) {
        obs_live_stop(o);
        return rc;
    }
    *out = o;
    return 0;
}

void obs_live_stop(obs_live *o)
{
    if (!o)
        return;
    obs_http_stop(o->http); /* no reader left after this */
    obs_pub_fini(&o->pub);
    obs_ledger_release(o->ledger);
    free(o->media);
    free(o->checkpoints);
    free(o);
}

unsigned obs_live_port(const obs_live *o) { return o ? obs_http_port(o->http) : 0; }

static obs_event *push_event(obs_live *o)
{
    obs_event *e;
    if (o->n < OBS_EVENTS) {
        e = &o->ring[(o->head + o->n) % OBS_EVENTS];
        o->n++;
    } else {
        e = &o->ring[o->head];
        o->head = (o->head + 1) % OBS_EVENTS;
    }
    return e;
}

void obs_live_granted(obs_live *o, const dls_judge_lease_info *l)
{
    if (!o)
        return;
    obs_event *e = push_event(o);
    obs_event_set(e, DLS_STATUS_GRANT, l->tenure_start, l->lease, DLS_CAUSE_NONE, l->subject,
                  l->holder);
    e->at_unix = unix_now();
}

void obs_live_lapsed(obs_live *o, dls_judge *j, dls_bytes subject, uint64_t lease,
                     dls_cause cause)
{
    if (!o)
        return;
    dls_judge_lease_info info;
    dls_bytes holder = {(const uint8_t *)"", 0};
    if (dls_judge_lease(j, lease, &info) == 0)
        holder = info.holder;
    /* the pass's now is known after it: stamped in obs_live_pass */
    obs_event_set(push_event(o), DLS_STATUS_LAPSE, 0, lease, cause, subject, holder);
    if (o->unstamped < OBS_EVENTS)
        o->unstamped++;
}

/* The counters a pass adds. */
static void count(obs_counters *c, const dls_judge_pass_result *r, double secs)
{
    if (r->has_now) {
        c->passes++;
        c->pass_seconds_sum += secs;
        for (int i = 0; i < OBS_PASS_BUCKETS; i++)
            c->pass_buckets[i] += secs <= obs_pass_bounds[i];
    }
    c->renewals += r->renewals;
    c->late_renewals += r->late_renewals;
    c->late_reclaims += r->late_reclaims;
    c->forged += r->forged;
    for (int i = 0; i < 8; i++)
        c->defective[i] += r->defective[i];
    c->ignored[0] += r->ignored_misplaced;
    c->ignored[1] += r->ignored_wrong_author;
    c->ignored[2] += r->ignored_replayed;
    c->ignored[3] += r->ignored_unknown_lease;
    c->ignored[4] += r->not_lease;
    c->granted += r->granted;
    c->refused += r->refused;
    for (int i = 0; i < 5; i++)
        c->lapsed[i] += r->lapsed[i];
    c->cadence_overruns += r->cadence_overrun;
    c->gaps += r->gaps;
    c->reclaim_failed += r->reclaim_failed;
}

/* The newest checkpoint's age in seconds (host clock, its file's mtime). */
static bool checkpoint_age(const obs_live *o, double *age)
{
    uint64_t *passes = NULL;
    size_t n = 0;
    if (!o->checkpoints || dls_checkpoint_list(o->checkpoints, &passes, &n) || !n) {
        free(passes);
        return false;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%020" PRIu64 ".dls", o->checkpoints, passes[n - 1]);
    free(passes);
    struct stat st;
    if (stat(path, &st))
        return false;
    double t = (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9;
    *age = unix_now() - t;
    return true;
}

/* The counters and gauges of the last pass. */
static int fill(obs_live *o, dls_judge *j, obs_snap *s)
{
    const dls_judge_pass_result *r = &o->last;
    s->has_counters = true;
    s->c = o->c;
    s->pass = r->pass;
    s->now = r->now;
    s->live = dls_judge_live(j);
    s->waiting = r->waiting;
    s->pending = r->pending;
    s->behind = r->behind;
    s->transport_errors = r->transport_errors;
    s->journal_bytes = o->journal_bytes;
    s->last_pass_unix = o->last_pass_unix;
    s->cadence_ns = o->cadence_ns;
    s->has_checkpoint = o->has_checkpoint;
    s->checkpoint_age_seconds = o->checkpoint_age;
    dls_judge_standby_info si;
    if (dls_judge_standby_status(j, &si) == 0 && (si.standby || si.took_over)) {
        s->has_standby = true;
        s->standby_following = si.standby;
        s->standby_behind_records = si.behind_records;
        s->standby_behind_bytes = si.behind_bytes;
        s->standby_behind_passes = si.behind_passes;
    }
    s->media = calloc(o->nmedia ? o->nmedia : 1, sizeof *s->media);
    if (!s->media)
        return DLS_ERR_NOMEM;
    s->nmedia = o->nmedia;
    for (size_t i = 0; i < o->nmedia; i++) {
        dls_judge_medium_view v;
        s->media[i] = o->media[i];
        if (dls_judge_medium_view_of(j, i, &v) == 0) {
            s->media[i].drained = v.drained;
            s->media[i].facts = v.facts;
            s->media[i].gaps = v.gaps;
            s->media[i].failing = v.failing;
        }
    }
    if (o->n && !(s->events = malloc(o->n * sizeof *s->events)))
        return DLS_ERR_NOMEM;
    for (size_t i = 0; i < o->n; i++)
        s->events[i] = o->ring[(o->head + i) % OBS_EVENTS];
    s->nevents = o->n;
    return 0;
}

/* Every live lease and the recent events, copied. */
static obs_ledger *build_ledger(obs_live *o, dls_judge *j)
{
    const dls_judge_pass_result *r = &o->last;
    obs_ledger *g = obs_ledger_new();
    if (!g)
        return NULL;
    g->sum = (dls_status_summary){.live = dls_judge_live(j), .pass = r->pass, .now = r->now,
                                  .tolerance_ns = o->tolerance_ns, .verified = true};
    dls_judge_iter it;
    dls_judge_lease_info l;
    uint64_t due = 0;
    dls_judge_leases(j, &it);
    while (dls_judge_leases_next(&it, &l, &due)) {
        bool renewed = l.last_seq != 0 || l.last_observation != l.tenure_start;
        dls_status_lease sl = {
            .lease = l.lease, .subject = l.subject, .holder = l.holder,
            .granted_at = l.tenure_start, .renewed = renewed,
            .last_renewal = l.last_observation, .due_by = due, .now = r->now,
            .released = l.released, .mode = l.mode, .seq = l.last_seq,
        };
        if (obs_ledger_add(g, &sl)) {
            obs_ledger_release(g);
            return NULL;
        }
    }
    return g;
}

/* A snapshot of the last pass, with a new ledger when `rebuild`. */
static int publish(obs_live *o, dls_judge *j, bool rebuild)
{
    if (rebuild || !o->ledger) {
        uint64_t start = mono_ns();
        obs_ledger *g = build_ledger(o, j);
        if (!g)
            return DLS_ERR_NOMEM; /* the previous one stays */
        obs_ledger_release(o->ledger);
        o->ledger = g;
        uint64_t t = mono_ns();
        o->build_ns = t - start;
        o->last_build = t;
        o->has_checkpoint = checkpoint_age(o, &o->checkpoint_age);
    }
    obs_snap *s = obs_snap_new("judge", o->ledger);
    if (!s)
        return DLS_ERR_NOMEM;
    int rc = fill(o, j, s);
    if (rc) {
        obs_snap_free(s);
        return rc;
    }
    obs_pub_put(&o->pub, s);
    return 0;
}

int obs_live_publish(obs_live *o, dls_judge *j)
{
    return publish(o, j, true);
}

void obs_live_pass(obs_live *o, dls_judge *j, const dls_judge_pass_result *r,
                   double pass_seconds, uint64_t journal_bytes)
{
    if (!o)
        return;
    count(&o->c, r, pass_seconds);
    double wall = unix_now();
    for (size_t k = 0; k < o->unstamped; k++) { /* this pass's lapses: its now */
        obs_event *e = &o->ring[(o->head + o->n - 1 - k) % OBS_EVENTS];
        e->at = r->now;
        e->at_unix = wall;
    }
    o->unstamped = 0;
    if (r->has_now) {
        o->last = *r;
        o->last_pass_unix = unix_now();
    }
    o->journal_bytes = journal_bytes;
    uint64_t now = mono_ns();
    if (obs_pub_take_wanted(&o->pub))
        o->last_wanted = now;
    bool watched = (o->last_wanted && now - o->last_wanted < WATCHED_NS) ||
                   dls_judge_live(j) < SMALL;
    uint64_t every = watched ? FRESH_NS : IDLE_NS;
    if (every < BUILD_SHARE * o->build_ns) /* its cost bounded: 1/BUILD_SHARE of the thread */
        every = BUILD_SHARE * o->build_ns;
    /* counters every pass; the ledger when due (out of memory: the
     * previous snapshot stays) */
    publish(o, j, !o->ledger || now - o->last_build >= every);
}

int obs_live_for_judge(obs_live **out, const char *http_opt, const dls_config *cfg,
                       const char *checkpoints)
{
    *out = NULL;
    const char *ap = http_opt ? http_opt : cfg->http;
    if (!ap)
        return 0;
    const char **names = calloc(cfg->n_media ? cfg->n_media : 1, sizeof *names);
    if (!names)
        return DLS_ERR_NOMEM;
    for (size_t i = 0; i < cfg->n_media; i++)
        names[i] = cfg->media[i].where;
    obs_live_settings s = {
        .addr_port = ap, .allow_public = cfg->http_public, .media = names,
        .nmedia = cfg->n_media, .cadence_ns = cfg->cadence.ns,
        .tolerance_ns = cfg->tolerance.ns, .checkpoints = checkpoints,
    };
    int rc = obs_live_start(out, "judge", &s);
    free(names);
    return rc;
}

double obs_live_clock(void)
{
    return (double)mono_ns() / 1e9;
}
