/* daolease — the Lease atom host, fences and the fence guard (spec: host.md;
 * seed 000 "Lease", seed 001 "fencing tokens").
 *
 * THE HOST. Exclusive standing over a key, to a named holder, until a
 * declared instant, for the threads of the process that owns the resource.
 * A grant ends at exactly one of: its holder's release, or its instant
 * passing. Nothing else ends it — the host has no notion of a holder's death.
 *
 *   dls_host_take       blocks; answers expires_at, or DLS_ERR_UNAVAILABLE
 *                       once the arrival term elapsed
 *   dls_host_try_take   never waits; answers taken (0, expires_at) or
 *                       DLS_HOST_HELD
 *   dls_host_remaining  answers 0 with the remaining term, or DLS_HOST_NONE
 *   dls_host_release    answers 0 (released) or DLS_HOST_NOT_HELD
 *
 * Answers that are not failures are non-negative: 0 for the first answer
 * of each operation, a distinct positive DLS_HOST_* constant for the other.
 * Failures are negative dls_error codes. `if (rc < 0)` is the failure test;
 * DLS_HOST_HELD, DLS_HOST_NOT_HELD and DLS_HOST_NONE are never failures
 * (seed 000, Operation 14).
 *
 * Time. The host reads no clock. It is created with an owner-supplied clock
 * (dls_host_clock): `now` returns the host's reading in ns, and the optional
 * `wait` blocks a waiting take until the owner's clock reaches a deadline or
 * the host signals a change. Every instant the host answers (expires_at, a
 * remaining term) is on that clock. The real-clock adapter
 * (dls_host_clock_monotonic, dls_host_wait_monotonic) lives outside the core.
 *
 * Keys and holders are byte strings (pointer + length, copied by the host),
 * compared by byte identity and never normalized; both must be non-empty.
 *
 * FENCES. expires_at handed to a third party that judges on its own clock is
 * first minted into a dls_fence (dls_fence_mint): expires_at − that party's
 * allowance, or earlier. The fenced party checks dls_fence_admits() against
 * its own reading at the moment of judgement.
 *
 * THE FENCE GUARD. The resource side of fencing tokens: admits an operation
 * carrying token t only when t >= the highest token admitted so far.
 */
#ifndef DAOLEASE_HOST_H
#define DAOLEASE_HOST_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/error.h"
#include "daolease/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- answers ------------------------------------------------------------- */

/* Non-negative answers that are not failures (0 is the other answer). */
enum {
    DLS_HOST_HELD = 1,      /* try_take: another party holds the key */
    DLS_HOST_NOT_HELD = 2,  /* release: the asking party does not hold the key */
    DLS_HOST_NONE = 3       /* remaining: the asking party does not hold the key */
};

/* ---- the owner's clock ---------------------------------------------------- */

/* Returns the host's current reading in ns, in 0 … 2^63−1. Must be safe to
 * call from any thread; it is called with the host's mutex held, so it must
 * not call back into the host. A reading older than one already returned is
 * treated as the newer one (the host's view of time never moves back). */
typedef uint64_t (*dls_host_now_fn)(void *ctx);

/* Blocks the calling waiter: called with `mutex` locked, it must atomically
 * release it while blocked on `cond` (as pthread_cond_wait does) and hold it
 * again on return. It must return no later than shortly after the owner's
 * clock reads >= `deadline`, or when `cond` is signalled; early or spurious
 * returns are harmless (the host reads `now` again and re-checks). `now` is
 * the host's latest reading, for converting `deadline` to another clock.
 * Returns 0, or non-zero for a failure (the take then answers
 * DLS_ERR_CALLBACK). An owner whose clock does not advance by itself (a
 * fake or tick-driven clock) may wait on `cond` alone and call
 * dls_host_wake() after moving its clock. */
typedef int (*dls_host_wait_fn)(void *ctx, pthread_cond_t *cond,
                                pthread_mutex_t *mutex, uint64_t now,
                                uint64_t deadline);

/* The owner's clock: `now` required; `wait` optional (default
 * dls_host_wait_monotonic, right for any clock that advances at the rate of
 * CLOCK_MONOTONIC). Both get the `clock_ctx` given to dls_host_new. */
typedef struct dls_host_clock {
    dls_host_now_fn now;
    dls_host_wait_fn wait;
} dls_host_clock;

