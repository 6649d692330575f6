/* daolease — the Redis Streams medium (spec: stream-format.md, "Redis layout").
 *
 * A medium whose records live in a Redis Stream, so that a judge and the
 * holders it reads can run on different machines. It is an ordinary
 * dls_medium: append, seal, cursors and their five answers work as for a
 * file (include/daolease/stream.h); only opening differs.
 *
 * Layout under a key K (docs/redis.md):
 *   K          the stream; each entry has the fields `pos` (the decimal
 *              position, dense from 0) and `rec` (the record's bytes)
 *   K:next     the next position to assign (a string integer)
 *   K:id       the medium id, 32 lower-case hex characters
 *   K:sealed   the seal's position, once the medium is sealed
 *   K:maxlen   the declared retention bound (absent: retains everything)
 *   K:writer   the token of the medium's one writer, when fenced
 *              (dls_redis_fence: a judge's journal)
 * Every append goes through one Lua script that checks K:id, refuses after
 * a seal, INCRBYs K:next and XADDs the entries (with exact MAXLEN when K:maxlen
 * is set), so that positions stay dense and unique across any number of
 * writers on any number of machines. For Redis Cluster write the key with a
 * hash tag ("{agent-3}") so that all five keys share a slot.
 *
 * URLs: redis://[user[:password]@]host[:port]/key[?param=value&...]
 *   host       a name, an IPv4 address or [an IPv6 address]
 *   port       default 6379
 *   key        the rest of the path, percent-decoded (e.g. %7B for '{'),
 *              1 … 256 bytes
 *   params     timeout_ms, maxlen, replicas, db, sync (none|data|group);
 *              a value in the URL overrides the same field of the settings.
 * The password never appears in dls_medium_name (which shows
 * redis://host:port/key).
 *
 * Every call is bounded: connecting, and each round trip, must finish within
 * timeout_ms or the call answers DLS_ERR_TRANSPORT (appends) or
 * DLS_NEXT_ERROR (cursors); the next call reconnects (checking K:id again).
 * No call ever raises SIGPIPE. An append that timed out may or may not have
 * been applied by the server (as for any remote store).
 *
 * Threads: a Redis medium serializes all use of its one connection with a
 * mutex, so appends (any sync policy) may come from several threads; a
 * cursor still belongs to one thread at a time.
 *
 * Built without hiredis, the functions exist and answer DLS_ERR_CONFIG
 * (w->reason "built without Redis support").
 */
