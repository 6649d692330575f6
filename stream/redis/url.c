/* daolease — redis:// URL parsing for the Redis Streams medium. */
#include "stream/redis/rds.h"

#include "vocab/where.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(dls_where *w, size_t off, const char *reason)
{
    return dls_where_fill(w, DLS_ERR_CONFIG, (dls_where){.offset = off, .reason = reason});
}

/* Percent-decodes s[0 … n) into a new string; NUL bytes refused.
 * 0, -1 (malformed), -2 (no memory). */
static int pct_decode(const char *s, size_t n, char **out, size_t *outlen)
{
    char *d = malloc(n + 1);
    if (!d)
        return -2;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            unsigned char b;
            if (i + 2 >= n || sodium_hex2bin(&b, 1, s + i + 1, 2, NULL, NULL, NULL) != 0 ||
                b == 0) {
                free(d);
                return -1;
            }
            c = (char)b;
            i += 2;
        }
        d[k++] = c;
    }
    d[k] = '\0';
    *out = d;
    if (outlen)
        *outlen = k;
    return 0;
}

void rds_url_free(rds_url *u)
{
    free(u->host);
    free(u->key);
    free(u->user);
    if (u->pass) {
        explicit_bzero(u->pass, strlen(u->pass));
        free(u->pass);
    }
    free(u->name);
    memset(u, 0, sizeof *u);
}

static int param(rds_url *u, const char *p, size_t n, size_t off, dls_where *w)
{
    const char *eq = memchr(p, '=', n);
    if (!eq)
        return bad(w, off, "a URL parameter lacks '='");
    size_t kn = (size_t)(eq - p);
    const char *v = eq + 1;
    size_t vn = n - kn - 1;
    uint64_t x;
#define IS(lit) (kn == sizeof(lit) - 1 && memcmp(p, lit, kn) == 0)
    if (IS("sync")) {
        if (vn == 4 && memcmp(v, "none", 4) == 0)
            u->sync = DLS_SYNC_NONE;
        else if (vn == 4 && memcmp(v, "data", 4) == 0)
            u->sync = DLS_SYNC_DATA;
        else if (vn == 5 && memcmp(v, "group", 5) == 0)
            u->sync = DLS_SYNC_GROUP;
        else
            return bad(w, off, "sync must be none, data or group");
        u->has_sync = true;
        return 0;
    }
    if (dls_dec_u64(v, vn, &x) != 0)
        return bad(w, off, "a URL parameter's value is not a decimal integer");
    if (IS("timeout_ms")) {
        if (x == 0 || x > 3600000)
            return bad(w, off, "timeout_ms must be 1 … 3600000");
        u->timeout_ms = (unsigned)x;
        u->has_timeout = true;
    } else if (IS("maxlen")) {
        u->maxlen = x;
        u->has_maxlen = true;
    } else if (IS("replicas")) {
        if (x > 1000)
            return bad(w, off, "replicas must be 0 … 1000");
        u->replicas = (unsigned)x;
        u->has_replicas = true;
    } else if (IS("db")) {
        if (x > 1000000)
            return bad(w, off, "db out of range");
        u->db = (unsigned)x;
        u->has_db = true;
    } else {
        return bad(w, off, "unknown URL parameter (timeout_ms, maxlen, replicas, db, sync)");
    }
#undef IS
    return 0;
}

static int userinfo(rds_url *u, const char *s, size_t n, size_t off, dls_where *w)
{
    const char *colon = memchr(s, ':', n);
    size_t un = colon ? (size_t)(colon - s) : n;
    int r;
    if (un) {
        r = pct_decode(s, un, &u->user, NULL);
        if (r == -2)
            return DLS_ERR_NOMEM;
        if (r)
            return bad(w, off, "malformed percent-escape in the user name");
    }
    if (colon) {
        r = pct_decode(colon + 1, n - un - 1, &u->pass, NULL);
        if (r == -2)
            return DLS_ERR_NOMEM;
        if (r)
            return bad(w, off + un + 1, "malformed percent-escape in the password");
    }
    return 0;
}

