/* Verification ahead of the replay (audit/ahead.h; docs/audit.md,
 * "Threads"): a bounded window of records read ahead per cursor, a queue
 * of those still to attribute, and worker threads taking from it. The
 * replay's thread reads every cursor itself (cursors are not shared) and
 * takes the records back in order; a record no worker has claimed yet when
 * the replay needs it is attributed by the replay's thread itself. */
#include "audit/ahead.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "resolver/internal.h"

/* A buffer larger than this is freed when its record is taken, so what a
 * window keeps between reads stays small (AU_AHEAD x this). */
#define KEEP_BUF 4096u

enum { IT_PLAIN, IT_QUEUED, IT_CLAIMED, IT_DONE };

typedef struct au_item {
    struct au_item *prev, *next; /* the pool's queue (state IT_QUEUED) */
    dls_resolver *res;
    bool batches;
    bool pooled;                 /* handed to the pool: `state` under its lock */
    int state;
    au_read rd;
    uint8_t *buf;
    size_t cap;
} au_item;

struct au_pool {
    pthread_mutex_t mu;
    pthread_cond_t work;         /* workers: the queue is not empty, or quit */
    pthread_cond_t done;         /* the replay: an item it waits for is done */
    au_item *qh, *qt;
    bool quit;
    unsigned idle, waiters;
    unsigned n_th;
    pthread_t *th;
};

struct au_ahead {
    au_pool *pool;               /* NULL: attribution on the caller's thread */
    bool batches;
    bool taken;                  /* ring[head] was answered by the last next */
    bool stopped;                /* the newest read was neither OK nor GAP */
    size_t head, n;              /* the window: ring[head .. head + n) */
    size_t bytes;                /* record bytes in the window */
    au_item ring[AU_AHEAD];
};

/* ---- attribution ---------------------------------------------------------- */

static void attribute(au_item *it, uint8_t *scratch)
{
    au_read *rd = &it->rd;
    dls_facts *facts = it->batches ? &rd->it : NULL;
    if (scratch)
        dls_resolver_attribute_scratch(it->res, scratch, it->batches, rd->rec.p, rd->rec.n,
                                       &rd->att, facts);
    else if (it->batches)
        dls_resolver_attribute_facts(it->res, rd->rec.p, rd->rec.n, &rd->att, facts);
    else
        dls_resolver_attribute(it->res, rd->rec.p, rd->rec.n, &rd->att);
}

/* ---- the pool ------------------------------------------------------------- */

static void q_push(au_pool *p, au_item *it)
{
    it->next = NULL;
    it->prev = p->qt;
    if (p->qt)
        p->qt->next = it;
    else
        p->qh = it;
    p->qt = it;
    it->state = IT_QUEUED;
}

static void q_unlink(au_pool *p, au_item *it)
{
    if (it->prev)
        it->prev->next = it->next;
    else
        p->qh = it->next;
    if (it->next)
        it->next->prev = it->prev;
    else
        p->qt = it->prev;
    it->prev = it->next = NULL;
}

