/* daolease — JetStream medium settings (compiled with or without libnats). */
#include <string.h>

#include "daolease/jetstream.h"
#include "stream/jetstream/jsm.h"

void dls_jetstream_settings_default(dls_jetstream_settings *s)
{
    memset(s, 0, sizeof *s);
    s->sync = DLS_SYNC_NONE;
    s->timeout_ms = 2000;
    s->replicas = 0;
    s->memory = false;
    s->max_msgs = 0;
    s->id = NULL;
    s->exclusive = false;
}

void dls_jetstream_settings_from_medium(dls_jetstream_settings *js,
                                        const dls_medium_settings *ms)
{
    if (!js || !ms)
        return;
    js->id = ms->id;
    js->exclusive = ms->exclusive;
}

bool dls_jetstream_is_url(const char *s)
{
    return s && strncmp(s, "nats://", 7) == 0;
}

int dls_st_jetstream(dls_medium **out, const char *url, dls_open_mode mode, bool create,
                     const dls_medium_settings *ms, dls_where *w)
{
    dls_jetstream_settings js;
    dls_jetstream_settings_default(&js);
    dls_jetstream_settings_from_medium(&js, ms);
    return create ? dls_jetstream_create(out, url, &js, w)
                  : dls_jetstream_open(out, url, mode, &js, w);
}
