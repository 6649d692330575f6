/* The audit's view of one pass mark, its continuation records merged in
 * (judge.md, "Journal"). Decoding goes through the codec's mark decoder
 * (daolease/mark.h); this unit only copies what the replay needs into
 * owned arrays. Internal to the audit. */
#ifndef DLS_AUDIT_AMARK_H
#define DLS_AUDIT_AMARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/error.h"
#include "daolease/fact.h"

typedef struct dls_amark_pos {
    uint8_t medium[DLS_MEDIUM_ID_LEN];
    uint64_t position;
} dls_amark_pos;

typedef struct dls_amark_gap {
    uint8_t medium[DLS_MEDIUM_ID_LEN];
    uint64_t from, to;
} dls_amark_gap;

typedef struct dls_amark_due {
    uint64_t lease;
    dls_cause cause;
} dls_amark_due;

typedef struct dls_amark {
    uint64_t pass;
    bool continued;             /* this record is a continuation */
    uint64_t now_ns, tolerance_ns, cadence_ns;
    uint8_t *basis;             /* owned copy (NUL-terminated for messages) */
    size_t basis_len;
    bool late, restarted;
    bool takeover;              /* revision 5: "dao.judge/takeover" (with
                                   restarted): a standby judge's takeover */
    /* judge.md Restart, revision 4 (first record only): */
    bool kept;                  /* "dao.judge/kept": recovered leases keep
                                   their last relevant observation */
    bool has_floor;
    uint64_t floor;             /* "dao.judge/floor": highest id minted before */
    dls_amark_pos *from;   size_t n_from, cap_from; /* "dao.judge/from" */
    dls_amark_pos *drained; size_t n_drained, cap_drained;
    dls_amark_gap *gaps;    size_t n_gaps, cap_gaps;
    dls_amark_due *due;     size_t n_due, cap_due;
    dls_amark_pos *errors;  size_t n_errors, cap_errors;
} dls_amark;

/* What a journal fact is: 0 other, 1 a pass mark, 2 a lease fact. */
enum { DLS_AMARK_OTHER = 0, DLS_AMARK_MARK = 1, DLS_AMARK_LEASE = 2 };
int dls_amark_kind(const uint8_t *p, size_t n);

/* Decodes one mark record (first or continuation) into m, which must be
 * zeroed or freed. The revision-4 keys kept (bool), floor (uint) and from
 * ([[bin 16, uint], …]), which the codec's decoder passes over, are read
 * here: of a wrong type, or on a continuation, they make the mark
 * malformed (DLS_ERR_MARK). Returns 0, the decoder's error with w filled, or
 * DLS_ERR_NOMEM. */
int dls_amark_parse(dls_amark *m, const uint8_t *p, size_t n, dls_where *w);

/* Appends the lists of continuation c to m. 0 or DLS_ERR_NOMEM. */
int dls_amark_merge(dls_amark *m, const dls_amark *c);

/* Frees the arrays and zeroes m. */
void dls_amark_free(dls_amark *m);

#endif