/* Real-clock adapter (adapters/host_clock.c, not the core): the
 * CLOCK_MONOTONIC reading in ns; `ctx` is ignored. */
DLS_EXPORT uint64_t dls_host_clock_monotonic(void *ctx);

/* Real-clock adapter: waits on `cond` until CLOCK_MONOTONIC has advanced by
 * `deadline − now` ns from the moment of the call (pthread_cond_clockwait).
 * `ctx` is ignored. Returns 0, or non-zero when the wait fails. */
DLS_EXPORT int dls_host_wait_monotonic(void *ctx, pthread_cond_t *cond,
                                       pthread_mutex_t *mutex, uint64_t now,
                                       uint64_t deadline);

/* ---- the host ------------------------------------------------------------- */

typedef struct dls_host dls_host;

/* Settings. Defaults (dls_host_settings_default):
 *   max_key      4096  bytes; a longer key answers DLS_ERR_INVAL
 *   max_holder   4096  bytes; a longer holder answers DLS_ERR_INVAL
 *   buckets      64    initial hash buckets (rounded up to a power of two;
 *                      the table doubles as keys are added)
 */
typedef struct dls_host_settings {
    size_t max_key;
    size_t max_holder;
    size_t buckets;
} dls_host_settings;

/* Fills `s` with the defaults above. */
DLS_EXPORT void dls_host_settings_default(dls_host_settings *s);

/* Creates a host. `s` may be NULL for the defaults; `clock` is copied;
 * `clock_ctx` is borrowed and passed to the clock's functions for the
 * host's lifetime. Calls sodium_init() (key hashing uses a random SipHash
 * key per host). Errors: DLS_ERR_INVAL (out NULL, clock or clock->now NULL,
 * a zero limit), DLS_ERR_NOMEM, DLS_ERR_SODIUM. */
DLS_EXPORT int dls_host_new(dls_host **out, const dls_host_settings *s,
                            const dls_host_clock *clock, void *clock_ctx);

/* Frees the host; NULL-safe. No call on it may be in progress. */
DLS_EXPORT void dls_host_del(dls_host *h);

/* Take (blocking). Grants `key` to `holder` for `duration` ns and sets
 * *expires_at, the instant on the host's clock at which the grant ends.
 *
 * A free key is granted at once. A held key is waited for, in arrival order
 * with the other waiters of that key, for no longer than the arrival term
 * (the current holder's remaining term when the call arrived): the waiter is
 * granted at the instant the key frees (by release, or by the holder's
 * instant passing) if its turn comes within that term, and otherwise answers
 * DLS_ERR_UNAVAILABLE once its waiting term reaches the arrival term.
 * Admitting one waiter never extends another's bound.
 *
 * A waiter granted at the instant the holder's term ended gets
 * expires_at = that instant + duration, even when the host observes the
 * passing later (a clock that jumps): the grant starts when the key freed.
 *
 * Returns 0, DLS_ERR_UNAVAILABLE, DLS_ERR_HELD_BY_CALLER (the holder holds
 * or already waits for the key: no nesting, no depth count),
 * DLS_ERR_INVAL (NULL h/expires_at, empty or over-long key or holder,
 * duration 0 or > 2^63−1), DLS_ERR_NOMEM, DLS_ERR_CALLBACK (the clock read
 * above 2^63−1 or the wait hook failed; the call then waits no more). */
DLS_EXPORT int dls_host_take(dls_host *h, const void *key, size_t klen,
                             const void *holder, size_t hlen,
                             uint64_t duration, uint64_t *expires_at);

/* Try Take: never waits. Returns 0 with *expires_at set (taken), or
 * DLS_HOST_HELD when another party holds the key or earlier waiters are
 * queued for it. Errors as dls_host_take (never DLS_ERR_UNAVAILABLE). */
DLS_EXPORT int dls_host_try_take(dls_host *h, const void *key, size_t klen,
                                 const void *holder, size_t hlen,
                                 uint64_t duration, uint64_t *expires_at);

/* Remaining: the asking holder's remaining term as the host reads it now.
 * Returns 0 with *remaining > 0, or DLS_HOST_NONE when `holder` is not the
 * key's current holder (a former holder whose term passed included). Writes
 * nothing. Use this, never a remembered expires_at against a clock of your
 * own (seed 000, Operation 10). Errors: DLS_ERR_INVAL, DLS_ERR_CALLBACK. */
