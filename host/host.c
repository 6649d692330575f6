/* The Lease atom host (host.md; seed 000 "Lease").
 *
 * One state per key (State 1): a stored grant — holder bytes and
 * expires_at — or none. Whether the key is free is derived at the moment a
 * question is asked by comparing the stored expires_at with the reading of
 * the owner's clock (State 2); nothing is written when an instant passes and
 * no timer runs (State 3). A grant ends only by release or by its instant
 * (Invariant 2): there is no other way to clear `holder`.
 *
 * Waiters queue per key in arrival order (Non-goal 3). A waiter's bound is
 * an instant fixed at arrival: the arrival reading plus the current holder's
 * remaining term, i.e. that holder's expires_at (Invariant 4.1). It is never
 * changed afterwards (Operation 5, Invariant 4.2). settle() hands a key that
 * has freed to the first waiter whose bound the freeing instant does not
 * exceed, at that instant (Operation 2), answers unavailable to every waiter
 * whose bound passed first (Operation 4, Non-goal 4), and is run by whichever
 * thread asks a writing question of the key (take, try_take, release) or
 * wakes in a wait. Remaining and a not-held release never settle: they write
 * nothing (Check 5.2).
 *
 * Threads block in the owner's `wait` hook on the key's condition variable
 * with a deadline on the owner's clock: the earlier of their own bound and
 * the current holder's expires_at, the only instants at which their answer
 * can change without a signal.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "daolease/fact.h"
#include "daolease/host.h"

enum { W_WAITING = 0, W_TAKEN, W_UNAVAILABLE };

typedef struct waiter {
    struct waiter *next, *prev;
    uint8_t *holder;      /* owned copy; moved to the entry when granted */
    size_t hlen;
    uint64_t duration;
    uint64_t bound;       /* instant: arrival + arrival term (Invariant 4.1) */
    uint64_t expires_at;  /* set when granted */
    int status;
} waiter;

typedef struct entry {
    struct entry *chain;          /* hash chain */
    struct entry *wnext, *wprev;  /* host list of entries with waiters */
    uint64_t hash;
    uint8_t *holder;              /* NULL: no grant stored */
    size_t hlen;
    uint64_t expires_at;          /* valid when holder != NULL */
    uint64_t free_since;          /* valid when holder == NULL */
    waiter *head, *tail;
    size_t nwaiters;
    size_t refs;                  /* takes inside a wait on this entry */
    pthread_cond_t cond;
    size_t klen;
    uint8_t key[];
} entry;

struct dls_host {
    pthread_mutex_t mu;
    dls_host_clock clock;
    void *clock_ctx;
    size_t max_key, max_holder;
    entry **buckets;
    size_t nbuckets;              /* a power of two */
    size_t nkeys;
    entry *waited;                /* entries with waiters */
    size_t nwaiters;
    uint64_t last_now;
    uint64_t grants, writes;
    unsigned char hkey[crypto_shorthash_KEYBYTES];
};

void dls_host_settings_default(dls_host_settings *s)
{
    if (!s)
        return;
    s->max_key = 4096;
    s->max_holder = 4096;
    s->buckets = 64;
}

/* ---- small helpers -------------------------------------------------------- */

/* Held at `now`: a stored grant whose instant has not passed. The instant
 * itself is free (seed 000, Check 2.1: takeable at the instant). */
static bool held_at(const entry *e, uint64_t now)
{
    return e->holder != NULL && now < e->expires_at;
}

