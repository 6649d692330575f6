/* daolease — the judge (spec: judge.md).
 *
 * The judge is a sans-IO step function embedded in the process that
 * possesses the leased resources. It reads no clock and starts no thread:
 * the owner's own loop calls dls_judge_pass() at its declared cadence; time
 * comes only from the tick streams. Each pass
 *
 *   1. drains every tick cursor (the newest reading is *now*),
 *   2. drains every lease-fact medium (attribution, renewals, releases,
 *      proposals, gaps, end, transport-error),
 *   3. classifies every due lease (pending, release, cap, policy, silence),
 *   4. appends the pass mark when one is owed,
 *   5. reclaims each due lease through the owner's reclaim procedure,
 *   6. records `lapsed` for each reclaim that succeeded,
 *   7. answers waiters and proposals and authors the owner's grants,
 *
 * and returns what it did and the next reading at which anything can fall
 * due (dls_judge_pass_result.next_due), like ngtcp2_conn_get_expiry.
 *
 * Usage (see docs/judge.md and docs/examples/owner_loop.c):
 *
 *     dls_judge_settings s;
 *     dls_judge_settings_default(&s);
 *     s.grantor = secret;            (Ed25519, e.g. from dls_secret_load)
 *     s.journal = journal;           (a file medium opened for append, sync data)
 *     s.ticks = &tick; s.nticks = 1;
 *     s.media = media; s.nmedia = n;
 *     s.tolerance_ns = 250 * DLS_MS; s.cadence_ns = 1000 * DLS_MS;
 *     dls_judge_callbacks cb = { .reclaim = my_reclaim };
 *     dls_judge *j;
 *     dls_where w;
 *     if (dls_judge_new(&j, &s, &cb, owner, &w)) ... report w.reason
 *     for (;;) {
 *         dls_judge_pass_result r;
 *         int rc = dls_judge_pass(j, &r);
 *         if (dls_err_is_fatal(rc)) break;   (poisoned: restart from the journal)
 *         ... sleep until the tick stream passes r.next_due, at most cadence
 *     }
 *     dls_judge_del(j);
 *
 * Threads: a judge belongs to one thread at a time. Callbacks run on the
 * thread calling dls_judge_pass() and must not call back into the judge
 * (DLS_ERR_REENTRANT).
 */
#ifndef DAOLEASE_JUDGE_H
#define DAOLEASE_JUDGE_H

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

#define DLS_MS 1000000ull                /* nanoseconds in a millisecond */
#define DLS_JUDGE_MEDIA_MAX 1024         /* lease-fact media per judge */
#define DLS_JUDGE_UNSET UINT64_MAX       /* a required duration not given */
#define DLS_JUDGE_NEVER UINT64_MAX       /* next_due when nothing can fall due */
#define DLS_JUDGE_NO_MEDIUM UINT32_MAX

/* ---- assembly ------------------------------------------------------------ */

/* One tick stream. The judge creates its own cursor on `medium` at `from`
 * (tick cursors start afresh on every start: only the newest reading
 * matters). Only ticks that `resolver` attributes to `adapter` count; a
 * tick from anyone else is ignored (a forged huge reading would otherwise
 * reclaim everything). `basis` names the clock the readings come from (for
 * a monotonic clock: the boot id and the clock's name); all tick sources
 * of a judge must declare the same basis. All pointers are borrowed: the
 * medium and resolver must outlive the judge; the strings are copied. */
typedef struct dls_judge_tick_source {
    dls_medium *medium;
    dls_resolver *resolver;
    const char *adapter;
    const char *basis;
    uint64_t from;
} dls_judge_tick_source;

/* One lease-fact medium and its resolver (bound to it), both borrowed for
 * the judge's lifetime. The judge creates its own cursor (at 0 on a new
 * journal, at the last pass mark's drained position on restart). The
 * index of a medium in dls_judge_settings.media is its assembly index. */
typedef struct dls_judge_medium {
    dls_medium *medium;
    dls_resolver *resolver;
} dls_judge_medium;

