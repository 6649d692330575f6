/* daolease demo — the owner's state, shared by cmd_demo.c (the owner) and
 * demo_standby.c (--standby: the judge's process and the takeover). */
#ifndef DLS_CLI_DEMO_OWNER_H
#define DLS_CLI_DEMO_OWNER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli/demo.h"
#include "cli/media.h"
#include "daolease/judge.h"

#define AGENTS_MAX 64

struct item {
    uint64_t lease;        /* the current lease, 0 when none */
    int holder;            /* agent index holding it, -1 */
    uint64_t done_lease;   /* the lease released with commit */
    unsigned commits;      /* reclaims with commit (must end at 1) */
    uint64_t adopted;      /* the lease whose holder found the result already
                              written and committed it (0: none) */
    uint64_t reclaimed;    /* the last lease reclaimed (a reclaim is run again
                              after a takeover when its lapse had not landed) */
};

/* Lines arriving on a pipe (the agents' progress, the judge child's events). */
struct demo_lines {
    char buf[8192];
    size_t have;
};

/* --standby: the judge child and the takeover (docs/standby.md). */
struct demo_standby {
    bool on;
    pid_t pid;             /* the judge's process; 0 once reaped */
    int events_rd, events_wr; /* its events pipe (-1: closed) */
    struct demo_lines events;
    bool ready;            /* its first pass ran: the journal has a mark */
    bool killed;
    uint64_t killed_at, killed_pass; /* readings and the standby's pass at the kill */
    unsigned held_at_kill, done_at_kill;
    uint64_t took_over_pass, took_over_at;
    unsigned repeated;     /* reclaims run again after the takeover */
};

struct victim {
    int agent;
    unsigned item;
    uint64_t lease;
    uint64_t killed_at;    /* the owner's reading at the kill */
    uint64_t reclaimed_at; /* the owner's reading at the silence reclaim */
};

struct demo {
    demo_params p;
    char dir[DEMO_PATH_MAX];
    unsigned agents, kills;
    pid_t pid[AGENTS_MAX];
    bool alive[AGENTS_MAX], finished[AGENTS_MAX];
    struct item *items;
    struct victim victims[AGENTS_MAX];
    unsigned n_victims;
    unsigned done, granted, lost, reclaimed_silence, reclaimed_release;
    dls_secret *secret;
    dls_keyring *keyring;
    dls_medium *journal;
    dls_medium *media[AGENTS_MAX];
    dls_resolver *resolvers[AGENTS_MAX];
    dls_judge_medium jm[AGENTS_MAX];
    dls_cli_ticks ticks;
    dls_judge *judge;
    uint64_t now;
    int progress_rd;
    struct demo_lines progress;
    struct demo_standby sb;
    bool tty;
    bool made_dir;     /* this run created d->dir (removed again when set-up fails) */
};

/* cli/cmd_demo.c */
/* The owner's judge (standby: the standby judge of --standby). 0 or -1. */
int cmd_demo_assemble(struct demo *d, bool standby);
void cmd_demo_teardown(struct demo *d);
/* The owner's reclaim of item i's lease; idempotent. */
void cmd_demo_note_reclaim(struct demo *d, int i, uint64_t lease, dls_cause cause, bool commit,
                           uint64_t now);
/* Reads what `fd` (non-blocking) has and hands each whole line to fn.
 * Returns 1 at the end of the pipe (every writer gone), else 0. */
int cmd_demo_read_lines(struct demo *d, int fd, struct demo_lines *lb,
                        void (*fn)(struct demo *, const char *));

/* cli/demo_standby.c (docs/standby.md, "The demo with a standby") */
/* Sends one event line to the demo from the judge's process (nothing
 * elsewhere). */
void demo_standby_event(const struct demo *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The standby judge's took_over callback. */
void demo_standby_took_over(void *user, uint64_t pass);
/* Forks the judge's process and assembles the standby judge. 0 or -1. */
int demo_standby_start(struct demo *d);
/* Each turn of the run: the events; kills the judge's process when due. */
void demo_standby_step(struct demo *d, const dls_judge_pass_result *r);
void demo_standby_report(const struct demo *d);
/* Kills the judge's process if it still runs; closes the pipe. */
void demo_standby_stop(struct demo *d);

#endif
