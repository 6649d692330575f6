/* daolease — pass marks on the journal (spec: judge.md, "Journal" and
 * "Determinism").
 *
 * A pass mark records what one pass of the judge saw, so that anyone can
 * replay it:
 *
 *   {"dao.judge/pass": n, "dao.judge/now": {...}, "dao.judge/basis": "...",
 *    "dao.judge/tolerance": {...}, "dao.judge/cadence": {...},
 *    "dao.judge/drained": [[medium_id, position], ...],
 *    "dao.judge/gaps": [[medium_id, from, to], ...],     optional
 *    "dao.judge/due": [[lease, cause], ...],              optional
 *    "dao.judge/errors": [[medium_id, position], ...],    optional
 *    "dao.judge/late": true, "dao.judge/restarted": true, optional
 *    "dao.judge/kept": true,                              optional (rev 4)
 *    "dao.judge/floor": F,                                optional (rev 4)
 *    "dao.judge/from": [[medium_id, position], ...],      with floor (rev 4)
 *    "dao.judge/takeover": true}                          optional (rev 5)
 *
 * written with keys in exactly this order, durations in the coarsest exact
 * unit, medium ids as bin 16, optional keys omitted when empty or false,
 * shortest form. Lists that do not fit one record continue in records
 * {"dao.judge/pass": n, "dao.judge/continued": true, <lists>} filled
 * greedily, entries in the order drained, gaps, due, errors (each record a
 * contiguous run of that sequence, as many entries as fit); late,
 * restarted, kept, floor and from ride on the first record (from is never
 * split: it is counted among the first record's fixed keys).
 *
 * Revision 4 (judge.md, Restart): `kept` says the restart kept every
 * recovered lease's last relevant observation (a restarted mark without it
 * re-armed them: revision 3); `floor` and `from` open a journal that
 * follows a lost one: the largest lease id the lost journal minted (the
 * first new id is floor + 1) and the position each lease-fact medium is
 * read from. Revision 5 (judge.md, Standby judges): `takeover` says that
 * start was a standby judge's takeover (only with restarted, after kept,
 * floor and from). dls_mark_encode_next() writes the
 * records one by one into a caller's buffer; dls_mark_decode() checks one
 * record and hands out its lists through allocation-free iterators.
 */
#ifndef DAOLEASE_MARK_H
#define DAOLEASE_MARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/error.h"
#include "daolease/export.h"
#include "daolease/fact.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The journal's record limit (judge.md, Journal), in bytes. */
#define DLS_JOURNAL_RECORD_MAX 65536

/* A drained or errors entry: a medium and a position. */
typedef struct dls_mark_pos {
    uint8_t medium[DLS_MEDIUM_ID_LEN];
    uint64_t position;
} dls_mark_pos;

/* A gaps entry: a cursor jump on a medium, from → to. */
typedef struct dls_mark_gap {
    uint8_t medium[DLS_MEDIUM_ID_LEN];
    uint64_t from, to;
} dls_mark_gap;

/* A due entry: a lease newly due and its cause. */
typedef struct dls_mark_due {
    uint64_t lease;
    dls_cause cause;
} dls_mark_due;

/* A pass mark to write. The arrays and `basis` are borrowed for the calls
 * of dls_mark_encode_next. Durations are in ns, written in the coarsest v1
 * unit that is exact (dls_duration_from_ns). */
typedef struct dls_mark {
    uint64_t pass;            /* >= 1 */
    uint64_t now_ns;          /* <= DLS_NS_MAX, as all three durations */
    dls_bytes basis;          /* the reading basis, str payload */
    uint64_t tolerance_ns;
    uint64_t cadence_ns;
    const dls_mark_pos *drained;
    size_t n_drained;         /* every lease-fact medium, assembly order */
    const dls_mark_gap *gaps;
    size_t n_gaps;
    const dls_mark_due *due;  /* ascending lease id */
    size_t n_due;
    const dls_mark_pos *errors;
    size_t n_errors;
    bool late;                /* cadence overrun */
    bool restarted;           /* first pass after a start */
    /* revision 4, first record only, each requires restarted: */
    bool kept;                /* the restart kept recovered observations */
    bool has_floor;           /* a journal that follows a lost one: */
    uint64_t floor;           /*   the lease-id floor (<= 2^63-1) */
    const dls_mark_pos *from; /*   each medium's starting position */
    size_t n_from;
    /* revision 5 (judge.md, Standby judges), first record only, requires
     * restarted; written after kept, floor and from: */
    bool takeover;            /* that start was a standby's takeover */
} dls_mark;

/* Where dls_mark_encode_next is in a mark's records. Zero-initialise it
 * ({0}) before the first call for a mark. */
typedef struct dls_mark_writer {
    size_t next[4];           /* next entry of drained, gaps, due, errors */
    unsigned records;         /* records written so far */
} dls_mark_writer;

