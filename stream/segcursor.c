/* Cursors of a segmented medium (stream-format.md, Readers): a cursor reads
 * one segment at a time with pread, moves to the next segment when one
 * ends, answers gap for positions before the oldest retained segment, and
 * transport-error at corruption. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream/segment.h"

typedef struct st_scur {
    st_seg *m;
    int fd;                /* the segment being read, or -1 */
    uint64_t seg_base;     /* its base index */
    dls_st_reader r;
    uint64_t target;       /* the cursor's position */
} st_scur;

int dls_st_seg_cursor_new(void *impl, uint64_t from, void **out)
{
    st_scur *c = calloc(1, sizeof *c);
    if (!c)
        return DLS_ERR_NOMEM;
    if (dls_st_reader_init(&c->r, -1, DLS_ST_READ_BUF)) {
        free(c);
        return DLS_ERR_NOMEM;
    }
    c->m = impl;
    c->fd = -1;
    c->target = from;
    *out = c;
    return 0;
}

static void close_seg(st_scur *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->r.fd = -1;
    dls_st_reader_drop(&c->r);
}

void dls_st_seg_cursor_del(void *impl)
{
    st_scur *c = impl;
    close_seg(c);
    dls_st_reader_fini(&c->r);
    free(c);
}

static void use_seg(st_scur *c, int fd, uint64_t base)
{
    close_seg(c);
    c->fd = fd;
    c->seg_base = base;
    c->r.fd = fd;
    dls_st_reader_seek(&c->r, DLS_STREAM_HEADER_LEN, base);
}

static dls_next gap_to(st_scur *c, uint64_t oldest, dls_record *rec)
{
    close_seg(c);
    rec->gap_from = c->target;
    rec->position = oldest;
    c->target = oldest;
    return DLS_NEXT_GAP;
}

/* Opens the segment holding the cursor's position, from a fresh listing.
 * DLS_NEXT_OK when a segment is open. */
static dls_next locate(st_scur *c, dls_record *rec, dls_where *w)
{
    for (int tries = 0; tries < 8; tries++) {
        seg_ent *v;
        size_t n;
        if (dls_st_seg_list(c->m->dirfd, false, &v, &n, w))
            return DLS_NEXT_ERROR;
        if (n == 0) {
            free(v);
            return DLS_NEXT_BLOCKED;
        }
        if (c->target < v[0].base) {
            uint64_t oldest = v[0].base;
            free(v);
            return gap_to(c, oldest, rec);
        }
        size_t i = n - 1;
        while (v[i].base > c->target)
            i--;
        uint64_t base = v[i].base;
        free(v);
        int fd;
        int rc = dls_st_seg_open_file(c->m, base, false, &fd, w);
        if (rc == 0) {
            use_seg(c, fd, base);
            return DLS_NEXT_OK;
        }
        if (rc != DLS_ERR_NOTFOUND)
            return DLS_NEXT_ERROR;
        /* Deleted between listing and opening: list afresh. */
    }
    return DLS_NEXT_BLOCKED;
}

/* The open segment ends cleanly at position `next` and no segment starts
 * there. If a later segment exists while this one is still linked, the
 * positions from `next` up to it are missing: a hole, corruption
 * (stream-format.md rev 4), answered transport-error with rec->gap_from the
 * first position after the hole. The order (list, then look for `next`,
 * then for this segment) rules out a roll and an eviction in between:
 * segments are created in order and deleted oldest first, so a later one
 * listed while `next` is missing and this one still linked is a hole.
 * Otherwise blocked (or OK after moving to a segment that appeared). */
static dls_next hole_check(st_scur *c, uint64_t next, dls_record *rec, dls_where *w)
{
    seg_ent *v;
    size_t n;
    if (dls_st_seg_list(c->m->dirfd, false, &v, &n, w))
        return DLS_NEXT_ERROR;
    uint64_t after = 0;
    bool overlap = false;
    for (size_t i = 0; i < n; i++) {
        if (v[i].base > next) {
            after = v[i].base;
            break;
        }
        if (v[i].base > c->seg_base && v[i].base < next)
            overlap = true;
    }
    free(v);
    if (!after && !overlap)
        return DLS_NEXT_BLOCKED;
    int fd2;
    /* An empty segment is its own next: a later one is then a hole. */
    int rc = next == c->seg_base ? DLS_ERR_NOTFOUND
                                 : dls_st_seg_open_file(c->m, next, false, &fd2, w);
    if (rc == 0) {
        use_seg(c, fd2, next); /* rolled meanwhile */
        return DLS_NEXT_OK;
    }
    if (rc != DLS_ERR_NOTFOUND)
        return DLS_NEXT_ERROR;
    struct stat st;
    if (fstat(c->fd, &st) < 0) {
        dls_st_fail(w, DLS_ERR_IO, c->r.off, "cannot stat a segment", errno);
        return DLS_NEXT_ERROR;
    }
    if (st.st_nlink == 0) {
        close_seg(c);
        if (c->target < next)
            c->target = next;
        return locate(c, rec, w);
    }
    if (overlap) {
        dls_st_fail(w, DLS_ERR_CORRUPT, c->r.off,
                    "two segments overlap (a segment's records run past the next "
                    "segment's base)",
                    0);
        return DLS_NEXT_ERROR;
    }
    rec->gap_from = after;
    dls_st_fail(w, DLS_ERR_CORRUPT, c->r.off,
                "a segment between the oldest and the newest is missing (a hole)", 0);
    return DLS_NEXT_ERROR;
}