static bool same_bytes(const uint8_t *a, size_t an, const void *b, size_t bn)
{
    return an == bn && memcmp(a, b, an) == 0;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Reads the owner's clock; never moves back. */
static int read_now(dls_host *h, uint64_t *now)
{
    uint64_t r = h->clock.now(h->clock_ctx);
    if (r > DLS_NS_MAX)
        return DLS_ERR_CALLBACK;
    if (r < h->last_now)
        r = h->last_now;
    h->last_now = r;
    *now = r;
    return 0;
}

static int check_args(const dls_host *h, const void *key, size_t klen,
                      const void *holder, size_t hlen)
{
    if (!h || !key || klen == 0 || klen > h->max_key)
        return DLS_ERR_INVAL;
    if (!holder || hlen == 0 || hlen > h->max_holder)
        return DLS_ERR_INVAL;
    return 0;
}

static uint64_t key_hash(const dls_host *h, const void *key, size_t klen)
{
    unsigned char out[crypto_shorthash_BYTES];
    crypto_shorthash(out, key, klen, h->hkey);
    uint64_t v;
    memcpy(&v, out, sizeof v);
    return v;
}

static uint8_t *dup_bytes(const void *p, size_t n)
{
    uint8_t *c = malloc(n);
    if (c)
        memcpy(c, p, n);
    return c;
}

/* ---- the key table ---------------------------------------------------------- */

static entry *lookup(const dls_host *h, const void *key, size_t klen, uint64_t hash)
{
    for (entry *e = h->buckets[hash & (h->nbuckets - 1)]; e; e = e->chain)
        if (e->hash == hash && same_bytes(e->key, e->klen, key, klen))
            return e;
    return NULL;
}

static void entry_free(entry *e)
{
    pthread_cond_destroy(&e->cond);
    free(e->holder);
    free(e);
}

/* An entry whose removal no question could observe: no waiter, no take
 * inside a wait on it, and no live grant at `now`. */
static bool reclaimable(const entry *e, uint64_t now)
{
    return e->head == NULL && e->refs == 0 && !held_at(e, now);
}

static void unchain(dls_host *h, entry *e)
{
    entry **pp = &h->buckets[e->hash & (h->nbuckets - 1)];
    while (*pp != e)
        pp = &(*pp)->chain;
    *pp = e->chain;
    h->nkeys--;
}

static void grow(dls_host *h)
{
    size_t n = h->nbuckets * 2;
    if (n < h->nbuckets || n > SIZE_MAX / sizeof(entry *))
        return;
    entry **b = calloc(n, sizeof *b);
    if (!b)
        return; /* the table still works, only with longer chains */
    for (size_t i = 0; i < h->nbuckets; i++) {
        entry *e = h->buckets[i];
        while (e) {
            entry *next = e->chain;
            size_t j = e->hash & (n - 1);
            e->chain = b[j];
            b[j] = e;
            e = next;
        }
    }
    free(h->buckets);
    h->buckets = b;
    h->nbuckets = n;
}

/* Finds the key's entry or creates a free one; on the way frees the
 * bucket's reclaimable entries, so memory follows the keys in use. */
static int lookup_or_create(dls_host *h, const void *key, size_t klen,
                            uint64_t now, entry **out)
{
    uint64_t hash = key_hash(h, key, klen);
    entry **pp = &h->buckets[hash & (h->nbuckets - 1)];
    entry *found = NULL;
    while (*pp) {
        entry *e = *pp;
        if (e->hash == hash && same_bytes(e->key, e->klen, key, klen)) {
            found = e;
            pp = &e->chain;
        } else if (reclaimable(e, now)) {
            *pp = e->chain;
            h->nkeys--;
            entry_free(e);
        } else {
            pp = &e->chain;
        }
    }
    if (found) {
        *out = found;
        return 0;
    }
    if (klen > SIZE_MAX - sizeof(entry))
        return DLS_ERR_NOMEM;
    entry *e = calloc(1, sizeof *e + klen);
    if (!e)
        return DLS_ERR_NOMEM;
    if (pthread_cond_init(&e->cond, NULL) != 0) {
        free(e);
        return DLS_ERR_NOMEM;
    }
    e->hash = hash;
    e->klen = klen;
    memcpy(e->key, key, klen);
    e->free_since = now;
    if (h->nkeys >= h->nbuckets * 2)
        grow(h);
    entry **b = &h->buckets[hash & (h->nbuckets - 1)];
    e->chain = *b;
    *b = e;
    h->nkeys++;
    *out = e;
    return 0;
}

/* ---- waiters -------------------------------------------------------------- */

static void waited_link(dls_host *h, entry *e)
{
    e->wprev = NULL;
    e->wnext = h->waited;
    if (h->waited)
        h->waited->wprev = e;
    h->waited = e;
}

static void waited_unlink(dls_host *h, entry *e)
{
    if (e->wprev)
        e->wprev->wnext = e->wnext;
    else
        h->waited = e->wnext;
    if (e->wnext)
        e->wnext->wprev = e->wprev;
    e->wnext = e->wprev = NULL;
}

static void enqueue(dls_host *h, entry *e, waiter *w)
{
    w->next = NULL;
    w->prev = e->tail;
    if (e->tail)
        e->tail->next = w;
    else
        e->head = w;
    e->tail = w;
    if (e->nwaiters++ == 0)
        waited_link(h, e);
    h->nwaiters++;
}

static void dequeue(dls_host *h, entry *e, waiter *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        e->head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        e->tail = w->prev;
    w->next = w->prev = NULL;
    if (--e->nwaiters == 0)
        waited_unlink(h, e);
    h->nwaiters--;
}

static bool is_waiting(const entry *e, const void *holder, size_t hlen)
{
    for (const waiter *w = e->head; w; w = w->next)
        if (same_bytes(w->holder, w->hlen, holder, hlen))
            return true;
    return false;
}

/* Stores a grant: `holder` (owned) until at + duration. Callers guarantee
 * at <= 2^63−1 and duration <= 2^63−1, so the sum fits. */
static void grant(dls_host *h, entry *e, uint8_t *holder, size_t hlen,
                  uint64_t at, uint64_t duration)
{
    free(e->holder);
    e->holder = holder;
    e->hlen = hlen;
    e->expires_at = at + duration;
    h->grants++;
    h->writes++;
}

/* Derives the key's state at `now` for its waiters (see the file comment).
 * Returns true when a waiter was answered. */
static bool settle(dls_host *h, entry *e, uint64_t now)
{
    bool changed = false;
    while (e->head && !held_at(e, now)) {
        /* The key freed at `f`: by release (free_since) or by its
         * holder's instant passing. */
        uint64_t f = e->holder ? e->expires_at : e->free_since;
        waiter *w = e->head;
        dequeue(h, e, w);
        if (w->bound < f) {
            /* Its bound elapsed before the key freed: answered, not
             * carried forward (Operation 4, Non-goal 4). */
            w->status = W_UNAVAILABLE;
            h->writes++;
        } else {
            /* Succeeds at the instant the key became free (Operation 2). */
            grant(h, e, w->holder, w->hlen, f, w->duration);
            w->holder = NULL;
            w->expires_at = e->expires_at;
            w->status = W_TAKEN;
        }
        changed = true;
    }
    /* The key is held past `now`: every waiter whose bound is reached
     * answers unavailable now, within its arrival term (Check 4.1, 4.2). */
    for (waiter *w = e->head, *next; w; w = next) {
        next = w->next;
        if (w->bound <= now) {
            dequeue(h, e, w);
            w->status = W_UNAVAILABLE;
            h->writes++;
            changed = true;
        }
    }
    if (changed)
        pthread_cond_broadcast(&e->cond);
    return changed;
}

/* ---- lifecycle -------------------------------------------------------------- */

int dls_host_new(dls_host **out, const dls_host_settings *s,
                 const dls_host_clock *clock, void *clock_ctx)
{
    if (!out)
        return DLS_ERR_INVAL;
    *out = NULL;
    dls_host_settings d;
    dls_host_settings_default(&d);
    if (!s)
        s = &d;
    if (!clock || !clock->now || s->max_key == 0 || s->max_holder == 0)
        return DLS_ERR_INVAL;
    if (sodium_init() < 0)
        return DLS_ERR_SODIUM;
    size_t nb = 16;
    while (nb < s->buckets && nb < ((size_t)1 << 30))
        nb *= 2;
    dls_host *h = calloc(1, sizeof *h);
    if (!h)
        return DLS_ERR_NOMEM;
    h->buckets = calloc(nb, sizeof *h->buckets);
    if (!h->buckets) {
        free(h);
        return DLS_ERR_NOMEM;
    }
    if (pthread_mutex_init(&h->mu, NULL) != 0) {
        free(h->buckets);
        free(h);
        return DLS_ERR_NOMEM;
    }
    h->nbuckets = nb;
    h->clock = *clock;
    if (!h->clock.wait)
        h->clock.wait = dls_host_wait_monotonic;
    h->clock_ctx = clock_ctx;
    h->max_key = s->max_key;
    h->max_holder = s->max_holder;
    randombytes_buf(h->hkey, sizeof h->hkey);
    *out = h;
    return 0;
}

void dls_host_del(dls_host *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->nbuckets; i++) {
        entry *e = h->buckets[i];
        while (e) {
            entry *next = e->chain;
            entry_free(e);
            e = next;
        }
    }
    free(h->buckets);
    pthread_mutex_destroy(&h->mu);
    sodium_memzero(h->hkey, sizeof h->hkey);
    free(h);
}

