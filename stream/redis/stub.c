/* daolease — the Redis medium when the library is built without hiredis:
 * the API exists and refuses clearly. */
#include "daolease/redis.h"

#include "vocab/where.h"

static int unsupported(dls_medium **out, dls_where *w)
{
    if (out)
        *out = NULL;
    return dls_where_fill(
        w, DLS_ERR_CONFIG,
        (dls_where){.reason = "built without Redis support (hiredis not found at build time)"});
}

int dls_redis_create(dls_medium **out, const char *url, const dls_redis_settings *s,
                     dls_where *w)
{
    (void)url;
    (void)s;
    return unsupported(out, w);
}

int dls_redis_open(dls_medium **out, const char *url, dls_open_mode mode,
                   const dls_redis_settings *s, dls_where *w)
{
    (void)url;
    (void)mode;
    (void)s;
    return unsupported(out, w);
}

bool dls_redis_is_medium(dls_medium *m)
{
    (void)m;
    return false;
}

int dls_redis_fence(dls_medium *m, dls_where *w)
{
    (void)m;
    return unsupported(NULL, w);
}

int dls_redis_take_over(dls_medium *m, uint64_t next, bool abandoned, dls_where *w)
{
    (void)m;
    (void)next;
    (void)abandoned;
    return unsupported(NULL, w);
}
