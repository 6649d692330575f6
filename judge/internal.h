/* daolease — the judge's private state (judge.md): the ledger, the media,
 * the per-pass scratch. Internal to the judge; the audit must not use it
 * (judge.md, Audit replay: the audit shares the codec, not the ledger).
 *
 * Pools. Leases and subjects live in chunked pools addressed by 32-bit
 * indices (so the hash indexes, heaps and subject lists hold 4-byte
 * references and nothing moves when a pool grows). A live lease costs
 * sizeof(jl_lease) + a heap entry + a hash slot; see docs/judge.md, Sizing.
 */
#ifndef DLS_JUDGE_INTERNAL_H
#define DLS_JUDGE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <sodium.h>

#include "daolease/attrib.h"
#include "daolease/fact.h"
#include "daolease/judge.h"
#include "daolease/mark.h"
#include "daolease/stream.h"
#include "vocab/heap.h"
#include "judge/jtab.h"
#include "vocab/vec.h"

#define JL_NO_MEDIUM 0xffffu
#define JL_PROPOSAL_MAX (DLS_ID_MAX + 2) /* an encoded proposal id */

/* ---- vectors ---------------------------------------------------------------- */

/* The judge's vectors are the one growable array (vocab/vec.h); these keep
 * its call sites: room for `more` beyond n, and a push that copies x in. */
typedef dls_vec jvec;

static inline int jvec_reserve(jvec *v, size_t elem, size_t more)
{
    if (more > SIZE_MAX - v->n)
        return DLS_ERR_NOMEM;
    return dls_vec_reserve(v, elem, v->n + more);
}
/* Appends one element of `elem` bytes; 0 or DLS_ERR_NOMEM. */
static inline int jvec_push(jvec *v, size_t elem, const void *x)
{
    void *slot = dls_vec_push(v, elem);
    if (!slot)
        return DLS_ERR_NOMEM;
    memcpy(slot, x, elem);
    return 0;
}
#define jvec_free dls_vec_free
#define JVEC_AT DLS_VEC_AT

/* ---- the ledger ------------------------------------------------------------- */

enum jl_lease_flags {
    JL_USED = 1u << 0,
    JL_RELEASED = 1u << 1,
    JL_COMMIT = 1u << 2,
    JL_UNKNOWN = 1u << 3,   /* evidence unknown, resumed reading in `resumed` */
    JL_PENDING = 1u << 4,   /* reclaim pending with `cause` */
    JL_ENDED = 1u << 5,     /* the owner ended it (policy) */
    JL_SHARED = 1u << 6,
    JL_PARKED = 1u << 7,    /* parked on its failing medium */
    JL_RECOVERED = 1u << 8, /* rebuilt by replay, not yet seen by a pass */
    JL_CAPPED = 1u << 9,    /* a tenure cap: max_ns in j->capped */
    JL_LATE = 1u << 10      /* its reclaim answered not yet or failed once */
};

/* A live lease: 80 bytes (docs/judge.md, Sizing). The tenure cap, which
 * most leases lack, lives in a side table (jl_max_ns). */
typedef struct jl_lease {
    uint16_t flags;
    uint16_t medium;        /* assembly index or JL_NO_MEDIUM */
    uint32_t subject;       /* subject pool index */
    uint64_t id;
    uint64_t duration_ns;
    uint64_t tenure_start;
    uint64_t last_obs;      /* last relevant observation */
    uint64_t resumed;       /* resumed reading (evidence unknown) */
    uint64_t last_seq;      /* last counted renewal seq */
    uint32_t holder;        /* party index */
    uint32_t subj_next;     /* the subject's lease list */
    uint32_t subj_prev;
    uint32_t heap_pos;      /* JNIL when not in the deadline heap */
    uint32_t epoch;         /* the medium's gap epoch when evidence was last known */
    uint8_t cause;          /* the pending cause */
} jl_lease;

