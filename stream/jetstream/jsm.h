/* daolease — internals of the NATS JetStream medium (not installed). */
#ifndef DLS_JETSTREAM_JSM_H
#define DLS_JETSTREAM_JSM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/jetstream.h"

/* An exclusive writer's (a journal's) append budget when the URL names no
 * retry_ms: longer than a measured leader failover of an R3 stream
 * (docs/jetstream.md, "Failover budget"). */
#define JOURNAL_RETRY_MS 30000

/* A parsed nats:// URL. Strings are owned (jsm_url_free). */
typedef struct jsm_url {
    char *servers[DLS_JETSTREAM_SERVERS_MAX]; /* "nats://host:port" each */
    size_t nservers;
    char stream[DLS_JETSTREAM_NAME_MAX + 1];
    char *name;   /* nats://hosts/stream as written, without the query */
    bool has_timeout, has_retry, has_replicas, has_max_msgs, has_storage, has_sync;
    unsigned timeout_ms;
    unsigned retry_ms;
    unsigned replicas;
    uint64_t max_msgs;
    bool memory;
    dls_sync sync;
} jsm_url;

/* Parses `url` (grammar in include/daolease/jetstream.h). 0,
 * DLS_ERR_CONFIG (w->reason, w->offset the byte offset in the URL) or
 * DLS_ERR_NOMEM. On error nothing is left to free. */
int jsm_url_parse(const char *url, jsm_url *u, dls_where *w);
void jsm_url_free(jsm_url *u);

/* The medium factory's hook (stream/medium.c): dls_medium_open and
 * dls_medium_create hand nats:// URLs here, with generic settings mapped
 * by dls_jetstream_settings_from_medium. */
int dls_st_jetstream(dls_medium **out, const char *url, dls_open_mode mode, bool create,
                     const dls_medium_settings *ms, dls_where *w);

#endif
