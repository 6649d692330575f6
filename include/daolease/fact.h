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

/* The time-unit constants: readings and durations are unsigned 64-bit
 * nanoseconds everywhere (STYLE.md 4); spell conversions with these. */
#define DLS_NS_PER_US UINT64_C(1000)
#define DLS_NS_PER_MS UINT64_C(1000000)
#define DLS_NS_PER_S UINT64_C(1000000000)

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

/* Makes a duration from a unit and magnitude (any magnitude, 0 included:
 * readings and tolerances may be zero). Returns 0, DLS_ERR_INVAL for an
 * unknown unit or a NULL d, or DLS_ERR_RULE4 when the value exceeds
 * 2^63−1 ns (d is then left unchanged). */
DLS_EXPORT int dls_duration_make(dls_duration *d, dls_unit unit, uint64_t magnitude);

/* The duration of `ns` nanoseconds in the coarsest v1 unit in which it is
 * exact (judge.md, Determinism): 3 600 000 000 000 → {"h": 1},
 * 1 500 000 000 → {"ms": 1500}. Zero is exact in every unit and comes out
 * as {"h": 0}. Exact for every uint64 value (a value above DLS_NS_MAX comes
 * out in ns and is not valid in a fact). */
DLS_EXPORT dls_duration dls_duration_from_ns(uint64_t ns);

/* The unit's name ("ns", "us", "ms", "s", "min", "h"), or NULL. */
DLS_EXPORT const char *dls_unit_name(dls_unit u);

/* Nanoseconds in one `u` (1 … 3.6·10^12), or 0 for an unknown unit. */
DLS_EXPORT uint64_t dls_unit_ns(dls_unit u);

/* Looks up a unit by its name's bytes (name[0..n), no NUL needed; exact and
 * case-sensitive). Returns 0 or DLS_ERR_INVAL. */
DLS_EXPORT int dls_unit_parse(const char *name, size_t n, dls_unit *u);

/* Parses "<decimal magnitude><unit>", e.g. "3000ms", "3s", "10min", "0ns"
 * (no sign, spaces or fraction). Returns 0, DLS_ERR_INVAL for a malformed
 * text or unknown unit, DLS_ERR_RULE4 when above 2^63−1 ns. */
DLS_EXPORT int dls_duration_parse(const char *text, dls_duration *d);

/* Writes "<magnitude><unit>" (the form dls_duration_parse reads) with a
 * NUL. Returns the length written, or DLS_ERR_TOOBIG when cap is too small
 * (24 bytes always suffice), DLS_ERR_INVAL for an unknown unit. */
DLS_EXPORT int dls_duration_format(const dls_duration *d, char *buf, size_t cap);

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
#define DLS_K_ALL 0x1fffu /* every vocabulary key bit */

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
 *
 * Rule 1 is checked first by a bounded walk of the whole input (not a map,
 * trailing bytes, more than 4096 bytes, a repeated top-level key — keys
 * compared by their str payload bytes —, a non-str top-level key, nesting
 * deeper than 8 levels); then dispatch (rule 2); then every key of
 * vocabulary.md present at the top level is type- and range-checked
 * whatever the kind (rule 3; rule 4 for duration, max and reading), the
 * kind's required keys must be present (rule 3) and a proposal must not
 * carry lease (rule 5). A map with neither dispatch key is not a lease fact:
 * 0 is returned with f->kind DLS_FACT_NONE and its keys are not checked.
 *
 * Returns 0 for a valid fact, or the lowest-numbered rule broken:
 * DLS_ERR_RULE1 … DLS_ERR_RULE5; with `w` (optional) naming the byte offset
 * where the problem was found (for a missing key: 0, the map), a static
 * reason and `rule` (1 … 5). DLS_ERR_INVAL for a NULL f.
 *
 * f is filled as far as decoding went; on an error of rule 3 or later
 * f->kind is the dispatched kind (useful to count defective facts by kind),
 * otherwise DLS_FACT_NONE. Byte slices borrow from p. Never allocates;
 * work is linear in n (n log n for the repeated-key check). */
DLS_EXPORT int dls_fact_decode(const uint8_t *p, size_t n, dls_fact *f, dls_where *w);

/* Encodes f in msgpack's shortest form: the dispatch key first, then the
 * keys of its kind's row in vocabulary.md's table order (required, then
 * optional as listed), writing only keys whose bit is set in f->keys; any
 * other vocabulary key whose bit is set follows in the order of the Keys
 * table (so that every decoded valid fact re-encodes). `proposal` and
 * `subject` are copied byte for byte (each must hold exactly one msgpack
 * value). Unknown keys of a decoded fact are not kept.
 *
 * Returns 0 and sets *len; DLS_ERR_TOOBIG when the encoding does not fit in
 * cap (DLS_FACT_MAX always suffices); DLS_ERR_INVAL when f is not a valid
 * fact of its kind (the output is checked by dls_fact_decode), or an
 * argument is NULL. Never allocates. */
DLS_EXPORT int dls_fact_encode(const dls_fact *f, uint8_t *out, size_t cap, size_t *len);

/* "proposal", "grant", "refusal", "release", "reclaim", "renewal", "tick";
 * NULL for DLS_FACT_NONE and unknown values. */
