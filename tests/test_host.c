/* Tests for the Lease atom host, fences and the fence guard (host.md; seed
 * 000 "Lease", conformance checks 1.1–6.2; seed 001 fencing tokens).
 *
 * The host runs on a fake clock: `now` reads an atomic, the wait hook waits
 * on the host's condition variable with no timeout, and moving the clock
 * calls dls_host_wake(). Threads are real; they are coordinated by asking
 * the host how many takes wait for a key (dls_host_waiting), never by
 * sleeping for a time. Worker threads only record results; the main thread
 * asserts.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "daolease/fact.h"
#include "daolease/host.h"

/* ---- the fake clock ---------------------------------------------------------- */

typedef struct fake_clock {
    _Atomic uint64_t t;
    _Atomic uint64_t max_deadline; /* the latest deadline any wait asked for */
    _Atomic int fail_wait;         /* make the wait hook fail */
    dls_host *h;
} fake_clock;

static uint64_t fake_now(void *ctx)
{
    return atomic_load(&((fake_clock *)ctx)->t);
}

static int fake_wait(void *ctx, pthread_cond_t *cond, pthread_mutex_t *mutex,
                     uint64_t now, uint64_t deadline)
{
    fake_clock *fc = ctx;
    (void)now;
    uint64_t m = atomic_load(&fc->max_deadline);
    while (deadline > m && !atomic_compare_exchange_weak(&fc->max_deadline, &m, deadline))
        ;
    if (atomic_load(&fc->fail_wait))
        return -1;
    pthread_cond_wait(cond, mutex);
    return 0;
}

/* Moves the clock and wakes the waiters so they read it again. */
static void fake_set(fake_clock *fc, uint64_t t)
{
    atomic_store(&fc->t, t);
    dls_host_wake(fc->h);
}

static dls_host *new_host(fake_clock *fc, uint64_t t0)
{
    atomic_store(&fc->t, t0);
    atomic_store(&fc->max_deadline, 0);
    atomic_store(&fc->fail_wait, 0);
    dls_host_clock clk = {.now = fake_now, .wait = fake_wait};
    dls_host *h = NULL;
    assert_int_equal(dls_host_new(&h, NULL, &clk, fc), 0);
    fc->h = h;
    return h;
}

#define S(x) (x), strlen(x)

/* ---- taker threads ------------------------------------------------------------- */

typedef struct taker {
    dls_host *h;
    const char *key, *holder;
    uint64_t duration;
    bool try_only;
    pthread_barrier_t *start;
    int rc;
    uint64_t expires_at;
    _Atomic int done;
    pthread_t th;
} taker;

static void *taker_run(void *p)
{
    taker *t = p;
    if (t->start)
        pthread_barrier_wait(t->start);
    if (t->try_only)
        t->rc = dls_host_try_take(t->h, S(t->key), S(t->holder), t->duration, &t->expires_at);
    else
        t->rc = dls_host_take(t->h, S(t->key), S(t->holder), t->duration, &t->expires_at);
    atomic_store(&t->done, 1);
    return NULL;
}

static void taker_start(taker *t, dls_host *h, const char *key, const char *holder,
                        uint64_t duration)
{
    memset(t, 0, sizeof *t);
    t->h = h;
    t->key = key;
    t->holder = holder;
    t->duration = duration;
    assert_int_equal(pthread_create(&t->th, NULL, taker_run, t), 0);
}

static void taker_join(taker *t)
{
    assert_int_equal(pthread_join(t->th, NULL), 0);
}

