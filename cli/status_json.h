/* daolease command — the JSON Lines of `status --json` (docs/cli.md
 * `status`), one emitter for every place that shows them: the `status`
 * command, and /status.json of the HTTP endpoint (docs/observe.md), whether
 * it reads a running judge's ledger or the files. */
#ifndef DLS_CLI_STATUS_JSON_H
#define DLS_CLI_STATUS_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/json/json.h"
#include "daolease/fact.h"

/* One live lease; readings are the judge's ticks. */
typedef struct dls_status_lease {
    uint64_t lease;
    dls_bytes subject;        /* the encoded msgpack value */
    dls_bytes holder;
    uint64_t granted_at;
    bool renewed;             /* last_renewal is null when false */
    uint64_t last_renewal;
    uint64_t due_by;          /* 0: released (due at the next pass) */
    uint64_t now;             /* the reading remaining_ns counts from */
    bool released;
    dls_mode mode;
    uint64_t seq;             /* the last counted renewal's seq (0: none) */
} dls_status_lease;

/* The summary line. */
typedef struct dls_status_summary {
    uint64_t live, pass, now, tolerance_ns;
    bool verified;
    uint64_t checkpoint;      /* 0: status did not start from a checkpoint */
    uint64_t journal_from, journal_first;
    uint64_t takeover_pass, takeover_now; /* the newest takeover mark (0: none) */
} dls_status_summary;

/* Append one line (with its newline). Return 0 or DLS_ERR_NOMEM. */
int dls_status_lease_json(dls_jbuf *b, const dls_status_lease *l);
int dls_status_summary_json(dls_jbuf *b, const dls_status_summary *s);

#endif
