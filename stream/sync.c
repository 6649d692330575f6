/* Sync policies (stream-format.md, Writers): none, data (fdatasync per
 * append) and group (appends in flight share one fdatasync).
 *
 * Group commit is leader/follower: an appender writes under the write
 * mutex, takes a sequence number, releases the write mutex and then waits
 * until a sync covers its sequence. If no sync is running it becomes the
 * leader: it notes the highest sequence written so far, syncs with the
 * state mutex released (so others keep writing behind it), and wakes every
 * waiter. Each caller answers ok only after the sync that covers its own
 * record. A failed sync poisons the handle: after fsync reports an error,
 * the page cache can no longer be trusted to hold what it did not write. */
#include <errno.h>
#include <string.h>

#include "stream/internal.h"

int dls_st_sync_init(dls_st_sync *s, dls_sync policy, int fd, const dls_st_io *io)
{
    memset(s, 0, sizeof *s);
    s->policy = policy;
    s->fd = fd;
    s->io = io ? io : &dls_st_io_sys;
    if (pthread_mutex_init(&s->wmu, NULL))
        return DLS_ERR_NOMEM;
    if (pthread_mutex_init(&s->mu, NULL)) {
        pthread_mutex_destroy(&s->wmu);
        return DLS_ERR_NOMEM;
    }
    if (pthread_cond_init(&s->cv, NULL)) {
        pthread_mutex_destroy(&s->mu);
        pthread_mutex_destroy(&s->wmu);
        return DLS_ERR_NOMEM;
    }
    return 0;
}

void dls_st_sync_fini(dls_st_sync *s)
{
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->wmu);
}

static int poisoned(const dls_st_sync *s, dls_where *w)
{
    return dls_st_fail(w, DLS_ERR_IO, 0,
                       "an earlier fdatasync failed: the medium must be reopened",
                       s->fail_errno);
}

static void mark_failed(dls_st_sync *s, int e)
{
    if (!s->failed) {
        s->failed = true;
        s->fail_from = s->sseq + 1;
        s->fail_errno = e;
    }
}

/* mu held. Runs one sync as the leader when none is running, else waits
 * for the running one to finish. Either way returns with mu held. */
static void lead_or_wait(dls_st_sync *s)
{
    if (s->syncing) {
        pthread_cond_wait(&s->cv, &s->mu);
        return;
    }
    s->syncing = true;
    uint64_t target = s->wseq, covered = s->inflight;
    int fd = s->fd;
    pthread_mutex_unlock(&s->mu);
    int rc = s->io->fdatasync(fd);
    int e = errno;
    pthread_mutex_lock(&s->mu);
    s->syncing = false;
    s->syncs++;
    if (rc == 0) {
        if (target > s->sseq)
            s->sseq = target;
        s->inflight -= covered;
    } else {
        mark_failed(s, e);
    }
    pthread_cond_broadcast(&s->cv);
}

int dls_st_sync_admit(dls_st_sync *s, uint64_t bytes, dls_where *w)
{
    if (s->policy == DLS_SYNC_NONE)
        return 0; /* nothing syncs, nothing can have failed */
    pthread_mutex_lock(&s->mu);
    if (s->policy == DLS_SYNC_GROUP)
        while (!s->failed && s->inflight > 0 && s->inflight + bytes > DLS_ST_INFLIGHT_MAX)
            lead_or_wait(s);
    int rc = s->failed ? poisoned(s, w) : 0;
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int dls_st_sync_written(dls_st_sync *s, uint64_t bytes, uint64_t *seq, dls_where *w)
{
    pthread_mutex_lock(&s->mu);
    uint64_t my = ++s->wseq;
    if (s->policy == DLS_SYNC_GROUP)
        s->inflight += bytes;
    pthread_mutex_unlock(&s->mu);
    if (seq)
        *seq = my;
    if (s->policy != DLS_SYNC_DATA)
        return 0;
    int rc = s->io->fdatasync(s->fd);
    int e = errno;
    pthread_mutex_lock(&s->mu);
    s->syncs++;
    if (rc == 0) {
        s->sseq = my;
    } else {
        mark_failed(s, e);
        rc = dls_st_fail(w, DLS_ERR_IO, 0, "fdatasync failed", e);
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int dls_st_sync_wait(dls_st_sync *s, uint64_t seq, dls_where *w)
{
    if (s->policy != DLS_SYNC_GROUP)
        return 0;
    pthread_mutex_lock(&s->mu);
    while (s->sseq < seq && !(s->failed && seq >= s->fail_from))
        lead_or_wait(s);
    int rc = s->sseq >= seq ? 0 : dls_st_fail(w, DLS_ERR_IO, 0, "fdatasync failed",
                                              s->fail_errno);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int dls_st_sync_switch(dls_st_sync *s, int fd, bool always, dls_where *w)
{
    int rc = 0;
    pthread_mutex_lock(&s->mu);
    while (s->syncing)
        pthread_cond_wait(&s->cv, &s->mu);
    if (!s->failed && (always || (s->policy != DLS_SYNC_NONE && s->sseq < s->wseq))) {
        int r = s->io->fdatasync(s->fd);
        s->syncs++;
        if (r == 0) {
            s->sseq = s->wseq;
            s->inflight = 0;
        } else {
            mark_failed(s, errno);
            rc = dls_st_fail(w, DLS_ERR_IO, 0, "fdatasync failed", s->fail_errno);
        }
    }
    s->fd = fd;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return rc;
}
