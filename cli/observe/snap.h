/* daolease command — what the HTTP endpoint shows (docs/observe.md): a
 * snapshot of the ledger and the judge's counters, published by the one
 * thread that owns the judge and read by the server's threads.
 *
 * A snapshot is immutable once published and reference-counted: the
 * publisher swaps the current pointer under a mutex (a pointer swap: the
 * pass never waits on a client), a reader takes a reference under the same
 * mutex and renders without it. The last reference frees it. */
#ifndef DLS_CLI_OBSERVE_SNAP_H
#define DLS_CLI_OBSERVE_SNAP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/json/json.h"
#include "cli/observe/query.h"
#include "cli/status_json.h"
#include "daolease/fact.h"

/* Histogram bounds of the pass duration, seconds (le labels). */
#define OBS_PASS_BUCKETS 14
extern const double obs_pass_bounds[OBS_PASS_BUCKETS];

/* Recent grants and lapses kept for the page. */
#define OBS_EVENTS 512
#define OBS_EVENT_TEXT 96   /* subject and holder shown, bytes */

typedef struct obs_event {
    uint64_t at;              /* the judge's now (its ticks) */
    uint64_t lease;
    double at_unix;           /* the host clock at the pass (0: unknown) */
    uint8_t kind;             /* DLS_STATUS_GRANT or DLS_STATUS_LAPSE */
    uint8_t cause;            /* lapses: dls_cause */
    char subject[OBS_EVENT_TEXT + 4]; /* JSON text of the subject, cut at
                                         a character with "…" if longer */
    char holder[OBS_EVENT_TEXT + 4];
} obs_event;

/* One medium's counters and state. */
typedef struct obs_medium {
    char name[128];
    uint64_t drained, facts, gaps;
    bool failing;
} obs_medium;

/* Cumulative counters since the process started (or, from files, what the
 * journal shows). */
typedef struct obs_counters {
    uint64_t passes;
    uint64_t pass_buckets[OBS_PASS_BUCKETS]; /* cumulative counts: le bound */
    double pass_seconds_sum;
    uint64_t renewals, late_renewals, late_reclaims;
    uint64_t forged, defective[8];
    uint64_t ignored[5];      /* misplaced, wrong_author, replayed, unknown_lease, not_lease */
    uint64_t granted, refused, lapsed[5];
    uint64_t cadence_overruns, gaps;
    uint64_t reclaim_failed;
} obs_counters;

typedef struct obs_lease {
    uint64_t lease, granted_at, last_renewal, due_by, seq;
    uint32_t subj_off, subj_len, holder_off, holder_len; /* in the arena */
    bool renewed, released, shared;
} obs_lease;

/* The ledger as `status --json` shows it: rebuilt every few hundred
 * milliseconds at most (copying every live lease), and shared by the
 * snapshots published in between. */
typedef struct obs_ledger {
    atomic_int refs;
    dls_status_summary sum;
    obs_lease *leases;
    size_t nleases, cap;
    uint8_t *arena;
    size_t an, acap;
} obs_ledger;

obs_ledger *obs_ledger_new(void);
void obs_ledger_release(obs_ledger *l);

/* Everything one answer shows: counters and gauges of the last pass (a
 * snapshot a pass), and a reference to the last ledger built. */
typedef struct obs_snap {
    atomic_int refs;
    const char *source;       /* "judge" or "files" */
    uint64_t pass, now, live; /* at the last pass */
    bool has_counters;        /* a judge's counters (not from files) */
    obs_counters c;
    /* gauges */
    uint64_t waiting, pending, behind, transport_errors;
    uint64_t journal_bytes;
    bool has_checkpoint;
    double checkpoint_age_seconds;
    /* a judge started as a standby (docs/standby.md): following, or took over */
    bool has_standby, standby_following;
    uint64_t standby_behind_records, standby_behind_bytes, standby_behind_passes;
    double published_unix;    /* the host clock when published */
    double last_pass_unix;    /* the host clock at the last pass */
    uint64_t cadence_ns;
    obs_medium *media;
    size_t nmedia;
    obs_event *events;        /* recent grants and lapses, oldest first */
    size_t nevents;
    obs_ledger *ledger;       /* owned reference */
} obs_snap;

/* A snapshot taking a reference to `ledger`. NULL: out of memory. */
obs_snap *obs_snap_new(const char *source, obs_ledger *ledger);
void obs_snap_free(obs_snap *s);
/* Appends a lease (subject and holder copied). 0 or DLS_ERR_NOMEM. */
int obs_ledger_add(obs_ledger *l, const dls_status_lease *sl);
/* Fills an event from its parts (text cut to OBS_EVENT_TEXT). */
void obs_event_set(obs_event *e, int kind, uint64_t at, uint64_t lease, dls_cause cause,
                   dls_bytes subject, dls_bytes holder);

/* The /status.json body: the `status --json` lines of the leases the query
 * selects, its summary line, then one {"observe": ...} line (docs/observe.md).
 * 0 or DLS_ERR_NOMEM. */
int obs_render_status(const obs_snap *s, const obs_query *q, dls_jbuf *b);
/* The /metrics body, Prometheus text format 0.0.4. 0 or DLS_ERR_NOMEM. */
int obs_render_metrics(const obs_snap *s, dls_jbuf *b);

/* The publisher: the current snapshot and a flag readers raise. */
typedef struct obs_pub {
    pthread_mutex_t mu;
    obs_snap *cur;
    bool wanted;              /* a reader came since the last publish */
} obs_pub;

int obs_pub_init(obs_pub *p);
void obs_pub_fini(obs_pub *p);
/* Publishes `s` (ownership passes); the previous one is released. */
void obs_pub_put(obs_pub *p, obs_snap *s);
/* A reference to the current snapshot (NULL before the first), and raises
 * `wanted`. Release it with obs_pub_release. */
obs_snap *obs_pub_get(obs_pub *p);
void obs_pub_release(obs_pub *p, obs_snap *s);
/* True (and lowers it) when a reader came since the last call. */
bool obs_pub_take_wanted(obs_pub *p);

#endif
