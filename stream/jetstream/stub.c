/* daolease — the JetStream medium when the library is built without
 * libnats: the API exists and refuses clearly. */
#include "daolease/jetstream.h"
#include "vocab/where.h"

static int unsupported(dls_medium **out, dls_where *w)
{
    if (out)
        *out = NULL;
    return dls_where_fill(w, DLS_ERR_CONFIG,
                          (dls_where){.reason = "built without NATS JetStream support "
                                                "(libnats not found at build time)"});
}

int dls_jetstream_create(dls_medium **out, const char *url, const dls_jetstream_settings *s,
                         dls_where *w)
{
    (void)url;
    (void)s;
    return unsupported(out, w);
}

int dls_jetstream_open(dls_medium **out, const char *url, dls_open_mode mode,
                       const dls_jetstream_settings *s, dls_where *w)
{
    (void)url;
    (void)mode;
    (void)s;
    return unsupported(out, w);
}

bool dls_jetstream_is_exclusive(dls_medium *m)
{
    (void)m;
    return false;
}

int dls_jetstream_expect_after(dls_medium *m, uint64_t end)
{
    (void)m;
    (void)end;
    return DLS_ERR_CONFIG;
}
