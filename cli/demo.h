/* daolease demo — shared between the owner (cmd_demo.c) and the agent
 * processes it forks (demo_agent.c). */
#ifndef DLS_CLI_DEMO_H
#define DLS_CLI_DEMO_H

#include <stdint.h>

#define DEMO_GRANTOR "arbiter"
#define DEMO_PATH_MAX 4096

/* What every agent process is told. */
typedef struct demo_params {
    const char *dir;          /* the run's folder */
    unsigned items;           /* work items item/00 … */
    unsigned agents;          /* agent processes: agent i starts with items i, i+agents, … */
    uint64_t duration_ns;     /* asked for each item */
    uint64_t work_min_ns;     /* the time an item's work takes, drawn per item */
    uint64_t work_max_ns;
    uint64_t seed;
    int progress_fd;          /* the write end of the owner's progress pipe */
    const char *redis;        /* NULL: agents' media are files; else redis://host:port */
    const char *nats;         /* else nats://host:port[,…][?params] (docs/jetstream.md) */
} demo_params;

/* Progress messages, one line each, written with one write(2) (< PIPE_BUF):
 *   "G <agent> <item> <lease>"  granted, work starts
 *   "D <agent> <item> <lease>"  work done, result written, released (commit)
 *   "L <agent> <item> <lease>"  lease lost before the work was done
 *   "X <agent>"                 the agent knows every item is done and exits */

/* Runs agent `index` (name "agent-<index+1>") until every item is done.
 * Returns the process exit status (cli/demo_agent.c). */
int demo_agent_main(const demo_params *p, unsigned index);

/* Paths inside the run's folder (cli/demo.c). */
void demo_path(char *out, const char *dir, const char *name);
void demo_agent_name(char *out, unsigned index);
void demo_item_subject(char *out, unsigned item);
/* Where agent `index` appends: DIR/agent-N.dls, or with --redis the key
 * <run folder's name>-agent-N on that server. */
void demo_medium(char *out, const demo_params *p, unsigned index);
/* With --nats: the stream <run folder's name>-agent-N on those servers
 * (cli/demo_nats.c). */
void demo_nats_medium(char *out, const demo_params *p, unsigned index);
/* Runs fn(arg) in a child process; 0 when it answered 0, else -1. */
int demo_nats_in_child(int (*fn)(void *), void *arg);

#endif
