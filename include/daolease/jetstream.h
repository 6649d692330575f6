/* daolease — the NATS JetStream medium (spec: stream-format.md revision 4,
 * "NATS JetStream stream"; docs/jetstream.md).
 *
 * A medium whose records are the messages of one JetStream stream, so that
 * a judge and its holders can run on different machines and an
 * acknowledged append survives the loss of a machine (a stream with three
 * replicas acknowledges a publish once a Raft majority stored it). It is an
 * ordinary dls_medium: append, seal, cursors and their five answers work as
 * for a file (include/daolease/stream.h); only opening differs.
 *
 * Layout of a stream S (docs/jetstream.md):
 *   - one subject, `daolease.S` when daolease created the stream; every
 *     message is one record (payload 1 … 65536 bytes);
 *   - position = stream sequence − 1 (sequences start at 1 and are never
 *     reused, so positions are dense and survive eviction);
 *   - the medium id is kept in the stream's description, exactly
 *     "daolease medium <32 lower-case hex digits>", written atomically with
 *     the stream by the create request;
 *   - every message carries the header `Dls-Medium: <the same 32 hex>`; a
 *     message without it (published by hand or by a foreign tool) is not a
 *     record: cursors answer transport-error at it, never ok;
 *   - every append carries `Nats-Expected-Last-Sequence`, so the server
 *     stores it only directly after the sequence the writer last saw: two
 *     writers can never interleave inside one batch, and a writer opened
 *     with `exclusive` (a journal) fails instead of appending after records
 *     it has not seen;
 *   - the seal is the seal record (DLS_SEAL_RECORD) appended like any
 *     record, after which the stream's configuration is set `sealed`
 *     (the server then refuses every publish, delete and purge);
 *   - retention: a stream with no limits retains everything; `max_msgs`
 *     (limits policy, discard old) makes it evict-oldest. A stream with
 *     another retention policy or discard-new is refused (DLS_ERR_CONFIG).
 *
 * Cursors read by sequence (the JetStream "get message" API, answered by
 * the stream's leader), with no consumer and no acknowledgement state, so
 * any number of judges and auditors read the same positions independently.
 * A cursor answers gap exactly when the stream's first retained sequence is
 * past it; a message missing between the first and the last sequence
 * (deleted by hand) is transport-error at it, like a hole in a segmented
 * medium; end at the seal record, or at the tail of a stream whose
 * configuration is sealed.
 *
 * URLs: nats://host:port[,host:port...]/stream[?param=value&...]
 *   host       a name or an IPv4 address; port default 4222; several
 *              servers (one cluster) separated by commas
 *   stream     1 … 64 bytes of [A-Za-z0-9_-] (the JetStream stream name)
 *   params     timeout_ms, retry_ms, replicas, max_msgs, storage (file|memory),
 *              sync (none|data|group); a value in the URL overrides the
 *              same field of the settings.
 *
 * Sync policies (docs/jetstream.md): a stream's durability is its
 * configuration. The medium declares DLS_SYNC_DATA when the stream keeps
 * file storage on 2 or more replicas (an acknowledgement then means a
 * majority of the replicas stored the record, so the loss of one machine
 * loses no acknowledged append), else DLS_SYNC_NONE (one server or memory
 * storage: an acknowledged append survives a crash of the writer, not of
 * the server's machine). DLS_SYNC_GROUP is declared when it was asked for
 * and DATA holds (JetStream always commits appends in flight together).
 *
 * Every call is bounded. Connecting and opening finish within timeout_ms,
 * each request too. An append retries a transient failure (a leader
 * election, a reconnection) with the same expected sequence until retry_ms
 * has passed since the call began (each try waiting at most timeout_ms),
 * then answers DLS_ERR_TRANSPORT; a try that was stored after all is
 * recognised by reading back (the message right after the expected
 * sequence is this very record) and answered ok at its position, never
 * stored twice. retry_ms (URL) defaults to 30000 for an exclusive writer
 * (a journal rides through a leader failover, measured 4-8 s on three
 * nodes) and to timeout_ms for any other (docs/jetstream.md, "Failover
 * budget").
 * A cursor's request waits at most 1 s (or timeout_ms when shorter), then
 * DLS_NEXT_ERROR. The client reconnects by itself to any server of the URL
 * and keeps no reconnect buffer. An append that answered DLS_ERR_TRANSPORT
 * may still have been stored (as for any remote store).
 *
 * Batches: published pipelined (up to 256 records, one round trip), record
 * i expecting the batch's start + i, so what is stored is always a
 * contiguous prefix. Against a concurrent writer a batch is contiguous but
 * not atomic (JetStream 2.9 has no atomic multi-message publish): when
 * another writer's record lands inside it, the call answers DLS_ERR_LOCKED
 * with its first records stored.
 *
 * Threads: appends and seals on one medium are serialized by a mutex and
 * may come from several threads; a cursor belongs to one thread at a time.
 *
 * Built without libnats, the functions exist and answer DLS_ERR_CONFIG
 * (w->reason "built without NATS JetStream support").
 */
