/* The memory ring medium (stream-format.md): evict-oldest at a declared
 * capacity in records, inside one process. Fully thread-safe: one mutex
 * guards the ring, and a cursor copies its record out under it into its
 * own buffer, so a concurrent append that evicts the slot cannot change
 * bytes the caller is reading. Sync is irrelevant (nothing is durable);
 * the ring declares DLS_SYNC_NONE. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "stream/internal.h"

typedef struct ring_slot {
    uint8_t *p;
    size_t n, cap;
} ring_slot;

typedef struct st_ring {
    pthread_mutex_t mu;
    size_t cap;          /* slots */
    ring_slot *slots;
    uint64_t first;      /* oldest retained position */
    uint64_t next;       /* position of the next append */
    bool sealed;
} st_ring;

typedef struct st_rcur {
    st_ring *g;
    uint64_t pos;
    uint8_t *buf;
    size_t cap;
} st_rcur;

static void ring_del(void *impl)
{
    st_ring *g = impl;
    if (!g)
        return;
    for (size_t i = 0; i < g->cap; i++)
        free(g->slots[i].p);
    free(g->slots);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

static int reserve(ring_slot *s, size_t n)
{
    if (s->cap >= n)
        return 0;
    size_t cap = s->cap ? s->cap : 64;
    while (cap < n)
        cap *= 2;
    uint8_t *p = realloc(s->p, cap); /* keeps the bytes: a failure changes nothing */
    if (!p)
        return DLS_ERR_NOMEM;
    s->p = p;
    s->cap = cap;
    return 0;
}

static int ring_append_batch(void *impl, const uint8_t *const *recs, const size_t *lens,
                             size_t count, uint64_t *first, dls_where *w)
{
    st_ring *g = impl;
    int rc = 0;
    pthread_mutex_lock(&g->mu);
    if (g->sealed)
        rc = dls_st_fail(w, DLS_ERR_SEALED, 0, "the medium is sealed", 0);
    /* Reserve every slot first, so that a failed allocation changes nothing. */
    for (size_t i = 0; !rc && i < count; i++)
        if (reserve(&g->slots[(g->next + i) % g->cap], lens[i]))
            rc = dls_st_fail(w, DLS_ERR_NOMEM, 0, "out of memory", 0);
    if (!rc) {
        *first = g->next;
        for (size_t i = 0; i < count; i++) {
            ring_slot *s = &g->slots[g->next % g->cap];
            memcpy(s->p, recs[i], lens[i]);
            s->n = lens[i];
            g->next++;
            if (g->next - g->first > g->cap)
                g->first = g->next - g->cap; /* evict the oldest */
        }
        g->sealed = dls_record_is_seal(recs[count - 1], lens[count - 1]);
    }
    pthread_mutex_unlock(&g->mu);
    return rc;
}

static int ring_cursor_new(void *impl, uint64_t from, void **out)
{
    st_rcur *c = calloc(1, sizeof *c);
    if (!c)
        return DLS_ERR_NOMEM;
    c->g = impl;
    c->pos = from;
    *out = c;
    return 0;
}

static void ring_cursor_del(void *impl)
{
    st_rcur *c = impl;
    free(c->buf);
    free(c);
}

static dls_next ring_cursor_next(void *impl, dls_record *rec, dls_where *w)
{
    st_rcur *c = impl;
    st_ring *g = c->g;
    dls_next r;
    pthread_mutex_lock(&g->mu);
    if (c->pos < g->first) {
        rec->gap_from = c->pos;
        rec->position = g->first;
        c->pos = g->first;
        r = DLS_NEXT_GAP;
    } else if (c->pos < g->next) {
        ring_slot *s = &g->slots[c->pos % g->cap];
        if (c->cap < s->n) {
            /* Grows only when a record is longer than any seen before. */
            uint8_t *p = realloc(c->buf, s->n);
            if (!p) {
                pthread_mutex_unlock(&g->mu);
                dls_st_fail(w, DLS_ERR_NOMEM, 0, "out of memory", 0);
                return DLS_NEXT_ERROR;
            }
            c->buf = p;
            c->cap = s->n;
        }
        memcpy(c->buf, s->p, s->n);
        rec->position = c->pos;
        rec->p = c->buf;
        rec->n = s->n;
        c->pos++;
        r = DLS_NEXT_OK;
    } else if (g->sealed) {
        /* Beyond the seal: the first seal ends the medium. */
        rec->position = g->next - 1;
        r = DLS_NEXT_END;
    } else {
        r = DLS_NEXT_BLOCKED;
    }
    pthread_mutex_unlock(&g->mu);
    return r;
}

const dls_medium_ops dls_st_ring_ops = {
    .kind_name = "ring",
    .append = NULL,
    .append_batch = ring_append_batch,
    .seal = NULL,
    .cursor_new = ring_cursor_new,
    .cursor_next = ring_cursor_next,
    .cursor_del = ring_cursor_del,
    .id = NULL,
    .del = ring_del,
};

int dls_ring_new(dls_medium **out, const dls_medium_settings *s)
{
    dls_medium_settings tmp;
    if (!out)
        return DLS_ERR_INVAL;
    *out = NULL;
    if (!s) {
        dls_medium_settings_default(&tmp);
        s = &tmp;
    }
    if (s->ring_capacity == 0)
        return DLS_ERR_INVAL;
    dls_medium_info info;
    memset(&info, 0, sizeof info);
    info.kind = DLS_MEDIUM_RING;
    info.retention = DLS_RETAIN_EVICT_OLDEST;
    info.sync = DLS_SYNC_NONE;
    info.mode = DLS_OPEN_APPEND;
    info.name = "ring";
    if (s->id)
        memcpy(info.id, s->id, DLS_MEDIUM_ID_LEN);
    else if (dls_st_random_id(info.id))
        return DLS_ERR_SODIUM;
    st_ring *g = calloc(1, sizeof *g);
    if (!g)
        return DLS_ERR_NOMEM;
    g->slots = calloc(s->ring_capacity, sizeof *g->slots);
    if (!g->slots || pthread_mutex_init(&g->mu, NULL)) {
        free(g->slots);
        free(g);
        return DLS_ERR_NOMEM;
    }
    g->cap = s->ring_capacity;
    int rc = dls_medium_wrap(out, &dls_st_ring_ops, g, &info);
    if (rc)
        ring_del(g);
    return rc;
}
