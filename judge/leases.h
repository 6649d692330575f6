/* The owner's view (judge/leases.c): hooks the ledger and the pass call.
 * Internal to the judge. */
#ifndef DLS_JUDGE_LEASES_H
#define DLS_JUDGE_LEASES_H

#include <stddef.h>
#include <stdint.h>

#include "daolease/judge.h"

/* Makes room to link lease slot `idx` of party `holder` (before anything of
 * the lease is linked): 0 or DLS_ERR_NOMEM. */
int jo_reserve(dls_judge *j, uint32_t idx, uint32_t holder);
/* Links / unlinks a lease slot in its holder's list (never fails). */
void jo_link(dls_judge *j, uint32_t idx);
void jo_unlink(dls_judge *j, uint32_t idx);
void jo_free(dls_judge *j);
size_t jo_memory(const dls_judge *j);
/* Queues a granted lease for the `granted` callback: 0 or DLS_ERR_NOMEM. */
int jo_granted(dls_judge *j, uint64_t lease);
/* Calls `granted` for the queued leases (after the journal flush). */
void jo_tell_granted(dls_judge *j);
/* Forgets the queue (a pass that failed). */
void jo_drop_granted(dls_judge *j);

#endif
