/* bench/common.h — what every benchmark program shares: the clocks it reads
 * (benchmarks may read the clock; the library never does) and the one JSON
 * Lines record it prints,
 *
 *     {"bench": B, "metric": M, "value": V, "baseline": X, "ratio": V/X}
 *
 * the baseline measured in the same run (ratio 0 when the baseline is 0).
 * Header-only: each benchmark is one program of one file. */
#ifndef DLS_BENCH_COMMON_H
#define DLS_BENCH_COMMON_H

#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include "daolease/fact.h"

/* Seconds on clock `id` (CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID, …). */
static inline double bench_clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / (double)DLS_NS_PER_S;
}

/* Wall seconds (monotonic). */
static inline double bench_now_s(void)
{
    return bench_clock_s(CLOCK_MONOTONIC);
}

/* CPU seconds of this process, user + system: the machines are shared, so
 * wall time includes waiting for a core. */
static inline double bench_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Prints one record and flushes (a reader sees each line as it comes). */
static inline void bench_line(const char *bench, const char *metric, double value,
                              double baseline)
{
    printf("{\"bench\": \"%s\", \"metric\": \"%s\", \"value\": %.6g, \"baseline\": %.6g, "
           "\"ratio\": %.4g}\n",
           bench, metric, value, baseline, baseline != 0 ? value / baseline : 0.0);
    fflush(stdout);
}

#endif