static int hostport(rds_url *u, const char *s, size_t n, size_t off, dls_where *w)
{
    const char *h = s, *port = NULL;
    size_t hn;
    if (n && s[0] == '[') {
        const char *rb = memchr(s, ']', n);
        if (!rb)
            return bad(w, off, "an IPv6 host lacks ']'");
        h = s + 1;
        hn = (size_t)(rb - s) - 1;
        size_t rest = n - (size_t)(rb - s) - 1;
        if (rest) {
            if (rb[1] != ':')
                return bad(w, off, "junk after ']' in the host");
            port = rb + 2;
        }
    } else {
        const char *colon = memchr(s, ':', n);
        hn = colon ? (size_t)(colon - s) : n;
        if (colon)
            port = colon + 1;
    }
    if (hn == 0 || hn > 253)
        return bad(w, off, "the URL has no host");
    /* a name or IPv4 address: letters, digits, '-', '.', '_'; between
     * brackets an IPv6 address: hex digits, ':' and '.' — so that the name
     * written back (redis://host:port/key) parses to the same host */
    bool v6 = h != s;
    for (size_t i = 0; i < hn; i++) {
        char c = h[i];
        bool ok = (c >= '0' && c <= '9') || c == '.' ||
                  (v6 ? (c == ':' || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
                      : ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_'));
        if (!ok)
            return bad(w, off + (size_t)(h - s) + i, "invalid character in the host");
    }
    u->host = strndup(h, hn);
    if (!u->host)
        return DLS_ERR_NOMEM;
    if (port) {
        size_t pn = n - (size_t)(port - s);
        uint64_t p;
        if (dls_dec_u64(port, pn, &p) != 0 || p == 0 || p > 65535)
            return bad(w, off + (size_t)(port - s), "the port must be 1 … 65535");
        /* the value, not the bytes: "0000000000000006391" is port 6391
         * and must not be copied into the 8-byte buffer */
        snprintf(u->port, sizeof u->port, "%u", (unsigned)p);
    } else {
        memcpy(u->port, "6379", 5);
    }
    return 0;
}

int rds_url_parse(const char *url, rds_url *u, dls_where *w)
{
    static const char scheme[] = "redis://";
    memset(u, 0, sizeof *u);
    if (!url || strncmp(url, scheme, sizeof scheme - 1) != 0)
        return bad(w, 0, "a Redis medium URL starts with redis://");
    const char *a = url + sizeof scheme - 1;
    const char *slash = strchr(a, '/');
    if (!slash)
        return bad(w, strlen(url), "the URL names no key (redis://host:port/key)");
    const char *q = strchr(slash, '?');
    const char *end = q ? q : slash + strlen(slash);
    /* authority: [userinfo@]hostport */
    size_t an = (size_t)(slash - a);
    const char *at = NULL;
    for (size_t i = 0; i < an; i++)
        if (a[i] == '@')
            at = a + i; /* the last '@': a password may contain one unescaped */
    int r = 0;
    const char *hp = a;
    if (at) {
        r = userinfo(u, a, (size_t)(at - a), (size_t)(a - url), w);
        hp = at + 1;
    }
    if (r == 0)
        r = hostport(u, hp, (size_t)(slash - hp), (size_t)(hp - url), w);
    if (r == 0) {
        size_t kn = 0;
        int d = pct_decode(slash + 1, (size_t)(end - slash - 1), &u->key, &kn);
        if (d == -2)
            r = DLS_ERR_NOMEM;
        else if (d)
            r = bad(w, (size_t)(slash + 1 - url), "malformed percent-escape in the key");
        else if (kn == 0 || kn > RDS_KEY_MAX)
            r = bad(w, (size_t)(slash + 1 - url), "the key must be 1 … 256 bytes");
    }
    const char *p = q ? q + 1 : NULL;
    while (r == 0 && p && *p) {
        const char *amp = strchr(p, '&');
        size_t pn = amp ? (size_t)(amp - p) : strlen(p);
        r = param(u, p, pn, (size_t)(p - url), w);
        p = amp ? amp + 1 : NULL;
    }
    if (r == 0) {
        /* redis://host:port/key as written: no user, password or query */
        bool v6 = strchr(u->host, ':') != NULL;
        size_t pn = (size_t)(end - slash);
        size_t len = 8 + strlen(u->host) + 2 + 1 + strlen(u->port) + pn + 1;
        u->name = malloc(len);
        if (!u->name)
            r = DLS_ERR_NOMEM;
        else
            snprintf(u->name, len, "redis://%s%s%s:%s%.*s", v6 ? "[" : "", u->host,
                     v6 ? "]" : "", u->port, (int)pn, slash);
    }
    if (r != 0)
        rds_url_free(u);
    return r;
}
