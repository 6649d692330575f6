/* daolease — audit replay (spec: judge.md "Audit replay"; cli.md `audit`).
 *
 * An audit re-executes the judge's classification from the journal and the
 * lease-fact media alone, and reports for every lease its timeline and one
 * verdict. It shares the codec with the judge (facts, pass marks, envelopes,
 * media) but none of the judge's ledger code: two implementations of the
 * rules check each other.
 *
 * How the replay reads its inputs:
 *   - every journal record must verify under the grantor's Ed25519 key over
 *     the journal's medium id; pass marks (with their continuation records)
 *     divide the journal into passes; every grant, refusal and lapsed
 *     belongs to the pass mark before it;
 *   - every record on a lease-fact medium is stamped with the `now` of the
 *     first mark whose `drained` position for that medium covers it, and is
 *     applied in that pass, media in the mark's `drained` order;
 *   - at each mark the audit classifies the live leases granted before it
 *     that can be due (a deadline heap, the leases released in the pass and
 *     those the `due` list names: O(facts + due) a mark, never a walk of
 *     every live lease) — release, cap, policy (only from a `due` entry with
 *     cause policy), silence with the unknown-evidence rule after gaps,
 *     restarts (revision 4: only where the journal cannot vouch for the
 *     evidence when the mark carries kept) and basis changes — compares its
 *     newly due leases with the mark's `due` list and keeps its own
 *     classification afterwards;
 *   - each fact of a verified batch envelope counts as if alone at
 *     (position, index);
 *   - tolerance and cadence are read from each mark.
 *
 * Usage:
 *     dls_audit *a;
 *     dls_audit_medium media[2] = {{east, NULL}, {west, NULL}};
 *     int rc = dls_audit_run(&a, NULL, journal, "arbiter", keyring, media, 2, &w);
 *     for (size_t i = 0; i < dls_audit_lease_count(a); i++) {
 *         const dls_audit_lease *l = dls_audit_lease_at(a, i);  ...
 *     }
 *     int status = dls_audit_exit_status(a);   0 clean, 1 failure, 3 incomplete
 *     dls_audit_del(a);
 *
 * The audit reads no clock: every reading comes from the journal's marks.
 */
#ifndef DAOLEASE_AUDIT_H
#define DAOLEASE_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/attrib.h"
#include "daolease/error.h"
#include "daolease/export.h"
#include "daolease/fact.h"
#include "daolease/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A lease's single verdict: the first that applies in the order double
 * grant, unjustified lapse, due mismatch, unverifiable, live, ok. */
typedef enum dls_audit_verdict {
    DLS_AUDIT_OK = 0,
    DLS_AUDIT_LIVE,
    DLS_AUDIT_UNVERIFIABLE,
    DLS_AUDIT_DUE_MISMATCH,
    DLS_AUDIT_UNJUSTIFIED_LAPSE,
    DLS_AUDIT_DOUBLE_GRANT
} dls_audit_verdict;

/* "ok", "live", "unverifiable", "due_mismatch", "unjustified_lapse",
 * "double_grant" (cli.md's words); NULL for an unknown value. */
DLS_EXPORT const char *dls_audit_verdict_name(dls_audit_verdict v);

/* Findings on one lease (bits of dls_audit_lease.findings). */
enum dls_audit_finding {
    DLS_AUDIT_F_DOUBLE_GRANT = 1u << 0,      /* failure */
    DLS_AUDIT_F_UNJUSTIFIED_LAPSE = 1u << 1, /* failure */
    DLS_AUDIT_F_DUE_MISMATCH = 1u << 2,      /* failure */
    DLS_AUDIT_F_UNVERIFIABLE = 1u << 3,      /* report */
    DLS_AUDIT_F_LATE_RECLAIM = 1u << 4,      /* report: due at i, lapsed at j > i */
    DLS_AUDIT_F_UNKNOWN = 1u << 5,           /* its evidence was unknown at some pass */
    DLS_AUDIT_F_REBASED = 1u << 6,           /* a basis change rebased it */
    DLS_AUDIT_F_MISSING_MEDIUM = 1u << 7,    /* its registered medium was not given */
    DLS_AUDIT_F_FROM_CHECKPOINT = 1u << 8    /* live at the checkpoint the audit started
                                                from: granted in the history not audited
                                                (its `granted.pass` is 0, its reading the
                                                tenure start the checkpoint records) */
};

