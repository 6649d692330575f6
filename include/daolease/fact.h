/* daolease — the lease vocabulary (spec: vocabulary.md).
 *
 * A fact is one msgpack map with str keys. dls_fact_decode() walks untrusted
 * bytes with a bounds-checking walker, checks validity rules 1–5 and fills a
 * dls_fact whose byte slices borrow from the input buffer: they stay valid
 * as long as the caller keeps that buffer unchanged. Rules 6 and 7 need
 * memory of earlier facts: dls_rule6 and dls_rule7 are small reusable
 * checkers. dls_fact_encode() writes msgpack's shortest form, keys in the
 * order of vocabulary.md's tables, through msgpack-c.
 */
#ifndef DAOLEASE_FACT_H
#define DAOLEASE_FACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/error.h"
#include "daolease/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DLS_FACT_MAX 4096         /* bytes, a lease fact encoded */
#define DLS_FACT_MAX_DEPTH 8      /* levels, the fact map being level 1 */
#define DLS_SUBJECT_MAX 1024      /* bytes, the subject encoded */
#define DLS_ID_MAX 64             /* bytes, proposal ids, holder and author names */
#define DLS_REASON_MAX 256        /* bytes, a refusal's reason */
#define DLS_MEDIUM_ID_LEN 16
#define DLS_NS_MAX 0x7fffffffffffffffull /* 2^63 − 1 */

/* ---- durations ---------------------------------------------------------- */

typedef enum dls_unit {
    DLS_UNIT_NS, DLS_UNIT_US, DLS_UNIT_MS, DLS_UNIT_S, DLS_UNIT_MIN, DLS_UNIT_H
} dls_unit;

/* A duration as written (unit and magnitude) and its exact value in ns
 * (always <= DLS_NS_MAX for a valid duration). */
typedef struct dls_duration {
    uint64_t ns;
    uint64_t magnitude;
    dls_unit unit;
} dls_duration;

/* Makes a duration from a unit and magnitude. Returns 0, or DLS_ERR_RULE4
 * when the value exceeds 2^63−1 ns, DLS_ERR_INVAL for an unknown unit. */
DLS_EXPORT int dls_duration_make(dls_duration *d, dls_unit unit, uint64_t magnitude);

/* The coarsest v1 unit in which `ns` is exact (judge.md, Determinism). */
DLS_EXPORT dls_duration dls_duration_from_ns(uint64_t ns);

/* The unit's name ("ns" … "h"), or NULL. */
DLS_EXPORT const char *dls_unit_name(dls_unit u);

/* Overflow-safe interval helpers; all values in ns.
 * dls_passed(base, now, d): has more than d elapsed since base at now?
 * Strict: an interval exactly equal to d has not passed. A `now` before
 * `base` has passed nothing. */
DLS_EXPORT bool dls_passed(uint64_t base, uint64_t now, uint64_t d);
/* a + b, saturating at UINT64_MAX. */
DLS_EXPORT uint64_t dls_add_sat(uint64_t a, uint64_t b);
/* a − b, or 0 when b >= a. */
DLS_EXPORT uint64_t dls_sub_floor(uint64_t a, uint64_t b);

/* ---- facts -------------------------------------------------------------- */

typedef enum dls_fact_kind {
    DLS_FACT_NONE = 0,   /* a map with neither dispatch key: not a lease fact */
    DLS_FACT_PROPOSAL,   /* status "proposed" */
    DLS_FACT_GRANT,      /* status "accepted" */
    DLS_FACT_REFUSAL,    /* status "rejected" */
    DLS_FACT_RELEASE,    /* status "released" */
    DLS_FACT_RECLAIM,    /* status "lapsed" */
    DLS_FACT_RENEWAL,    /* event "renewal" */
    DLS_FACT_TICK        /* event "tick" */
} dls_fact_kind;

typedef enum dls_cause {
    DLS_CAUSE_NONE = 0,
    DLS_CAUSE_RELEASE, DLS_CAUSE_CAP, DLS_CAUSE_POLICY, DLS_CAUSE_SILENCE
} dls_cause;

typedef enum dls_mode { DLS_MODE_EXCLUSIVE = 0, DLS_MODE_SHARED } dls_mode;

