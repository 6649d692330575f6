/* What a writer knows of the stream file it appends to, kept exact under
 * the writer lock: another process may have appended (or recovered a torn
 * tail) since this one last held it. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "stream/internal.h"

static ssize_t sys_pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    if (cnt == 1)
        return pwrite(fd, iov[0].iov_base, iov[0].iov_len, off); /* no iovec import */
    return pwritev(fd, iov, cnt, off);
}

const dls_st_io dls_st_io_sys = {sys_pwritev, fdatasync, ftruncate};

int dls_st_tail_init(dls_st_tail *t, int fd, uint64_t base, const dls_st_io *io)
{
    memset(t, 0, sizeof *t);
    t->fd = fd;
    t->dirfd = -1;
    t->base = base;
    t->end = DLS_STREAM_HEADER_LEN;
    t->io = io ? io : &dls_st_io_sys;
    t->copy = malloc(DLS_ST_COPY_MAX);
    if (!t->copy)
        return DLS_ERR_NOMEM;
    int rc = dls_st_reader_init(&t->scan, fd, DLS_ST_READ_BUF);
    if (rc) {
        /* the caller finis only a tail whose init succeeded */
        free(t->copy);
        t->copy = NULL;
    }
    return rc;
}

int dls_st_tail_name(dls_st_tail *t, int dirfd, const char *name)
{
    char *c = strdup(name);
    if (!c)
        return DLS_ERR_NOMEM;
    free(t->name);
    t->name = c;
    t->dirfd = dirfd;
    return 0;
}

void dls_st_tail_fini(dls_st_tail *t)
{
    free(t->name);
    t->name = NULL;
    free((char *)t->cut.sidecar);
    t->cut.sidecar = NULL;
    dls_st_reader_fini(&t->scan);
    free(t->iov);
    free(t->hdrs);
    free(t->copy);
    t->copy = NULL;
    t->iov = NULL;
    t->hdrs = NULL;
    t->cap_iov = 0;
}

int dls_st_tail_refresh(dls_st_tail *t, bool repair, dls_where *w)
{
    /* The size alone, by lseek: half the cost of fstat, and this runs
     * under the writer lock of every shared append.
     * Every read and write of the library is positioned (pread/pwrite),
     * so the file offset this moves is never used. */
    off_t end = lseek(t->fd, 0, SEEK_END);
    if (end < 0)
        return dls_st_fail(w, DLS_ERR_IO, t->end, "cannot find the end of the stream file", errno);
    uint64_t size = (uint64_t)end;
    t->dirty = false;
    if (size == t->end)
        return 0;
    if (size < t->end) {
        /* Shrunk under us (only a foreign writer or an operator does
         * that): count again from the start. */
        t->count = 0;
        t->end = DLS_STREAM_HEADER_LEN;
        t->sealed = false;
        if (size < DLS_STREAM_HEADER_LEN)
            return dls_st_fail(w, DLS_ERR_CORRUPT, size,
                               "the stream file is now shorter than its header", 0);
    }
    if (t->sealed)
        return 0; /* nothing after the first seal counts */
    dls_st_reader *r = &t->scan;
    dls_st_reader_seek(r, t->end, t->base + t->count);
    for (;;) {
        const uint8_t *p;
        size_t n;
        uint64_t eof = size;
        dls_st_rd rd = dls_st_reader_next(r, size, &p, &n, &eof, w);
        if (rd == DLS_ST_RD_OK) {
            t->count++;
            t->end = r->off;
            if (dls_record_is_seal(p, n)) {
                t->sealed = true;
                break;
            }
            continue;
        }
        if (rd == DLS_ST_RD_EOF)
            break;
        if (rd == DLS_ST_RD_BAD) {
            uint64_t b = r->off;
            if (size - b > DLS_TORN_TAIL_MAX)
                return dls_st_fail(w, DLS_ERR_CORRUPT, b,
                                   w && w->reason ? w->reason : "bad record", 0);
            if (repair && t->keep_valid) {
                /* judge.md "Failure of the journal" (rev 5): a journal's
                 * records were all acknowledged; only a plain torn write
                 * (no CRC-valid record after b) is cut. */
                int rc = dls_st_torn_keep(t, b, size, w);
                if (rc)
                    return rc;
            }
            if (repair) {
                /* stream-format.md rev 4: the cut bytes go to a sidecar
                 * first, durably; then the file is cut. */
                int rc = dls_st_torn_cut(t, b, size, w);
                if (rc) {
                    t->dirty = true;
                    return rc;
                }
            }
            break;
        }
        if (rd == DLS_ST_RD_SHRUNK)
            return dls_st_fail(w, DLS_ERR_CORRUPT, r->off, "the stream file shrank", 0);
        return DLS_ERR_IO; /* w filled by the reader */
    }
    dls_st_reader_drop(r);
    return 0;
}

