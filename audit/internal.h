/* Internal state of an audit (shared by audit.c and svg.c). */
#ifndef DLS_AUDIT_INTERNAL_H
#define DLS_AUDIT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vocab/htab.h"
#include "audit/ahead.h"
#include "audit/amark.h"
#include "daolease/attrib.h"
#include "daolease/audit.h"
#include "daolease/stream.h"
#include "daolease/fact.h"
#include "vocab/hex.h" /* dls_hex16: ids in messages */

/* Reasons counted on the media (fixed order: the order of the reports). */
enum { FORGED_SIGNATURE, FORGED_UNKNOWN_AUTHOR, FORGED_WRONG_KEY_KIND, FORGED_BARE_FACT,
       FORGED_MALFORMED, FORGED_N };
enum { DEFECTIVE_RULE1, DEFECTIVE_RULE2, DEFECTIVE_RULE3, DEFECTIVE_RULE4, DEFECTIVE_RULE5,
       DEFECTIVE_RULE6, DEFECTIVE_RULE7, DEFECTIVE_N };
enum { IGNORED_NOT_LEASE_FACT, IGNORED_UNKNOWN_LEASE, IGNORED_WRONG_AUTHOR, IGNORED_MISPLACED,
       IGNORED_REPLAYED, IGNORED_N };

/* One lease-fact medium: given by the caller, or only named by the journal
 * (m == NULL: missing). */
typedef struct audit_medium {
    uint8_t id[DLS_MEDIUM_ID_LEN];
    dls_medium *m;
    dls_resolver *res;
    dls_cursor *cur;
    size_t given_ix;        /* index in the caller's array, SIZE_MAX if missing */
    bool named;             /* named by a drained list or a grant */
    uint64_t drained;       /* the judge's drained position so far */
    bool read_stopped;      /* the audit's cursor answered transport-error */
    bool warned_short;      /* a "copy ends early" warning was given */
    /* transport-error runs (judge.md step 2, the bounded suspension) */
    bool fail_run;
    uint64_t fail_first_now;
    uint64_t fail_last_pass;
    uint32_t fail_basis;
    uint64_t failing_pass;  /* the last pass whose errors list named it */
    /* gaps the judge recorded, as an epoch: a lease whose `epoch` differs
     * is unknown, resumed at gap_now (never a walk of the live leases) */
    uint32_t gap_epoch;
    uint64_t gap_now;
} audit_medium;

typedef struct audit_subject {
    uint8_t *bytes;
    size_t n;
    uint32_t live_excl, live_shared;
    size_t order;           /* order of first grant (rows of the picture) */
} audit_subject;

typedef struct audit_lease {
    dls_audit_lease pub;
    uint8_t *buf;           /* subject then holder bytes */
    dls_audit_point *points;
    size_t cap_points;
    size_t medium_ix;
    size_t subject_ix;
    bool live;              /* in the journal's ledger: granted, no lapsed yet */
    uint64_t tenure, last_obs;
    uint64_t last_seq;
    bool unknown;
    uint64_t resumed;
    uint32_t epoch;         /* its medium's gap epoch its evidence reflects */
    bool pending;
    dls_cause pending_cause;
    bool unverifiable;
    size_t live_pos;
    uint64_t jd_pass;       /* the pass whose due list named it last */
    dls_cause jd_cause;
    uint64_t cand_pass;     /* the pass it was last a candidate at */
    size_t ix;              /* its index in leases (until the final sort) */
    bool in_heap;           /* has an entry in the deadline heap */
} audit_lease;

/* An entry of the deadline heap: a lower bound of the reading after which
 * the lease can be due by cap or silence (due when now > key). */
typedef struct audit_deadline {
    uint64_t key;
    size_t ix;              /* index into leases */
} audit_deadline;