#ifndef DAOLEASE_REDIS_H
#define DAOLEASE_REDIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/error.h"
#include "daolease/export.h"
#include "daolease/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Settings of a Redis medium. Defaults (dls_redis_settings_default):
 *   sync        DLS_SYNC_NONE: an append is ok once the server acknowledged
 *               it (in the server's memory). DLS_SYNC_DATA and
 *               DLS_SYNC_GROUP require the server to run with
 *               `appendonly yes` and `appendfsync always` (checked with
 *               CONFIG GET when opening for append: otherwise, or when
 *               CONFIG GET is refused, DLS_ERR_CONFIG); the server then
 *               fsyncs its append-only file before it answers, once per
 *               event-loop turn for all clients (a group commit).
 *   timeout_ms  1000: bound of connecting and of each call.
 *   maxlen      0: create only. 0 creates a medium that retains everything;
 *               n > 0 one that keeps the newest n entries (exact MAXLEN n,
 *               evict-oldest). On open, 0 accepts the stored bound; n > 0
 *               must equal it (DLS_ERR_CONFIG otherwise).
 *   replicas    0: when n > 0, every append is followed (same round trip)
 *               by WAIT n timeout_ms and is ok only when n replicas
 *               acknowledged it (DLS_ERR_TRANSPORT otherwise).
 *   db          0: the logical database (SELECT) when not 0.
 *   id          NULL: create: a random id, else these 16 bytes; open: any
 *               id, else the medium's id must be these 16 bytes
 *               (DLS_ERR_MEDIUM_ID otherwise).
 *   username    NULL: AUTH user (Redis ACL); the URL's user when NULL.
 *   password    NULL: AUTH password; the URL's password when NULL.
 * Strings and the id are copied by create/open. */
typedef struct dls_redis_settings {
    dls_sync sync;
    unsigned timeout_ms;
    uint64_t maxlen;
    unsigned replicas;
    unsigned db;
    const uint8_t *id;
    const char *username;
    const char *password;
} dls_redis_settings;

/* Fills s with the defaults listed above. */
DLS_EXPORT void dls_redis_settings_default(dls_redis_settings *s);

/* Takes `sync` and `id` from generic medium settings (the rest keeps its
 * current value), for callers that open paths and URLs alike. */
DLS_EXPORT void dls_redis_settings_from_medium(dls_redis_settings *rs,
                                               const dls_medium_settings *ms);

/* True when `s` starts with "redis://" (then it names a Redis medium, not a
 * path). NULL-safe. */
DLS_EXPORT bool dls_redis_is_url(const char *s);

/* Creates a new Redis medium at the URL's key and opens it for append.
 * Atomic (one script): refused with DLS_ERR_EXISTS when any of K, K:next,
 * K:id, K:sealed or K:maxlen exists. `s` may be NULL (defaults).
 * Errors: DLS_ERR_CONFIG (a malformed URL or parameter, w->reason; a sync
 * policy the server's persistence does not provide), DLS_ERR_TRANSPORT (the
 * server cannot be reached or did not answer within timeout_ms), DLS_ERR_PERM
 * (authentication or an ACL refused a command), DLS_ERR_EXISTS,
 * DLS_ERR_NOMEM, DLS_ERR_SODIUM (random id). */
DLS_EXPORT int dls_redis_create(dls_medium **out, const char *url,
                                const dls_redis_settings *s, dls_where *w);

/* Opens an existing Redis medium: DLS_OPEN_READ (cursors only) or
 * DLS_OPEN_APPEND. `s` may be NULL (defaults). Checks that K is a stream (or
 * absent: nothing appended yet) and K:id, K:next, K:sealed, K:maxlen are
 * strings: DLS_ERR_REDIS_TYPE otherwise. The medium declares
 * DLS_RETAIN_EVICT_OLDEST when K:maxlen is set, else DLS_RETAIN_ALL.
 * Errors: as dls_redis_create, and DLS_ERR_NOTFOUND (none of the keys
 * exists), DLS_ERR_MEDIUM_ID (K or K:next exists but K:id is missing or not
 * 32 hex characters, or the id differs from s->id), DLS_ERR_REDIS_TYPE. */
DLS_EXPORT int dls_redis_open(dls_medium **out, const char *url, dls_open_mode mode,
                              const dls_redis_settings *s, dls_where *w);

/* True when m is a medium of this Redis backend (made by dls_redis_create
 * or dls_redis_open), which dls_redis_fence can fence; false for every
 * other medium, whatever kind it declares, and for NULL. */
DLS_EXPORT bool dls_redis_is_medium(dls_medium *m);

/* Makes this handle the one writer of the medium (stream-format.md rev 4:
 * "a Redis journal is fenced by <key>:writer"; the judge calls it on a
 * Redis journal at assembly). Sets K:writer to a fresh token — 32 random hex
 * characters, then "host <name> pid <pid>" for an operator's GET — when
 * K:writer is absent. Called again on a handle that fenced, it answers 0
 * while K:writer still holds its token, else DLS_ERR_JOURNAL_LOCKED: a
 * handle that lost its fence never takes it again (it may have missed
 * another writer's appends).
 * From then on the append script refuses, with DLS_ERR_LOCKED, every append
 * whose token differs: those of every other handle (fenced or not, on any
 * machine), and this handle's own once its fence was cleared or replaced.
 * The fence is cleared when the handle is deleted (dls_medium_del), if
 * K:writer still holds its token; a writer that died leaves it behind, and
 * only an operator who made sure that writer is gone clears it (`DEL
 * <key>:writer`; docs/redis.md). Errors: DLS_ERR_JOURNAL_LOCKED (another
 * token holds K:writer), DLS_ERR_INVAL (m is not a Redis medium),
 * DLS_ERR_STATE (not opened for append), DLS_ERR_MEDIUM_ID, DLS_ERR_PERM,
 * DLS_ERR_TRANSPORT, DLS_ERR_SODIUM, DLS_ERR_CONFIG (built without Redis). */
DLS_EXPORT int dls_redis_fence(dls_medium *m, dls_where *w);

/* A standby judge's takeover fence (judge.md rev 5, Standby judges and
 * takeover; docs/standby.md, Remote journals): in one script, when K:next
 * is exactly `next` (nothing was appended after what the caller read),
 * sets K:writer to a fresh token of this handle — when K:writer is absent,
 * or, with `abandoned` (its writer is presumed gone: no mark for
 * takeover_after readings), whatever token it holds. The handle is then
 * fenced as by dls_redis_fence, at `next`; the previous writer's appends
 * are refused from then on. A token this handle held before is dropped
 * first. Errors: DLS_ERR_JOURNAL_LOCKED (K:next moved: the writer is
 * alive; or another token holds K:writer and `abandoned` is false), and
 * those of dls_redis_fence. */
DLS_EXPORT int dls_redis_take_over(dls_medium *m, uint64_t next, bool abandoned, dls_where *w);

#ifdef __cplusplus
}
#endif
#endif
