/* The plain file medium (stream-format.md): one stream file, retains
 * everything. Writers serialize on a mutex inside the process and on the
 * OFD lock across processes; readers take no lock and use pread. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream/internal.h"

typedef struct st_file {
    int fd;
    dls_open_mode mode;
    dls_sync policy;
    unsigned lock_timeout_ms;
    bool exclusive;        /* the writer lock is held from open to del */
    bool have_header;      /* reading: the 48-byte header was complete */
    dls_st_header hdr;
    bool tail_ok, sync_ok; /* which of the two below are initialised */
    dls_st_tail tail;      /* append mode */
    dls_st_sync sync;      /* append mode */
} st_file;

typedef struct st_fcur {
    st_file *f;
    dls_st_reader r;
    uint64_t target;       /* the cursor's position */
    bool started;
} st_fcur;

static void file_free(st_file *f)
{
    if (!f)
        return;
    if (f->sync_ok)
        dls_st_sync_fini(&f->sync);
    if (f->tail_ok)
        dls_st_tail_fini(&f->tail);
    if (f->fd >= 0) {
        if (f->exclusive && f->mode == DLS_OPEN_APPEND)
            dls_st_unlock(f->fd);
        close(f->fd);
    }
    free(f);
}

static void file_del(void *impl)
{
    file_free(impl);
}

/* ---- appends ------------------------------------------------------------ */

static int file_append_batch(void *impl, const uint8_t *const *recs, const size_t *lens,
                             size_t count, uint64_t *first, dls_where *w)
{
    st_file *f = impl;
    uint64_t seq = 0;
    int rc;
    pthread_mutex_lock(&f->sync.wmu);
    if (!f->exclusive && (rc = dls_st_lock(f->fd, f->lock_timeout_ms, w))) {
        pthread_mutex_unlock(&f->sync.wmu);
        return rc;
    }
    /* Another process may have appended (or recovered a torn tail) since
     * this handle last held the lock: bring the count up to date. */
    rc = f->exclusive && !f->tail.dirty ? dls_st_tail_check_exclusive(&f->tail, w)
                                        : dls_st_tail_refresh(&f->tail, true, w);
    if (!rc && f->tail.sealed)
        rc = dls_st_fail(w, DLS_ERR_SEALED, f->tail.end, "the medium is sealed", 0);
    if (!rc)
        rc = dls_st_tail_append(&f->tail, &f->sync, recs, lens, count, first, &seq, w);
    if (!f->exclusive)
        dls_st_unlock(f->fd);
    pthread_mutex_unlock(&f->sync.wmu);
    if (!rc)
        rc = dls_st_sync_wait(&f->sync, seq, w);
    return rc;
}

static int file_append(void *impl, const uint8_t *rec, size_t n, uint64_t *pos, dls_where *w)
{
    return file_append_batch(impl, &rec, &n, 1, pos, w);
}

/* ---- cursors ------------------------------------------------------------ */

static int file_cursor_new(void *impl, uint64_t from, void **out)
{
    st_file *f = impl;
    st_fcur *c = calloc(1, sizeof *c);
    if (!c)
        return DLS_ERR_NOMEM;
    if (dls_st_reader_init(&c->r, f->fd, DLS_ST_READ_BUF)) {
        free(c);
        return DLS_ERR_NOMEM;
    }
    c->f = f;
    c->target = from;
    *out = c;
    return 0;
}

static void file_cursor_del(void *impl)
{
    st_fcur *c = impl;
    dls_st_reader_fini(&c->r);
    free(c);
}

/* A reader met the header of a file opened for reading only now. */
static dls_next load_header(st_file *f, dls_where *w)
{
    bool have = false;
    int rc = dls_st_read_header(f->fd, &f->hdr, &have, w);
    if (rc)
        return DLS_NEXT_ERROR;
    if (!have)
        return DLS_NEXT_BLOCKED; /* a header shorter than 48 bytes */
    f->have_header = true;
    return DLS_NEXT_OK;
}

