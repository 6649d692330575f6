/* daolease — nats:// URL parsing for the JetStream medium. Compiled with
 * or without libnats (the parser is plain C and has its own tests). */
#include "stream/jetstream/jsm.h"
#include "vocab/dec.h"
#include "vocab/where.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(jsm_url *u, dls_where *w, size_t off, const char *reason)
{
    jsm_url_free(u);
    return dls_where_fill(w, DLS_ERR_CONFIG, (dls_where){.offset = off, .reason = reason});
}

static bool host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '-' || c == '_';
}

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_';
}

void jsm_url_free(jsm_url *u)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->nservers; i++)
        free(u->servers[i]);
    free(u->name);
    memset(u, 0, sizeof *u);
}

/* One "host[:port]" of s[0 … n), at byte `off` of the URL. */
static int add_server(jsm_url *u, const char *s, size_t n, size_t off, dls_where *w)
{
    size_t h = 0;
    while (h < n && s[h] != ':')
        h++;
    if (h == 0)
        return bad(u, w, off, "a server without a host");
    if (h > 253)
        return bad(u, w, off, "a host name longer than 253 bytes");
    for (size_t i = 0; i < h; i++)
        if (!host_char(s[i]))
            return bad(u, w, off + i, "a host is a name or an IPv4 address");
    uint64_t port = 4222;
    if (h < n && (dls_dec_u64(s + h + 1, n - h - 1, &port) || port == 0 || port > 65535))
        return bad(u, w, off + h + 1, "a port is 1 to 65535");
    if (u->nservers == DLS_JETSTREAM_SERVERS_MAX)
        return bad(u, w, off, "more than 16 servers in one URL");
    char buf[300];
    snprintf(buf, sizeof buf, "nats://%.*s:%u", (int)h, s, (unsigned)port);
    if (!(u->servers[u->nservers] = strdup(buf))) {
        jsm_url_free(u);
        return DLS_ERR_NOMEM;
    }
    u->nservers++;
    return 0;
}

static int param(jsm_url *u, const char *k, size_t kn, const char *v, size_t vn, size_t off,
                 dls_where *w)
{
    uint64_t x;
#define IS(name) (kn == sizeof(name) - 1 && !memcmp(k, name, kn))
    if (IS("timeout_ms")) {
        if (dls_dec_u64(v, vn, &x) || x == 0 || x > 3600000)
            return bad(u, w, off, "timeout_ms is 1 to 3600000");
        u->timeout_ms = (unsigned)x;
        u->has_timeout = true;
    } else if (IS("retry_ms")) {
        if (dls_dec_u64(v, vn, &x) || x == 0 || x > 3600000)
            return bad(u, w, off, "retry_ms is 1 to 3600000");
        u->retry_ms = (unsigned)x;
        u->has_retry = true;
    } else if (IS("replicas")) {
        if (dls_dec_u64(v, vn, &x) || x == 0 || x > 5)
            return bad(u, w, off, "replicas is 1 to 5 (JetStream's limit)");
        u->replicas = (unsigned)x;
        u->has_replicas = true;
    } else if (IS("max_msgs")) {
        if (dls_dec_u64(v, vn, &x) || x > (uint64_t)INT64_MAX)
            return bad(u, w, off, "max_msgs is 0 (retain everything) to 2^63-1");
        u->max_msgs = x;
        u->has_max_msgs = true;
    } else if (IS("storage")) {
        if (vn == 4 && !memcmp(v, "file", 4))
            u->memory = false;
        else if (vn == 6 && !memcmp(v, "memory", 6))
            u->memory = true;
        else
            return bad(u, w, off, "storage is file or memory");
        u->has_storage = true;
    } else if (IS("sync")) {
        char s[8];
        if (vn >= sizeof s)
            return bad(u, w, off, "sync is none, data or group");
        memcpy(s, v, vn);
        s[vn] = 0;
        if (dls_sync_parse(s, &u->sync))
            return bad(u, w, off, "sync is none, data or group");
        u->has_sync = true;
    } else {
        return bad(u, w, off, "unknown parameter (timeout_ms, retry_ms, replicas, max_msgs, storage, "
                      "sync)");
    }
#undef IS
    return 0;
}

int jsm_url_parse(const char *url, jsm_url *u, dls_where *w)
{
    memset(u, 0, sizeof *u);
    if (!url || strncmp(url, "nats://", 7))
        return bad(u, w, 0, "not a nats:// URL");
    size_t len = strlen(url);
    if (len > 4096)
        return bad(u, w, 4096, "a URL longer than 4096 bytes");
    const char *p = url + 7;
    const char *slash = strchr(p, '/');
    if (!slash)
        return bad(u, w, len, "no /stream after the servers");
    /* docs/jetstream.md: the medium has no way to pass a user, password
     * or token yet — say so rather than fail on the host or port */
    const char *at = memchr(p, '@', (size_t)(slash - p));
    if (at)
        return bad(u, w, 7, "URLs carry no credentials (user, password or token before '@'): "
                            "the JetStream medium cannot pass any yet; use a server that "
                            "trusts its network (docs/jetstream.md)");
    /* servers: comma-separated host[:port] */
    const char *s = p;
    while (s <= slash) {
        const char *e = s;
        while (e < slash && *e != ',')
            e++;
        int rc = add_server(u, s, (size_t)(e - s), (size_t)(s - url), w);
        if (rc)
            return rc;
        s = e + 1;
    }
    const char *name = slash + 1;
    const char *q = strchr(name, '?');
    size_t nn = q ? (size_t)(q - name) : strlen(name);
    if (nn == 0)
        return bad(u, w, (size_t)(name - url), "no stream name after the servers");
    if (nn > DLS_JETSTREAM_NAME_MAX)
        return bad(u, w, (size_t)(name - url), "a stream name is at most 64 bytes");
    for (size_t i = 0; i < nn; i++)
        if (!name_char(name[i]))
            return bad(u, w, (size_t)(name - url) + i,
                       "a stream name is letters, digits, '-' and '_'");
    memcpy(u->stream, name, nn);
    u->stream[nn] = 0;
    size_t shown = (size_t)(name - url) + nn;
    if (!(u->name = strndup(url, shown))) {
        jsm_url_free(u);
        return DLS_ERR_NOMEM;
    }
    if (!q)
        return 0;
    const char *a = q + 1;
    if (!*a)
        return bad(u, w, (size_t)(a - url), "an empty query");
    while (*a) {
        const char *e = strchr(a, '&');
        size_t n = e ? (size_t)(e - a) : strlen(a);
        const char *eq = memchr(a, '=', n);
        if (!eq)
            return bad(u, w, (size_t)(a - url), "a parameter is name=value");
        int rc = param(u, a, (size_t)(eq - a), eq + 1, n - (size_t)(eq - a) - 1,
                       (size_t)(a - url), w);
        if (rc)
            return rc;
        if (!e)
            break;
        a = e + 1;
        if (!*a)
            return bad(u, w, (size_t)(a - url), "a query ending with '&'");
    }
    return 0;
}