/* Waits (by asking the host, not by time) until n takes wait for key. */
static void await_waiters(dls_host *h, const char *key, size_t n)
{
    for (;;) {
        size_t k = 0;
        assert_int_equal(dls_host_waiting(h, S(key), &k), 0);
        if (k == n)
            return;
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
}

/* Starts a blocking take and returns once the host has it in line
 * (`ahead` takes already waiting for the key). */
static void taker_enqueue(taker *t, dls_host *h, const char *key, const char *holder,
                          uint64_t duration, size_t ahead)
{
    taker_start(t, h, key, holder, duration);
    await_waiters(h, key, ahead + 1);
}

/* ---- Check 1.1 / 1.2: one holder ------------------------------------------------ */

enum { RACERS = 8, ROUNDS = 40 };

/* Check 1.1 (Invariant 1.1, Invariant 1.2): two or more concurrent takes on
 * one key, with no release and no expiry between them, yield exactly one
 * expires_at. Half the racers use try_take, half take. */
static void test_check_1_1_concurrent_takes_one_expires_at(void **state)
{
    (void)state;
    fake_clock fc;
    dls_host *h = new_host(&fc, 1000);
    static const char *holders[RACERS] = {"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"};
    for (int round = 0; round < ROUNDS; round++) {
        char key[32];
        snprintf(key, sizeof key, "k%d", round);
        uint64_t t0 = atomic_load(&fc.t);
        pthread_barrier_t bar;
        pthread_barrier_init(&bar, NULL, RACERS);
        taker tk[RACERS];
        for (int i = 0; i < RACERS; i++) {
            memset(&tk[i], 0, sizeof tk[i]);
            tk[i].h = h;
            tk[i].key = key;
            tk[i].holder = holders[i];
            tk[i].duration = 100;
            tk[i].try_only = (i % 2) == 0;
            tk[i].start = &bar;
            assert_int_equal(pthread_create(&tk[i].th, NULL, taker_run, &tk[i]), 0);
        }
        /* Everyone has answered or stands in line; the clock has not moved. */
        for (;;) {
            int done = 0;
            for (int i = 0; i < RACERS; i++)
                done += atomic_load(&tk[i].done);
            size_t waiting = 0;
            dls_host_waiting(h, S(key), &waiting);
            if ((size_t)done + waiting == RACERS)
                break;
            sched_yield();
        }
        int granted = 0;
        for (int i = 0; i < RACERS; i++)
            if (atomic_load(&tk[i].done) && tk[i].rc == 0) {
                granted++;
                assert_true(tk[i].expires_at == t0 + 100);
            }
        assert_int_equal(granted, 1);
        /* Let the line drain: the grant's instant passes. */
        fake_set(&fc, t0 + 100);
        for (int i = 0; i < RACERS; i++)
            taker_join(&tk[i]);
        pthread_barrier_destroy(&bar);
        fake_set(&fc, t0 + 1000);
    }
    dls_host_del(h);
}

/* Check 1.2 (Operation 1, Operation 7): the other takes answer exactly one
 * of held (try_take, at once) or unavailable (take, once its arrival term
 * elapsed) — or, for the first in line, a grant that starts only when the
 * winner's instant passed, never a second grant beside the first. */
static void test_check_1_2_other_take_held_or_unavailable(void **state)
{
    (void)state;
    fake_clock fc;
    dls_host *h = new_host(&fc, 1000);
    static const char *holders[RACERS] = {"q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7"};
    for (int round = 0; round < ROUNDS; round++) {
        char key[32];
        snprintf(key, sizeof key, "k%d", round);
        uint64_t t0 = atomic_load(&fc.t);
        pthread_barrier_t bar;
        pthread_barrier_init(&bar, NULL, RACERS);
        taker tk[RACERS];
        for (int i = 0; i < RACERS; i++) {
            memset(&tk[i], 0, sizeof tk[i]);
            tk[i].h = h;
            tk[i].key = key;
            tk[i].holder = holders[i];
            tk[i].duration = 50;
            tk[i].try_only = i >= RACERS / 2;
            tk[i].start = &bar;
            assert_int_equal(pthread_create(&tk[i].th, NULL, taker_run, &tk[i]), 0);
        }
        for (;;) {
            int done = 0;
            for (int i = 0; i < RACERS; i++)
                done += atomic_load(&tk[i].done);
            size_t waiting = 0;
            dls_host_waiting(h, S(key), &waiting);
            if ((size_t)done + waiting == RACERS)
                break;
            sched_yield();
        }
        fake_set(&fc, t0 + 50); /* the winner's instant */
        for (int i = 0; i < RACERS; i++)
            taker_join(&tk[i]);
        int first = 0, second = 0, held = 0, unavailable = 0;
        for (int i = 0; i < RACERS; i++) {
            if (tk[i].rc == 0 && tk[i].expires_at == t0 + 50)
                first++;
            else if (tk[i].rc == 0 && tk[i].expires_at == t0 + 100)
                second++; /* admitted at the winner's instant, not before */
            else if (tk[i].rc == DLS_HOST_HELD)
                held++, assert_true(tk[i].try_only);
            else if (tk[i].rc == DLS_ERR_UNAVAILABLE)
                unavailable++, assert_false(tk[i].try_only);
            else
                fail_msg("racer %d answered %d", i, tk[i].rc);
        }
        assert_int_equal(first, 1);
        assert_int_equal(first + second + held + unavailable, RACERS);
        /* Exactly one waiter is admitted at the winner's instant. */
        assert_int_equal(second, 1); /* at least three blocking takes lost */
        pthread_barrier_destroy(&bar);
        fake_set(&fc, t0 + 1000);
    }
    dls_host_del(h);
}

/* ---- Check 2.1 / 2.2: the terminus is the instant -------------------------------- */

/* Check 2.1 (Invariant 2.1): a key held by a party that never releases
 * becomes takeable at its instant — by try_take, and for a waiter, which
 * succeeds at that instant (Operation 2). */
static void test_check_2_1_takeable_at_instant(void **state)
{
    (void)state;
    fake_clock fc;
    dls_host *h = new_host(&fc, 0);
    uint64_t e;
    assert_int_equal(dls_host_take(h, S("key"), S("never-releases"), 100, &e), 0);
    assert_true(e == 100); /* Fence 1: an absolute instant on the host's clock */

    taker w;
    fake_set(&fc, 10);
    taker_enqueue(&w, h, "key", "waiter", 40, 0);
    fake_set(&fc, 100);
    taker_join(&w);
    assert_int_equal(w.rc, 0);
    assert_true(w.expires_at == 140); /* granted at 100, the instant */

    /* The same with try_take at the waiter's instant. */
    fake_set(&fc, 140);
    assert_int_equal(dls_host_try_take(h, S("key"), S("other"), 5, &e), 0);
    assert_true(e == 145);
    dls_host_del(h);
}

/* Check 2.2 (Invariant 2.2): such a key does not become takeable earlier —
 * not one ns before the instant, whatever the host is asked meanwhile; and
 * a clock that jumps past the instant grants the waiter from the instant,
 * not from when the host noticed. */
static void test_check_2_2_not_takeable_earlier(void **state)
{
    (void)state;
    fake_clock fc;
    dls_host *h = new_host(&fc, 0);
    uint64_t e, r;
    assert_int_equal(dls_host_take(h, S("key"), S("never-releases"), 100, &e), 0);
    taker w;
    taker_enqueue(&w, h, "key", "waiter", 30, 0);
    for (uint64_t t = 1; t < 100; t += 7) {
        fake_set(&fc, t);
        assert_int_equal(dls_host_try_take(h, S("key"), S("other"), 5, &e), DLS_HOST_HELD);
    }
    fake_set(&fc, 99);
    assert_int_equal(dls_host_try_take(h, S("key"), S("other"), 5, &e), DLS_HOST_HELD);
    assert_int_equal(dls_host_remaining(h, S("key"), S("never-releases"), &r), 0);
    assert_true(r == 1);
    size_t n;
    assert_int_equal(dls_host_waiting(h, S("key"), &n), 0);
    assert_int_equal(n, 1); /* the waiter is still in line at 99 */

    /* The clock jumps from 99 to 120: the waiter's grant starts at 100. */
    fake_set(&fc, 120);
    taker_join(&w);
    assert_int_equal(w.rc, 0);
    assert_true(w.expires_at == 130);
    assert_int_equal(dls_host_remaining(h, S("key"), S("waiter"), &r), 0);
    assert_true(r == 10);
    dls_host_del(h);
}

/* ---- Check 3.1 / 3.2: death is not observable ------------------------------------ */

typedef struct doomed {
    dls_host *h;
    int rc;
    uint64_t expires_at;
    _Atomic int took;
} doomed;

/* Takes the key and then blocks until it is killed (cancelled). */
static void *doomed_run(void *p)
{
    doomed *d = p;
    d->rc = dls_host_take(d->h, S("key"), S("doomed"), 100, &d->expires_at);
    atomic_store(&d->took, 1);
    for (;;)
        pause(); /* a cancellation point */
    return NULL;
}

static void kill_holder(doomed *d, dls_host *h)
{
    memset(d, 0, sizeof *d);
    d->h = h;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, doomed_run, d), 0);
    while (!atomic_load(&d->took))
        sched_yield();
    assert_int_equal(d->rc, 0);
    assert_int_equal(pthread_cancel(th), 0);
    assert_int_equal(pthread_join(th, NULL), 0); /* the holder is gone */
}

/* Check 3.1 (Invariant 3.1): the key of a killed holder stays held through
 * its instant; the host reports nothing about the death (it has no
 * function that could). */
static void test_check_3_1_killed_holder_held_through_instant(void **state)
{
    (void)state;
    fake_clock fc;
    dls_host *h = new_host(&fc, 1000);
    doomed d;
    kill_holder(&d, h);
    assert_true(d.expires_at == 1100);
    uint64_t e, r;
    for (uint64_t t = 1000; t < 1100; t += 33) {
        fake_set(&fc, t);
        assert_int_equal(dls_host_try_take(h, S("key"), S("next"), 10, &e), DLS_HOST_HELD);
        /* The dead holder's standing is still answered by the host. */
        assert_int_equal(dls_host_remaining(h, S("key"), S("doomed"), &r), 0);
        assert_true(r == 1100 - t);
    }
    fake_set(&fc, 1099);
    assert_int_equal(dls_host_try_take(h, S("key"), S("next"), 10, &e), DLS_HOST_HELD);
    fake_set(&fc, 1100);
    assert_int_equal(dls_host_try_take(h, S("key"), S("next"), 10, &e), 0);
    assert_true(e == 1110);
    dls_host_del(h);
}

/* Check 3.2 (Invariant 3.2): fail a host that frees a killed holder's key
 * earlier, whatever it knows: a waiter that stood in line while the holder
 * was killed is still waiting one ns before the instant, after every
 * question the host can be asked, and is granted exactly at the instant. */
