/* daolease streams — what the three files of the segmented medium share
 * (segdir.c: the directory layout; segmented.c: the writer and opener;
 * segcursor.c: the cursors). Internal. */
#ifndef DLS_STREAM_SEGMENT_H
#define DLS_STREAM_SEGMENT_H

#include "stream/internal.h"

#define ID_FILE "medium.id"
#define BOUNDS_FILE "medium.bounds"
#define SEG_NAME_LEN 24 /* 20 digits and ".seg" */

typedef struct seg_ent {
    uint64_t base;
    uint64_t bytes;
} seg_ent;

typedef struct st_seg {
    int dirfd;
    char *path;            /* the directory's path, for reports */
    int lockfd;            /* medium.id, read-write (append mode) */
    uint8_t id[DLS_MEDIUM_ID_LEN];
    dls_open_mode mode;
    dls_sync policy;
    unsigned lock_timeout_ms;
    bool exclusive;
    uint64_t segment_bytes, retain_segments, retain_bytes;
    bool tail_ok, sync_ok;
    dls_st_tail tail;      /* the last segment (tail.fd owned) */
    dls_st_sync sync;
    seg_ent *segs;         /* the writer's view of the segments, oldest first */
    uint64_t checked;      /* every segment below this base was checked whole */
    bool sealed_before;    /* a seal ends the medium in a segment before the last */
    size_t nsegs, cap_segs;
} st_seg;

/* ---- the directory layout (segdir.c) ------------------------------------ */

/* The file name of the segment whose first record is position `base`. */
void dls_st_seg_name(char out[SEG_NAME_LEN + 1], uint64_t base);

/* Lists the segments (sorted by base; sizes when asked). The caller frees
 * *out. 0, DLS_ERR_IO or DLS_ERR_NOMEM. */
int dls_st_seg_list(int dirfd, bool sizes, seg_ent **out, size_t *count, dls_where *w);

/* Opens the segment with this base and checks its header. 0 with *fd; or
 * DLS_ERR_NOTFOUND (no such segment, or a header not complete yet),
 * DLS_ERR_MEDIUM_ID, DLS_ERR_HEADER, DLS_ERR_IO. */
int dls_st_seg_open_file(const st_seg *m, uint64_t base, bool rw, int *fd, dls_where *w);

/* Reads `medium.id`. 0, DLS_ERR_HEADER (absent or malformed), DLS_ERR_IO. */
int dls_st_seg_read_id(int dirfd, uint8_t id[DLS_MEDIUM_ID_LEN], dls_where *w);

/* Reads `medium.bounds` into m's bounds; absent: 0 with *found false. */
int dls_st_seg_read_bounds(st_seg *m, bool *found, dls_where *w);

/* Checks the segments of listing v[0..n) that are not the newest, from the
 * one whose base is `from` on (segments below were checked before): each
 * must be whole (a bad record anywhere is corruption) and hold exactly the
 * records up to the next one's base (fewer: a hole; more: an overlap).
 * stream-format.md rev 4: holes and bad records in older segments are
 * corruption. 0 (with *sealed when a seal ends the medium in one of them)
 * or DLS_ERR_CORRUPT with w->offset = the bad record's byte offset, or for
 * a hole or an overlap the first position concerned; DLS_ERR_IO,
 * DLS_ERR_NOMEM, DLS_ERR_HEADER, DLS_ERR_MEDIUM_ID. O(bytes checked). */
int dls_st_seg_check(const st_seg *m, const seg_ent *v, size_t n, uint64_t from,
                     bool *sealed, dls_where *w);

/* ---- cursors (segcursor.c) ---------------------------------------------- */

int dls_st_seg_cursor_new(void *impl, uint64_t from, void **out);
dls_next dls_st_seg_cursor_next(void *impl, dls_record *rec, dls_where *w);
void dls_st_seg_cursor_del(void *impl);

#endif
