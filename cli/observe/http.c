/* The HTTP endpoint on GNU libmicrohttpd (http.h; docs/observe.md).
 *
 * libmicrohttpd parses the request line and headers within a per-connection
 * memory limit, unescapes the path and the query arguments, and enforces
 * the connection limit and the idle timeout; what it hands over is read by
 * query.c. Every answer is built from one snapshot reference, taken under
 * the publisher's mutex and released after rendering: the thread that owns
 * the judge never waits on a client. */
#include "cli/observe/http.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#ifdef DLS_HAVE_HTTP

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "cli/observe/assets.h"

struct obs_http {
    struct MHD_Daemon *d;
    obs_pub *pub;
    unsigned port;
    atomic_int rendering;   /* answers being rendered now */
};

bool obs_http_available(void) { return true; }

/* Security headers on every answer (docs/observe.md, Security). */
static void common_headers(struct MHD_Response *r, const char *type)
{
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
                            "form-action 'none'");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const char *type,
                              void *body, size_t n, enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(n, body, mode);
    if (!r) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free(body);
        return MHD_NO;
    }
    common_headers(r, type);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result error(struct MHD_Connection *c, unsigned status, const char *why)
{
    char t[384];
    int k = snprintf(t, sizeof t, "%u: %s (docs/observe.md)\n", status, why);
    char *p = malloc((size_t)k + 1);
    if (!p)
        return MHD_NO;
    memcpy(p, t, (size_t)k + 1);
    return answer(c, status, "text/plain; charset=utf-8", p, (size_t)k, MHD_RESPMEM_MUST_FREE);
}

struct args {
    obs_query q;
    int status;
    const char *why;
};

static enum MHD_Result one_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *value)
{
    (void)kind;
    struct args *a = cls;
    if (!a->status)
        a->status = obs_query_set(&a->q, key, value, &a->why);
    return a->status ? MHD_NO : MHD_YES;
}

static enum MHD_Result serve_snapshot(obs_http *h, struct MHD_Connection *c, obs_route route)
{
    struct args a;
    obs_query_init(&a.q);
    a.status = 0;
    a.why = NULL;
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, one_arg, &a);
    if (a.status)
        return error(c, (unsigned)a.status, a.why);
    if (route == OBS_ROUTE_METRICS && a.q.filter_len + a.q.offset != 0)
        return error(c, 400, "/metrics takes no query arguments");
    /* memory bound: at most OBS_HTTP_RENDERS answers built at once (a full
     * /status.json at 10^5 leases is ~25 MB) */
    if (atomic_fetch_add(&h->rendering, 1) >= (int)OBS_HTTP_RENDERS) {
        atomic_fetch_sub(&h->rendering, 1);
        return error(c, 503, "busy: too many answers being built, retry");
    }
    obs_snap *s = obs_pub_get(h->pub);
    if (!s) {
        atomic_fetch_sub(&h->rendering, 1);
        return error(c, 503, "no pass yet");
    }
    dls_jbuf b = {0};
    int rc = route == OBS_ROUTE_METRICS ? obs_render_metrics(s, &b)
                                        : obs_render_status(s, &a.q, &b);
    obs_pub_release(h->pub, s);
    atomic_fetch_sub(&h->rendering, 1);
    if (rc || !b.p) {
        dls_jbuf_free(&b);
        return error(c, 500, "out of memory");
    }
    /* b.p is malloc'd: the response frees it */
    return answer(c, 200,
                  route == OBS_ROUTE_METRICS ? "text/plain; version=0.0.4; charset=utf-8"
                                             : "application/x-ndjson; charset=utf-8",
                  b.p, b.n, MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_n, void **req)
{
    (void)version;
    (void)upload;
    obs_http *h = cls;
    static int seen;
    if (*req == NULL) { /* the headers are in: answer now, read no body */
        *req = &seen;
        if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
            return error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "read-only: GET and HEAD only");
        if (MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH) ||
            MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                        MHD_HTTP_HEADER_TRANSFER_ENCODING))
            return error(c, 413, "a GET or HEAD carries no body");
        obs_route route;
        const char *why = NULL;
        int st = obs_route_of(url, &route, &why);
        if (st)
            return error(c, (unsigned)st, why);
        switch (route) {
        case OBS_ROUTE_PAGE:
            return answer(c, 200, "text/html; charset=utf-8", (void *)obs_asset_page,
                          obs_asset_page_len, MHD_RESPMEM_PERSISTENT);
        case OBS_ROUTE_HEALTH:
            return answer(c, 200, "text/plain; charset=utf-8", (void *)"ok\n", 3,
                          MHD_RESPMEM_PERSISTENT);
        case OBS_ROUTE_SCRIPT:
            return answer(c, 200, "text/javascript; charset=utf-8", (void *)obs_asset_script,
                          obs_asset_script_len, MHD_RESPMEM_PERSISTENT);
        case OBS_ROUTE_STYLE:
            return answer(c, 200, "text/css; charset=utf-8", (void *)obs_asset_style,
                          obs_asset_style_len, MHD_RESPMEM_PERSISTENT);
        default:
            return serve_snapshot(h, c, route);
        }
    }
    if (*upload_n) { /* a body after all: refuse it */
        *upload_n = 0;
        return MHD_NO;
    }
    return MHD_YES;
}