/* Which keys a decoded fact carried (bit set) — also which to write. */
enum dls_fact_key {
    DLS_K_LEASE = 1u << 0,
    DLS_K_PROPOSAL = 1u << 1,
    DLS_K_SUBJECT = 1u << 2,
    DLS_K_HOLDER = 1u << 3,
    DLS_K_MEDIUM = 1u << 4,
    DLS_K_DURATION = 1u << 5,
    DLS_K_MAX = 1u << 6,
    DLS_K_READING = 1u << 7,
    DLS_K_CAUSE = 1u << 8,
    DLS_K_SEQ = 1u << 9,
    DLS_K_MODE = 1u << 10,
    DLS_K_COMMIT = 1u << 11,
    DLS_K_REASON = 1u << 12
};

/* A byte slice. In a decoded fact it borrows from the decoded buffer. */
typedef struct dls_bytes {
    const uint8_t *p;
    size_t n;
} dls_bytes;

/* A decoded (or to-be-encoded) lease fact.
 * `proposal` and `subject` are the value's whole encoding as received
 * (header included): identities compare by these bytes, and the judge copies
 * them byte for byte. `holder` and `reason` are the str payload. */
typedef struct dls_fact {
    dls_fact_kind kind;
    uint32_t keys;            /* dls_fact_key bits present */
    uint64_t lease;
    uint64_t seq;
    dls_bytes proposal;       /* encoded value: str or bin, 1–64 payload bytes */
    dls_bytes subject;        /* encoded value, <= 1024 bytes */
    dls_bytes holder;         /* str payload */
    uint8_t medium[DLS_MEDIUM_ID_LEN];
    dls_duration duration, max, reading;
    dls_cause cause;
    dls_mode mode;
    bool commit;
    dls_bytes reason;         /* str payload */
} dls_fact;

/* Decodes and validates (rules 1–5) one fact of n bytes.
 * Returns 0 for a valid fact (f->kind DLS_FACT_NONE for a map that is not a
 * lease fact), or DLS_ERR_RULE1 … DLS_ERR_RULE5 with `w` (optional) naming
 * the byte offset and reason. A fact breaking several rules is reported
 * under the lowest-numbered one. Never allocates. */
DLS_EXPORT int dls_fact_decode(const uint8_t *p, size_t n, dls_fact *f, dls_where *w);

/* Encodes f in msgpack's shortest form, keys in the spec's table order,
 * writing only keys whose bit is set in f->keys (the dispatch key always).
 * Returns 0 and sets *len, DLS_ERR_TOOBIG when it does not fit in cap,
 * DLS_ERR_INVAL when f is not a valid fact of its kind. */
DLS_EXPORT int dls_fact_encode(const dls_fact *f, uint8_t *out, size_t cap, size_t *len);

DLS_EXPORT const char *dls_fact_kind_name(dls_fact_kind k);
DLS_EXPORT const char *dls_cause_name(dls_cause c);

/* ---- rule 6 and rule 7: stateful checkers -------------------------------- */

/* Rule 6 checker: remembers, among facts attributed to the party entitled to
 * author them, which proposals were answered (by holder and proposal bytes)
 * and which leases were accepted, released or lapsed. Memory grows with the
 * number of distinct leases and proposals fed. */
typedef struct dls_rule6 dls_rule6;
DLS_EXPORT int dls_rule6_new(dls_rule6 **out);
DLS_EXPORT void dls_rule6_del(dls_rule6 *r);
/* Checks f against what was observed and, when valid, records it.
 * Returns 0 or DLS_ERR_RULE6 (nothing recorded), DLS_ERR_NOMEM. */
DLS_EXPORT int dls_rule6_observe(dls_rule6 *r, const dls_fact *f);

/* Rule 7 checker for one tick stream: the newest reading observed. */
typedef struct dls_rule7 {
    bool seen;
    uint64_t newest_ns;
} dls_rule7;
/* Returns 0 (and records the reading) or DLS_ERR_RULE7. */
DLS_EXPORT int dls_rule7_observe(dls_rule7 *r, const dls_fact *tick);

#ifdef __cplusplus
}
#endif
#endif
