/* The tick adapter's clock step, apart from the clock read
 * (include/daolease/tick.h). dls_tick_now reads the clock and hands the
 * value here; tests hand values of their own to show what the adapter
 * appends when a wall clock steps back (vocabulary.md rule 7). */
#ifndef DLS_ADAPTERS_TICK_CLOCK_H
#define DLS_ADAPTERS_TICK_CLOCK_H

#include <stdint.h>

#include "daolease/tick.h"

/* Appends a tick for the clock value `clock_ns` of a host or realtime
 * adapter, as dls_tick_now does after reading its clock: the host source
 * appends the last reading again when the floored value is older; the
 * realtime source appends nothing and answers DLS_ERR_RULE7. On 0 and on
 * DLS_ERR_RULE7, *reading_ns (may be NULL) is the adapter's last reading.
 * DLS_ERR_STATE for a manual adapter. */
int dls_tick_clock_step(dls_tick *t, uint64_t clock_ns, uint64_t *reading_ns);

/* Declares `reading_ns` the last reading on the adapter's medium (appended
 * by an earlier process: a judge restarted on its own tick stream), so the
 * adapter appends nothing older (vocabulary.md rule 7). A reading older
 * than the adapter's own last one changes nothing. */
void dls_tick_resume(dls_tick *t, uint64_t reading_ns);

#endif