enum jl_subject_flags {
    JS_USED = 1u << 0,
    JS_DELAYED = 1u << 1,   /* in a lock-delay */
    JS_FREED = 1u << 2,     /* listed in this pass's freed subjects */
    JS_REFUSED = 1u << 3    /* listed in this pass's refused subjects */
};

typedef struct jl_waiter jl_waiter;

#define JL_SUBJECT_INLINE 16 /* subjects up to this many bytes live in the entry */

/* A subject: 36 bytes (docs/judge.md, Sizing). Its bytes are inline up to
 * JL_SUBJECT_INLINE, else `b` holds a pointer to a malloc'd copy (read it
 * with jl_subject_bytes). A lock-delay and waiters, which few subjects
 * have at a time, live in a side record (jl_subx) numbered `x`. The
 * subject index keeps no hash: it is recomputed when needed. */
typedef struct jl_subject {
    uint16_t flags;
    uint16_t len;
    uint32_t first_lease;   /* JNIL when none */
    uint32_t n_excl;        /* live (incl. pending) exclusive leases */
    uint32_t n_shared;
    uint32_t x;             /* jl_subx pool index, JNIL when none */
    uint8_t b[JL_SUBJECT_INLINE];
} jl_subject;

/* A subject's lock-delay and waiters (side record, jl_subx_get). */
typedef struct jl_subx {
    uint64_t delay_start;   /* the reclaim's now that started the lock-delay */
    uint64_t delay_lease;   /* the lease whose reclaim started it */
    jl_waiter *whead, *wtail;
    uint32_t nwaiters;
    uint32_t delay_pos;     /* position in the delay heap, JNIL */
} jl_subx;

static inline const uint8_t *jl_subject_bytes(const jl_subject *s)
{
    if (s->len <= JL_SUBJECT_INLINE)
        return s->b;
    const uint8_t *p;
    memcpy(&p, s->b, sizeof p);
    return p;
}

typedef struct jl_pseq {
    uint16_t medium;
    uint64_t seq;
} jl_pseq;

typedef struct jl_capped {
    uint64_t id;
    uint64_t max_ns;
} jl_capped;

/* A party (holder / proposal author): its name and, per medium, the last
 * counted proposal seq (vocabulary.md: state bounded by authors). */
typedef struct jl_party {
    uint8_t name[DLS_ID_MAX];
    uint8_t len;
    uint32_t hash;
    jl_pseq *pseq;
    uint32_t npseq;
} jl_party;

/* A proposal the journal answered that the replay could not read, because
 * its medium's older records were evicted or unreadable: (holder, encoded
 * proposal id), the id's bytes in dls_judge.answered_bytes at `off`. */
typedef struct jl_answered {
    uint32_t holder;
    uint32_t off;
    uint8_t plen;
} jl_answered;

/* A proposal, drained this pass or recovered by replay, or waiting. */
typedef struct jl_prop {
    uint64_t arrival;       /* drain order: global counter */
    uint32_t holder;
    uint16_t medium;
    uint8_t plen;
    uint8_t has_mode, has_ask, dead;
    dls_mode mode;
    dls_duration ask;
    uint8_t proposal[JL_PROPOSAL_MAX];
    uint8_t *subject;       /* malloc'd copy */
    uint16_t slen;
} jl_prop;

struct jl_waiter {
    jl_waiter *next, *prev;
    uint32_t subject;
    uint32_t self;          /* index in the waiter pool */
    uint32_t heap_pos;
    uint64_t arrived_at;    /* now at arrival */
    uint64_t bound;         /* fixed at arrival */
    jl_prop p;              /* p.subject unused (the subject's bytes) */
};

/* Freed items are chained through their last 4 bytes (the rest zero), so
 * an item's flags must not be there and items are at least 8 bytes. */
typedef struct jpool {
    uint8_t **chunks;
    uint32_t nchunks;
    uint32_t item;          /* item size */
    uint32_t next;          /* never-used index */
    uint32_t free;          /* first freed index, JNIL when none */
    uint32_t used;
} jpool;

#define JPOOL_SHIFT 10u
#define JPOOL_CHUNK (1u << JPOOL_SHIFT)