int dls_st_tail_check_exclusive(dls_st_tail *t, dls_where *w)
{
    if (t->lost)
        return dls_st_fail(w, DLS_ERR_SHRUNK, t->end,
                           "the file was cut back or replaced under this writer earlier", 0);
    off_t end = lseek(t->fd, 0, SEEK_END);
    if (end < 0)
        return dls_st_fail(w, DLS_ERR_IO, t->end, "cannot find the end of the stream file", errno);
    if ((uint64_t)end < t->end) {
        t->lost = true;
        return dls_st_fail(w, DLS_ERR_SHRUNK, (uint64_t)end,
                           "the file is shorter than what this exclusive writer wrote "
                           "(cut back under it)", 0);
    }
    if (t->name && (t->path_since++ == 0 || t->path_since >= t->path_every)) {
        t->path_since = 1;
        struct stat mine, named;
        if (fstat(t->fd, &mine) < 0)
            return dls_st_fail(w, DLS_ERR_IO, t->end, "cannot stat the stream file", errno);
        if (fstatat(t->dirfd, t->name, &named, 0) < 0 || named.st_ino != mine.st_ino ||
            named.st_dev != mine.st_dev) {
            t->lost = true;
            return dls_st_fail(w, DLS_ERR_SHRUNK, t->end,
                               "the file's path no longer names the file this exclusive "
                               "writer opened (removed or replaced)", 0);
        }
    }
    return 0;
}

