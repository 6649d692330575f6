/* Test hooks (internal: the tests link the core archive): fault injection
 * into the system calls a file or segmented writer makes, and counters of
 * its writes and syncs. Kept apart so that no backend depends on another. */
#include "stream/internal.h"

static bool writer_of(dls_medium *m, dls_st_tail **t, dls_st_sync **s)
{
    return dls_st_seg_writer(m, t, s) || dls_st_file_writer(m, t, s);
}

void dls_st_file_set_io(dls_medium *m, const dls_st_io *io)
{
    dls_st_set_io(m, io);
}

dls_st_sync *dls_st_file_sync_state(dls_medium *m)
{
    dls_st_tail *t;
    dls_st_sync *s;
    return writer_of(m, &t, &s) ? s : NULL;
}

void dls_st_set_io(dls_medium *m, const dls_st_io *io)
{
    dls_st_tail *t;
    dls_st_sync *s;
    if (!writer_of(m, &t, &s))
        return;
    t->io = io;
    if (s)
        s->io = io;
}

static uint64_t sync_field(dls_medium *m, bool syncs)
{
    dls_st_sync *s = dls_st_file_sync_state(m);
    if (!s)
        return 0;
    pthread_mutex_lock(&s->mu);
    uint64_t n = syncs ? s->syncs : s->wseq;
    pthread_mutex_unlock(&s->mu);
    return n;
}

uint64_t dls_st_sync_count(dls_medium *m)
{
    return sync_field(m, true);
}

uint64_t dls_st_written_count(dls_medium *m)
{
    return sync_field(m, false);
}