static inline void *jpool_at(const jpool *p, uint32_t i)
{
    return p->chunks[i >> JPOOL_SHIFT] + (size_t)(i & (JPOOL_CHUNK - 1)) * p->item;
}

/* ---- media ------------------------------------------------------------------ */

typedef struct jm_medium {
    dls_medium *m;
    dls_resolver *r;
    dls_cursor *c;
    uint8_t id[DLS_MEDIUM_ID_LEN];
    bool retired;
    bool lost;              /* the replay could not read all it drained: its
                               proposals are also checked against `answered` */
    bool failed;            /* this pass: transport-error or budget cut */
    bool cut;               /* this pass: the drain budget cut it short */
    bool in_run;            /* failing in an unbroken run of passes */
    uint64_t fail_since;    /* now of the run's first pass */
    uint64_t err_pos;
    uint32_t gap_epoch;     /* bumped by each gap */
    uint64_t gap_now;       /* now of the latest gap */
    jvec parked;            /* jl_parked: leases whose silence judgement waits */
    jvec held;              /* uint8_t: a record read but left for the next pass
                               (a batch that would pass the drain budget) */
    bool has_held;
    uint64_t held_pos;      /* its position: the medium's next unread one */
    uint64_t drained;       /* records drained since the start (a view's count) */
    uint64_t facts;         /* facts they carried */
    uint64_t gaps;          /* gaps met since the start */
} jm_medium;

typedef struct jl_parked {
    uint64_t id;
    uint32_t idx;
} jl_parked;

typedef struct jm_tick {
    dls_medium *m;
    dls_resolver *r;
    dls_cursor *c;
    char *adapter;
    size_t adapter_len;
    dls_rule7 r7;
    bool retired;
} jm_tick;

typedef struct jl_request {
    uint64_t ticket;
    uint32_t holder;
    uint16_t medium;
    bool has_duration;
    bool has_mode;
    dls_duration duration;
    dls_mode mode;
    uint8_t *subject;
    uint16_t slen;
} jl_request;

/* An unsolicited grant's outcome, told to the owner once the pass's
 * records are on the journal. */
typedef struct jl_told {
    uint64_t ticket;
    uint64_t lease;
    int error;
} jl_told;

typedef struct jl_freed {
    uint64_t lease;
    uint64_t from;          /* the reading the subject freed at: the end of a
                               lock-delay (0: a lapse in this pass) */
    uint32_t subject;
} jl_freed;

/* Step 2's run of single-fact records (apply.c, ja_run_add): read in a row
 * from one medium, each attributed and decoded as it is read and its lease
 * lookup's slot prefetched, then looked up, the leases prefetched, and
 * applied in order. */
#define JA_RUN 16
#define JA_RUN_RECORD 512   /* a longer record is applied alone */

typedef struct ja_item {
    dls_bytes author;       /* borrows from the run's copy of the record */
    dls_fact f;
    uint32_t h;             /* the lease id's hash (a renewal or release) */
    uint32_t idx;
    bool ok;                /* attributed and decoded */
} ja_item;

/* ---- the judge -------------------------------------------------------------- */

struct dls_judge {
    /* assembly */
    const dls_secret *grantor;
    char *grantor_name;
    size_t grantor_len;
    dls_medium *journal;
    uint8_t journal_id[DLS_MEDIUM_ID_LEN];
    int lock_fd;
    jm_tick *ticks;
    size_t nticks;
    jm_medium *media;
    size_t nmedia;
    char *basis;
    uint64_t tolerance;
    uint64_t cadence;
    dls_duration default_duration, min_duration, max_duration, tenure_max;
    uint64_t lock_delay;
    size_t drain_budget;
    size_t drain_per_s;     /* the budget sized to the ticks (pass_budget) */
    size_t budget;          /* this pass's budget a medium, in facts (0: none) */
    dls_judge_callbacks cb;
    void *user;
    uint8_t hkey[crypto_shorthash_KEYBYTES];

