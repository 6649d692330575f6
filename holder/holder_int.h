/* daolease — holder internals shared by the holder sources and tests/test_holder.c
 * (not installed). The pure parts of the holder: the bound and the sizing
 * relations, testable without media. */
#ifndef DLS_HOLDER_INT_H
#define DLS_HOLDER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/holder.h"

/* The bound of holder.md: the earlier of
 *   (a) duration after the later of `observed` and (when `renewed`)
 *       `last_renewal` — the reading taken before the last ok append —, and
 *   (b) max after `observed` (when has_max).
 * Saturates at UINT64_MAX. may_act holds while now < bound. */
uint64_t dls_holder_bound_of(uint64_t observed, bool renewed, uint64_t last_renewal,
                             uint64_t duration_ns, bool has_max, uint64_t max_ns);

/* The reading at which the next renewal is due: interval after the later of
 * `observed` and (when `renewed`) `last_renewal`, saturating. */
uint64_t dls_holder_due_of(uint64_t observed, bool renewed, uint64_t last_renewal,
                           uint64_t interval_ns);

/* Writes `ns` as "<n> <unit>" in the coarsest v1 unit in which it is exact
 * ("3 s", "1600 ms", "0 ns") into buf[cap] (always NUL-terminated). */
void dls_holder_fmt_ns(char *buf, size_t cap, uint64_t ns);

#endif
