/* daolease demo --standby (docs/standby.md, "The demo with a standby";
 * judge.md rev 5, "Standby judges and takeover"): the owner's judge runs in
 * a process of its own with the owner's callbacks, which send its grants
 * and reclaims here over a pipe; this process holds a standby judge on the
 * same inputs, kills the judge's process with SIGKILL mid-run, and is the
 * owner from the takeover on. */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/demo_owner.h"
#include "cli/proc.h"

#define MS DLS_NS_PER_MS

/* The judge child's events, one line each, written with one write(2)
 * (< PIPE_BUF): "g <item> <lease>", "r <item> <lease> <cause> <commit>
 * <now>", "ready". */
void demo_standby_event(const struct demo *d, const char *fmt, ...)
{
    if (d->sb.events_wr < 0)
        return;
    char line[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n <= 0 || (size_t)n >= sizeof line || write(d->sb.events_wr, line, (size_t)n) != n)
        _exit(3);
}

static void demo_standby_on_line(struct demo *d, const char *line)
{
    int item, cause, commit;
    uint64_t lease, now;
    if (!strcmp(line, "ready")) {
        d->sb.ready = true;
    } else if (sscanf(line, "g %d %" SCNu64, &item, &lease) == 2 && item >= 0 &&
               (unsigned)item < d->p.items) {
        d->granted++;
        d->items[item].lease = lease;
    } else if (sscanf(line, "r %d %" SCNu64 " %d %d %" SCNu64, &item, &lease, &cause, &commit,
                      &now) == 5 && item >= 0 && (unsigned)item < d->p.items) {
        cmd_demo_note_reclaim(d, item, lease, (dls_cause)cause, commit != 0, now);
    }
}

/* Waits up to `ms` for the events pipe and reads it; at its end (the
 * judge's process is gone) closes it. 1 when it is closed, 0 otherwise. */
static int demo_standby_await(struct demo *d, int ms)
{
    if (d->sb.events_rd < 0)
        return 1;
    struct pollfd pf = {d->sb.events_rd, POLLIN, 0};
    if (poll(&pf, 1, ms) < 0 || !cmd_demo_read_lines(d, d->sb.events_rd, &d->sb.events, demo_standby_on_line))
        return 0;
    close(d->sb.events_rd);
    d->sb.events_rd = -1;
    return 1;
}

/* The standby took over: the judge's process has ended (the kernel freed
 * its journal lock), so every event it sent is in the pipe; read them all
 * before the first pass as the judge, whose policy needs the items done. */
void demo_standby_took_over(void *user, uint64_t pass)
{
    struct demo *d = user;
    d->sb.took_over_pass = pass;
    d->sb.took_over_at = d->now;
    int end = 0;
    for (int tries = 0; !end && tries < 100; tries++)
        end = demo_standby_await(d, 100);
    if (!end)
        fprintf(stderr, "daolease demo: the judge's events did not end at the takeover\n");
    printf("%sthe standby judge took over the journal; its first pass as the judge is %" PRIu64
           "\n", d->tty ? "\r\033[K" : "", pass);
    fflush(stdout);
}

/* The judge's process: the owner's judge with the owner's callbacks, which
 * also send their events to the demo; runs until killed (or orphaned). */
static int demo_standby_judge(struct demo *d, pid_t parent)
{
    close(d->sb.events_rd);
    close(d->progress_rd);
    d->progress_rd = -1;
    int code = 1;
    if (!cmd_demo_assemble(d, false))
        for (;;) {
            dls_judge_pass_result r;
            int rc = dls_tick_now(d->ticks.adapter, &d->now);
            if (!rc)
                rc = dls_judge_pass(d->judge, &r);
            if (rc) {
                dls_cli_error("demo", "judge pass: %s", dls_strerror(rc));
                break;
            }
            if (!d->sb.ready && r.appended) {
                d->sb.ready = true;
                demo_standby_event(d, "ready\n");
            }
            if (getppid() != parent) {
                code = 0;
                break;
            }
            dls_cli_sleep(20 * MS);
        }
    cmd_demo_teardown(d);
    return code;
}

/* Forks the judge's process, waits for its first mark on the journal, then
 * assembles the standby judge here (a standby assembled while the lock is
 * free would take it at once). */
int demo_standby_start(struct demo *d)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK))
        return -1;
    d->sb.events_rd = fds[0];
    d->sb.events_wr = fds[1];
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0)
        _exit(demo_standby_judge(d, parent));
    d->sb.pid = pid;
    close(fds[1]);
    d->sb.events_wr = -1;
    for (int tries = 0; !d->sb.ready && tries < 100; tries++)
        if (demo_standby_await(d, 100))
            break;
    if (!d->sb.ready) {
        dls_cli_error("demo", "the judge's process did not start");
        return -1;
    }
    return cmd_demo_assemble(d, true);
}

/* Kills the judge's process once a third of the items are done while
 * leases are held — or, at the latest, when every item is done. */
void demo_standby_step(struct demo *d, const dls_judge_pass_result *r)
{
    demo_standby_await(d, 0);
    if (!d->sb.on || d->sb.killed || !d->sb.pid)
        return;
    unsigned held = 0, want = d->p.items / 3 ? d->p.items / 3 : 1;
    for (unsigned i = 0; i < d->p.items; i++)
        held += d->items[i].lease != 0;
    if (!(d->done >= want && held) && d->done < d->p.items)
        return;
    kill(d->sb.pid, SIGKILL);
    d->sb.killed = true;
    d->sb.killed_at = d->now;
    d->sb.killed_pass = r->pass;
    d->sb.held_at_kill = held;
    d->sb.done_at_kill = d->done;
    printf("%skilled the judge's process (SIGKILL) after pass %" PRIu64 ", %u items done, "
           "%u leases held\n", d->tty ? "\r\033[K" : "", r->pass, d->done, held);
    fflush(stdout);
}

void demo_standby_report(const struct demo *d)
{
    if (!d->sb.on)
        return;
    if (!d->sb.killed) { /* it ended by itself (reap said how): no kill to time */
        printf("standby: the judge's process ended before it was killed; the standby took "
               "over at pass %" PRIu64 "\n", d->sb.took_over_pass);
        return;
    }
    printf("standby: the judge's process was killed after pass %" PRIu64 " (%u items done, %u "
           "leases held); the standby took over %.3f s later, its first pass %" PRIu64
           "; reclaims run again after the takeover %u\n",
           d->sb.killed_pass, d->sb.done_at_kill, d->sb.held_at_kill,
           (double)(d->sb.took_over_at - d->sb.killed_at) / (double)DLS_NS_PER_S,
           d->sb.took_over_pass, d->sb.repeated);
}

void demo_standby_stop(struct demo *d)
{
    if (d->sb.pid > 0) {
        kill(d->sb.pid, SIGKILL);
        waitpid(d->sb.pid, NULL, 0);
        d->sb.pid = 0;
    }
    if (d->sb.events_rd >= 0)
        close(d->sb.events_rd);
    d->sb.events_rd = -1;
}
