/* bench/sink.h — a journal medium that keeps nothing (bench_judge,
 * bench_observe): appends are counted and dropped, a cursor on it is always
 * blocked. A benchmark of the judge's pass measures the pass, not the disk.
 * Include after daolease/medium_impl.h. */
#ifndef DLS_BENCH_SINK_H
#define DLS_BENCH_SINK_H

#include <stdlib.h>

#include "daolease/medium_impl.h"

typedef struct sink {
    uint64_t next;
} sink;

static inline int sink_batch(void *impl, const uint8_t *const *recs, const size_t *lens,
                             size_t count, uint64_t *first, dls_where *w)
{
    (void)recs, (void)lens, (void)w;
    sink *s = impl;
    *first = s->next;
    s->next += count;
    return 0;
}

static inline int sink_cursor_new(void *impl, uint64_t from, void **out)
{
    (void)impl, (void)from;
    *out = malloc(1);
    return *out ? 0 : DLS_ERR_NOMEM;
}

static inline dls_next sink_next(void *c, dls_record *rec, dls_where *w)
{
    (void)c, (void)rec, (void)w;
    return DLS_NEXT_BLOCKED;
}

static inline void sink_cursor_del(void *c) { free(c); }
static inline void sink_del(void *impl) { free(impl); }

static const dls_medium_ops sink_ops = {
    .kind_name = "sink",
    .append_batch = sink_batch,
    .cursor_new = sink_cursor_new,
    .cursor_next = sink_next,
    .cursor_del = sink_cursor_del,
    .del = sink_del,
};

#endif
