/* Benchmarks of the Lease atom host on the real clock (CLOCK_MONOTONIC through
 * the adapter), each against a pthread baseline measured in the same run.
 * Prints JSON Lines: {"bench","metric","value","baseline","ratio"} where
 * ratio = value / baseline.
 *
 *   uncontended_take_release_per_s   one thread, take + release on one key
 *                                    vs pthread_mutex lock + unlock
 *   contended_pairs_per_s            two threads looping take + release on
 *                                    one key vs two threads looping
 *                                    lock + unlock on one mutex
 *   contended_handoffs_per_s         strict ping-pong of one key between two
 *                                    threads: each holder releases once the
 *                                    other stands in line (dls_host_waiting),
 *                                    so every release is a FIFO hand-off to a
 *                                    blocked waiter; vs a strict mutex +
 *                                    condvar ping-pong
 *
 * Usage: bench_host [seconds per measurement, default 0.5]
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daolease/fact.h"
#include "daolease/host.h"
#include "common.h"

static double seconds_per = 0.5;

static dls_host *new_host(void)
{
    dls_host_clock clk = {.now = dls_host_clock_monotonic, .wait = NULL};
    dls_host *h = NULL;
    if (dls_host_new(&h, NULL, &clk, NULL) != 0) {
        fprintf(stderr, "dls_host_new failed\n");
        exit(1);
    }
    return h;
}

#define TERM (10 * DLS_NS_PER_S) /* 10 s: no grant expires during a measurement */

/* ---- uncontended ------------------------------------------------------------- */

static double host_uncontended(void)
{
    dls_host *h = new_host();
    uint64_t n = 0, e;
    double t0 = bench_now_s(), t;
    do {
        for (int i = 0; i < 1024; i++) {
            if (dls_host_take(h, "key", 3, "holder", 6, TERM, &e) != 0 ||
                dls_host_release(h, "key", 3, "holder", 6) != 0) {
                fprintf(stderr, "uncontended take/release failed\n");
                exit(1);
            }
        }
        n += 1024;
        t = bench_now_s();
    } while (t - t0 < seconds_per);
    dls_host_del(h);
    return (double)n / (t - t0);
}

static double mutex_uncontended(void)
{
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    volatile uint64_t sink = 0;
    uint64_t n = 0;
    double t0 = bench_now_s(), t;
    do {
        for (int i = 0; i < 1024; i++) {
            pthread_mutex_lock(&mu);
            sink++;
            pthread_mutex_unlock(&mu);
        }
        n += 1024;
        t = bench_now_s();
    } while (t - t0 < seconds_per);
    return (double)n / (t - t0);
}

/* ---- contended: two threads on one key -------------------------------------- */

typedef struct duo {
    dls_host *h;
    pthread_mutex_t mu;
    _Atomic int stop;
    int last;            /* who was inside last (protected by the lease/mutex) */
    uint64_t handoffs;   /* protected likewise */
    uint64_t pairs[2];
} duo;

typedef struct duo_arg {
    duo *d;
    int id;
} duo_arg;

static void *host_duo_run(void *p)
{
    duo_arg *a = p;
    duo *d = a->d;
    const char *holder = a->id ? "B" : "A";
    uint64_t e;
    while (!atomic_load_explicit(&d->stop, memory_order_relaxed)) {
        if (dls_host_take(d->h, "key", 3, holder, 1, TERM, &e) != 0) {
            fprintf(stderr, "contended take failed\n");
            exit(1);
        }
        if (d->last != a->id) {
            d->handoffs++;
            d->last = a->id;
        }
        d->pairs[a->id]++;
        dls_host_release(d->h, "key", 3, holder, 1);
    }
    return NULL;
}

/* Strict ping-pong through the host: take, wait until the other thread is
 * in line, release (handing the key over), take again (now in line). */
