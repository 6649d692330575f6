/* Verification ahead of the replay (docs/audit.md, "Threads"): records are
 * read from a cursor ahead of the replay into a bounded window and their
 * attribution (the signature or MAC check, the costly part) is done by
 * worker threads; the replay takes them back strictly in order, on its own
 * thread, as if it had read and attributed each one itself. Attribution
 * depends only on a record's bytes, its medium and the keyring (fixed for
 * the run), so every answer is the same for any number of threads; all
 * keyed state (replayed seqs, the ledger) stays with the replay.
 *
 * Internal to the audit. */
#ifndef DLS_AUDIT_AHEAD_H
#define DLS_AUDIT_AHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/attrib.h"
#include "daolease/stream.h"

/* Records read ahead at most, per window (and at most AU_AHEAD_BYTES of
 * record bytes, but always at least one record). */
#define AU_AHEAD 256
#define AU_AHEAD_BYTES (1u << 20)

typedef struct au_pool au_pool;
typedef struct au_ahead au_ahead;

/* One read, as dls_cursor_next answered it at position `at`; for an OK
 * record also its attribution (`att`, and `it` for a medium's facts),
 * whose slices borrow from rec.p. Valid until the next au_ahead_next on
 * the same window. */
typedef struct au_read {
    uint64_t at;
    dls_next r;
    dls_record rec;
    dls_where w;
    dls_attribution att;
    dls_facts it;
} au_read;

/* `threads` - 1 worker threads (threads 0 or 1: none, every record is
 * attributed on the caller's thread when it is taken). Fewer workers are
 * started when the system refuses a thread; the answers do not change.
 * 0 or DLS_ERR_NOMEM. */
int au_pool_new(au_pool **out, unsigned threads);
/* Stops and joins the workers; NULL-safe. No window may still hold records
 * queued for them (au_ahead_del first). */
void au_pool_del(au_pool *p);
/* Worker threads started (0: attribution on the caller's thread). */
unsigned au_pool_workers(const au_pool *p);

/* A window on the pool (p NULL: no workers). `batches` true: records are
 * attributed as a lease-fact medium's (dls_resolver_attribute_facts), else
 * as a journal's (dls_resolver_attribute). 0 or DLS_ERR_NOMEM. */
int au_ahead_new(au_ahead **out, au_pool *p, bool batches);
/* Waits for the window's records still with a worker, frees it; NULL-safe. */
void au_ahead_del(au_ahead *h);

/* The next read of `cur`, attributed under `res`: reads ahead from `cur`
 * while its position is below `limit` (a read that is not OK or GAP ends
 * the reading ahead: the reading resumes once it is taken). Every record
 * still in the window was read from the same cursor and resolver: a
 * caller that switches cursors first takes all (au_ahead_empty). `res` is
 * used as usual on this thread and only read by the workers. Returns
 * NULL on an allocation failure (nothing was taken). */
const au_read *au_ahead_next(au_ahead *h, dls_cursor *cur, dls_resolver *res,
                             uint64_t limit);
/* The position the next au_ahead_next answers at: the oldest record in
 * the window, else the cursor's. */
uint64_t au_ahead_position(const au_ahead *h, const dls_cursor *cur);
/* True when no read is waiting in the window. */
bool au_ahead_empty(const au_ahead *h);

#endif