/* libmicrohttpd's unescaping, except that %00 becomes a control byte the
 * path and argument checks refuse, instead of a NUL that would cut the
 * text short ("/metrics%00.txt" must not be "/metrics"). */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    for (char *p = s; (p = strstr(p, "%00")) != NULL; p += 3)
        memcpy(p, "%01", 3);
    return MHD_http_unescape(s);
}

static bool loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) ||
               (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
    return false;
}

/* "HOST:PORT" or "[V6]:PORT" → host and port texts. */
static int split(const char *ap, char *host, size_t hcap, char *port, size_t pcap)
{
    const char *colon;
    if (ap[0] == '[') {
        const char *close = strchr(ap, ']');
        if (!close || close[1] != ':' || (size_t)(close - ap - 1) >= hcap)
            return -1;
        memcpy(host, ap + 1, (size_t)(close - ap - 1));
        host[close - ap - 1] = 0;
        colon = close + 1;
    } else {
        colon = strrchr(ap, ':');
        if (!colon || colon == ap || (size_t)(colon - ap) >= hcap || memchr(ap, ':', (size_t)(colon - ap)))
            return -1;
        memcpy(host, ap, (size_t)(colon - ap));
        host[colon - ap] = 0;
    }
    const char *p = colon + 1;
    if (!*p || strlen(p) >= pcap || strspn(p, "0123456789") != strlen(p) || atol(p) > 65535)
        return -1;
    strcpy(port, p);
    return 0;
}

int obs_http_start(obs_http **out, const char *sub, const char *ap, bool allow_public,
                   obs_pub *pub)
{
    *out = NULL;
    char host[256], port[8];
    if (split(ap, host, sizeof host, port, sizeof port)) {
        dls_cli_error(sub, "--http %s: expected ADDR:PORT (127.0.0.1:9464, [::1]:9464, "
                           "localhost:0)", ap);
        return DLS_ERR_CONFIG;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    int g = getaddrinfo(host, port, &hints, &ai);
    if (g || !ai) {
        dls_cli_error(sub, "--http %s: %s", ap, gai_strerror(g));
        return DLS_ERR_CONFIG;
    }
    if (!loopback(ai->ai_addr) && !allow_public) {
        dls_cli_error(sub, "--http %s: not a loopback address; the endpoint serves the "
                           "ledger to anyone who can reach it: set \"http_public\": true in "
                           "the configuration to allow it (docs/observe.md, Security)", ap);
        freeaddrinfo(ai);
        return DLS_ERR_CONFIG;
    }
    if (!loopback(ai->ai_addr))
        fprintf(stderr, "daolease %s: warning: --http %s is not loopback: every lease, holder "
                        "and counter is readable by anyone who can reach it "
                        "(docs/observe.md, Security)\n", sub, ap);
    obs_http *h = calloc(1, sizeof *h);
    if (!h) {
        freeaddrinfo(ai);
        return DLS_ERR_NOMEM;
    }
    h->pub = pub;
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD;
    if (ai->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    h->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, h,
                            MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                            MHD_OPTION_CONNECTION_LIMIT, OBS_HTTP_CONNECTIONS,
                            MHD_OPTION_CONNECTION_TIMEOUT, OBS_HTTP_TIMEOUT_S,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)OBS_HTTP_MEMORY,
                            MHD_OPTION_THREAD_POOL_SIZE, 2u,
                            MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
                            MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!h->d) {
        dls_cli_error(sub, "--http %s: cannot listen (address in use or not available)", ap);
        free(h);
        return DLS_ERR_IO;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : 0;
    fprintf(stderr, "daolease %s: serving http://%s%s%s:%u/ (docs/observe.md)\n", sub,
            strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", h->port);
    *out = h;
    return 0;
}

unsigned obs_http_port(const obs_http *h) { return h ? h->port : 0; }

void obs_http_stop(obs_http *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->d);
    free(h);
}

#else /* built without libmicrohttpd (meson -Dhttp=disabled) */

struct obs_http {
    int unused;
};

bool obs_http_available(void) { return false; }

int obs_http_start(obs_http **out, const char *sub, const char *addr_port, bool allow_public,
                   obs_pub *pub)
{
    (void)allow_public;
    (void)pub;
    *out = NULL;
    dls_cli_error(sub, "--http %s: this daolease was built without the HTTP endpoint "
                       "(meson -Dhttp=enabled, libmicrohttpd; docs/observe.md)", addr_port);
    return DLS_ERR_CONFIG;
}

unsigned obs_http_port(const obs_http *h) { (void)h; return 0; }

void obs_http_stop(obs_http *h) { (void)h; }

#endif