static void *worker(void *arg)
{
    au_pool *p = arg;
    /* without its scratch a worker takes nothing: the replay's thread
     * attributes what stays queued */
    uint8_t *scratch = malloc(DLS_RESOLVER_SCRATCH);
    pthread_mutex_lock(&p->mu);
    while (scratch) {
        while (!p->qh && !p->quit) {
            p->idle++;
            pthread_cond_wait(&p->work, &p->mu);
            p->idle--;
        }
        if (p->quit)
            break;
        au_item *it = p->qh;
        q_unlink(p, it);
        it->state = IT_CLAIMED;
        pthread_mutex_unlock(&p->mu);
        attribute(it, scratch);
        pthread_mutex_lock(&p->mu);
        it->state = IT_DONE;
        if (p->waiters)
            pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    free(scratch);
    return NULL;
}

int au_pool_new(au_pool **out, unsigned threads)
{
    *out = NULL;
    au_pool *p = calloc(1, sizeof *p);
    if (!p)
        return DLS_ERR_NOMEM;
    unsigned want = threads > 1 ? threads - 1 : 0;
    if (want && !(p->th = calloc(want, sizeof *p->th))) {
        free(p);
        return DLS_ERR_NOMEM;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    while (p->n_th < want && pthread_create(&p->th[p->n_th], NULL, worker, p) == 0)
        p->n_th++;
    *out = p;
    return 0;
}

void au_pool_del(au_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->n_th; i++)
        pthread_join(p->th[i], NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    free(p->th);
    free(p);
}

unsigned au_pool_workers(const au_pool *p)
{
    return p ? p->n_th : 0;
}

/* ---- a window --------------------------------------------------------------- */

int au_ahead_new(au_ahead **out, au_pool *p, bool batches)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return DLS_ERR_NOMEM;
    (*out)->pool = p && p->n_th ? p : NULL;
    (*out)->batches = batches;
    return 0;
}

/* Makes sure no worker holds `it` (unqueues it when still queued). True
 * when the caller must attribute it itself. While a worker holds it, the
 * caller attributes the oldest queued records meanwhile (with the
 * resolvers' own scratch: only the replay's thread uses it), and sleeps
 * only when none is left: the replay's thread never idles while there is
 * verification to do. */
static bool reclaim(au_pool *p, au_item *it)
{
    bool mine = false;
    pthread_mutex_lock(&p->mu);
    if (it->state == IT_QUEUED) {
        q_unlink(p, it);
        it->state = IT_DONE;
        mine = true;
    }
    while (it->state == IT_CLAIMED) {
        au_item *other = p->qh;
        if (other) {
            q_unlink(p, other);
            other->state = IT_CLAIMED;
            pthread_mutex_unlock(&p->mu);
            attribute(other, NULL);
            pthread_mutex_lock(&p->mu);
            other->state = IT_DONE;
            continue;
        }
        p->waiters++;
        pthread_cond_wait(&p->done, &p->mu);
        p->waiters--;
    }
    pthread_mutex_unlock(&p->mu);
    it->pooled = false;
    return mine;
}

void au_ahead_del(au_ahead *h)
{
    if (!h)
        return;
    for (size_t k = 0; k < h->n; k++) {
        au_item *it = &h->ring[(h->head + k) % AU_AHEAD];
        if (it->pooled)
            reclaim(h->pool, it);
    }
    for (size_t k = 0; k < AU_AHEAD; k++)
        free(h->ring[k].buf);
    free(h);
}

static void release_taken(au_ahead *h)
{
    if (!h->taken)
        return;
    au_item *it = &h->ring[h->head];
    if (h->pool)
        h->bytes -= it->rd.rec.n;
    if (it->cap > KEEP_BUF) {
        free(it->buf);
        it->buf = NULL;
        it->cap = 0;
    }
    if (it->rd.r != DLS_NEXT_OK && it->rd.r != DLS_NEXT_GAP)
        h->stopped = false; /* taken: the cursor may be read again */
    h->head = (h->head + 1) % AU_AHEAD;
    h->n--;
    h->taken = false;
}

/* Reads one record into the window's next free item; false on NOMEM. */
static bool read_one(au_ahead *h, dls_cursor *cur, dls_resolver *res)
{
    au_item *it = &h->ring[(h->head + h->n) % AU_AHEAD];
    au_read *rd = &it->rd;
    dls_record rec;
    dls_where w = {0};
    rd->at = dls_cursor_position(cur);
    dls_next r = dls_cursor_next(cur, &rec, &w);
    size_t len = r == DLS_NEXT_OK ? rec.n : 0;
    if (!h->pool) {
        /* no workers: one record in the window, taken before the cursor
         * is read again, so the cursor's own buffer serves (no copy) */
        rd->r = r;
        rd->rec = rec;
        if (r != DLS_NEXT_OK)
            rd->rec.p = NULL, rd->rec.n = 0;
        rd->w = w;
        it->res = res;
        it->batches = h->batches;
        it->pooled = false;
        it->state = r == DLS_NEXT_OK ? IT_PLAIN : IT_DONE;
        if (r != DLS_NEXT_OK && r != DLS_NEXT_GAP)
            h->stopped = true;
        h->n++;
        return true;
    }
    if (len > it->cap) {
        uint8_t *nb = malloc(len);
        if (!nb)
            return false; /* the read is lost: the run answers NOMEM */
        free(it->buf);
        it->buf = nb;
        it->cap = len;
    }
    if (len)
        memcpy(it->buf, rec.p, len);
    rd->r = r;
    rd->rec = rec;
    rd->rec.p = len ? it->buf : NULL;
    rd->rec.n = len;
    rd->w = w;
    it->res = res;
    it->batches = h->batches;
    it->pooled = false;
    it->state = r == DLS_NEXT_OK ? IT_PLAIN : IT_DONE;
    if (r != DLS_NEXT_OK && r != DLS_NEXT_GAP)
        h->stopped = true;
    h->n++;
    h->bytes += len;
    return true;
}

/* Reads ahead and queues the new records for the workers (one lock). */
static bool fill(au_ahead *h, dls_cursor *cur, dls_resolver *res, uint64_t limit)
{
    size_t max = h->pool ? AU_AHEAD : 1; /* no workers: one record at a time */
    size_t first = h->n;
    while (!h->stopped && h->n < max && (h->n == 0 || h->bytes < AU_AHEAD_BYTES) &&
           dls_cursor_position(cur) < limit)
        if (!read_one(h, cur, res))
            return false;
    if (!h->pool || first == h->n)
        return true;
    size_t pushed = 0;
    pthread_mutex_lock(&h->pool->mu);
    for (size_t k = first; k < h->n; k++) {
        au_item *it = &h->ring[(h->head + k) % AU_AHEAD];
        if (it->state != IT_PLAIN)
            continue;
        it->pooled = true;
        q_push(h->pool, it);
        pushed++;
    }
    if (pushed && h->pool->idle) {
        if (pushed > 1)
            pthread_cond_broadcast(&h->pool->work);
        else
            pthread_cond_signal(&h->pool->work);
    }
    pthread_mutex_unlock(&h->pool->mu);
    return true;
}

const au_read *au_ahead_next(au_ahead *h, dls_cursor *cur, dls_resolver *res, uint64_t limit)
{
    release_taken(h);
    if (!fill(h, cur, res, limit) || h->n == 0)
        return NULL;
    au_item *it = &h->ring[h->head];
    if (it->pooled ? reclaim(h->pool, it) : it->state == IT_PLAIN)
        attribute(it, NULL);
    it->state = IT_DONE;
    h->taken = true;
    return &it->rd;
}

uint64_t au_ahead_position(const au_ahead *h, const dls_cursor *cur)
{
    size_t waiting = h->n - (h->taken ? 1 : 0);
    if (waiting)
        return h->ring[(h->head + (h->taken ? 1 : 0)) % AU_AHEAD].rd.at;
    return dls_cursor_position(cur);
}

bool au_ahead_empty(const au_ahead *h)
{
    return h->n - (h->taken ? 1 : 0) == 0;
}