static void test_check_3_2_no_early_free_on_death(void **state)
{
    (void)state;
    fake_clock fc;
    dls_host *h = new_host(&fc, 0);
    doomed d;
    memset(&d, 0, sizeof d);
    d.h = h;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, doomed_run, &d), 0);
    while (!atomic_load(&d.took))
        sched_yield();
    taker w;
    taker_enqueue(&w, h, "key", "waiter", 100, 0);
    dls_host_stats before;
    assert_int_equal(dls_host_stats_get(h, &before), 0);
    /* The holder dies with the waiter in line. */
    assert_int_equal(pthread_cancel(th), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    uint64_t e, r;
    fake_set(&fc, 99);
    dls_host_wake(h);
    assert_int_equal(dls_host_release(h, S("key"), S("waiter")), DLS_HOST_NOT_HELD);
    assert_int_equal(dls_host_release(h, S("key"), S("someone")), DLS_HOST_NOT_HELD);
    assert_int_equal(dls_host_try_take(h, S("key"), S("third"), 1, &e), DLS_HOST_HELD);
    assert_int_equal(dls_host_remaining(h, S("key"), S("doomed"), &r), 0);
    assert_true(r == 1);
    size_t n;
    assert_int_equal(dls_host_waiting(h, S("key"), &n), 0);
    assert_int_equal(n, 1);
    assert_false(atomic_load(&w.done));
    dls_host_stats after;
    assert_int_equal(dls_host_stats_get(h, &after), 0);
    assert_true(after.grants == before.grants);
    fake_set(&fc, 100);
    taker_join(&w);
    assert_int_equal(w.rc, 0);
    assert_true(w.expires_at == 200);
    dls_host_del(h);
}

/* ---- Check 4.1 / 4.2: a waiter's bound is fixed at arrival ------------------------- */

/* Check 4.1 (Invariant 4.1, Operation 3): take answers a waiter within its
 * arrival term: never waits for a deadline past it, is granted at the
 * instant the key frees within it, and answers unavailable when its term
 * is reached with the key held by a waiter ahead of it. */
static void test_check_4_1_waiter_within_arrival_term(void **state)
{
    (void)state;
    fake_clock fc;
    dls_host *h = new_host(&fc, 0);
    uint64_t e;
    assert_int_equal(dls_host_take(h, S("key"), S("holder"), 100, &e), 0);
    fake_set(&fc, 30); /* arrival term of w1: 70, bound 100 */
    taker w1, w2;
    taker_enqueue(&w1, h, "key", "w1", 500, 0);
    fake_set(&fc, 40); /* arrival term of w2: 60, bound 100 */
    taker_enqueue(&w2, h, "key", "w2", 500, 1);
    for (uint64_t t = 41; t < 100; t += 11)
        fake_set(&fc, t);
    assert_true(atomic_load(&fc.max_deadline) <= 100); /* Operation 3 */
    assert_false(atomic_load(&w1.done));
    assert_false(atomic_load(&w2.done));
    fake_set(&fc, 100);
    taker_join(&w1);
    taker_join(&w2);
    assert_int_equal(w1.rc, 0);
    assert_true(w1.expires_at == 600);
    /* Answered at 100 = 40 + 60: within, not after, its arrival term. */
    assert_int_equal(w2.rc, DLS_ERR_UNAVAILABLE);
    assert_true(atomic_load(&fc.max_deadline) <= 100);
    dls_host_del(h);
}

/* Check 4.2 (Invariant 4.2, Operation 5): admitting an earlier waiter never
 * extends a later waiter's bound: the second waiter fails on its own bound,
 * not after the first waiter's whole term. */
static void test_check_4_2_second_waiter_own_bound(void **state)
{
    (void)state;
    fake_clock fc;
    dls_host *h = new_host(&fc, 0);
    uint64_t e;
    assert_int_equal(dls_host_take(h, S("key"), S("holder"), 100, &e), 0);
    fake_set(&fc, 10);
    taker w1, w2, w3;
    taker_enqueue(&w1, h, "key", "w1", 1000, 0); /* bound 100 */
    fake_set(&fc, 20);
    taker_enqueue(&w2, h, "key", "w2", 1000, 1); /* bound 100 */
    fake_set(&fc, 50);
    assert_int_equal(dls_host_release(h, S("key"), S("holder")), 0);
    taker_join(&w1);
    assert_int_equal(w1.rc, 0);
    assert_true(w1.expires_at == 1050); /* admitted at the release, 50 */
    /* A waiter arriving now has w1's remaining term as its own: bound 1050. */
    fake_set(&fc, 60);
    taker_enqueue(&w3, h, "key", "w3", 10, 1);
    fake_set(&fc, 99);
    assert_int_equal(dls_host_try_take(h, S("key"), S("x"), 1, &e), DLS_HOST_HELD);
    size_t n;
    assert_int_equal(dls_host_waiting(h, S("key"), &n), 0);
    assert_int_equal(n, 2);
    fake_set(&fc, 100); /* w2's own bound, not w1's 1050 */
    taker_join(&w2);
    assert_int_equal(w2.rc, DLS_ERR_UNAVAILABLE);
    assert_false(atomic_load(&w3.done));
    assert_int_equal(dls_host_release(h, S("key"), S("w1")), 0); /* at 100 */
    taker_join(&w3);
    assert_int_equal(w3.rc, 0);
    assert_true(w3.expires_at == 110);
    dls_host_del(h);
}

/* Non-goal 3 and 4: waiters are admitted in arrival order, and a waiter
 * whose bound elapsed is not carried forward to a later freeing. */
static void test_nongoal_3_4_fifo_and_not_carried_forward(void **state)
{
    (void)state;
    fake_clock fc;
    dls_host *h = new_host(&fc, 0);
    uint64_t e;
    assert_int_equal(dls_host_take(h, S("key"), S("holder"), 100, &e), 0);
    enum { N = 5 };
    taker w[N];
    static const char *names[N] = {"a", "b", "c", "d", "e"};
    static const uint64_t durations[N] = {10, 10, 10, 200, 10};
    for (size_t i = 0; i < N; i++)
        taker_enqueue(&w[i], h, "key", names[i], durations[i], i);
    /* Releases hand the key along the line in arrival order. */
    for (size_t i = 0; i < 3; i++) {
        fake_set(&fc, 1 + i);
        const char *cur = i == 0 ? "holder" : names[i - 1];
        assert_int_equal(dls_host_release(h, S("key"), S(cur)), 0);
        taker_join(&w[i]);
        assert_int_equal(w[i].rc, 0);
        assert_true(w[i].expires_at == 1 + i + 10);
    }
    /* "c" holds [3, 13); "d" and "e" wait with bound 100. The clock jumps
     * to 500: "d" is admitted at 13 (its turn came within its bound) and
     * its grant ends at 213; "e"'s bound 100 elapsed before the key freed
     * again, so it is answered unavailable, not carried forward to 213. */
    fake_set(&fc, 500);
    taker_join(&w[3]);
    taker_join(&w[4]);
    assert_int_equal(w[3].rc, 0);
    assert_true(w[3].expires_at == 213);
    assert_int_equal(w[4].rc, DLS_ERR_UNAVAILABLE);
    assert_int_equal(dls_host_try_take(h, S("key"), S("late"), 5, &e), 0);
    assert_true(e == 505);
    dls_host_del(h);
}

/* ---- Check 5.1 / 5.2: standing is answered ----------------------------------------- */

/* Check 5.1 (Invariant 5.1, Operation 9, Operation 12): remaining answers
 * none and release answers not-held to every party that is not the current
 * holder — holders compared by byte identity, a former holder whose term
 * passed included — and neither answer is a failure (Operation 14). */
