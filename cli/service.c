/* daolease judge under a service manager: sd_notify (cli/service.h,
 * docs/service.md, Readiness and watchdog). */
#include "cli/service.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "daolease/fact.h"

#ifdef DLS_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>

static void notify(const char *msg)
{
    /* a manager that does not listen is no reason to stop judging */
    (void)sd_notify(0, msg);
}

static bool watchdog_asked(void)
{
    return sd_watchdog_enabled(0, NULL) > 0;
}
#else
static void notify(const char *msg)
{
    (void)msg;
}

static bool watchdog_asked(void)
{
    return false;
}
#endif

void dls_cli_notify_init(dls_cli_notify *n)
{
    memset(n, 0, sizeof *n);
    n->watchdog = watchdog_asked();
}

static void put_status(char *buf, size_t cap, const char *head, const dls_judge_pass_result *r)
{
    snprintf(buf, cap,
             "%sSTATUS=pass %" PRIu64 ", live %" PRIu64 ", waiting %" PRIu64 ", pending %" PRIu64
             ", behind %" PRIu64,
             head, r->pass, r->live, r->waiting, r->pending, r->behind);
}

void dls_cli_notify_pass(dls_cli_notify *n, const dls_judge_pass_result *r, uint64_t now)
{
    char msg[256];
    if (!n->ready) {
        /* docs/service.md: ready once assembled and the first pass landed */
        put_status(msg, sizeof msg, n->watchdog ? "READY=1\nWATCHDOG=1\n" : "READY=1\n", r);
        notify(msg);
        n->ready = true;
        n->last_status = now;
        return;
    }
    if (dls_passed(n->last_status, now, DLS_NS_PER_S - 1)) {
        put_status(msg, sizeof msg, n->watchdog ? "WATCHDOG=1\n" : "", r);
        notify(msg);
        n->last_status = now;
    } else if (n->watchdog) {
        notify("WATCHDOG=1");
    }
}

void dls_cli_notify_stopping(int sig)
{
    char msg[96];
    snprintf(msg, sizeof msg, "STOPPING=1\nSTATUS=stopping on signal %d: finishing", sig);
    notify(msg);
}
