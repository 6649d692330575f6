/* Paths and query arguments of the HTTP endpoint (query.h). */
#include "cli/observe/query.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool obs_utf8_valid(const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = p[i];
        size_t k;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xc2 && c <= 0xdf) {
            k = 1;
            cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            k = 2;
            cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            k = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (n - i <= k)
            return false;
        for (size_t j = 1; j <= k; j++) {
            if ((p[i + j] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i + j] & 0x3f);
        }
        if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += k + 1;
    }
    return true;
}

static bool has_control(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x20 || p[i] == 0x7f)
            return true;
    return false;
}

/* A "." or ".." segment anywhere in the path. */
static bool dot_segment(const char *path, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && path[j] != '/')
            j++;
        size_t len = j - i;
        if ((len == 1 && path[i] == '.') || (len == 2 && path[i] == '.' && path[i + 1] == '.'))
            return true;
        i = j + 1;
    }
    return false;
}

int obs_route_of(const char *path, obs_route *out, const char **why)
{
    static const struct {
        const char *path;
        obs_route r;
    } routes[] = {
        {"/", OBS_ROUTE_PAGE},
        {"/index.html", OBS_ROUTE_PAGE},
        {"/metrics", OBS_ROUTE_METRICS},
        {"/status.json", OBS_ROUTE_STATUS},
        {"/healthz", OBS_ROUTE_HEALTH},
        {"/app.js", OBS_ROUTE_SCRIPT},
        {"/app.css", OBS_ROUTE_STYLE},
    };
    *out = OBS_ROUTE_NONE;
    size_t n = path ? strnlen(path, OBS_PATH_MAX + 1) : 0;
    if (!path || n == 0 || path[0] != '/') {
        *why = "the path must start with /";
        return 400;
    }
    if (n > OBS_PATH_MAX) {
        *why = "the path is too long";
        return 400;
    }
    if (!obs_utf8_valid((const uint8_t *)path, n) || has_control((const uint8_t *)path, n)) {
        *why = "the path is not UTF-8 text";
        return 400;
    }
    if (memchr(path, '\\', n) || dot_segment(path, n)) {
        *why = "the path has a . or .. segment or a backslash";
        return 400;
    }
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (!strcmp(path, routes[i].path)) {
            *out = routes[i].r;
            return 0;
        }
    *why = "no such page (/, /metrics, /status.json, /healthz)";
    return 404;
}

void obs_query_init(obs_query *q)
{
    memset(q, 0, sizeof *q);
    q->limit = OBS_LIMIT_MAX;
}

/* Decimal digits only, no sign, at most `max`. */
static int decimal(const char *v, uint64_t max, uint64_t *out)
{
    if (!v || !*v || strlen(v) > 20 || strspn(v, "0123456789") != strlen(v))
        return -1;
    errno = 0;
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || x > max)
        return -1;
    *out = x;
    return 0;
}

int obs_query_set(obs_query *q, const char *key, const char *value, const char **why)
{
    if (!key) {
        *why = "a query argument without a name";
        return 400;
    }
    if (!strcmp(key, "offset")) {
        if (decimal(value, INT64_MAX, &q->offset)) {
            *why = "offset must be a decimal number 0 ... 2^63-1";
            return 400;
        }
        return 0;
    }
    if (!strcmp(key, "limit")) {
        uint64_t v;
        if (decimal(value, OBS_LIMIT_MAX, &v) || v == 0) {
            *why = "limit must be a decimal number 1 ... 100000";
            return 400;
        }
        q->limit = v;
        return 0;
    }
    if (!strcmp(key, "q")) {
        size_t n = value ? strnlen(value, OBS_FILTER_MAX + 1) : 0;
        if (n > OBS_FILTER_MAX) {
            *why = "the filter q is longer than 256 bytes";
            return 400;
        }
        if (!obs_utf8_valid((const uint8_t *)value, n) ||
            has_control((const uint8_t *)value, n)) {
            *why = "the filter q is not UTF-8 text";
            return 400;
        }
        if (n)
            memcpy(q->filter, value, n);
        q->filter[n] = 0;
        q->filter_len = n;
        return 0;
    }
    *why = "unknown query argument (offset, limit, q)";
    return 400;
}

bool obs_query_match(const obs_query *q, const char *subject_json, size_t sn,
                     const uint8_t *holder, size_t hn, uint64_t lease)
{
    if (!q->filter_len)
        return true;
    if (memmem(subject_json, sn, q->filter, q->filter_len) ||
        memmem(holder, hn, q->filter, q->filter_len))
        return true;
    char id[24];
    int k = snprintf(id, sizeof id, "%" PRIu64, lease);
    return memmem(id, (size_t)k, q->filter, q->filter_len) != NULL;
}