/* Settings; dls_judge_settings_default() sets every default below.
 *
 *   grantor           NULL   required: the grantor's secret, Ed25519 (a MAC
 *                            key is refused); its name is the grantor's party
 *                            name. Borrowed for the judge's lifetime.
 *   journal           NULL   required: the grantor's stream, opened for
 *                            append, retaining everything (or a segmented
 *                            medium without a bound, trimmed only by
 *                            dls_judge_trim_journal), sync data or
 *                            group. Borrowed for the judge's lifetime. An
 *                            empty journal starts a new ledger; a journal
 *                            with records is replayed (restart).
 *   journal_lock_path NULL   NULL: the journal itself is locked (flock on
 *                            the file, or on a segmented journal's folder,
 *                            for the judge's lifetime), so that one judge at
 *                            a time holds it through whatever path it was
 *                            opened by (a symlink, a hard link). Else this
 *                            file is locked instead (OFD lock, exclusive):
 *                            required for journals that are neither files
 *                            nor on Redis. A journal of the Redis backend
 *                            is fenced by <key>:writer (dls_redis_fence).
 *   ticks, nticks     NULL,0 required: one or more tick sources.
 *   media, nmedia     NULL,0 the lease-fact media (0 … 1024), assembly order.
 *   tolerance_ns      unset  required (may be 0): covers flight and skew.
 *   cadence_ns        unset  required (> 0): the longest interval between
 *                            completed passes the owner declares.
 *   default_duration  {s:10} granted when a proposal asks for none.
 *   min_duration      {ns:0} asks below are clipped up to it (0: no bound).
 *   max_duration      {ns:0} asks above are clipped down to it (0: no bound).
 *   tenure_max        {ns:0} the `max` written on every grant: the cap on
 *                            total tenure (0: grants carry no max).
 *   lock_delay_ns     0      keep a subject ungranted this long after a
 *                            reclaim by silence or cap (never after release).
 *   drain_budget      20000  facts per lease-fact medium per pass (each
 *                            fact of a batch envelope counts one; a batch
 *                            is never split: one that would pass the rest
 *                            of the budget waits for the next pass unless
 *                            it is the medium's first record of the pass).
 *                            A medium with records left once the budget is
 *                            used up counts as failing (`behind`); one that
 *                            is blocked right then is drained (0: no
 *                            budget).
 *   drain_per_s       0      the budget sized to the ticks (judge.md, The
 *                            pass, step 2; docs/judge.md, Overload): a
 *                            pass whose now is T after the previous pass's
 *                            drains up to drain_per_s × T facts a medium
 *                            (T at most the cadence) when that exceeds
 *                            drain_budget, so a pass slowed by anything
 *                            but its own drain (a journal sync, the CPU
 *                            taken by others) does not cap what the judge
 *                            drains a second at drain_budget a pass. At
 *                            most 10^9; 0: the fixed drain_budget. Ticks
 *                            are data: the same inputs drain the same.
 *   hash_key          NULL   16 bytes keying the hash tables (NULL: random).
 *                            Nothing written depends on it.
 *   lost_ledger       false  the journal follows a lost one (judge.md,
 *                            Restart, Lost ledger; revision 4). On a new,
 *                            empty journal every lease id is above
 *                            lease_floor and media[i] is read from from[i]
 *                            (from NULL: each medium's end at assembly);
 *                            both are recorded in the first pass mark
 *                            ("dao.judge/floor", "dao.judge/from") and every
 *                            restart replay honours them. Ignored on a
 *                            journal with records (its first mark says).
 *   lease_floor       0      the largest lease id the lost journal minted.
 *   from              NULL   nmedia starting positions, assembly order.
 *   checkpoint_dir    NULL   restart from the newest committed checkpoint
 *                            in this folder whose digest matches, then the
 *                            journal after it (judge.md rev 4, Checkpoints;
 *                            include/daolease/checkpoint.h). NULL: full
 *                            replay from the journal's start.
 *   standby           false  a standby judge (judge.md rev 5, Standby judges;
 *                            docs/standby.md): assembled with exactly the
 *                            inputs of the judge that owns the journal, it
 *                            takes no writer lock (it tries it once without
 *                            blocking), replays the journal as a restart
 *                            does and, at every dls_judge_pass, applies what
 *                            the journal gained; it never appends, never
 *                            calls reclaim, the policy or the grant
 *                            callbacks and answers no proposal. It takes
 *                            over when it obtains the journal's writer lock
 *                            (the kernel frees it when the owning process
 *                            ends): it then reads the journal to its end
 *                            and runs that same pass as a restarted judge,
 *                            its mark carrying "dao.judge/takeover".
 *                            File and segmented journals, and journals
 *                            locked by journal_lock_path. A Redis journal
 *                            (opened for append) or JetStream journal
 *                            (exclusive for append) has no such lock: the
 *                            standby presumes its judge gone takeover_after
 *                            past the newest mark, fences, then takes over
 *                            (docs/standby.md, Remote journals). One with
 *                            lost_ledger is refused.
 *   heartbeat_ns      0      an active judge also owes a pass mark on any
 *                            pass whose now is at least this after the now
 *                            of its last mark (0: no heartbeat), so a quiet
 *                            journal shows its judge alive.
 *   takeover_after_ns unset  a remote journal's presumed-abandoned delay in
 *                            readings (unset: 3 × heartbeat + tolerance).
 *                            Kept for remote journals; a file journal's
 *                            takeover never waits for it.
 *   takeover_sync     data   a standby may follow a file or segmented
 *                            journal opened for read (the owning judge may
 *                            hold its stream writer lock for its lifetime,
 *                            as `daolease judge` does); taking over, it then
 *                            opens the journal for append itself, by its
 *                            name, `exclusive` (the stream writer lock held
 *                            for the judge's lifetime), with this sync (not
 *                            none), and owns that handle.
 */