static void test_check_5_1_non_holders_none_not_held(void **state)
{
    (void)state;
    fake_clock fc;
    dls_host *h = new_host(&fc, 0);
    uint64_t e, r;
    const char holder[] = {'h', 'o', 'l', 'd'};
    const char holder_nul[] = {'h', 'o', 'l', 'd', '\0'};
    assert_int_equal(dls_host_take(h, S("key"), holder, sizeof holder, 100, &e), 0);
    const char *others[] = {"HOLD", "hol", "hold ", "x"};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(dls_host_remaining(h, S("key"), S(others[i]), &r), DLS_HOST_NONE);
        assert_int_equal(dls_host_release(h, S("key"), S(others[i])), DLS_HOST_NOT_HELD);
    }
    assert_int_equal(dls_host_remaining(h, S("key"), holder_nul, sizeof holder_nul, &r),
                     DLS_HOST_NONE);
    assert_int_equal(dls_host_release(h, S("key"), holder_nul, sizeof holder_nul),
                     DLS_HOST_NOT_HELD);
    assert_true(DLS_HOST_NONE >= 0 && DLS_HOST_NOT_HELD >= 0); /* not failures */
    assert_int_equal(dls_host_remaining(h, S("key"), holder, sizeof holder, &r), 0);
    assert_true(r == 100);

    /* A former holder whose term passed, the key free. */
    fake_set(&fc, 100);
    assert_int_equal(dls_host_remaining(h, S("key"), holder, sizeof holder, &r), DLS_HOST_NONE);
    assert_int_equal(dls_host_release(h, S("key"), holder, sizeof holder), DLS_HOST_NOT_HELD);
    /* ... and with the key now held by another. */
    assert_int_equal(dls_host_take(h, S("key"), S("next"), 50, &e), 0);
    assert_int_equal(dls_host_remaining(h, S("key"), holder, sizeof holder, &r), DLS_HOST_NONE);
    assert_int_equal(dls_host_release(h, S("key"), holder, sizeof holder), DLS_HOST_NOT_HELD);
    /* A released holder asking again. */
    assert_int_equal(dls_host_release(h, S("key"), S("next")), 0);
    assert_int_equal(dls_host_release(h, S("key"), S("next")), DLS_HOST_NOT_HELD);
    assert_int_equal(dls_host_remaining(h, S("key"), S("next"), &r), DLS_HOST_NONE);
    /* A key never taken. */
    assert_int_equal(dls_host_remaining(h, S("nokey"), S("next"), &r), DLS_HOST_NONE);
    assert_int_equal(dls_host_release(h, S("nokey"), S("next")), DLS_HOST_NOT_HELD);
    dls_host_del(h);
}

/* Check 5.2 (Invariant 5.1): neither answer writes anything: the write
 * counter, the holder's standing and the line are unchanged — even when
 * asked after the holder's instant passed with a waiter not yet woken (the
 * waiter is admitted by its own wake-up, not by a stranger's question). */
static void test_check_5_2_answers_write_nothing(void **state)
{
    (void)state;
    fake_clock fc;
    dls_host *h = new_host(&fc, 0);
    uint64_t e, r;
    assert_int_equal(dls_host_take(h, S("key"), S("holder"), 100, &e), 0);
    taker w;
    taker_enqueue(&w, h, "key", "waiter", 10, 0);
    dls_host_stats s0, s1;
    assert_int_equal(dls_host_stats_get(h, &s0), 0);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(dls_host_remaining(h, S("key"), S("stranger"), &r), DLS_HOST_NONE);
        assert_int_equal(dls_host_release(h, S("key"), S("stranger")), DLS_HOST_NOT_HELD);
        assert_int_equal(dls_host_release(h, S("key"), S("waiter")), DLS_HOST_NOT_HELD);
    }
    assert_int_equal(dls_host_stats_get(h, &s1), 0);
    assert_true(s1.writes == s0.writes && s1.grants == s0.grants);
    assert_int_equal(dls_host_remaining(h, S("key"), S("holder"), &r), 0);
    assert_true(r == 100);

    /* The instant passes without waking anyone. */
    atomic_store(&fc.t, 150);
    assert_int_equal(dls_host_remaining(h, S("key"), S("holder"), &r), DLS_HOST_NONE);
    assert_int_equal(dls_host_release(h, S("key"), S("holder")), DLS_HOST_NOT_HELD);
    assert_int_equal(dls_host_remaining(h, S("key"), S("stranger"), &r), DLS_HOST_NONE);
    assert_int_equal(dls_host_stats_get(h, &s1), 0);
    assert_true(s1.writes == s0.writes);
    size_t n;
    assert_int_equal(dls_host_waiting(h, S("key"), &n), 0);
    assert_int_equal(n, 1);
    dls_host_wake(h);
    taker_join(&w);
    assert_int_equal(w.rc, 0);
    assert_true(w.expires_at == 110); /* from the instant the key freed */
    dls_host_del(h);
}

/* ---- Check 6.1 / 6.2: a fence instant carries its allowance ------------------------ */

/* The auditor's view: the allowance does not exceed the handed instant's
 * fence margin (expires_at − fence). */
static bool audit_margin(uint64_t expires_at, dls_fence f, uint64_t allowance)
{
    return f.at <= expires_at && expires_at - f.at >= allowance;
}

/* Check 6.1 (Fence 5, Invariant 6.1): every minted fence carries its
 * allowance; a fence may be earlier than its ceiling, never later; an
 * allowance larger than expires_at mints nothing. */
static void test_check_6_1_allowance_within_margin(void **state)
{
    (void)state;
    fake_clock fc;
    dls_host *h = new_host(&fc, 900);
    uint64_t e;
    assert_int_equal(dls_host_take(h, S("act-17"), S("writer"), 100, &e), 0);
    assert_true(e == 1000);
    dls_fence f;
    for (uint64_t a = 0; a <= 1000; a += 125) {
        assert_int_equal(dls_fence_mint(e, a, &f), 0);
        assert_true(f.at == e - a); /* the ceiling */
        assert_true(audit_margin(e, f, a));
    }
    assert_int_equal(dls_fence_mint_earlier(e, 30, 900, &f), 0);
    assert_true(f.at == 900); /* earlier: more margin */
    assert_true(audit_margin(e, f, 30));
    assert_int_equal(dls_fence_mint_earlier(e, 30, 999, &f), 0);
    assert_true(f.at == 970); /* never above the ceiling */
    assert_true(audit_margin(e, f, 30));
    assert_int_equal(dls_fence_mint(e, 1000, &f), 0);
    assert_true(f.at == 0);
    assert_int_equal(dls_fence_mint(e, 1001, &f), DLS_ERR_FENCE);
    assert_int_equal(dls_fence_mint_earlier(e, 1001, 5, &f), DLS_ERR_FENCE);
    assert_int_equal(dls_fence_mint(e, 1, NULL), DLS_ERR_INVAL);
    /* Fence 3 and 6: the fenced party compares its own reading bare. */
    assert_int_equal(dls_fence_mint(e, 30, &f), 0);
    assert_true(dls_fence_admits(f, 969));
    assert_true(dls_fence_admits(f, 970));
    assert_false(dls_fence_admits(f, 971));
    dls_host_del(h);
}

/* A fence is not an expires_at: no mint accepts one (Fence 9). */
_Static_assert(_Generic((dls_fence){0}, uint64_t: 0, default: 1),
               "a fence must not be a bare instant");

/* Check 6.2 (Fence 8, Fence 9, Invariant 6.2): a holder fencing a store and
 * a journal mints each fence from expires_at with that party's allowance;
 * a second fence derived bare from the first would inherit the first
 * party's margin, and the audit catches it. */