    /* state */
    bool fatal;
    bool jfailed;           /* the journal append that made it fatal: jwhere says where/why */
    dls_where jwhere;
    int jcode;              /* the medium's code for that failure */
    bool in_callback;
    bool ticks_ended;       /* the last tick cursor was retired */
    bool now_valid;
    uint64_t now;
    bool prev_valid;        /* a previous now on this basis (cadence) */
    uint64_t prev_now;
    uint64_t last_pass;
    bool started;           /* the first pass with a now has run */
    bool replayed;          /* the ledger came from a journal */
    bool basis_changed;     /* the journal's basis differs */
    uint64_t highest;       /* highest lease id minted */
    bool lost_mode;         /* a new journal after a lost one: the first
                               mark carries floor and from */
    uint64_t floor;
    dls_mark_pos *from_marks; /* nmedia: the first mark's from */
    bool kept;              /* the first mark carries kept (revision 4) */
    bool replaying;
    uint64_t evidence_lease;/* replay: the largest verified renewal/release
                               id above every id granted when read */
    uint16_t evidence_medium;
    uint64_t arrival;       /* proposal arrival counter */
    uint64_t ticket;        /* unsolicited request counter */

    /* the ledger */
    jpool leases, subjects;
    jpool subx;             /* jl_subx: subjects' lock-delays and waiters */
    jvec capped;            /* jl_capped: the leases with a tenure cap */
    jtab capped_index;      /* lease id -> capped index */
    jvec parties;           /* jl_party */
    jtab by_id, by_party;
    jvec by_id_bulk;        /* uint64_t jtab slots not yet in by_id (jl_ledger_bulk) */
    bool bulk;
    jset by_subject;
    dls_heap deadlines;        /* lease refs: lower bounds of deadlines */
    dls_heap waitheap;         /* waiter refs: refusal readings */
    dls_heap delays;           /* subject refs: lock-delay ends */
    jvec waiters;           /* jl_waiter * pool */
    jvec wfree;             /* uint32_t free waiter slots */
    size_t live;
    size_t nwaiting;
    size_t subject_bytes;   /* subjects' encoded bytes held */
    jvec pending;           /* uint32_t lease refs pending their reclaim */
    jvec requests;          /* jl_request, owner's unsolicited grants */
    jvec told;              /* jl_told: outcomes not yet told to the owner */
    jvec answered;          /* jl_answered: set by replay, never grown after */
    jvec answered_bytes;    /* uint8_t: their proposal ids */
    jtab answered_index;    /* (holder, proposal) → answered index */

    /* per pass */
    dls_judge_pass_result *res;
    jvec props;             /* jl_prop: this pass's proposals (replay: unanswered) */
    jtab prop_index;        /* replay: (holder, proposal) → props index */
    jvec due;               /* uint32_t: newly due */
    jvec done;              /* uint32_t: reclaimed this pass */
    jvec freed;             /* jl_freed */
    jvec refused_subjects;  /* uint32_t */
    jvec gaps;              /* dls_mark_gap: this pass's cursor jumps */
    jvec mk_drained, mk_errors, mk_due; /* scratch of jj_mark */
    bool moved;             /* a lease-fact cursor moved */
    bool any_error;
    bool late;
    bool restarted;
    bool mark_owed;         /* owed only because of an append */
    bool mark_done;

    /* step 2's run (apply.c): JA_RUN records of up to JA_RUN_RECORD bytes */
    uint8_t *run_buf;
    ja_item *run;
    size_t nrun;
    uint16_t run_medium;
    uint64_t run_now;

    /* journal batch */
    jvec jbuf;              /* bytes of sealed envelopes */
    jvec jlens;             /* size_t lengths */
    uint8_t *scratch;       /* DLS_RECORD_MAX bytes: one fact */
    uint64_t appended_total;

    struct jo_view *view;   /* leases.c: leases by holder, grants to tell */