DLS_EXPORT const char *dls_fact_kind_name(dls_fact_kind k);
/* "release", "cap", "policy", "silence"; NULL for DLS_CAUSE_NONE. */
DLS_EXPORT const char *dls_cause_name(dls_cause c);
/* "exclusive" or "shared"; NULL for an unknown value. */
DLS_EXPORT const char *dls_mode_name(dls_mode m);

/* Byte equality of two slices (how identities and subjects compare). */
DLS_EXPORT bool dls_bytes_eq(dls_bytes a, dls_bytes b);

/* ---- building facts ------------------------------------------------------ */

/* Writes the msgpack encoding of a str (dls_value_str) or bin (dls_value_bin)
 * of n bytes, shortest header, into out: the form `proposal` and `subject`
 * take (a 16-byte random proposal id: dls_value_bin(out, 18, id, 16, &len)).
 * Returns 0 and sets *len, DLS_ERR_TOOBIG when cap is too small,
 * DLS_ERR_INVAL for NULL arguments or n >= 2^32. */
DLS_EXPORT int dls_value_str(uint8_t *out, size_t cap, const void *p, size_t n, size_t *len);
DLS_EXPORT int dls_value_bin(uint8_t *out, size_t cap, const void *p, size_t n, size_t *len);

/* Builders: each zeroes f and fills the kind, the required keys and their
 * bits. Slices are borrowed (keep them alive until encoded). Optional keys
 * are set by assigning the field and or-ing its bit, e.g. on a grant:
 *     f.proposal = prop; f.keys |= DLS_K_PROPOSAL;
 *     f.max = cap;       f.keys |= DLS_K_MAX;
 *     f.mode = DLS_MODE_SHARED; f.keys |= DLS_K_MODE;
 * `proposal` and `subject` are encoded values (see dls_value_str), `holder`
 * is the name's bytes. Nothing is checked until dls_fact_encode. */
DLS_EXPORT void dls_fact_init(dls_fact *f, dls_fact_kind kind);
DLS_EXPORT void dls_fact_proposal(dls_fact *f, dls_bytes proposal, dls_bytes subject,
                                  uint64_t seq);
DLS_EXPORT void dls_fact_grant(dls_fact *f, uint64_t lease, dls_bytes subject, dls_bytes holder,
                               dls_duration duration,
                               const uint8_t medium[DLS_MEDIUM_ID_LEN]);
/* reason.p == NULL: no reason key (an empty reason is reason.p != NULL, n 0). */
DLS_EXPORT void dls_fact_refusal(dls_fact *f, dls_bytes proposal, dls_bytes holder,
                                 dls_bytes reason);
/* The commit key is written only when commit is true. */
DLS_EXPORT void dls_fact_release(dls_fact *f, uint64_t lease, bool commit);
DLS_EXPORT void dls_fact_reclaim(dls_fact *f, uint64_t lease, dls_cause cause);
DLS_EXPORT void dls_fact_renewal(dls_fact *f, uint64_t lease, uint64_t seq);
DLS_EXPORT void dls_fact_tick(dls_fact *f, dls_duration reading);

/* ---- rule 6 and rule 7: stateful checkers -------------------------------- */

/* Rule 6 checker: remembers, among facts attributed to the party entitled to
 * author them (the caller feeds only those: grants, refusals and lapsed
 * records from the grantor, releases from the lease's holder), which
 * proposals were accepted or rejected (keyed by holder and the proposal's
 * encoded bytes) and which leases were accepted, released or lapsed. The
 * first fact observed stands; later ones are defective:
 *   - a grant for a lease already accepted, or answering a proposal already
 *     rejected;
 *   - a refusal of a proposal already accepted;
 *   - a release (lapsed record) of a lease already released (lapsed).
 * (A second refusal of one proposal is not a contradiction.) Hash tables use
 * libsodium's keyed crypto_shorthash with a random key (the keys are
 * attacker-chosen bytes). Memory grows with the distinct leases and
 * answered proposals observed: at most 64 bytes a lease and 600 bytes an
 * answered proposal (tables at most half full, doubled when needed). */
typedef struct dls_rule6 dls_rule6;
/* Creates a checker (calls sodium_init). Returns 0, DLS_ERR_INVAL for a NULL
 * out, DLS_ERR_NOMEM, DLS_ERR_SODIUM. */
DLS_EXPORT int dls_rule6_new(dls_rule6 **out);
/* Frees r (NULL is fine). */
DLS_EXPORT void dls_rule6_del(dls_rule6 *r);
/* Checks a valid fact f (from dls_fact_decode) against what was observed
 * and, unless defective, records it. Kinds other than grant, refusal,
 * release and reclaim are always 0. Returns 0, DLS_ERR_RULE6 (nothing
 * recorded), DLS_ERR_NOMEM (nothing recorded), DLS_ERR_INVAL (NULL, lease
 * 0, or a refusal without holder and proposal). */
DLS_EXPORT int dls_rule6_observe(dls_rule6 *r, const dls_fact *f);

/* Rule 7 checker for one tick stream: the newest reading observed.
 * Zero-initialise it ({0}) for a new stream. */
typedef struct dls_rule7 {
    bool seen;
    uint64_t newest_ns;
} dls_rule7;
/* Returns 0 (and records the reading; equal readings are valid) or
 * DLS_ERR_RULE7 for a reading older than the newest observed;
 * DLS_ERR_INVAL when `tick` is not a tick fact. */
DLS_EXPORT int dls_rule7_observe(dls_rule7 *r, const dls_fact *tick);

#ifdef __cplusplus
}
#endif
#endif