DLS_EXPORT int dls_host_remaining(dls_host *h, const void *key, size_t klen,
                                  const void *holder, size_t hlen,
                                  uint64_t *remaining);

/* Release: ends the asking holder's grant and hands the key to the first
 * waiter in line. Returns 0 (released) or DLS_HOST_NOT_HELD when `holder`
 * is not the current holder — then nothing is written and no other
 * holder's grant is reached. DLS_HOST_NOT_HELD is not a failure: do not
 * retry on it. Errors: DLS_ERR_INVAL, DLS_ERR_CALLBACK. */
DLS_EXPORT int dls_host_release(dls_host *h, const void *key, size_t klen,
                                const void *holder, size_t hlen);

/* Wakes every waiting take so it reads the clock again. An owner whose
 * `wait` hook does not time out by itself calls this after moving its
 * clock. Safe from any thread; NULL-safe. */
DLS_EXPORT void dls_host_wake(dls_host *h);

/* Counters, for monitoring and tests. */
typedef struct dls_host_stats {
    size_t keys;      /* key states stored (held, or free but not yet reclaimed) */
    size_t waiters;   /* takes waiting now, all keys */
    uint64_t grants;  /* grants made since creation */
    uint64_t writes;  /* state writes since creation (grants, releases,
                         waiters answered unavailable) */
} dls_host_stats;

/* Fills *out. Errors: DLS_ERR_INVAL. */
DLS_EXPORT int dls_host_stats_get(dls_host *h, dls_host_stats *out);

/* Sets *n to the number of takes waiting for `key`. Errors: DLS_ERR_INVAL. */
DLS_EXPORT int dls_host_waiting(dls_host *h, const void *key, size_t klen,
                                size_t *n);

/* ---- fences --------------------------------------------------------------- */

/* An instant handed to a fenced party as a deadline: refuse this holder's
 * work if it would take effect after `at`. Deliberately not a bare uint64:
 * a fence is minted from expires_at (dls_fence_mint) and no function takes
 * a fence to make another (seed 000, Fence 8 and 9). */
typedef struct dls_fence {
    uint64_t at;
} dls_fence;

/* Mints the fence for one fenced party: fence = expires_at − allowance (the
 * fence ceiling), where `allowance` is the declared cross-clock allowance
 * between the host's clock and that party's. Mint one fence per fenced
 * party, each from expires_at with that party's own allowance.
 * Returns 0, DLS_ERR_INVAL (out NULL), DLS_ERR_FENCE (allowance >
 * expires_at: no fence instant exists). */
DLS_EXPORT int dls_fence_mint(uint64_t expires_at, uint64_t allowance,
                              dls_fence *out);

/* As dls_fence_mint, but the fence is the earlier of the ceiling and
 * `not_after` (a holder may keep more margin, never less: seed 000,
 * Fence 5). Same errors. */
DLS_EXPORT int dls_fence_mint_earlier(uint64_t expires_at, uint64_t allowance,
                                      uint64_t not_after, dls_fence *out);

/* The fenced party's check: true when work taking effect at
 * `effect_instant` may proceed (effect_instant <= fence.at). The effect
 * instant is the fenced party's OWN clock reading at the moment of
 * judgement — never a value carried by the work item — compared bare, with
 * no allowance applied (seed 000, Fence 3, 4, 6, 7, 10). */
DLS_EXPORT bool dls_fence_admits(dls_fence fence, uint64_t effect_instant);

/* ---- the fence guard (fencing tokens) -------------------------------------- */

typedef struct dls_fence_guard dls_fence_guard;

/* Settings. Defaults (dls_fence_guard_settings_default):
 *   mark   0   the highest token already admitted (0: none); restore a
 *              persisted mark here, or with dls_fence_guard_load
 */
typedef struct dls_fence_guard_settings {
    uint64_t mark;
} dls_fence_guard_settings;

DLS_EXPORT void dls_fence_guard_settings_default(dls_fence_guard_settings *s);

/* Called with the guard locked before the mark is raised to `mark`; a
 * non-zero return refuses the raise (the operation is not admitted, the
 * mark stays). dls_fence_mark_persist is a ready-made one. */
typedef int (*dls_fence_persist_fn)(void *ctx, uint64_t mark);