/* Writes the next record of mark m into out[0..limit): the first record,
 * then continuation records while entries remain.
 *
 * `limit` is the largest record allowed (tests use small ones; a judge
 * passes dls_mark_limit() so that the signed envelope fits the journal's
 * 65,536 bytes). Returns 1 with *len set when a record was written, 0 when
 * the mark is complete (nothing written), DLS_ERR_TOOBIG when the first
 * record's fixed keys, or a continuation holding a single entry, do not fit
 * in limit; DLS_ERR_INVAL for NULL arguments, pass 0, a duration above
 * 2^63−1 ns, a NULL list with a non-zero count, a due cause
 * DLS_CAUSE_NONE or lease 0, `from` entries without has_floor, a floor
 * above 2^63−1, takeover without restarted. Never allocates. */
DLS_EXPORT int dls_mark_encode_next(const dls_mark *m, dls_mark_writer *wr, uint8_t *out,
                                    size_t limit, size_t *len);

/* The largest mark encoding whose journal record — an envelope of
 * attribution.md signed with Ed25519 by an author of author_len bytes
 * (keys author, fact, sig, shortest form) — fits DLS_JOURNAL_RECORD_MAX.
 * 0 when author_len is outside 1 … 64. */
DLS_EXPORT size_t dls_mark_limit(size_t author_len);

/* One list of a decoded mark: a cursor over its entries, already checked.
 * Copy it out of the view and call the dls_mark_next_* function of its
 * shape until it answers false. `left` is the number of entries left. */
typedef struct dls_mark_list {
    const uint8_t *p;
    size_t n, off;
    uint32_t left;
} dls_mark_list;

/* A decoded mark record. Slices and lists borrow from the decoded bytes. */
typedef struct dls_mark_view {
    uint64_t pass;
    bool continued;           /* a continuation record */
    /* The first record only (zero on a continuation): */
    dls_duration now, tolerance, cadence; /* as written */
    dls_bytes basis;          /* str payload */
    bool late, restarted;
    /* Lists: empty (left 0) when absent. */
    dls_mark_list drained, gaps, due, errors;
    /* Revision 4 (first record only; zero when absent): */
    bool kept;
    bool has_floor;
    uint64_t floor;
    dls_mark_list from;       /* entries of the drained shape (dls_mark_next_pos) */
    /* Revision 5 (first record only, with restarted; false when absent): */
    bool takeover;            /* the start was a standby judge's takeover */
} dls_mark_view;

/* Decodes and checks one mark record (the bytes inside the envelope's
 * dao.env/fact) with the bounds-checking walker: one map of at most
 * DLS_JOURNAL_RECORD_MAX bytes, nesting at most 8 levels, str keys;
 * "dao.judge/pass" a uint >= 1; either a first record (now, basis,
 * tolerance, cadence, drained present; now, tolerance and cadence duration
 * maps >= 0) or a continuation ("continued": true, and none of now, basis,
 * tolerance, cadence, late, restarted, kept, floor, from, takeover); every list entry of its shape
 * (medium ids bin 16, positions uint, lease 1 … 2^63−1, cause one of the
 * four); late / restarted / kept / takeover bool; floor a uint <= 2^63−1,
 * present exactly when from is; kept, floor and takeover only with
 * restarted; no
 * "dao.judge/" key twice. Keys outside
 * "dao.judge/" are ignored.
 *
 * Returns 0, or DLS_ERR_MARK with `w` (optional) naming the byte offset and
 * reason; DLS_ERR_INVAL for NULL v. Never allocates. */
DLS_EXPORT int dls_mark_decode(const uint8_t *p, size_t n, dls_mark_view *v, dls_where *w);

/* Next entry of a drained or errors list / a gaps list / a due list.
 * Answers false at the end (or for a list of another shape). */
DLS_EXPORT bool dls_mark_next_pos(dls_mark_list *l, dls_mark_pos *e);
DLS_EXPORT bool dls_mark_next_gap(dls_mark_list *l, dls_mark_gap *e);
DLS_EXPORT bool dls_mark_next_due(dls_mark_list *l, dls_mark_due *e);

/* What a journal record's fact is. */
typedef enum dls_mark_record {
    DLS_MARK_REC_OTHER = 0, /* not a map, malformed, neither, or both */
    DLS_MARK_REC_MARK,      /* a map with "dao.judge/pass" and no lease dispatch key */
    DLS_MARK_REC_LEASE      /* a map with a lease dispatch key and no "dao.judge/pass" */
} dls_mark_record;

/* Classifies the fact bytes of a journal record by its top-level keys only
 * (bounded walk; the full check is dls_mark_decode or dls_fact_decode). */
DLS_EXPORT dls_mark_record dls_mark_classify(const uint8_t *p, size_t n);

#ifdef __cplusplus
}
#endif
#endif