static void *host_pingpong_run(void *p)
{
    duo_arg *a = p;
    duo *d = a->d;
    const char *holder = a->id ? "B" : "A";
    uint64_t e;
    size_t n;
    while (!atomic_load_explicit(&d->stop, memory_order_relaxed)) {
        if (dls_host_take(d->h, "key", 3, holder, 1, TERM, &e) != 0) {
            fprintf(stderr, "ping-pong take failed\n");
            exit(1);
        }
        if (d->last != a->id) {
            d->handoffs++;
            d->last = a->id;
        }
        d->pairs[a->id]++;
        /* Wait for the other thread to stand in line, unless stopping. */
        while (dls_host_waiting(d->h, "key", 3, &n) == 0 && n == 0 &&
               !atomic_load_explicit(&d->stop, memory_order_relaxed))
            sched_yield();
        dls_host_release(d->h, "key", 3, holder, 1);
    }
    return NULL;
}

static void *mutex_duo_run(void *p)
{
    duo_arg *a = p;
    duo *d = a->d;
    while (!atomic_load_explicit(&d->stop, memory_order_relaxed)) {
        pthread_mutex_lock(&d->mu);
        if (d->last != a->id) {
            d->handoffs++;
            d->last = a->id;
        }
        d->pairs[a->id]++;
        pthread_mutex_unlock(&d->mu);
    }
    return NULL;
}

/* Runs two threads of `fn` for the measurement time; returns elapsed s. */
static double run_duo(duo *d, void *(*fn)(void *))
{
    pthread_t th[2];
    duo_arg args[2] = {{d, 0}, {d, 1}};
    d->last = -1;
    double t0 = bench_now_s();
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, fn, &args[i]);
    struct timespec ts = {(time_t)seconds_per,
                          (long)((seconds_per - (double)(time_t)seconds_per) * (double)DLS_NS_PER_S)};
    nanosleep(&ts, NULL);
    atomic_store(&d->stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    return bench_now_s() - t0;
}

/* A strict ping-pong: each thread waits for its turn on a condvar. */
typedef struct pingpong {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int turn;
    _Atomic int stop;
    uint64_t handoffs;
} pingpong;

typedef struct pp_arg {
    pingpong *p;
    int id;
} pp_arg;

static void *pingpong_run(void *q)
{
    pp_arg *a = q;
    pingpong *p = a->p;
    pthread_mutex_lock(&p->mu);
    while (!atomic_load(&p->stop)) {
        while (p->turn != a->id && !atomic_load(&p->stop))
            pthread_cond_wait(&p->cv, &p->mu);
        p->handoffs++;
        p->turn = 1 - a->id;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static double pingpong_handoffs(void)
{
    pingpong p;
    memset(&p, 0, sizeof p);
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    pthread_t th[2];
    pp_arg args[2] = {{&p, 0}, {&p, 1}};
    double t0 = bench_now_s();
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, pingpong_run, &args[i]);
    struct timespec ts = {(time_t)seconds_per,
                          (long)((seconds_per - (double)(time_t)seconds_per) * (double)DLS_NS_PER_S)};
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&p.mu);
    atomic_store(&p.stop, 1);
    pthread_cond_broadcast(&p.cv);
    pthread_mutex_unlock(&p.mu);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    double el = bench_now_s() - t0;
    pthread_cond_destroy(&p.cv);
    pthread_mutex_destroy(&p.mu);
    return (double)p.handoffs / el;
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        seconds_per = atof(argv[1]);
        if (seconds_per <= 0)
            seconds_per = 0.5;
    }
    double base = mutex_uncontended();
    double host = host_uncontended();
    bench_line("host", "uncontended_take_release_per_s", host, base);

    duo hd;
    memset(&hd, 0, sizeof hd);
    hd.h = new_host();
    double hel = run_duo(&hd, host_duo_run);
    dls_host_del(hd.h);

    duo md;
    memset(&md, 0, sizeof md);
    pthread_mutex_init(&md.mu, NULL);
    double mel = run_duo(&md, mutex_duo_run);
    pthread_mutex_destroy(&md.mu);
    bench_line("host", "contended_pairs_per_s", (double)(hd.pairs[0] + hd.pairs[1]) / hel,
         (double)(md.pairs[0] + md.pairs[1]) / mel);

    duo pd;
    memset(&pd, 0, sizeof pd);
    pd.h = new_host();
    double pel = run_duo(&pd, host_pingpong_run);
    dls_host_del(pd.h);
    bench_line("host", "contended_handoffs_per_s", (double)pd.handoffs / pel, pingpong_handoffs());
    return 0;
}
