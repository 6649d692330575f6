/* daolease — the holder (spec: holder.md; attribution.md "Replay", "Gate 1").
 *
 * Holder code is linked into agents that claim shared work. Like the judge
 * it is a step function: the agent's own loop calls dls_holder_step();
 * nothing renews on the holder's behalf — no thread, no timer, no clock.
 * The holder learns time only from tick facts on its own tick cursor
 * (written by the tick adapter, include/daolease/tick.h).
 *
 * A typical loop (docs/examples/agent_loop.c is a complete program):
 *
 *     dls_holder_propose(h, subject, n, &ask, DLS_MODE_EXCLUSIVE, &ph);
 *     for (;;) {
 *         dls_tick_now(ticks, NULL);              // the adapter reads the clock
 *         dls_holder_step(h, &res);               // drains ticks and journal, renews
 *         ... look at res.events (granted, refused, lapsed, bound, ...) ...
 *         if (dls_holder_may_act(h, lease)) do_some_work(lease);   // lease id = fencing token
 *         ... sleep until res.next_reading (or a short cadence) ...
 *     }
 *     dls_holder_release(h, lease, true);
 *
 * THE BOUND. For a lease the holder observed, the bound is the earlier of
 *   (a) duration after the later of the reading at which it observed the
 *       grant and the reading taken BEFORE the append of its last renewal
 *       that a pass mark CONFIRMED (revision 4: a verified mark on the
 *       grantor's journal whose `drained` position for the holder's medium
 *       is beyond the renewal's position, no `gaps` entry covering it) —
 *       the append's own latency never stretches the window, and an ok
 *       append that the medium then lost, or a judge that stopped draining,
 *       can only make the holder stop early,
 *   (b) max after the reading at which it observed the grant (when the grant
 *       carries max).
 * dls_holder_may_act() answers false from the bound on, whatever the holder
 * hears afterwards (a lost lease never revives). A renewal is an append that
 * answered ok; any other outcome advances nothing; the renewal schedule runs
 * from ok appends, the bound only from confirmed ones. A lease named in a
 * mark's `due` list, and every lease when the journal cursor answers gap or
 * transport-error, is lost at once. The bound bounds attention, not access: pass the
 * lease id (the fencing token) to the resource with every write.
 *
 * Ownership: the holder borrows the media, cursors, resolvers and secret it
 * is assembled with; they must outlive it. One thread at a time per holder.
 *
 * A HOLDER BELONGS TO THE PROCESS THAT MADE IT. A child after fork() holds
 * a copy of the holder, its leases' ids and its medium's handle, but not
 * the right to act on those leases or to append in their name: a child's
 * release would end the parent's lease (the judge cannot tell the two
 * apart). The holder keeps the pid of its creator (getpid at
 * dls_holder_new; a pid, not a clock) and in any other process refuses
 * propose, step, release, forget, remaining and rebind with DLS_ERR_STATE
 * (dls_holder_message says whose it is) and answers may_act false.
 * dls_holder_del in the child frees its copy only (it appends nothing).
 * A child makes its own holder, on its own medium.
 */
#ifndef DAOLEASE_HOLDER_H
#define DAOLEASE_HOLDER_H

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

/* The size of a holder message buffer that always suffices (sizing
 * messages, refusal reasons). */
#define DLS_HOLDER_TEXT_MAX 320

typedef struct dls_holder dls_holder;

/* ---- sizing (holder.md, "Sizing") ------------------------------------------ */

/* What the holder is told about the judge and the path between them, for the
 * tolerance relation (holder.md: the judge's tolerance covers the grant's
 * flight to the holder, a renewal's flight to the judge, one tick period of
 * each side and the rate skew between the two tick streams). The library
 * cannot measure any of these: they are the composition's declared bounds.
 * All durations in ns. */
