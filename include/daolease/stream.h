/* daolease — append-only media and cursors (spec: stream-format.md).
 *
 * A medium is an append-only sequence of records (each one msgpack map of
 * 1 … 65536 bytes) with a 16-byte identity. Writers append; readers hold
 * cursors whose next() answers exactly one of ok, blocked, end, gap or
 * transport-error and never blocks. Positions count from 0 at the first
 * record ever appended and survive eviction.
 *
 * Kinds: a plain file (retains everything), a segmented directory and an
 * in-memory ring (both evict-oldest). Other kinds (Redis Streams) plug in
 * through include/daolease/medium_impl.h without touching the judge.
 *
 * Threads: a medium handle and its cursors belong to one thread at a time,
 * except dls_medium_append on a DLS_SYNC_GROUP medium, which may be called
 * from several threads at once (their appends share one fdatasync).
 */
#ifndef DAOLEASE_STREAM_H
#define DAOLEASE_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/error.h"
#include "daolease/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DLS_RECORD_MAX 65536u          /* bytes, one record's payload */
#define DLS_TORN_TAIL_MAX (4u << 20)   /* R: a bad tail within R bytes of EOF is torn */
#define DLS_STREAM_HEADER_LEN 48u
#ifndef DLS_MEDIUM_ID_LEN
#define DLS_MEDIUM_ID_LEN 16
#endif

typedef struct dls_medium dls_medium;
typedef struct dls_cursor dls_cursor;

/* How durable an append is when it answers ok. */
typedef enum dls_sync {
    DLS_SYNC_NONE = 0,  /* in the page cache */
    DLS_SYNC_DATA,      /* fdatasync per append */
    DLS_SYNC_GROUP      /* appends in flight share one fdatasync */
} dls_sync;

typedef enum dls_retention {
    DLS_RETAIN_ALL = 0,       /* retains everything */
    DLS_RETAIN_EVICT_OLDEST   /* drops the oldest records past a declared bound */
} dls_retention;

typedef enum dls_medium_kind {
    DLS_MEDIUM_FILE = 0,
    DLS_MEDIUM_SEGMENTED,
    DLS_MEDIUM_RING,
    DLS_MEDIUM_REDIS
} dls_medium_kind;

typedef enum dls_open_mode {
    DLS_OPEN_READ = 0,   /* cursors only; takes no lock, never truncates */
    DLS_OPEN_APPEND      /* cursors and appends; recovers a torn tail */
} dls_open_mode;

/* Settings for creating or opening a medium. Defaults
 * (dls_medium_settings_default):
 *   sync             DLS_SYNC_DATA
 *   lock_timeout_ms  5000   (bounded lock wait: retry, then DLS_ERR_LOCKED)
 *   segment_bytes    64 MiB (segmented: roll before exceeding this size)
 *   retain_segments  0      (segmented: keep at most this many; 0 = no bound)
 *   retain_bytes     0      (segmented: keep at most this many bytes; 0 = no bound)
 *   ring_capacity    4096   (ring: records kept)
 *   id               NULL   (create: a random id; else these 16 bytes)
 */
typedef struct dls_medium_settings {
    dls_sync sync;
    unsigned lock_timeout_ms;
    uint64_t segment_bytes;
    uint64_t retain_segments;
    uint64_t retain_bytes;
    size_t ring_capacity;
    const uint8_t *id;
} dls_medium_settings;

DLS_EXPORT void dls_medium_settings_default(dls_medium_settings *s);

/* Creates a new medium at `path` (a file, or a directory for
 * DLS_MEDIUM_SEGMENTED) atomically (temporary name, rename, directory fsync)
 * and opens it for append. DLS_ERR_EXISTS when the path exists. */
DLS_EXPORT int dls_medium_create(dls_medium **out, dls_medium_kind kind,
                                 const char *path, const dls_medium_settings *s,
                                 dls_where *w);

/* Opens an existing file or segmented directory (detected from the path).
 * DLS_OPEN_APPEND truncates a torn tail (stream-format.md, R rule) and
 * refuses corruption with DLS_ERR_CORRUPT (w->offset = the bad record's
 * byte offset, w->reason why). DLS_ERR_HEADER for a foreign or future file. */
