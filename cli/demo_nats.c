/* daolease demo --nats: where agent N appends on a NATS JetStream server or
 * cluster (docs/jetstream.md). The URL given is nats://hosts[?params]; the
 * agent's stream is <run folder's name>-agent-N, with every character a
 * stream name refuses turned into '_', and the URL's parameters (e.g.
 * replicas=3) applied to each stream. */
#include <stdio.h>
#include <string.h>

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