typedef struct dls_holder_tolerance {
    bool declared;              /* false: the tolerance relation is not checked */
    uint64_t tolerance_ns;      /* the judge's tolerance (may be 0) */
    uint64_t grant_flight_ns;   /* a grant's journal append → the holder's step reads it */
    uint64_t renewal_flight_ns; /* a renewal's ok append → the judge's pass can read it */
    uint64_t judge_tick_ns;     /* the judge's tick period (how stale its now can be) */
    uint32_t skew_ppm;          /* bound on the rate skew of the two tick streams, ppm */
} dls_holder_tolerance;

/* Settings. Defaults (dls_holder_settings_default):
 *   renew_interval_ns   0     a third of each granted duration (always below
 *                             half of it); a non-zero value is used for every
 *                             lease whose duration it fits (relation 2), else a
 *                             third of that duration, with a sizing warning
 *   tick_period_ns      0     the declared period of the holder's own tick
 *                             stream (how stale its readings can be); 0 =
 *                             not declared (relation 2 checked with 0)
 *   tolerance           not declared
 *   retention_ns        0     the retention window of the holder's medium when
 *                             it evicts (as time); 0 = not declared
 *   judge_lag_ns        0     the judge's lag (cadence + drain time); 0 = not
 *                             declared. Retention is checked when both are
 *                             declared and the medium is evict-oldest.
 *   journal_lag_ns      0     the journal's read lag: a mark's append → the
 *                             holder's step reads it (relation 5); 0 = not
 *                             declared (counted as 0)
 *   accept_unsolicited  true  accept unsolicited grants (no `proposal` key)
 *                             naming this holder whose lease id is above every
 *                             id seen in a verified grant, above lease_floor
 *                             and above every lease id it renewed or released
 *                             on its own medium before (dls_holder_new)
 *   lease_floor         0     lease ids at or below this are never accepted
 *                             unsolicited (persist the largest id seen to keep
 *                             replay protection across a journal cursor that
 *                             does not start at 0)
 *   max_proposals       64    outstanding proposals at once
 *   max_leases          64    leases tracked at once (held, bound, released
 *                             but not yet lapsed)
 *   journal_budget      0     journal records drained per step; 0 = no limit
 *   batch_max           1     facts one append may carry (1 ... 4096): a step
 *                             writes every renewal and retried release it owes
 *                             in one batch envelope (with a secret: one
 *                             signature, one append, one sync; attribution.md
 *                             rev 4) or, for bare facts, one batched append of
 *                             records, up to batch_max facts and the
 *                             65,536-byte record limit each. A single fact is
 *                             always a plain envelope (or bare fact). 1: never
 *                             batch — the default, because a revision-3 judge
 *                             counts a batch envelope as one forged record
 */
typedef struct dls_holder_settings {
    uint64_t renew_interval_ns;
    uint64_t tick_period_ns;
    dls_holder_tolerance tolerance;
    uint64_t retention_ns;
    uint64_t judge_lag_ns;
    uint64_t journal_lag_ns;
    bool accept_unsolicited;
    uint64_t lease_floor;
    size_t max_proposals;
    size_t max_leases;
    size_t journal_budget;
    size_t batch_max;
} dls_holder_settings;

/* Fills s with the defaults listed above. */
DLS_EXPORT void dls_holder_settings_default(dls_holder_settings *s);

/* The tolerance the judge needs for a lease of `duration_ns` and cap
 * `max_ns` (0: none) under the budget t (t->tolerance_ns is ignored):
 *   grant_flight + renewal_flight + judge_tick + holder_tick_ns
 *   + ceil(skew_ppm × max(duration, max) / 10^6),
 * saturating at UINT64_MAX. docs/holder.md has a worked example. */
DLS_EXPORT uint64_t dls_holder_tolerance_needed(const dls_holder_tolerance *t,
                                                uint64_t holder_tick_ns,
                                                uint64_t duration_ns,
                                                uint64_t max_ns);

/* The renewal interval the holder uses for a lease of `duration_ns` under s:
 * s->renew_interval_ns when non-zero and it keeps relation 2 (interval +
 * tick period below half the duration), else a third of the duration. */