typedef struct dls_judge_settings {
    const dls_secret *grantor;
    dls_medium *journal;
    const char *journal_lock_path;
    const dls_judge_tick_source *ticks;
    size_t nticks;
    const dls_judge_medium *media;
    size_t nmedia;
    uint64_t tolerance_ns;
    uint64_t cadence_ns;
    dls_duration default_duration;
    dls_duration min_duration;
    dls_duration max_duration;
    dls_duration tenure_max;
    uint64_t lock_delay_ns;
    size_t drain_budget;
    const uint8_t *hash_key;
    bool lost_ledger;
    uint64_t lease_floor;
    const uint64_t *from;
    const char *checkpoint_dir;
    bool standby;
    uint64_t heartbeat_ns;
    uint64_t takeover_after_ns;
    dls_sync takeover_sync;
    size_t drain_per_s;
} dls_judge_settings;

/* Fills *s with the defaults listed above. */
DLS_EXPORT void dls_judge_settings_default(dls_judge_settings *s);

/* What the reclaim procedure answers. */
typedef enum dls_reclaim_answer {
    DLS_RECLAIM_DONE = 0,    /* the resource was taken back */
    DLS_RECLAIM_NOT_YET = 1, /* retry next pass */
    DLS_RECLAIM_FAILED = 2   /* failed: the lease stays pending, retried next pass */
} dls_reclaim_answer;

/* A proposal (or an owner's unsolicited request) the grant policy answers. */
typedef struct dls_judge_ask {
    dls_bytes subject;        /* encoded subject value */
    dls_bytes holder;         /* the proposing party's name */
    dls_bytes proposal;       /* encoded proposal id (empty for unsolicited) */
    uint32_t medium;          /* assembly index of the medium it arrived on */
    bool has_duration;        /* the proposal asked for a duration */
    dls_duration duration;
    bool has_mode;
    dls_mode mode;
    uint64_t now;
    /* the subject as the ledger holds it */
    uint32_t live_exclusive;  /* live (or pending) exclusive leases */
    uint32_t live_shared;     /* live (or pending) shared leases */
    uint32_t waiters;         /* proposals waiting for it */
    bool reentrant;           /* the holder holds or waits for it already */
    bool delayed;             /* in a lock-delay */
    uint64_t largest_remaining_ns; /* the default policy's waiter bound */
} dls_judge_ask;

typedef enum dls_judge_verdict {
    DLS_JUDGE_GRANT = 0,      /* grant now (the judge still refuses a double grant) */
    DLS_JUDGE_WAIT,           /* queue FIFO with `bound_ns` */
    DLS_JUDGE_REFUSE          /* refuse with `reason` */
} dls_judge_verdict;

typedef struct dls_judge_answer {
    dls_judge_verdict verdict;
    dls_duration duration;    /* GRANT: the granted duration (unit kept) */
    uint64_t bound_ns;        /* WAIT: the waiter's bound from now */
    const char *reason;       /* REFUSE: static text, <= 256 bytes */
} dls_judge_answer;

/* A lease as the ledger holds it (dls_judge_lease). */
typedef enum dls_evidence { DLS_EVIDENCE_KNOWN = 0, DLS_EVIDENCE_UNKNOWN } dls_evidence;