    /* checkpoints (checkpoint.c; judge.md rev 4, Checkpoints) */
    bool ck_mark;           /* a pass mark was written since the start */
    uint64_t ck_pass, ck_now; /* the last mark's pass and now */
    uint64_t ck_next;       /* journal position after the last pass's last record */
    uint64_t ck_written;    /* pass of the last checkpoint this judge wrote */
    bool ck_loaded;         /* ledger loaded from a checkpoint: replay from ck_next */
    jvec ck_notes;          /* dls_judge_ckpt_note: what the restart skipped and loaded */
    char *ck_basis;         /* the loaded checkpoint's basis */
    uint64_t ck_last_id;    /* loading: the last lease id read */
    dls_cursor *ck_cursor;  /* the journal just after the commit record (replay
                               goes on from there), or NULL */
    uint64_t *ck_runs;      /* nmedia: the loaded failing runs' first now, or
                               UINT64_MAX (none) */

    /* standby judges (standby.c; judge.md rev 5, Standby judges) */
    bool standby;           /* following the journal: no pass runs */
    bool took_over;         /* this handle took over: its first mark says so */
    bool sb_remote;         /* a Redis or JetStream journal (standby.c) */
    uint64_t heartbeat;     /* 0: none */
    uint64_t takeover_after;
    char *lock_path;        /* journal_lock_path, copied, or NULL */
    struct jr_state *rp;    /* the replay kept alive between standby steps */
    uint64_t *rp_starts;    /* nmedia: the replay's cursor starts */
    uint64_t sb_steps;      /* standby steps */
    uint64_t sb_read_errors; /* steps whose journal read stopped at a transport error */
    dls_sync takeover_sync; /* the append handle's sync, when the standby
                               followed a journal opened for read */
    dls_medium *own_journal;/* that handle, opened at takeover (owned) */
};

/* ---- judge.c ---------------------------------------------------------------- */

/* 0 when the handle may be used; DLS_ERR_INVAL (NULL), DLS_ERR_FATAL (a
 * poisoned handle), DLS_ERR_REENTRANT (inside a callback). */
int jx_usable(const dls_judge *j);
/* Poisons the handle after a failed step; answers the fatal code to return. */
int jx_poison(dls_judge *j, int rc);

/* The medium's next unread position (a record held for the next pass
 * counts as unread). */
uint64_t jm_position(const jm_medium *m);

/* ---- ledger.c --------------------------------------------------------------- */

int jpool_init(jpool *p, uint32_t item);
void jpool_free(jpool *p);
/* A zeroed item; *idx its index. 0 or DLS_ERR_NOMEM. */
int jpool_get(jpool *p, uint32_t *idx);
void jpool_put(jpool *p, uint32_t idx);
size_t jpool_bytes(const jpool *p);

static inline jl_lease *jl_lease_at(const dls_judge *j, uint32_t i)
{
    return (jl_lease *)jpool_at(&j->leases, i);
}
static inline jl_subject *jl_subject_at(const dls_judge *j, uint32_t i)
{
    return (jl_subject *)jpool_at(&j->subjects, i);
}
static inline jl_party *jl_party_at(const dls_judge *j, uint32_t i)
{
    return &JVEC_AT(j->parties, jl_party, i);
}

/* A subject's side record, or one that reads as none (no waiters, no
 * lock-delay) when it has none. */
static inline const jl_subx *jl_subx_peek(const dls_judge *j, const jl_subject *s)
{
    static const jl_subx none = {0, 0, NULL, NULL, 0, JNIL};
    return s->x == JNIL ? &none : (const jl_subx *)jpool_at(&j->subx, s->x);
}
/* A subject's side record, made when it has none; NULL: DLS_ERR_NOMEM. */
jl_subx *jl_subx_get(dls_judge *j, uint32_t s);
/* The lease's tenure cap (0: none). */
uint64_t jl_max_ns(const dls_judge *j, const jl_lease *l);

uint32_t jl_hash(const dls_judge *j, const void *p, size_t n);
int jl_ledger_init(dls_judge *j);
/* Sizes the lease-id and subject indexes for n entries at once (a restart
 * from a checkpoint knows its count), so loading them rehashes nothing.
 * 0 or DLS_ERR_NOMEM (the indexes unchanged: they still grow on demand). */
