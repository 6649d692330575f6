/* daolease command — the HTTP endpoint of a running judge (`judge --http`;
 * docs/observe.md). The judge's own thread calls these between passes and
 * from the judge's callbacks; they count, keep the recent grants and lapses,
 * and publish a snapshot for the server's threads. Nothing here blocks on a
 * client: publishing is a pointer swap under a mutex. */
#ifndef DLS_CLI_OBSERVE_LIVE_H
#define DLS_CLI_OBSERVE_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/judge.h"

typedef struct obs_live obs_live;

typedef struct obs_live_settings {
    const char *addr_port;     /* --http ADDR:PORT */
    bool allow_public;         /* "http_public": true */
    const char *const *media;  /* the media's names, assembly order */
    size_t nmedia;
    uint64_t cadence_ns;
    uint64_t tolerance_ns;
    const char *checkpoints;   /* the checkpoint folder, NULL: none */
} obs_live_settings;

/* Starts the server. Prints one line and returns a negative code on
 * failure. */
int obs_live_start(obs_live **out, const char *sub, const obs_live_settings *s);
void obs_live_stop(obs_live *o);

/* From the judge's callbacks (o may be NULL: no endpoint). */
void obs_live_granted(obs_live *o, const dls_judge_lease_info *l);
void obs_live_lapsed(obs_live *o, dls_judge *j, dls_bytes subject, uint64_t lease,
                     dls_cause cause);

/* After each pass: its result, how long dls_judge_pass took, the journal's
 * size. Publishes a snapshot when one is due (docs/observe.md, Freshness). */
void obs_live_pass(obs_live *o, dls_judge *j, const dls_judge_pass_result *r,
                   double pass_seconds, uint64_t journal_bytes);

/* Publishes now whatever the schedule (benchmarks and tests). */
int obs_live_publish(obs_live *o, dls_judge *j);

/* `judge --http` (or the configuration's "http"): starts the endpoint for
 * the judge `cfg` configures; *out stays NULL when neither asks for one. */
struct dls_config;
int obs_live_for_judge(obs_live **out, const char *http_opt, const struct dls_config *cfg,
                       const char *checkpoints);

/* Seconds on the host's monotonic clock (to time a pass). */
double obs_live_clock(void);

/* The port the server bound (with port 0 in addr_port). */
unsigned obs_live_port(const obs_live *o);

#endif
