/* daolease demo --nats: where agent N appends on a NATS JetStream server or
 * cluster (docs/jetstream.md). The URL given is nats://hosts[?params]; the
 * agent's stream is <run folder's name>-agent-N, with every character a
 * stream name refuses turned into '_', and the URL's parameters (e.g.
 * replicas=3) applied to each stream.
 *
 * The owner creates the streams in a child process: the NATS client keeps
 * global state and threads (a timer thread for pings and publish timeouts,
 * an inbox-name generator), and a process forked after it started inherits
 * the state without the threads. The agents are forked before the owner
 * first uses the client, so each starts its own (docs/jetstream.md). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/demo.h"

void demo_nats_medium(char *out, const demo_params *p, unsigned index)
{
    const char *run = strrchr(p->dir, '/');
    run = run ? run + 1 : p->dir;
    char name[48];
    snprintf(name, sizeof name, "%.32s-agent-%u", run, index + 1);
    for (char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '-' || *c == '_'))
            *c = '_';
    const char *q = strchr(p->nats, '?');
    size_t base = q ? (size_t)(q - p->nats) : strlen(p->nats);
    while (base > 0 && p->nats[base - 1] == '/')
        base--;
    snprintf(out, DEMO_PATH_MAX, "%.*s/%s%s", (int)(base < 3000 ? base : 3000), p->nats, name,
             q ? q : "");
}

int demo_nats_in_child(int (*fn)(void *), void *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0)
        _exit(fn(arg) ? 1 : 0);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}