typedef struct dls_judge_lease_info {
    uint64_t lease;
    dls_bytes subject;        /* borrowed from the ledger until the next call */
    dls_bytes holder;         /* borrowed likewise */
    dls_mode mode;
    uint64_t duration_ns;
    uint64_t max_ns;          /* 0: no cap */
    uint32_t medium;          /* assembly index, DLS_JUDGE_NO_MEDIUM if absent */
    uint64_t tenure_start;
    uint64_t last_observation;/* last relevant observation */
    uint64_t last_seq;
    bool released;
    bool commit;
    bool ended;               /* the owner ended it (policy) */
    dls_evidence evidence;
    uint64_t resumed;         /* resumed reading when evidence is unknown */
    bool pending;
    dls_cause cause;          /* the pending cause */
} dls_judge_lease_info;

/* Callbacks; members are required or optional as stated. */
typedef struct dls_judge_callbacks {
    /* Required. Takes the resource back (idempotent). `commit` is true only
     * with cause DLS_CAUSE_RELEASE and a release carrying commit. Answers a
     * dls_reclaim_answer; any other value counts as DLS_RECLAIM_FAILED. It
     * must not call back into the judge (those calls answer
     * DLS_ERR_REENTRANT). */
    int (*reclaim)(void *user_data, dls_bytes subject, uint64_t lease,
                   dls_cause cause, bool commit);
    /* Optional: replaces the default grant policy's decision for each
     * proposal answered in step 7 (judge.md, Grant policy). The judge keeps
     * FIFO service of waiters, bound refusals ("unavailable"), the journal
     * rules and exclusivity: a GRANT for a subject that cannot be granted
     * becomes a WAIT with the default bound. `answer` arrives holding the
     * default policy's answer, so a policy that only refuses some subjects
     * returns 0 leaving the others unchanged. Returns 0, or non-zero to make
     * the judge refuse the proposal with reason "policy". */
    int (*policy)(void *user_data, const dls_judge_ask *ask, dls_judge_answer *answer);
    /* Optional: the outcome of an unsolicited grant request: the lease id,
     * or 0 and DLS_ERR_HELD when the subject was held at step 7. Called at
     * the end of the pass, in request order, once the grant is on the
     * journal (never for a grant whose append failed). */
    void (*unsolicited)(void *user_data, uint64_t ticket, uint64_t lease, int error);
    /* Optional: a lease was granted (answering a proposal or unsolicited),
     * with its terms as dls_judge_lease() fills them (slices borrowed for
     * the call). Called at the end of the pass, in grant order, once the
     * grant is on the journal (never for a grant whose append failed);
     * must not call back into the judge except to read it (dls_judge_lease,
     * include/daolease/judge_view.h). */
    void (*granted)(void *user_data, const dls_judge_lease_info *lease);
    /* Optional (standby judges): the standby took over the journal; `pass`
     * is the number its first pass as the judge will carry. Called inside
     * dls_judge_pass once the journal is read to its end, before that
     * first pass runs; from then on the handle is the judge. */
    void (*took_over)(void *user_data, uint64_t pass);
} dls_judge_callbacks;

typedef struct dls_judge dls_judge;