int dls_st_tail_write(dls_st_tail *t, struct iovec *iov, int cnt, size_t bytes,
                      uint64_t nrec, bool seals, dls_where *w)
{
    uint64_t at = t->end;
    size_t done = 0;
    int i = 0;
    while (done < bytes) {
        while (i < cnt && iov[i].iov_len == 0)
            i++;
        int k = cnt - i > IOV_MAX ? IOV_MAX : cnt - i;
        ssize_t got = t->io->pwritev(t->fd, iov + i, k, (off_t)(at + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            int e = got < 0 ? errno : ENOSPC;
            /* Undo under the lock: cut back to the end before the append. */
            if (t->io->ftruncate(t->fd, (off_t)at) < 0) {
                /* The partial record stays as a torn tail (t->end still
                 * marks the good end); the next writer, or this one,
                 * truncates it under the lock. */
                t->dirty = true;
            }
            return dls_st_fail(w, DLS_ERR_IO, at, "write failed (append undone)", e);
        }
        done += (size_t)got;
        size_t g = (size_t)got;
        while (g > 0 && i < cnt) {
            if (g >= iov[i].iov_len) {
                g -= iov[i].iov_len;
                iov[i].iov_len = 0;
                i++;
            } else {
                iov[i].iov_base = (uint8_t *)iov[i].iov_base + g;
                iov[i].iov_len -= g;
                g = 0;
            }
        }
    }
    t->end = at + bytes;
    t->count += nrec;
    if (seals)
        t->sealed = true;
    return 0;
}

bool dls_st_batch_seal_inside(const uint8_t *const *recs, const size_t *lens, size_t count)
{
    for (size_t i = 0; i + 1 < count; i++)
        if (dls_record_is_seal(recs[i], lens[i]))
            return true;
    return false;
}

static int grow_scratch(dls_st_tail *t, size_t nrec)
{
    size_t need = 2 * nrec;
    if (need <= t->cap_iov)
        return 0;
    size_t cap = t->cap_iov ? t->cap_iov : 16;
    while (cap < need)
        cap *= 2;
    struct iovec *iov = realloc(t->iov, cap * sizeof *iov);
    if (!iov)
        return DLS_ERR_NOMEM;
    t->iov = iov;
    uint8_t *h = realloc(t->hdrs, cap / 2 * DLS_RECORD_HEADER_LEN);
    if (!h)
        return DLS_ERR_NOMEM;
    t->hdrs = h;
    t->cap_iov = cap;
    return 0;
}

/* Cuts the file back to where a batch began. */
static void undo(dls_st_tail *t, uint64_t end, uint64_t count)
{
    if (t->io->ftruncate(t->fd, (off_t)end) < 0)
        t->dirty = true;
    t->end = end;
    t->count = count;
    t->sealed = false;
}

int dls_st_tail_append(dls_st_tail *t, dls_st_sync *s, const uint8_t *const *recs,
                       const size_t *lens, size_t count, uint64_t *first, uint64_t *seq,
                       dls_where *w)
{
    uint64_t end0 = t->end, count0 = t->count;
    bool chunked = s->policy != DLS_SYNC_NONE;
    size_t i = 0;
    while (i < count) {
        /* One chunk: as many records as fit in R bytes (at least one). */
        size_t j = i;
        uint64_t bytes = 0;
        while (j < count) {
            uint64_t b = DLS_RECORD_HEADER_LEN + lens[j];
            if (chunked && j > i && bytes + b > DLS_ST_INFLIGHT_MAX)
                break;
            bytes += b;
            j++;
        }
        int rc = grow_scratch(t, j - i);
        if (!rc)
            rc = dls_st_sync_admit(s, bytes, w);
        if (rc) {
            if (rc == DLS_ERR_NOMEM)
                dls_st_fail(w, rc, t->end, "out of memory", 0);
            if (i > 0)
                undo(t, end0, count0);
            return rc;
        }
        for (size_t k = i; k < j; k++) {
            uint8_t *h = t->hdrs + (k - i) * DLS_RECORD_HEADER_LEN;
            dls_st_record_header(h, recs[k], lens[k]);
            t->iov[2 * (k - i)] = (struct iovec){h, DLS_RECORD_HEADER_LEN};
            t->iov[2 * (k - i) + 1] = (struct iovec){(void *)recs[k], lens[k]};
        }
        bool seals = dls_record_is_seal(recs[j - 1], lens[j - 1]);
        int cnt = (int)(2 * (j - i));
        if (bytes <= DLS_ST_COPY_MAX && t->copy) {
            /* Small chunks go out as one contiguous buffer: cheaper for
             * the kernel than many short iovecs. */
            size_t at = 0;
            for (int k = 0; k < cnt; k++) {
                memcpy(t->copy + at, t->iov[k].iov_base, t->iov[k].iov_len);
                at += t->iov[k].iov_len;
            }
            t->iov[0] = (struct iovec){t->copy, at};
            cnt = 1;
        }
        rc = dls_st_tail_write(t, t->iov, cnt, (size_t)bytes, j - i, seals, w);
        if (!rc)
            rc = dls_st_sync_written(s, bytes, seq, w);
        if (rc) {
            undo(t, end0, count0);
            return rc;
        }
        i = j;
    }
    *first = t->base + count0;
    return 0;
}

void dls_st_tail_reset(dls_st_tail *t, int fd, uint64_t base)
{
    t->fd = fd;
    t->base = base;
    t->count = 0;
    t->end = DLS_STREAM_HEADER_LEN;
    t->sealed = false;
    t->scan.fd = fd;
    dls_st_reader_seek(&t->scan, DLS_STREAM_HEADER_LEN, base);
}