static void test_check_6_2_each_fence_minted_separately(void **state)
{
    (void)state;
    const uint64_t e = 10000, a_store = 30, a_journal = 250;
    dls_fence store, journal;
    assert_int_equal(dls_fence_mint(e, a_store, &store), 0);
    assert_int_equal(dls_fence_mint(e, a_journal, &journal), 0);
    assert_true(e - store.at == a_store);
    assert_true(e - journal.at == a_journal);
    assert_true(audit_margin(e, store, a_store));
    assert_true(audit_margin(e, journal, a_journal));
    /* The defect Fence 9 forbids: the journal's instant derived bare from
     * the store's fence carries the store's allowance, not the journal's. */
    dls_fence derived_bare = store;
    assert_false(audit_margin(e, derived_bare, a_journal));
    /* Minting order does not matter: each comes from expires_at alone. */
    dls_fence j2, s2;
    assert_int_equal(dls_fence_mint(e, a_journal, &j2), 0);
    assert_int_equal(dls_fence_mint(e, a_store, &s2), 0);
    assert_true(j2.at == journal.at && s2.at == store.at);
}

/* The seed's example "A fence carried to a store": the writer pauses past
 * its term, the key goes to the next holder, and the store refuses the
 * paused write on its own clock (which runs ahead of the host's by up to
 * the allowance), while the next holder's write is admitted. */
static void test_fence_store_refuses_paused_writer(void **state)
{
    (void)state;
    fake_clock fc;
    dls_host *h = new_host(&fc, 0);
    const uint64_t allowance = 20, skew = 15; /* store clock = host + skew */
    uint64_t e1, e2;
    assert_int_equal(dls_host_take(h, S("act"), S("writer-1"), 100, &e1), 0);
    dls_fence f1;
    assert_int_equal(dls_fence_mint(e1, allowance, &f1), 0);
    fake_set(&fc, 50);
    assert_true(dls_fence_admits(f1, 50 + skew)); /* a write in time */
    /* writer-1 pauses; its term passes; writer-2 takes the key. */
    fake_set(&fc, 130);
    assert_int_equal(dls_host_take(h, S("act"), S("writer-2"), 100, &e2), 0);
    dls_fence f2;
    assert_int_equal(dls_fence_mint(e2, allowance, &f2), 0);
    /* writer-1 wakes and writes anyway: refused on the store's clock. */
    assert_false(dls_fence_admits(f1, 131 + skew));
    assert_true(dls_fence_admits(f2, 131 + skew));
    /* Just before the ceiling on the store's clock: admitted; after: not. */
    assert_true(dls_fence_admits(f1, e1 - allowance));
    assert_false(dls_fence_admits(f1, e1 - allowance + 1));
    dls_host_del(h);
}

/* ---- stress: mutual exclusion ----------------------------------------------------- */

enum { ST_THREADS = 16, ST_KEYS = 8 };

#define ST_ITERS 10000

typedef struct stress {
    dls_host *h;
    _Atomic int inside[ST_KEYS];
    uint64_t count[ST_KEYS]; /* protected by the lease on key i */
    _Atomic uint64_t violations;
    _Atomic uint64_t failures;
    _Atomic uint64_t takes[ST_KEYS];
} stress;

typedef struct stress_arg {
    stress *s;
    int id;
} stress_arg;

static void *stress_run(void *p)
{
    stress_arg *a = p;
    stress *s = a->s;
    char holder[16], key[8];
    snprintf(holder, sizeof holder, "t%02d", a->id);
    uint32_t x = 2463534242u ^ (uint32_t)(a->id * 2654435761u);
    for (int i = 0; i < ST_ITERS; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        int k = (int)(x % ST_KEYS);
        snprintf(key, sizeof key, "key%d", k);
        uint64_t e;
        if (dls_host_take(s->h, S(key), S(holder), DLS_NS_PER_S, &e) != 0) {
            atomic_fetch_add(&s->failures, 1);
            continue;
        }
        if (atomic_fetch_add(&s->inside[k], 1) != 0)
            atomic_fetch_add(&s->violations, 1);
        uint64_t c = s->count[k];
        sched_yield(); /* widen the section so other threads run inside it */
        s->count[k] = c + 1;
        atomic_fetch_add(&s->takes[k], 1);
        atomic_fetch_sub(&s->inside[k], 1);
        if (dls_host_release(s->h, S(key), S(holder)) != 0)
            atomic_fetch_add(&s->failures, 1);
    }
    return NULL;
}

/* Invariant 1.2 under load: 16 threads × ST_ITERS take/release pairs over 8
 * keys; no two threads are ever inside one key's section, and the plain
 * (non-atomic) per-key counters add up. The clock is frozen, so every grant
 * ends by release and every waiter is admitted by a hand-off. */
static void test_stress_mutual_exclusion(void **state)
{
    (void)state;
    fake_clock fc;
    stress *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->h = new_host(&fc, 1);
    pthread_t th[ST_THREADS];
    stress_arg args[ST_THREADS];
    for (int i = 0; i < ST_THREADS; i++) {
        args[i] = (stress_arg){s, i};
        assert_int_equal(pthread_create(&th[i], NULL, stress_run, &args[i]), 0);
    }
    for (int i = 0; i < ST_THREADS; i++)
        pthread_join(th[i], NULL);
    assert_true(atomic_load(&s->violations) == 0);
    assert_true(atomic_load(&s->failures) == 0);
    uint64_t total = 0;
    for (int k = 0; k < ST_KEYS; k++) {
        assert_true(s->count[k] == atomic_load(&s->takes[k]));
        total += s->count[k];
    }
    assert_true(total == (uint64_t)ST_THREADS * ST_ITERS);
    dls_host_stats st;
    assert_int_equal(dls_host_stats_get(s->h, &st), 0);
    assert_true(st.grants == total);
    assert_true(st.waiters == 0);
    assert_true(st.keys == 0); /* released keys are not kept */
    dls_host_del(s->h);
    free(s);
}

/* The real-clock adapter as the default wait hook: a waiter is admitted
 * when the holder's instant passes on CLOCK_MONOTONIC, with expires_at
 * = that instant + its duration (no wall-time assertion). */
static void test_real_clock_adapter(void **state)
{
    (void)state;
    dls_host_clock clk = {.now = dls_host_clock_monotonic, .wait = NULL};
    dls_host *h;
    assert_int_equal(dls_host_new(&h, NULL, &clk, NULL), 0);
    uint64_t e;
    assert_int_equal(dls_host_take(h, S("k"), S("a"), 20000000, &e), 0); /* 20 ms */
    uint64_t e2;
    assert_int_equal(dls_host_take(h, S("k"), S("b"), 5000000, &e2), 0);
    assert_true(e2 == e + 5000000);
    uint64_t r;
    int rc = dls_host_remaining(h, S("k"), S("b"), &r);
    assert_true(rc == 0 || rc == DLS_HOST_NONE);
    dls_host_del(h);
}

/* ---- the fence guard ---------------------------------------------------------------- */

/* host.md "Fencing tokens": a holder whose lease silently lapsed cannot
 * write after a newer holder took over. Tokens are lease ids. */