/* ---- the operations ----------------------------------------------------------- */

/* Waits in line until the waiter is answered. Called locked, with the
 * waiter queued; returns locked. */
static int wait_in_line(dls_host *h, entry *e, waiter *w)
{
    int rc = 0;
    e->refs++;
    while (w->status == W_WAITING) {
        uint64_t deadline = e->holder ? min_u64(w->bound, e->expires_at) : h->last_now;
        int wrc = h->clock.wait(h->clock_ctx, &e->cond, &h->mu, h->last_now, deadline);
        uint64_t now;
        int nrc = read_now(h, &now);
        if (w->status != W_WAITING)
            break;
        if (wrc != 0 || nrc != 0) {
            /* The owner's clock failed us: stop waiting, leave the line. */
            dequeue(h, e, w);
            pthread_cond_broadcast(&e->cond);
            rc = DLS_ERR_CALLBACK;
            break;
        }
        settle(h, e, now);
    }
    e->refs--;
    if (rc == 0 && w->status == W_UNAVAILABLE)
        rc = DLS_ERR_UNAVAILABLE;
    return rc;
}

static int take_common(dls_host *h, const void *key, size_t klen,
                       const void *holder, size_t hlen, uint64_t duration,
                       uint64_t *expires_at, bool may_wait)
{
    int rc = check_args(h, key, klen, holder, hlen);
    if (rc != 0)
        return rc;
    if (!expires_at || duration == 0 || duration > DLS_NS_MAX)
        return DLS_ERR_INVAL;
    uint8_t *copy = dup_bytes(holder, hlen);
    if (!copy)
        return DLS_ERR_NOMEM;

    pthread_mutex_lock(&h->mu);
    uint64_t now;
    entry *e = NULL;
    rc = read_now(h, &now);
    if (rc == 0)
        rc = lookup_or_create(h, key, klen, now, &e);
    if (rc != 0)
        goto out;
    settle(h, e, now);
    if ((held_at(e, now) && same_bytes(e->holder, e->hlen, holder, hlen)) ||
        is_waiting(e, holder, hlen)) {
        /* Non-goal 1 and 2: no nesting, no depth count. */
        rc = DLS_ERR_HELD_BY_CALLER;
        goto out;
    }
    if (!held_at(e, now)) {
        /* Free, and nobody in line (settle empties the line of a free key). */
        grant(h, e, copy, hlen, now, duration);
        copy = NULL;
        *expires_at = e->expires_at;
        goto out;
    }
    if (!may_wait) {
        rc = DLS_HOST_HELD; /* Operation 6 and 7 */
        goto out;
    }
    /* The arrival term is the holder's remaining term now, so the bound —
     * arrival plus arrival term — is the holder's expires_at. */
    waiter w = {.holder = copy, .hlen = hlen, .duration = duration,
                .bound = e->expires_at, .status = W_WAITING};
    copy = NULL;
    enqueue(h, e, &w);
    rc = wait_in_line(h, e, &w);
    if (rc == 0)
        *expires_at = w.expires_at;
    copy = w.holder; /* still ours unless granted (then NULL) */
out:
    pthread_mutex_unlock(&h->mu);
    free(copy);
    return rc;
}

