/* The host's real-clock adapter: CLOCK_MONOTONIC as the owner's clock, and
 * the default wait hook. This is the one place the Lease atom host touches a
 * system clock; the core (host/) reads time only through dls_host_clock. */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "daolease/fact.h"
#include "daolease/host.h"

uint64_t dls_host_clock_monotonic(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0; /* cannot happen for CLOCK_MONOTONIC on Linux */
    return (uint64_t)ts.tv_sec * DLS_NS_PER_S + (uint64_t)ts.tv_nsec;
}

int dls_host_wait_monotonic(void *ctx, pthread_cond_t *cond,
                            pthread_mutex_t *mutex, uint64_t now,
                            uint64_t deadline)
{
    (void)ctx;
    if (deadline <= now)
        return 0; /* due already: the caller re-reads its clock */
    uint64_t delta = deadline - now;
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return -1;
    uint64_t abs = dls_add_sat((uint64_t)ts.tv_sec * DLS_NS_PER_S + (uint64_t)ts.tv_nsec, delta);
    if (abs > DLS_NS_MAX)
        abs = DLS_NS_MAX;
    ts.tv_sec = (time_t)(abs / DLS_NS_PER_S);
    ts.tv_nsec = (long)(abs % DLS_NS_PER_S);
    int rc = pthread_cond_clockwait(cond, mutex, CLOCK_MONOTONIC, &ts);
    return rc == 0 || rc == ETIMEDOUT ? 0 : -1;
}