static void test_guard_refuses_stale_writer_after_regrant(void **state)
{
    (void)state;
    dls_fence_guard *g;
    assert_int_equal(dls_fence_guard_new(&g, NULL, NULL, NULL), 0);
    assert_true(dls_fence_guard_mark(g) == 0);
    assert_int_equal(dls_fence_guard_admit(g, 33), 0);   /* holder A, lease 33 */
    assert_int_equal(dls_fence_guard_admit(g, 33), 0);   /* A's next write */
    /* A pauses; its lease lapses; B is granted lease 34 and writes. */
    assert_int_equal(dls_fence_guard_admit(g, 34), 0);
    assert_int_equal(dls_fence_guard_admit(g, 33), DLS_ERR_STALE_TOKEN);
    assert_true(dls_fence_guard_mark(g) == 34);
    /* A guarded section: the stale writer is refused while B's runs. */
    assert_int_equal(dls_fence_guard_enter(g, 34), 0);
    dls_fence_guard_leave(g);
    assert_int_equal(dls_fence_guard_enter(g, 12), DLS_ERR_STALE_TOKEN);
    assert_int_equal(dls_fence_guard_enter(g, 40), 0);
    dls_fence_guard_leave(g);
    assert_int_equal(dls_fence_guard_admit(g, 34), DLS_ERR_STALE_TOKEN);
    /* Marks only rise. */
    assert_int_equal(dls_fence_guard_set_mark(g, 39), DLS_ERR_STALE_TOKEN);
    assert_int_equal(dls_fence_guard_set_mark(g, 40), 0);
    assert_int_equal(dls_fence_guard_set_mark(g, 50), 0);
    assert_int_equal(dls_fence_guard_admit(g, 49), DLS_ERR_STALE_TOKEN);
    /* Bad input. */
    assert_int_equal(dls_fence_guard_admit(g, 0), DLS_ERR_INVAL);
    assert_int_equal(dls_fence_guard_admit(g, DLS_NS_MAX + 1), DLS_ERR_INVAL);
    assert_int_equal(dls_fence_guard_admit(NULL, 5), DLS_ERR_INVAL);
    assert_int_equal(dls_fence_guard_set_mark(g, DLS_NS_MAX + 1), DLS_ERR_INVAL);
    assert_int_equal(dls_fence_guard_new(NULL, NULL, NULL, NULL), DLS_ERR_INVAL);
    dls_fence_guard_settings gs;
    dls_fence_guard_settings_default(&gs);
    gs.mark = DLS_NS_MAX + 1;
    dls_fence_guard *bad;
    assert_int_equal(dls_fence_guard_new(&bad, &gs, NULL, NULL), DLS_ERR_INVAL);
    dls_fence_guard_del(g);
    dls_fence_guard_del(NULL);
}

typedef struct guard_race {
    dls_fence_guard *g;
    int id;
    _Atomic uint64_t *bad;
    uint64_t *last_write; /* the protected resource: written inside sections */
    uint64_t refused;
} guard_race;

static void *guard_race_run(void *p)
{
    guard_race *r = p;
    for (uint64_t i = 1; i <= 20000; i++) {
        uint64_t t = i * 4 + (uint64_t)r->id; /* interleaved, all distinct */
        int rc = dls_fence_guard_enter(r->g, t);
        if (rc == 0) {
            /* Inside the section the resource's writes land in token
             * order: no lower token's write can follow a higher one. */
            if (*r->last_write > t)
                atomic_fetch_add(r->bad, 1);
            *r->last_write = t;
            dls_fence_guard_leave(r->g);
        } else if (rc == DLS_ERR_STALE_TOKEN) {
            r->refused++;
        } else {
            atomic_fetch_add(r->bad, 1);
        }
    }
    return NULL;
}

/* The guard is thread-safe: four writers racing with interleaved tokens
 * end with the highest token as the mark, and writes made inside sections
 * land in token order (a stale write never lands after a newer one). */
