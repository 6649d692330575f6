/* The JSON Lines of `status --json` (status_json.h). */
#include "cli/status_json.h"

#include <inttypes.h>
#include <stdio.h>

int dls_status_lease_json(dls_jbuf *b, const dls_status_lease *l)
{
    int rc = dls_jbuf_puts(b, "{\"lease\": ");
    rc |= dls_jbuf_uint(b, l->lease);
    rc |= dls_jbuf_puts(b, ", \"subject\": ");
    if (dls_json_emit(b, l->subject.p, l->subject.n, NULL))
        rc |= dls_jbuf_puts(b, "null");
    rc |= dls_jbuf_puts(b, ", \"holder\": ");
    rc |= dls_jbuf_string(b, l->holder.p, l->holder.n);
    rc |= dls_jbuf_puts(b, ", \"granted_at\": ");
    rc |= dls_jbuf_uint(b, l->granted_at);
    rc |= dls_jbuf_puts(b, ", \"last_renewal\": ");
    if (l->renewed)
        rc |= dls_jbuf_uint(b, l->last_renewal);
    else
        rc |= dls_jbuf_puts(b, "null");
    rc |= dls_jbuf_puts(b, ", \"due_by\": ");
    rc |= dls_jbuf_uint(b, l->due_by);
    rc |= dls_jbuf_puts(b, ", \"remaining_ns\": ");
    rc |= dls_jbuf_uint(b, l->due_by > l->now ? l->due_by - l->now : 0);
    rc |= dls_jbuf_puts(b, l->released ? ", \"released\": true" : ", \"released\": false");
    rc |= dls_jbuf_puts(b, ", \"mode\": \"");
    rc |= dls_jbuf_puts(b, l->mode == DLS_MODE_SHARED ? "shared" : "exclusive");
    rc |= dls_jbuf_puts(b, "\", \"seq\": ");
    rc |= dls_jbuf_uint(b, l->seq);
    rc |= dls_jbuf_puts(b, "}\n");
    return rc ? DLS_ERR_NOMEM : 0;
}

int dls_status_summary_json(dls_jbuf *b, const dls_status_summary *s)
{
    char t[512];
    int k = snprintf(t, sizeof t,
                     "{\"summary\": true, \"live\": %" PRIu64 ", \"pass\": %" PRIu64
                     ", \"now\": %" PRIu64 ", \"tolerance_ns\": %" PRIu64 ", \"verified\": %s",
                     s->live, s->pass, s->now, s->tolerance_ns, s->verified ? "true" : "false");
    int rc = dls_jbuf_put(b, t, (size_t)k);
    if (s->checkpoint) { /* present only when status started at one */
        k = snprintf(t, sizeof t,
                     ", \"checkpoint\": %" PRIu64 ", \"journal_from\": %" PRIu64
                     ", \"journal_first\": %" PRIu64,
                     s->checkpoint, s->journal_from, s->journal_first);
        rc |= dls_jbuf_put(b, t, (size_t)k);
    }
    if (s->takeover_pass) { /* judge.md rev 5, Standby judges: present only after one */
        k = snprintf(t, sizeof t, ", \"takeover\": {\"pass\": %" PRIu64 ", \"now\": %" PRIu64 "}",
                     s->takeover_pass, s->takeover_now);
        rc |= dls_jbuf_put(b, t, (size_t)k);
    }
    rc |= dls_jbuf_puts(b, "}\n");
    return rc ? DLS_ERR_NOMEM : 0;
}