#ifndef DAOLEASE_JETSTREAM_H
#define DAOLEASE_JETSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/error.h"
#include "daolease/export.h"
#include "daolease/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DLS_JETSTREAM_SERVERS_MAX 16   /* servers in one URL */
#define DLS_JETSTREAM_NAME_MAX 64      /* bytes of a stream name */

/* Settings of a JetStream medium. Defaults (dls_jetstream_settings_default):
 *   sync        DLS_SYNC_NONE: accept any stream. DLS_SYNC_DATA or
 *               DLS_SYNC_GROUP: create and append-open refuse
 *               (DLS_ERR_CONFIG) a stream that is not file storage on 2 or
 *               more replicas.
 *   timeout_ms  2000: bound of connecting and of each request.
 *   replicas    0: create: 1; open: accept the stream's. n > 0: create with
 *               n replicas (the cluster must have n servers: DLS_ERR_CONFIG
 *               otherwise); open: the stream must have n (DLS_ERR_CONFIG).
 *   memory      false: create with file storage; true: memory storage.
 *   max_msgs    0: create a medium that retains everything; n > 0 one that
 *               keeps the newest n records (evict-oldest). On open, 0
 *               accepts the stream's bound; n > 0 must equal it.
 *   id          NULL: create: a random id, else these 16 bytes; open: any
 *               id, else the medium's id must be these 16 bytes
 *               (DLS_ERR_MEDIUM_ID otherwise).
 *   exclusive   false: when true the handle is the stream's only writer (a
 *               journal): an append finding that another writer appended
 *               since this handle last looked fails with DLS_ERR_LOCKED
 *               instead of appending after records it has not seen (the
 *               writer fence of a journal on JetStream).
 * The id is copied by create/open. */
typedef struct dls_jetstream_settings {
    dls_sync sync;
    unsigned timeout_ms;
    unsigned replicas;
    bool memory;
    uint64_t max_msgs;
    const uint8_t *id;
    bool exclusive;
} dls_jetstream_settings;

/* Fills s with the defaults listed above. */
DLS_EXPORT void dls_jetstream_settings_default(dls_jetstream_settings *s);

/* Takes `id` and `exclusive` from generic medium settings (the rest keeps
 * its current value: a stream's durability is its own configuration, so
 * the generic default sync `data` is not imposed). */
DLS_EXPORT void dls_jetstream_settings_from_medium(dls_jetstream_settings *js,
                                                   const dls_medium_settings *ms);

/* True when `s` starts with "nats://". NULL-safe. */
DLS_EXPORT bool dls_jetstream_is_url(const char *s);

/* Creates the stream named by the URL and opens it for append. The create
 * request is atomic on the server: DLS_ERR_EXISTS when a stream of that
 * name exists (whatever its configuration). `s` may be NULL (defaults).
 * Errors: DLS_ERR_CONFIG (a malformed URL or parameter, w->reason and
 * w->offset in the URL; JetStream not enabled; more replicas than servers;
 * a sync policy the configuration does not provide), DLS_ERR_TRANSPORT (no
 * server reachable, or no answer within timeout_ms), DLS_ERR_EXISTS,
 * DLS_ERR_NOMEM, DLS_ERR_SODIUM (random id). */
DLS_EXPORT int dls_jetstream_create(dls_medium **out, const char *url,
                                    const dls_jetstream_settings *s, dls_where *w);

/* Opens an existing stream: DLS_OPEN_READ (cursors only) or
 * DLS_OPEN_APPEND. `s` may be NULL (defaults). Errors: as
 * dls_jetstream_create, and DLS_ERR_NOTFOUND (no such stream),
 * DLS_ERR_MEDIUM_ID (the description is not "daolease medium <hex>" — a
 * stream daolease did not make — or names another id than s->id),
 * DLS_ERR_CONFIG (a retention policy other than limits, discard-new, not
 * exactly one subject, replicas or max_msgs other than asked). */
DLS_EXPORT int dls_jetstream_open(dls_medium **out, const char *url, dls_open_mode mode,
                                  const dls_jetstream_settings *s, dls_where *w);

/* True when m is a JetStream medium opened with `exclusive` (the writer
 * fence of a journal on JetStream: judge.md, Assembly; docs/jetstream.md,
 * A journal on JetStream). False for any other medium, for NULL, and always
 * in a build without libnats. */
DLS_EXPORT bool dls_jetstream_is_exclusive(dls_medium *m);

/* A standby judge's takeover fence on an exclusive handle (judge.md rev 5,
 * Standby judges and takeover: "its first append names the last sequence
 * it read"): the handle's next append lands only directly after position
 * end - 1, i.e. when the stream holds exactly `end` positions; if another
 * writer appended after what the caller read, that append fails with
 * DLS_ERR_LOCKED and stores nothing. Errors: DLS_ERR_INVAL (not a
 * JetStream medium), DLS_ERR_STATE (not exclusive), DLS_ERR_CONFIG (built
 * without libnats). */
DLS_EXPORT int dls_jetstream_expect_after(dls_medium *m, uint64_t end);

#ifdef __cplusplus
}
#endif
#endif
