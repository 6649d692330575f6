/* daolease — an owner's judge assembled from a configuration
 * (docs/judge.md "A first pass"; the keys of docs/config.md).
 *
 * dls_judge_new takes borrowed parts: the grantor's secret, a journal
 * opened for append, tick sources with resolvers, lease-fact media with
 * resolvers. dls_owner does that assembly from file names — the same keys
 * `daolease judge --config` reads — with the host's monotonic clock as the
 * tick source (the tick adapter on an in-memory ring), and owns every part:
 *
 *     dls_owner_config c;
 *     dls_owner_config_default(&c);
 *     c.party = "arbiter"; c.key = "arbiter.secret"; c.keyring = "keyring";
 *     c.journal = "journal.dls";
 *     c.media = (const char *[]){"agent-1.dls", "agent-2.dls", NULL};
 *     dls_judge_callbacks cb = {.reclaim = my_reclaim};
 *     dls_owner *o;
 *     if (dls_owner_new(&o, &c, &cb, my_state, &w)) ... w.reason
 *     dls_judge_pass_result r;
 *     for (;;) { dls_owner_pass(o, &r); nanosleep_ns(dls_owner_wait_ns(o, &r)); }
 *
 * dls_owner_judge() gives the judge for everything else (dls_judge_end,
 * dls_judge_grant, dls_judge_leases, ...). One thread at a time.
 */
#ifndef DAOLEASE_OWNER_H
#define DAOLEASE_OWNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/error.h"
#include "daolease/export.h"
#include "daolease/fact.h"
#include "daolease/judge.h"
#include "daolease/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The configuration (docs/config.md's keys for `judge`). Paths are used as
 * given (relative to the working directory). dls_owner_config_default sets:
 *   party, key, keyring, journal   NULL   required
 *   media          NULL   NULL-terminated list of lease-fact media:
 *                         "PATH" (envelopes verified under the keyring) or
 *                         "PATH=PARTY" (bare facts on it are PARTY's); each
 *                         must exist (`daolease stream create`)
 *   sync           DLS_SYNC_DATA   the journal's (not DLS_SYNC_NONE)
 *   tolerance      250 ms
 *   cadence        100 ms
 *   duration       3 s     the default grant
 *   min_duration   100 ms
 *   max_duration   1 h
 *   max            none (ns 0)   the cap on tenure written into grants
 *   lock_delay     none (ns 0)
 * The journal is created when it does not exist. */
typedef struct dls_owner_config {
    const char *party;
    const char *key;
    const char *keyring;
    const char *journal;
    const char *const *media;
    dls_sync sync;
    dls_duration tolerance, cadence, duration, min_duration, max_duration, max, lock_delay;
} dls_owner_config;

DLS_EXPORT void dls_owner_config_default(dls_owner_config *c);

typedef struct dls_owner dls_owner;

/* Loads the key and keyring, opens (or creates) the journal and opens the
 * media, makes their resolvers and the host-clock ticks, and creates the
 * judge (replaying an existing journal). The configuration's strings are
 * not kept. On failure nothing is left open and `w` (optional) names what
 * failed: w->reason a static sentence, w->offset the index in `media` for
 * a medium's failure.
 *
 * Errors: DLS_ERR_INVAL (a required key missing, a medium "PATH=" with an
 * empty party), DLS_ERR_NO_GRANTOR (the key's name is not `party`), the
 * errors of dls_secret_load, dls_keyring_load, dls_medium_open /
 * dls_medium_create, dls_tick_new and dls_judge_new; DLS_ERR_JOURNAL_LOCKED
 * also when the journal's writer lock is held (another judge: the journal
 * is opened for its one writer, judge.md "Failure of the journal"). */
DLS_EXPORT int dls_owner_new(dls_owner **out, const dls_owner_config *c,
                             const dls_judge_callbacks *cb, void *user_data, dls_where *w);

/* The judge (owned by o). */
DLS_EXPORT dls_judge *dls_owner_judge(const dls_owner *o);

/* Reads the host's monotonic clock once (a tick on the owner's ring), then
 * runs one dls_judge_pass. Returns what the pass returns, or the tick
 * adapter's error. */
DLS_EXPORT int dls_owner_pass(dls_owner *o, dls_judge_pass_result *r);

/* How long to wait before the next pass after r: until r->next_due, at
 * most half the cadence, at least 100 µs (ns). */
DLS_EXPORT uint64_t dls_owner_wait_ns(const dls_owner *o, const dls_judge_pass_result *r);

/* Frees the judge and every part. NULL-safe. */
DLS_EXPORT void dls_owner_del(dls_owner *o);

#ifdef __cplusplus
}
#endif
#endif
