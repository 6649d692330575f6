/* Fuzz target: redis:// URLs through the Redis medium's URL parser
 * (include/daolease/redis.h, "URLs"; a long zero-padded port once
 * overflowed a fixed buffer).
 *
 * Never crashes. A failure is DLS_ERR_CONFIG with a reason and an offset
 * inside the URL (or DLS_ERR_NOMEM). A success holds a host of the allowed
 * characters, a canonical port 1 … 65535, a key of 1 … 256 bytes, parameters
 * in their ranges, and a name (redis://host:port/key, no user, password or
 * query) that parses again to the same host, port and key. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stream/redis/rds.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_host(const char *h)
{
    size_t n = strlen(h);
    if (n == 0 || n > 253)
        abort();
    bool v6 = strchr(h, ':') != NULL;
    for (size_t i = 0; i < n; i++) {
        char c = h[i];
        bool digit = c >= '0' && c <= '9';
        bool hex = digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
        bool name = digit || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
                    c == '_' || c == '.';
        if (v6 ? !(hex || c == ':' || c == '.') : !name)
            abort();
    }
}

static void check_port(const char *p)
{
    uint64_t v;
    size_t n = strlen(p);
    if (n == 0 || n > 5 || p[0] == '0' || dls_dec_u64(p, n, &v) != 0 || v == 0 || v > 65535)
        abort();
}

static void check_success(const rds_url *u)
{
    check_host(u->host);
    check_port(u->port);
    size_t kn = strlen(u->key);
    if (kn == 0 || kn > RDS_KEY_MAX)
        abort();
    if (u->user && !u->user[0])
        abort(); /* an empty user is absent, never "" */
    if (u->has_timeout && (u->timeout_ms == 0 || u->timeout_ms > 3600000))
        abort();
    if (u->has_replicas && u->replicas > 1000)
        abort();
    if (u->has_db && u->db > 1000000)
        abort();
    if (u->has_sync && u->sync != DLS_SYNC_NONE && u->sync != DLS_SYNC_DATA &&
        u->sync != DLS_SYNC_GROUP)
        abort();
    /* the name parses again to the same medium, without credentials */
    rds_url again;
    dls_where w = {0};
    int rc = rds_url_parse(u->name, &again, &w);
    if (rc == DLS_ERR_NOMEM)
        return;
    if (rc != 0 || strcmp(again.host, u->host) || strcmp(again.port, u->port) ||
        strcmp(again.key, u->key) || again.user || again.pass || strcmp(again.name, u->name) ||
        again.has_timeout || again.has_maxlen || again.has_replicas || again.has_db ||
        again.has_sync)
        abort();
    rds_url_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *url = malloc(size + 1);
    if (!url)
        return 0;
    memcpy(url, data, size);
    url[size] = '\0';
    size_t len = strlen(url); /* the parser sees up to the first NUL */
    rds_url u;
    dls_where w = {0};
    int rc = rds_url_parse(url, &u, &w);
    if (rc == 0) {
        check_success(&u);
        rds_url_free(&u);
        if (u.host || u.key || u.name || u.user || u.pass)
            abort(); /* freed and cleared */
    } else if (rc == DLS_ERR_CONFIG) {
        if (!w.reason || w.offset > len)
            abort();
    } else if (rc != DLS_ERR_NOMEM) {
        abort();
    }
    free(url);
    return 0;
}