int jl_ledger_reserve(dls_judge *j, uint32_t n);
void jl_ledger_free(dls_judge *j);
/* Bulk loading (restart from a checkpoint): between jl_ledger_bulk(j, true)
 * and jl_ledger_bulk(j, false) new leases are indexed by id only at the
 * end, all at once (jtab_insert_bulk); jl_lease_find does not see them
 * meanwhile. The second call answers 0 or DLS_ERR_NOMEM. */
int jl_ledger_bulk(dls_judge *j, bool on);

uint32_t jl_lease_find(const dls_judge *j, uint64_t id);
/* The same in two steps, so a caller can prefetch a run of lookups:
 * jl_lease_hash, then jl_lease_prefetch, then jl_lease_find_h. */
uint32_t jl_lease_hash(const dls_judge *j, uint64_t id);
void jl_lease_prefetch(const dls_judge *j, uint32_t h);
uint32_t jl_lease_find_h(const dls_judge *j, uint64_t id, uint32_t h);
uint32_t jl_subject_find(const dls_judge *j, const uint8_t *p, size_t n);
/* Finds or adds the subject; 0 or DLS_ERR_NOMEM. */
int jl_subject_get(dls_judge *j, const uint8_t *p, size_t n, uint32_t *idx);
/* The same in steps, so a loader can prefetch ahead: jl_subject_hash,
 * jl_subject_prefetch, then jl_subject_get_h with that hash. */
uint32_t jl_subject_hash(const dls_judge *j, const uint8_t *p, size_t n);
void jl_subject_prefetch(const dls_judge *j, uint32_t h);
int jl_subject_get_h(dls_judge *j, const uint8_t *p, size_t n, uint32_t h, uint32_t *idx);
/* Frees the subject when nothing refers to it any more. */
void jl_subject_release(dls_judge *j, uint32_t s);
/* Interns a party name; 0 or DLS_ERR_NOMEM / DLS_ERR_INVAL. */
int jl_party_get(dls_judge *j, const uint8_t *name, size_t n, uint32_t *idx);
/* The last counted proposal seq of a party on a medium (0: none), and set. */
uint64_t jl_pseq_get(const dls_judge *j, uint32_t party, uint16_t medium);
int jl_pseq_set(dls_judge *j, uint32_t party, uint16_t medium, uint64_t seq);

typedef struct jl_terms {
    uint64_t id;
    uint32_t subject;
    uint32_t holder;
    dls_mode mode;
    uint64_t duration_ns;
    uint64_t max_ns;
    uint16_t medium;
    uint64_t now;           /* tenure start and last relevant observation */
} jl_terms;

/* Enters a lease in the ledger (not in the deadline heap: the caller pushes
 * it with jl_schedule, or leaves it for the first pass after a replay). */
int jl_lease_add(dls_judge *j, const jl_terms *t, uint32_t *idx);
/* Removes a lease from the ledger (and heap); its subject may be freed by
 * the caller. */
void jl_lease_remove(dls_judge *j, uint32_t idx);

/* Brings a lease's evidence state up to its medium's gap epoch. */
void jl_normalize(dls_judge *j, jl_lease *l);
/* The lower bound of the reading at which the lease can fall due. */
uint64_t jl_deadline(const dls_judge *j, const jl_lease *l);
/* The key of a lease not due at now: its deadline, the silence part held
 * back while its failing medium suspends it once silence holds
 * (*suspended says so). */
uint64_t jl_next_key(const dls_judge *j, const jl_lease *l, uint64_t now, bool *suspended);
/* Sorts a vector of lease refs by ascending lease id. */
void jl_sort_by_id(dls_judge *j, jvec *v);
/* Pushes or re-keys the lease in the deadline heap. */
int jl_schedule(dls_judge *j, uint32_t idx, uint64_t key);
/* Is silence judgement of this lease suspended at now (failing medium)? */
bool jl_suspended(const dls_judge *j, const jl_lease *l, uint64_t now);
/* The first cause that holds at now (judge.md step 3), or DLS_CAUSE_NONE. */
dls_cause jl_classify(dls_judge *j, jl_lease *l, uint64_t now);
/* The remaining term of a lease at now (Grant policy). */
uint64_t jl_remaining(dls_judge *j, jl_lease *l, uint64_t now);