static dls_next file_cursor_next(void *impl, dls_record *rec, dls_where *w)
{
    st_fcur *c = impl;
    st_file *f = c->f;
    if (!f->have_header) {
        dls_next h = load_header(f, w);
        if (h != DLS_NEXT_OK)
            return h;
    }
    if (!c->started) {
        if (c->target < f->hdr.base) {
            /* A file whose first record is not position 0 (a segment read
             * as a plain file): what precedes it is not here. */
            rec->gap_from = c->target;
            rec->position = f->hdr.base;
            c->target = f->hdr.base;
            return DLS_NEXT_GAP;
        }
        dls_st_reader_seek(&c->r, DLS_STREAM_HEADER_LEN, f->hdr.base);
        c->started = true;
    }
    for (;;) {
        const uint8_t *p;
        size_t n;
        uint64_t eof = 0, at = c->r.off;
        dls_st_rd rd = dls_st_reader_buffered(&c->r, &p, &n)
                           ? DLS_ST_RD_OK
                           : dls_st_reader_next(&c->r, 0, &p, &n, &eof, w);
        switch (rd) {
        case DLS_ST_RD_OK:
            /* Walking to the cursor's position; a seal stops the walk. */
            if (c->r.pos - 1 < c->target && !dls_record_is_seal(p, n))
                continue;
            rec->position = c->r.pos - 1;
            rec->p = p;
            rec->n = n;
            c->target = c->r.pos;
            return DLS_NEXT_OK;
        case DLS_ST_RD_EOF:
            return DLS_NEXT_BLOCKED;
        case DLS_ST_RD_BAD:
            if (eof - at <= DLS_TORN_TAIL_MAX)
                return DLS_NEXT_BLOCKED; /* a torn tail: maybe still being written */
            if (w)
                w->offset = at;
            return DLS_NEXT_ERROR;
        case DLS_ST_RD_SHRUNK:
        case DLS_ST_RD_IO:
        default:
            return DLS_NEXT_ERROR;
        }
    }
}

static const uint8_t *file_id(const void *impl)
{
    const st_file *f = impl;
    return f->hdr.id;
}

const dls_medium_ops dls_st_file_ops = {
    .kind_name = "file",
    .append = file_append,
    .append_batch = file_append_batch,
    .seal = NULL,
    .cursor_new = file_cursor_new,
    .cursor_next = file_cursor_next,
    .cursor_del = file_cursor_del,
    .id = file_id,
    .del = file_del,
};

/* ---- open and create ---------------------------------------------------- */

static st_file *file_alloc(const dls_medium_settings *s, dls_open_mode mode)
{
    st_file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->fd = -1;
    f->mode = mode;
    f->policy = s->sync;
    f->lock_timeout_ms = s->lock_timeout_ms;
    f->exclusive = s->exclusive && mode == DLS_OPEN_APPEND;
    return f;
}

static int wrap(dls_medium **out, st_file *f, const char *path, dls_where *w)
{
    dls_medium_info info;
    memset(&info, 0, sizeof info);
    info.kind = DLS_MEDIUM_FILE;
    info.retention = DLS_RETAIN_ALL;
    info.sync = f->policy;
    info.mode = f->mode;
    memcpy(info.id, f->hdr.id, DLS_MEDIUM_ID_LEN);
    info.name = path;
    int rc = dls_medium_wrap(out, &dls_st_file_ops, f, &info);
    if (rc) {
        file_free(f);
        return dls_st_fail(w, rc, 0, "out of memory", 0);
    }
    return 0;
}

/* Sets up the writer side once the header is known: takes the lock, counts
 * the records, recovers a torn tail or refuses corruption. */