/* The open segment ended (cleanly or at a bad record at `at`): move to the
 * next segment if there is one. DLS_NEXT_OK to go on reading. */
static dls_next at_segment_end(st_scur *c, dls_st_rd rd, uint64_t at, uint64_t eof,
                               dls_record *rec, dls_where *w)
{
    uint64_t next = c->r.pos;
    int fd2 = -1;
    /* An empty segment never rolls: it has no successor yet. */
    int rc = next == c->seg_base ? DLS_ERR_NOTFOUND : dls_st_seg_open_file(c->m, next, false, &fd2, w);
    if (rc == 0) {
        /* A later segment exists, so this one is closed for good: look
         * again at what stopped us, afresh. */
        const uint8_t *p;
        size_t n;
        uint64_t e2 = 0;
        dls_st_reader_seek(&c->r, at, next);
        dls_st_rd again = dls_st_reader_next(&c->r, 0, &p, &n, &e2, w);
        if (again == DLS_ST_RD_OK) {
            close(fd2);
            dls_st_reader_seek(&c->r, at, next); /* re-read it in the loop */
            return DLS_NEXT_OK;
        }
        if (again == DLS_ST_RD_EOF) {
            use_seg(c, fd2, next);
            return DLS_NEXT_OK;
        }
        close(fd2);
        if (again == DLS_ST_RD_BAD && w) {
            w->offset = at;
            w->reason = "a bad record in a segment that is followed by another";
        }
        return DLS_NEXT_ERROR;
    }
    if (rc != DLS_ERR_NOTFOUND)
        return DLS_NEXT_ERROR;
    struct stat st;
    if (fstat(c->fd, &st) < 0) {
        dls_st_fail(w, DLS_ERR_IO, at, "cannot stat a segment", errno);
        return DLS_NEXT_ERROR;
    }
    if (st.st_nlink == 0) {
        /* This segment was deleted, and its successor is gone too (or not
         * there yet): a fresh listing says which. */
        close_seg(c);
        if (c->target < next)
            c->target = next;
        return locate(c, rec, w);
    }
    if (rd == DLS_ST_RD_EOF)
        return hole_check(c, next, rec, w);
    if (eof - at > DLS_TORN_TAIL_MAX) {
        if (w)
            w->offset = at;
        return DLS_NEXT_ERROR;
    }
    /* Within R of this segment's end: a torn tail if this is the last
     * segment, corruption if any later segment exists. */
    seg_ent *v;
    size_t n;
    if (dls_st_seg_list(c->m->dirfd, false, &v, &n, w))
        return DLS_NEXT_ERROR;
    bool later = n > 0 && v[n - 1].base > c->seg_base;
    free(v);
    if (!later)
        return DLS_NEXT_BLOCKED;
    dls_st_fail(w, DLS_ERR_CORRUPT, at, "a bad record in a segment that is followed by another",
                0);
    return DLS_NEXT_ERROR;
}

dls_next dls_st_seg_cursor_next(void *impl, dls_record *rec, dls_where *w)
{
    st_scur *c = impl;
    if (c->fd < 0) {
        dls_next r = locate(c, rec, w);
        if (r != DLS_NEXT_OK)
            return r;
    }
    for (;;) {
        const uint8_t *p;
        size_t n;
        uint64_t eof = 0, at = c->r.off;
        dls_st_rd rd = dls_st_reader_buffered(&c->r, &p, &n)
                           ? DLS_ST_RD_OK
                           : dls_st_reader_next(&c->r, 0, &p, &n, &eof, w);
        if (rd == DLS_ST_RD_OK) {
            if (c->r.pos - 1 < c->target && !dls_record_is_seal(p, n))
                continue;
            rec->position = c->r.pos - 1;
            rec->p = p;
            rec->n = n;
            c->target = c->r.pos;
            return DLS_NEXT_OK;
        }
        if (rd == DLS_ST_RD_EOF || rd == DLS_ST_RD_BAD) {
            dls_next r = at_segment_end(c, rd, at, eof, rec, w);
            if (r != DLS_NEXT_OK)
                return r;
            if (c->fd < 0) {
                /* located again (a gap answered above otherwise) */
                if ((r = locate(c, rec, w)) != DLS_NEXT_OK)
                    return r;
            }
            continue;
        }
        return DLS_NEXT_ERROR; /* shrank, or an I/O error */
    }
}

