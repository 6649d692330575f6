/* daolease — the reusable replay checker (attribution.md, "Replay";
 * vocabulary.md, `seq`).
 *
 * A renewal counts only if its seq exceeds the last counted seq of its
 * lease; a proposal counts only if its seq exceeds the last counted proposal
 * seq of its author on that medium. The checker remembers exactly those
 * numbers, in two hash tables keyed with crypto_shorthash under a random key
 * (lease ids and author names come from whoever writes to a medium), so
 * memory is bounded by leases and authors, not by facts.
 *
 * Call a *_check function to ask, and the matching *_count function only
 * for a fact that passed every other gate (attributed to the right party,
 * read from the registered medium, about a live lease): it checks again and
 * records the seq when it counts.
 *
 *     dls_replay *rp;  dls_replay_new(&rp);
 *     if (attributed_to_holder && on_registered_medium &&
 *         dls_replay_renewal_count(rp, lease, seq) == DLS_REPLAY_COUNTED)
 *         ... the renewal counts
 *
 * One thread at a time. Internal to the library (shared by the judge, the
 * holder and the audit).
 */
#ifndef DLS_RESOLVER_REPLAY_H
#define DLS_RESOLVER_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "daolease/attrib.h"

typedef enum dls_replay_verdict {
    DLS_REPLAY_REPLAY = 0,   /* seq not greater than the last counted: worthless */
    DLS_REPLAY_COUNTED = 1   /* seq greater than the last counted (or the first) */
} dls_replay_verdict;

typedef struct dls_replay dls_replay;

/* Errors: DLS_ERR_INVAL, DLS_ERR_NOMEM, DLS_ERR_SODIUM. */
int dls_replay_new(dls_replay **out);
void dls_replay_del(dls_replay *r);

/* Would a renewal of `lease` with `seq` count? DLS_REPLAY_COUNTED or
 * DLS_REPLAY_REPLAY; records nothing. seq 0 (outside 1 … 2^63−1) is a
 * replay. */
int dls_replay_renewal_check(const dls_replay *r, uint64_t lease, uint64_t seq);

/* As _check, and records seq as the lease's last counted when it counts.
 * Returns DLS_REPLAY_COUNTED, DLS_REPLAY_REPLAY or DLS_ERR_NOMEM (nothing
 * recorded). */
int dls_replay_renewal_count(dls_replay *r, uint64_t lease, uint64_t seq);

/* The last counted renewal seq of a lease (0 when none). */
uint64_t dls_replay_renewal_last(const dls_replay *r, uint64_t lease);

/* Forgets a lease (once it has left the ledger). */
void dls_replay_lease_forget(dls_replay *r, uint64_t lease);

/* The same for proposals, per (author, medium). DLS_ERR_INVAL for an
 * author outside 1–64 bytes. */
int dls_replay_proposal_check(const dls_replay *r, const uint8_t *author, size_t author_len,
                              const uint8_t medium_id[DLS_MEDIUM_ID_LEN], uint64_t seq);
int dls_replay_proposal_count(dls_replay *r, const uint8_t *author, size_t author_len,
                              const uint8_t medium_id[DLS_MEDIUM_ID_LEN], uint64_t seq);
uint64_t dls_replay_proposal_last(const dls_replay *r, const uint8_t *author,
                                  size_t author_len,
                                  const uint8_t medium_id[DLS_MEDIUM_ID_LEN]);

/* How many leases and (author, medium) pairs are remembered. */
size_t dls_replay_leases(const dls_replay *r);
size_t dls_replay_authors(const dls_replay *r);

#endif