/* Creates a judge: checks the assembly, takes the journal lock, and replays
 * an existing journal (restart). The settings are copied (strings and
 * arrays); media, resolvers, the grantor's secret and the journal are
 * borrowed and must outlive the judge. On failure `w` (optional) holds a
 * sentence naming what was refused (w->offset: the index of the offending
 * tick source or medium, or the journal position for DLS_ERR_JOURNAL).
 *
 * Errors:
 *   DLS_ERR_NO_GRANTOR      no grantor secret, or an empty name
 *   DLS_ERR_KEYKIND         the grantor's key is a MAC key
 *   DLS_ERR_NO_JOURNAL      no journal
 *   DLS_ERR_STATE           the journal is not opened for append
 *   DLS_ERR_RETENTION       a journal that drops records on its own
 *                           (dls_medium_evicts), or a
 *                           medium neither retaining everything nor evict-oldest
 *   DLS_ERR_JOURNAL_SYNC    a journal opened with sync `none`
 *   DLS_ERR_JOURNAL_LOCKED  another judge holds the journal's lock (or, for
 *                           a Redis journal, its <key>:writer fence)
 *   DLS_ERR_CONFIG          a journal neither a file nor on Redis without
 *                           journal_lock_path;
 *                           tolerance or cadence unset; cadence 0; invalid
 *                           durations (default 0, min > max)
 *   DLS_ERR_NO_TICKS        no tick source, or one without medium/adapter/basis
 *   DLS_ERR_NORESOLVER      a tick source or medium without resolver
 *   DLS_ERR_RESOLVER_MEDIUM a resolver bound to another medium
 *   DLS_ERR_BASIS           tick sources on different reading bases
 *   DLS_ERR_TOO_MANY_MEDIA  more than 1024 lease-fact media
 *   DLS_ERR_DUPLICATE       one medium id listed twice
 *   DLS_ERR_NO_RECLAIM      no reclaim callback
 *   DLS_ERR_JOURNAL         the journal does not replay (a record not signed
 *                           by the grantor, pass numbers not increasing, a
 *                           malformed pass mark)
 *   DLS_ERR_JOURNAL_SHORT   the journal is shorter than the holders'
 *                           evidence: a lease-fact medium carries a
 *                           verified renewal or release for a lease id
 *                           above every id the journal granted (and above
 *                           lease_floor) — the journal was lost or cut
 *                           back; w->offset is the medium's index. Start a
 *                           new journal with the lost-ledger procedure.
 *   DLS_ERR_CONFIG          also: the journal listed as a lease-fact medium;
 *                           lease_floor above 2^63-1
 *   DLS_ERR_IO              the journal (or the lock file) cannot be opened
 *                           to lock it (w->sys_errno)
 *   DLS_ERR_NOMEM, DLS_ERR_SODIUM, DLS_ERR_INVAL (out or s NULL)
 *
 * A standby (s->standby) is refused, besides, with DLS_ERR_CONFIG when
 * lost_ledger is set; on a Redis journal not opened for append, a
 * JetStream journal not opened exclusive for append, with
 * journal_lock_path, or with neither heartbeat nor takeover_after; and when its inputs differ from the journal's: its reading basis is not
 * the newest mark's, or its lease-fact media are not the newest mark's
 * drained list (the same ids, in the same assembly order); another grantor
 * is refused by the replay (DLS_ERR_JOURNAL). */
DLS_EXPORT int dls_judge_new(dls_judge **out, const dls_judge_settings *s,
                             const dls_judge_callbacks *cb, void *user_data,
                             dls_where *w);

/* Releases the journal lock and frees the judge (the borrowed media are
 * left open). NULL-safe. Never called from a callback. */
DLS_EXPORT void dls_judge_del(dls_judge *j);

/* ---- the pass -------------------------------------------------------------- */

/* What one pass did (judge.md, Counters). */
typedef struct dls_judge_pass_result {
    bool has_now;             /* false before the first tick: nothing was done */
    uint64_t now;             /* this pass's now (ns on the reading basis) */
    uint64_t pass;            /* this pass's number (0 without a now) */
    bool mark;                /* a pass mark was appended */
    bool cadence_overrun;     /* now − previous now > cadence */
    bool restarted;           /* the first pass after a start */
    uint64_t drained;         /* records drained from lease-fact media */
    uint64_t ticks;           /* tick records drained */
    uint64_t defective[8];    /* defective facts by rule (index 1 … 7) */
    uint64_t forged;          /* records attributed to nobody */
    uint64_t ignored_misplaced;     /* a kind that does not belong on the medium,
                                       or a lease's fact on another medium */
    uint64_t ignored_wrong_author;
    uint64_t ignored_replayed;
    uint64_t ignored_unknown_lease;
    uint64_t not_lease;       /* maps that are not lease facts */
    uint64_t granted;
    uint64_t refused;
    uint64_t lapsed[5];       /* by dls_cause (index 1 … 4) */
    uint64_t newly_due;
    uint64_t pending;         /* leases pending after the pass */
    uint64_t reclaim_failed;  /* reclaim calls answering not yet or failed */
    uint64_t late_renewals;
    uint64_t gaps;
    uint64_t transport_errors;/* media that failed (budget cuts included) */
    uint64_t budget_cuts;     /* = behind */
    uint64_t appended;        /* journal records appended */
    uint64_t live;            /* leases in the ledger after the pass */
    uint64_t waiting;         /* proposals waiting after the pass */
    uint64_t next_due;        /* the next reading at which anything can fall
                                 due; <= now: call again at the next
                                 opportunity; DLS_JUDGE_NEVER: nothing can */
    uint64_t facts;           /* facts the drained records carry (each fact
                                 of a batch envelope counts one, verified or
                                 not): what the drain budget counts */
    uint64_t batches;         /* attributed batch envelopes among the records */
    uint64_t behind;          /* media not fully drained this pass: the drain
                                 budget (in facts) was used up with records
                                 left; listed in the mark's errors */
    bool standby;             /* a standby followed the journal: no pass ran
                                 (has_now and now tell the newest reading;
                                 pass is the journal's last pass applied) */
    bool took_over;           /* this call took over the journal: the pass
                                 that followed (when ticks gave a now) is
                                 the first pass of a restarted judge */
    uint64_t renewals;        /* renewals counted for their lease (a seq
                                 above the last, by its holder, on its
                                 medium; judge.md, Evidence), late or not */
    uint64_t late_reclaims;   /* leases lapsed at this pass that fell due at
                                 an earlier one (their reclaim answered not
                                 yet or failed before; judge.md, audit
                                 reports: late reclaim) */
} dls_judge_pass_result;

