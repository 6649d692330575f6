/* daolease command — the configuration file of `judge` and `run`
 * (cli.md, "Configuration"; documented in docs/config.md).
 *
 * One JSON object. Paths are relative to the configuration file's folder;
 * media may also be redis://host:port/key URLs. Unknown keys, a wrong type,
 * and a file that does not exist are errors naming the file and the key. */
#ifndef DLS_CLI_CONFIG_H
#define DLS_CLI_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/fact.h"

#define DLS_CONFIG_MEDIA_MAX 1024
#define DLS_CONFIG_TICK_STREAMS_MAX 64

typedef struct dls_config_medium {
    char *where;   /* a path or a redis:// URL */
    char *party;   /* for "PATH=PARTY": bare facts belong to PARTY; else NULL */
} dls_config_medium;

typedef struct dls_config {
    char *file;          /* the configuration file itself */
    char *party;         /* this process's party name (required) */
    char *key;           /* its secret key file (required) */
    char *keyring;       /* the keyring (required) */
    char *grantor;       /* the grantor's party name (run; judge: = party) */
    char *journal;       /* the grantor's journal (required) */
    char *medium;        /* run: this holder's own medium */
    dls_config_medium *media; /* judge: the lease-fact media, assembly order */
    size_t n_media;
    char *ticks;         /* "monotonic" (the default) or "realtime" */
    /* "ticks": {"realtime": NAME, "streams": [...], "own": ONE} (judge;
     * docs/config.md, docs/standby.md Across machines) */
    char *ticks_basis;   /* NAME: the basis is "realtime/NAME" */
    char **tick_streams; /* every machine's tick stream (paths or URLs), read by the judge */
    size_t n_tick_streams;
    size_t tick_own;     /* the index in tick_streams of the one this process appends to */
    char *sync;          /* "none" | "data" | "group" (default "data") */
    dls_duration tolerance;    /* default 250 ms */
    dls_duration cadence;      /* default 100 ms */
    dls_duration duration;     /* default grant / ask: 3 s */
    dls_duration min_duration; /* default 100 ms */
    dls_duration max_duration; /* default 1 h */
    dls_duration max;          /* cap on tenure; ns 0 = none */
    dls_duration lock_delay;   /* ns 0 = none */
    dls_duration heartbeat;    /* judge: a mark at least this often; ns 0 = none */
    dls_duration takeover_after; /* judge --standby on a remote journal; unset: */
    bool has_takeover_after;     /*   3 × heartbeat + tolerance (judge.md rev 5) */
    dls_duration grace;        /* run: SIGTERM → SIGKILL grace, default 2 s */
    bool create_medium;        /* run: create `medium` when missing (default false) */
    bool create_journal;       /* judge: create `journal` when missing (default false) */
    /* judge: checkpoints (docs/checkpoints.md) */
    uint64_t checkpoint_passes;  /* "checkpoint_every": {"passes": N}; 0 = not by passes */
    uint64_t checkpoint_bytes;   /* "checkpoint_every": {"bytes": B}; 0 = not by bytes */
    char *checkpoints;           /* "checkpoints": folder (default <journal>.ckpt) */
    uint64_t keep_checkpoints;   /* "keep_checkpoints": >= 2 (default 2) */
    /* judge: the drain budget (judge.md, The pass, step 2; docs/judge.md, Overload) */
    uint64_t drain_budget;       /* "drain_budget": facts a medium a pass (default 20000; 0: none) */
    uint64_t drain_per_s;        /* "drain_per_s": the budget sized to the ticks (default 10^6; 0: off) */
    uint64_t journal_segment_bytes; /* "journal_segment_bytes": create the journal as a
                                       segmented directory, trimmed after checkpoints; 0 = a file */
    /* judge, serve: the read-only HTTP endpoint (docs/observe.md) */
    char *http;                  /* "http": "ADDR:PORT"; NULL = off */
    bool http_public;            /* "http_public": a non-loopback ADDR allowed */
} dls_config;

/* Loads and validates `path`. `need` lists the keys the caller requires
 * beyond party, key, keyring and journal: a string such as "medium" or
 * "media" (NULL for none). On error prints one line to stderr naming the
 * file, key and reason and returns a negative code. */
int dls_config_load(dls_config *c, const char *path, const char *need);
void dls_config_free(dls_config *c);

#endif