/* Waiters (policy.c uses them). */
int jl_waiter_add(dls_judge *j, uint32_t subject, const jl_prop *p, uint64_t now,
                  uint64_t bound, jl_waiter **out);
/* Unlinks and frees a waiter (from its queue and the waiter heap). */
void jl_waiter_remove(dls_judge *j, jl_waiter *w);

size_t jl_memory(const dls_judge *j);

/* ---- apply.c: step 2, shared with replay ----------------------------------------- */

/* Applies one record read from lease-fact medium `mi` at `now`. In replay,
 * proposals are recorded as unanswered (j->props + j->prop_index). */
int ja_apply(dls_judge *j, uint16_t mi, const uint8_t *rec, size_t n, uint64_t now,
             bool replay);
/* The live pass's way into ja_apply for a run of records from one medium:
 * a record of one fact (facts_in: ja_facts of it) and up to JA_RUN_RECORD
 * bytes is copied, attributed and decoded now and applied by the next
 * ja_run_flush (at the latest when the run is full); any other record
 * flushes the run, then is applied. The caller flushes before anything
 * that must follow the records in order (a gap, the end of the medium's
 * drain). Answers as ja_apply. */
int ja_run_add(dls_judge *j, uint16_t mi, const uint8_t *rec, size_t n, uint64_t now,
               size_t facts_in);
int ja_run_flush(dls_judge *j);
void ja_run_free(dls_judge *j);
/* The facts a record counts for in the drain budget: a batch's count, else
 * one (judge.md rev 4, step 2). */
size_t ja_facts(const uint8_t *rec, size_t n);
/* A gap on medium mi at now. */
void ja_gap(dls_judge *j, uint16_t mi, uint64_t now);
void jl_prop_free(jl_prop *p);
/* Replay: a grant or refusal on the journal answered (holder, proposal).
 * `lost`: the proposal may be on a medium whose history the replay lost;
 * then, when the replay did not read it, it is remembered in j->answered.
 * 0 or DLS_ERR_NOMEM. */
int ja_answered(dls_judge *j, dls_bytes holder, dls_bytes proposal, bool lost);
/* Drops answered proposals from j->props once they are most of it,
 * rebuilding j->prop_index (a standby's replay between steps). */
int ja_props_compact(dls_judge *j);

/* ---- journal.c -------------------------------------------------------------- */

/* Appends the pass mark (step 4) to the batch. */
int jj_mark(dls_judge *j);
/* Adds one grantor fact to the batch, the owed mark first. */
int jj_fact(dls_judge *j, const dls_fact *f);
/* Appends the batch (one append, one sync); failure is fatal. */
int jj_flush(dls_judge *j);
/* Records the journal failure that made the judge fatal (dls_judge_journal_failure). */
void jj_failed(dls_judge *j, int code, const dls_where *w);
/* Locks the journal itself (flock on its inode) for the judge's lifetime. */
int jj_lock_journal(dls_judge *j, const char *path, dls_where *w);
int jj_lock(dls_judge *j, const char *path, dls_where *w);
void jj_unlock(dls_judge *j);

/* ---- policy.c: step 7 ------------------------------------------------------- */

int jp_answer_and_grant(dls_judge *j, uint64_t now);
/* Tells the owner the outcomes of this pass's unsolicited grant requests
 * (call once the pass's records are appended ok). */
void jp_tell_owner(dls_judge *j);
/* A lease granted (journal record added, ledger entered). */
int jp_grant(dls_judge *j, const jl_prop *p, uint32_t subject, dls_duration d,
             uint64_t now, uint64_t *lease);

/* ---- replay.c --------------------------------------------------------------- */