/* Runs one pass (judge.md, The pass) and fills *r (optional).
 * Returns 0; DLS_ERR_TICKS_ENDED on every pass after the last tick cursor
 * was retired (nothing is done); DLS_ERR_REENTRANT from a callback.
 *
 * Fatal means one thing: a code for which dls_err_is_fatal() is true. A
 * step that fails leaves the ledger untrusted, so the pass poisons the
 * handle and answers a fatal code: DLS_ERR_JOURNAL_WRITE when a journal
 * append or sync failed, DLS_ERR_FATAL_NOMEM when an allocation failed,
 * DLS_ERR_FATAL_STEP for any other failure inside a step; every later call
 * (pass, end, grant, lost_ledger) answers DLS_ERR_FATAL. The owner then
 * deletes the handle and starts a new judge on the same journal (restart
 * replays what landed). A non-fatal code never poisons the handle.
 *
 * On a standby (settings.standby) the call drains the ticks, applies what
 * the journal gained since the last call (reading each lease-fact medium
 * only up to the positions the marks record), sets r->standby, and tries
 * the writer lock once without blocking; when it obtains it the standby
 * takes over (r->took_over, the took_over callback) and, given a now, runs
 * the first pass of a restarted judge in the same call. A standby's
 * next_due is now + cadence. A journal record that does not replay is
 * fatal for the standby as for a restart. */
DLS_EXPORT int dls_judge_pass(dls_judge *j, dls_judge_pass_result *r);

/* ---- owner acts ------------------------------------------------------------ */

/* The owner ends a live lease: it becomes due with cause `policy` at the
 * next pass (unless an earlier cause holds). Errors: DLS_ERR_UNKNOWN_LEASE,
 * DLS_ERR_REENTRANT, DLS_ERR_FATAL. */
DLS_EXPORT int dls_judge_end(dls_judge *j, uint64_t lease);

/* An owner-requested unsolicited grant, authored at step 7 of the next pass
 * with a now, in request order, registered on media[medium].
 * `subject` is an encoded msgpack value (<= 1024 bytes), `holder` a party
 * name; `duration` NULL: the default duration; `mode` NULL: no mode key.
 * *ticket (optional) identifies the request in the unsolicited callback.
 * Errors: DLS_ERR_HELD when the subject is held now (also reported through
 * the callback when it is held at step 7), DLS_ERR_INVAL (a bad subject,
 * holder or medium), DLS_ERR_NOMEM, DLS_ERR_REENTRANT, DLS_ERR_FATAL. */
DLS_EXPORT int dls_judge_grant(dls_judge *j, dls_bytes subject, dls_bytes holder,
                               uint32_t medium, const dls_duration *duration,
                               const dls_mode *mode, uint64_t *ticket);

/* One resource the owner still possesses, for the lost-ledger procedure. */
typedef struct dls_judge_possession {
    dls_bytes subject;        /* encoded subject value */
    dls_bytes holder;         /* who had it (re-granted to them) */
    uint64_t lease;           /* the old lease id, 0 if unknown */
    uint32_t medium;          /* where the re-grant is registered */
    const dls_duration *duration; /* NULL: the default duration */
} dls_judge_possession;