static void test_guard_threads(void **state)
{
    (void)state;
    dls_fence_guard *g;
    assert_int_equal(dls_fence_guard_new(&g, NULL, NULL, NULL), 0);
    _Atomic uint64_t bad = 0;
    uint64_t last_write = 0;
    guard_race r[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        r[i] = (guard_race){g, i, &bad, &last_write, 0};
        assert_int_equal(pthread_create(&th[i], NULL, guard_race_run, &r[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    assert_true(atomic_load(&bad) == 0);
    assert_true(dls_fence_guard_mark(g) == 20000 * 4 + 3);
    assert_true(last_write == 20000 * 4 + 3);
    dls_fence_guard_del(g);
}

static char tmpdir[256];

static void make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/dls-host-XXXXXX", base && *base ? base : "/tmp");
    assert_non_null(mkdtemp(tmpdir));
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "we");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int refusing_persist(void *ctx, uint64_t mark)
{
    (void)ctx;
    (void)mark;
    return -1;
}

/* The guard's mark survives a restart when persisted: the persist callback
 * saves before a raise takes effect; a reloaded guard refuses the stale
 * writer; a refused save admits nothing. */
static void test_guard_persist_and_reload(void **state)
{
    (void)state;
    make_tmpdir();
    char path[320], text[128];
    snprintf(path, sizeof path, "%s/act-17.mark", tmpdir);
    dls_where w;

    dls_fence_guard_callbacks cb = {.persist = dls_fence_mark_persist};
    dls_fence_guard *g;
    assert_int_equal(dls_fence_guard_new(&g, NULL, &cb, path), 0);
    uint64_t m = 99;
    assert_int_equal(dls_fence_mark_load(path, &m, &w), DLS_ERR_NOTFOUND);
    assert_int_equal(dls_fence_guard_admit(g, 7), 0);
    assert_int_equal(dls_fence_guard_admit(g, 9), 0);
    assert_int_equal(dls_fence_mark_load(path, &m, &w), 0);
    assert_true(m == 9);
    FILE *f = fopen(path, "re");
    assert_non_null(f);
    assert_non_null(fgets(text, sizeof text, f));
    fclose(f);
    assert_string_equal(text, "daolease-fence-mark 1 9\n");
    dls_fence_guard_del(g); /* the process restarts */

    dls_fence_guard *g2;
    assert_int_equal(dls_fence_guard_new(&g2, NULL, NULL, NULL), 0);
    assert_int_equal(dls_fence_guard_load(g2, path, &w), 0);
    assert_true(dls_fence_guard_mark(g2) == 9);
    assert_int_equal(dls_fence_guard_admit(g2, 8), DLS_ERR_STALE_TOKEN);
    assert_int_equal(dls_fence_guard_admit(g2, 10), 0);
    /* A lower stored mark never lowers the guard's. */
    assert_int_equal(dls_fence_guard_load(g2, path, &w), 0);
    assert_true(dls_fence_guard_mark(g2) == 10);
    assert_int_equal(dls_fence_guard_save(g2, path, &w), 0);
    assert_int_equal(dls_fence_mark_load(path, &m, &w), 0);
    assert_true(m == 10);
    dls_fence_guard_del(g2);

    /* Through settings, and with a persist that refuses. */
    dls_fence_guard_settings gs;
    dls_fence_guard_settings_default(&gs);
    assert_true(gs.mark == 0);
    gs.mark = 10;
    dls_fence_guard_callbacks no = {.persist = refusing_persist};
    dls_fence_guard *g3;
    assert_int_equal(dls_fence_guard_new(&g3, &gs, &no, NULL), 0);
    assert_int_equal(dls_fence_guard_admit(g3, 10), 0); /* no raise: no save */
    assert_int_equal(dls_fence_guard_admit(g3, 11), DLS_ERR_CALLBACK);
    assert_true(dls_fence_guard_mark(g3) == 10);
    assert_int_equal(dls_fence_guard_enter(g3, 11), DLS_ERR_CALLBACK);
    assert_int_equal(dls_fence_guard_set_mark(g3, 12), DLS_ERR_CALLBACK);
    assert_true(dls_fence_guard_mark(g3) == 10);
    dls_fence_guard_del(g3);

    /* A save into a missing directory fails cleanly. */
    char missing[400];
    snprintf(missing, sizeof missing, "%s/none/x.mark", tmpdir);
    assert_int_equal(dls_fence_mark_save(missing, 1, &w), DLS_ERR_IO);
    assert_int_equal(w.sys_errno, ENOENT);
    assert_int_equal(dls_fence_mark_persist(missing, 1), DLS_ERR_IO);

    /* Malformed files. */
    static const char *bad[] = {
        "", "daolease-fence-mark 1 \n", "daolease-fence-mark 1 12", "daolease-fence-mark 2 12\n",
        "daolease-fence-mark 1 012\n", "daolease-fence-mark 1 1x\n", "daolease-fence-mark 1 -1\n",
        "daolease-fence-mark 1 9223372036854775808\n",
        "daolease-fence-mark 1 1000000000000000000000000000000000000000000000000000000\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        write_file(path, bad[i]);
        assert_int_equal(dls_fence_mark_load(path, &m, &w), DLS_ERR_CORRUPT);
        assert_non_null(w.reason);
    }
    write_file(path, "daolease-fence-mark 1 9223372036854775807\n");
    assert_int_equal(dls_fence_mark_load(path, &m, &w), 0);
    assert_true(m == DLS_NS_MAX);
    write_file(path, "daolease-fence-mark 1 0\n");
    assert_int_equal(dls_fence_mark_load(path, &m, &w), 0);
    assert_true(m == 0);
    assert_int_equal(dls_fence_mark_save(path, DLS_NS_MAX + 1, &w), DLS_ERR_INVAL);
    assert_int_equal(dls_fence_mark_save(NULL, 1, NULL), DLS_ERR_INVAL);
    assert_int_equal(dls_fence_mark_load(path, NULL, NULL), DLS_ERR_INVAL);
    assert_int_equal(dls_fence_guard_save(NULL, path, NULL), DLS_ERR_INVAL);
    assert_int_equal(dls_fence_guard_load(NULL, path, NULL), DLS_ERR_INVAL);

    unlink(path);
    rmdir(tmpdir);
}

/* ---- identity, reentrancy and bad input ------------------------------------------- */

/* Identity 1–5: a lease is (key, holder); keys compare by bytes, never
 * normalized; take–release–take on one pair is two grants told apart by
 * expires_at. */
static void test_identity_bytes_and_grants(void **state)
{
    (void)state;
    fake_clock fc;
    dls_host *h = new_host(&fc, 0);
    uint64_t e1, e2, e3, e4;
    const char k_nul[] = {'k', '\0'};
    const char k_bin[] = {'\0', '\xff'};
    assert_int_equal(dls_host_take(h, S("k"), S("a"), 10, &e1), 0);
    assert_int_equal(dls_host_take(h, k_nul, 2, S("b"), 10, &e2), 0);
    assert_int_equal(dls_host_take(h, S("K"), S("c"), 10, &e3), 0);
    assert_int_equal(dls_host_take(h, k_bin, 2, S("d"), 10, &e4), 0);
    assert_int_equal(dls_host_try_take(h, S("k "), S("e"), 10, &e4), 0);
    dls_host_stats st;
    assert_int_equal(dls_host_stats_get(h, &st), 0);
    assert_int_equal(st.keys, 5);
    assert_int_equal(dls_host_try_take(h, k_bin, 2, S("x"), 10, &e4), DLS_HOST_HELD);
    /* Two grants on one pair, told apart by expires_at alone. */
    fake_set(&fc, 3);
    assert_int_equal(dls_host_release(h, S("k"), S("a")), 0);
    assert_int_equal(dls_host_take(h, S("k"), S("a"), 10, &e2), 0);
    assert_true(e1 == 10 && e2 == 13);
    /* A holder whose term passed takes again: a new grant, not a nesting. */
    fake_set(&fc, 13);
    assert_int_equal(dls_host_take(h, S("k"), S("a"), 10, &e3), 0);
    assert_true(e3 == 23);
    dls_host_del(h);
}

/* Non-goal 1 and 2: a holder taking a key it holds (or already waits for)
 * gets DLS_ERR_HELD_BY_CALLER at once — no deadlock, no depth count. */
static void test_nongoal_1_2_reentrant_take_is_caller_error(void **state)
{
    (void)state;
    fake_clock fc;
    dls_host *h = new_host(&fc, 0);
    uint64_t e, r;
    assert_int_equal(dls_host_take(h, S("k"), S("a"), 100, &e), 0);
    assert_int_equal(dls_host_take(h, S("k"), S("a"), 100, &e), DLS_ERR_HELD_BY_CALLER);
    assert_int_equal(dls_host_try_take(h, S("k"), S("a"), 100, &e), DLS_ERR_HELD_BY_CALLER);
    taker w;
    taker_enqueue(&w, h, "k", "b", 10, 0);
    assert_int_equal(dls_host_take(h, S("k"), S("b"), 10, &e), DLS_ERR_HELD_BY_CALLER);
    assert_int_equal(dls_host_try_take(h, S("k"), S("b"), 10, &e), DLS_ERR_HELD_BY_CALLER);
    /* One release ends the grant: there is no depth. */
    assert_int_equal(dls_host_release(h, S("k"), S("a")), 0);
    taker_join(&w);
    assert_int_equal(w.rc, 0);
    assert_int_equal(dls_host_remaining(h, S("k"), S("a"), &r), DLS_HOST_NONE);
    dls_host_del(h);
}

static uint64_t bad_now(void *ctx)
{
    (void)ctx;
    return DLS_NS_MAX + 1;
}

/* Bad input answers DLS_ERR_INVAL (empty keys and holders, zero or
 * overflowing durations, NULL outputs); a clock reading out of range and a
 * failing wait hook answer DLS_ERR_CALLBACK. */
static void test_bad_input_codes(void **state)
{
    (void)state;
    fake_clock fc;
    dls_host *h = new_host(&fc, 5);
    uint64_t e, r;
    size_t n;
    assert_int_equal(dls_host_take(NULL, S("k"), S("a"), 1, &e), DLS_ERR_INVAL);
    assert_int_equal(dls_host_take(h, NULL, 1, S("a"), 1, &e), DLS_ERR_INVAL);
    assert_int_equal(dls_host_take(h, "k", 0, S("a"), 1, &e), DLS_ERR_INVAL);
    assert_int_equal(dls_host_take(h, S("k"), NULL, 1, 1, &e), DLS_ERR_INVAL);
    assert_int_equal(dls_host_take(h, S("k"), "a", 0, 1, &e), DLS_ERR_INVAL);
    assert_int_equal(dls_host_take(h, S("k"), S("a"), 0, &e), DLS_ERR_INVAL);
    assert_int_equal(dls_host_take(h, S("k"), S("a"), DLS_NS_MAX + 1, &e), DLS_ERR_INVAL);
    assert_int_equal(dls_host_take(h, S("k"), S("a"), UINT64_MAX, &e), DLS_ERR_INVAL);
    assert_int_equal(dls_host_take(h, S("k"), S("a"), 1, NULL), DLS_ERR_INVAL);
    assert_int_equal(dls_host_try_take(h, S("k"), S("a"), 0, &e), DLS_ERR_INVAL);
    assert_int_equal(dls_host_try_take(h, "k", 0, S("a"), 1, &e), DLS_ERR_INVAL);
    assert_int_equal(dls_host_remaining(h, S("k"), S("a"), NULL), DLS_ERR_INVAL);
    assert_int_equal(dls_host_remaining(h, "k", 0, S("a"), &r), DLS_ERR_INVAL);
    assert_int_equal(dls_host_release(h, S("k"), "a", 0), DLS_ERR_INVAL);
    assert_int_equal(dls_host_release(NULL, S("k"), S("a")), DLS_ERR_INVAL);
    assert_int_equal(dls_host_waiting(h, S("k"), NULL), DLS_ERR_INVAL);
    assert_int_equal(dls_host_waiting(h, "k", 0, &n), DLS_ERR_INVAL);
    assert_int_equal(dls_host_stats_get(h, NULL), DLS_ERR_INVAL);
    /* The largest duration is accepted (2^63−1 ns). */
    assert_int_equal(dls_host_take(h, S("k"), S("a"), DLS_NS_MAX, &e), 0);
    assert_true(e == DLS_NS_MAX + 5);
    /* Over-long keys and holders (default limits 4096). */
    char *big = calloc(1, 4097);
    assert_non_null(big);
    assert_int_equal(dls_host_try_take(h, big, 4097, S("a"), 1, &e), DLS_ERR_INVAL);
    assert_int_equal(dls_host_try_take(h, S("k2"), big, 4097, 1, &e), DLS_ERR_INVAL);
    assert_int_equal(dls_host_try_take(h, big, 4096, big, 4096, 1, &e), 0);
    free(big);

    /* The wait hook fails: the take leaves the line with DLS_ERR_CALLBACK. */
    assert_int_equal(dls_host_take(h, S("w"), S("a"), 100, &e), 0);
    atomic_store(&fc.fail_wait, 1);
    assert_int_equal(dls_host_take(h, S("w"), S("b"), 100, &e), DLS_ERR_CALLBACK);
    assert_int_equal(dls_host_waiting(h, S("w"), &n), 0);
    assert_int_equal(n, 0);
    atomic_store(&fc.fail_wait, 0);

    /* A clock that moves back is read as not moving. */
    fake_set(&fc, 200);
    assert_int_equal(dls_host_try_take(h, S("w"), S("c"), 100, &e), 0);
    assert_true(e == 300);
    atomic_store(&fc.t, 50);
    assert_int_equal(dls_host_remaining(h, S("w"), S("c"), &r), 0);
    assert_true(r == 100);
    dls_host_del(h);

    /* Constructor. */
    dls_host_clock none = {0};
    dls_host *x = NULL;
    assert_int_equal(dls_host_new(&x, NULL, &none, NULL), DLS_ERR_INVAL);
    assert_int_equal(dls_host_new(&x, NULL, NULL, NULL), DLS_ERR_INVAL);
    dls_host_clock clk = {.now = fake_now};
    assert_int_equal(dls_host_new(NULL, NULL, &clk, &fc), DLS_ERR_INVAL);
    dls_host_settings s;
    dls_host_settings_default(&s);
    assert_int_equal(s.max_key, 4096);
    assert_int_equal(s.max_holder, 4096);
    assert_int_equal(s.buckets, 64);
    s.max_key = 0;
    assert_int_equal(dls_host_new(&x, &s, &clk, &fc), DLS_ERR_INVAL);
    dls_host_settings_default(&s);
    s.max_key = 2;
    s.buckets = 1;
    assert_int_equal(dls_host_new(&x, &s, &clk, &fc), 0);
    assert_int_equal(dls_host_try_take(x, S("abc"), S("a"), 1, &e), DLS_ERR_INVAL);
    dls_host_del(x);
    dls_host_del(NULL);
    dls_host_wake(NULL);

    /* A reading above 2^63−1 is the owner's clock failing. */
    dls_host_clock badclk = {.now = bad_now};
    assert_int_equal(dls_host_new(&x, NULL, &badclk, NULL), 0);
    assert_int_equal(dls_host_take(x, S("k"), S("a"), 1, &e), DLS_ERR_CALLBACK);
    assert_int_equal(dls_host_remaining(x, S("k"), S("a"), &r), DLS_ERR_CALLBACK);
    assert_int_equal(dls_host_release(x, S("k"), S("a")), DLS_ERR_CALLBACK);
    dls_host_del(x);

    assert_string_equal(dls_strerror(DLS_ERR_STALE_TOKEN),
                        "stale fencing token: a newer holder took over");
    assert_string_equal(dls_strerror(DLS_ERR_FENCE),
                        "the allowance exceeds expires_at: no fence instant");
}

/* Memory follows the keys in use: many keys, each taken and released or
 * left to expire, do not accumulate; the table grows past its buckets. */
static void test_keys_reclaimed(void **state)
{
    (void)state;
    fake_clock fc;
    dls_host *h = new_host(&fc, 0);
    char key[32];
    uint64_t e;
    for (int i = 0; i < 2000; i++) {
        snprintf(key, sizeof key, "key-%d", i);
        assert_int_equal(dls_host_take(h, S(key), S("a"), 10, &e), 0);
    }
    dls_host_stats st;
    assert_int_equal(dls_host_stats_get(h, &st), 0);
    assert_int_equal(st.keys, 2000);
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof key, "key-%d", i);
        assert_int_equal(dls_host_release(h, S(key), S("a")), 0);
    }
    assert_int_equal(dls_host_stats_get(h, &st), 0);
    assert_int_equal(st.keys, 1000);
    /* The others expire; new takes sweep the buckets they land in. */
    fake_set(&fc, 10);
    for (int i = 0; i < 2000; i++) {
        snprintf(key, sizeof key, "new-%d", i);
        assert_int_equal(dls_host_take(h, S(key), S("a"), 10, &e), 0);
        assert_int_equal(dls_host_release(h, S(key), S("a")), 0);
    }
    assert_int_equal(dls_host_stats_get(h, &st), 0);
    assert_true(st.keys < 1000);
    /* Every expired key is still free to take. */
    for (int i = 1000; i < 2000; i++) {
        snprintf(key, sizeof key, "key-%d", i);
        assert_int_equal(dls_host_try_take(h, S(key), S("b"), 10, &e), 0);
        assert_true(e == 20);
    }
    dls_host_del(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_1_1_concurrent_takes_one_expires_at),
        cmocka_unit_test(test_check_1_2_other_take_held_or_unavailable),
        cmocka_unit_test(test_check_2_1_takeable_at_instant),
        cmocka_unit_test(test_check_2_2_not_takeable_earlier),
        cmocka_unit_test(test_check_3_1_killed_holder_held_through_instant),
        cmocka_unit_test(test_check_3_2_no_early_free_on_death),
        cmocka_unit_test(test_check_4_1_waiter_within_arrival_term),
        cmocka_unit_test(test_check_4_2_second_waiter_own_bound),
        cmocka_unit_test(test_nongoal_3_4_fifo_and_not_carried_forward),
        cmocka_unit_test(test_check_5_1_non_holders_none_not_held),
        cmocka_unit_test(test_check_5_2_answers_write_nothing),
        cmocka_unit_test(test_check_6_1_allowance_within_margin),
        cmocka_unit_test(test_check_6_2_each_fence_minted_separately),
        cmocka_unit_test(test_fence_store_refuses_paused_writer),
        cmocka_unit_test(test_identity_bytes_and_grants),
        cmocka_unit_test(test_nongoal_1_2_reentrant_take_is_caller_error),
        cmocka_unit_test(test_bad_input_codes),
        cmocka_unit_test(test_keys_reclaimed),
        cmocka_unit_test(test_real_clock_adapter),
        cmocka_unit_test(test_stress_mutual_exclusion),
        cmocka_unit_test(test_guard_refuses_stale_writer_after_regrant),
        cmocka_unit_test(test_guard_threads),
        cmocka_unit_test(test_guard_persist_and_reload),
    };
    const char *filter = getenv("DLS_TEST_FILTER"); /* e.g. "test_check_4*" */
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
