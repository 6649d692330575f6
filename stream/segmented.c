/* The segmented medium (stream-format.md): a directory holding `medium.id`
 * (32 lower-case hex digits and a newline) and segment files named
 * `<base index as 20 decimal digits>.seg`, each a stream file with the
 * shared id and its own base index. Evict-oldest: the writer rolls to a new
 * segment before an append that would take the current one past
 * segment_bytes (an empty segment never rolls) and deletes the oldest
 * segments past retain_segments / retain_bytes. The writer lock is the OFD
 * lock on `medium.id`; it covers appends, rolls and deletions. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    size_t nsegs, cap_segs;
} st_seg;

typedef struct st_scur {
    st_seg *m;
    int fd;                /* the segment being read, or -1 */
    uint64_t seg_base;     /* its base index */
    dls_st_reader r;
    uint64_t target;       /* the cursor's position */
} st_scur;

static void seg_name(char out[SEG_NAME_LEN + 1], uint64_t base)
{
    snprintf(out, SEG_NAME_LEN + 1, "%020" PRIu64 ".seg", base);
}

/* Parses a segment file name; false for anything else (temporaries too). */
static bool parse_seg_name(const char *s, uint64_t *base)
{
    if (strlen(s) != SEG_NAME_LEN || strcmp(s + 20, ".seg"))
        return false;
    uint64_t v = 0;
    for (int i = 0; i < 20; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *base = v;
    return true;
}

static int cmp_ent(const void *a, const void *b)
{
    uint64_t x = ((const seg_ent *)a)->base, y = ((const seg_ent *)b)->base;
    return x < y ? -1 : x > y;
}

/* Lists the segments (sorted by base; sizes when asked). The caller frees
 * *out. 0, DLS_ERR_IO or DLS_ERR_NOMEM. */
static int list_segments(int dirfd, bool sizes, seg_ent **out, size_t *count, dls_where *w)
{
    *out = NULL;
    *count = 0;
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return dls_st_fail(w, DLS_ERR_IO, 0, "cannot list the segment directory", errno);
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return dls_st_fail(w, DLS_ERR_IO, 0, "cannot list the segment directory", e);
    }
    seg_ent *v = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        uint64_t base;
        if (!parse_seg_name(e->d_name, &base))
            continue;
        uint64_t bytes = 0;
        if (sizes) {
            struct stat st;
            if (fstatat(dirfd, e->d_name, &st, 0) < 0)
                continue; /* deleted meanwhile */
            bytes = (uint64_t)st.st_size;
        }
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 16;
            seg_ent *nv = realloc(v, nc * sizeof *nv);
            if (!nv) {
                rc = dls_st_fail(w, DLS_ERR_NOMEM, 0, "out of memory", 0);
                break;
            }
            v = nv;
            cap = nc;
        }
        v[n++] = (seg_ent){base, bytes};
    }
    closedir(d);
    if (rc) {
        free(v);
        return rc;
    }
    if (n)
        qsort(v, n, sizeof *v, cmp_ent);
    *out = v;
    *count = n;
    return 0;
}

/* Opens the segment with this base and checks its header. 0 with *fd; or
 * DLS_ERR_NOTFOUND (no such segment, or a header not complete yet),
 * DLS_ERR_MEDIUM_ID, DLS_ERR_HEADER, DLS_ERR_IO. */
