/* daolease — the owner's view of its judge's live leases (spec:
 * judge.md, The ledger).
 *
 * An owner maps lease ids to its resources and holders. Beside the reclaim
 * callback, dls_judge_callbacks.granted tells it each grant once the grant
 * is on the journal; these iterators list the ledger's live leases — all of
 * them, those of one subject, or those of one holder — without a scan for
 * one subject or holder (a hash lookup, then the subject's or holder's own
 * list: O(1) + O(leases found)).
 *
 *     dls_judge_iter it;
 *     dls_judge_lease_info l;
 *     uint64_t due_by;
 *     dls_judge_leases_by_holder(j, (dls_bytes){"agent-1", 7}, &it);
 *     while (dls_judge_leases_next(&it, &l, &due_by))
 *         printf("%llu\n", (unsigned long long)l.lease);
 *
 * An iterator and the slices it hands out are valid until the judge's next
 * pass or owner act (dls_judge_end, dls_judge_grant, ...) and may be used
 * from inside the judge's callbacks.
 */
#ifndef DAOLEASE_JUDGE_VIEW_H
#define DAOLEASE_JUDGE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/export.h"
#include "daolease/fact.h"
#include "daolease/judge.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where an iteration stands (its members are private). */
typedef struct dls_judge_iter {
    dls_judge *judge;
    uint32_t kind;
    uint32_t next;
    uint32_t end;
} dls_judge_iter;

/* Starts an iteration over every live lease (pending ones included), in
 * ledger order. Returns 0, DLS_ERR_INVAL for NULL arguments. */
DLS_EXPORT int dls_judge_leases(dls_judge *j, dls_judge_iter *it);

/* Starts an iteration over the live leases of one subject (its encoded
 * msgpack value, as in dls_judge_ask.subject): one hash lookup. Returns 0
 * (an empty iteration when the ledger does not know the subject),
 * DLS_ERR_INVAL for NULL arguments. */
DLS_EXPORT int dls_judge_leases_by_subject(dls_judge *j, dls_bytes subject,
                                           dls_judge_iter *it);

/* Starts an iteration over the live leases of one holder (its party name):
 * one hash lookup. Returns 0 (empty when unknown), DLS_ERR_INVAL. */
DLS_EXPORT int dls_judge_leases_by_holder(dls_judge *j, dls_bytes holder,
                                          dls_judge_iter *it);

/* The next lease: true with *info filled as dls_judge_lease() fills it
 * (id, subject, holder, mode, tenure start, last relevant observation, ...)
 * and *due_by (may be NULL) the reading on the judge's ticks at which the
 * lease falls due unless renewed — silence (last relevant observation +
 * duration + tolerance) or the cap, whichever is first; 0 when it is due
 * already (released, ended or pending). False at the end. */
DLS_EXPORT bool dls_judge_leases_next(dls_judge_iter *it, dls_judge_lease_info *info,
                                      uint64_t *due_by);

/* One lease-fact medium as the judge reads it (docs/observe.md): counts
 * since this judge started (replay excluded), and its state at the last
 * pass. */
typedef struct dls_judge_medium_view {
    uint64_t drained;         /* records drained */
    uint64_t facts;           /* facts they carried */
    uint64_t gaps;            /* gaps met (records evicted or trimmed unread) */
    uint64_t position;        /* the next position to drain (0 on a standby
                                 that follows: it drains no medium itself;
                                 dls_judge_standby_status says how far it
                                 followed) */
    bool failing;             /* transport-error or budget cut at the last pass */
    uint64_t failing_since;   /* the now of the failing run's first pass */
    bool ended;               /* sealed: read to its end */
} dls_judge_medium_view;

/* Fills *out for media[i] of the assembly. Returns 0, DLS_ERR_INVAL for
 * NULL arguments or i out of range. */
DLS_EXPORT int dls_judge_medium_view_of(const dls_judge *j, size_t i, dls_judge_medium_view *out);

#ifdef __cplusplus
}
#endif
#endif