int dls_host_take(dls_host *h, const void *key, size_t klen, const void *holder,
                  size_t hlen, uint64_t duration, uint64_t *expires_at)
{
    return take_common(h, key, klen, holder, hlen, duration, expires_at, true);
}

int dls_host_try_take(dls_host *h, const void *key, size_t klen,
                      const void *holder, size_t hlen, uint64_t duration,
                      uint64_t *expires_at)
{
    return take_common(h, key, klen, holder, hlen, duration, expires_at, false);
}

int dls_host_remaining(dls_host *h, const void *key, size_t klen,
                       const void *holder, size_t hlen, uint64_t *remaining)
{
    int rc = check_args(h, key, klen, holder, hlen);
    if (rc != 0)
        return rc;
    if (!remaining)
        return DLS_ERR_INVAL;
    uint64_t hash = key_hash(h, key, klen);
    pthread_mutex_lock(&h->mu);
    uint64_t now;
    rc = read_now(h, &now);
    if (rc == 0) {
        const entry *e = lookup(h, key, klen, hash);
        if (e && held_at(e, now) && same_bytes(e->holder, e->hlen, holder, hlen))
            *remaining = e->expires_at - now; /* Operation 8 */
        else
            rc = DLS_HOST_NONE; /* Operation 9, Invariant 5.1 */
    }
    pthread_mutex_unlock(&h->mu);
    return rc;
}