static int writer_setup(st_file *f, const char *path, bool fresh, dls_where *w)
{
    int rc = dls_st_tail_init(&f->tail, f->fd, f->hdr.base, NULL);
    if (rc)
        return dls_st_fail(w, rc, 0, "out of memory", 0);
    f->tail_ok = true;
    f->tail.keep_valid = f->exclusive;
    /* the name is checked on every synced append (an fdatasync dwarfs it)
     * and every 64th unsynced one (docs/streams.md) */
    f->tail.path_every = f->policy == DLS_SYNC_NONE ? 64 : 1;
    if ((rc = dls_st_tail_name(&f->tail, AT_FDCWD, path)))
        return dls_st_fail(w, rc, 0, "out of memory", 0);
    rc = dls_st_sync_init(&f->sync, f->policy, f->fd, NULL);
    if (rc)
        return dls_st_fail(w, rc, 0, "cannot initialise a mutex", 0);
    f->sync_ok = true;
    if ((rc = dls_st_lock(f->fd, f->lock_timeout_ms, w)))
        return rc;
    if (!fresh)
        rc = dls_st_tail_refresh(&f->tail, true, w);
    if (rc || !f->exclusive)
        dls_st_unlock(f->fd);
    return rc;
}

int dls_st_file_open(dls_medium **out, const char *path, dls_open_mode mode,
                     const dls_medium_settings *s, dls_where *w)
{
    st_file *f = file_alloc(s, mode);
    if (!f)
        return dls_st_fail(w, DLS_ERR_NOMEM, 0, "out of memory", 0);
    f->fd = dls_st_open_regular(AT_FDCWD, path, mode == DLS_OPEN_APPEND ? O_RDWR : O_RDONLY);
    if (f->fd < 0) {
        int e = errno;
        file_free(f);
        if (e == EINVAL)
            return dls_st_fail(w, DLS_ERR_INVAL, 0, DLS_ST_NOT_REGULAR, 0);
        return dls_st_fail(w, e == ENOENT ? DLS_ERR_NOTFOUND : DLS_ERR_IO, 0,
                           "cannot open the stream file", e);
    }
    bool have = false;
    int rc = dls_st_read_header(f->fd, &f->hdr, &have, w);
    if (!rc && !have && mode == DLS_OPEN_APPEND)
        rc = dls_st_fail(w, DLS_ERR_HEADER, 0,
                         "the file is shorter than its 48-byte header", 0);
    f->have_header = have;
    if (!rc && mode == DLS_OPEN_APPEND)
        rc = writer_setup(f, path, false, w);
    if (rc) {
        f->exclusive = false; /* writer_setup released the lock */
        file_free(f);
        return rc;
    }
    return wrap(out, f, path, w);
}

int dls_st_file_create(dls_medium **out, const char *path, const dls_medium_settings *s,
                       dls_where *w)
{
    st_file *f = file_alloc(s, DLS_OPEN_APPEND);
    if (!f)
        return dls_st_fail(w, DLS_ERR_NOMEM, 0, "out of memory", 0);
    int rc = 0;
    if (s->id)
        memcpy(f->hdr.id, s->id, DLS_MEDIUM_ID_LEN);
    else
        rc = dls_st_random_id(f->hdr.id);
    if (rc) {
        file_free(f);
        return dls_st_fail(w, rc, 0, "libsodium failed to initialise", 0);
    }
    f->hdr.base = 0;
    f->have_header = true;
    uint8_t h[DLS_STREAM_HEADER_LEN];
    dls_st_header_encode(h, f->hdr.id, 0);
    rc = dls_st_create_file_at(AT_FDCWD, path, h, sizeof h, &f->fd, w);
    if (!rc)
        rc = writer_setup(f, path, true, w);
    if (rc) {
        f->exclusive = false;
        file_free(f);
        return rc;
    }
    return wrap(out, f, path, w);
}

/* The writer state of a file medium opened for append (hooks.c): false
 * for another kind of medium or a reader. */
bool dls_st_file_writer(dls_medium *m, dls_st_tail **tail, dls_st_sync **sync)
{
    st_file *f = dls_medium_impl(m, &dls_st_file_ops);
    if (!f || !f->tail_ok)
        return false;
    *tail = &f->tail;
    *sync = f->sync_ok ? &f->sync : NULL;
    return true;
}