/* The lost-ledger procedure (judge.md, Restart): for each possession, in
 * order, runs the reclaim procedure (cause `policy`, the old lease id) and,
 * when it answers done, requests an unsolicited re-grant to its holder on
 * this judge's (new, empty) journal; status[i] (optional) receives the
 * reclaim's answer. A new grant alone never ends a prior tenure, so nothing
 * is re-granted whose reclaim was not done. Errors: DLS_ERR_STATE when the
 * journal is not new (a judge that replayed a journal has its ledger) or a
 * pass already ran; DLS_ERR_INVAL; DLS_ERR_NOMEM; DLS_ERR_FATAL. */
DLS_EXPORT int dls_judge_lost_ledger(dls_judge *j, const dls_judge_possession *items,
                                     size_t n, int *status);

/* ---- introspection --------------------------------------------------------- */

/* Fills *info for a live lease. Errors: DLS_ERR_UNKNOWN_LEASE. */
DLS_EXPORT int dls_judge_lease(dls_judge *j, uint64_t lease, dls_judge_lease_info *info);

/* Live leases, the highest lease id minted, the last pass number. */
DLS_EXPORT size_t dls_judge_live(const dls_judge *j);
DLS_EXPORT uint64_t dls_judge_highest_lease(const dls_judge *j);
DLS_EXPORT uint64_t dls_judge_last_pass(const dls_judge *j);

/* What a restart with checkpoint_dir did (judge.md, Checkpoints: "a
 * checkpoint without that record, or whose digest differs, does not
 * exist"), newest first: each checkpoint it skipped and why, then the one
 * it loaded (none loaded: full replay). For the owner to warn about. */
typedef struct dls_judge_ckpt_note {
    uint64_t pass;     /* the checkpoint: <checkpoint_dir>/<pass as 20 digits>.dls */
    bool loaded;       /* true: the one loaded; false: skipped */
    const char *why;   /* skipped: a static sentence; loaded: NULL */
} dls_judge_ckpt_note;

/* The notes of the restart, borrowed until dls_judge_del; *n their count
 * (0 without checkpoint_dir or checkpoints). */
DLS_EXPORT const dls_judge_ckpt_note *dls_judge_checkpoint_notes(const dls_judge *j, size_t *n);

/* After DLS_ERR_JOURNAL_WRITE (judge.md, Failure of the journal): the
 * medium's own code for the failed append (DLS_ERR_IO, DLS_ERR_SHRUNK, …)
 * with *w (optional) its where/why — `offset` the byte offset or position
 * the medium names, `reason`, `sys_errno` (ENOSPC, EIO, …). 0 while the
 * journal has not failed. */
DLS_EXPORT int dls_judge_journal_failure(const dls_judge *j, dls_where *w);

/* Bytes the ledger holds (leases, subjects, tables, heaps, waiters). */
DLS_EXPORT size_t dls_judge_memory(const dls_judge *j);

/* ---- standby judges (judge.md rev 5, Standby judges) ---------------------- */

/* Where a standby is on the journal. */
typedef struct dls_judge_standby_info {
    bool standby;             /* still following (false: the judge) */
    bool took_over;           /* this handle took over the journal */
    bool holds_lock;          /* it holds the writer lock: it takes over at
                                 its next pass */
    uint64_t applied;         /* journal position read and applied up to */
    uint64_t journal_pass;    /* the last pass mark applied */
    uint64_t behind_records;  /* records on the journal after `applied` */
    uint64_t behind_bytes;    /* their bytes */
    uint64_t behind_passes;   /* pass marks among them (continuations not
                                 counted) */
    uint64_t steps;           /* standby passes so far */
    bool lost_race;           /* a remote takeover's first append was refused:
                                 another writer appended first; the handle
                                 stopped (fatal): assemble a standby again */
    uint64_t read_errors;     /* steps whose reading of a Redis or JetStream
                                 journal stopped at a transport error (read
                                 on at the next step) */
} dls_judge_standby_info;

/* Fills *info. The behind_* counts read the journal from `applied` to
 * its end now (O(what is behind); nothing is applied). On a judge that is
 * not a standby (or no longer one) they are 0. Errors: DLS_ERR_INVAL,
 * DLS_ERR_NOMEM. */
DLS_EXPORT int dls_judge_standby_status(dls_judge *j, dls_judge_standby_info *info);

#ifdef __cplusplus
}
#endif
#endif
