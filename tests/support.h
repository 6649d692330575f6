/* daolease tests — helpers shared by the test programs: processes and
 * timing for those that start commands and servers (test_e2e, test_run,
 * test_judge_proc, test_redis, test_jetstream, test_holder), and hex
 * decoding for the vectors and fixtures. Tests only: these read the host
 * clock and fork, which the core never does. Failures go through cmocka
 * (include <cmocka.h> before this header). */
#ifndef DLS_TESTS_SUPPORT_H
#define DLS_TESTS_SUPPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Sleeps ms milliseconds (restarting after a signal). */
void sleep_ms(unsigned ms);

/* CLOCK_MONOTONIC in milliseconds. */
uint64_t mono_ms(void);

/* Runs the formatted command under /bin/sh -c; returns its exit status, or
 * 128 + the signal that ended it. */
int run_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Starts the formatted command under /bin/sh -c in the background and
 * returns its pid (asserts the fork). spawn_group puts it in a process
 * group of its own, so kill(-pid, sig) reaches the shell and its children. */
pid_t spawn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
pid_t spawn_group(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Waits for pid (asserted); its exit status, or 128 + its signal. */
int wait_status(pid_t pid);

/* A TCP port on 127.0.0.1 free a moment ago, or -1. */
int free_port(void);

/* Decodes the whole hex string (asserted: even length, every digit hex, at
 * most cap bytes) into out; the number of bytes. */
size_t test_unhex(const char *hex, uint8_t *out, size_t cap);

#endif