DLS_EXPORT uint64_t dls_holder_interval_for(const dls_holder_settings *s,
                                            uint64_t duration_ns);

/* Checks the sizing relations of holder.md against s, for a lease of
 * `duration_ns` (0: only the relations that need no duration — the ones
 * checked at assembly) and `max_ns` (0: none):
 *   1. the duration exceeds twice the renewal interval;
 *   2. the renewal interval plus one tick period stays below half the
 *      duration;
 *   3. the judge's tolerance covers dls_holder_tolerance_needed() (when
 *      declared; without a duration, the terms that need none);
 *   4. the medium's retention window exceeds the judge's lag (when both are
 *      declared and `evicts` is true);
 *   5. (revision 4) the interval the holder uses (dls_holder_interval_for)
 *      plus judge_lag_ns, journal_lag_ns and tick_period_ns stays below the
 *      duration, so that a renewal is confirmed before the bound of the one
 *      before it (a warning at grant; never refuses a proposal).
 * Returns 0, or DLS_ERR_SIZING for the first relation that fails: w (may be
 * NULL) gets w->rule = the relation's number (1-5) and a static w->reason;
 * dls_holder_sizing_explain() writes the sentence naming the numbers.
 * DLS_ERR_INVAL when s is NULL. */
DLS_EXPORT int dls_holder_sizing_check(const dls_holder_settings *s,
                                       uint64_t duration_ns, uint64_t max_ns,
                                       bool evicts, dls_where *w);

/* The same check as dls_holder_sizing_check(), writing a sentence that
 * names the numbers of the first failing relation to buf (NUL-terminated,
 * truncated to cap; "" when all hold; buf may be NULL). DLS_HOLDER_TEXT_MAX
 * bytes always suffice. Same return values. */
DLS_EXPORT int dls_holder_sizing_explain(const dls_holder_settings *s,
                                         uint64_t duration_ns, uint64_t max_ns,
                                         bool evicts, char *buf, size_t cap);

/* ---- assembly --------------------------------------------------------------- */

/* What the holder is assembled from. Everything is borrowed and must outlive
 * the holder. Strings are copied. */
typedef struct dls_holder_parts {
    /* Required: the holder's party name (1–64 bytes, 0x21–0x7E or 0x80–0xFF):
     * the `holder` its grants name and the author of its records. */
    const char *name;
    /* Optional: the holder's secret. When given, its name must be `name`
     * and every record the holder appends is an envelope sealed with it for
     * `medium`. When NULL the holder appends bare facts (for a medium the
     * judge attributes with a `medium` resolver naming this holder). */
    const dls_secret *secret;
    /* Required: the holder's own medium, opened for append: its proposals,
     * renewals and releases go there (the medium its grants register). */
    dls_medium *medium;
    /* Required: the grantor's party name, and a cursor on the grantor's
     * journal with a resolver bound to the journal (a `signed` resolver whose
     * keyring holds the grantor's Ed25519 key). The holder counts only
     * envelopes signed (sig) by the grantor on that journal. */
    const char *grantor;
    dls_cursor *journal;
    dls_resolver *journal_resolver;
    /* Required: the holder's tick cursor, the resolver bound to its medium,
     * and the party name of the tick adapter allowed to write it (a tick from
     * anyone else is ignored). */
    dls_cursor *ticks;
    dls_resolver *tick_resolver;
    const char *tick_party;
} dls_holder_parts;

/* Optional owner callbacks; any member may be NULL. */
typedef struct dls_holder_callbacks {
    /* Optional: a sizing warning (a grant whose terms fail a sizing
     * relation), with DLS_ERR_SIZING and a message naming the numbers. The
     * same message is also reported as a DLS_HOLDER_SIZING event. Must not
     * call back into the holder. */
    void (*warn)(void *user_data, int code, const char *message);
} dls_holder_callbacks;

