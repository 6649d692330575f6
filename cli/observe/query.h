/* daolease command — what the HTTP endpoint reads of a request beyond
 * libmicrohttpd (docs/observe.md, Requests): the path, checked and routed,
 * and the query arguments of /status.json. Fuzzed (fuzz/fuzz_query.c). */
#ifndef DLS_CLI_OBSERVE_QUERY_H
#define DLS_CLI_OBSERVE_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum obs_route {
    OBS_ROUTE_NONE = 0,
    OBS_ROUTE_PAGE,        /* "/" and "/index.html" */
    OBS_ROUTE_METRICS,     /* "/metrics" */
    OBS_ROUTE_STATUS,      /* "/status.json" */
    OBS_ROUTE_HEALTH,      /* "/healthz" */
    OBS_ROUTE_SCRIPT,      /* "/app.js": the page's script */
    OBS_ROUTE_STYLE,       /* "/app.css": the page's style */
} obs_route;

#define OBS_PATH_MAX 256
#define OBS_FILTER_MAX 256
#define OBS_LIMIT_MAX 100000u

typedef struct obs_query {
    uint64_t offset;       /* leases skipped (after the filter) */
    uint64_t limit;        /* leases listed: 1 ... OBS_LIMIT_MAX (the default) */
    char filter[OBS_FILTER_MAX + 1]; /* "": every lease */
    size_t filter_len;
} obs_query;

/* True when p[0..n) is well-formed UTF-8 (no overlong forms, no
 * surrogates, nothing above U+10FFFF). */
bool obs_utf8_valid(const uint8_t *p, size_t n);

/* Routes a decoded request path (libmicrohttpd unescapes %XX). Returns 0
 * with *out, else an HTTP status with *why: 400 for a path longer than
 * OBS_PATH_MAX, not UTF-8, with a control byte, a backslash, or a "." or
 * ".." segment; 404 for a path the endpoint does not serve. */
int obs_route_of(const char *path, obs_route *out, const char **why);

void obs_query_init(obs_query *q);

/* One decoded query argument (value NULL: a key without "="). Returns 0,
 * or 400 with *why: an unknown key, a value that is not a decimal number
 * in range (offset <= 2^63, 1 <= limit <= OBS_LIMIT_MAX), a filter longer
 * than OBS_FILTER_MAX, not UTF-8 or with a control byte. */
int obs_query_set(obs_query *q, const char *key, const char *value, const char **why);

/* Whether a lease shows under the filter: a substring of the subject's
 * JSON text, of the holder, or of the lease id's decimal digits. */
bool obs_query_match(const obs_query *q, const char *subject_json, size_t sn,
                     const uint8_t *holder, size_t hn, uint64_t lease);

#endif
