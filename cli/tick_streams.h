/* daolease judge — realtime tick streams shared by machines (docs/config.md
 * "ticks"; docs/standby.md, Across machines; judge.md, Assembly).
 *
 * Each judge process, active or standby, appends its own CLOCK_REALTIME
 * ticks, sealed with the grantor's key, to its `own` stream, and reads every
 * configured stream as one tick cursor: *now* is the largest reading over
 * all of them, on the one basis "realtime/<name>". When a machine dies its
 * stream stops; the others' streams carry now on, and now never goes back. */
#ifndef DLS_CLI_TICK_STREAMS_H
#define DLS_CLI_TICK_STREAMS_H

#include <stddef.h>

#include "cli/config.h"
#include "daolease/attrib.h"
#include "daolease/judge.h"
#include "daolease/tick.h"

typedef struct dls_cli_tick_streams {
    size_t n;                        /* streams, the config's order */
    dls_medium **media;              /* media[own] is opened for append */
    dls_resolver **resolvers;        /* signed: the grantor's ticks count */
    dls_judge_tick_source *sources;  /* the judge's tick cursors, one per stream */
    dls_tick *adapter;               /* the realtime adapter on media[own] */
} dls_cli_tick_streams;

/* Opens every stream of cfg (creating a missing one), makes the realtime
 * adapter on the own stream, sealed with `grantor` (party cfg->party), and
 * one tick source per stream, each starting at the stream's last record
 * (judge.h: tick cursors start afresh; only the newest reading matters).
 * The adapter appends nothing older than the own stream's last tick. On error
 * prints one line naming the stream and returns the code. */
int dls_cli_tick_streams_new(dls_cli_tick_streams *t, const char *sub, const dls_config *cfg,
                             const dls_secret *grantor, dls_keyring *kr);
void dls_cli_tick_streams_del(dls_cli_tick_streams *t);

#endif
