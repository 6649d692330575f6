/* daolease demo — paths and names shared by the owner (cmd_demo.c) and the
 * agent processes it forks (demo_agent.c): both include demo.h and link
 * this file, so neither demo file calls into the other's helpers. */
#include <stdio.h>
#include <string.h>

#include "cli/demo.h"

void demo_path(char *out, const char *dir, const char *name)
{
    snprintf(out, DEMO_PATH_MAX, "%.3900s/%.120s", dir, name);
}

void demo_agent_name(char *out, unsigned index)
{
    sprintf(out, "agent-%u", index + 1);
}

void demo_item_subject(char *out, unsigned item)
{
    sprintf(out, "item/%02u", item);
}

void demo_medium(char *out, const demo_params *p, unsigned index)
{
    if (p->nats) {
        demo_nats_medium(out, p, index);
        return;
    }
    if (!p->redis) {
        char file[32];
        snprintf(file, sizeof file, "agent-%u.dls", index + 1);
        demo_path(out, p->dir, file);
        return;
    }
    const char *run = strrchr(p->dir, '/');
    snprintf(out, DEMO_PATH_MAX, "%.200s/%.200s-agent-%u", p->redis, run ? run + 1 : p->dir,
             index + 1);
}