/* Assembles a holder. Reads the holder's own medium from position 0 first to
 * find its own last proposal `seq` (a holder restarting on an existing medium
 * continues above it) and the largest lease id it renewed or released there:
 * an unsolicited grant at or below that id is an earlier run's lease and is
 * never taken up again (its renewals would start over at seq 1, replays the
 * judge ignores). Only records attributed to this holder count.
 * The settings and callbacks are copied; `parts` are borrowed.
 *
 * Errors (w, may be NULL, gets a static w->reason for every error):
 * DLS_ERR_INVAL (a required part missing, a bad name, a secret whose name
 * is not `name`, settings out of range); DLS_ERR_NORESOLVER (a cursor
 * without a resolver); DLS_ERR_RESOLVER_MEDIUM (a resolver bound to another
 * medium than its cursor's); DLS_ERR_SIZING (a relation checkable without a
 * duration fails: tolerance budget or retention; w->rule names it, and
 * dls_holder_sizing_explain(s, 0, 0, evicts, ...) names the numbers);
 * DLS_ERR_TRANSPORT (the holder's medium could not be read back; w->offset
 * the position); DLS_ERR_NOMEM; DLS_ERR_SODIUM. */
DLS_EXPORT int dls_holder_new(dls_holder **out, const dls_holder_parts *parts,
                              const dls_holder_settings *s,
                              const dls_holder_callbacks *cb, void *user_data,
                              dls_where *w);

/* Moves the holder to a new journal of the same grantor (holder.md rev 4,
 * Sizing; judge.md "Lost ledger"): after the owner's lost-ledger procedure
 * the new journal grants above a lease-id floor, and the holder keeps what
 * it has seen (dls_holder_max_seen, its proposal seq, its medium), so it
 * accepts the unsolicited re-grant — an id above every id it has seen — and
 * its fencing tokens keep rising. On the new journal's first mark the holder
 * also raises what it has seen to the mark's `dao.judge/floor`.
 *
 * What the old journal granted cannot be renewed or confirmed on the new one:
 * a held lease keeps acting until its bound as confirmed so far and is never
 * renewed again (DLS_HOLDER_BOUND when it runs out); released leases are
 * forgotten; outstanding proposals are dropped (the new journal reads each
 * medium from its recorded starting position and answers nothing older:
 * propose again). The old cursor and resolver are no longer used (free them
 * after this call); the new ones are borrowed like the parts of
 * dls_holder_new. Errors: DLS_ERR_INVAL, DLS_ERR_NORESOLVER,
 * DLS_ERR_RESOLVER_MEDIUM (w->reason says which). */
DLS_EXPORT int dls_holder_rebind(dls_holder *h, dls_cursor *journal,
                                 dls_resolver *journal_resolver, dls_where *w);

/* Frees the holder (not the borrowed parts). NULL-safe. Appends nothing:
 * a lease not released lapses by silence at the judge. */
DLS_EXPORT void dls_holder_del(dls_holder *h);

/* ---- proposing ---------------------------------------------------------------- */

/* Appends a proposal for `subject` (one encoded msgpack value, 1–1024 bytes,
 * at most 7 levels deep: it is copied byte for byte into the fact) with a
 * fresh random 16-byte proposal id and the holder's next proposal seq.
 * `ask` (may be NULL) is the duration asked for; `mode` is written only when
 * shared (exclusive is the default when absent). On 0, *handle (may be NULL)
 * names the outstanding proposal in later events.
 *
 * Every attempt consumes a seq, so a proposal whose append failed but landed
 * is never repeated under the same seq.
 *
 * Errors: DLS_ERR_INVAL (subject not one value of the allowed size and
 * depth); DLS_ERR_SIZING (the ask fails a sizing relation; the message names
 * the numbers, dls_holder_message()); DLS_ERR_STATE (max_proposals
 * outstanding); DLS_ERR_OVERFLOW (seq exhausted); any append error of the
 * medium (DLS_ERR_SEALED, DLS_ERR_IO, ...) — nothing is outstanding then;
 * DLS_ERR_NOMEM. */
