/* daolease — the medium backend interface (spec: stream-format.md).
 *
 * Every kind of medium (plain file, segmented directory, memory ring, and
 * media added later such as a Redis Stream in its own folder) is a set of
 * operations on an opaque backend object. stream/medium.c owns the public
 * dls_medium and dls_cursor handles and dispatches through this table, so
 * the judge, the holder and the audit never see a backend.
 *
 * What the dispatcher does for every backend, so a backend need not:
 *   - checks arguments (record length 1 … DLS_RECORD_MAX, count > 0, a
 *     medium opened with DLS_OPEN_READ refuses appends with DLS_ERR_STATE);
 *   - turns an ok record whose payload is exactly DLS_SEAL_RECORD into END
 *     at that position and retires the cursor (later calls answer END);
 *   - keeps the cursor's public position (ok: one past the record; gap: the
 *     backend's rec->position; blocked/error: unchanged) and fills
 *     rec->position on blocked and error;
 *   - serializes nothing: a backend documents and provides its own thread
 *     safety (the file backends serialize appends; the ring locks
 *     everything).
 *
 * What a backend must do:
 *   - refuse appends after a seal with DLS_ERR_SEALED, including a batch in
 *     which a seal is followed by another record (use dls_record_is_seal);
 *   - answer cursor_next with OK (rec->position, rec->p, rec->n borrowed
 *     until the next call on that cursor), BLOCKED, GAP (rec->gap_from =
 *     where the cursor stood, rec->position = the oldest retained position,
 *     the cursor moved there) or ERROR (w filled); END only when it knows
 *     the cursor stands on a seal it will not return as a record;
 *   - never block in cursor_next.
 */
#ifndef DAOLEASE_MEDIUM_IMPL_H
#define DAOLEASE_MEDIUM_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/error.h"
#include "daolease/export.h"
#include "daolease/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A backend's operations. `impl` is the backend object given to
 * dls_medium_wrap; `cimpl` a backend cursor made by cursor_new. */
typedef struct dls_medium_ops {
    /* Short name of the kind, for messages ("file", "segmented", "ring",
     * "redis"). Required. */
    const char *kind_name;

    /* Appends one record (already checked: 1 … DLS_RECORD_MAX bytes),
     * answering 0 only once durable to the medium's sync policy, *pos its
     * position. Optional: when NULL the dispatcher calls append_batch with
     * count 1. */
    int (*append)(void *impl, const uint8_t *rec, size_t n, uint64_t *pos,
                  dls_where *w);

    /* Appends `count` (> 0) checked records all or nothing; *first is the
     * first one's position. Required. */
    int (*append_batch)(void *impl, const uint8_t *const *recs,
                        const size_t *lens, size_t count, uint64_t *first,
                        dls_where *w);

    /* Appends the seal. Optional: when NULL the dispatcher appends
     * DLS_SEAL_RECORD through append/append_batch. */
    int (*seal)(void *impl, uint64_t *pos, dls_where *w);

    /* Makes a cursor standing at position `from`. Required. Errors:
     * DLS_ERR_NOMEM (nothing else: a cursor reports trouble from next). */
    int (*cursor_new)(void *impl, uint64_t from, void **cimpl);

    /* One answer, never blocking; see the rules above. Required. */
    dls_next (*cursor_next)(void *cimpl, dls_record *rec, dls_where *w);

    /* Frees a backend cursor; never called with NULL. Required. */
    void (*cursor_del)(void *cimpl);

    /* The medium id when it can change after wrapping (a file whose header
     * was not complete when opened for reading). Optional: when NULL,
     * dls_medium_id answers the id given in dls_medium_info. */
    const uint8_t *(*id)(const void *impl);

    /* Frees the backend object; never called with NULL. Required. */
    void (*del)(void *impl);

    /* Deletes whole stored units (segments) that hold only positions
     * before `before`, oldest first, never the newest, so that readers see
     * eviction at the front (gap), never a hole; *oldest receives the
     * oldest retained position after the call (dls_medium_trim). Optional:
     * when NULL, dls_medium_trim answers DLS_ERR_RETENTION. */
    int (*trim)(void *impl, uint64_t before, uint64_t *oldest, dls_where *w);

    /* Whether the medium drops records on its own (a declared bound).
     * Optional: when NULL, dls_medium_evicts answers whether the declared
     * retention is anything but DLS_RETAIN_ALL. */
    bool (*evicts)(const void *impl);
} dls_medium_ops;

/* What a backend declares when it is wrapped. Copied by dls_medium_wrap
 * (`name` too). */
typedef struct dls_medium_info {
    dls_medium_kind kind;
    dls_retention retention; /* the medium must declare one (stream-format.md) */
    dls_sync sync;
    dls_open_mode mode;
    uint8_t id[DLS_MEDIUM_ID_LEN];
    const char *name;        /* path or URL, for messages; may be NULL */
} dls_medium_info;

/* Wraps a backend object as a public medium. `ops` must outlive the medium
 * (a static table). On success the medium owns `impl` (ops->del frees it
 * from dls_medium_del); on failure the caller still owns it. Errors:
 * DLS_ERR_INVAL (a required op missing), DLS_ERR_NOMEM. */
DLS_EXPORT int dls_medium_wrap(dls_medium **out, const dls_medium_ops *ops,
                               void *impl, const dls_medium_info *info);

/* The backend object of a medium made by dls_medium_wrap with these ops,
 * or NULL when m is of another kind (so a backend can recognise its own). */
DLS_EXPORT void *dls_medium_impl(dls_medium *m, const dls_medium_ops *ops);

#ifdef __cplusplus
}
#endif
#endif