static int open_segment(const st_seg *m, uint64_t base, bool rw, int *fd, dls_where *w)
{
    char name[SEG_NAME_LEN + 1];
    seg_name(name, base);
    int f = openat(m->dirfd, name, (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (f < 0)
        return dls_st_fail(w, errno == ENOENT ? DLS_ERR_NOTFOUND : DLS_ERR_IO, 0,
                           "cannot open a segment", errno);
    dls_st_header h;
    bool have = false;
    int rc = dls_st_read_header(f, &h, &have, w);
    if (!rc && !have)
        rc = dls_st_fail(w, DLS_ERR_NOTFOUND, 0, "a segment shorter than its header", 0);
    if (!rc && memcmp(h.id, m->id, DLS_MEDIUM_ID_LEN))
        rc = dls_st_fail(w, DLS_ERR_MEDIUM_ID, 16,
                         "a segment's header names another medium than medium.id", 0);
    if (!rc && h.base != base)
        rc = dls_st_fail(w, DLS_ERR_HEADER, 32,
                         "a segment's base index differs from its file name", 0);
    if (rc) {
        close(f);
        return rc;
    }
    *fd = f;
    return 0;
}

static int read_id_file(int dirfd, uint8_t id[DLS_MEDIUM_ID_LEN], dls_where *w)
{
    int fd = openat(dirfd, ID_FILE, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return dls_st_fail(w, errno == ENOENT ? DLS_ERR_HEADER : DLS_ERR_IO, 0,
                           errno == ENOENT ? "not a segmented medium (no medium.id)"
                                           : "cannot open medium.id",
                           errno);
    char b[40];
    ssize_t k = pread(fd, b, sizeof b, 0);
    int e = errno;
    close(fd);
    if (k < 0)
        return dls_st_fail(w, DLS_ERR_IO, 0, "cannot read medium.id", e);
    if (k != 2 * DLS_MEDIUM_ID_LEN + 1 || b[2 * DLS_MEDIUM_ID_LEN] != '\n')
        goto bad;
    for (int i = 0; i < DLS_MEDIUM_ID_LEN; i++) {
        int v = 0;
        for (int j = 0; j < 2; j++) {
            char c = b[2 * i + j];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (d < 0)
                goto bad;
            v = v * 16 + d;
        }
        id[i] = (uint8_t)v;
    }
    return 0;
bad:
    return dls_st_fail(w, DLS_ERR_HEADER, 0,
                       "medium.id is not 32 lower-case hex digits and a newline", 0);
}

/* medium.bounds: the bounds declared at creation, one "key value" line
 * each (segment_bytes, retain_segments, retain_bytes); unknown keys are
 * ignored, so later versions may add some. Absent: 0 with *found false. */
static int read_bounds(st_seg *m, bool *found, dls_where *w)
{
    *found = false;
    int fd = openat(m->dirfd, BOUNDS_FILE, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0
                               : dls_st_fail(w, DLS_ERR_IO, 0, "cannot open medium.bounds", errno);
    char b[512];
    ssize_t k = pread(fd, b, sizeof b - 1, 0);
    int e = errno;
    close(fd);
    if (k < 0)
        return dls_st_fail(w, DLS_ERR_IO, 0, "cannot read medium.bounds", e);
    b[k] = 0;
    uint64_t vals[3] = {m->segment_bytes, m->retain_segments, m->retain_bytes};
    static const char *const keys[3] = {"segment_bytes", "retain_segments", "retain_bytes"};
    char *save = NULL;
    for (char *line = strtok_r(b, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char key[32];
        char num[32];
        char extra;
        if (sscanf(line, "%31s %31s %c", key, num, &extra) != 2)
            goto bad;
        uint64_t v = 0;
        for (const char *q = num; *q; q++) {
            if (*q < '0' || *q > '9' || v > (UINT64_MAX - 9) / 10)
                goto bad;
            v = v * 10 + (uint64_t)(*q - '0');
        }
        for (int i = 0; i < 3; i++)
            if (!strcmp(key, keys[i]))
                vals[i] = v;
    }
    if (vals[0] < DLS_STREAM_HEADER_LEN)
        goto bad;
    m->segment_bytes = vals[0];
    m->retain_segments = vals[1];
    m->retain_bytes = vals[2];
    *found = true;
    return 0;
bad:
    return dls_st_fail(w, DLS_ERR_HEADER, 0, "medium.bounds is malformed", 0);
}

static void seg_free(st_seg *m)
{
    if (!m)
        return;
    if (m->sync_ok)
        dls_st_sync_fini(&m->sync);
    if (m->tail_ok) {
        if (m->tail.fd >= 0)
            close(m->tail.fd);
        dls_st_tail_fini(&m->tail);
    }
    if (m->lockfd >= 0) {
        if (m->exclusive)
            dls_st_unlock(m->lockfd);
        close(m->lockfd);
    }
    if (m->dirfd >= 0)
        close(m->dirfd);
    free(m->segs);
    free(m);
}

static void seg_del(void *impl)
{
    seg_free(impl);
}

/* ---- the writer (all under the write mutex and the lock on medium.id) --- */

/* Lists again and points the tail at the last segment, counting its
 * records (torn tail recovered, corruption refused). */
static int resync(st_seg *m, dls_where *w)
{
    seg_ent *v;
    size_t n;
    int rc = list_segments(m->dirfd, true, &v, &n, w);
    if (rc)
        return rc;
    if (n == 0) {
        free(v);
        return dls_st_fail(w, DLS_ERR_HEADER, 0, "a segmented medium without any segment", 0);
    }
    int fd;
    rc = open_segment(m, v[n - 1].base, true, &fd, w);
    if (rc) {
        free(v);
        if (rc == DLS_ERR_NOTFOUND)
            rc = dls_st_fail(w, DLS_ERR_IO, 0, "the last segment vanished", ENOENT);
        return rc;
    }
    free(m->segs);
    m->segs = v;
    m->nsegs = n;
    m->cap_segs = n;
    /* A failed sync of the old segment poisons the handle; the new one is
     * installed all the same. */
    if (m->sync_ok)
        rc = dls_st_sync_switch(&m->sync, fd, w);
    int old = m->tail.fd;
    dls_st_tail_reset(&m->tail, fd, v[n - 1].base);
    if (old >= 0)
        close(old);
    int r2 = dls_st_tail_refresh(&m->tail, true, NULL, w);
    return rc ? rc : r2;
}

/* Brings the writer up to date: another process may have appended, rolled
 * or deleted since this handle last held the lock. */
static int refresh(st_seg *m, dls_where *w)
{
    for (int tries = 0; tries < 8; tries++) {
        struct stat st;
        if (fstat(m->tail.fd, &st) < 0)
            return dls_st_fail(w, DLS_ERR_IO, 0, "cannot stat the last segment", errno);
        int rc;
        if (st.st_nlink == 0) {
            rc = resync(m, w); /* our segment was deleted: others rolled past it */
        } else {
            rc = dls_st_tail_refresh(&m->tail, true, NULL, w);
            if (rc)
                return rc;
            char name[SEG_NAME_LEN + 1];
            seg_name(name, m->tail.base + m->tail.count);
            if (m->tail.sealed || fstatat(m->dirfd, name, &st, 0) < 0)
                return 0; /* still the last segment */
            rc = resync(m, w);
        }
        if (rc)
            return rc;
    }
    return 0;
}

static int push_seg(st_seg *m, uint64_t base)
{
    if (m->nsegs == m->cap_segs) {
        size_t nc = m->cap_segs ? 2 * m->cap_segs : 16;
        seg_ent *nv = realloc(m->segs, nc * sizeof *nv);
        if (!nv)
            return DLS_ERR_NOMEM;
        m->segs = nv;
        m->cap_segs = nc;
    }
    m->segs[m->nsegs++] = (seg_ent){base, DLS_STREAM_HEADER_LEN};
    return 0;
}

/* Starts a new segment at the next position (atomically created). */
static int roll(st_seg *m, dls_where *w)
{
    uint64_t base = m->tail.base + m->tail.count;
    char name[SEG_NAME_LEN + 1];
    seg_name(name, base);
    uint8_t h[DLS_STREAM_HEADER_LEN];
    dls_st_header_encode(h, m->id, base);
    if (push_seg(m, base))
        return dls_st_fail(w, DLS_ERR_NOMEM, 0, "out of memory", 0);
    int fd;
    int rc = dls_st_create_file_at(m->dirfd, name, h, sizeof h, &fd, w);
    if (rc) {
        m->nsegs--;
        return rc;
    }
    if (m->nsegs >= 2)
        m->segs[m->nsegs - 2].bytes = m->tail.end;
    rc = dls_st_sync_switch(&m->sync, fd, w); /* syncs the old segment */
    int old = m->tail.fd;
    dls_st_tail_reset(&m->tail, fd, base);
    close(old);
    return rc;
}

static bool over_bound(const st_seg *m)
{
    if (m->nsegs <= 1)
        return false;
    if (m->retain_segments && m->nsegs > m->retain_segments)
        return true;
    if (m->retain_bytes) {
        uint64_t total = m->tail.end;
        for (size_t i = 0; i + 1 < m->nsegs; i++)
            total += m->segs[i].bytes;
        if (total > m->retain_bytes)
            return true;
    }
    return false;
}

/* Deletes the oldest segments past the declared bounds (never the last). */
static int retain(st_seg *m, dls_where *w)
{
    if (!over_bound(m))
        return 0;
    /* Our view may be stale (another writer deleted some): list again. */
    seg_ent *v;
    size_t n;
    int rc = list_segments(m->dirfd, true, &v, &n, w);
    if (rc)
        return rc;
    if (n == 0 || v[n - 1].base != m->tail.base) {
        free(v);
        return 0; /* not the view this writer holds: leave it to the next append */
    }
    free(m->segs);
    m->segs = v;
    m->nsegs = n;
    m->cap_segs = n;
    size_t drop = 0;
    while (m->nsegs - drop > 1) {
        seg_ent *s = m->segs + drop;
        uint64_t total = m->tail.end;
        for (size_t i = drop; i + 1 < m->nsegs; i++)
            total += m->segs[i].bytes;
        bool over = (m->retain_segments && m->nsegs - drop > m->retain_segments) ||
                    (m->retain_bytes && total > m->retain_bytes);
        if (!over)
            break;
        char name[SEG_NAME_LEN + 1];
        seg_name(name, s->base);
        if (unlinkat(m->dirfd, name, 0) < 0 && errno != ENOENT) {
            rc = dls_st_fail(w, DLS_ERR_IO, 0, "cannot delete an old segment", errno);
            break;
        }
        drop++;
    }
    memmove(m->segs, m->segs + drop, (m->nsegs - drop) * sizeof *m->segs);
    m->nsegs -= drop;
    return rc;
}

static int seg_append_batch(void *impl, const uint8_t *const *recs, const size_t *lens,
                            size_t count, uint64_t *first, dls_where *w)
{
    st_seg *m = impl;
    uint64_t seq = 0, bytes = 0;
    int rc;
    for (size_t i = 0; i < count; i++)
        bytes += DLS_RECORD_HEADER_LEN + lens[i];
    pthread_mutex_lock(&m->sync.wmu);
    if (!m->exclusive && (rc = dls_st_lock(m->lockfd, m->lock_timeout_ms, w))) {
        pthread_mutex_unlock(&m->sync.wmu);
        return rc;
    }
    rc = m->exclusive && !m->tail.dirty ? 0 : refresh(m, w);
    if (!rc && m->tail.sealed)
        rc = dls_st_fail(w, DLS_ERR_SEALED, m->tail.end, "the medium is sealed", 0);
    if (!rc && dls_st_batch_seal_inside(recs, lens, count))
        rc = dls_st_fail(w, DLS_ERR_SEALED, m->tail.end,
                         "a batch holds records after its seal", 0);
    if (!rc && m->tail.count > 0 && m->tail.end + bytes > m->segment_bytes)
        rc = roll(m, w);
    if (!rc)
        rc = dls_st_tail_append(&m->tail, &m->sync, recs, lens, count, first, &seq, w);
    if (!rc) {
        /* The append is written; a failed deletion does not undo it. */
        dls_where ignored;
        (void)retain(m, &ignored);
    }
    if (!m->exclusive)
        dls_st_unlock(m->lockfd);
    pthread_mutex_unlock(&m->sync.wmu);
    if (!rc)
        rc = dls_st_sync_wait(&m->sync, seq, w);
    return rc;
}

static int seg_append(void *impl, const uint8_t *rec, size_t n, uint64_t *pos, dls_where *w)
{
    return seg_append_batch(impl, &rec, &n, 1, pos, w);
}

/* ---- cursors ------------------------------------------------------------ */

static int seg_cursor_new(void *impl, uint64_t from, void **out)
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

static void seg_cursor_del(void *impl)
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
        if (list_segments(c->m->dirfd, false, &v, &n, w))
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
        int rc = open_segment(c->m, base, false, &fd, w);
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

/* The open segment ended (cleanly or at a bad record at `at`): move to the
 * next segment if there is one. DLS_NEXT_OK to go on reading. */
static dls_next at_segment_end(st_scur *c, dls_st_rd rd, uint64_t at, uint64_t eof,
                               dls_record *rec, dls_where *w)
{
    uint64_t next = c->r.pos;
    int fd2 = -1;
    /* An empty segment never rolls: it has no successor yet. */
    int rc = next == c->seg_base ? DLS_ERR_NOTFOUND : open_segment(c->m, next, false, &fd2, w);
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
        return DLS_NEXT_BLOCKED;
    if (eof - at > DLS_TORN_TAIL_MAX) {
        if (w)
            w->offset = at;
        return DLS_NEXT_ERROR;
    }
    /* Within R of this segment's end: a torn tail if this is the last
     * segment, corruption if any later segment exists. */
    seg_ent *v;
    size_t n;
    if (list_segments(c->m->dirfd, false, &v, &n, w))
        return DLS_NEXT_ERROR;
    bool later = n > 0 && v[n - 1].base > c->seg_base;
    free(v);
    if (!later)
        return DLS_NEXT_BLOCKED;
    dls_st_fail(w, DLS_ERR_CORRUPT, at, "a bad record in a segment that is followed by another",
                0);
    return DLS_NEXT_ERROR;
}

static dls_next seg_cursor_next(void *impl, dls_record *rec, dls_where *w)
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

static const uint8_t *seg_id(const void *impl)
{
    return ((const st_seg *)impl)->id;
}

const dls_medium_ops dls_st_segmented_ops = {
    .kind_name = "segmented",
    .append = seg_append,
    .append_batch = seg_append_batch,
    .seal = NULL,
    .cursor_new = seg_cursor_new,
    .cursor_next = seg_cursor_next,
    .cursor_del = seg_cursor_del,
    .id = seg_id,
    .del = seg_del,
};

/* ---- open and create ---------------------------------------------------- */

int dls_st_segmented_open(dls_medium **out, const char *path, dls_open_mode mode,
                          const dls_medium_settings *s, dls_where *w)
{
    st_seg *m = calloc(1, sizeof *m);
    if (!m)
        return dls_st_fail(w, DLS_ERR_NOMEM, 0, "out of memory", 0);
    m->lockfd = -1;
    m->mode = mode;
    m->policy = s->sync;
    m->lock_timeout_ms = s->lock_timeout_ms;
    m->segment_bytes = s->segment_bytes;
    m->retain_segments = s->retain_segments;
    m->retain_bytes = s->retain_bytes;
    m->tail.fd = -1;
    int rc = 0;
    m->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (m->dirfd < 0) {
        rc = dls_st_fail(w, errno == ENOENT ? DLS_ERR_NOTFOUND : DLS_ERR_IO, 0,
                         "cannot open the segment directory", errno);
        goto fail;
    }
    if ((rc = read_id_file(m->dirfd, m->id, w)))
        goto fail;
    if (mode == DLS_OPEN_APPEND) {
        bool found;
        if ((rc = read_bounds(m, &found, w)))
            goto fail;
        m->lockfd = openat(m->dirfd, ID_FILE, O_RDWR | O_CLOEXEC);
        if (m->lockfd < 0) {
            rc = dls_st_fail(w, DLS_ERR_IO, 0, "cannot open medium.id for the lock", errno);
            goto fail;
        }
        if ((rc = dls_st_tail_init(&m->tail, -1, 0, NULL))) {
            rc = dls_st_fail(w, rc, 0, "out of memory", 0);
            goto fail;
        }
        m->tail_ok = true;
        if ((rc = dls_st_lock(m->lockfd, m->lock_timeout_ms, w)))
            goto fail;
        rc = resync(m, w);
        if (!rc && (rc = dls_st_sync_init(&m->sync, m->policy, m->tail.fd, NULL)))
            rc = dls_st_fail(w, rc, 0, "cannot initialise a mutex", 0);
        if (!rc)
            m->sync_ok = true;
        if (!rc && s->exclusive)
            m->exclusive = true;
        else
            dls_st_unlock(m->lockfd);
        if (!rc) {
            dls_where ignored;
            (void)retain(m, &ignored);
        }
        if (rc)
            goto fail;
    }
    dls_medium_info info;
    memset(&info, 0, sizeof info);
    info.kind = DLS_MEDIUM_SEGMENTED;
    info.retention = DLS_RETAIN_EVICT_OLDEST;
    info.sync = m->policy;
    info.mode = mode;
    memcpy(info.id, m->id, DLS_MEDIUM_ID_LEN);
    info.name = path;
    if ((rc = dls_medium_wrap(out, &dls_st_segmented_ops, m, &info))) {
        rc = dls_st_fail(w, rc, 0, "out of memory", 0);
        goto fail;
    }
    return 0;
fail:
    seg_free(m);
    return rc;
}

static void remove_tmpdir(const char *tmp, int dirfd)
{
    if (dirfd >= 0) {
        seg_ent *v;
        size_t n;
        char name[SEG_NAME_LEN + 1];
        unlinkat(dirfd, ID_FILE, 0);
        unlinkat(dirfd, BOUNDS_FILE, 0);
        if (list_segments(dirfd, false, &v, &n, NULL) == 0) {
            for (size_t i = 0; i < n; i++) {
                seg_name(name, v[i].base);
                unlinkat(dirfd, name, 0);
            }
            free(v);
        }
    }
    rmdir(tmp);
}

int dls_st_segmented_create(dls_medium **out, const char *path,
                            const dls_medium_settings *s, dls_where *w)
{
    if (s->segment_bytes < DLS_STREAM_HEADER_LEN)
        return dls_st_fail(w, DLS_ERR_INVAL, 0, "segment_bytes is below the header size", 0);
    uint8_t id[DLS_MEDIUM_ID_LEN];
    if (s->id)
        memcpy(id, s->id, DLS_MEDIUM_ID_LEN);
    else if (dls_st_random_id(id))
        return dls_st_fail(w, DLS_ERR_SODIUM, 0, "libsodium failed to initialise", 0);
    char suffix[17];
    if (dls_st_random_hex(suffix))
        return dls_st_fail(w, DLS_ERR_SODIUM, 0, "libsodium failed to initialise", 0);
    size_t plen = strlen(path);
    while (plen > 1 && path[plen - 1] == '/')
        plen--; /* "dir/" names "dir" */
    size_t len = plen + 32;
    char *tmp = malloc(len);
    if (!tmp)
        return dls_st_fail(w, DLS_ERR_NOMEM, 0, "out of memory", 0);
    snprintf(tmp, len, "%.*s.tmp-%s", (int)plen, path, suffix);
    if (mkdir(tmp, 0755) < 0) {
        int e = errno;
        free(tmp);
        return dls_st_fail(w, e == ENOENT ? DLS_ERR_NOTFOUND : DLS_ERR_IO, 0,
                           "cannot create a temporary directory beside the medium", e);
    }
    int rc = 0;
    int dirfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) {
        rc = dls_st_fail(w, DLS_ERR_IO, 0, "cannot open the new directory", errno);
        goto fail;
    }
    char idtext[2 * DLS_MEDIUM_ID_LEN + 1];
    for (int i = 0; i < DLS_MEDIUM_ID_LEN; i++)
        snprintf(idtext + 2 * i, 3, "%02x", id[i]);
    idtext[2 * DLS_MEDIUM_ID_LEN] = '\n';
    if ((rc = dls_st_create_file_at(dirfd, ID_FILE, (const uint8_t *)idtext, sizeof idtext,
                                    NULL, w)))
        goto fail;
    char bounds[160];
    int bl = snprintf(bounds, sizeof bounds,
                      "segment_bytes %" PRIu64 "\nretain_segments %" PRIu64
                      "\nretain_bytes %" PRIu64 "\n",
                      s->segment_bytes, s->retain_segments, s->retain_bytes);
    if ((rc = dls_st_create_file_at(dirfd, BOUNDS_FILE, (const uint8_t *)bounds, (size_t)bl,
                                    NULL, w)))
        goto fail;
    uint8_t h[DLS_STREAM_HEADER_LEN];
    char name[SEG_NAME_LEN + 1];
    dls_st_header_encode(h, id, 0);
    seg_name(name, 0);
    if ((rc = dls_st_create_file_at(dirfd, name, h, sizeof h, NULL, w)))
        goto fail;
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) < 0) {
        int e = errno;
        if (e == EINVAL || e == ENOSYS) {
            /* No RENAME_NOREPLACE here: rename() never replaces a
             * non-empty directory, and an existing file is refused. */
            struct stat st;
            if (lstat(path, &st) == 0)
                e = EEXIST;
            else if (rename(tmp, path) == 0)
                e = 0;
            else
                e = errno;
        }
        if (e) {
            rc = dls_st_fail(w, e == EEXIST || e == ENOTEMPTY ? DLS_ERR_EXISTS : DLS_ERR_IO, 0,
                             e == EEXIST || e == ENOTEMPTY ? "the path exists already"
                                                           : "cannot give the new directory its name",
                             e);
            goto fail;
        }
    }
    close(dirfd);
    free(tmp);
    if ((rc = dls_st_fsync_dir(AT_FDCWD, path, w)))
        return rc;
    return dls_st_segmented_open(out, path, DLS_OPEN_APPEND, s, w);
fail:
    remove_tmpdir(tmp, dirfd);
    if (dirfd >= 0)
        close(dirfd);
    free(tmp);
    return rc;
}

/* ---- test hooks --------------------------------------------------------- */

void dls_st_set_io(dls_medium *m, const dls_st_io *io)
{
    st_seg *g = dls_medium_impl(m, &dls_st_segmented_ops);
    if (g && g->tail_ok) {
        g->tail.io = io;
        if (g->sync_ok)
            g->sync.io = io;
        return;
    }
    dls_st_file_set_io(m, io);
}

static dls_st_sync *sync_state(dls_medium *m)
{
    st_seg *g = dls_medium_impl(m, &dls_st_segmented_ops);
    if (!g)
        return dls_st_file_sync_state(m);
    return g->sync_ok ? &g->sync : NULL;
}

uint64_t dls_st_sync_count(dls_medium *m)
{
    dls_st_sync *s = sync_state(m);
    if (!s)
        return 0;
    pthread_mutex_lock(&s->mu);
    uint64_t n = s->syncs;
    pthread_mutex_unlock(&s->mu);
    return n;
}

uint64_t dls_st_written_count(dls_medium *m)
{
    dls_st_sync *s = sync_state(m);
    if (!s)
        return 0;
    pthread_mutex_lock(&s->mu);
    uint64_t n = s->wseq;
    pthread_mutex_unlock(&s->mu);
    return n;
}