/* One moment of a timeline: a pass and its now. pass == 0: did not happen
 * (pass numbers start at 1). `basis` indexes dls_audit_summary.bases. */
typedef struct dls_audit_point {
    uint64_t pass;
    uint64_t reading; /* ns, on the basis */
    uint32_t basis;
} dls_audit_point;

/* One lease as the audit saw it. Every slice and array is owned by the
 * dls_audit and lives until dls_audit_del. */
typedef struct dls_audit_lease {
    uint64_t lease;
    dls_bytes subject;          /* the subject's encoding, as granted */
    dls_bytes holder;           /* the holder's name */
    uint8_t medium[DLS_MEDIUM_ID_LEN]; /* the registered medium */
    dls_mode mode;
    uint64_t duration_ns;
    uint64_t max_ns;            /* 0: no max */
    dls_audit_point granted;
    dls_audit_point due;        /* the audit's own due pass (pass 0: never due) */
    dls_cause due_cause;        /* the audit's cause at `due` */
    uint64_t judge_due_pass;    /* the first mark whose `due` listed it (0: none) */
    dls_cause judge_due_cause;
    dls_audit_point lapsed;     /* the pass its `lapsed` record belongs to */
    dls_cause lapsed_cause;
    dls_cause cause;            /* lapsed cause, else due cause, else NONE */
    uint64_t renewals;          /* counted renewals */
    const dls_audit_point *renewal_points; /* `renewals` points (or NULL when
                                              not kept, see settings) */
    uint64_t late_renewals;     /* counted more than duration/2 after the
                                   previous observation */
    bool released;              /* a valid release by its holder was observed */
    bool commit;
    uint32_t due_mismatches;    /* (pass, lease) disagreements on this lease */
    uint32_t findings;          /* dls_audit_finding bits */
    dls_audit_verdict verdict;
} dls_audit_lease;

/* A reason and how often it was met (reason: a static string). */
typedef struct dls_audit_count {
    const char *reason;
    uint64_t n;
} dls_audit_count;

/* A holder's late renewals. */
typedef struct dls_audit_holder_count {
    dls_bytes holder;
    uint64_t n;
} dls_audit_holder_count;

/* A (pass, lease) where the judge's `due` list and the audit disagree;
 * DLS_CAUSE_NONE on a side means "not newly due" there. */
typedef struct dls_audit_mismatch {
    uint64_t pass;
    uint64_t lease;
    dls_cause judge;
    dls_cause audit;
} dls_audit_mismatch;

typedef struct dls_audit_late_reclaim {
    uint64_t lease;
    uint64_t due_pass;
    uint64_t lapsed_pass;
} dls_audit_late_reclaim;

/* A medium position at a pass: a gap [from, to) the judge recorded, or a
 * transport-error it recorded (from = the position, to = from). */
typedef struct dls_audit_span {
    uint64_t pass;
    uint8_t medium[DLS_MEDIUM_ID_LEN];
    uint64_t from;
    uint64_t to;
} dls_audit_span;

/* A reading basis met on the journal's marks, in order of first use. */
typedef struct dls_audit_basis {
    dls_bytes name;
    uint64_t min_reading;       /* smallest now on it (ns) */
    uint64_t max_reading;       /* largest now on it (ns) */
    uint64_t first_pass;
    uint64_t last_pass;
} dls_audit_basis;