DLS_EXPORT int dls_holder_propose(dls_holder *h, const uint8_t *subject,
                                  size_t subject_len, const dls_duration *ask,
                                  dls_mode mode, uint64_t *handle);

/* ---- the step ------------------------------------------------------------------- */

typedef enum dls_holder_event_kind {
    DLS_HOLDER_GRANTED = 1,   /* a grant observed and accepted: `lease`, `proposal`
                                 (0 when unsolicited); may_act true until its bound */
    DLS_HOLDER_REFUSED,       /* a refusal ended `proposal`; `text` = reason (may be empty) */
    DLS_HOLDER_LAPSED,        /* the grantor recorded `lapsed` for `lease` with `cause` */
    DLS_HOLDER_RENEWED,       /* a renewal of `lease` with `seq` answered ok */
    DLS_HOLDER_RENEWAL_FAILED,/* a renewal append of `lease` (`seq`) failed with `error`:
                                 nothing advanced; retried at the next step with a newer reading */
    DLS_HOLDER_BOUND,         /* `lease` reached its bound: may_act false from now on,
                                 no more renewals (the lease is lost to this holder) */
    DLS_HOLDER_RELEASED,      /* a retried release of `lease` answered ok (from step) */
    DLS_HOLDER_RELEASE_FAILED,/* a retried release of `lease` failed with `error` again */
    DLS_HOLDER_SIZING,        /* a sizing warning at grant for `lease`; `text` names the numbers */
    DLS_HOLDER_MISREGISTERED  /* a grant answering `proposal` registers another medium than
                                 the holder's own: renewals could not count, so it is not
                                 held (`lease` named; it lapses at the judge by silence) */
} dls_holder_event_kind;

/* One event of a step. */
typedef struct dls_holder_event {
    dls_holder_event_kind kind;
    uint64_t lease;          /* 0 when none */
    uint64_t proposal;       /* the proposal handle, 0 when none */
    uint64_t reading;        /* the holder's reading the event is stamped with */
    uint64_t seq;            /* RENEWED, RENEWAL_FAILED */
    dls_cause cause;         /* LAPSED */
    int error;               /* RENEWAL_FAILED, RELEASE_FAILED */
    size_t text_len;
    char text[DLS_HOLDER_TEXT_MAX]; /* NUL-terminated; REFUSED reason, SIZING message */
} dls_holder_event;

/* What one step did. `events` is borrowed from the holder until its next
 * dls_holder_step() or dls_holder_del(). */
typedef struct dls_holder_result {
    const dls_holder_event *events;
    size_t n_events;
    bool has_now;            /* false until the first tick was observed */
    uint64_t now;            /* the newest reading observed */
    bool has_next;           /* false: nothing falls due (no held lease) */
    uint64_t next_reading;   /* the reading at which a step is next needed:
                                the earliest renewal due or bound */
    bool more;               /* the journal budget ran out: step again soon */
    /* counters for this step */
    uint64_t ticks;          /* tick facts counted */
    uint64_t ticks_ignored;  /* tick records not attributed to the tick party,
                                defective, or older than the newest reading */
    uint64_t journal_records;/* journal records drained */
    uint64_t verified;       /* journal records that concerned the holder and verified */
    uint64_t forged;         /* ... that concerned it and did not verify */
    uint64_t ignored;        /* verified records that established nothing (replays,
                                answers to no outstanding proposal, unknown leases) */
    uint64_t journal_gaps;   /* gap answers on the journal cursor */
    bool journal_ended;      /* the journal is sealed (cursor retired) */
    int journal_error;       /* 0, or DLS_ERR_TRANSPORT when the journal answered
                                transport-error this step */
    uint64_t appends;        /* appends made to the holder's medium this step
                                (renewals and retried releases: one each with
                                batch_max 1, else at most one) */
    int tick_error;          /* 0, or DLS_ERR_TRANSPORT when the tick cursor
                                answered transport-error this step (now did
                                not move: the bound is still judged on the
                                newest reading observed) */
} dls_holder_result;

