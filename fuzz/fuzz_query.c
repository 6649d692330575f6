/* Fuzz target: what the HTTP endpoint reads of a request beyond
 * libmicrohttpd (cli/observe/query.h; docs/observe.md, Requests): the
 * decoded path, routed or refused, and the query arguments of /status.json.
 *
 * Input: the first line is the path; each further line a query argument,
 * "KEY\tVALUE", or "KEY" alone for a key without "=" (bytes as libmicrohttpd
 * hands them over after unescaping; a NUL ends the text as it would there).
 *
 * Never crashes. A routed path is one the endpoint serves, exactly; a
 * refused one is 400 or 404 with a reason. An accepted argument leaves the
 * query in range: 1 <= limit <= 100000, offset <= 2^63-1, the
 * filter well-formed UTF-8 of at most 256 bytes without control bytes; a
 * refused one is 400 with a reason and the query unchanged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/observe/query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_route(const char *path)
{
    obs_route r;
    const char *why = NULL;
    int st = obs_route_of(path, &r, &why);
    if (st == 0) {
        static const char *const served[] = {"/", "/index.html", "/metrics", "/status.json",
                                             "/healthz", "/app.js", "/app.css"};
        bool known = false;
        for (size_t i = 0; i < sizeof served / sizeof served[0]; i++)
            known |= !strcmp(path, served[i]);
        if (!known || r == OBS_ROUTE_NONE || strstr(path, ".."))
            abort();
        return;
    }
    if ((st != 400 && st != 404) || !why || r != OBS_ROUTE_NONE)
        abort();
}

static void check_query(const obs_query *q)
{
    if (q->limit == 0 || q->limit > OBS_LIMIT_MAX)
        abort();
    if (q->offset > INT64_MAX || q->filter_len > OBS_FILTER_MAX ||
        q->filter_len != strlen(q->filter) ||
        !obs_utf8_valid((const uint8_t *)q->filter, q->filter_len))
        abort();
    for (size_t i = 0; i < q->filter_len; i++)
        if ((uint8_t)q->filter[i] < 0x20 || q->filter[i] == 0x7f)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0; /* a NUL inside ends the text, as in a C string */
    char *save = NULL, *line = strtok_r(text, "\n", &save);
    if (line)
        check_route(line);
    obs_query q;
    obs_query_init(&q);
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        char *tab = strchr(line, '\t');
        const char *value = NULL;
        if (tab) {
            *tab = 0;
            value = tab + 1;
        }
        obs_query before = q;
        const char *why = NULL;
        int st = obs_query_set(&q, line, value, &why);
        if (st == 0)
            check_query(&q);
        else if (st != 400 || !why || before.limit != q.limit || before.offset != q.offset ||
                 before.filter_len != q.filter_len || strcmp(before.filter, q.filter))
            abort();
        /* the filter against the line itself as a subject and holder */
        (void)obs_query_match(&q, line, strlen(line), (const uint8_t *)line, strlen(line),
                              (uint64_t)size);
    }
    free(text);
    return 0;
}