/* Everything that is not per lease. Arrays are owned by the dls_audit. */
typedef struct dls_audit_summary {
    /* failures (cli.md summary "failures") */
    uint64_t unjustified_lapse; /* per lapsed record (one for a lease the
                                   journal never granted too) */
    uint64_t due_mismatch;
    uint64_t double_grant;
    uint64_t journal;           /* journal_forged + journal_malformed */

    /* the journal */
    uint8_t journal_id[DLS_MEDIUM_ID_LEN];
    uint64_t journal_records;   /* records read (seal excluded) */
    uint64_t passes;            /* pass marks (continuations not counted) */
    uint64_t last_pass;
    dls_audit_point last_mark;  /* the last mark's pass and now */
    uint64_t journal_forged;    /* records not verifying under the grantor's key */
    uint64_t journal_malformed; /* structure: marks out of order, backwards
                                   positions or readings, a basis change
                                   without restarted, a record before the
                                   first mark, an undecodable mark */
    uint64_t journal_defective; /* reported, not a failure: grantor facts
                                   breaking vocabulary rules 1–6 (e.g. a
                                   repeated lapsed, whose first stands) */
    uint64_t journal_ignored;   /* records that concern nothing (e.g. a
                                   tick or renewal signed by the grantor) */
    uint64_t grants, refusals, lapsed;
    const dls_bytes *forged_authors; /* distinct author names claimed on
                                        journal records that did not verify */
    size_t n_forged_authors;

    /* the media, by reason */
    const dls_audit_count *forged;     size_t n_forged;
    const dls_audit_count *defective;  size_t n_defective;
    const dls_audit_count *ignored;    size_t n_ignored;
    uint64_t media_records;     /* records applied from the media */
    uint64_t undrained_records; /* records past the last mark's drained position */

    /* reports */
    const dls_audit_late_reclaim *late_reclaims; size_t n_late_reclaims;
    const dls_audit_holder_count *late_renewals; size_t n_late_renewals;
    uint64_t cadence_overruns;  /* marks flagged `late` */
    const uint64_t *cadence_overruns_unflagged; size_t n_cadence_overruns_unflagged;
    const dls_audit_mismatch *due_mismatches; size_t n_due_mismatches;
    const uint64_t *unverifiable_passes; size_t n_unverifiable_passes;
    const uint64_t *unverifiable_leases; size_t n_unverifiable_leases;
    const dls_audit_span *gaps; size_t n_gaps;
    const dls_audit_span *transport_errors; size_t n_transport_errors;
    const uint64_t *restarts; size_t n_restarts;
    /* revision 5: the restarts that were a standby's takeover (their marks
     * carry "dao.judge/takeover"), also listed in restarts */
    const uint64_t *takeovers; size_t n_takeovers;
    const uint64_t *basis_changes; size_t n_basis_changes;
    const dls_audit_basis *bases; size_t n_bases;
    /* media named in the journal (drained lists or grants) but not given */
    const uint8_t (*missing_media)[DLS_MEDIUM_ID_LEN]; size_t n_missing_media;
    /* indexes into the media given that the journal never names */
    const size_t *unused_media; size_t n_unused_media;
    /* one line each, static for the audit's lifetime */
    const char *const *warnings; size_t n_warnings;
    const char *const *failure_details; size_t n_failure_details;

    /* When the audit could not be completed (the journal could not be read
     * past a position, or began with evicted records): the reason, else
     * NULL; the results cover what was read before it. */
    const char *incomplete;
    uint64_t incomplete_position;
    /* checkpoints (settings.checkpoints): commit records checked (a
     * readable file with the commit's digest and count), found different
     * (each also a journal_malformed failure), whose file is not in the
     * folder (pruned: not checked, never a failure), or whose file cannot
     * be read or does not match its commit (damaged: not that checkpoint,
     * judge.md; a warning, never a failure) */
    uint64_t checkpoints_checked, checkpoints_mismatch, checkpoints_missing, checkpoints_damaged;

    /* Starting at a checkpoint (judge.md rev 4, Checkpoints, Audit).
     * `journal_first` is the journal's first retained position (0:
     * retained from its start). When it is above 0 (older segments deleted)
     * the audit starts from the oldest checkpoint in settings.checkpoints
     * whose grantor-signed commit record is in the retained journal, whose
     * file has the commit's digest and record count, and whose journal_next
     * is at or after journal_first: `start_checkpoint` is its pass n, and
     * the history before it — journal positions [0, not_audited_to), the
     * passes up to n and everything drained in them — is not audited
     * (unverifiable, never a failure). start_checkpoint 0: the audit began
     * at position 0. A candidate whose commit is found but whose file
     * differs is a checkpoint mismatch (a `journal` failure) and the next
     * newer one is tried. */
    uint64_t journal_first;
    uint64_t start_checkpoint;
    uint64_t not_audited_to;
    /* Journal positions that are gone and that no checkpoint covers (the
     * front, [0, journal_first)), or a hole (a segment missing between the
     * oldest and the newest: stream-format.md rev 4, corruption):
     * [journal_missing_from, journal_missing_to). Either is a `journal`
     * failure (counted in journal_malformed, with a failure detail); the
     * audit replays nothing past it. journal_missing_to == 0: none. */
    uint64_t journal_missing_from, journal_missing_to;
} dls_audit_summary;

