/* daolease command — the live leases as the journal and media show them
 * (docs/cli.md `status`), read for the `status` command and for `serve`
 * (docs/observe.md), which shows the same from the files alone. */
#ifndef DLS_CLI_STATUS_SCAN_H
#define DLS_CLI_STATUS_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "cli/status_json.h"
#include "daolease/fact.h"

typedef struct dls_status_args {
    const char *sub;          /* the command named in messages */
    const char *journal;
    char **media;             /* "PATH" or "PATH=PARTY" */
    size_t nmedia;
    const char *grantor;      /* NULL: any author */
    const char *keyring;      /* NULL: records taken as they claim */
    const char *checkpoints;  /* NULL: <journal>.ckpt when it exists */
} dls_status_args;

/* Counts of the journal records read (from the checkpoint status started
 * at, if any): what `audit` counts as grants, refusals and lapsed. */
typedef struct dls_status_counts {
    uint64_t marks;           /* pass marks (first records) */
    uint64_t grants, refusals;
    uint64_t lapsed[5];       /* by dls_cause */
} dls_status_counts;

enum { DLS_STATUS_GRANT = 1, DLS_STATUS_LAPSE = 2 };

typedef struct dls_status_visit {
    void *user;
    /* each live lease, in grant order; then the summary. Non-zero stops. */
    int (*lease)(void *user, const dls_status_lease *l);
    int (*summary)(void *user, const dls_status_summary *s, const dls_status_counts *c);
    /* optional: each grant and each lapse of a lease granted in what was
     * read, in journal order, at the now of the mark before it */
    int (*event)(void *user, int kind, uint64_t at, uint64_t lease, dls_cause cause,
                 dls_bytes subject, dls_bytes holder);
} dls_status_visit;

/* Reads the journal and media, then visits. Returns DLS_EXIT_OK, or
 * DLS_EXIT_FAIL after one line on stderr naming the file and the reason. */
int dls_status_scan(const dls_status_args *a, const dls_status_visit *v);

#endif