/* Callbacks: `persist` optional (NULL: the mark lives in memory only). */
typedef struct dls_fence_guard_callbacks {
    dls_fence_persist_fn persist;
} dls_fence_guard_callbacks;

/* Creates a guard for one protected subject. `s` and `cb` may be NULL;
 * `user_data` is passed to `persist`. Errors: DLS_ERR_INVAL (out NULL, a
 * mark above 2^63−1), DLS_ERR_NOMEM. */
DLS_EXPORT int dls_fence_guard_new(dls_fence_guard **out,
                                   const dls_fence_guard_settings *s,
                                   const dls_fence_guard_callbacks *cb,
                                   void *user_data);

/* NULL-safe. No call on it may be in progress (nor a section entered). */
DLS_EXPORT void dls_fence_guard_del(dls_fence_guard *g);

/* Admits an operation carrying `token` (a lease id: strictly increasing per
 * grantor) when token >= the mark, raising the mark to token. Returns 0,
 * DLS_ERR_STALE_TOKEN (token < mark: a newer holder took over), DLS_ERR_INVAL
 * (NULL g, token 0 or > 2^63−1), DLS_ERR_CALLBACK (persist refused; not
 * admitted, mark unchanged). Thread-safe. Note: the operation runs after
 * this returns, so a newer token may be admitted meanwhile; use
 * dls_fence_guard_enter when the operation must not overlap a newer one. */
DLS_EXPORT int dls_fence_guard_admit(dls_fence_guard *g, uint64_t token);

/* As dls_fence_guard_admit, but on 0 the guard stays locked until
 * dls_fence_guard_leave(), so the admitted operation completes before any
 * other token is judged: a stale write cannot land after a newer one. Same
 * answers; on a non-zero answer the guard is not held. Not reentrant. */
DLS_EXPORT int dls_fence_guard_enter(dls_fence_guard *g, uint64_t token);

/* Ends the section opened by a successful dls_fence_guard_enter. */
DLS_EXPORT void dls_fence_guard_leave(dls_fence_guard *g);

/* The highest token admitted (or restored); 0 when none. */
DLS_EXPORT uint64_t dls_fence_guard_mark(dls_fence_guard *g);

/* Raises the mark to `mark` (persisting it through the callback). Never
 * lowers it: that would re-admit stale writers. Returns 0 (also when
 * mark == the current mark), DLS_ERR_STALE_TOKEN (mark below the current),
 * DLS_ERR_INVAL (NULL g, mark > 2^63−1), DLS_ERR_CALLBACK. */
DLS_EXPORT int dls_fence_guard_set_mark(dls_fence_guard *g, uint64_t mark);

/* ---- persisting a mark (adapters/fence_file.c) ----------------------------- */

/* Writes `mark` to `path` atomically: a temporary file beside it, fsync,
 * rename over `path`, fsync of the directory. The file is one line,
 * "daolease-fence-mark 1 <decimal mark>\n". Errors: DLS_ERR_INVAL,
 * DLS_ERR_IO (w->sys_errno, w->reason). `w` may be NULL. */
DLS_EXPORT int dls_fence_mark_save(const char *path, uint64_t mark,
                                   dls_where *w);

/* Reads a mark written by dls_fence_mark_save. Errors: DLS_ERR_INVAL,
 * DLS_ERR_NOTFOUND (no file: a first start — any other reading of a missing
 * file re-admits stale writers), DLS_ERR_IO, DLS_ERR_CORRUPT (not such a
 * file; w->reason says why). `w` may be NULL. */
DLS_EXPORT int dls_fence_mark_load(const char *path, uint64_t *mark,
                                   dls_where *w);

/* A dls_fence_persist_fn: `ctx` is the NUL-terminated path to save to. */
DLS_EXPORT int dls_fence_mark_persist(void *ctx, uint64_t mark);

/* Saves the guard's mark to `path` (dls_fence_mark_save). */
DLS_EXPORT int dls_fence_guard_save(dls_fence_guard *g, const char *path,
                                    dls_where *w);

/* Loads the mark at `path` and raises the guard's mark to it (never lowers).
 * Errors as dls_fence_mark_load, and as dls_fence_guard_set_mark except
 * that a lower stored mark is not an error. */
DLS_EXPORT int dls_fence_guard_load(dls_fence_guard *g, const char *path,
                                    dls_where *w);

#ifdef __cplusplus
}
#endif
#endif