/* One lease-fact medium given to the audit. */
typedef struct dls_audit_medium {
    dls_medium *medium;   /* required; opened by the caller (DLS_OPEN_READ is
                             enough) and borrowed for the dls_audit_run call */
    const char *party;    /* optional: the party every bare fact on this
                             medium belongs to (a `medium` resolver; its
                             envelopes still verify under the keyring).
                             NULL: a `signed` resolver. */
} dls_audit_medium;

/* Settings. Defaults (dls_audit_settings_default):
 *   max_media            1024  (media given; more is DLS_ERR_TOO_MANY_MEDIA)
 *   keep_renewal_points  true  (keep every counted renewal's pass and now in
 *                               dls_audit_lease.renewal_points — the SVG's
 *                               ticks; memory grows with the renewals)
 *   checkpoints          NULL  (no checkpoint folder)
 *   threads              1     (threads verifying records, the caller's
 *                               included: see below)
 *   from_checkpoint      0     (audit from the journal's start)
 */
typedef struct dls_audit_settings {
    size_t max_media;
    bool keep_renewal_points;
    /* The checkpoint folder (judge.md rev 4, Checkpoints; docs/checkpoints.md),
     * or NULL (default): each commit record on the journal is checked
     * against its checkpoint there (digest, record count, and the live
     * leases' terms against the audit's own state at that point); and a
     * journal whose first records are gone is audited from a checkpoint
     * there (dls_audit_summary.start_checkpoint). Without it such a journal
     * is a `journal` failure (the gap not covered by a checkpoint). */
    const char *checkpoints;
    /* Threads that verify records (docs/audit.md, "Threads"): 0 or 1, the
     * calling thread alone; N > 1, N - 1 POSIX threads started for the call
     * and joined before it returns, that verify the signatures and MACs of
     * records read ahead of the replay (a bounded window: at most 256
     * records or 1 MiB per medium being read, and the journal), while the
     * calling thread reads every medium and applies the records in order.
     * Attribution depends only on a record's bytes, its medium and the
     * keyring, which must not change during the call; everything else (the
     * ledger, replayed seqs, every count) stays on the calling thread, so
     * the results are identical for any number of threads. */
    unsigned threads;
    /* An incremental audit (docs/audit.md, "Auditing only what is new"):
     * 0 (default) audits from the journal's first retained record;
     * N > 0 starts from the committed checkpoint of pass N in
     * `checkpoints` (required), DLS_AUDIT_NEWEST_CHECKPOINT from the newest
     * one that can be used — exactly as a journal whose first records are
     * gone is audited (its commit record and digest verified, its state
     * loaded, the history before it reported as not audited:
     * summary.start_checkpoint names it). A checkpoint that cannot be used
     * (none committed, N not committed or before the retained journal,
     * N's file differing from its commit: a checkpoint mismatch) leaves the
     * audit incomplete, with the reason, and nothing replayed. */
    uint64_t from_checkpoint;
} dls_audit_settings;

#define DLS_AUDIT_NEWEST_CHECKPOINT UINT64_MAX

