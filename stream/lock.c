/* The writer lock (stream-format.md, Writers): an exclusive OFD lock on the
 * whole file — start 0, length 0 — so that closing another descriptor of the
 * file in this process cannot drop it, and so that two handles of one
 * process exclude each other like two processes do. Waits are bounded: a
 * stopped writer must not wedge every other. The bound is counted in slept
 * time, so the library reads no clock. */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>

#include "daolease/fact.h"
#include "stream/internal.h"

static int try_lock(int fd, short type)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = 0;
    fl.l_len = 0;
    fl.l_pid = 0; /* required for OFD locks */
    for (;;) {
        if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
            return 0;
        if (errno != EINTR)
            return -1;
    }
}

int dls_st_lock(int fd, unsigned timeout_ms, dls_where *w)
{
    uint64_t slept_ns = 0, budget_ns = (uint64_t)timeout_ms * DLS_NS_PER_MS;
    long step_ns = 20000; /* 20 µs, doubling to 2 ms */
    int yields = 0;
    for (;;) {
        if (try_lock(fd, F_WRLCK) == 0)
            return 0;
        if (errno != EAGAIN && errno != EACCES)
            return dls_st_fail(w, DLS_ERR_IO, 0, "cannot take the writer lock", errno);
        /* An append holds the lock for a few microseconds: first give the
         * holder the CPU a few times before sleeping (sleeps are at least
         * 20 µs, ten appends' worth). Yields are not counted in the bound;
         * there are at most 8 per call. */
        if (yields < 8 && timeout_ms > 0) {
            yields++;
            sched_yield();
            continue;
        }
        if (slept_ns >= budget_ns)
            return dls_st_fail(w, DLS_ERR_LOCKED, 0,
                               "another writer holds the lock (bounded wait elapsed)", 0);
        uint64_t left = budget_ns - slept_ns;
        long nap = (uint64_t)step_ns < left ? step_ns : (long)left;
        struct timespec ts = {0, nap};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
        }
        slept_ns += (uint64_t)nap;
        if (step_ns < 2000000)
            step_ns *= 2;
    }
}

void dls_st_unlock(int fd)
{
    (void)try_lock(fd, F_UNLCK);
}