DLS_EXPORT int dls_medium_open(dls_medium **out, const char *path,
                               dls_open_mode mode, const dls_medium_settings *s,
                               dls_where *w);

/* A new in-memory ring (evict-oldest at s->ring_capacity records). */
DLS_EXPORT int dls_ring_new(dls_medium **out, const dls_medium_settings *s);

/* Closes a medium; NULL-safe. Cursors on it must be deleted first. */
DLS_EXPORT void dls_medium_del(dls_medium *m);

DLS_EXPORT const uint8_t *dls_medium_id(const dls_medium *m);
DLS_EXPORT dls_retention dls_medium_retention(const dls_medium *m);
DLS_EXPORT dls_medium_kind dls_medium_kind_of(const dls_medium *m);
DLS_EXPORT dls_sync dls_medium_sync(const dls_medium *m);
/* The path or URL the medium was opened from, for messages. */
DLS_EXPORT const char *dls_medium_name(const dls_medium *m);

/* Appends one record (a msgpack map, 1 … 65536 bytes). Answers 0 only once
 * the record is durable to the medium's sync policy, with *pos its position.
 * Errors: DLS_ERR_SEALED, DLS_ERR_RECORD, DLS_ERR_LOCKED, DLS_ERR_IO (the
 * partial write undone), DLS_ERR_STATE for a medium opened for reading. */
DLS_EXPORT int dls_medium_append(dls_medium *m, const uint8_t *rec, size_t n,
                                 uint64_t *pos, dls_where *w);

/* Appends `count` records under one lock and, for DLS_SYNC_GROUP and
 * DLS_SYNC_DATA, one sync; *first is the first record's position. All or
 * nothing: on error none is acknowledged and the file is cut back. */
DLS_EXPORT int dls_medium_append_batch(dls_medium *m, const uint8_t *const *recs,
                                       const size_t *lens, size_t count,
                                       uint64_t *first, dls_where *w);

/* Appends the seal; later appends answer DLS_ERR_SEALED. */
DLS_EXPORT int dls_medium_seal(dls_medium *m, dls_where *w);

/* ---- cursors ------------------------------------------------------------ */

typedef enum dls_next {
    DLS_NEXT_OK = 0,   /* one record, with its position; cursor advanced */
    DLS_NEXT_BLOCKED,  /* nothing more now (or a record still being written) */
    DLS_NEXT_END,      /* the medium was sealed; the cursor is retired */
    DLS_NEXT_GAP,      /* records were evicted unread; cursor moved to the oldest retained */
    DLS_NEXT_ERROR     /* transport-error: the medium cannot be read; cursor unchanged */
} dls_next;

/* What next() yields. On OK: `position` and the payload `p`/`n`, borrowed
 * until the next call on the cursor. On GAP: `position` is where the
 * cursor now stands (the oldest retained record) and `gap_from` where it
 * stood. On END: `position` is the seal's position. */
typedef struct dls_record {
    uint64_t position;
    uint64_t gap_from;
    const uint8_t *p;
    size_t n;
} dls_record;

/* A cursor on m starting at position `from` (0 = the first record ever). */
DLS_EXPORT int dls_cursor_new(dls_cursor **out, dls_medium *m, uint64_t from);
DLS_EXPORT void dls_cursor_del(dls_cursor *c);

/* Answers exactly one dls_next value (never negative, never blocks). On
 * DLS_NEXT_ERROR `w` names the position, byte offset and reason. */
DLS_EXPORT dls_next dls_cursor_next(dls_cursor *c, dls_record *rec, dls_where *w);

/* The next unread position (after END: the seal's position). */
DLS_EXPORT uint64_t dls_cursor_position(const dls_cursor *c);
DLS_EXPORT dls_medium *dls_cursor_medium(const dls_cursor *c);

DLS_EXPORT const char *dls_next_name(dls_next r);
DLS_EXPORT const char *dls_sync_name(dls_sync s);

#ifdef __cplusplus
}
#endif
#endif