DLS_EXPORT void dls_audit_settings_default(dls_audit_settings *s);

typedef struct dls_audit dls_audit;

/* Audits `journal` (authored by `grantor`, whose key must be in `kr` as
 * Ed25519) against `media[0..n_media)` and keeps the results in *out.
 * Reads every medium from position 0 with its own cursors; borrows journal,
 * media and kr only during the call (kr's reference count is not changed
 * beyond the call). s may be NULL for the defaults.
 *
 * Returns 0 with *out set — also when failures were found or the journal
 * could not be read to its end (see dls_audit_exit_status and
 * summary->incomplete). Errors (nothing is kept, *out NULL):
 *   DLS_ERR_INVAL          a NULL or empty argument, a party name that is
 *                          not a valid name
 *   DLS_ERR_NOTFOUND       the grantor is not in the keyring (w->reason)
 *   DLS_ERR_KEYKIND        the grantor's key is not Ed25519
 *   DLS_ERR_DUPLICATE      two media given share a medium id, or the journal
 *                          is also given as a medium (w->offset = the index)
 *   DLS_ERR_TOO_MANY_MEDIA more than s->max_media media
 *   DLS_ERR_EMPTY_KEYRING  an empty keyring
 *   DLS_ERR_NOMEM, DLS_ERR_SODIUM */
DLS_EXPORT int dls_audit_run(dls_audit **out, const dls_audit_settings *s,
                             dls_medium *journal, const char *grantor,
                             dls_keyring *kr, const dls_audit_medium *media,
                             size_t n_media, dls_where *w);

/* Frees an audit and everything it owns; NULL-safe. */
DLS_EXPORT void dls_audit_del(dls_audit *a);

/* The leases, in ascending lease id (a lease id granted twice is one entry). */
DLS_EXPORT size_t dls_audit_lease_count(const dls_audit *a);
/* The i-th lease, or NULL when i is out of range. */
DLS_EXPORT const dls_audit_lease *dls_audit_lease_at(const dls_audit *a, size_t i);
/* The summary (never NULL for a non-NULL a). */
DLS_EXPORT const dls_audit_summary *dls_audit_summary_of(const dls_audit *a);

/* 0 when no failure was found, 1 when one was, 3 when the audit is
 * incomplete (summary->incomplete) — judge.md's exit statuses. */
DLS_EXPORT int dls_audit_exit_status(const dls_audit *a);

/* ---- the timeline picture ------------------------------------------------ */

/* A sink for generated text: returns 0, or a negative dls_error that stops
 * the writer and is returned by it. */
typedef int (*dls_audit_write_fn)(void *user, const char *p, size_t n);

/* SVG settings. Defaults (dls_audit_svg_settings_default):
 *   width     1200  (pixels; at least 600)
 *   max_rows  200   (subjects drawn one a row up to this many; beyond it
 *                    consecutive subjects share density rows, and the
 *                    picture says so)
 *   title     NULL  (a caption; NULL: "daolease audit")
 */
typedef struct dls_audit_svg_settings {
    unsigned width;
    unsigned max_rows;
    const char *title;
} dls_audit_svg_settings;

DLS_EXPORT void dls_audit_svg_settings_default(dls_audit_svg_settings *s);

/* Draws the audit as SVG through `write`: one row per subject (in order of
 * first grant), each lease one bar (class "bar") over the reading axis of
 * its grant's basis from grant to lapse (to the basis's last now when live),
 * coloured by cause; counted renewals as ticks; failures in red; a legend;
 * one axis per reading basis, readings relative to the smallest. Text is
 * escaped for XML (& < > " ') and control characters and invalid UTF-8 are
 * shown as U+FFFD. Returns 0, DLS_ERR_INVAL, DLS_ERR_NOMEM, or the first
 * error `write` returned. */
DLS_EXPORT int dls_audit_svg(const dls_audit *a, const dls_audit_svg_settings *s,
                             dls_audit_write_fn write, void *user);

#ifdef __cplusplus
}
#endif
#endif
