/* daolease command — child processes and the host-clock loop helpers of
 * `judge`, `run` and `demo`. */
#ifndef DLS_CLI_PROC_H
#define DLS_CLI_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Starts argv[0] with argv in a new process group, with the extra
 * environment entries env[] ("NAME=value", NULL-terminated). Returns the
 * pid, or -1 with errno. */
pid_t dls_cli_spawn(char *const argv[], char *const env[]);

/* The exit status a shell would report for a wait status: the code, or
 * 128 + the signal number. */
int dls_cli_exit_status(int wstatus);

/* Sleeps `ns` nanoseconds (interrupted early by a signal). */
void dls_cli_sleep(uint64_t ns);

/* Installs SIGINT/SIGTERM/SIGHUP handlers that set a flag read by
 * dls_cli_stop_requested(); returns the signal number seen, or 0. */
void dls_cli_catch_stop(void);
int dls_cli_stop_requested(void);

#endif