struct dls_audit {
    dls_audit_settings set;
    dls_audit_summary sum;
    /* leases: stable pointers, table id -> index, sorted at the end */
    audit_lease **leases;
    size_t n_leases, cap_leases;
    dls_htab lease_ix;
    uint64_t max_lease;
    bool have_floor;        /* a new journal's floor sets max_lease */
    /* the journal's ledger: live lease indexes */
    size_t *live;
    size_t n_live, cap_live;
    /* due leases are found with a deadline heap, never a walk of the live
     * leases (judge.md, The pass): candidates at a mark are
     * the leases popped from it, the leases released in the pass and those
     * the mark's due list names */
    audit_deadline *heap;
    size_t n_heap, cap_heap;
    uint64_t heap_tol;      /* the largest tolerance a key in the heap used */
    uint64_t cur_tol;       /* the last mark's tolerance */
    size_t *cands;
    size_t n_cands, cap_cands;
    /* subjects */
    audit_subject *subjects;
    size_t n_subjects, cap_subjects;
    dls_htab subject_ix;
    /* media */
    audit_medium *media;
    size_t n_media, cap_media;
    dls_htab medium_ix;
    /* proposals: (medium index, author) -> last counted seq */
    dls_htab proposal_seq;
    /* holders' late renewals: name -> index in late_renewals */
    dls_htab holder_ix;
    /* counters by reason */
    uint64_t forged[FORGED_N], defective[DEFECTIVE_N], ignored[IGNORED_N];
    /* owned arrays behind the summary */
    dls_audit_count counts[FORGED_N + DEFECTIVE_N + IGNORED_N];
    dls_audit_late_reclaim *late_reclaims; size_t cap_late_reclaims;
    dls_audit_holder_count *late_renewals; size_t cap_late_renewals;
    uint64_t *unflagged; size_t cap_unflagged;
    dls_audit_mismatch *mismatches; size_t cap_mismatches;
    uint64_t *unver_passes; size_t cap_unver_passes;
    uint64_t *unver_leases; size_t cap_unver_leases;
    dls_audit_span *gaps; size_t cap_gaps;
    dls_audit_span *terrs; size_t cap_terrs;
    uint64_t *restarts; size_t cap_restarts;
    uint64_t *takeovers; size_t cap_takeovers;
    uint64_t *basis_changes; size_t cap_basis_changes;
    dls_audit_basis *bases; size_t cap_bases;
    uint8_t (*missing)[DLS_MEDIUM_ID_LEN]; size_t cap_missing;
    size_t *unused; size_t cap_unused;
    char **warnings; size_t cap_warnings; uint64_t warnings_dropped;
    char **details; size_t cap_details; uint64_t details_dropped;
    dls_bytes *forged_authors; size_t cap_forged_authors;
    char *incomplete;
    /* replay state */
    bool have_mark;
    uint64_t last_pass, last_now;
    uint32_t cur_basis;
    bool nomem;             /* an allocation failed: the run answers NOMEM */
    /* starting at a checkpoint (start.c) */
    bool have_start_commit;
    uint64_t start_commit_pos; /* the start checkpoint's commit record: met again on
                                  the journal, it is not compared with itself */
    const struct au_hooks *hooks; /* tests only (au_run); NULL otherwise */
    /* verification ahead on settings.threads (audit/ahead.h): the workers
     * and the window on the lease-fact media (one drained span at a time) */
    au_pool *pool;
    au_ahead *mwin;
};

/* Test hooks (tests/test_audit.c): `listed` (optional) is called by
 * au_start after each listing of the checkpoint folder (attempt 0, 1, …)
 * and before any listed file is read — where a judge running beside the
 * audit may checkpoint, prune and trim (docs/audit.md, "Auditing beside a
 * running judge"). */
typedef struct au_hooks {
    void (*listed)(void *user, unsigned attempt, const uint64_t *passes, size_t n);
    void *user;
} au_hooks;

/* The folder is listed at most this many times (start.c). */
#define AU_CKPT_LISTINGS 4

/* dls_audit_run with test hooks (hooks may be NULL). */
int au_run(dls_audit **out, const dls_audit_settings *s, const au_hooks *hooks,
           dls_medium *journal, const char *grantor, dls_keyring *kr,
           const dls_audit_medium *media, size_t n_media, dls_where *w);

/* Renders a subject's encoding as short display text (a str as its bytes,
 * other values JSON-like), at most `cap` - 1 bytes plus NUL, "…" when cut.
 * The text may hold any bytes: escape it before putting it in markup. */
void dls_audit_subject_text(const uint8_t *p, size_t n, char *out, size_t cap);

/* Appends `n` bytes of `s` to a growing buffer escaped for XML text and
 * attribute values: & < > " ' as entities, C0 controls, DEL, C1 controls,
 * U+FFFE/U+FFFF and every invalid UTF-8 sequence (each maximal ill-formed
 * subpart) as U+FFFD. Returns 0 or DLS_ERR_NOMEM. */