int dls_host_release(dls_host *h, const void *key, size_t klen,
                     const void *holder, size_t hlen)
{
    int rc = check_args(h, key, klen, holder, hlen);
    if (rc != 0)
        return rc;
    uint64_t hash = key_hash(h, key, klen);
    pthread_mutex_lock(&h->mu);
    uint64_t now;
    rc = read_now(h, &now);
    if (rc != 0)
        goto out;
    entry *e = lookup(h, key, klen, hash);
    if (!e || !held_at(e, now) || !same_bytes(e->holder, e->hlen, holder, hlen)) {
        rc = DLS_HOST_NOT_HELD; /* Operation 12 and 13: nothing written */
        goto out;
    }
    /* Operation 11: the asking holder's grant ends now. */
    free(e->holder);
    e->holder = NULL;
    e->hlen = 0;
    e->free_since = now;
    h->writes++;
    settle(h, e, now);
    if (reclaimable(e, now)) {
        unchain(h, e);
        entry_free(e);
    }
out:
    pthread_mutex_unlock(&h->mu);
    return rc;
}

void dls_host_wake(dls_host *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&h->mu);
    for (entry *e = h->waited; e; e = e->wnext)
        pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&h->mu);
}

int dls_host_stats_get(dls_host *h, dls_host_stats *out)
{
    if (!h || !out)
        return DLS_ERR_INVAL;
    pthread_mutex_lock(&h->mu);
    out->keys = h->nkeys;
    out->waiters = h->nwaiters;
    out->grants = h->grants;
    out->writes = h->writes;
    pthread_mutex_unlock(&h->mu);
    return 0;
}

int dls_host_waiting(dls_host *h, const void *key, size_t klen, size_t *n)
{
    if (!h || !key || klen == 0 || klen > h->max_key || !n)
        return DLS_ERR_INVAL;
    uint64_t hash = key_hash(h, key, klen);
    pthread_mutex_lock(&h->mu);
    const entry *e = lookup(h, key, klen, hash);
    *n = e ? e->nwaiters : 0;
    pthread_mutex_unlock(&h->mu);
    return 0;
}