/* Rebuilds the ledger from the journal (judge.md, Restart). 0 for an empty
 * journal; DLS_ERR_JOURNAL with w naming the position and reason. Leaves
 * j->last_pass, j->prev_now, j->highest, the cursors' start positions in
 * `starts` (one per medium) and the unanswered proposals in j->props. */
int jr_replay(dls_judge *j, uint64_t *starts, dls_where *w);
/* The same replay in steps, kept alive between them (a standby judge,
 * judge.md rev 5): jr_begin sets it up (from a loaded checkpoint when
 * there is one) with `starts` owned by the caller until jr_end; each
 * jr_step applies what the journal gained up to where it blocks — the
 * newest mark too, unless `settle` is false and the mark may continue in
 * a record not yet readable (its record filled to the limit); jr_end
 * (ok) does what a restart does once the journal is read (unanswered
 * proposals kept in drain order, the last pass and now, failing runs)
 * and frees the state, which jr_drop frees alone. */
int jr_begin(dls_judge *j, uint64_t *starts, dls_where *w);
int jr_step(dls_judge *j, bool settle, dls_where *w);
void jr_end(dls_judge *j, bool ok);
void jr_drop(dls_judge *j);
/* A standby's inputs against the journal's newest mark: its basis and
 * its media (the mark's drained list: the same ids in the same order).
 * 0 or DLS_ERR_CONFIG with w. No mark read yet: 0. */
int jr_check_inputs(dls_judge *j, dls_where *w);
/* The journal position read up to (*position), and the now of the newest
 * mark read when it is on the judge's basis (true; false: no such mark). */
bool jr_newest_mark(const dls_judge *j, uint64_t *now, uint64_t *position);
/* The journal position applied up to and the last pass applied; the
 * records, bytes and pass marks after it (read now, not applied). */
int jr_behind(dls_judge *j, uint64_t *applied, uint64_t *pass, uint64_t *records,
              uint64_t *bytes, uint64_t *passes);
/* A resolver that verifies the journal's records: the grantor's Ed25519
 * key, bound to the journal's medium id (replay, restart from a checkpoint,
 * pruning by commits). 0, DLS_ERR_NOMEM or a keyring/resolver error. */
int jr_grantor_verifier(const dls_judge *j, dls_resolver **out);

/* ---- assembly.c, standby.c ------------------------------------------------------ */

/* Restart's refusal of a journal shorter than the holders' evidence, and
 * the media cursors at their starts (assembly.c). */
int jx_check_evidence(dls_judge *j, const uint64_t *starts, dls_where *w);
int jx_open_cursors(dls_judge *j, const uint64_t *starts);
/* A standby's assembly after copy_assembly: refusals, the one lock try,
 * the replay from a checkpoint or the start (standby.c). */
int js_assemble(dls_judge *j, const dls_judge_settings *s, dls_where *w);
/* A standby's step: follows the journal, tries the lock; on takeover the
 * handle is the judge when it returns (j->standby false). */
int js_step(dls_judge *j);
/* DLS_ERR_STATE on a standby: it never appends or acts for the owner. */
int js_refuse(const dls_judge *j);

/* ---- checkpoint.c, checkpoint_load.c, checkpoint_prune.c --------------------- */

/* The default checkpoint folder: the journal's path + ".ckpt" (malloc'd;
 * NULL when out of memory). */
char *jc_default_dir(const dls_judge *j);

/* The committed checkpoint numbers in dir (files `<n as 20 digits>.dls`),
 * newest first, pushed onto v. 0 for none or a missing dir. */
int jc_list_dir(const char *dir, jvec *v);

/* Restart from the newest committed checkpoint in s->checkpoint_dir whose
 * digest matches (judge.md rev 4, Checkpoints): loads the ledger, sets the
 * media's start positions in `starts` and j->ck_loaded / ck_next for
 * jr_replay. 0 whether or not one was loaded. */
int jc_restart(dls_judge *j, const dls_judge_settings *s, uint64_t *starts, dls_where *w);

#endif
