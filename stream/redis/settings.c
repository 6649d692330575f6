/* daolease — Redis medium settings (compiled with or without hiredis). */
#include <string.h>

#include "daolease/redis.h"

void dls_redis_settings_default(dls_redis_settings *s)
{
    memset(s, 0, sizeof *s);
    s->sync = DLS_SYNC_NONE;
    s->timeout_ms = 1000;
    s->maxlen = 0;
    s->replicas = 0;
    s->db = 0;
    s->id = NULL;
    s->username = NULL;
    s->password = NULL;
}

void dls_redis_settings_from_medium(dls_redis_settings *rs, const dls_medium_settings *ms)
{
    if (!rs || !ms)
        return;
    rs->sync = ms->sync;
    rs->id = ms->id;
}

bool dls_redis_is_url(const char *s)
{
    return s && strncmp(s, "redis://", 8) == 0;
}