typedef struct dls_abuf {
    char *p;
    size_t n, cap;
    int err;
} dls_abuf;
void dls_abuf_put(dls_abuf *b, const char *s, size_t n);
void dls_abuf_printf(dls_abuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dls_abuf_xml(dls_abuf *b, const void *s, size_t n);

/* ---- shared between the audit's files (the .c files of audit/) ------------------------- */


/* Pushes onto a (pointer, count, capacity) triple; on failure flags
 * a->nomem and pushes nothing. */
#define APUSH(a, arr, n, cap, item)                                                     \
    do {                                                                                \
        if (au_grow((void **)&(arr), (n), &(cap), sizeof *(arr))) {                     \
            (a)->nomem = true;                                                          \
        } else {                                                                        \
            (arr)[(n)++] = (item);                                                      \
        }                                                                               \
    } while (0)

/* ledger.c: the audit's own ledger */
/* Grows *arr (n used, *cap allocated) so one more element fits. */
int au_grow(void **arr, size_t n, size_t *cap, size_t elem);
/* The index stored under key[0..n) of t into *v (v may be NULL); false when
 * the key is absent. */
bool au_ix_get(const dls_htab *t, const uint8_t *key, size_t n, uint64_t *v);
/* Stores v under key[0..n) of t; 0 or an error of dls_htab_put. */
int au_ix_set(dls_htab *t, const uint8_t *key, size_t n, uint64_t v);
audit_lease *au_lease_find(dls_audit *a, uint64_t id);
int au_lease_ix_set(dls_audit *a, uint64_t id, uint64_t ix);
/* The current mark's pass, now and basis. */
dls_audit_point au_point_now(const dls_audit *a);
/* The medium with this id; creates a "missing" entry when it was not given. */
audit_medium *au_medium_get(dls_audit *a, const uint8_t id[DLS_MEDIUM_ID_LEN], size_t *ixo);
void au_live_add(dls_audit *a, size_t ix);
void au_live_remove(dls_audit *a, audit_lease *l);
void au_mark_unknown(dls_audit *a, audit_lease *l);
/* Brings a lease's evidence state up to its medium's gaps (a gap since its
 * last sync makes it unknown, resumed at the gap's now). Call before
 * reading or changing `unknown` / `resumed`. */
void au_sync(dls_audit *a, audit_lease *l);
void au_make_unverifiable(audit_lease *l);
void au_span_unverifiable(dls_audit *a, size_t mix);
audit_subject *au_subject_get(dls_audit *a, dls_bytes s, size_t *ixo);

/* The lower bound of a live lease's cap and silence deadline, with tolerance
 * tol. */
uint64_t au_deadline(const audit_lease *l, uint64_t tol);
/* Gives a lease an entry in the deadline heap (with a->cur_tol). */
void au_heap_push(dls_audit *a, size_t ix, uint64_t key);
/* Removes the entry with the smallest key (the heap is not empty). */
audit_deadline au_heap_pop(dls_audit *a);
/* Rebuilds the heap from the live leases with tolerance tol (a basis
 * change, or a tolerance smaller than a key used). O(live), rare. */
void au_heap_rebuild(dls_audit *a, uint64_t tol);
/* Makes a live lease a candidate for classification at the current mark. */
void au_candidate(dls_audit *a, audit_lease *l);

/* report.c: messages and the summary */
void au_printable(const uint8_t *p, size_t n, char *out, size_t cap);
void au_warn(dls_audit *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void au_detail(dls_audit *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void au_set_incomplete(dls_audit *a, uint64_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void au_forged_author(dls_audit *a, dls_bytes who);
void au_journal_malformed(dls_audit *a);
/* audit/checkpoint.c: a commit record's fact at `position`; true when it
 * was one (and was checked when settings.checkpoints is set). */
bool au_checkpoint_commit(dls_audit *a, const uint8_t *fact, size_t n, uint64_t position);
void au_finish(dls_audit *a);
/* audit/checkpoint.c: a checkpoint that differs from what the audit expects
 * (a `journal` failure, counted in checkpoints_mismatch) */
/* A committed checkpoint whose file cannot be read or does not match its
 * commit record (judge.md, Checkpoints: such a checkpoint does not exist;
 * the judge skips it): reported (a warning and checkpoints_damaged), never
 * a failure. */
void au_checkpoint_damaged(dls_audit *a, uint64_t pass, uint64_t position, const char *what);
void au_checkpoint_mismatch(dls_audit *a, uint64_t pass, uint64_t position, const char *what,
                            uint64_t lease);

/* apply.c: one record drained from a lease-fact medium, attributed by its
 * medium's resolver (at, it: dls_resolver_attribute_facts's answers) */
void au_apply_record(dls_audit *a, size_t mix, const dls_attribution *at, dls_facts it);

/* classify.c: step 3 at a mark, compared with its due list */
void au_classify_all(dls_audit *a, const dls_amark *mk);

/* replay.c: one pass mark */
void au_process_mark(dls_audit *a, const dls_amark *mk);

/* journal.c: the journal, record by record */
typedef struct journal_state {
    dls_resolver *res;
    const char *grantor;
    size_t grantor_len;
    dls_rule6 *rule6;
    dls_amark open;        /* the mark being collected (pass 0: none) */
    bool have_open;
    uint64_t verified;     /* records verified under the grantor's key */
    au_ahead *win;         /* the journal's records, verified ahead */
} journal_state;
/* Reads the journal through cur to its end (or to where it cannot be read). */
void au_read_journal(dls_audit *a, journal_state *js, dls_cursor *cur);
/* Replays the mark being collected, if any. */
void au_flush_mark(dls_audit *a, journal_state *js);

/* start.c: where the replay starts (judge.md rev 4, Checkpoints, Audit).
 * With the journal retained from position 0, *cur (a
 * cursor at 0) is left as it is and true is answered. With its first
 * records gone, the oldest usable checkpoint of settings.checkpoints is
 * loaded into the audit's ledger and *cur replaced by a cursor at its
 * journal_next (true); with none, the gap is a `journal` failure and false
 * is answered (nothing is replayed). */
bool au_start(dls_audit *a, journal_state *js, dls_medium *journal, dls_cursor **cur);

#endif