/* One step of the holder, in order:
 *   1. drain the tick cursor: the newest reading is now (before any tick
 *      was ever observed, the step drains nothing else and does nothing);
 *   2. every held lease whose bound is at or before now: BOUND;
 *   3. drain the journal (up to journal_budget records): decode each
 *      record; verify only those that concern this holder (grants naming
 *      it, refusals of its outstanding proposals, lapsed for its leases);
 *      accept grants answering an outstanding proposal, or unsolicited
 *      ones above every verified id seen; end refused proposals; drop
 *      lapsed leases; a grant is observed at now;
 *   4. renew every held lease that is due (interval since the later of the
 *      observed grant and the last ok renewal, on the holder's ticks), with
 *      the next seq, timed by now (the reading before the append); retry
 *      releases that failed — with batch_max above 1, all of them in one
 *      append (batch envelopes of up to batch_max facts), else one append
 *      each (res.appends counts them);
 *   5. compute the next reading at which a step is needed.
 * A step costs what is due, not what is held: held leases wait on a
 * schedule keyed by the reading they next need, and leases are found by
 * id through an index (docs/holder.md, "Cost of a step").
 * Returns 0; DLS_ERR_TICKS_ENDED when the tick stream was sealed (every
 * lease reaches its bound at once: a holder that cannot measure time stops
 * acting; `res` is still filled); DLS_ERR_NOMEM when some events could not
 * be recorded (the step itself completed: dls_holder_lease_info() tells the
 * state of every lease); DLS_ERR_INVAL for NULL arguments. */
DLS_EXPORT int dls_holder_step(dls_holder *h, dls_holder_result *res);

/* The reading at which the holder next needs a step (the earliest renewal
 * due or bound of a held lease): true and *reading, or false when nothing
 * falls due. */
DLS_EXPORT bool dls_holder_next_reading(const dls_holder *h, uint64_t *reading);

/* ---- acting ------------------------------------------------------------------------ */

/* May the agent act under `lease` now? Drains the tick cursor first (so the
 * answer is never older than the newest tick appended), then answers true
 * only for a lease this holder observed and holds (not released, not lapsed,
 * not at its bound) while now is before its bound. False from the bound on,
 * whatever the holder hears afterwards. */
DLS_EXPORT bool dls_holder_may_act(dls_holder *h, uint64_t lease);

/* The part of the term left, as the holder's ticks read it (bound − now,
 * after draining the tick cursor): 0 and *ns, 0 with *ns = 0 at or after
 * the bound or once released, DLS_ERR_NO_LEASE for a lease the holder does
 * not track. */
DLS_EXPORT int dls_holder_remaining(dls_holder *h, uint64_t lease, uint64_t *ns);

/* dls_holder_remaining() for n leases at once, after one drain of the tick
 * cursor: ns[i] is what dls_holder_remaining() would answer for leases[i]
 * at that reading (0 at or after the bound, once released, or for a lease
 * not tracked). *untracked (may be NULL) counts the leases not tracked.
 * One call answers a whole batch of renewals (bindings that pay per call,
 * docs/node.md). Errors: DLS_ERR_INVAL (h NULL, or leases/ns NULL with
 * n > 0), DLS_ERR_STATE (another process's holder). */
DLS_EXPORT int dls_holder_remaining_many(dls_holder *h, const uint64_t *leases,
                                         size_t n, uint64_t *ns, size_t *untracked);

/* Releases `lease` (optionally with commit): from this call on may_act is
 * false and the lease is no longer renewed; a release fact is appended to
 * the holder's medium. Returns 0 when the append answered ok; otherwise the
 * append's error — the holder retries it at every later step (a
 * DLS_HOLDER_RELEASED event reports the success). Releasing again after an
 * ok release is a no-op answering 0. The grantor still performs the reclaim
 * and records `lapsed` (cause release); the lease is forgotten when that is
 * observed. Errors: DLS_ERR_NO_LEASE, the medium's append errors. */
