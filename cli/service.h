/* daolease judge under a service manager (docs/service.md): the sd_notify
 * protocol of a Type=notify unit. READY=1 once the judge is assembled and
 * its first pass returned, WATCHDOG=1 after every pass when the manager
 * asked for it (WATCHDOG_USEC), STATUS= with the pass number and the live
 * leases about once a second, STOPPING=1 when a stop signal was seen.
 *
 * Built with libsystemd's sd_notify when the meson option `systemd` found
 * it; without it every call does nothing. Outside a unit (no
 * NOTIFY_SOCKET) every call does nothing either. */
#ifndef DLS_CLI_SERVICE_H
#define DLS_CLI_SERVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "daolease/judge.h"

/* One judge process's notification state (a local of its pass loop). */
typedef struct dls_cli_notify {
    bool ready;            /* READY=1 was sent */
    bool watchdog;         /* the manager set WATCHDOG_USEC for this process */
    uint64_t last_status;  /* host ns of the last STATUS= */
} dls_cli_notify;

void dls_cli_notify_init(dls_cli_notify *n);

/* After each pass that did not end the process; `now` is the host
 * clock's reading taken before the pass (ns). */
void dls_cli_notify_pass(dls_cli_notify *n, const dls_judge_pass_result *r, uint64_t now);

/* When the pass loop saw SIGTERM/SIGINT/SIGHUP: the process finishes its
 * pass, writes its last checkpoint when configured, and exits 0. */
void dls_cli_notify_stopping(int sig);

#endif