DLS_EXPORT int dls_holder_release(dls_holder *h, uint64_t lease, bool commit);

/* Forgets a lease the holder no longer acts on (bound reached or released)
 * without waiting for its `lapsed`. DLS_ERR_NO_LEASE when
 * not tracked; DLS_ERR_STATE for a lease still held (release it first). */
DLS_EXPORT int dls_holder_forget(dls_holder *h, uint64_t lease);

/* ---- inspection ---------------------------------------------------------------------- */

typedef enum dls_holder_lease_state {
    DLS_HOLDER_HELD = 0,      /* observed, renewing, before its bound */
    DLS_HOLDER_AT_BOUND,      /* bound reached: not acting, not renewing */
    DLS_HOLDER_RELEASING,     /* release requested, its append not yet ok */
    DLS_HOLDER_RELEASED_OK    /* release appended ok; waiting for `lapsed` */
} dls_holder_lease_state;

/* What the holder knows of one lease. `subject` borrows from the holder
 * until the lease is forgotten. */
typedef struct dls_holder_lease {
    uint64_t lease;
    uint64_t proposal;        /* handle, 0 for an unsolicited grant */
    dls_holder_lease_state state;
    dls_bytes subject;        /* encoded, as granted */
    dls_mode mode;
    dls_duration duration;
    bool has_max;
    dls_duration max;
    uint64_t interval_ns;     /* the renewal interval used */
    uint64_t observed;        /* the reading at which the grant was observed */
    bool renewed;             /* at least one renewal answered ok */
    uint64_t last_renewal;    /* the reading taken before the last ok renewal:
                                 the renewal schedule runs from it */
    uint64_t seq;             /* the last renewal seq attempted (0: none) */
    uint64_t bound;           /* the bound reading (may saturate at UINT64_MAX) */
    /* How far behind confirmation is (holder.md rev 4): */
    bool confirmed;           /* a pass mark confirmed at least one renewal */
    uint64_t confirmed_renewal; /* the reading the bound was last extended from
                                 (the reading before the newest confirmed
                                 renewal's append); valid when confirmed */
    uint64_t last_position;   /* the position of the last ok renewal (when renewed) */
    size_t unconfirmed;       /* ok renewals not yet confirmed (at most 8 kept) */
} dls_holder_lease;

/* Fills *info for a tracked lease: 0, or DLS_ERR_NO_LEASE. */
DLS_EXPORT int dls_holder_lease_info(const dls_holder *h, uint64_t lease,
                                     dls_holder_lease *info);

/* The newest confirmed position on the holder's medium: the `drained`
 * position for it in the newest verified pass mark the holder applied
 * (every record before it was read by the judge). False until a mark that
 * concerned the holder was applied. */
DLS_EXPORT bool dls_holder_confirmed_position(const dls_holder *h, uint64_t *pos);

/* The last proposal seq used (0: none yet) — after a restart, the one read
 * back from the holder's own medium. */
DLS_EXPORT uint64_t dls_holder_proposal_seq(const dls_holder *h);

/* The largest lease id seen in a verified grant on the journal (0: none):
 * the floor above which an unsolicited grant can be accepted. */
DLS_EXPORT uint64_t dls_holder_max_seen(const dls_holder *h);

/* The last sizing or refusal message (""), valid until the next call. */
DLS_EXPORT const char *dls_holder_message(const dls_holder *h);

/* The proposal id bytes (16) of an outstanding proposal: 0, or
 * DLS_ERR_NOTFOUND once it was answered. */
DLS_EXPORT int dls_holder_proposal_id(const dls_holder *h, uint64_t handle,
                                      uint8_t id[16]);

DLS_EXPORT const char *dls_holder_event_name(dls_holder_event_kind k);

#ifdef __cplusplus
}
#endif
#endif
